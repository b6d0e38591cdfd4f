#include "track_admission.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "errors.h"

namespace ikd::server {
namespace {

int64_t ClockNanoseconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

int AffinityCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// A stream's solve cost follows its answers with this weight per answer (about the last 20).
constexpr double kSolveSmoothing = 0.05;

}  // namespace

double ThreadCpuSeconds() { return 1e-9 * ClockNanoseconds(CLOCK_THREAD_CPUTIME_ID); }

absl::Status TrackAdmissionOptions::Validate() const {
  if (!(utilisation >= 0.0 && utilisation <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "track_utilisation must be in [0, 1] (0: no admission control), got ", utilisation));
  }
  if (cpus < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("track_cpus must be >= 0 (0: the CPUs this process may run on), got ", cpus));
  }
  return absl::OkStatus();
}

struct TrackAdmission::Ticket::Entry {
  Entry(double period, double solve) : period(period), solve(solve) {}
  const double period;
  std::atomic<double> solve;  // s of CPU per answer's solve, smoothed
};

TrackAdmission::TrackAdmission(const TrackAdmissionOptions& options)
    : utilisation_(options.utilisation),
      cpus_(options.cpus > 0 ? options.cpus : AffinityCpus()),
      process_ns_at_window_(ClockNanoseconds(CLOCK_PROCESS_CPUTIME_ID)) {}

TrackAdmission::Ticket::Ticket(TrackAdmission* admission, std::shared_ptr<Entry> entry)
    : admission_(admission), entry_(std::move(entry)) {}

TrackAdmission::Ticket::~Ticket() { admission_->Release(entry_); }

void TrackAdmission::Ticket::Answered(double solve_cpu_seconds) {
  // One writer per stream (its answers are strictly sequential).
  const double smoothed = entry_->solve.load(std::memory_order_relaxed);
  entry_->solve.store(smoothed + kSolveSmoothing * (solve_cpu_seconds - smoothed),
                      std::memory_order_relaxed);
  admission_->CountAnswer(solve_cpu_seconds);
}

void TrackAdmission::CountAnswer(double solve_cpu_seconds) {
  solve_ns_.fetch_add(static_cast<int64_t>(solve_cpu_seconds * 1e9), std::memory_order_relaxed);
  if (answers_.fetch_add(1, std::memory_order_relaxed) + 1 >= kOverheadWindow) MeasureOverhead();
}

void TrackAdmission::MeasureOverhead() {
  absl::MutexLock lock(&mutex_);
  const int64_t answers = answers_.load(std::memory_order_relaxed);
  if (answers < kOverheadWindow) return;  // another thread measured this window
  const int64_t now = ClockNanoseconds(CLOCK_PROCESS_CPUTIME_ID);
  answers_.fetch_sub(answers, std::memory_order_relaxed);
  const int64_t solve = solve_ns_.exchange(0, std::memory_order_relaxed);
  // Everything this process spent beside the solves, per answer: conservative where other
  // calls ran in the window too.
  const double overhead = 1e-9 * static_cast<double>(now - process_ns_at_window_ - solve) /
                          static_cast<double>(answers);
  process_ns_at_window_ = now;
  overhead_.store(std::max(0.0, overhead), std::memory_order_relaxed);
}

double TrackAdmission::DemandLocked() const {
  const double o = overhead_per_answer();
  double demand = 0.0;
  for (const auto& entry : streams_) {
    demand += (entry->solve.load(std::memory_order_relaxed) + o) / entry->period;
  }
  return demand;
}

absl::StatusOr<std::unique_ptr<TrackAdmission::Ticket>> TrackAdmission::Admit(
    double period, double solve_seconds) {
  auto entry = std::make_shared<Ticket::Entry>(period, solve_seconds);
  absl::MutexLock lock(&mutex_);
  const double budget = utilisation_ * cpus_;
  const double o = overhead_per_answer();
  const double mine = (solve_seconds + o) / period;
  const double demand = DemandLocked();
  if (utilisation_ > 0.0 && !streams_.empty() && demand + mine > budget) {
    const int capacity = static_cast<int>(std::floor(budget / mine));
    return QuotaExceeded(
        "Track streams",
        absl::StrFormat("capacity %d streams at %.4g Hz on this host (%.1f us of solve + %.1f us "
                        "per answer; %.4g of %g CPUs at --track_utilisation=%g); the %d admitted "
                        "streams demand %.3g CPUs: retry later or elsewhere",
                        capacity, 1.0 / period, 1e6 * solve_seconds, 1e6 * o, budget, cpus_,
                        utilisation_, static_cast<int>(streams_.size()), demand));
  }
  streams_.push_back(entry);
  return std::unique_ptr<Ticket>(new Ticket(this, std::move(entry)));
}

void TrackAdmission::Release(const std::shared_ptr<Ticket::Entry>& entry) {
  absl::MutexLock lock(&mutex_);
  streams_.erase(std::remove(streams_.begin(), streams_.end(), entry), streams_.end());
}

int TrackAdmission::admitted() const {
  absl::MutexLock lock(&mutex_);
  return static_cast<int>(streams_.size());
}

double TrackAdmission::demand() const {
  absl::MutexLock lock(&mutex_);
  return DemandLocked();
}

}  // namespace ikd::server
