// What every ikctl command shares: the connection flags (--server, --timeout, --format), exit
// codes, error reporting and output formats. Commands live in ikctl.cc (health, kinematics),
// ikctl_models.cc (models), ikctl_simulation.cc (pendulum, chain) and ikctl_pose.cc (pose).
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client_util.h"  // ParseNumbers
#include "table_printer.h"

ABSL_DECLARE_FLAG(std::string, server);
ABSL_DECLARE_FLAG(absl::Duration, timeout);
ABSL_DECLARE_FLAG(std::string, format);

namespace ikd::clients {

enum ExitCode { kExitOk = 0, kExitRpcError = 1, kExitUsage = 2 };
enum class Format { kJson, kCsv, kTable };
using Args = std::vector<std::string>;

// Each prints "ikctl: ..." to stderr and returns the exit code for its kind of failure.
int UsageError(const std::string& message);      // kExitUsage, with a pointer to --help
int InputError(const absl::Status& status);      // kExitUsage: a bad flag or file
int RpcError(const grpc::Status& status);        // kExitRpcError, with every field violation

// --format, or `fallback` when it is not given.
absl::StatusOr<Format> OutputFormat(Format fallback);
TablePrinter::Style StyleOf(Format format);

// The --timeout deadline on a call's context.
void PrepareContext(grpc::ClientContext& context);

// "%.6g": compact numbers for tables.
std::string Number(double value);

// The commands of ikctl_models.cc (collection: "arms", "scenes" or "skeletons"; verb and its
// operands), ikctl_simulation.cc and ikctl_pose.cc.
int ModelCommand(std::shared_ptr<grpc::Channel> channel, const std::string& collection,
                 const std::string& verb, const Args& args);
int StepPendulumCommand(std::shared_ptr<grpc::Channel> channel);
int StepChainCommand(std::shared_ptr<grpc::Channel> channel);
int EstimatePoseCommand(std::shared_ptr<grpc::Channel> channel);

}  // namespace ikd::clients
