// Flow ends grouped by owner (an op or a launch), built from an edge list.
#ifndef GPUCAP_BUILDER_SRC_FLOW_TABLE_H_
#define GPUCAP_BUILDER_SRC_FLOW_TABLE_H_

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "gpucap/builder/trace_model.h"

namespace gpucap::builder {

class FlowTable {
 public:
  void Add(uint32_t owner, FlowEnd f) { edges_.push_back({owner, f}); }
  // A counting sort by owner: linear, and stable (ends keep insertion order).
  // The edge list is given back once built when it is large (a window of
  // millions of launches: 120 MB a table, held through the rest of the
  // join); a small one stays for the next window.
  void Build(size_t owners) {
    begin_.assign(owners + 1, 0);
    for (const auto& e : edges_) begin_[e.first + 1]++;
    for (size_t i = 0; i < owners; ++i) begin_[i + 1] += begin_[i];
    ends_.resize(edges_.size());
    // begin_[o] is owner o's cursor; once filled it has moved to where o + 1
    // begins, and a shift by one puts every start back.
    for (const auto& e : edges_) ends_[begin_[e.first]++] = e.second;
    for (size_t i = owners; i > 0; --i) begin_[i] = begin_[i - 1];
    begin_[0] = 0;
    if (edges_.capacity() * sizeof(edges_[0]) > kKeptBytes) {
      std::vector<std::pair<uint32_t, FlowEnd>>().swap(edges_);
    } else {
      edges_.clear();
    }
  }
  // Empties the table, keeping its memory for the next window.
  void Clear() {
    edges_.clear();
    begin_.clear();
    ends_.clear();
  }
  std::span<const FlowEnd> Of(uint32_t owner) const {
    if (owner + 1 >= begin_.size()) return {};
    return {ends_.data() + begin_[owner], begin_[owner + 1] - begin_[owner]};
  }
  size_t size() const { return ends_.size(); }

 private:
  std::vector<std::pair<uint32_t, FlowEnd>> edges_;
  std::vector<uint32_t> begin_;
  std::vector<FlowEnd> ends_;
  static constexpr size_t kKeptBytes = 16 << 20;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_SRC_FLOW_TABLE_H_
