#include "launch_flows.h"

#include <algorithm>

#include "gpucap/builder/trace_keys.h"
#include "join_rows.h"

namespace gpucap::builder::join_internal {

uint64_t LaunchFlows::Build(std::span<const Op> ops, std::span<const ApiRef> apis,
                            std::vector<bool> has_predecessor) {
  apis_ = apis;
  has_predecessor_ = std::move(has_predecessor);
  auto grouped = [&](const Op& op) { return op.api != kNone && apis[op.api].in_window; };
  // A counting sort: launch indices are dense. begin_[a] is launch a's
  // cursor while filling; once filled it has moved to where a + 1 begins,
  // and a shift by one puts every start back.
  begin_.assign(apis.size() + 1, 0);
  for (const Op& op : ops) {
    if (grouped(op)) begin_[op.api + 1]++;
  }
  for (size_t i = 0; i < apis.size(); ++i) begin_[i + 1] += begin_[i];
  order_.resize(begin_.back());
  for (uint32_t i = 0; i < ops.size(); ++i) {
    if (grouped(ops[i])) order_[begin_[ops[i].api]++] = i;
  }
  for (size_t i = apis.size(); i > 0; --i) begin_[i] = begin_[i - 1];
  begin_[0] = 0;
  rank_.resize(ops.size());
  uint64_t flows = 0;
  for (size_t a = 0; a < apis.size(); ++a) {
    uint32_t b = begin_[a], e = begin_[a + 1];
    if (e - b > 1) {
      std::sort(order_.begin() + b, order_.begin() + e, [&](uint32_t x, uint32_t y) {
        return ops[x].start != ops[y].start ? ops[x].start < ops[y].start : x < y;
      });
    }
    for (uint32_t p = b; p < e; ++p) {
      rank_[order_[p]] = p - b;
      flows += has_predecessor_[order_[p]] ? 0 : 1;
    }
  }
  return flows;
}

std::span<const FlowEnd> LaunchFlows::In(std::span<const Op> ops, uint32_t op, std::span<const FlowEnd> deps,
                                         Ends* ends) const {
  const Op& o = ops[op];
  if (o.api == kNone || !apis_[o.api].in_window || has_predecessor_[op]) return deps;
  // A launch with several ops (a graph launch) starts one flow per op:
  // importers bind one start to one end. The ordinal is the op's place
  // among its launch's ops by start.
  FlowEnd f{trace_keys::LaunchFlowId(o.correlation, rank_[op]), FlowKind::kLaunch};
  if (deps.empty()) {
    ends->one = f;
    return {&ends->one, 1};
  }
  ends->many.assign(deps.begin(), deps.end());
  ends->many.push_back(f);
  return ends->many;
}

std::span<const FlowEnd> LaunchFlows::Out(std::span<const Op> ops, uint32_t api, Ends* ends) const {
  if (api + 1 >= begin_.size()) return {};
  uint32_t b = begin_[api], e = begin_[api + 1];
  if (e - b == 1) {
    if (has_predecessor_[order_[b]]) return {};
    ends->one = {trace_keys::LaunchFlowId(ops[order_[b]].correlation, 0), FlowKind::kLaunch};
    return {&ends->one, 1};
  }
  ends->many.clear();
  for (uint32_t p = b; p < e; ++p) {
    uint32_t op = order_[p];
    if (!has_predecessor_[op]) {
      ends->many.push_back({trace_keys::LaunchFlowId(ops[op].correlation, p - b), FlowKind::kLaunch});
    }
  }
  return ends->many;
}

void LaunchFlows::Release() {
  if (order_.capacity() + begin_.capacity() > (4u << 20)) {
    std::vector<uint32_t>().swap(begin_);
    std::vector<uint32_t>().swap(order_);
    std::vector<uint32_t>().swap(rank_);
    std::vector<bool>().swap(has_predecessor_);
  }
}

}  // namespace gpucap::builder::join_internal
