#include "call_limits.h"

#include <grpc/grpc.h>
#include <grpcpp/alarm.h>
#include <grpcpp/server_context.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace ikd::server {
namespace {

using grpc::experimental::InterceptionHookPoints;
using grpc::experimental::ServerRpcInfo;

// Open streaming calls per client address.
class PeerStreams {
 public:
  explicit PeerStreams(int max_per_peer) : max_per_peer_(max_per_peer) {}

  // False when `peer` already has max_per_peer open streams.
  bool Acquire(const std::string& peer) {
    absl::MutexLock lock(&mutex_);
    int& open = open_[peer];
    if (max_per_peer_ > 0 && open >= max_per_peer_) return false;
    ++open;
    return true;
  }

  void Release(const std::string& peer) {
    absl::MutexLock lock(&mutex_);
    auto it = open_.find(peer);
    if (it != open_.end() && --it->second <= 0) open_.erase(it);
  }

  int max_per_peer() const { return max_per_peer_; }

 private:
  const int max_per_peer_;
  absl::Mutex mutex_;
  std::unordered_map<std::string, int> open_ ABSL_GUARDED_BY(mutex_);
};

// Live streams open on the whole server (CallLimits::max_live_streams).
class LiveStreams {
 public:
  explicit LiveStreams(int max) : max_(max) {}
  // False when max streams are open.
  bool Acquire() {
    int open = open_.load();
    do {
      if (max_ > 0 && open >= max_) return false;
    } while (!open_.compare_exchange_weak(open, open + 1));
    return true;
  }
  void Release() { open_.fetch_sub(1); }
  int max() const { return max_; }

 private:
  const int max_;
  std::atomic<int> open_{0};
};

// The frame-synchronous bidirectional streams whose client waits on every answer.
bool IsLiveStream(const ServerRpcInfo& info) {
  return std::strcmp(info.method(), "/ikd.v1.KinematicsService/Track") == 0 ||
         std::strcmp(info.method(), "/ikd.v1.PoseService/EstimatePose") == 0;
}

bool IsExemptFromDefaultDeadline(const ServerRpcInfo& info) {
  return info.type() == ServerRpcInfo::Type::BIDI_STREAMING ||
         info.type() == ServerRpcInfo::Type::CLIENT_STREAMING ||
         std::strcmp(info.method(), "/grpc.health.v1.Health/Watch") == 0;
}

// Ends the call with `code` and `message`; safe from any thread while the caller holds a ref.
void EndCall(grpc_call* call, grpc_status_code code, const std::string& message) {
  grpc_call_cancel_with_status(call, code, message.c_str(), nullptr);
}

// Lives as long as its call (gRPC destroys a call's interceptors with its context).
class CallLimitsInterceptor final : public grpc::experimental::Interceptor {
 public:
  CallLimitsInterceptor(ServerRpcInfo* info, std::shared_ptr<PeerStreams> streams,
                        std::shared_ptr<LiveStreams> live, absl::Duration default_deadline)
      : info_(info),
        streams_(std::move(streams)),
        live_(std::move(live)),
        default_deadline_(default_deadline) {}

  ~CallLimitsInterceptor() override {
    if (holds_stream_) streams_->Release(peer_);
    if (holds_live_) live_->Release();
    // Destroying alarm_ cancels it; its callback then only drops its call reference.
    alarm_.reset();
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_INITIAL_METADATA)) {
      Admit();
    }
    methods->Proceed();
  }

 private:
  void Admit() {
    grpc::ServerContextBase* context = info_->server_context();
    if (info_->type() != ServerRpcInfo::Type::UNARY) {
      peer_ = PeerAddress(context->peer());
      holds_stream_ = streams_->Acquire(peer_);
      if (!holds_stream_) {
        EndCall(context->c_call(), GRPC_STATUS_RESOURCE_EXHAUSTED,
                absl::StrCat("--max_streams_per_peer: ", peer_, " already has ",
                             streams_->max_per_peer(),
                             " streaming calls open, the most one client address may have"));
        return;
      }
    }
    if (IsLiveStream(*info_)) {
      holds_live_ = live_->Acquire();
      if (!holds_live_) {
        EndCall(context->c_call(), GRPC_STATUS_RESOURCE_EXHAUSTED,
                absl::StrCat("--max_live_streams: ", live_->max(),
                             " live streams (Track, EstimatePose) are open, the most this "
                             "server answers within their period; retry later or elsewhere"));
        return;
      }
    }
    const bool has_deadline = context->deadline() != std::chrono::system_clock::time_point::max();
    if (!has_deadline && default_deadline_ != absl::InfiniteDuration() &&
        !IsExemptFromDefaultDeadline(*info_)) {
      ArmDefaultDeadline(context->c_call());
    }
  }

  void ArmDefaultDeadline(grpc_call* call) {
    grpc_call_ref(call);  // dropped by the alarm callback, fired or cancelled
    const std::string message = absl::StrCat(
        "--default_deadline: the call set no deadline and ran longer than the server's default ",
        absl::FormatDuration(default_deadline_));
    alarm_ = std::make_unique<grpc::Alarm>();  // only here: an Alarm costs a grpc_init
    alarm_->Set(absl::ToChronoTime(absl::Now() + default_deadline_), [call, message](bool fired) {
      if (fired) EndCall(call, GRPC_STATUS_DEADLINE_EXCEEDED, message);
      grpc_call_unref(call);
    });
  }

  ServerRpcInfo* const info_;
  const std::shared_ptr<PeerStreams> streams_;
  const std::shared_ptr<LiveStreams> live_;
  const absl::Duration default_deadline_;
  std::string peer_;
  bool holds_stream_ = false;
  bool holds_live_ = false;
  std::unique_ptr<grpc::Alarm> alarm_;
};

class CallLimitsInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit CallLimitsInterceptorFactory(const CallLimits& limits)
      : streams_(std::make_shared<PeerStreams>(limits.max_streams_per_peer)),
        live_(std::make_shared<LiveStreams>(limits.max_live_streams)),
        default_deadline_(limits.default_deadline) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(ServerRpcInfo* info) override {
    return new CallLimitsInterceptor(info, streams_, live_, default_deadline_);
  }

 private:
  const std::shared_ptr<PeerStreams> streams_;
  const std::shared_ptr<LiveStreams> live_;
  const absl::Duration default_deadline_;
};

}  // namespace

absl::Status CallLimits::Validate() const {
  if (max_streams_per_peer < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_streams_per_peer must be >= 0 (0: no limit), got ",
                     max_streams_per_peer));
  }
  if (max_live_streams < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_live_streams must be >= 0 (0: no limit), got ", max_live_streams));
  }
  if (default_deadline <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("default_deadline must be > 0 (inf: none), got ",
                                                   absl::FormatDuration(default_deadline)));
  }
  // gRPC takes milliseconds in an int: at most 24.8 days, or inf.
  constexpr absl::Duration kLongest = absl::Milliseconds(std::numeric_limits<int>::max());
  if (keepalive_time < absl::Milliseconds(1) ||
      (keepalive_time > kLongest && keepalive_time != absl::InfiniteDuration())) {
    return absl::InvalidArgumentError(
        absl::StrCat("keepalive_time must be in [1ms, ", absl::FormatDuration(kLongest),
                     "] or inf (no pings), got ", absl::FormatDuration(keepalive_time)));
  }
  if (keepalive_timeout < absl::Milliseconds(1) || keepalive_timeout > kLongest) {
    return absl::InvalidArgumentError(
        absl::StrCat("keepalive_timeout must be in [1ms, ", absl::FormatDuration(kLongest),
                     "], got ", absl::FormatDuration(keepalive_timeout)));
  }
  return absl::OkStatus();
}

void AddKeepaliveArguments(const CallLimits& limits, grpc::ServerBuilder& builder) {
  const auto milliseconds = [](absl::Duration d) {
    return d == absl::InfiniteDuration() ? std::numeric_limits<int>::max()
                                         : static_cast<int>(absl::ToInt64Milliseconds(d));
  };
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, milliseconds(limits.keepalive_time));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, milliseconds(limits.keepalive_timeout));
  // gRPC stops pinging after two PINGs without data by default: an idle Track stream of a
  // client that then vanished would never be found out.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
}

std::string PeerAddress(const std::string& peer) {
  if (absl::StartsWith(peer, "unix:") || absl::StartsWith(peer, "unix-abstract:")) return peer;
  std::string address = peer;
  for (const char* scheme : {"ipv4:", "ipv6:"}) {
    if (absl::StartsWith(address, scheme)) address = address.substr(std::strlen(scheme));
  }
  if (absl::StartsWith(address, "[")) {
    const size_t close = address.find(']');
    return close == std::string::npos ? address : address.substr(1, close - 1);
  }
  const size_t colon = address.rfind(':');
  return colon == std::string::npos ? address : address.substr(0, colon);
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
MakeCallLimitsInterceptorFactory(const CallLimits& limits) {
  return std::make_unique<CallLimitsInterceptorFactory>(limits);
}

}  // namespace ikd::server
