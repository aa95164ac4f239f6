// The union of the callback ids the recorder's parts want: CUPTI sees an id
// switched only when its first owner comes or its last goes, and a new
// subscriber gets every wanted id.
#include "callback_switch.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <vector>

namespace gpucap::recorder {
namespace {

std::vector<std::tuple<uint32_t, void*, uint32_t, uint32_t>> g_calls;

int Record(uint32_t enable, void* subscriber, uint32_t domain, uint32_t cbid) {
  g_calls.emplace_back(enable, subscriber, domain, cbid);
  return 0;
}

// The state CUPTI would be in after the calls so far, per subscriber.
std::map<std::pair<uint32_t, uint32_t>, bool> OnFor(void* subscriber) {
  std::map<std::pair<uint32_t, uint32_t>, bool> on;
  for (auto& [enable, sub, domain, cbid] : g_calls) {
    if (sub == subscriber) on[{domain, cbid}] = enable != 0;
  }
  return on;
}

int a = 0, b = 0;

TEST(CallbackSwitch, AnIdStaysOnWhileAnyOwnerWantsIt) {
  g_calls.clear();
  CallbackSwitch s(Record);
  s.Attach(&a);
  s.Want(CallbackSwitch::kApiRecords, 1, 211, true);
  s.Want(CallbackSwitch::kCaptureStreamOps, 1, 211, true);  // already on: no call
  EXPECT_EQ(g_calls.size(), 1u);
  s.Want(CallbackSwitch::kCaptureStreamOps, 1, 211, false);  // a capture ends
  EXPECT_TRUE((OnFor(&a)[{1, 211}]));
  s.Want(CallbackSwitch::kApiRecords, 1, 211, true);  // idempotent
  s.Want(CallbackSwitch::kApiRecords, 1, 211, false);
  EXPECT_FALSE((OnFor(&a)[{1, 211}]));
  EXPECT_EQ(g_calls.size(), 2u);
  EXPECT_EQ(s.calls(), 2u);
}

TEST(CallbackSwitch, DomainsAreApart) {
  g_calls.clear();
  CallbackSwitch s(Record);
  s.Attach(&a);
  s.Want(CallbackSwitch::kGate, 1, 7, true);
  s.Want(CallbackSwitch::kGate, 2, 7, true);
  s.Want(CallbackSwitch::kGate, 1, 7, false);
  auto on = OnFor(&a);
  EXPECT_FALSE((on[{1, 7}]));
  EXPECT_TRUE((on[{2, 7}]));
}

TEST(CallbackSwitch, WantsOutliveADetachAndComeBackOnTheNextSubscriber) {
  g_calls.clear();
  CallbackSwitch s(Record);
  s.Want(CallbackSwitch::kCaptureBoundaries, 1, 100, true);  // before any subscriber
  EXPECT_TRUE(g_calls.empty());
  s.Attach(&a);
  EXPECT_TRUE((OnFor(&a)[{1, 100}]));
  s.Detach();  // cuptiFinalize
  s.Want(CallbackSwitch::kApiRecords, 2, 50, true);
  s.Want(CallbackSwitch::kCaptureBoundaries, 1, 100, true);  // wanted again on attach: no-op
  EXPECT_EQ(OnFor(&a).size(), 1u);  // nothing called on the old subscriber
  s.Attach(&b);
  auto on = OnFor(&b);
  EXPECT_TRUE((on[{1, 100}]));
  EXPECT_TRUE((on[{2, 50}]));
  EXPECT_EQ(on.size(), 2u);
}

}  // namespace
}  // namespace gpucap::recorder
