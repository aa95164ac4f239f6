// Annotation stacks: the ranges open when an op was launched (or, for a
// graph replay, when its node was captured), as spans on the GPU tracks and
// as the op's "annotation" argument.
#include "slice_describer.h"
#include "window_join.h"

namespace gpucap::builder::join_internal {

std::span<const uint32_t> JoinResult::StackOf(const Op& op, std::vector<uint32_t>* scratch) const {
  // Launch-time ranges outside, capture-time ranges inside; a range open at
  // both times (a whole-run range) appears once.
  stacks.MergedStack(op.launch_stack, op.capture_stack, scratch);
  // The stack does not depend on the window (docs/semantics.md): an op of
  // another thread is in a step's window through the step rule, not by
  // having the window's range put on top of its own.
  return *scratch;
}

void WindowJoin::CollectAnnotationSpans() {
  struct Key {
    uint32_t range, device, stream, replay;
    bool capture_lane;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = (uint64_t{k.range} << 32 | k.stream) * 0x9e3779b97f4a7c15ull + k.capture_lane;
      return static_cast<size_t>(h ^ (uint64_t{k.device} << 40 | k.replay) * 0xc2b2ae3d27d4eb4full);
    }
  };
  std::unordered_map<Key, uint32_t, KeyHash> spans;
  // Consecutive ops mostly share stacks and stream; reuse the last lookup.
  struct Last {
    uint32_t launch = kNone, capture = kNone, device = kNone, stream = kNone, replay = kNone;
    bool capture_lane = false;
    std::vector<uint32_t> spans;
    std::vector<uint32_t> stack;
  } last;
  for (const Op& op : r_.ops) {
    if (op.kind == OpKind::kSync || (op.launch_stack == 0 && op.capture_stack == 0)) continue;
    uint32_t replay = op.capture_stack != 0 ? op.correlation : 0;
    // Spans sit on the track their ops are drawn on.
    OpTrackKey track = r_.TrackKeyOf(op);
    if (last.launch != op.launch_stack || last.capture != op.capture_stack || last.device != track.device ||
        last.stream != track.stream || last.capture_lane != track.capture_lane || last.replay != replay) {
      last = Last{op.launch_stack, op.capture_stack, track.device, track.stream, replay, track.capture_lane, {},
                  std::move(last.stack)};
      uint8_t depth = 0;
      auto add = [&](uint32_t range, uint32_t key_replay) {
        auto [it, inserted] = spans.try_emplace(Key{range, track.device, track.stream, key_replay, track.capture_lane},
                                                static_cast<uint32_t>(r_.spans.size()));
        if (inserted) {
          r_.spans.push_back({range, track.device, track.stream, key_replay, op.start, op.end, depth,
                              track.capture_lane});
        }
        last.spans.push_back(it->second);
        depth++;
      };
      std::vector<uint32_t>& stack = last.stack;
      size_t launched = r_.stacks.MergedStack(op.launch_stack, op.capture_stack, &stack);
      if (options_.gpu_ranges == GpuRanges::kAll) {
        for (size_t k = 0; k < stack.size(); ++k) add(stack[k], k < launched ? 0 : replay);
      } else {
        // Kineto draws a GPU-side slice for the user annotation the launch
        // ran in, not for the ranges around that one (a step's slice would
        // stretch over the next step's host side, where its ops queue).
        uint32_t range = r_.stacks.LaunchingAnnotation(stack);
        if (range != RangeIndex::kNone) {
          size_t k = std::find(stack.begin(), stack.end(), range) - stack.begin();
          add(range, k < launched ? 0 : replay);
        }
      }
    }
    for (uint32_t s : last.spans) {
      r_.spans[s].start = std::min(r_.spans[s].start, op.start);
      r_.spans[s].end = std::max(r_.spans[s].end, op.end);
    }
  }
}

void SliceDescriber::AnnotationArgs(const Op& op) {
  const SharedRuns::SharedRun& run = runs_.For(op);
  if (run.id != 0 && run.n != 0) {
    args_.shared_id = run.id;
    args_.shared_first = static_cast<uint8_t>(args_.n);
    args_.shared_count = run.n;
  }
  for (uint8_t i = 0; i < run.n; ++i) args_.push_back(run.args[i]);
  uint64_t graph_node = r_.GraphNodeOf(op, kernels_);
  if (graph_node != 0) {
    args_.push_back(Arg::Uint(trace_keys::kGraphNode, graph_node));
    if (op.origin != nullptr) {
      args_.push_back(Arg::Uint(trace_keys::kGraph, op.origin->graph_id));
      args_.push_back(Arg::Uint(trace_keys::kCaptureNode, op.origin->id));
      CaptureStreamArgs(op);
    }
  }
  const GraphIndex::Dependencies* deps = r_.Dependencies(op);
  if (deps != nullptr && !deps->host_functions.empty()) {
    args_.push_back(Arg::Strings(trace_keys::kAfterHostFunctions, deps->host_functions));
  }
  // The application's own descriptions of this op (a collective's size, a
  // layer's shape), keyed the ways the recorder lets it key them.
  // An op shows what fits in its arguments: the rest of a key's blobs are
  // neither drawn nor reported as used (trim keeps the drawn prefix), so a
  // capture of many blobs per key costs each op at most the args it has
  // room for, not one entry per blob.
  auto blobs = [&](format::MetadataKey kind, uint64_t key) {
    for (const format::MetadataBlob* b : r_.index.Metadata(kind, key)) {
      if (args_.n >= args_.items.size()) break;
      args_.push_back(Arg::String(b->name, b->data).Foreign());
      if (use_ != nullptr) use_->metadata.push_back(static_cast<uint32_t>(b - r_.index.capture().metadata.data()));
    }
  };
  blobs(format::MetadataKey::kCorrelationId, op.correlation);
  uint32_t innermost = r_.stacks.Innermost(op.launch_stack);
  if (innermost != RangeIndex::kNone) blobs(format::MetadataKey::kRange, innermost);
  if (uint64_t external = r_.ExternalId(op.correlation)) blobs(format::MetadataKey::kExternalId, external);
  if (graph_node != 0) {
    blobs(format::MetadataKey::kGraphNode, graph_node);
    if (op.origin != nullptr && op.origin->id != graph_node) blobs(format::MetadataKey::kGraphNode, op.origin->id);
  }
}

}  // namespace gpucap::builder::join_internal
