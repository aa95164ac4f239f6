// CuptiBuffers' lending: what CUPTI was lent and never handed back comes
// back to the pool after a finalize, so that detaches do not drain it; the
// correlation ids of a buffer take the shift of the CUPTI session it was lent
// in; buffers the recorder filled itself are written, not taken for CUPTI's.
#include "cupti_buffers.h"

#include <cupti.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "api_record.h"
#include "discard_sink.h"
#include "first_seen.h"

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

struct Writing {
  RecorderPhase phase;
  FirstSeen seen;
  CorrelationShift shift;
  std::unique_ptr<format::CaptureWriter> writer;
  std::unique_ptr<CuptiBuffers> buffers;
  Writing() {
    phase.store(RecorderPhase::kRecording);
    writer = format::CaptureWriter::Start(std::make_unique<DiscardSink>(), format::WriterOptions{}).value();
    buffers = std::make_unique<CuptiBuffers>(4, 1 << 16, writer.get(), &phase, &seen, [] {}, &shift);
  }
  ~Writing() { EXPECT_TRUE(writer->Close(format::Trailer{}, std::chrono::seconds(10)).ok()); }
};

// CUPTI numbers calls from the start again after a finalize: a buffer lent
// in the second session holds ids shifted past the first session's, and one
// lent in the first keeps the first's even when it completes later.
TEST(CuptiBuffers, ABuffersIdsTakeTheShiftOfTheSessionItWasLentIn) {
  Writing w;
  uint8_t* first = Request(*w.buffers);
  uint8_t* first_late = Request(*w.buffers);
  size_t n = PutApiRecord(first, 40);
  w.buffers->OnCompleted(0, 0, first, 1 << 16, n, 0);
  EXPECT_EQ(w.shift.shift(), 0u) << "the first session's ids are CUPTI's own";

  w.shift.NextSession();  // an attach after a finalize
  EXPECT_EQ(w.shift.shift(), 41u);
  uint8_t* second = Request(*w.buffers);
  n = PutApiRecord(second, 22);
  // Walked in place before it is written: the writer sees the shifted id.
  w.buffers->OnCompleted(0, 0, second, 1 << 16, n, 0);
  n = PutApiRecord(first_late, 30);
  w.buffers->OnCompleted(0, 0, first_late, 1 << 16, n, 0);
  EXPECT_EQ(w.buffers->correlation_overlaps(), 0u) << "its 30 is below the second session's ids";

  w.shift.NextSession();
  EXPECT_EQ(w.shift.shift(), 22u + 41u + 1u)
      << "the second session's highest id was 22 + 41; the late first-session buffer's 30 stayed 30";
}

// A buffer of an earlier session walked after the shift moved on, with ids
// the new session may repeat (the reclaim off leaves such buffers lent): it
// cannot be mended afterwards, so it is counted.
TEST(CuptiBuffers, ALateBufferWhoseIdsReachTheNewShiftIsCounted) {
  Writing w;
  uint8_t* first = Request(*w.buffers);
  uint8_t* first_late = Request(*w.buffers);
  w.buffers->OnCompleted(0, 0, first, 1 << 16, PutApiRecord(first, 40), 0);
  w.shift.NextSession();
  ASSERT_EQ(w.shift.shift(), 41u);
  w.buffers->OnCompleted(0, 0, first_late, 1 << 16, PutApiRecord(first_late, 45), 0);
  EXPECT_EQ(w.buffers->correlation_overlaps(), 1u) << "45 is an id the second session gives its call 4";
}

// The recorder's own buffers (API records from callbacks, api_records.h)
// were never lent to CUPTI: they are written, their ids as they are, not
// counted as CUPTI completing a buffer it no longer had.
TEST(CuptiBuffers, ABufferTheRecorderFilledIsWrittenAsItIs) {
  Writing w;
  w.shift.NextSession();
  uint8_t* own = w.buffers->pool()->Take();
  ASSERT_NE(own, nullptr);
  size_t n = PutApiRecord(own, 500);  // shifted already, where it was made
  w.buffers->OnFilled(own, n);
  EXPECT_EQ(w.buffers->completed_unlent(), 0u);
  EXPECT_EQ(w.buffers->correlation_overlaps(), 0u)
      << "made with the shift of its moment: not a late buffer (40 a run counted so on an H100)";
  EXPECT_EQ(w.buffers->buffers_completed(), 1u);
  w.shift.NextSession();
  EXPECT_EQ(w.shift.shift(), 501u) << "its id seen as written, not shifted again";
}

TEST(CorrelationShift, EachSessionsIdsGoPastEveryIdSeen) {
  CorrelationShift shift;
  EXPECT_EQ(shift.shift(), 0u);
  EXPECT_EQ(shift.sessions(), 1u);
  EXPECT_EQ(CorrelationShift::Apply(0, 90), 0u) << "0 is CUPTI's 'no call'";
  shift.Saw(300);
  shift.Saw(120);  // out of order: the highest stands
  shift.NextSession();
  EXPECT_EQ(shift.shift(), 301u);
  EXPECT_EQ(CorrelationShift::Apply(22, shift.shift()), 323u);
  shift.NextSession();  // a session that wrote nothing
  EXPECT_EQ(shift.shift(), 301u) << "nothing of it to go past";
  EXPECT_EQ(shift.sessions(), 3u);
}

}  // namespace
}  // namespace gpucap::recorder
