// The deployment artefacts of deploy/ (Kubernetes manifests, systemd unit, Dockerfile) are
// consistent with each other and with the ikd binary: every manifest parses, probes, Service,
// PodDisruptionBudget and autoscaler point at the Deployment's port and labels, the Secret is
// wired in, shutdown timeouts exceed ikd's drain (--grace), the unit is sandboxed, the image
// is a two-stage Debian 12 build that runs as non-root, and every flag passed to ikd is one
// that `ikd --help` lists. Paths come from CMake: IKD_BINARY, IKD_DEPLOY_DIR.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"

namespace ikd::deploy {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::IsSubsetOf;

const std::string kDeploy = IKD_DEPLOY_DIR;
const std::string kIkd = IKD_BINARY;

std::string FileText(const std::string& path) {
  std::ifstream file(path);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n');
}

// Every document of every deploy/k8s/*.yaml, by kind (each kind appears once).
std::map<std::string, YAML::Node> LoadManifests() {
  std::map<std::string, YAML::Node> by_kind;
  for (const auto& entry : fs::directory_iterator(kDeploy + "/k8s")) {
    if (entry.path().extension() != ".yaml") continue;
    for (const YAML::Node& doc : YAML::LoadAllFromFile(entry.path().string())) {
      EXPECT_TRUE(doc["kind"].IsScalar()) << entry.path();
      const std::string kind = doc["kind"].as<std::string>();
      EXPECT_EQ(by_kind.count(kind), 0u) << kind << " twice";
      by_kind[kind] = doc;
    }
  }
  return by_kind;
}

// A node holding a map of strings as std::map (empty when absent).
std::map<std::string, std::string> StringMap(const YAML::Node& node) {
  std::map<std::string, std::string> out;
  if (!node.IsMap()) return out;
  for (const auto& item : node) out[item.first.as<std::string>()] = item.second.as<std::string>();
  return out;
}

// Whether every label of `selector` is among `labels` with the same value.
bool Selects(const std::map<std::string, std::string>& selector,
             const std::map<std::string, std::string>& labels) {
  if (selector.empty()) return false;
  for (const auto& [key, value] : selector) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  return true;
}

// "--name=value" -> {name, value}; "--name" -> {name, ""}; anything else -> {"", ""}.
std::pair<std::string, std::string> SplitFlag(const std::string& arg) {
  if (!absl::StartsWith(arg, "--")) return {"", ""};
  const std::string body = arg.substr(2);
  const size_t equals = body.find('=');
  if (equals == std::string::npos) return {body, ""};
  return {body.substr(0, equals), body.substr(equals + 1)};
}

absl::Duration GraceOf(const std::vector<std::string>& args) {
  absl::Duration grace = absl::Seconds(5);  // ikd's default
  for (const auto& arg : args) {
    auto [name, value] = SplitFlag(arg);
    if (name == "grace") {
      EXPECT_TRUE(absl::ParseDuration(value, &grace)) << arg;
    }
  }
  return grace;
}

class ManifestsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    manifests_ = LoadManifests();
    for (const char* kind : {"Deployment", "Service", "PodDisruptionBudget",
                             "HorizontalPodAutoscaler", "Secret"}) {
      ASSERT_EQ(manifests_.count(kind), 1u) << "no " << kind << " in deploy/k8s";
    }
    deployment_ = manifests_["Deployment"];
    pod_ = deployment_["spec"]["template"];
    ASSERT_TRUE(pod_["spec"]["containers"].IsSequence());
    container_ = pod_["spec"]["containers"][0];
  }

  std::vector<std::string> ContainerArgs() const {
    std::vector<std::string> args;
    for (const auto& arg : container_["args"]) args.push_back(arg.as<std::string>());
    return args;
  }

  int GrpcContainerPort() const {
    for (const auto& port : container_["ports"]) {
      if (port["name"].as<std::string>("") == "grpc") return port["containerPort"].as<int>();
    }
    return -1;
  }

  std::map<std::string, std::string> PodLabels() const {
    return StringMap(pod_["metadata"]["labels"]);
  }

  std::map<std::string, YAML::Node> manifests_;
  YAML::Node deployment_, pod_, container_;
};

// Every manifest parses and names its apiVersion and kind (and metadata.name, except the
// kustomization, which lists exactly the other files).
TEST_F(ManifestsTest, EveryManifestParses) {
  std::set<std::string> files, listed;
  for (const auto& entry : fs::directory_iterator(kDeploy + "/k8s")) {
    ASSERT_EQ(entry.path().extension(), ".yaml") << entry.path();
    const auto docs = YAML::LoadAllFromFile(entry.path().string());
    ASSERT_FALSE(docs.empty()) << entry.path();
    for (const auto& doc : docs) {
      EXPECT_TRUE(doc["apiVersion"].IsScalar()) << entry.path();
      if (doc["kind"].as<std::string>() == "Kustomization") {
        for (const auto& resource : doc["resources"]) listed.insert(resource.as<std::string>());
      } else {
        EXPECT_FALSE(doc["metadata"]["name"].as<std::string>("").empty()) << entry.path();
        files.insert(entry.path().filename().string());
      }
    }
  }
  EXPECT_EQ(listed, files);
}

// Native gRPC probes (liveness, readiness, startup) on the container's gRPC port, which is the
// port ikd listens on (--listen) on all interfaces.
TEST_F(ManifestsTest, ProbesUseGrpcOnTheContainerPort) {
  const int port = GrpcContainerPort();
  ASSERT_GT(port, 0);
  for (const char* probe : {"livenessProbe", "readinessProbe", "startupProbe"}) {
    ASSERT_TRUE(container_[probe]["grpc"].IsMap()) << probe << " is not a gRPC probe";
    EXPECT_EQ(container_[probe]["grpc"]["port"].as<int>(), port) << probe;
  }
  EXPECT_THAT(ContainerArgs(), Contains("--listen=0.0.0.0:" + std::to_string(port)));
  EXPECT_TRUE(Selects(StringMap(deployment_["spec"]["selector"]["matchLabels"]), PodLabels()));
  EXPECT_TRUE(container_["resources"]["requests"]["cpu"].IsScalar());
  EXPECT_TRUE(container_["resources"]["limits"]["memory"].IsScalar());
}

// Non-root, read-only root file system, no privilege escalation, every capability dropped.
TEST_F(ManifestsTest, PodRunsNonRootWithReadOnlyRoot) {
  EXPECT_TRUE(pod_["spec"]["securityContext"]["runAsNonRoot"].as<bool>());
  EXPECT_NE(pod_["spec"]["securityContext"]["runAsUser"].as<int>(0), 0);
  const YAML::Node security = container_["securityContext"];
  EXPECT_TRUE(security["readOnlyRootFilesystem"].as<bool>());
  EXPECT_FALSE(security["allowPrivilegeEscalation"].as<bool>(true));
  EXPECT_THAT(security["capabilities"]["drop"].as<std::vector<std::string>>(), Contains("ALL"));
}

// The Service is headless (client-side balancing over the pod addresses), selects the pods
// and targets the gRPC port; the PDB selects the pods; the autoscaler scales the Deployment
// and never below two replicas, and owns the count alone (the Deployment sets no replicas, so
// that `kubectl apply` does not undo the autoscaler).
TEST_F(ManifestsTest, ServicePdbAndAutoscalerTargetTheDeployment) {
  const YAML::Node service = manifests_["Service"];
  EXPECT_EQ(service["spec"]["clusterIP"].as<std::string>(), "None");
  EXPECT_TRUE(Selects(StringMap(service["spec"]["selector"]), PodLabels()));
  const YAML::Node service_port = service["spec"]["ports"][0];
  const std::string target = service_port["targetPort"].as<std::string>();
  EXPECT_TRUE(target == "grpc" || target == std::to_string(GrpcContainerPort())) << target;

  const YAML::Node pdb = manifests_["PodDisruptionBudget"];
  EXPECT_TRUE(Selects(StringMap(pdb["spec"]["selector"]["matchLabels"]), PodLabels()));
  const YAML::Node hpa = manifests_["HorizontalPodAutoscaler"];
  EXPECT_FALSE(deployment_["spec"]["replicas"].IsDefined());
  EXPECT_LT(pdb["spec"]["minAvailable"].as<int>(), hpa["spec"]["minReplicas"].as<int>())
      << "a PDB that admits no eviction blocks every node drain";
  EXPECT_EQ(hpa["spec"]["scaleTargetRef"]["kind"].as<std::string>(), "Deployment");
  EXPECT_EQ(hpa["spec"]["scaleTargetRef"]["name"].as<std::string>(),
            deployment_["metadata"]["name"].as<std::string>());
  EXPECT_GE(hpa["spec"]["minReplicas"].as<int>(), 2);
  EXPECT_GT(hpa["spec"]["maxReplicas"].as<int>(), hpa["spec"]["minReplicas"].as<int>());
}

// The store URI comes from the Secret: an env var filled by secretKeyRef (the Secret's name
// and one of its keys) is what --store_from_env names, and the Secret holds a placeholder
// marked for replacement, not a real password.
TEST_F(ManifestsTest, StoreConnectionComesFromTheSecret) {
  const YAML::Node secret = manifests_["Secret"];
  const std::string secret_name = secret["metadata"]["name"].as<std::string>();
  const auto values = StringMap(secret["stringData"]);
  std::string store_env;
  for (const auto& env : container_["env"]) {
    const YAML::Node from = env["valueFrom"];
    if (!from || !from["secretKeyRef"]) continue;
    const YAML::Node ref = from["secretKeyRef"];
    EXPECT_EQ(ref["name"].as<std::string>(), secret_name);
    ASSERT_EQ(values.count(ref["key"].as<std::string>()), 1u) << ref["key"];
    EXPECT_THAT(values.at(ref["key"].as<std::string>()), ::testing::StartsWith("postgresql://"));
    EXPECT_THAT(values.at(ref["key"].as<std::string>()), ::testing::HasSubstr("REPLACE"));
    store_env = env["name"].as<std::string>();
  }
  ASSERT_FALSE(store_env.empty()) << "no env var of the Deployment comes from a Secret";
  EXPECT_THAT(ContainerArgs(), Contains("--store_from_env=" + store_env));
  for (const auto& arg : ContainerArgs()) {
    EXPECT_FALSE(absl::StartsWith(arg, "--store=")) << "the URI belongs in the Secret: " << arg;
  }
}

// Kubernetes waits longer than the preStop pause plus ikd's drain before SIGKILL.
TEST_F(ManifestsTest, TerminationGraceExceedsIkdGrace) {
  absl::Duration pre_stop = absl::ZeroDuration();
  const YAML::Node command = container_["lifecycle"]["preStop"]["exec"]["command"];
  if (command.IsSequence() && absl::EndsWith(command[0].as<std::string>(), "sleep")) {
    pre_stop = absl::Seconds(command[1].as<int>());
  }
  const auto termination = absl::Seconds(pod_["spec"]["terminationGracePeriodSeconds"].as<int>());
  EXPECT_GT(termination, pre_stop + GraceOf(ContainerArgs()));
}

// ---------------------------------------------------------------------------------------------
// systemd

// The unit's [Service] keys (a key given twice keeps every value).
std::multimap<std::string, std::string> UnitKeys() {
  std::multimap<std::string, std::string> keys;
  for (const auto& line : Lines(FileText(kDeploy + "/systemd/ikd.service"))) {
    if (line.empty() || line[0] == '#' || line[0] == '[') continue;
    const size_t equals = line.find('=');
    if (equals != std::string::npos) keys.emplace(line.substr(0, equals), line.substr(equals + 1));
  }
  return keys;
}

std::string UnitValue(const std::multimap<std::string, std::string>& keys,
                      const std::string& key) {
  auto it = keys.find(key);
  return it == keys.end() ? "" : it->second;
}

// The sandboxing options are set as operations.md describes them.
TEST(SystemdUnitTest, HasTheSandboxingKeys) {
  const auto keys = UnitKeys();
  const std::map<std::string, std::string> expected = {
      {"DynamicUser", "yes"},        {"StateDirectory", "ikd"},
      {"ProtectSystem", "strict"},   {"ProtectHome", "yes"},
      {"PrivateTmp", "yes"},         {"NoNewPrivileges", "yes"},
      {"MemoryDenyWriteExecute", "yes"},
      {"SystemCallFilter", "@system-service"},
      {"KillSignal", "SIGTERM"},     {"Restart", "on-failure"}};
  for (const auto& [key, value] : expected) EXPECT_EQ(UnitValue(keys, key), value) << key;
  EXPECT_THAT(UnitValue(keys, "Type"), ::testing::AnyOf("simple", "notify"));
  std::vector<std::string> families = absl::StrSplit(UnitValue(keys, "RestrictAddressFamilies"),
                                                     ' ', absl::SkipEmpty());
  EXPECT_THAT(families, IsSubsetOf({"AF_INET", "AF_INET6", "AF_UNIX"}));
  EXPECT_THAT(families, Contains("AF_INET"));
}

// The ikd command lines of the unit: ExecStart, and the PostgreSQL alternative its comments
// give (lines naming /usr/local/bin/ikd), split into words.
std::vector<std::vector<std::string>> UnitCommandLines() {
  std::vector<std::vector<std::string>> commands;
  for (const auto& line : Lines(FileText(kDeploy + "/systemd/ikd.service"))) {
    const size_t at = line.find("ExecStart=/usr/local/bin/ikd");
    if (at == std::string::npos) continue;
    commands.push_back(absl::StrSplit(line.substr(at + 10), ' ', absl::SkipEmpty()));
  }
  return commands;
}

// systemd waits longer than ikd's drain before SIGKILL, for every command line of the unit.
TEST(SystemdUnitTest, TimeoutStopExceedsIkdGrace) {
  absl::Duration timeout;
  ASSERT_TRUE(absl::ParseDuration(UnitValue(UnitKeys(), "TimeoutStopSec"), &timeout));
  const auto commands = UnitCommandLines();
  ASSERT_EQ(commands.size(), 2u);
  for (const auto& command : commands) EXPECT_GT(timeout, GraceOf(command));
}

// ---------------------------------------------------------------------------------------------
// Dockerfile

struct DockerStage {
  std::string from;
  std::vector<std::string> instructions;  // "USER 10001:10001", ...
};

// The Dockerfile's stages, with continuation lines joined.
std::vector<DockerStage> DockerStages() {
  std::vector<DockerStage> stages;
  std::string pending;
  for (const auto& line : Lines(FileText(kDeploy + "/Dockerfile"))) {
    if (pending.empty() && (line.empty() || line[0] == '#')) continue;
    if (absl::EndsWith(line, "\\")) {
      pending += line.substr(0, line.size() - 1);
      continue;
    }
    const std::string instruction = pending + line;
    pending.clear();
    if (absl::StartsWith(instruction, "FROM ")) {
      stages.push_back({instruction.substr(5), {}});
    } else if (!stages.empty()) {
      stages.back().instructions.push_back(instruction);
    }
  }
  return stages;
}

// The strings of a JSON-array instruction (ENTRYPOINT ["a", "b"]).
std::vector<std::string> ExecForm(const std::string& instruction) {
  std::vector<std::string> words;
  const std::regex quoted("\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(instruction.begin(), instruction.end(), quoted);
       it != std::sregex_iterator(); ++it) {
    words.push_back((*it)[1]);
  }
  return words;
}

std::vector<std::string> StageInstructions(const DockerStage& stage, const std::string& name) {
  std::vector<std::string> out;
  for (const auto& instruction : stage.instructions) {
    if (absl::StartsWith(instruction, name + " ")) out.push_back(instruction);
  }
  return out;
}

// Two stages from Debian 12 (build on debian:bookworm, runtime on bookworm(-slim)); the
// runtime stage copies the build's binaries, runs as a non-root user and exposes the port
// ikd listens on; `docker stop` (10 s) outlasts ikd's --grace.
TEST(DockerfileTest, TwoDebian12StagesRunningAsNonRoot) {
  const auto stages = DockerStages();
  ASSERT_EQ(stages.size(), 2u);
  const std::regex bookworm("debian:bookworm(-slim)?( AS \\w+)?");
  for (const auto& stage : stages) {
    EXPECT_TRUE(std::regex_match(stage.from, bookworm)) << stage.from;
  }
  const DockerStage& runtime = stages[1];
  EXPECT_FALSE(StageInstructions(runtime, "COPY").empty());
  EXPECT_THAT(StageInstructions(runtime, "COPY")[0], ::testing::HasSubstr("--from="));
  const auto user = StageInstructions(runtime, "USER");
  ASSERT_EQ(user.size(), 1u);
  const std::string who = std::string(absl::StripPrefix(user[0], "USER "));
  EXPECT_FALSE(absl::StartsWith(who, "root") || absl::StartsWith(who, "0:") || who == "0") << who;
  const auto entrypoint = StageInstructions(runtime, "ENTRYPOINT");
  ASSERT_EQ(entrypoint.size(), 1u);
  const auto args = ExecForm(entrypoint[0]);
  ASSERT_FALSE(args.empty());
  EXPECT_TRUE(absl::EndsWith(args[0], "/ikd")) << args[0];
  std::string port;
  for (const auto& arg : args) {
    if (absl::StartsWith(arg, "--listen=")) port = arg.substr(arg.rfind(':') + 1);
  }
  EXPECT_THAT(StageInstructions(runtime, "EXPOSE"), Contains("EXPOSE " + port));
  EXPECT_LT(GraceOf(args), absl::Seconds(10));
}

// ---------------------------------------------------------------------------------------------
// Flags against the binary

// The flag names `ikd --help` lists.
std::set<std::string> IkdFlags() {
  std::set<std::string> flags;
  FILE* help = popen((kIkd + " --help 2>&1").c_str(), "r");
  if (help == nullptr) return flags;
  std::string text;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, help)) > 0;) text.append(buffer, n);
  pclose(help);
  const std::regex flag("\\n\\s+--([a-z_][a-z0-9_]*) \\(");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), flag);
       it != std::sregex_iterator(); ++it) {
    flags.insert((*it)[1]);
  }
  return flags;
}

// Every flag the Deployment, the unit (both command lines) and the Dockerfile (ENTRYPOINT and
// CMD) pass to ikd is one ikd knows (a typo would make ikd exit at start).
TEST_F(ManifestsTest, EveryFlagPassedToIkdIsKnownToIt) {
  const std::set<std::string> known = IkdFlags();
  ASSERT_THAT(known, Contains("listen"));  // the help was read
  std::vector<std::pair<std::string, std::string>> passed;  // {where, arg}
  for (const auto& arg : ContainerArgs()) passed.emplace_back("deployment.yaml", arg);
  for (const auto& command : UnitCommandLines()) {
    for (size_t i = 1; i < command.size(); ++i) passed.emplace_back("ikd.service", command[i]);
  }
  const auto stages = DockerStages();
  ASSERT_FALSE(stages.empty());
  for (const char* instruction : {"ENTRYPOINT", "CMD"}) {
    for (const auto& line : StageInstructions(stages.back(), instruction)) {
      const auto words = ExecForm(line);
      for (size_t i = std::string(instruction) == "CMD" ? 0 : 1; i < words.size(); ++i) {
        passed.emplace_back("Dockerfile", words[i]);
      }
    }
  }
  ASSERT_GE(passed.size(), 8u);
  for (const auto& [where, arg] : passed) {
    const auto [name, value] = SplitFlag(arg);
    ASSERT_FALSE(name.empty()) << where << ": " << arg << " is not a --flag";
    EXPECT_THAT(known, Contains(name)) << where << ": ikd has no --" << name;
  }
}

}  // namespace
}  // namespace ikd::deploy
