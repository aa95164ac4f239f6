// SliceDescriber: turns the refs of a window's join (join_result.h) back into
// the slices they stand for: a slice's name, category, arguments and flows,
// as Kineto writes them (docs/cli.md, "Kineto's arguments").
//
// It reads the join's result and changes nothing in it, so that several
// describers, one per thread, may describe pieces of one window at once
// (piece_stream.h); what it makes (interned names, shared argument runs,
// per-slice scratch) is its own, and a slice it hands out points into it
// until the next Describe. With a JoinUse it also reports the lookups it
// makes (CUDA events waited on, metadata blobs, a collective's group-size
// range): only a describer of the whole window is given one.
//
// Each file holds one concern of describing:
//   join_args.cc            names, categories and arguments, per kind of ref
//   join_annotations.cc     an op's annotation stack, graph node, metadata
//   join_shared_runs.cc     argument runs shared from launch to launch (SharedRuns)
//   launch_details.cc       a kernel's channel, a stream's priority
//   collective_args.cc      an NCCL collective's sizes on its kernels
//   join_graph_launches.cc  a whole graph launch's name and arguments
//   join_host_nodes.cc      a graph host node's run
//   join_event_records.cc   a graph event record's run
//   graph_lanes.cc          a graph op's capture stream
//   join_report_use.cc      the range a collective's group size came from
// Private to the builder.
#ifndef GPUCAP_BUILDER_SRC_SLICE_DESCRIBER_H_
#define GPUCAP_BUILDER_SRC_SLICE_DESCRIBER_H_

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpucap/builder/join_use.h"
#include "gpucap/builder/trace_keys.h"
#include "gpucap/format/activity_kind.h"
#include "gpucap/format/cupti_layout.h"
#include "join_result.h"
#include "name_table.h"
#include "names.h"
#include "occupancy.h"
#include "piece_stream.h"
#include "rows_again.h"
#include "shared_runs.h"

namespace gpucap::builder::join_internal {

class SliceDescriber final : public Describer {
 public:
  // Reads `result` and the kernel and API rows of `rows` (the join's, or a
  // piece's own); `use`: null, or where the lookups it makes are reported.
  SliceDescriber(const JoinResult& result, WindowRows& rows, JoinUse* use)
      : r_(result), use_(use), kernels_(rows.kernels), api_rows_(rows.apis), runs_(result, rows.kernels, names_) {}

  // The slice `r` stands for; its args, names and flows are valid until the
  // next Describe.
  void Describe(const SliceRef& r, Slice* s) override;
  // The first failure of the rows had again (rows_again.h).
  const Status& status() const override {
    return !kernels_.status().ok() ? kernels_.status() : api_rows_.status();
  }

 private:
  // Per kind of ref with more to it than a name.
  void DescribeOp(const SliceRef& r, Slice& s);
  void DescribeApi(const SliceRef& r, Slice& s);
  void DescribeRange(const SliceRef& r, Slice& s);
  void OperatorArgs(uint32_t range, const TorchOperatorName& op, Slice& s);  // part of DescribeRange
  void CollectiveRangeArgs(uint32_t range);
  void DescribeMarker(const SliceRef& r, Slice& s);
  void DescribeHostNode(const SliceRef& r, Slice& s);
  void DescribeGraphEventRecord(const SliceRef& r, Slice& s);

  std::pair<uint32_t, std::string_view> KernelName(const Op& op);
  // Slice argument builders, into args_.
  void OpArgs(const Op& op);
  void ApiArgs(const ApiRef& api);
  void AnnotationArgs(const Op& op);
  void LaunchDetailArgs(const KernelTable& k, uint32_t row);  // launch_details.cc
  void StreamDetailArgs(uint32_t context_id, uint32_t stream_id);  // launch_details.cc
  void CollectiveArgs(const Op& op);                           // collective_args.cc
  void CaptureStreamArgs(const Op& op);  // a graph op's capture stream (graph_lanes.cc)
  // A graph launch's span (OpKind::kGraph): its name, and its args.
  std::pair<uint32_t, std::string_view> GraphLaunchName(const Op& op);
  void GraphLaunchArgs(const Op& op);
  // The range that `event` opens or closes, into use_ (join_report_use.cc).
  void UseRangeOfEvent(uint32_t event);

  const JoinResult& r_;  // its inputs too: the capture index, the window, its parts, the options
  JoinUse* use_;  // null: not asked for
  // Kernel and API rows as slices are written: the parts', or decoded again.
  RowsAgain<KernelTable>& kernels_;
  RowsAgain<ApiTable>& api_rows_;

  NameTable names_;
  std::vector<uint32_t> kernel_name_ids_;  // capture string -> name id, 0: not yet
  std::map<std::pair<bool, uint32_t>, std::pair<uint32_t, std::string_view>> api_names_;  // (driver, cbid)
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::pair<uint32_t, std::string_view>> memcpy_names_;
  SharedRuns runs_;  // after names_, which it interns into

  // Per-slice scratch: a fixed array, since pushing a dozen args per op
  // through a vector showed up in profiles.
  struct Args {
    std::array<Arg, 32> items;
    size_t n = 0;
    uint32_t shared_id = 0;  // see Slice::shared_id
    uint8_t shared_first = 0, shared_count = 0;
    void clear() {
      n = 0;
      shared_id = 0;
      shared_count = 0;
    }
    void push_back(const Arg& a) {
      if (n < items.size()) items[n++] = a;
    }
    std::span<const Arg> span() const { return {items.data(), n}; }
  } args_;
  LaunchFlows::Ends launch_ends_in_, launch_ends_out_;
  FlowEnd range_flow_in_, range_flow_out_;  // OperatorArgs' forward -> backward flow ends
  std::vector<uint32_t> collective_scratch_;
  std::vector<uint32_t> api_stack_scratch_;  // ApiArgs' LaunchExternalIdAt
  std::unordered_map<uint32_t, uint32_t> range_of_event_;  // filled on first UseRangeOfEvent
  std::string scratch_string_;
  std::string input_dims_;     // OperatorArgs' "Input Dims"
  char host_address_[24] = {};  // DescribeHostNode's "0x..." arg
};

}  // namespace gpucap::builder::join_internal

#endif  // GPUCAP_BUILDER_SRC_SLICE_DESCRIBER_H_
