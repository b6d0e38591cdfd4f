// Per-call limits enforced for every method (ikd's services, health, reflection) by a server
// interceptor: concurrent streaming calls per client IP address, and a default deadline for
// calls that arrive without one.
//
// A limit is enforced by ending the call with a status (grpc_call_cancel_with_status, as gRPC
// core does for its own deadlines): the client receives RESOURCE_EXHAUSTED or DEADLINE_EXCEEDED
// with a message naming the flag and its bound, and the handler sees the call cancelled and
// stops at its next cancellation check.
//
//   std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> creators;
//   creators.push_back(ikd::server::MakeCallLimitsInterceptorFactory(limits));
//   builder.experimental().SetInterceptorCreators(std::move(creators));
#pragma once

#include <grpcpp/server_builder.h>
#include <grpcpp/support/server_interceptor.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace ikd::server {

struct CallLimits {
  // Streaming calls (server, client or bidirectional streams) open at once from one client IP
  // address; the next one gets RESOURCE_EXHAUSTED. 0: no limit.
  int max_streams_per_peer = 128;
  // Live streams (Track and EstimatePose: a controller or camera waits on every answer) open at
  // once on the whole server; the next one gets RESOURCE_EXHAUSTED at once instead of every
  // stream's answers coming late (docs/service-benchmark.md (e) measures the capacity). 0: no
  // limit.
  int max_live_streams = 0;
  // Deadline given to unary and server-streaming calls that arrive without one. The
  // bidirectional streams (Track, EstimatePose, reflection) of live clients and the health Watch
  // stream are exempt: they may run as long as their client does, bounded in number by
  // max_streams_per_peer. absl::InfiniteDuration(): no default.
  absl::Duration default_deadline = absl::Minutes(5);
  // HTTP/2 keepalive of every connection with a call open: a PING after this long without a
  // frame from the client, and the connection closed (its calls cancelled) when the PING is not
  // answered within keepalive_timeout. A client that froze or whose host vanished without a
  // FIN would otherwise hold its exempt streams, and their max_streams_per_peer slots, forever.
  // absl::InfiniteDuration(): no PINGs.
  absl::Duration keepalive_time = absl::Minutes(1);
  absl::Duration keepalive_timeout = absl::Seconds(20);

  // INVALID_ARGUMENT naming the field when a bound is out of range.
  absl::Status Validate() const;
};

// "ipv4:127.0.0.1:5000" -> "127.0.0.1", "ipv6:[::1]:5000" -> "::1" (gRPC's peer strings);
// a unix socket peer is kept whole.
std::string PeerAddress(const std::string& peer);

// The keepalive channel arguments of `limits` for the server builder.
void AddKeepaliveArguments(const CallLimits& limits, grpc::ServerBuilder& builder);

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
MakeCallLimitsInterceptorFactory(const CallLimits& limits);

}  // namespace ikd::server
