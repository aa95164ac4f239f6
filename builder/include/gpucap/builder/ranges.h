// NVTX and gpucap API ranges rebuilt from the capture's range events, and the
// question the join asks of them: which ranges were open on thread T at time
// t? Push/pop ranges nest per (thread, domain); start/end ranges are matched
// by id across threads and count as open on the thread that started them.
#ifndef GPUCAP_BUILDER_RANGES_H_
#define GPUCAP_BUILDER_RANGES_H_

#include <cstdint>
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

  // The ranges open on `tid` at `t` (start <= t < end), outermost first, as
  // indices into ranges(). The same id means the same stack.
  uint32_t StackIdAt(uint32_t tid, uint64_t t) const;
  std::span<const uint32_t> Stack(uint32_t stack_id) const;
  std::span<const uint32_t> StackAt(uint32_t tid, uint64_t t) const {
    return Stack(StackIdAt(tid, t));
  }

  // Names given through nvtxNameOsThread / nvtxDomainCreate; empty if none.
  std::string_view ThreadName(uint32_t tid) const;
  std::string_view DomainName(uint64_t domain) const;

  // Mark events (Capture::ranges indices), by time.
  const std::vector<uint32_t>& marks() const { return marks_; }

  uint64_t unmatched_ends() const { return unmatched_ends_; }
  uint64_t unclosed() const { return unclosed_; }

 private:
  struct Epochs {  // a thread's stack changes, by time
    std::vector<uint64_t> times;
    std::vector<uint32_t> stacks;
  };
  void BuildEpochs();

  std::vector<Range> ranges_;
  std::vector<uint32_t> stack_pool_;
  std::vector<uint32_t> stack_begin_;  // stack id -> offset; id 0 is the empty stack
  std::unordered_map<uint32_t, Epochs> epochs_;
  std::unordered_map<uint32_t, std::string_view> thread_names_;
  std::unordered_map<uint64_t, std::string_view> domain_names_;
  std::vector<uint32_t> marks_;
  uint64_t unmatched_ends_ = 0;
  uint64_t unclosed_ = 0;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_RANGES_H_
