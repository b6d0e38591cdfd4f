// Hand-offs of a streaming reactor between ikd's threads and gRPC's, told to ThreadSanitizer.
//
// A reactor is owned by one party at a time (a worker, then gRPC between StartWrite and
// OnWriteDone, then a worker again ...). gRPC orders those hand-offs with its own locks and
// queues, but Debian's gRPC is not built with TSan, so a TSan build cannot see that order and
// would report every stream's state as raced. Each hand-off to gRPC (StartRead, StartWrite,
// Finish) is preceded by HandToGrpc(this), and each callback (OnReadDone, OnWriteDone, OnDone)
// starts with TakeFromGrpc(this): a release/acquire pair on the reactor's address. Outside TSan
// builds both are empty.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define IKD_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define IKD_TSAN 1
#endif
#endif

#ifdef IKD_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace ikd::server {

inline void HandToGrpc([[maybe_unused]] void* reactor) {
#ifdef IKD_TSAN
  __tsan_release(reactor);
#endif
}

inline void TakeFromGrpc([[maybe_unused]] void* reactor) {
#ifdef IKD_TSAN
  __tsan_acquire(reactor);
#endif
}

}  // namespace ikd::server
