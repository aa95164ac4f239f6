// The builder's join against the reference join (reference_join.h), op by
// op: on every fixture with every window kind its tests use, and on
// generated captures. A disagreement prints the fixture and spec, or the
// generator's seed: GPUCAP_REFERENCE_SEED=<seed> reruns that one capture.
#include <gtest/gtest.h>

#include <cstdlib>

#include "../support/temp_dir.h"
#include "random_capture.h"
#include "reference_join.h"

namespace gpucap::testing {
namespace {

std::string CheckSpec(const builder::CaptureIndex& index, const std::string& spec, const std::string& steps = "") {
  auto want = ReferenceJoin(index, spec, steps);
  if (!want.ok()) return "reference: " + want.status().message();
  auto got = BuiltWindows(index, spec, steps);
  if (!got.ok()) return "build: " + got.status().message();
  return CompareWindows(*want, *got);
}

TEST(ReferenceJoin, AgreesOnEveryFixture) {
  const std::pair<const char*, std::vector<std::string>> fixtures[] = {
      {"basics", {"all", "every:5ms"}},
      {"counters", {"all", "every:100ms"}},
      {"peer", {"all"}},
      {"graphs_nvtx", {"all", "marks", "nvtx:thread\\d/outer", "nvtx:.*", "every:1ms"}},
      {"torch_train", {"all", "marks", "nvtx:ProfilerStep#\\d+", "every:500ms"}},
      {"allreduce-0", {"all", "marks", "nvtx:ProfilerStep#\\d+", "nvtx:nccl.*", "every:250ms"}},
      {"allreduce-1", {"all", "marks", "nvtx:ProfilerStep#\\d+"}},
      {"nvtx_domains", {"all", "marks", "nvtx:Step#\\d+", "nvtx:.*", "every:100us"}},
      {"sync_events", {"all", "every:1ms"}},
      {"nccl_graph", {"all", "marks", "nvtx:ProfilerStep#\\d+", "every:100ms"}},
  };
  for (const auto& [name, specs] : fixtures) {
    auto index = builder::CaptureIndex::Open(std::string(GPUCAP_SOURCE_DIR) + "/fixtures/" + name + ".gpucap");
    ASSERT_TRUE(index.ok()) << index.status().message();
    for (const std::string& spec : specs) {
      std::string diff = CheckSpec(**index, spec);
      EXPECT_EQ(diff, "") << name << " -w '" << spec << "'";
    }
  }
}

// A few thousand captures in the plain suite; fewer under sanitizers, where
// each costs ten times as much. GPUCAP_REFERENCE_SEEDS sets the count.
size_t Seeds() {
  if (const char* n = std::getenv("GPUCAP_REFERENCE_SEEDS")) return std::strtoull(n, nullptr, 10);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return 200;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return 200;
#endif
#endif
  return 3000;
}

TEST(ReferenceJoin, AgreesOnGeneratedCaptures) {
  TempDir dir;
  std::vector<uint64_t> seeds;
  if (const char* one = std::getenv("GPUCAP_REFERENCE_SEED")) {
    seeds.push_back(std::strtoull(one, nullptr, 10));
  } else {
    for (uint64_t s = 1; s <= Seeds(); ++s) seeds.push_back(s);
  }
  size_t failures = 0;
  for (uint64_t seed : seeds) {
    std::string path = dir.File("random-" + std::to_string(seed) + ".gpucap");
    Status w = WriteRandomCapture(seed, path);
    ASSERT_TRUE(w.ok()) << "seed " << seed << ": " << w.message();
    auto index = builder::CaptureIndex::Open(path);
    ASSERT_TRUE(index.ok()) << "seed " << seed << ": " << index.status().message();
    bool marks = !(*index)->capture().windows.empty();
    // Steps named as Kineto names them, as the recorder was told to mark
    // them, or as only the build is told (--steps).
    StepNaming naming = RandomStepNaming(seed);
    std::string steps = naming.prefix == "iteration " ? naming.pattern : "";
    // The whole build and one other kind, in turn: every kind sees a
    // fifth of the seeds.
    const std::string kinds[] = {"every:50us", "nvtx:" + naming.pattern, "nvtx:r0.*", "nvtx:span0", "marks"};
    for (std::string spec : {std::string("all"), kinds[seed % 5]}) {
      if (spec == "marks" && !marks) continue;
      bool any = spec.rfind("nvtx:", 0) != 0;
      if (!any) {
        // A spec matching nothing is the builder's error; the reference
        // simply yields no windows.
        auto ref = ReferenceJoin(**index, spec, steps);
        ASSERT_TRUE(ref.ok());
        if (ref->empty()) continue;
      }
      std::string diff = CheckSpec(**index, spec, steps);
      if (!diff.empty() && failures++ < 10) ADD_FAILURE() << "seed " << seed << " -w '" << spec << "':\n" << diff;
    }
    std::remove(path.c_str());
  }
  EXPECT_EQ(failures, 0u) << "of " << seeds.size() << " generated captures";
}

}  // namespace
}  // namespace gpucap::testing
