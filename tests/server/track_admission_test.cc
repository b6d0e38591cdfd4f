// Track's admission ledger (server/track_admission.h) by hand: demand (solve + overhead) /
// period against utilisation x CPUs, worked out in each test's comment.
#include "track_admission.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

namespace ikd::server {
namespace {

using ::testing::HasSubstr;

constexpr double kOverhead = TrackAdmission::kAssumedOverhead;  // 100 us until measured

// Budget 0.5 x 2 = 1 CPU. A stream of 1 kHz solving in 300 us demands (300 + 100) us / 1 ms =
// 0.4 CPU: two fit (0.8), a third would make 1.2 and is refused, saying two such streams fit;
// once one leaves, the third is admitted.
TEST(TrackAdmissionTest, AStreamPastTheBudgetIsRefusedWithTheCapacity) {
  TrackAdmission admission({.utilisation = 0.5, .cpus = 2});
  auto a = admission.Admit(1e-3, 300e-6);
  auto b = admission.Admit(1e-3, 300e-6);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NEAR(admission.demand(), 0.8, 1e-12);
  auto c = admission.Admit(1e-3, 300e-6);
  ASSERT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(c.status().message(), HasSubstr("capacity 2 streams at 1000 Hz on this host"));
  EXPECT_THAT(c.status().message(), HasSubstr("--track_utilisation=0.5"));
  EXPECT_EQ(admission.admitted(), 2);
  a->reset();
  EXPECT_EQ(admission.admitted(), 1);
  EXPECT_NEAR(admission.demand(), 0.4, 1e-12);
  EXPECT_TRUE(admission.Admit(1e-3, 300e-6).ok());
}

// A lone stream is admitted whatever it demands (here 1000 CPUs of 1): refusing it would
// protect no one. A second, however cheap, is then refused.
TEST(TrackAdmissionTest, ALoneStreamIsAlwaysAdmitted) {
  TrackAdmission admission({.utilisation = 0.6, .cpus = 1});
  auto lone = admission.Admit(1e-6, 1e-3);
  ASSERT_TRUE(lone.ok());
  EXPECT_GT(admission.demand(), 1000.0);
  EXPECT_EQ(admission.Admit(1.0, 0.0).status().code(), absl::StatusCode::kResourceExhausted);
}

// Utilisation 0: no admission control; every stream is admitted and still counted.
TEST(TrackAdmissionTest, ZeroUtilisationAdmitsEveryStream) {
  TrackAdmission admission({.utilisation = 0.0, .cpus = 1});
  EXPECT_FALSE(admission.enabled());
  std::vector<std::unique_ptr<TrackAdmission::Ticket>> tickets;
  for (int k = 0; k < 10; ++k) {
    auto ticket = admission.Admit(1e-6, 1e-3);
    ASSERT_TRUE(ticket.ok());
    tickets.push_back(*std::move(ticket));
  }
  EXPECT_EQ(admission.admitted(), 10);
}

// A stream admitted at a measured 0 s of solve that then solves in 1 ms: after 200 answers its
// smoothed cost is 1 ms within 0.95^200 (about 4e-5 of it), so it demands (1 ms + 100 us) /
// 10 ms = 0.11 CPU, and a stream that fitted beside it before no longer does.
TEST(TrackAdmissionTest, AStreamsDemandFollowsItsAnswers) {
  TrackAdmission admission({.utilisation = 0.5, .cpus = 1});
  auto ticket = admission.Admit(10e-3, 0.0);
  ASSERT_TRUE(ticket.ok());
  EXPECT_NEAR(admission.demand(), kOverhead / 10e-3, 1e-12);
  for (int k = 0; k < 200; ++k) (*ticket)->Answered(1e-3);
  EXPECT_NEAR(admission.demand(), (1e-3 + kOverhead) / 10e-3, 1e-5);
  // Beside it 0.11 + (3 ms + 0.1 ms) / 10 ms = 0.42 fits (a ticket that leaves at once);
  // 0.11 + 0.41 = 0.52 with 4 ms of solve does not.
  EXPECT_TRUE(admission.Admit(10e-3, 3e-3).ok());
  EXPECT_EQ(admission.Admit(10e-3, 4e-3).status().code(), absl::StatusCode::kResourceExhausted);
}

// The overhead is what the process spends beside the solves, per answer: this thread burns
// about 20 us of CPU beside each of a window's answers (reported with 0 s of solve), so the
// measured overhead is at least that (the test's own thread CPU clock) and not far above it.
TEST(TrackAdmissionTest, TheOverheadPerAnswerIsMeasuredFromTheProcessCpu) {
  TrackAdmission admission({.utilisation = 0.5, .cpus = 1});
  auto ticket = admission.Admit(1e-3, 0.0);
  ASSERT_TRUE(ticket.ok());
  const double start = ThreadCpuSeconds();
  volatile double sink = 0.0;
  for (int64_t k = 0; k < TrackAdmission::kOverheadWindow; ++k) {
    const double until = ThreadCpuSeconds() + 20e-6;
    while (ThreadCpuSeconds() < until) sink = sink + std::sqrt(static_cast<double>(k));
    (*ticket)->Answered(0.0);
  }
  const double burnt = (ThreadCpuSeconds() - start) / TrackAdmission::kOverheadWindow;
  EXPECT_NE(admission.overhead_per_answer(), kOverhead);
  EXPECT_GE(admission.overhead_per_answer(), 0.9 * burnt);
  EXPECT_LE(admission.overhead_per_answer(), 3.0 * burnt + 50e-6);
}

// Out-of-range options name the flag.
TEST(TrackAdmissionTest, OptionsOutOfRangeNameTheFlag) {
  for (const double utilisation : {-0.1, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    const absl::Status s = TrackAdmissionOptions{.utilisation = utilisation}.Validate();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("track_utilisation must be in [0, 1]"));
  }
  const absl::Status s = TrackAdmissionOptions{.cpus = -1}.Validate();
  EXPECT_THAT(s.message(), HasSubstr("track_cpus must be >= 0"));
  EXPECT_TRUE(TrackAdmissionOptions{}.Validate().ok());
}

}  // namespace
}  // namespace ikd::server
