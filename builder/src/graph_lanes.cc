// The track a GPU op is drawn on (docs/semantics.md, "Tracks of graph
// replays"). CUPTI runs a graph's nodes on streams of its own choosing (a
// graph captured on two streams and replayed on a third ran, on the H200, on
// one internal stream the program never created), so the stream in the
// records says little about the program. When the recorder noted the stream
// each node was captured on, a replayed op is drawn on a lane per (device,
// capture stream), named after that stream and listed right after it;
// CUPTI's stream stays in the op's "stream" argument. Everything else, and
// every op with --graph-lanes cupti, is drawn on CUPTI's stream, as Kineto
// draws it. Ops, their gpu_user_annotation spans and graph event records ask
// this file, so they cannot disagree.
#include "slice_describer.h"
#include "window_join.h"

namespace gpucap::builder::join_internal {

OpTrackKey JoinResult::TrackKeyOfNode(const GraphNode* origin, uint32_t device, uint32_t stream) const {
  if (options.graph_lanes == GraphLanes::kCapture && origin != nullptr &&
      origin->capture_stream != format::kNoCaptureStream) {
    return {device, origin->capture_stream, true};
  }
  return {device, stream, false};
}

OpTrackKey JoinResult::TrackKeyOf(const Op& op) const {
  // A whole graph launch (GRAPH_TRACE) has no node: it stays on its stream.
  return TrackKeyOfNode(op.kind == OpKind::kGraph ? nullptr : op.origin, op.device, op.stream);
}

uint32_t WindowJoin::TrackOf(const OpTrackKey& key) {
  return key.capture_lane ? r_.tracks.CaptureLaneTrack(key.device, key.stream)
                          : r_.tracks.StreamTrack(key.device, key.stream);
}

void SliceDescriber::CaptureStreamArgs(const Op& op) {
  // In both modes: with --graph-lanes cupti the track is CUPTI's, and this
  // still says where the program captured the node.
  if (op.origin == nullptr || op.origin->capture_stream == format::kNoCaptureStream) return;
  args_.push_back(Arg::Uint(trace_keys::kCaptureStream, op.origin->capture_stream));
}

}  // namespace gpucap::builder::join_internal
