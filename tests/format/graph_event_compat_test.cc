// GraphEvent's capture-stream fields (issue 17, logical lanes) were added
// after captures were recorded without them: a message an older writer made
// must read as "no capture stream", not as stream 0, which is a real
// stream id (the NULL stream's) in CUPTI's records.
#include <gtest/gtest.h>

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <vector>

#include "message_codec.h"

namespace gpucap::format {
namespace {

// Decoded from the bytes, as the file reader decodes a frame.
std::vector<SmallMessage> ThroughTheWire(capnp::MallocMessageBuilder& m) {
  kj::Array<capnp::word> words = capnp::messageToFlatArray(m);
  capnp::FlatArrayMessageReader reader(words);
  std::vector<SmallMessage> out;
  DecodeBatch(FrameType::kGraphs, &reader, &out);
  return out;
}

// What a writer without the new fields puts on the wire: only the old ones.
std::vector<SmallMessage> DecodeOldNodeCreated() {
  capnp::MallocMessageBuilder m;
  auto events = m.initRoot<schema::Graphs>().initEvents(1);
  auto e = events[0];
  e.setKind(schema::GraphEventKind::NODE_CREATED);
  e.setGraphId(3);
  e.setNodeId(11);
  e.setOsTid(4242);
  e.setTimestampNs(1000);
  return ThroughTheWire(m);
}

TEST(GraphEventCompat, AnOldNodeCreatedReadsAsNoCaptureStream) {
  std::vector<SmallMessage> out = DecodeOldNodeCreated();
  ASSERT_EQ(out.size(), 1u);
  const GraphEvent& g = std::get<GraphEvent>(out[0]);
  EXPECT_EQ(g.kind, GraphEventKind::kNodeCreated);
  EXPECT_EQ(g.node_id, 11u);
  EXPECT_EQ(g.capture_stream, kNoCaptureStream);
  EXPECT_EQ(g.capture_stream_handle, 0u);
  EXPECT_EQ(g.api_correlation_id, 0u);
}

TEST(GraphEventCompat, StreamZeroIsKeptApartFromNone) {
  GraphEvent g;
  g.kind = GraphEventKind::kNodeCreated;
  g.capture_stream = 0;  // the NULL stream: a stream, not "none"
  g.capture_stream_handle = 0;
  capnp::MallocMessageBuilder m;
  EncodeBatch(FrameType::kGraphs, {SmallMessage{g}}, &m);
  std::vector<SmallMessage> out = ThroughTheWire(m);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(std::get<GraphEvent>(out[0]).capture_stream, 0u);
  g.kind = GraphEventKind::kCaptureBegan;
  g.capture_stream = 13;
  g.capture_id = 5;
  g.capture_mode = 2;
  capnp::MallocMessageBuilder m2;
  EncodeBatch(FrameType::kGraphs, {SmallMessage{g}}, &m2);
  out = ThroughTheWire(m2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(std::get<GraphEvent>(out[0]), g);
}

}  // namespace
}  // namespace gpucap::format
