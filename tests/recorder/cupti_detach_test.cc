// The detach sequence (cupti_detach.h) over the real entry gate: the
// finalize runs only with the gate closed and nobody else in flight, gives
// up (and retries, a bounded number of times per pause) while a call stays
// in flight, never runs without a gate that something went through, and
// records each hold. CUPTI's other switches (Switch) likewise.
#include "cupti_detach.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <thread>

#include "code_ranges.h"
#include "entry_gate.h"

namespace gpucap::recorder {
namespace {

using gate::EntryGate;
using namespace std::chrono_literals;

std::atomic<uint64_t> g_stubs{1};
std::atomic<uint64_t> g_tables_unwrapped{0};

// The C interface over the test process's gate, as libgpucap_gate.so
// exports it.
const GpucapEntryGateV1 kGate = {
    sizeof(GpucapEntryGateV1),
    [](uint64_t bound_ns, uint32_t* in_flight, uint64_t* waited_ns) {
      gate::CloseResult r = EntryGate::Process().Close(std::chrono::nanoseconds(bound_ns));
      *in_flight = r.in_flight;
      *waited_ns = r.waited_ns;
      return r.closed ? 1 : 0;
    },
    [] { EntryGate::Process().Open(); },
    [](const void* b, const void* e) { EntryGate::Process().AddExemptRange(b, e); },
    [] { return g_stubs.load(); },
    [] { return EntryGate::Process().held(); },
    [] { return EntryGate::Process().depth(); },
    [](const void*) { return 0; },
    [](uint64_t* tables, uint64_t* entries, uint64_t* refused) {
      if (tables) *tables = 1;
      if (entries) *entries = 5;
      if (refused) *refused = g_tables_unwrapped.load();
    },
    [](GpucapGateCall* out, size_t max) { return EntryGate::Process().CallsInFlight(out, max); },
    [] { return EntryGate::Process().Open(); },
};

// Another thread inside a wrapped call until destroyed.
class CallInFlight {
 public:
  CallInFlight()
      : thread_([this] {
          EntryGate::Process().Enter();
          inside_.store(true);
          while (!release_.load()) std::this_thread::yield();
          EntryGate::Process().Leave();
        }) {
    while (!inside_.load()) std::this_thread::yield();
  }
  ~CallInFlight() {
    release_.store(true);
    thread_.join();
  }

 private:
  std::atomic<bool> inside_{false}, release_{false};
  std::thread thread_;
};

std::map<std::string, uint64_t> StatsOf(const CuptiDetach& d) {
  std::vector<std::pair<std::string, uint64_t>> v;
  d.Stats(&v);
  return {v.begin(), v.end()};
}

TEST(CuptiDetach, FinalizesOnlyWithTheGateClosedAndOpensItAfter) {
  CuptiDetach d(&kGate, 60s);
  int calls = 0;
  bool closed_inside = false;
  auto outcome = d.Run([&] {
    ++calls;
    closed_inside = EntryGate::Process().closed();
    return CuptiDetach::Finalized::kYes;
  });
  EXPECT_EQ(outcome, CuptiDetach::Outcome::kDetached);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(closed_inside);
  EXPECT_FALSE(EntryGate::Process().closed());
  EXPECT_FALSE(d.RetryDue());
  auto s = StatsOf(d);
  EXPECT_EQ(s["cupti_detaches"], 1u);
  EXPECT_GT(s["cupti_detach_hold_ns_max"], 0u);
  EXPECT_EQ(s["cupti_detach_hold_ns_p50"], s["cupti_detach_hold_ns_max"]) << "one sample";
}

// The stall is what the program felt: a call in flight when the gate
// closed is waited for but not held (it is in its own synchronize), a call
// arriving while the finalize runs is held until the gate opens.
TEST(CuptiDetach, TheStallCountsTheCallsHeldNotTheWaitForCallsInFlight) {
  {
    std::atomic<bool> leave{false};
    std::thread in_sync([&] {
      EntryGate::Process().Enter();
      while (!leave.load() || !EntryGate::Process().closed()) std::this_thread::yield();
      std::this_thread::sleep_for(30ms);  // still inside, the gate closed: the synchronize ends later
      EntryGate::Process().Leave();
    });
    while (EntryGate::Process().CallsInFlight(nullptr, 0) == 0) std::this_thread::yield();
    CuptiDetach d(&kGate, 5s);
    leave.store(true);
    EXPECT_EQ(d.Run([] { return CuptiDetach::Finalized::kYes; }), CuptiDetach::Outcome::kDetached);
    in_sync.join();
    auto s = StatsOf(d);
    EXPECT_GE(s["cupti_detach_hold_ns_max"], 30'000'000u) << "the gate waited for the call in flight";
    EXPECT_EQ(s["cupti_detach_stall_ns_max"], 0u) << "nothing was held";
  }
  {
    CuptiDetach d(&kGate, 5s);
    std::thread late;
    std::atomic<bool> through{false};
    uint64_t held_before = EntryGate::Process().held();
    EXPECT_EQ(d.Run([&] {
      late = std::thread([&] {
        EntryGate::Process().Enter();  // held: the gate is closed
        through.store(true);
        EntryGate::Process().Leave();
      });
      while (EntryGate::Process().held() == held_before) std::this_thread::yield();
      std::this_thread::sleep_for(20ms);  // the finalize's work
      EXPECT_FALSE(through.load());
      return CuptiDetach::Finalized::kYes;
    }),
              CuptiDetach::Outcome::kDetached);
    if (late.joinable()) late.join();
    auto s = StatsOf(d);
    EXPECT_GE(s["cupti_detach_stall_ns_max"], 20'000'000u);
    EXPECT_LE(s["cupti_detach_stall_ns_max"], s["cupti_detach_hold_ns_max"]);
  }
}

TEST(CuptiDetach, NeverFinalizesWithoutAGateOrOneNothingWentThrough) {
  int calls = 0;
  auto finalize = [&] {
    ++calls;
    return CuptiDetach::Finalized::kYes;
  };
  CuptiDetach none(nullptr, 60s);
  EXPECT_EQ(none.Run(finalize), CuptiDetach::Outcome::kNoGate);
  g_stubs.store(0);
  CuptiDetach unused(&kGate, 60s);
  EXPECT_EQ(unused.Run(finalize), CuptiDetach::Outcome::kNoGate);
  g_stubs.store(1);
  // libcudart got the runtime-callback hooks table unwrapped: a thread can
  // be inside CUPTI without the gate knowing.
  g_tables_unwrapped.store(1);
  CuptiDetach unwrapped(&kGate, 60s);
  EXPECT_EQ(unwrapped.Run(finalize), CuptiDetach::Outcome::kNoGate);
  g_tables_unwrapped.store(0);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(StatsOf(unused)["cupti_detach_without_gate"], 1u);
  EXPECT_FALSE(unused.RetryDue()) << "no gate now, no gate at the next tick";
}

TEST(CuptiDetach, GivesUpWhileACallStaysInFlightAndTriesAgainLater) {
  auto blocked = std::make_unique<CallInFlight>();  // a thread in cudaStreamSynchronize
  CuptiDetach d(&kGate, 1ms);
  int calls = 0;
  auto finalize = [&] {
    ++calls;
    return CuptiDetach::Finalized::kYes;
  };
  d.NewPause();
  EXPECT_EQ(d.Run(finalize), CuptiDetach::Outcome::kGaveUp);
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(EntryGate::Process().closed()) << "others are not held past the bound";
  EXPECT_TRUE(d.RetryDue());
  blocked.reset();  // the call returns
  EXPECT_EQ(d.Run(finalize), CuptiDetach::Outcome::kDetached);
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(d.RetryDue());
  auto s = StatsOf(d);
  EXPECT_EQ(s["cupti_detach_give_ups"], 1u);
  EXPECT_EQ(s["cupti_detaches"], 1u);
}

TEST(CuptiDetach, RetriesAreBoundedPerPauseAndAFailureIsNotRetried) {
  CuptiDetach d(&kGate, 60s);
  d.NewPause();
  for (int i = 0; i < CuptiDetach::kMaxAttempts; ++i) {
    ASSERT_TRUE(i == 0 || d.RetryDue()) << "attempt " << i;
    EXPECT_EQ(d.Run([] { return CuptiDetach::Finalized::kBusy; }), CuptiDetach::Outcome::kBusy);
  }
  EXPECT_FALSE(d.RetryDue()) << "the pause's attempts are spent";
  d.NewPause();
  EXPECT_EQ(d.Run([] { return CuptiDetach::Finalized::kError; }), CuptiDetach::Outcome::kFailed);
  EXPECT_FALSE(d.RetryDue());
  EXPECT_EQ(StatsOf(d)["cupti_detach_busy"], static_cast<uint64_t>(CuptiDetach::kMaxAttempts));
  EXPECT_EQ(StatsOf(d)["cupti_detach_failures"], 1u);
}

TEST(CuptiDetach, ASwitchRunsWithEveryOtherThreadHeldOutOfCuda) {
  std::atomic<bool> stop{false}, inside{false};
  std::atomic<uint64_t> calls{0};
  std::thread launcher([&] {  // a thread launching kernels in a loop
    while (!stop.load()) {
      EntryGate::Process().Enter();
      inside.store(true);
      calls.fetch_add(1);
      inside.store(false);
      EntryGate::Process().Leave();
    }
  });
  while (calls.load() < 100) std::this_thread::yield();
  CuptiDetach d(&kGate, 60s);
  uint64_t during_first = 0, during_last = 0;
  bool seen_inside = false;
  int made = 0;
  EXPECT_EQ(d.Switch([&] {
    ++made;
    EXPECT_TRUE(EntryGate::Process().closed());
    during_first = calls.load();
    for (int i = 0; i < 200; ++i) {
      seen_inside |= inside.load();
      std::this_thread::sleep_for(50us);
    }
    during_last = calls.load();
    EntryGate::Process().Enter();  // the switching thread's own calls pass
    EntryGate::Process().Leave();
  }), CuptiDetach::Switched::kMade);
  EXPECT_EQ(made, 1);
  EXPECT_FALSE(seen_inside) << "no other thread was inside a call during the switch";
  EXPECT_EQ(during_first, during_last) << "no other thread made a call during the switch";
  EXPECT_FALSE(EntryGate::Process().closed());
  while (calls.load() < during_last + 100) std::this_thread::yield();  // and they go on after it
  stop.store(true);
  launcher.join();
  auto s = StatsOf(d);
  EXPECT_EQ(s["cupti_switches_gated"], 1u);
  EXPECT_GE(s["cupti_switch_hold_ns_max"], 10'000'000u) << "the hold covers the change (200 sleeps of 50 us)";
  EXPECT_EQ(s["cupti_detaches"], 0u) << "a switch is not a detach";
}

TEST(CuptiDetach, ASwitchIsNotMadeWhileACallStaysInFlightOrWithoutAGate) {
  auto blocked = std::make_unique<CallInFlight>();  // a thread in cudaStreamSynchronize
  CuptiDetach d(&kGate, 1ms);
  int made = 0;
  EXPECT_EQ(d.Switch([&] { ++made; }), CuptiDetach::Switched::kGaveUp);
  EXPECT_EQ(made, 0);
  EXPECT_FALSE(EntryGate::Process().closed()) << "others are not held past the bound";
  blocked.reset();  // the call returns
  EXPECT_EQ(d.Switch([&] { ++made; }), CuptiDetach::Switched::kMade);
  EXPECT_EQ(made, 1);
  auto s = StatsOf(d);
  EXPECT_EQ(s["cupti_switch_give_ups"], 1u);
  EXPECT_EQ(s["cupti_switches_gated"], 1u);
  EXPECT_EQ(s["cupti_detach_give_ups"], 0u) << "a switch's give-up is not a detach's";

  CuptiDetach none(nullptr, 60s);
  EXPECT_EQ(none.Switch([&] { ++made; }), CuptiDetach::Switched::kNoGate);
  g_stubs.store(0);
  CuptiDetach unused(&kGate, 60s);
  EXPECT_EQ(unused.Switch([&] { ++made; }), CuptiDetach::Switched::kNoGate)
      << "a gate nothing went through cannot vouch: the caller switches as without a detach";
  g_stubs.store(1);
  EXPECT_EQ(made, 1);
}

TEST(CuptiDetach, AnAttemptGivenUpBeforeItRanIsRetriedAsAGiveUp) {
  CuptiDetach d(&kGate, 60s);
  d.NewPause();
  EXPECT_FALSE(d.RetryDue());
  d.CountGiveUp();  // the flush before it did not get the gate
  EXPECT_TRUE(d.RetryDue());
  EXPECT_EQ(StatsOf(d)["cupti_detach_give_ups"], 1u);
  for (int i = 1; i < CuptiDetach::kMaxAttempts; ++i) d.CountGiveUp();
  EXPECT_FALSE(d.RetryDue()) << "bounded per pause like any attempt";
}

TEST(CuptiDetach, QuantilesByNearestRank) {
  std::vector<uint64_t> v;
  for (uint64_t i = 100; i >= 1; --i) v.push_back(i);
  EXPECT_EQ(CuptiDetach::Quantile(v, 0.5), 50u);
  EXPECT_EQ(CuptiDetach::Quantile(v, 0.99), 99u);
  EXPECT_EQ(CuptiDetach::Quantile(v, 1.0), 100u);
  EXPECT_EQ(CuptiDetach::Quantile({7}, 0.99), 7u);
  EXPECT_EQ(CuptiDetach::Quantile({}, 0.5), 0u);
}

TEST(CuptiDetach, CodeRangesOfALibraryHoldItsFunctions) {
  auto ranges = CodeRangesOf(reinterpret_cast<const void*>(&printf));
  ASSERT_FALSE(ranges.empty());
  auto pc = reinterpret_cast<uintptr_t>(&printf);
  bool inside = false;
  for (const auto& [b, e] : ranges) {
    inside |= pc >= reinterpret_cast<uintptr_t>(b) && pc < reinterpret_cast<uintptr_t>(e);
  }
  EXPECT_TRUE(inside);
  auto here = reinterpret_cast<uintptr_t>(&StatsOf);
  for (const auto& [b, e] : ranges) {
    EXPECT_FALSE(here >= reinterpret_cast<uintptr_t>(b) && here < reinterpret_cast<uintptr_t>(e))
        << "the test's own code is not libc's";
  }
}

}  // namespace
}  // namespace gpucap::recorder
