#include "metrics.h"

#include <google/protobuf/descriptor.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>
#include <grpcpp/server_context.h>
#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/call_once.h"
#include "absl/container/flat_hash_map.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "stream_handoff.h"

namespace ikd::server {
namespace {

using grpc::experimental::InterceptionHookPoints;
using grpc::experimental::ServerRpcInfo;

constexpr int kNumCodes = 17;  // grpc::StatusCode OK .. UNAUTHENTICATED
constexpr int kNumSolverKinds = 4;
constexpr char kRequestIdKey[] = "x-request-id";
constexpr size_t kMaxRequestIdLength = 128;
constexpr size_t kMaxLoggedMethodLength = 256;
constexpr size_t kMaxLoggedErrorLength = 1024;

// The services whose methods get their own label values; any other path is "unknown", so a
// client cannot grow the label set.
constexpr const char* kLabelledServices[] = {
    "ikd.v1.ModelService",    "ikd.v1.KinematicsService",
    "ikd.v1.SimulationService", "ikd.v1.PoseService",
    "grpc.health.v1.Health",  "grpc.reflection.v1alpha.ServerReflection"};

const char* SolverKindName(SolverKind kind) {
  switch (kind) {
    case SolverKind::kIkStep: return "ik_step";
    case SolverKind::kSimulationStep: return "simulation_step";
    case SolverKind::kPoseFit: return "pose_fit";
    case SolverKind::kShapeFollow: return "shape_follow";
  }
  return "unknown";
}

std::string CodeName(int code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

// Unary calls take milliseconds; streams last as long as their client keeps them.
prometheus::Histogram::BucketBoundaries LatencyBuckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
          0.5,    1,     2.5,    5,     10,   30,    60,   300, 1800};
}

prometheus::Histogram::BucketBoundaries IterationBuckets() {
  return {1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000};
}

bool IsPlausibleRequestId(std::string_view id) {
  if (id.empty() || id.size() > kMaxRequestIdLength) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string NewRequestId() {
  thread_local absl::BitGen gen;
  return absl::StrFormat("%016x%016x", absl::Uniform<uint64_t>(gen),
                         absl::Uniform<uint64_t>(gen));
}

// The metric children of one method, created on its first call (prometheus-cpp's Family::Add
// builds a label map and takes a lock, so it runs once per method and per status code).
struct MethodMetrics {
  std::string path;  // "/service/method"
  std::string service;
  std::string method;
  absl::once_flag resolved;
  absl::once_flag resolved_stream;  // open_streams, for streaming methods only
  prometheus::Counter* started = nullptr;
  prometheus::Counter* errors = nullptr;
  prometheus::Counter* messages_received = nullptr;
  prometheus::Counter* messages_sent = nullptr;
  prometheus::Histogram* latency = nullptr;
  prometheus::Gauge* open_streams = nullptr;
  std::array<std::atomic<prometheus::Counter*>, kNumCodes> handled{};
};

// Exposes a WorkerPool's state, read when scraped.
class PoolCollectable final : public prometheus::Collectable {
 public:
  void Observe(const WorkerPool* pool) {
    std::lock_guard<std::mutex> lock(mu_);
    pool_ = pool;
  }

  std::vector<prometheus::MetricFamily> Collect() const override {
    std::lock_guard<std::mutex> lock(mu_);
    if (pool_ == nullptr) return {};
    return {Family("ikd_worker_pool_threads", "Worker threads of the solve pool.",
                   prometheus::MetricType::Gauge, pool_->threads()),
            Family("ikd_worker_pool_queued", "Tasks waiting for a worker (queue depth).",
                   prometheus::MetricType::Gauge, pool_->queued()),
            Family("ikd_worker_pool_busy", "Workers running a task.",
                   prometheus::MetricType::Gauge, pool_->busy()),
            Family("ikd_worker_pool_rejected_total",
                   "New calls refused because the queue was full (answered RESOURCE_EXHAUSTED).",
                   prometheus::MetricType::Counter, static_cast<double>(pool_->rejected()))};
  }

 private:
  static prometheus::MetricFamily Family(const char* name, const char* help,
                                         prometheus::MetricType type, double value) {
    prometheus::MetricFamily family;
    family.name = name;
    family.help = help;
    family.type = type;
    prometheus::ClientMetric metric;
    if (type == prometheus::MetricType::Counter) {
      metric.counter.value = value;
    } else {
      metric.gauge.value = value;
    }
    family.metric.push_back(std::move(metric));
    return family;
  }

  mutable std::mutex mu_;
  const WorkerPool* pool_ = nullptr;
};

// The address to connect to for reaching a server bound to `listen` ("host:port", "[v6]:port";
// a wildcard host is reached on loopback).
std::string ConnectHost(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  std::string host = colon == std::string::npos ? "" : listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty() || host == "0.0.0.0") return "127.0.0.1";
  if (host == "::") return "::1";
  return host;
}

// Opens and closes one connection to host:port (best effort).
void Knock(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return;
  const int fd = socket(found->ai_family, found->ai_socktype, found->ai_protocol);
  if (fd >= 0) {
    connect(fd, found->ai_addr, found->ai_addrlen);
    close(fd);
  }
  freeaddrinfo(found);
}

}  // namespace

namespace internal {

// Length of the well-formed UTF-8 sequence at the start of `text` (1 to 4 bytes), 0 if none.
size_t Utf8SequenceLength(std::string_view text) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(0);
  size_t length = 0;
  if (lead >= 0xc2 && lead <= 0xdf) length = 2;
  else if (lead >= 0xe0 && lead <= 0xef) length = 3;
  else if (lead >= 0xf0 && lead <= 0xf4) length = 4;
  if (length == 0 || text.size() < length) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(k) & 0xc0) != 0x80) return 0;
  }
  // Overlong forms, UTF-16 surrogates and code points above U+10FFFF.
  if ((lead == 0xe0 && byte(1) < 0xa0) || (lead == 0xed && byte(1) > 0x9f) ||
      (lead == 0xf0 && byte(1) < 0x90) || (lead == 0xf4 && byte(1) > 0x8f)) {
    return 0;
  }
  return length;
}

// `text` as a JSON string (quotes included), at most `max_bytes` of it. A client-chosen string
// (a method path, an id echoed in an error) may be invalid UTF-8: such bytes are escaped as
// their Latin-1 code points (so is a character cut by the byte limit), so that every line stays
// valid JSON for strict ingesters.
void AppendJsonString(std::string& out, std::string_view text, size_t max_bytes) {
  if (text.size() > max_bytes) text = text.substr(0, max_bytes);
  out += '"';
  for (size_t k = 0; k < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[k]);
    if (c >= 0x80) {
      const size_t length = Utf8SequenceLength(text.substr(k));
      if (length > 0) {
        out.append(text.substr(k, length));
        k += length;
      } else {
        absl::StrAppendFormat(&out, "\\u%04x", c);
        ++k;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          absl::StrAppendFormat(&out, "\\u%04x", c);
        } else {
          out += static_cast<char>(c);
        }
    }
    ++k;
  }
  out += '"';
}

}  // namespace internal

struct Metrics::Impl {
  explicit Impl(const ObservabilityOptions& opts);

  MethodMetrics& ForMethod(const char* path);
  prometheus::Gauge& OpenStreams(MethodMetrics& m);
  prometheus::Counter& Handled(MethodMetrics& m, int code);
  void WriteLog(std::string_view line) const;

  ObservabilityOptions options;
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>* rpc_started;
  prometheus::Family<prometheus::Counter>* rpc_handled;
  prometheus::Family<prometheus::Counter>* rpc_errors;
  prometheus::Family<prometheus::Counter>* messages_received;
  prometheus::Family<prometheus::Counter>* messages_sent;
  prometheus::Family<prometheus::Histogram>* rpc_duration;
  prometheus::Family<prometheus::Gauge>* open_streams;
  std::array<prometheus::Histogram*, kNumSolverKinds> solver_iterations{};
  std::array<prometheus::Counter*, kNumSolverKinds> solver_not_converged{};
  // Keyed by the gRPC path ("/ikd.v1.KinematicsService/Solve"); filled in the constructor and
  // read-only afterwards, so lookups need no lock.
  absl::flat_hash_map<std::string, std::unique_ptr<MethodMetrics>> methods;
  MethodMetrics unknown;
  std::shared_ptr<PoolCollectable> pool = std::make_shared<PoolCollectable>();
  std::unique_ptr<prometheus::Exposer> exposer;
  int port = 0;
};

Metrics::Impl::Impl(const ObservabilityOptions& opts) : options(opts) {
  rpc_started = &prometheus::BuildCounter()
                     .Name("ikd_rpc_started_total")
                     .Help("RPCs started, by service and method.")
                     .Register(*registry);
  rpc_handled = &prometheus::BuildCounter()
                     .Name("ikd_rpc_handled_total")
                     .Help("RPCs finished, by service, method and gRPC status code.")
                     .Register(*registry);
  rpc_errors = &prometheus::BuildCounter()
                    .Name("ikd_rpc_errors_total")
                    .Help("RPCs finished with a status other than OK, by service and method.")
                    .Register(*registry);
  messages_received = &prometheus::BuildCounter()
                           .Name("ikd_rpc_messages_received_total")
                           .Help("Request messages received, by service and method.")
                           .Register(*registry);
  messages_sent = &prometheus::BuildCounter()
                       .Name("ikd_rpc_messages_sent_total")
                       .Help("Response messages sent, by service and method.")
                       .Register(*registry);
  rpc_duration = &prometheus::BuildHistogram()
                      .Name("ikd_rpc_duration_seconds")
                      .Help("Time from the start of an RPC to its status (seconds), by service "
                            "and method; a stream's whole life.")
                      .Register(*registry);
  open_streams = &prometheus::BuildGauge()
                      .Name("ikd_rpc_open_streams")
                      .Help("Streaming RPCs in progress, by service and method.")
                      .Register(*registry);
  auto& iterations = prometheus::BuildHistogram()
                         .Name("ikd_solver_iterations")
                         .Help("Constraint-solver iterations per solver step, by kind.")
                         .Register(*registry);
  auto& not_converged = prometheus::BuildCounter()
                            .Name("ikd_solver_not_converged_total")
                            .Help("Solver steps that did not converge, by kind.")
                            .Register(*registry);
  for (int k = 0; k < kNumSolverKinds; ++k) {
    const prometheus::Labels labels = {{"kind", SolverKindName(static_cast<SolverKind>(k))}};
    solver_iterations[k] = &iterations.Add(labels, IterationBuckets());
    solver_not_converged[k] = &not_converged.Add(labels);
  }

  const google::protobuf::DescriptorPool* pool = google::protobuf::DescriptorPool::generated_pool();
  for (const char* name : kLabelledServices) {
    const google::protobuf::ServiceDescriptor* service = pool->FindServiceByName(name);
    if (service == nullptr) continue;  // not linked in: its calls count as "unknown"
    for (int i = 0; i < service->method_count(); ++i) {
      auto m = std::make_unique<MethodMetrics>();
      m->service = service->full_name();
      m->method = service->method(i)->name();
      m->path = absl::StrCat("/", m->service, "/", m->method);
      methods.emplace(m->path, std::move(m));
    }
  }
  unknown.path = "unknown";
  unknown.service = "unknown";
  unknown.method = "unknown";
}

MethodMetrics& Metrics::Impl::ForMethod(const char* path) {
  auto it = path == nullptr ? methods.end() : methods.find(absl::string_view(path));
  MethodMetrics& m = it == methods.end() ? unknown : *it->second;
  absl::call_once(m.resolved, [&] {
    const prometheus::Labels labels = {{"service", m.service}, {"method", m.method}};
    m.started = &rpc_started->Add(labels);
    m.errors = &rpc_errors->Add(labels);
    m.messages_received = &messages_received->Add(labels);
    m.messages_sent = &messages_sent->Add(labels);
    m.latency = &rpc_duration->Add(labels, LatencyBuckets());
  });
  return m;
}

prometheus::Gauge& Metrics::Impl::OpenStreams(MethodMetrics& m) {
  absl::call_once(m.resolved_stream, [&] {
    m.open_streams = &open_streams->Add({{"service", m.service}, {"method", m.method}});
  });
  return *m.open_streams;
}

prometheus::Counter& Metrics::Impl::Handled(MethodMetrics& m, int code) {
  if (code < 0 || code >= kNumCodes) code = static_cast<int>(grpc::StatusCode::UNKNOWN);
  prometheus::Counter* counter = m.handled[code].load(std::memory_order_acquire);
  if (counter == nullptr) {
    // Family::Add returns the existing child for equal labels, so a race here is harmless.
    counter = &rpc_handled->Add(
        {{"service", m.service}, {"method", m.method}, {"code", CodeName(code)}});
    m.handled[code].store(counter, std::memory_order_release);
  }
  return *counter;
}

void Metrics::Impl::WriteLog(std::string_view line) const {
  if (options.access_log_sink) return options.access_log_sink(line);
  std::string with_newline(line);
  with_newline += '\n';
  std::fwrite(with_newline.data(), 1, with_newline.size(), stderr);  // one write per line
}

namespace {

// One per call. Hooks of a bidirectional stream may run on different threads at once (a read
// and a write), hence the atomics; the status is sent exactly once.
class RpcInterceptor final : public grpc::experimental::Interceptor {
 public:
  RpcInterceptor(Metrics::Impl& impl, ServerRpcInfo* info)
      : impl_(impl),
        info_(info),
        method_(impl.ForMethod(info->method())),
        streaming_(info->type() != ServerRpcInfo::Type::UNARY),
        start_(std::chrono::steady_clock::now()) {
    method_.started->Increment();
    if (streaming_) impl_.OpenStreams(method_).Increment();
    HandToGrpc(this);
  }

  // A call that never sent a status (not expected with the callback API): the server context
  // may be gone by now, so only what was captured is used.
  ~RpcInterceptor() override {
    TakeFromGrpc(this);
    if (!recorded_.exchange(true)) {
      Record(grpc::StatusCode::CANCELLED, "ended without a status", method_.path);
    }
  }

  // gRPC orders the hooks of a call (TSan cannot see it: stream_handoff.h).
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    TakeFromGrpc(this);
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_INITIAL_METADATA)) {
      OnInitialMetadata(*methods->GetRecvInitialMetadata());
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->emplace(kRequestIdKey, request_id_);
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() != nullptr) {  // null: the read failed (end of stream)
      messages_in_.fetch_add(1, std::memory_order_relaxed);
      method_.messages_received->Increment();
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_MESSAGE)) {
      messages_out_.fetch_add(1, std::memory_order_relaxed);
      method_.messages_sent->Increment();
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS) &&
        !recorded_.exchange(true)) {
      OnStatus(methods->GetSendStatus());
    }
    HandToGrpc(this);
    methods->Proceed();
  }

 private:
  // Runs before the handler; request_id_ and peer_ are read only after it.
  void OnInitialMetadata(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) {
    auto it = metadata.find(kRequestIdKey);
    if (it != metadata.end()) {
      const std::string_view id(it->second.data(), it->second.size());
      if (IsPlausibleRequestId(id)) request_id_.assign(id);
    }
    if (request_id_.empty()) request_id_ = NewRequestId();
    if (impl_.options.access_log) peer_ = info_->server_context()->peer();
  }

  // The status the client sees: a call it cancelled (or whose deadline passed) is CANCELLED
  // (DEADLINE_EXCEEDED) whatever the handler finished with. A call the call limits ended
  // (call_limits.h) is cancelled too, and shows as CANCELLED here.
  void OnStatus(const grpc::Status& status) {
    grpc::ServerContextBase* context = info_->server_context();
    if (context->IsCancelled() && status.error_code() != grpc::StatusCode::CANCELLED &&
        status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
      const bool expired = context->deadline() <= std::chrono::system_clock::now();
      Record(expired ? grpc::StatusCode::DEADLINE_EXCEEDED : grpc::StatusCode::CANCELLED,
             expired ? "deadline exceeded" : "cancelled before its status was sent", Path());
      return;
    }
    Record(status.error_code(), status.error_message(), Path());
  }

  // The path the client called (an unknown method's too); valid while the call is.
  std::string_view Path() const {
    return info_->method() == nullptr ? std::string_view() : std::string_view(info_->method());
  }

  void Record(grpc::StatusCode code, std::string_view error, std::string_view path) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    impl_.Handled(method_, static_cast<int>(code)).Increment();
    if (code != grpc::StatusCode::OK) method_.errors->Increment();
    method_.latency->Observe(seconds);
    if (streaming_) method_.open_streams->Decrement();
    if (impl_.options.access_log) impl_.WriteLog(LogLine(code, error, path, seconds));
  }

  std::string LogLine(grpc::StatusCode code, std::string_view error, std::string_view path,
                      double seconds) const {
    std::string line;
    line.reserve(256 + error.size());
    line += "{\"time\":";
    internal::AppendJsonString(
        line, absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", absl::Now(), absl::UTCTimeZone()), 64);
    line += ",\"request_id\":";
    internal::AppendJsonString(line, request_id_, kMaxRequestIdLength);
    line += ",\"method\":";
    internal::AppendJsonString(line, path, kMaxLoggedMethodLength);
    line += ",\"peer\":";
    internal::AppendJsonString(line, peer_, kMaxLoggedMethodLength);
    line += ",\"code\":";
    internal::AppendJsonString(line, CodeName(static_cast<int>(code)), 64);
    absl::StrAppendFormat(&line, ",\"latency_seconds\":%.6f,\"messages_in\":%d,\"messages_out\":%d",
                          seconds, messages_in_.load(), messages_out_.load());
    if (code != grpc::StatusCode::OK) {
      line += ",\"error\":";
      internal::AppendJsonString(line, error, kMaxLoggedErrorLength);
    }
    line += '}';
    return line;
  }

  Metrics::Impl& impl_;
  ServerRpcInfo* const info_;  // not used in the destructor: the call may be gone
  MethodMetrics& method_;
  const bool streaming_;
  const std::chrono::steady_clock::time_point start_;
  std::string request_id_;
  std::string peer_;
  std::atomic<int64_t> messages_in_{0};
  std::atomic<int64_t> messages_out_{0};
  std::atomic<bool> recorded_{false};
};

class RpcInterceptorFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit RpcInterceptorFactory(Metrics::Impl& impl) : impl_(impl) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(ServerRpcInfo* info) override {
    return new RpcInterceptor(impl_, info);
  }

 private:
  Metrics::Impl& impl_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Metrics>> Metrics::Create(const ObservabilityOptions& options) {
  auto impl = std::make_unique<Impl>(options);
  if (!options.metrics_listen.empty()) {
    // prometheus-cpp (civetweb) throws when it cannot listen: caught here, at the boundary.
    try {
      impl->exposer = std::make_unique<prometheus::Exposer>(options.metrics_listen, 2);
    } catch (const std::exception& e) {
      return absl::UnavailableError(absl::StrCat("metrics_listen: cannot serve /metrics on ",
                                                 options.metrics_listen, ": ", e.what()));
    }
    const std::vector<int> ports = impl->exposer->GetListeningPorts();
    if (ports.empty()) {
      return absl::UnavailableError(
          absl::StrCat("metrics_listen: no port bound for ", options.metrics_listen));
    }
    impl->port = ports.front();
    impl->exposer->RegisterCollectable(impl->registry);
    impl->exposer->RegisterCollectable(impl->pool);
  }
  return std::unique_ptr<Metrics>(new Metrics(std::move(impl)));
}

Metrics::Metrics(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Metrics::~Metrics() { StopServing(); }

int Metrics::port() const { return impl_->exposer ? impl_->port : 0; }

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
Metrics::NewRpcInterceptorFactory() {
  return std::make_unique<RpcInterceptorFactory>(*impl_);
}

void Metrics::ObserveWorkerPool(const WorkerPool* pool) { impl_->pool->Observe(pool); }

void Metrics::StopServing() {
  if (impl_->exposer != nullptr) {
    // civetweb's listener checks for a stop between 2 s polls of its socket; a connection ends
    // the poll, so knocking while it stops saves those seconds at every shutdown.
    std::atomic<bool> stopped{false};
    std::thread knocker([&stopped, host = ConnectHost(impl_->options.metrics_listen),
                         port = impl_->port] {
      while (!stopped.load()) {
        Knock(host, port);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
    impl_->exposer.reset();  // joins civetweb's threads: no scrape after this
    stopped.store(true);
    knocker.join();
  }
  impl_->pool->Observe(nullptr);
}

void Metrics::RecordSolverStep(SolverKind kind, int iterations) {
  impl_->solver_iterations[static_cast<int>(kind)]->Observe(iterations);
}

void Metrics::RecordNotConverged(SolverKind kind) {
  impl_->solver_not_converged[static_cast<int>(kind)]->Increment();
}

}  // namespace ikd::server
