#include "gpucap/builder/decode.h"

#include <gtest/gtest.h>

#include <cstring>

#include "../support/temp_dir.h"
#include "gpucap/format/activity_kind.h"
#include "scene.h"

namespace gpucap::builder {
namespace {

using gpucap::testing::kT0;
using gpucap::testing::Scene;

TEST(Decode, EveryFamilyReadsBackWhatWasWritten) {
  Scene s;
  Scene::Ok(s.c().String(0xabc, "_Z3fooi"));
  s.Launch(7, 99, kT0 + 10, kT0 + 100, kT0 + 200, 0xabc, 13);
  testing::MemcpyRecord m;
  m.bytes = 1000;
  m.start = kT0 + 300;
  m.end = kT0 + 400;
  m.correlation = 8;
  s.c().Memcpy(m);
  testing::MemsetRecord ms;
  ms.bytes = 64;
  ms.start = kT0 + 500;
  ms.end = kT0 + 600;
  ms.value = 0xab;
  s.c().Memset(ms);
  s.c().ExternalCorrelation(7, 1ull << 40);
  testing::SyncRecord sy;
  sy.start = kT0 + 700;
  sy.end = kT0 + 800;
  sy.event_sync_id = 1ull << 33;
  s.c().Sync(sy);
  testing::OverheadRecord o;
  o.tid = 55;
  o.start = kT0 + 900;
  o.end = kT0 + 950;
  s.c().Overhead(o);
  auto capture = format::LoadCapture(s.Path());
  ASSERT_TRUE(capture.ok());
  ASSERT_EQ(capture->chunks.size(), 1u);
  Decoder d(*capture);
  EXPECT_TRUE(d.version_warning().empty());
  ActivityTables t;
  DecodeStats stats;
  std::vector<uint64_t> scratch;
  d.DecodeChunk(0, kAllFamilies, &t, &stats, &scratch);
  EXPECT_EQ(stats.records, 7u);
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels.start[0], kT0 + 100);
  EXPECT_EQ(t.kernels.stream[0], 13u);
  EXPECT_EQ(t.kernels.correlation[0], 7u);
  EXPECT_EQ(t.kernels.block_x[0], 128);
  ASSERT_NE(t.kernels.name[0], kNoString);
  EXPECT_EQ(capture->strings[t.kernels.name[0]].def.text, "_Z3fooi");
  ASSERT_EQ(t.apis.size(), 1u);
  EXPECT_EQ(t.apis.tid[0], 99u);
  EXPECT_EQ(t.apis.cbid[0], 211u);
  EXPECT_EQ(t.apis.domain[0], ApiDomain::kRuntime);
  ASSERT_EQ(t.memcpys.size(), 1u);
  EXPECT_EQ(t.memcpys.bytes[0], 1000u);
  EXPECT_EQ(t.memcpys.copy_kind[0], 8);
  ASSERT_EQ(t.memsets.size(), 1u);
  EXPECT_EQ(t.memsets.value[0], 0xabu);
  ASSERT_EQ(t.externals.size(), 1u);
  EXPECT_EQ(t.externals.external_id[0], 1ull << 40);
  ASSERT_EQ(t.syncs.size(), 1u);
  EXPECT_EQ(t.syncs.event_sync_id[0], 1ull << 33);
  ASSERT_EQ(t.overheads.size(), 1u);
  EXPECT_EQ(t.overheads.object_b[0], 55u);

  // Families decode only on request.
  ActivityTables apis_only;
  d.DecodeChunk(0, kApis, &apis_only, &stats, &scratch);
  EXPECT_EQ(apis_only.apis.size(), 1u);
  EXPECT_TRUE(apis_only.kernels.empty());
}

// Raw CUPTI-like bytes: `count` records of `kind`, each `stride` bytes.
std::vector<uint8_t> Records(uint32_t kind, uint32_t stride, int count, uint64_t start_offset = 16) {
  std::vector<uint8_t> b(static_cast<size_t>(stride) * count);
  for (int i = 0; i < count; ++i) {
    std::memcpy(&b[i * stride], &kind, 4);
    uint64_t start = kT0 + i;
    if (start_offset + 8 <= stride) std::memcpy(&b[i * stride + start_offset], &start, 8);
  }
  return b;
}

format::Capture CaptureFrom(uint32_t cupti_version) {
  format::Capture c;
  c.session = format::SessionInfo();
  c.session->cupti_runtime_version = cupti_version;
  return c;
}

TEST(Decode, UnknownVersionDecodesKindsWhoseSizeMatchesAndSkipsTheRest) {
  format::Capture c = CaptureFrom(140200);
  Decoder d(c);
  EXPECT_NE(d.version_warning().find("140200"), std::string::npos);
  std::vector<uint8_t> raw = Records(10, 216, 3);                   // same size as 13.0's kernel
  std::vector<uint8_t> grown = Records(5, 48, 2);                   // runtime records grew (40 in 13.0)
  raw.insert(raw.end(), grown.begin(), grown.end());
  format::ChunkInfo info;
  info.record_sizes = {{10, 216}, {5, 48}};
  ActivityTables t;
  DecodeStats stats;
  d.DecodeRecords(raw, info, 1, kAllFamilies, &t, &stats);
  EXPECT_EQ(t.kernels.size(), 3u);
  EXPECT_EQ(t.kernels.start[2], kT0 + 2);
  EXPECT_TRUE(t.apis.empty());
  EXPECT_EQ(stats.skipped_kinds[5], 2u);
  auto lines = d.Describe(stats);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("140200"), std::string::npos);
  bool named = false;
  for (const auto& l : lines) named |= l.find("RUNTIME") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(Decode, KnownVersionWithAnUnexpectedSizeDoesNotTrustTheLayout) {
  format::Capture c = CaptureFrom(130001);
  Decoder d(c);
  std::vector<uint8_t> raw = Records(10, 224, 2);
  format::ChunkInfo info;
  info.record_sizes = {{10, 224}};
  ActivityTables t;
  DecodeStats stats;
  d.DecodeRecords(raw, info, 1, kAllFamilies, &t, &stats);
  EXPECT_TRUE(t.kernels.empty());
  EXPECT_EQ(stats.skipped_kinds[10], 2u);
}

TEST(Decode, ARecordOfUnknownSizeEndsTheWalkAndCountsTheRest) {
  format::Capture c = CaptureFrom(130001);
  Decoder d(c);
  std::vector<uint8_t> raw = Records(5, 40, 2);
  std::vector<uint8_t> mystery = Records(77, 64, 1);
  raw.insert(raw.end(), mystery.begin(), mystery.end());
  std::vector<uint8_t> more = Records(5, 40, 1);
  raw.insert(raw.end(), more.begin(), more.end());
  format::ChunkInfo info;  // no sizes stored: the layout's size serves for kind 5
  ActivityTables t;
  DecodeStats stats;
  d.DecodeRecords(raw, info, 1, kAllFamilies, &t, &stats);
  EXPECT_EQ(t.apis.size(), 2u);
  EXPECT_EQ(stats.unwalkable_bytes, 104u);
  // A truncated last record is not read past the buffer.
  std::vector<uint8_t> cut = Records(5, 40, 2);
  cut.resize(60);
  ActivityTables t2;
  DecodeStats s2;
  d.DecodeRecords(cut, info, 1, kAllFamilies, &t2, &s2);
  EXPECT_EQ(t2.apis.size(), 1u);
  EXPECT_EQ(s2.unwalkable_bytes, 20u);
}

TEST(Decode, ACorruptChunkIsReportedWithFileAndOffsetNotFatal) {
  Scene s;
  for (int i = 0; i < 50; ++i) s.Launch(i + 1, 1, kT0 + i * 100, kT0 + 10000 + i * 100, kT0 + 10050 + i * 100);
  std::string path = s.Path();
  auto clean = format::LoadCapture(path);
  ASSERT_TRUE(clean.ok());
  ASSERT_EQ(clean->chunks.size(), 1u);
  uint64_t at = clean->chunks[0].stored.data() - clean->file->bytes().data() + clean->chunks[0].stored.size() / 2;
  std::string bytes = gpucap::testing::ReadFile(path);
  bytes[at] ^= 0x5a;
  gpucap::testing::WriteFile(path, bytes);
  auto damaged = format::LoadCapture(path);
  ASSERT_TRUE(damaged.ok());
  Decoder d(*damaged);
  ActivityTables t;
  DecodeStats stats;
  std::vector<uint64_t> scratch;
  d.DecodeChunk(0, kAllFamilies, &t, &stats, &scratch);
  EXPECT_EQ(stats.corrupt_chunks, 1u);
  EXPECT_EQ(t.rows(), 0u);
  ASSERT_EQ(stats.problems.size(), 1u);
  EXPECT_NE(stats.problems[0].find(path), std::string::npos);
  EXPECT_NE(stats.problems[0].find("offset"), std::string::npos);
}

}  // namespace
}  // namespace gpucap::builder
