#include "ikctl_common.h"

#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client_util.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "ikd address, host:port");
ABSL_FLAG(absl::Duration, timeout, absl::Seconds(30),
          "deadline of each call (a stream: of the whole stream); \"inf\" for none");
ABSL_FLAG(std::string, format, "",
          "json, csv or table; default: json for create/get/update/edit/solve, table for list, "
          "csv for trajectory, track, pendulum and chain");

namespace ikd::clients {

int UsageError(const std::string& message) {
  std::cerr << "ikctl: " << message << " (see ikctl --help)\n";
  return kExitUsage;
}

int InputError(const absl::Status& status) {
  std::cerr << "ikctl: " << status.message() << "\n";
  return kExitUsage;
}

int RpcError(const grpc::Status& status) {
  std::cerr << "ikctl: " << DescribeRpcError(status);
  return kExitRpcError;
}

absl::StatusOr<Format> OutputFormat(Format fallback) {
  const std::string format = absl::GetFlag(FLAGS_format);
  if (format.empty()) return fallback;
  if (format == "json") return Format::kJson;
  if (format == "csv") return Format::kCsv;
  if (format == "table") return Format::kTable;
  return absl::InvalidArgumentError(
      absl::StrCat("--format must be json, csv or table, got \"", format, "\""));
}

TablePrinter::Style StyleOf(Format format) {
  return format == Format::kCsv ? TablePrinter::kCsv : TablePrinter::kTable;
}

void PrepareContext(grpc::ClientContext& context) {
  SetTimeout(context, absl::GetFlag(FLAGS_timeout));
}

std::string Number(double value) { return absl::StrFormat("%.6g", value); }

}  // namespace ikd::clients
