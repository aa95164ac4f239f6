// Every message type written by the writer comes back equal from the reader,
// through the trailer index and through a linear scan.
#include <gtest/gtest.h>

#include "frame_codec.h"
#include "gpucap/format/capture.h"
#include "sample_capture.h"
#include "../support/temp_dir.h"

namespace gpucap::format {
namespace {

using testing::SampleContents;

void ExpectSameContents(const SampleContents& want, const Capture& got, bool check_chunks_bytes) {
  ASSERT_TRUE(got.session.has_value());
  SessionInfo session = want.session;
  session.format_major = kFormatMajor;
  session.format_minor = kFormatMinor;
  EXPECT_EQ(*got.session, session);
  EXPECT_EQ(got.devices, want.devices);
  EXPECT_EQ(got.threads, want.threads);
  EXPECT_EQ(got.streams, want.streams);
  EXPECT_EQ(got.clocks, want.clocks);
  EXPECT_EQ(got.ranges, want.ranges);
  EXPECT_EQ(got.graphs, want.graphs);
  EXPECT_EQ(got.windows, want.windows);
  EXPECT_EQ(got.metadata, want.metadata);
  EXPECT_EQ(got.counter_defs, want.counter_defs);
  EXPECT_EQ(got.counter_samples, want.counter_samples);
  ASSERT_FALSE(got.stats.empty());
  EXPECT_EQ(got.stats.back(), want.stats);
  ASSERT_EQ(got.strings.size(), want.strings.size());
  for (size_t i = 0; i < want.strings.size(); ++i) EXPECT_EQ(got.strings[i].def, want.strings[i]);
  ASSERT_EQ(got.chunks.size(), want.chunks.size());
  for (size_t i = 0; i < want.chunks.size(); ++i) {
    EXPECT_EQ(got.chunks[i].info, want.chunks[i].info);
    // A string defined before a chunk carries a smaller sequence number.
    EXPECT_LT(got.strings[i].sequence, got.chunks[i].sequence);
    if (!check_chunks_bytes) continue;
    std::vector<uint64_t> raw;
    ASSERT_TRUE(DecompressChunk(*got.file, got.chunks[i], &raw).ok());
    ASSERT_EQ(std::memcmp(raw.data(), want.chunks[i].bytes.data(), want.chunks[i].bytes.size()), 0);
  }
}

TEST(RoundTrip, EveryMessageTypeThroughTheTrailerIndex) {
  testing::TempDir dir;
  auto contents = testing::MakeSampleContents(6, 40000, 10);
  std::string path = dir.File("a.gpucap");
  ASSERT_TRUE(testing::WriteSample(path, contents).ok());
  auto capture = LoadCapture(path);
  ASSERT_TRUE(capture.ok()) << capture.status().ToString();
  ASSERT_TRUE(capture->trailer.has_value());
  EXPECT_TRUE(capture->report.has_trailer);
  EXPECT_TRUE(capture->report.clean());
  ExpectSameContents(contents, *capture, true);

  const Trailer& t = *capture->trailer;
  EXPECT_TRUE(t.clean_shutdown);
  EXPECT_EQ(t.end_cupti_ns, 2'000'000'000u);
  uint64_t records = 0;
  for (const auto& c : contents.chunks) records += c.info.record_count;
  EXPECT_EQ(t.activity_records, records);
  ASSERT_EQ(t.records_per_kind.size(), 1u);
  EXPECT_EQ(t.records_per_kind[0].kind, 10u);
  EXPECT_EQ(t.records_per_kind[0].count, records);
  EXPECT_EQ(t.stats.cupti_dropped_records, contents.stats.cupti_dropped_records);
  EXPECT_EQ(t.frames, t.index.size());
  // The index holds every chunk with its time span.
  size_t chunk_entries = 0;
  for (const IndexEntry& e : t.index) {
    if (e.type != static_cast<uint16_t>(FrameType::kActivityChunk)) continue;
    EXPECT_EQ(e.min_timestamp_ns, contents.chunks[chunk_entries].info.min_start_ns);
    EXPECT_EQ(e.max_timestamp_ns, contents.chunks[chunk_entries].info.max_end_ns);
    ++chunk_entries;
  }
  EXPECT_EQ(chunk_entries, contents.chunks.size());
}

TEST(RoundTrip, LinearScanFindsTheSameAsTheIndex) {
  testing::TempDir dir;
  auto contents = testing::MakeSampleContents(4, 30000, 7);
  std::string path = dir.File("a.gpucap");
  ASSERT_TRUE(testing::WriteSample(path, contents).ok());
  LoadOptions options;
  options.read.use_trailer = false;
  auto capture = LoadCapture(path, options);
  ASSERT_TRUE(capture.ok()) << capture.status().ToString();
  EXPECT_FALSE(capture->report.has_trailer);
  EXPECT_TRUE(capture->report.clean());
  // The scan meets the trailer frame too, and reads it.
  ASSERT_TRUE(capture->trailer.has_value());
  ExpectSameContents(contents, *capture, true);
}

TEST(RoundTrip, LargeBatchesAreCompressedAndStillRoundTrip) {
  testing::TempDir dir;
  auto contents = testing::MakeSampleContents(2, 8000, 3000);
  std::string path = dir.File("a.gpucap");
  ASSERT_TRUE(testing::WriteSample(path, contents, true, 1 << 20).ok());
  auto file = CaptureFile::Open(path);
  ASSERT_TRUE(file.ok());
  int compressed = 0;
  (*file)->Scan([&](const FrameRef& f) {
    if (f.type == static_cast<uint16_t>(FrameType::kRanges) && (f.flags & kFrameCompressed)) ++compressed;
    return true;
  });
  EXPECT_GT(compressed, 0);
  auto capture = LoadCapture(path);
  ASSERT_TRUE(capture.ok());
  ExpectSameContents(contents, *capture, false);
}

TEST(RoundTrip, UncompressibleChunkIsStoredRaw) {
  testing::TempDir dir;
  std::string path = dir.File("a.gpucap");
  std::vector<uint8_t> noise(50000);
  std::mt19937 rng(3);
  for (auto& b : noise) b = static_cast<uint8_t>(rng());
  {
    auto sink = OpenFileSink(path);
    ASSERT_TRUE(sink.ok());
    auto writer = CaptureWriter::Start(std::move(sink).value(), {});
    ASSERT_TRUE(writer.ok());
    ActivityBuffer b;
    b.data = noise.data();
    b.size = noise.size();
    b.info.raw_size = static_cast<uint32_t>(noise.size());
    int released = 0;
    b.release = [&] { ++released; };
    EXPECT_TRUE((*writer)->SubmitActivity(std::move(b)));
    ASSERT_TRUE((*writer)->Close({}, std::chrono::seconds(5)).ok());
    EXPECT_EQ(released, 1);
  }
  auto capture = LoadCapture(path);
  ASSERT_TRUE(capture.ok());
  ASSERT_EQ(capture->chunks.size(), 1u);
  EXPECT_EQ(capture->chunks[0].codec, Codec::kNone);
  std::vector<uint64_t> raw;
  ASSERT_TRUE(DecompressChunk(*capture->file, capture->chunks[0], &raw).ok());
  EXPECT_EQ(std::memcmp(raw.data(), noise.data(), noise.size()), 0);
}

TEST(RoundTrip, UnknownFrameTypesAreSkippedAndCounted) {
  // A frame of a type from the future, spliced between real frames.
  testing::TempDir dir;
  auto contents = testing::MakeSampleContents(2, 5000, 2);
  std::string path = dir.File("a.gpucap");
  ASSERT_TRUE(testing::WriteSample(path, contents).ok());
  std::string bytes = testing::ReadFile(path);
  auto file = CaptureFile::Open(path);
  ASSERT_TRUE(file.ok());
  uint64_t second_frame = 0;
  int n = 0;
  (*file)->Scan([&](const FrameRef& f) {
    if (n++ == 1) second_frame = f.offset;
    return n < 2;
  });
  ASSERT_GT(second_frame, 0u);
  // Future frame: type 200, 16 bytes of payload, sequence numbering ignored.
  std::string payload(16, 'x');
  ByteSpan piece(reinterpret_cast<const uint8_t*>(payload.data()), payload.size());
  FrameHeader h = MakeFrameHeader(200, 0, 0, {&piece, 1});
  std::string spliced = bytes.substr(0, second_frame) +
                        std::string(reinterpret_cast<const char*>(&h), sizeof(h)) + payload +
                        bytes.substr(second_frame);
  std::string out = dir.File("b.gpucap");
  testing::WriteFile(out, spliced);
  auto capture = LoadCapture(out);  // the footer offset is now stale: it scans
  ASSERT_TRUE(capture.ok()) << capture.status().ToString();
  EXPECT_EQ(capture->report.unknown_types.at(200), 1u);
  EXPECT_EQ(capture->chunks.size(), contents.chunks.size());
  auto lines = capture->report.Describe(out);
  bool said = false;
  for (const auto& l : lines) said |= l.find("unknown type 200") != std::string::npos;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace gpucap::format
