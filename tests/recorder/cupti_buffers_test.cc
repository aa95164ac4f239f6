// CuptiBuffers' lending: what CUPTI was lent and never handed back comes
// back to the pool after a finalize, so that detaches do not drain it.
#include "cupti_buffers.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace gpucap::recorder {
namespace {

uint8_t* Request(CuptiBuffers& buffers) {
  uint8_t* b = nullptr;
  size_t size = 0, max_records = 0;
  buffers.OnRequested(&b, &size, &max_records);
  return b;
}

TEST(CuptiBuffers, BuffersCuptiKeptAtAFinalizeGoBackToThePool) {
  RecorderPhase phase;
  phase.store(RecorderPhase::kRecording);
  // No writer is reached: empty completions go straight back to the pool.
  CuptiBuffers buffers(3, 1 << 16, nullptr, &phase, nullptr, [] {});
  uint8_t* returned = Request(buffers);
  uint8_t* kept1 = Request(buffers);
  uint8_t* kept2 = Request(buffers);
  ASSERT_NE(returned, nullptr);
  ASSERT_NE(kept2, nullptr);
  EXPECT_EQ(Request(buffers), nullptr) << "three buffers lent: the pool is empty";
  buffers.OnCompleted(0, 0, returned, 1 << 16, 0, 0);
  EXPECT_EQ(buffers.pool()->outstanding(), 2u);
  kept1[10] = 0x7f;  // CUPTI wrote records it never handed back

  std::vector<uint8_t*> dropped = buffers.TakeLent();
  EXPECT_EQ(dropped.size(), 2u) << "the two CUPTI never handed back";
  EXPECT_TRUE((dropped[0] == kept1 && dropped[1] == kept2) || (dropped[0] == kept2 && dropped[1] == kept1));
  EXPECT_TRUE(buffers.TakeLent().empty()) << "taken once: no longer counted as lent";
  EXPECT_EQ(buffers.pool()->outstanding(), 2u) << "not in the pool until given back";
  buffers.GiveBack(dropped);
  EXPECT_EQ(buffers.pool()->outstanding(), 0u);
  EXPECT_EQ(buffers.reclaimed(), 2u);
  std::vector<uint8_t*> again = {Request(buffers), Request(buffers), Request(buffers)};
  for (uint8_t* b : again) {
    ASSERT_NE(b, nullptr) << "every buffer can be lent again";
    EXPECT_EQ(b[10], 0) << "and comes zeroed";
  }
}

// A buffer lent after the finalize's take (a range that attached again as
// soon as the gate opened) is not among those given back.
TEST(CuptiBuffers, ABufferLentAfterTheTakeStaysLent) {
  RecorderPhase phase;
  phase.store(RecorderPhase::kRecording);
  CuptiBuffers buffers(3, 1 << 16, nullptr, &phase, nullptr, [] {});
  uint8_t* before = Request(buffers);
  std::vector<uint8_t*> dropped = buffers.TakeLent();
  uint8_t* after = Request(buffers);
  ASSERT_NE(after, nullptr);
  buffers.GiveBack(dropped);
  ASSERT_EQ(dropped, std::vector<uint8_t*>{before});
  EXPECT_EQ(buffers.pool()->outstanding(), 1u) << "the new session's buffer is still out";
  EXPECT_EQ(buffers.TakeLent(), std::vector<uint8_t*>{after});
}

// A buffer taken back at a finalize that CUPTI completes after all is not
// given to the pool a second time: two lends of one buffer would have two
// writers in it.
TEST(CuptiBuffers, ACompletionOfABufferTakenBackIsNotGivenTwice) {
  RecorderPhase phase;
  phase.store(RecorderPhase::kRecording);
  CuptiBuffers buffers(2, 1 << 16, nullptr, &phase, nullptr, [] {});
  uint8_t* kept = Request(buffers);
  buffers.GiveBack(buffers.TakeLent());
  EXPECT_EQ(buffers.pool()->outstanding(), 0u);
  buffers.OnCompleted(0, 0, kept, 1 << 16, 0, 0);  // CUPTI hands it back late
  EXPECT_EQ(buffers.completed_unlent(), 1u);
  uint8_t* a = Request(buffers);
  uint8_t* b = Request(buffers);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  EXPECT_EQ(Request(buffers), nullptr) << "two buffers, each lent once";
}

}  // namespace
}  // namespace gpucap::recorder
