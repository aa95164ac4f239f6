// A second join, written from docs/semantics.md alone: deliberately simple
// and slow (quadratic), sharing nothing with the builder's join beyond
// decoding. It says, per window a spec yields, which GPU ops (kernels,
// memcpys, memsets) the window holds, each op's annotation stack, and
// whether its launch is drawn in the window (so a launch flow ties them).
// Tests hold the real build against it, op by op.
#ifndef GPUCAP_TESTS_BUILDER_REFERENCE_JOIN_H_
#define GPUCAP_TESTS_BUILDER_REFERENCE_JOIN_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpucap/builder/capture_index.h"
#include "gpucap/status.h"

namespace gpucap::testing {

struct ReferenceOp {
  std::vector<std::string> stack;  // annotation stack, outermost first
  bool launch_in_window = false;   // drawn with its launch: a flow binds them
  bool operator==(const ReferenceOp&) const = default;
};

struct ReferenceWindow {
  std::string label;
  uint64_t start_ns = 0, end_ns = 0;  // CUPTI ns
  // By (correlation, graph node id or 0, GPU start).
  std::map<std::tuple<uint32_t, uint64_t, uint64_t>, ReferenceOp> ops;
};

// The windows `spec` yields for the capture behind `index`, with their ops;
// `steps` names the step ranges (empty: the default docs/semantics.md gives).
Result<std::vector<ReferenceWindow>> ReferenceJoin(const builder::CaptureIndex& index, const std::string& spec,
                                                   const std::string& steps = "");

// The same shape read back from the Chrome JSON the builder writes for each
// window (kernel, gpu_memcpy and gpu_memset events, their "annotation stack"
// and the ac2g flows that end on them); times mapped back to CUPTI ns.
Result<std::vector<ReferenceWindow>> BuiltWindows(const builder::CaptureIndex& index, const std::string& spec,
                                                  const std::string& steps = "");

// "" when equal, else each difference on a line.
std::string CompareWindows(const std::vector<ReferenceWindow>& want, const std::vector<ReferenceWindow>& got);

}  // namespace gpucap::testing

#endif  // GPUCAP_TESTS_BUILDER_REFERENCE_JOIN_H_
