// NVTX and gpucap API ranges rebuilt from the capture's range events, and the
// question the join asks of them: which ranges were open on thread T at time
// t? Push/pop ranges nest per (thread, domain); start/end ranges are matched
// by id across threads and count as open on the thread that started them.
#ifndef GPUCAP_BUILDER_RANGES_H_
#define GPUCAP_BUILDER_RANGES_H_

#include <cstdint>
#include <deque>
#include <string>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpucap/format/capture.h"

namespace gpucap::builder {

struct Range {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;       // the capture's end when never closed
  uint32_t os_tid = 0;       // the thread that opened it
  uint32_t event = 0;        // index of the opening event in Capture::ranges
  uint32_t end_event = UINT32_MAX;  // of the closing one; UINT32_MAX when never closed
  uint64_t domain = 0;
  bool push_pop = true;      // false: start/end
  bool closed = true;
  std::string_view name;     // into the capture
};

class RangeIndex {
 public:
  // `capture_end` closes ranges left open when the recording stopped.
  RangeIndex(const format::Capture& capture, uint64_t capture_end);

  // By start time, then longest first (outer before inner at equal starts).
  const std::vector<Range>& ranges() const { return ranges_; }

  static constexpr uint32_t kNone = UINT32_MAX;

  // The ranges open on `tid` at `t` (start <= t < end), as a stack id; the
  // same id means the same stack, 0 the empty one. Stacks share their outer
  // parts (a tree of ranges), so memory grows with pushes, not with depth
  // times pushes; nesting deeper than kMaxRangeDepth is not followed.
  uint32_t StackIdAt(uint32_t tid, uint64_t t) const;
  // The innermost range of a stack, or kNone for the empty stack.
  uint32_t Innermost(uint32_t stack_id) const;
  // A stack's ranges, outermost first, as indices into ranges().
  void Stack(uint32_t stack_id, std::vector<uint32_t>* out) const;
  std::vector<uint32_t> StackAt(uint32_t tid, uint64_t t) const {
    std::vector<uint32_t> out;
    Stack(StackIdAt(tid, t), &out);
    return out;
  }

  // Names given through nvtxNameOsThread / nvtxDomainCreate; empty if none.
  std::string_view ThreadName(uint32_t tid) const;
  std::string_view DomainName(uint64_t domain) const;

  // Mark events (Capture::ranges indices), by time.
  const std::vector<uint32_t>& marks() const { return marks_; }

  uint64_t unmatched_ends() const { return unmatched_ends_; }
  uint64_t unclosed() const { return unclosed_; }
  // Ranges opened deeper than kMaxRangeDepth (not parents of what they hold),
  // and names cut to kMaxNameBytes.
  uint64_t too_deep() const { return too_deep_; }
  uint64_t cut_names() const { return cut_names_.size(); }

 private:
  struct Epochs {  // a thread's stack changes, by time
    std::vector<uint64_t> times;
    std::vector<uint32_t> stacks;
  };
  void BuildEpochs();

  struct StackNode {
    uint32_t range;   // innermost range of this stack
    uint32_t parent;  // the stack without it; node 0 is the empty stack
    uint32_t depth;
  };
  uint32_t Push(uint32_t stack, uint32_t range);
  uint32_t Ancestor(uint32_t stack, uint32_t depth) const;

  std::vector<Range> ranges_;
  std::vector<StackNode> nodes_;  // stack id -> node
  std::deque<std::string> cut_names_;  // names over the budget, cut, with the marker
  std::deque<std::string> cut_labels_;  // thread and domain names over the budget, cut
  std::unordered_map<uint32_t, Epochs> epochs_;
  std::unordered_map<uint32_t, std::string_view> thread_names_;
  std::unordered_map<uint64_t, std::string_view> domain_names_;
  std::vector<uint32_t> marks_;
  uint64_t unmatched_ends_ = 0;
  uint64_t unclosed_ = 0;
  uint64_t too_deep_ = 0;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_RANGES_H_
