#include "slice_order.h"

#include <algorithm>

namespace gpucap::builder {

uint64_t SortAndPackSlices(std::vector<SliceRef>* refs_ptr, TrackRegistry* tracks,
                           std::vector<uint32_t>* scratch) {
  std::vector<SliceRef>& refs_ = *refs_ptr;
  const size_t track_count = tracks->size();
  uint64_t added = 0;
  // By track (a counting sort), then each track by time; a track's slices
  // mostly arrive in order already, so check before sorting. What is sorted
  // is a permutation (4 bytes a slice), applied in place at the end: a
  // sorted copy of the refs (32 bytes a slice) was 320 MB of the 20M-event
  // bench's `all` window. `before` is a total order, so the result is the
  // one any sort gives.
  {
    const size_t n = refs_.size();
    std::vector<uint32_t> begin(track_count + 1, 0);
    for (const SliceRef& r : refs_) begin[r.track + 1]++;
    for (size_t i = 0; i < track_count; ++i) begin[i + 1] += begin[i];
    std::vector<uint32_t>& order = *scratch;
    order.resize(n);
    {
      std::vector<uint32_t> at(begin.begin(), begin.end() - 1);
      for (uint32_t i = 0; i < n; ++i) order[at[refs_[i].track]++] = i;
    }
    auto before = [&](uint32_t x, uint32_t y) {
      const SliceRef& a = refs_[x];
      const SliceRef& b = refs_[y];
      if (a.ts != b.ts) return a.ts < b.ts;
      if (a.dur != b.dur) return a.dur > b.dur;
      if (a.kind != b.kind) return a.kind < b.kind;
      if (a.depth != b.depth) return a.depth < b.depth;
      if (a.tie != b.tie) return a.tie < b.tie;
      return a.index < b.index;
    };
    for (size_t t = 0; t < track_count; ++t) {
      // Usually two sorted runs (ops, then the annotation spans over them).
      auto first = order.begin() + begin[t], last = order.begin() + begin[t + 1];
      auto run = std::is_sorted_until(first, last, before);
      if (run == last) continue;
      if (std::is_sorted(run, last, before)) {
        std::inplace_merge(first, run, last, before);
      } else {
        std::sort(first, last, before);
      }
    }
    // refs_[k] takes old refs_[order[k]], one cycle of the permutation at a
    // time; a slot done is marked kDone.
    constexpr uint32_t kDone = UINT32_MAX;
    for (uint32_t k = 0; k < n; ++k) {
      if (order[k] == kDone) continue;
      if (order[k] == k) {
        order[k] = kDone;
        continue;
      }
      SliceRef held = refs_[k];
      uint32_t j = k;
      while (order[j] != k) {
        uint32_t from = order[j];
        refs_[j] = refs_[from];
        order[j] = kDone;
        j = from;
      }
      refs_[j] = held;
      order[j] = kDone;
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
