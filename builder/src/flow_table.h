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
  void Build(size_t owners) {
    begin_.assign(owners + 1, 0);
    for (const auto& e : edges_) begin_[e.first + 1]++;
    for (size_t i = 0; i < owners; ++i) begin_[i + 1] += begin_[i];
    ends_.resize(edges_.size());
    at_.assign(begin_.begin(), begin_.end() - 1);
    for (const auto& e : edges_) ends_[at_[e.first]++] = e.second;
    edges_.clear();
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
  std::vector<uint32_t> at_;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_SRC_FLOW_TABLE_H_
