// The writer's price of keeping a crash dump ready (ring_snapshot.h,
// crash_slot.h): the same frames into a ring, with and without
// ring_crash_snapshots. Run each under callgrind and divide the difference
// in instructions by the frames added (bench/README.md, "crash snapshots").
// The price grows with the frames the ring holds (a snapshot lists them all,
// and its trailer indexes them), not with their size: --held sets it.
//
//   ring_crash_bench on|off [--frames 2000] [--held 100] [--frame-kb 16]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpucap/format/capture_writer.h"

using namespace gpucap::format;

int main(int argc, char** argv) {
  if (argc < 2 || (std::strcmp(argv[1], "on") != 0 && std::strcmp(argv[1], "off") != 0)) {
    std::fprintf(stderr, "usage: ring_crash_bench on|off [--frames N] [--held N] [--frame-kb N]\n");
    return 2;
  }
  bool on = std::strcmp(argv[1], "on") == 0;
  int frames = 2000, held = 100, frame_kb = 16;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    int v = std::atoi(argv[i + 1]);
    if (flag == "--frames") frames = v;
    else if (flag == "--held") held = v;
    else if (flag == "--frame-kb") frame_kb = v;
  }
  // Random bytes do not compress: each chunk frame takes its size in the ring.
  std::vector<uint8_t> bytes(static_cast<size_t>(frame_kb) << 10);
  std::mt19937 rng(1);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  uint64_t frame_bytes = bytes.size() + 256;  // the chunk message around the bytes, about
  WriterOptions options;
  options.ring_crash_snapshots = on;
  options.queue_capacity = 4096;
  auto w = CaptureWriter::StartRing([](uint64_t) -> gpucap::Result<std::unique_ptr<Sink>> {
    return gpucap::Status::IoError("no dumps here");
  }, {held * frame_bytes, 0}, options);
  if (!w.ok()) return 1;
  SessionInfo session;
  (*w)->Submit(SmallMessage(session));
  for (int i = 0; i < frames; ++i) {
    ActivityBuffer b;
    b.data = bytes.data();
    b.size = bytes.size();
    b.info.raw_size = static_cast<uint32_t>(bytes.size());
    b.info.record_count = 10;
    b.info.kind_counts = {{10, 4}, {1, 3}, {5, 3}};  // kernels, memcpys, runtime calls, as a real buffer has
    b.info.min_start_ns = 1000 * (i + 1);
    b.info.max_start_ns = 1000 * (i + 1) + 1;
    while (!(*w)->SubmitActivity(b)) (*w)->Flush(std::chrono::seconds(10));
  }
  (*w)->Flush(std::chrono::seconds(60));
  RingCounters rc = (*w)->ring_counters();
  std::printf("snapshots %s: %llu frames added, %llu held, %llu dropped\n", on ? "on" : "off",
              static_cast<unsigned long long>(rc.frames_added),
              static_cast<unsigned long long>(rc.span_frames + rc.definition_frames),
              static_cast<unsigned long long>(rc.frames_dropped));
  return (*w)->Close({}, std::chrono::seconds(60)).ok() ? 0 : 1;
}
