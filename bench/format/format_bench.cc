// Throughput of the capture format on one core: the writer thread
// compressing and framing CUPTI buffers into a file, and the reader mapping,
// checking and decompressing them. Payloads are real CUPTI buffers taken from
// a capture (--from), or synthetic kernel records shaped like CUPTI's.
//
//   format_bench [--mb 1024] [--chunk-kb 4096] [--from CAPTURE] [--dir /tmp]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpucap/format/capture.h"
#include "gpucap/format/capture_writer.h"

using namespace gpucap::format;
using Clock = std::chrono::steady_clock;

namespace {

// Records laid out like CUPTI 13's kernel record (216 bytes): a kind, a few
// timestamps that advance, ids that repeat, a name pointer from a small set.
std::vector<uint8_t> SyntheticBuffer(size_t size, uint32_t seed) {
  std::vector<uint8_t> b(size, 0);
  std::mt19937_64 rng(seed);
  uint64_t ts = 1'790'000'000'000'000'000ull + seed * 10'000'000ull;
  uint32_t corr = seed * 100000;
  for (size_t off = 0; off + 216 <= size; off += 216) {
    uint8_t* r = b.data() + off;
    uint32_t kind = 10;
    std::memcpy(r, &kind, 4);
    uint64_t start = ts += 2000 + rng() % 3000, end = start + 1500 + rng() % 40000;
    uint64_t queued = start - 9000, submitted = start - 4000;
    std::memcpy(r + 8, &start, 8);
    std::memcpy(r + 16, &end, 8);
    std::memcpy(r + 24, &queued, 8);
    std::memcpy(r + 32, &submitted, 8);
    uint32_t device = 0, context = 1, stream = 7 + rng() % 3, c = ++corr;
    std::memcpy(r + 40, &device, 4);
    std::memcpy(r + 44, &context, 4);
    std::memcpy(r + 48, &stream, 4);
    std::memcpy(r + 52, &c, 4);
    int32_t grid[3] = {static_cast<int32_t>(1 + rng() % 512), 1, 1};
    int32_t block[3] = {128, 1, 1};
    std::memcpy(r + 56, grid, 12);
    std::memcpy(r + 68, block, 12);
    uint64_t name = 0x7f3a00001000ull + (rng() % 40) * 0x80;
    std::memcpy(r + 88, &name, 8);
    uint16_t regs = 32 + rng() % 4 * 8;
    std::memcpy(r + 96, &regs, 2);
  }
  return b;
}

std::vector<std::vector<uint8_t>> PayloadsFrom(const std::string& path) {
  std::vector<std::vector<uint8_t>> out;
  auto capture = LoadCapture(path);
  if (!capture.ok()) {
    std::fprintf(stderr, "%s\n", capture.status().ToString().c_str());
    std::exit(1);
  }
  for (const ChunkView& c : capture->chunks) {
    std::vector<uint64_t> raw;
    if (!DecompressChunk(*capture->file, c, &raw).ok()) continue;
    const auto* p = reinterpret_cast<const uint8_t*>(raw.data());
    out.emplace_back(p, p + c.info.raw_size);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  size_t total_mb = 1024, chunk_kb = 4096;
  std::string from, dir = "/tmp";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--mb") total_mb = std::strtoul(argv[i + 1], nullptr, 10);
    else if (a == "--chunk-kb") chunk_kb = std::strtoul(argv[i + 1], nullptr, 10);
    else if (a == "--from") from = argv[i + 1];
    else if (a == "--dir") dir = argv[i + 1];
  }
  std::vector<std::vector<uint8_t>> payloads;
  if (!from.empty()) {
    payloads = PayloadsFrom(from);
  } else {
    for (uint32_t s = 1; s <= 8; ++s) payloads.push_back(SyntheticBuffer(chunk_kb << 10, s));
  }
  if (payloads.empty()) {
    std::fprintf(stderr, "no payloads\n");
    return 1;
  }
  std::string path = dir + "/gpucap-format-bench.gpucap";

  // Write: one producer hands buffers over; the writer thread does the work.
  uint64_t raw_bytes = 0, target = uint64_t{total_mb} << 20;
  auto t0 = Clock::now();
  {
    auto writer = CaptureWriter::Start(std::move(OpenFileSink(path)).value(), {});
    if (!writer.ok()) return 1;
    for (size_t i = 0; raw_bytes < target; ++i) {
      const auto& p = payloads[i % payloads.size()];
      ActivityBuffer b;
      b.data = p.data();
      b.size = p.size();
      b.info.raw_size = static_cast<uint32_t>(p.size());
      b.info.record_count = static_cast<uint32_t>(p.size() / 216);
      b.info.kind_counts = {{10, b.info.record_count}};
      // Wait for room rather than drop: this measures the writer's rate.
      while (!(*writer)->SubmitActivity(b)) (*writer)->Flush(std::chrono::milliseconds(100));
      raw_bytes += p.size();
    }
    gpucap::Status s = (*writer)->Close({}, std::chrono::seconds(600));
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
    auto c = (*writer)->counters();
    auto t1 = Clock::now();
    double sec = std::chrono::duration<double>(t1 - t0).count();
    std::printf("write: %.0f MB/s of raw CUPTI payload (%.0f MB in %.2f s, compressed %.2fx, file %.0f MB)\n",
                raw_bytes / sec / 1e6, raw_bytes / 1e6, sec,
                static_cast<double>(c.chunk_raw_bytes) / c.chunk_stored_bytes, c.bytes_written / 1e6);
  }

  // Read: map, check, decode the messages, decompress every chunk.
  auto t2 = Clock::now();
  uint64_t read_raw = 0;
  {
    auto capture = LoadCapture(path);
    if (!capture.ok()) return 1;
    std::vector<uint64_t> raw;
    for (const ChunkView& c : capture->chunks) {
      gpucap::Status s = DecompressChunk(*capture->file, c, &raw);
      if (!s.ok()) {
        std::fprintf(stderr, "%s\n", s.ToString().c_str());
        return 1;
      }
      read_raw += c.info.raw_size;
    }
  }
  double rsec = std::chrono::duration<double>(Clock::now() - t2).count();
  std::printf("read+decompress: %.0f MB/s of raw CUPTI payload (%.0f MB in %.2f s)\n",
              read_raw / rsec / 1e6, read_raw / 1e6, rsec);
  std::remove(path.c_str());
  return 0;
}
