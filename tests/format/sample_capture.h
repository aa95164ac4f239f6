// A capture with every message type and several activity chunks, written
// through the real writer, plus what a reader must find in it. The damage
// tests cut and flip this file.
#ifndef GPUCAP_TESTS_FORMAT_SAMPLE_CAPTURE_H_
#define GPUCAP_TESTS_FORMAT_SAMPLE_CAPTURE_H_

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpucap/format/capture.h"
#include "gpucap/format/capture_writer.h"

namespace gpucap::testing {

// Bytes shaped like a CUPTI buffer: fixed-size records with small counters
// and timestamps, compressible like the real thing but not trivially.
inline std::vector<uint8_t> CuptiLikeBytes(size_t size, uint32_t seed) {
  std::vector<uint8_t> b(size);
  std::mt19937 rng(seed);
  uint64_t ts = 1'000'000'000ull + seed * 1000ull;
  for (size_t off = 0; off + 64 <= size; off += 64) {
    uint32_t kind = 10;
    uint64_t start = ts += rng() % 5000, end = start + rng() % 20000;
    uint32_t corr = static_cast<uint32_t>(off / 64 + seed * 100000);
    std::memcpy(&b[off], &kind, 4);
    std::memcpy(&b[off + 8], &start, 8);
    std::memcpy(&b[off + 16], &end, 8);
    std::memcpy(&b[off + 24], &corr, 4);
    for (size_t i = 28; i < 64; ++i) b[off + i] = static_cast<uint8_t>(rng() % 4);
  }
  return b;
}

struct SampleChunk {
  std::vector<uint8_t> bytes;
  format::ChunkInfo info;
};

struct SampleContents {
  format::SessionInfo session;
  std::vector<format::DeviceInfo> devices;
  std::vector<format::StringDef> strings;
  std::vector<format::RangeEvent> ranges;
  std::vector<format::GraphEvent> graphs;
  std::vector<format::WindowMark> windows;
  std::vector<format::ThreadInfo> threads;
  std::vector<format::StreamInfo> streams;
  std::vector<format::MetadataBlob> metadata;
  std::vector<format::ClockSample> clocks;
  std::vector<format::CounterDef> counter_defs;
  std::vector<format::CounterSample> counter_samples;
  format::RecorderStats stats;
  std::vector<SampleChunk> chunks;
};

SampleContents MakeSampleContents(int chunks, size_t chunk_bytes, int ranges_per_round);

// Writes `contents` interleaved (strings, ranges, chunk, ...) with small
// batches so the file has many frames. Returns the writer's final status.
Status WriteSample(const std::string& path, const SampleContents& contents,
                   bool close_cleanly = true, size_t batch_bytes = 2048);

}  // namespace gpucap::testing

#endif  // GPUCAP_TESTS_FORMAT_SAMPLE_CAPTURE_H_
