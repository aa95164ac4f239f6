#include "slice_order.h"

#include <algorithm>

namespace gpucap::builder {

uint64_t SortAndPackSlices(std::vector<SliceRef>* refs_ptr, TrackRegistry* tracks,
                           std::vector<SliceRef>* scratch) {
  std::vector<SliceRef>& refs_ = *refs_ptr;
  const size_t track_count = tracks->size();
  uint64_t added = 0;
  // By track (a counting sort), then each track by time; a track's slices
  // mostly arrive in order already, so check before sorting.
  {
    std::vector<uint32_t> begin(track_count + 1, 0);
    for (const SliceRef& r : refs_) begin[r.track + 1]++;
    for (size_t i = 0; i < track_count; ++i) begin[i + 1] += begin[i];
    std::vector<SliceRef>& sorted = *scratch;
    sorted.resize(refs_.size());
    std::vector<uint32_t> at(begin.begin(), begin.end() - 1);
    for (const SliceRef& r : refs_) sorted[at[r.track]++] = r;
    refs_.swap(sorted);
    auto before = [](const SliceRef& a, const SliceRef& b) {
      if (a.ts != b.ts) return a.ts < b.ts;
      if (a.dur != b.dur) return a.dur > b.dur;
      if (a.kind != b.kind) return a.kind < b.kind;
      if (a.depth != b.depth) return a.depth < b.depth;
      if (a.tie != b.tie) return a.tie < b.tie;
      return a.index < b.index;
    };
    for (size_t t = 0; t < track_count; ++t) {
      // Usually two sorted runs (ops, then the annotation spans over them).
      auto first = refs_.begin() + begin[t], last = refs_.begin() + begin[t + 1];
      auto run = std::is_sorted_until(first, last, before);
      if (run == last) continue;
      if (std::is_sorted(run, last, before)) {
        std::inplace_merge(first, run, last, before);
      } else {
        std::sort(first, last, before);
      }
    }
  }
  // Each lane is a stack of open slice ends. A slice goes to the first lane
  // where it nests (starts after the top ends, or ends within it).
  std::vector<std::vector<int64_t>> lanes;
  std::vector<uint32_t> lane_tracks;
  for (size_t i = 0; i < refs_.size();) {
    uint32_t track = refs_[i].track;
    lanes.assign(1, {});
    lane_tracks.assign(1, track);
    for (; i < refs_.size() && refs_[i].track == track; ++i) {
      SliceRef& r = refs_[i];
      if (r.dur < 0) continue;  // instants nest anywhere
      int64_t end = r.ts + r.dur;
      size_t lane = 0;
      for (;; ++lane) {
        if (lane == lanes.size()) {
          lanes.emplace_back();
          lane_tracks.push_back(tracks->LaneTrack(track, lane));
          added++;
        }
        std::vector<int64_t>& stack = lanes[lane];
        while (!stack.empty() && stack.back() <= r.ts) stack.pop_back();
        if (stack.empty() || end <= stack.back()) {
          stack.push_back(end);
          break;
        }
      }
      r.track = lane_tracks[lane];
    }
  }
  return added;
}

}  // namespace gpucap::builder
