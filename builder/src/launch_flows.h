// Launch flows (a launch -> each GPU op it started), made when a slice is
// described rather than stored per end. A window of millions of launches
// held two flow tables of 16-byte ends for them (the 20M-event bench
// window: ~200 MB through the whole streaming); the grouping they are
// derived from takes 12 bytes an op and 4 a launch. Private to the join.
#ifndef GPUCAP_BUILDER_SRC_LAUNCH_FLOWS_H_
#define GPUCAP_BUILDER_SRC_LAUNCH_FLOWS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "gpucap/builder/trace_model.h"

namespace gpucap::builder::join_internal {

struct Op;
struct ApiRef;

class LaunchFlows {
 public:
  // Groups the ops whose launch is in the window by launch, each group by
  // start (then by op index). An op with has_predecessor[op] set (a graph
  // op reached by dependency arrows) keeps its place in its group's
  // numbering but gets no launch flow. Returns the number of launch flows.
  uint64_t Build(std::span<const Op> ops, std::span<const ApiRef> apis, std::vector<bool> has_predecessor);
  // Where In and Out put what they return: one end, the common case,
  // without a vector. One per describing thread (a window's pieces are
  // described on several), so that In and Out only read the grouping.
  struct Ends {
    FlowEnd one;
    std::vector<FlowEnd> many;
  };
  // Op `op`'s flows in: `deps` (its dependency arrows), then its launch's
  // flow if it has one. Valid until the next In into `ends`.
  std::span<const FlowEnd> In(std::span<const Op> ops, uint32_t op, std::span<const FlowEnd> deps,
                              Ends* ends) const;
  // Launch `api`'s flows out, one per op in its group order. Valid until
  // the next Out into `ends`.
  std::span<const FlowEnd> Out(std::span<const Op> ops, uint32_t api, Ends* ends) const;
  // Gives back the grouping of a large window; a small one keeps its
  // memory for the next window.
  void Release();

 private:
  std::vector<uint32_t> begin_;  // launch -> first index into order_
  std::vector<uint32_t> order_;  // op indices, grouped by launch
  std::vector<uint32_t> rank_;   // op -> its place in its launch's group
  std::vector<bool> has_predecessor_;
  std::span<const ApiRef> apis_;
};

}  // namespace gpucap::builder::join_internal

#endif  // GPUCAP_BUILDER_SRC_LAUNCH_FLOWS_H_
