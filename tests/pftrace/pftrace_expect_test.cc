// The pftrace of each fixture, read back by the project's own decoder
// (pftrace_reader.h, which shares no line with the renderer), against what
// the recorded program says it did (fixtures/NAME.expect.json): kernels by
// name and device, copies by direction and memory, bytes moved, launch
// shapes. Neither side of the comparison comes from the builder, so a join
// bug that the Chrome JSON shares with the pftrace still fails here.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "../builder/json.h"
#include "../support/temp_dir.h"
#include "gpucap/builder/builder.h"
#include "gpucap/builder/output.h"
#include "gpucap/builder/renderer.h"
#include "pftrace_reader.h"

namespace gpucap::testing {
namespace {

Json Manifest(const std::string& name) {
  Json j;
  std::string error;
  std::string path = std::string(GPUCAP_SOURCE_DIR) + "/fixtures/" + name + ".expect.json";
  EXPECT_TRUE(ParseJson(ReadFile(path), &j, &error)) << path << ": " << error;
  return j;
}

PfTrace WholeCapture(const std::string& name) {
  std::string path = std::string(GPUCAP_SOURCE_DIR) + "/fixtures/" + name + ".gpucap";
  auto index = builder::CaptureIndex::Open(path);
  EXPECT_TRUE(index.ok()) << index.status().message();
  if (!index.ok()) return {};
  builder::Builder b(**index, builder::BuildOptions{});
  auto windows = b.Windows();
  EXPECT_TRUE(windows.ok() && windows->size() == 1u);
  if (!windows.ok() || windows->size() != 1u) return {};
  std::string bytes;
  auto sink = builder::NewPerfettoRenderer(builder::NewStringSink(&bytes));
  builder::WindowReport report;
  Status s = b.BuildWindow(windows->front(), sink.get(), &report);
  EXPECT_TRUE(s.ok()) << s.message();
  PfTrace t = ReadPftrace(bytes);
  for (const std::string& e : t.errors) ADD_FAILURE() << name << ": " << e;
  return t;
}

std::string Arg(const PfSlice& s, std::string_view key) {
  for (const auto& [k, v] : s.args) {
    if (k == key) return v;
  }
  return "";
}

// "void tiled_sum<128>(float const*, float*, int)" -> "tiled_sum<128>".
std::string BaseName(const std::string& demangled) {
  std::string n = demangled.rfind("void ", 0) == 0 ? demangled.substr(5) : demangled;
  return n.substr(0, n.find('('));
}

// The manifest's "counts", by their own keys, counted from the trace.
std::map<std::string, uint64_t> CountsFromTrace(const PfTrace& t) {
  std::map<std::string, uint64_t> c;
  for (const PfSlice& s : t.slices) {
    if (s.category == "kernel") {
      c["kernel:" + BaseName(s.name)]++;
      c["kernel:" + BaseName(s.name) + ":device" + Arg(s, "device")]++;
    } else if (s.category == "gpu_memcpy") {
      // "Memcpy HtoD (Pinned -> Device)"; peer copies "Memcpy PtoP (...)".
      std::string dir = s.name.substr(7, 4);
      uint64_t bytes = std::stoull(Arg(s, "bytes"));
      if (dir == "PtoP") {
        c["peer:" + Arg(s, "fromDevice") + "to" + Arg(s, "toDevice")]++;
        c["bytes:peer"] += bytes;
        continue;
      }
      std::string host = s.name.find("Pageable") != std::string::npos ? ":pageable"
                         : s.name.find("Pinned") != std::string::npos ? ":pinned"
                                                                      : "";
      c["memcpy:" + dir + host]++;
      c["bytes:" + dir] += bytes;
    } else if (s.category == "gpu_memset") {
      c["memset"]++;
      c["bytes:memset"] += std::stoull(Arg(s, "bytes"));
    }
  }
  return c;
}

TEST(PftraceExpect, GpuWorkIsWhatTheProgramDid) {
  for (const char* name : {"basics", "counters", "graphs_nvtx", "peer"}) {
    SCOPED_TRACE(name);
    Json m = Manifest(name);
    PfTrace t = WholeCapture(name);
    ASSERT_FALSE(t.slices.empty());
    std::map<std::string, uint64_t> seen = CountsFromTrace(t);
    size_t checked = 0;
    for (const auto& [key, want] : m["counts"].members) {
      // Counts of API calls and host work: not GPU slices.
      if (key.rfind("kernel:", 0) != 0 && key.rfind("memcpy:", 0) != 0 && key.rfind("bytes:", 0) != 0 &&
          key.rfind("peer:", 0) != 0 && key != "memset") {
        continue;
      }
      EXPECT_EQ(seen[key], want.u()) << key;
      checked++;
    }
    EXPECT_GT(checked, 0u);
  }
}

TEST(PftraceExpect, KernelsHaveTheShapesTheyWereLaunchedWith) {
  Json m = Manifest("basics");
  PfTrace t = WholeCapture("basics");
  std::map<std::string, size_t> kernels;
  for (const PfSlice& s : t.slices) {
    if (s.category != "kernel") continue;
    const Json& shape = m["kernel_shapes"][BaseName(s.name)];
    ASSERT_TRUE(shape.is(Json::Type::kObject)) << s.name << " is not one of the program's kernels";
    kernels[BaseName(s.name)]++;
    for (const char* dim : {"grid", "block"}) {
      if (!shape.has(dim)) continue;
      const auto& v = shape[dim].items;
      EXPECT_EQ(Arg(s, dim), "[" + v[0].text + "," + v[1].text + "," + v[2].text + "]") << s.name << " " << dim;
    }
    if (shape.has("static_shared")) {
      EXPECT_EQ(Arg(s, "shared memory"), shape["static_shared"].text) << s.name;
    }
  }
  EXPECT_EQ(kernels.size(), m["kernel_shapes"].members.size());
  // The streams the program made, each running kernels (the synchronous
  // copies run on the legacy default stream besides).
  std::set<std::string> streams;
  for (const PfSlice& s : t.slices) {
    if (s.category == "kernel") {
      streams.insert(Arg(s, "stream"));
    }
  }
  EXPECT_EQ(streams.size(), m["streams_used"].u());
}

}  // namespace
}  // namespace gpucap::testing
