#include "gpucap/format/recording_state.h"

#include <gtest/gtest.h>

namespace gpucap::format {
namespace {

MetadataBlob Change(RecordingState s, uint64_t ts, const std::string& why) {
  return RecordingChangeBlob(RecordingChange{s, why, ts, 1});
}

TEST(RecordingState, BlobsRoundTripAndOthersAreNotChanges) {
  MetadataBlob b = Change(RecordingState::kSampled, 5, "range 'step#99'\t1 in 100");
  EXPECT_EQ(b.key_kind, MetadataKey::kGlobal);
  EXPECT_EQ(b.name, kRecordingStateBlob);
  auto c = ParseRecordingChange(b);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->state, RecordingState::kSampled);
  EXPECT_EQ(c->why, "range 'step#99' 1 in 100") << "a tab in the reason cannot split the blob";
  EXPECT_EQ(c->timestamp_ns, 5u);
  MetadataBlob other = b;
  other.name = "user.blob";
  EXPECT_FALSE(ParseRecordingChange(other));
  MetadataBlob unknown = b;
  unknown.data = "dozing\twhy";
  EXPECT_FALSE(ParseRecordingChange(unknown));
}

TEST(RecordingState, IntervalsAreSortedAndTheLastEndsAtTheCapturesEnd) {
  std::vector<MetadataBlob> m = {
      Change(RecordingState::kPaused, 10, "waiting"),
      Change(RecordingState::kPaused, 50, "range 'step#1' ended"),  // batched late by its thread
      Change(RecordingState::kSampled, 40, "range 'step#1'"),
  };
  m.push_back(MetadataBlob{});  // not a change
  auto iv = RecordingIntervals(m, 100);
  ASSERT_EQ(iv.size(), 3u);
  EXPECT_EQ(iv[0].state, RecordingState::kPaused);
  EXPECT_EQ(iv[0].start_ns, 10u);
  EXPECT_EQ(iv[0].end_ns, 40u);
  EXPECT_EQ(iv[1].state, RecordingState::kSampled);
  EXPECT_EQ(iv[1].why, "range 'step#1'");
  EXPECT_EQ(iv[1].end_ns, 50u);
  EXPECT_EQ(iv[2].end_ns, 100u);
  EXPECT_TRUE(RecordingIntervals({}, 100).empty());
}

}  // namespace
}  // namespace gpucap::format
