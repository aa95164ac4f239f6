// libFuzzer target that attacks below the checksums: every input is resealed
// (format/testing/framed_capture.h: header and payload CRC32C recomputed), so
// a mutation reaches the message decoder, the chunk decoder, the join, both
// renderers, info, stats, diff, trim (anonymizing, and the trimmed capture
// read back), merge, the SQLite export and the HTML report, and a window
// spec taken from the input, instead of failing the frame checksum. The custom mutator
// mutates inside one frame's payload half of the time, keeping the frame
// layout. Seeded from fixtures/ and the generated hostile captures
// (scripts/fuzz); -rss_limit_mb, -malloc_limit_mb and -timeout turn a fat or
// slow input into a failure.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <sqlite3.h>

#include "gpucap/tools/export/sqlite_export.h"
#include "gpucap/tools/info/capture_info.h"
#include "gpucap/tools/report/html_report.h"
#include "gpucap/tools/trim/capture_trim.h"
#include "framed_capture.h"
#include "gpucap/tools/stats/gpu_stats.h"
#include "gpucap/builder/builder.h"
#include "gpucap/format/frame.h"
#include "gpucap/tools/splice/kineto_splice.h"
#include "gpucap/tools/stats/kernel_diff.h"
#include "gpucap/tools/merge/trace_merge.h"
#include "gpucap/tools/trim/trim_plan.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using gpucap::format::FrameHeader;

class Discard : public gpucap::builder::ByteSink {
 public:
  gpucap::Status Append(std::string_view) override { return gpucap::Status::Ok(); }
  gpucap::Status Close() override { return gpucap::Status::Ok(); }
};

// A window spec from the input's last bytes (so specs are fuzzed too), or
// one of the kinds, picked by the first byte.
std::string SpecOf(const uint8_t* data, size_t size) {
  static const char* kSpecs[] = {"all", "marks", "every:1ms", "nvtx:.*", "range:+0ns:+1s",
                                 "nvtx:ProfilerStep#\\d+"};
  if (size > 2 && data[0] % 8 == 7) {
    size_t n = std::min<size_t>(data[1] % 32, size - 2);
    return std::string(reinterpret_cast<const char*>(data + size - n), n);
  }
  return kSpecs[size ? data[0] % 6 : 0];
}

std::string MemFile(const std::string& bytes, int* fd) {
  *fd = memfd_create("capture", MFD_CLOEXEC);
  for (size_t done = 0; *fd >= 0 && done < bytes.size();) {
    ssize_t w = write(*fd, bytes.data() + done, bytes.size() - done);
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  return "/proc/self/fd/" + std::to_string(*fd);
}

void Exercise(const gpucap::builder::CaptureIndex& index, const uint8_t* data, size_t size) {
  namespace b = gpucap::builder;
  namespace t = gpucap::tools;
  (void)t::DescribeCapture(index);
  b::BuildOptions o;
  o.window = SpecOf(data, size);
  o.threads = 1;
  o.join.graph_dependencies = size > 1 && (data[1] & 1);
  b::Builder builder(index, o);
  auto windows = builder.Windows();
  if (windows.ok()) {
    size_t built = 0;
    for (const auto& w : *windows) {
      if (++built > 2) break;  // bounded work per input
      for (auto format : {b::OutputFormat::kChromeJson, b::OutputFormat::kPerfetto}) {
        auto sink = b::MakeRenderer(format, std::make_unique<Discard>());
        b::WindowReport report;
        (void)builder.BuildWindow(w, sink.get(), &report);
      }
    }
  }
  auto stats = t::CollectStats(index, o, nullptr);
  if (stats.ok()) (void)t::DiffKernels(*stats, *stats, t::DiffOptions{});
  static const std::string dir = [] {
    char tmpl[] = "/tmp/gpucap-fuzz-XXXXXX";
    return std::string(mkdtemp(tmpl));
  }();
  if (size > 1 && (data[1] & 6) == 6) {  // a quarter of inputs: trim writes a file
    auto plan = t::PlanTrim(index, o, nullptr);
    if (plan.ok()) {
      t::TrimOptions to;
      if (data[1] & 32) to.anonymize.emplace("a fixed key for the fuzzer");
      auto trimmed = t::WriteTrimmedCapture(index, *plan, to, dir + "/trimmed.gpucap");
      if (trimmed.ok()) {  // what trim wrote is read back as any capture is
        auto again = b::CaptureIndex::Open(dir + "/trimmed.gpucap");
        if (again.ok()) (void)t::DescribeCapture(**again);
      }
    }
  }
  const b::CaptureIndex* captures[] = {&index};
  if (size > 2 && (data[2] & 3) == 3) {  // a quarter: the SQLite export, in memory
    sqlite3* db = nullptr;
    if (sqlite3_open(":memory:", &db) == SQLITE_OK) {
      t::ExportOptions eo;
      eo.build = o;
      eo.build.threads = 1;
      eo.jobs = 1;
      (void)t::ExportCaptures(db, captures, eo);
    }
    sqlite3_close(db);
  }
  if (size > 2 && (data[2] & 12) == 12) {  // a quarter: the HTML report
    t::ReportOptions ro;
    ro.build = o;
    ro.build.threads = 1;
    ro.strip_bins = 1 + data[2] % 64;
    (void)t::BuildReport(captures, ro, nullptr);
  }
  if (size > 1 && (data[1] & 24) == 24) {  // and merge
    b::BuildOptions m = o;
    m.output = dir + "/merged.json";
    (void)t::MergeTraces({&index, &index}, m, nullptr);
  }
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  std::minstd_rand rng(seed);
  // Half the time, mutate inside one frame's payload (same length): the
  // layout stays valid and the bytes land in a message.
  if (size > sizeof(gpucap::format::FileHeader) + sizeof(FrameHeader) && rng() % 2 == 0) {
    std::vector<std::pair<size_t, size_t>> payloads;
    size_t off = sizeof(gpucap::format::FileHeader);
    while (off + sizeof(FrameHeader) <= size) {
      FrameHeader h;
      std::memcpy(&h, data + off, sizeof(h));
      if (h.magic != gpucap::format::kFrameMagic || h.length > size - off - sizeof(h)) break;
      if (h.length > 0) payloads.push_back({off + sizeof(h), h.length});
      off += sizeof(h) + h.length;
    }
    if (!payloads.empty()) {
      auto [at, len] = payloads[rng() % payloads.size()];
      LLVMFuzzerMutate(data + at, len, len);
      gpucap::format::testing::Reseal({data, size});
      return size;
    }
  }
  size = LLVMFuzzerMutate(data, size, max_size);
  gpucap::format::testing::Reseal({data, size});
  return size;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  gpucap::format::testing::Reseal({reinterpret_cast<uint8_t*>(bytes.data()), bytes.size()});
  // The --into reader sees the same bytes as a JSON document.
  (void)gpucap::tools::KinetoTrace::Parse(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
  int fd = -1;
  std::string path = MemFile(bytes, &fd);
  if (fd < 0) return 0;
  auto index = gpucap::builder::CaptureIndex::Open(path);
  if (index.ok()) Exercise(**index, data, size);
  close(fd);
  return 0;
}
