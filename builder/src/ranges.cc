#include "gpucap/builder/ranges.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "gpucap/builder/budgets.h"

namespace gpucap::builder {

using format::RangeEvent;
using format::RangeKind;

RangeIndex::RangeIndex(const format::Capture& capture, uint64_t capture_end) {
  // Events arrive batched per producer, so sort by time before pairing; a
  // stable sort keeps a thread's push-then-pop at one timestamp in order.
  std::vector<uint32_t> order(capture.ranges.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return capture.ranges[a].timestamp_ns < capture.ranges[b].timestamp_ns;
  });

  std::map<std::pair<uint32_t, uint64_t>, std::vector<size_t>> push_stacks;  // (tid, domain)
  std::unordered_map<uint64_t, size_t> started;                              // start/end id
  for (uint32_t i : order) {
    const RangeEvent& e = capture.ranges[i];
    switch (e.kind) {
      case RangeKind::kPush:
      case RangeKind::kStart: {
        Range r;
        r.start_ns = e.timestamp_ns;
        r.end_ns = 0;
        r.os_tid = e.os_tid;
        r.event = i;
        r.domain = e.domain;
        r.push_pop = e.kind == RangeKind::kPush;
        r.closed = false;
        r.name = TruncateName(e.name, &cut_names_);
        ranges_.push_back(r);
        if (r.push_pop) {
          push_stacks[{e.os_tid, e.domain}].push_back(ranges_.size() - 1);
        } else {
          started[e.id] = ranges_.size() - 1;
        }
        break;
      }
      case RangeKind::kPop: {
        auto& stack = push_stacks[{e.os_tid, e.domain}];
        if (stack.empty()) {
          unmatched_ends_++;
          break;
        }
        Range& r = ranges_[stack.back()];
        r.end_ns = e.timestamp_ns;
        r.end_event = i;
        r.closed = true;
        stack.pop_back();
        break;
      }
      case RangeKind::kEnd: {
        auto it = started.find(e.id);
        if (it == started.end()) {
          unmatched_ends_++;
          break;
        }
        Range& r = ranges_[it->second];
        r.end_ns = e.timestamp_ns;
        r.end_event = i;
        r.closed = true;
        started.erase(it);
        break;
      }
      case RangeKind::kNameThread:
        // nvtxNameOsThread names the thread in `id`; a recorder that only
        // knows the calling thread leaves id 0.
        thread_names_[e.id != 0 ? static_cast<uint32_t>(e.id) : e.os_tid] = TruncateName(e.name, &cut_labels_);
        break;
      case RangeKind::kNameDomain:
        domain_names_[e.domain] = TruncateName(e.name, &cut_labels_);
        break;
      case RangeKind::kMark:
        marks_.push_back(i);
        break;
      case RangeKind::kNameCategory:
      case RangeKind::kPayloadSchema:
      case RangeKind::kPayloadEnum:
        break;
    }
  }
  for (Range& r : ranges_) {
    if (!r.closed) {
      unclosed_++;
      r.end_ns = std::max(capture_end, r.start_ns);
    }
  }
  std::stable_sort(ranges_.begin(), ranges_.end(), [](const Range& a, const Range& b) {
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    return a.end_ns > b.end_ns;
  });
  BuildEpochs();
}

uint32_t RangeIndex::Push(uint32_t stack, uint32_t range) {
  nodes_.push_back({range, stack, nodes_[stack].depth + 1});
  return static_cast<uint32_t>(nodes_.size() - 1);
}

uint32_t RangeIndex::Ancestor(uint32_t stack, uint32_t depth) const {
  while (nodes_[stack].depth > depth) stack = nodes_[stack].parent;
  return stack;
}

void RangeIndex::BuildEpochs() {
  nodes_ = {{kNone, 0, 0}};  // the empty stack
  // Boundaries per thread: at equal times ends go first, so a launch at the
  // instant one range ends and the next begins sits in the next one only.
  struct Boundary {
    uint64_t t;
    bool open;
    uint32_t range;
  };
  std::map<uint32_t, std::vector<Boundary>> by_thread;
  for (uint32_t i = 0; i < ranges_.size(); ++i) {
    const Range& r = ranges_[i];
    // Open at no instant ([t, t)); with ends first at equal times its end
    // would pass before its start and leave it open for good (the reference
    // join found it: a push and pop in one ns).
    if (r.end_ns == r.start_ns) continue;
    by_thread[r.os_tid].push_back({r.start_ns, true, i});
    by_thread[r.os_tid].push_back({r.end_ns, false, i});
  }
  for (auto& [tid, bounds] : by_thread) {
    std::stable_sort(bounds.begin(), bounds.end(), [](const Boundary& a, const Boundary& b) {
      if (a.t != b.t) return a.t < b.t;
      return !a.open && b.open;
    });
    Epochs& ep = epochs_[tid];
    std::vector<uint32_t> open;  // range indices, kept in ranges_ order = outermost first
    uint32_t stack = 0;          // the node for `open`
    // Re-roots the stack's part from `depth` on after a change inside it;
    // changes at the top (nearly all) touch one node.
    auto rebuild_from = [&](size_t depth) {
      stack = Ancestor(stack, static_cast<uint32_t>(depth));
      for (size_t k = depth; k < open.size(); ++k) stack = Push(stack, open[k]);
    };
    for (size_t i = 0; i < bounds.size();) {
      uint64_t t = bounds[i].t;
      for (; i < bounds.size() && bounds[i].t == t; ++i) {
        const Boundary& b = bounds[i];
        auto it = std::lower_bound(open.begin(), open.end(), b.range);
        size_t at = static_cast<size_t>(it - open.begin());
        if (b.open) {
          if (open.size() >= kMaxRangeDepth) {
            too_deep_++;
            continue;
          }
          open.insert(it, b.range);
          if (at + 1 == open.size()) {
            stack = Push(stack, b.range);
          } else {
            rebuild_from(at);
          }
        } else if (it != open.end() && *it == b.range) {
          open.erase(it);
          if (at == open.size()) {
            stack = nodes_[stack].parent;
          } else {
            rebuild_from(at);
          }
        }
      }
      ep.times.push_back(t);
      ep.stacks.push_back(stack);
    }
  }
}

uint32_t RangeIndex::StackIdAt(uint32_t tid, uint64_t t) const {
  auto it = epochs_.find(tid);
  if (it == epochs_.end()) return 0;
  const Epochs& ep = it->second;
  auto pos = std::upper_bound(ep.times.begin(), ep.times.end(), t);
  if (pos == ep.times.begin()) return 0;
  return ep.stacks[(pos - ep.times.begin()) - 1];
}

uint32_t RangeIndex::Innermost(uint32_t stack_id) const {
  return stack_id < nodes_.size() ? nodes_[stack_id].range : kNone;
}

void RangeIndex::Stack(uint32_t stack_id, std::vector<uint32_t>* out) const {
  out->clear();
  if (stack_id >= nodes_.size()) return;
  out->resize(nodes_[stack_id].depth);
  for (uint32_t n = stack_id, k = nodes_[stack_id].depth; k > 0; n = nodes_[n].parent) out->at(--k) = nodes_[n].range;
}

std::string_view RangeIndex::ThreadName(uint32_t tid) const {
  auto it = thread_names_.find(tid);
  return it == thread_names_.end() ? std::string_view() : it->second;
}

std::string_view RangeIndex::DomainName(uint64_t domain) const {
  auto it = domain_names_.find(domain);
  return it == domain_names_.end() ? std::string_view() : it->second;
}

}  // namespace gpucap::builder
