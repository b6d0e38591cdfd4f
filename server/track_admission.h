// Admission control of Track streams (issue 35 item 4): the server refuses a new live stream
// with RESOURCE_EXHAUSTED when admitting it would push the admitted streams past their period,
// instead of letting every stream's answers come late.
//
// The rule (docs/operations.md, "Track admission"): a stream of period P whose answers cost c
// of CPU (its solve, measured on its own thread's CPU clock) plus o (what the rest of an answer
// costs this process: reading, conversion, the hand-offs, the write; measured over the whole
// process) demands (c + o) / P of a CPU. A new stream is admitted while the demand of the
// admitted streams and its own stays within `utilisation` of the CPUs this process may run on.
// c starts from a measurement made when the stream is configured (a few steps of a scratch
// tracker of the same arm) and follows the stream's own answers; o starts at kAssumedOverhead
// and is measured once the streams have answered enough. A lone stream is always admitted (with
// no other stream to protect, refusing it helps no one; its deadline says LATE where it cannot
// keep up).
//
//   TrackAdmission admission({.utilisation = 0.6});
//   absl::StatusOr<std::unique_ptr<TrackAdmission::Ticket>> ticket =
//       admission.Admit(/*period=*/1e-3, /*solve_seconds=*/20e-6);
//   if (!ticket.ok()) return ticket.status();  // RESOURCE_EXHAUSTED, the capacity in words
//   (*ticket)->Answered(solve_cpu_seconds);      // after every answer
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace ikd::server {

struct TrackAdmissionOptions {
  // The share of the CPUs that admitted Track streams may demand, in (0, 1]; 0: no admission
  // control (every stream admitted).
  double utilisation = 0.6;
  // The CPUs counted; 0: those this process may run on (its affinity mask).
  int cpus = 0;

  // INVALID_ARGUMENT naming the field when out of range.
  absl::Status Validate() const;
};

class TrackAdmission {
 public:
  // What a stream answered before o was measured: about what this project's benchmark host
  // spends on an answer beside the solve (docs/service-benchmark.md, ikd CPU per target).
  static constexpr double kAssumedOverhead = 100e-6;  // s of CPU per answer
  // o is measured over windows of at least this many answers.
  static constexpr int64_t kOverheadWindow = 2000;

  explicit TrackAdmission(const TrackAdmissionOptions& options);

  // One admitted stream; its demand leaves the ledger when the ticket is destroyed.
  class Ticket {
   public:
    ~Ticket();
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    // After every answer: the CPU its solve took on its thread (0 for an answer without one).
    void Answered(double solve_cpu_seconds);

   private:
    friend class TrackAdmission;
    struct Entry;
    Ticket(TrackAdmission* admission, std::shared_ptr<Entry> entry);
    TrackAdmission* const admission_;
    const std::shared_ptr<Entry> entry_;
  };

  // Admits a stream of `period` (s, > 0) whose solves cost `solve_seconds` of CPU each, or
  // RESOURCE_EXHAUSTED saying the capacity ("capacity N streams at R Hz on this host ...").
  absl::StatusOr<std::unique_ptr<Ticket>> Admit(double period, double solve_seconds);

  // Whether streams can be refused (utilisation > 0).
  bool enabled() const { return utilisation_ > 0.0; }
  // For metrics and tests.
  int admitted() const;
  double cpus() const { return cpus_; }
  // The CPUs the admitted streams demand now.
  double demand() const;
  double overhead_per_answer() const { return overhead_.load(std::memory_order_relaxed); }

 private:
  void Release(const std::shared_ptr<Ticket::Entry>& entry);
  void CountAnswer(double solve_cpu_seconds);
  // Measures o over the answers since the last measurement, where there were enough.
  void MeasureOverhead();
  double DemandLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const double utilisation_;
  const double cpus_;
  mutable absl::Mutex mutex_;
  std::vector<std::shared_ptr<Ticket::Entry>> streams_ ABSL_GUARDED_BY(mutex_);
  std::atomic<double> overhead_{kAssumedOverhead};
  // Since the last measurement of o: answers and their solves' CPU (ns); the process CPU then.
  std::atomic<int64_t> answers_{0};
  std::atomic<int64_t> solve_ns_{0};
  int64_t process_ns_at_window_ ABSL_GUARDED_BY(mutex_) = 0;
};

// The CPU time this thread has used, s (CLOCK_THREAD_CPUTIME_ID).
double ThreadCpuSeconds();

}  // namespace ikd::server
