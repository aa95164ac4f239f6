#include "gpucap/builder/ranges.h"

#include <algorithm>
#include <map>
#include <tuple>

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
        r.name = e.name;
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
        r.closed = true;
        started.erase(it);
        break;
      }
      case RangeKind::kNameThread:
        // nvtxNameOsThread names the thread in `id`; a recorder that only
        // knows the calling thread leaves id 0.
        thread_names_[e.id != 0 ? static_cast<uint32_t>(e.id) : e.os_tid] = e.name;
        break;
      case RangeKind::kNameDomain:
        domain_names_[e.domain] = e.name;
        break;
      case RangeKind::kMark:
        marks_.push_back(i);
        break;
      case RangeKind::kNameCategory:
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

void RangeIndex::BuildEpochs() {
  stack_begin_ = {0, 0};  // the empty stack: [0, 0)
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
    for (size_t i = 0; i < bounds.size();) {
      uint64_t t = bounds[i].t;
      for (; i < bounds.size() && bounds[i].t == t; ++i) {
        const Boundary& b = bounds[i];
        if (b.open) {
          open.insert(std::upper_bound(open.begin(), open.end(), b.range), b.range);
        } else {
          auto it = std::lower_bound(open.begin(), open.end(), b.range);
          if (it != open.end() && *it == b.range) open.erase(it);
        }
      }
      uint32_t id = 0;
      if (!open.empty()) {
        id = static_cast<uint32_t>(stack_begin_.size() - 1);
        stack_pool_.insert(stack_pool_.end(), open.begin(), open.end());
        stack_begin_.push_back(static_cast<uint32_t>(stack_pool_.size()));
      }
      ep.times.push_back(t);
      ep.stacks.push_back(id);
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

std::span<const uint32_t> RangeIndex::Stack(uint32_t id) const {
  if (id == 0 || id + 1 >= stack_begin_.size()) return {};
  return std::span<const uint32_t>(stack_pool_.data() + stack_begin_[id],
                                   stack_begin_[id + 1] - stack_begin_[id]);
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
