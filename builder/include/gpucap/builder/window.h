// Windows are chosen when a trace is built, not when it was recorded:
//
//   all                  the whole capture
//   marks                the recorder's window marks: open/close pairs by id,
//                        and the spans between instant marks
//   range:START:END      absolute CUPTI ns, or relative to the capture's start
//                        with a sign and a unit: +1.5s:+2s, +250ms:+300ms
//   every:DURATION       back-to-back windows of DURATION (e.g. 100ms)
//   nvtx:REGEX           one window per NVTX/API range whose whole name matches
//                        (RE2 syntax: name_matcher.h), e.g. nvtx:ProfilerStep#\d+
//
// A window is [start, end) in CUPTI ns; a row belongs to the window holding
// its start. For the windows that stand for a piece of the program's work
// (nvtx ranges, record-time marks), a GPU op's start is its launch: a
// ProfilerStep window holds the work launched in that step, which the GPU
// runs after the step's CPU range has closed. Time windows (all, range,
// every) hold the GPU ops that started in them. A selection ("2,5-7") keeps
// some windows by index.
#ifndef GPUCAP_BUILDER_WINDOW_H_
#define GPUCAP_BUILDER_WINDOW_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpucap/builder/ranges.h"
#include "gpucap/format/capture.h"
#include "gpucap/status.h"

namespace gpucap::builder {

struct Window {
  uint32_t index = 0;  // position among all windows the spec yields
  std::string label;   // mark label or range name; empty for range/every
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  bool ops_by_launch = false;  // GPU ops belong to it by their launch time
  // nvtx windows: the range (index in RangeIndex::ranges()) the window is,
  // and the spec's pattern. The window holds the ops its range's thread
  // launched inside it and those that threads with no range of the pattern
  // open launched while it was open (the step rule, annotation_stacks.h).
  uint32_t range = kNoRange;
  std::string pattern;
  static constexpr uint32_t kNoRange = UINT32_MAX;
  bool Contains(uint64_t t) const { return t >= start_ns && t < end_ns; }
  bool operator==(const Window&) const = default;
};

// A time in a spec: absolute ns, or ns after the capture's start.
struct SpecTime {
  bool relative = false;
  uint64_t ns = 0;
};

struct WindowSpec {
  enum class Kind { kAll, kMarks, kRange, kEvery, kNvtx };
  Kind kind = Kind::kAll;
  SpecTime start, end;   // kRange
  uint64_t every_ns = 0; // kEvery
  std::string pattern;   // kNvtx
  std::string text;      // as given
};

Result<WindowSpec> ParseWindowSpec(std::string_view text);

// "1.5s", "250ms", "10us", "42ns", "42" (ns) -> ns. Exact for decimal input.
Result<uint64_t> ParseDuration(std::string_view text);

// "2,5-7" -> {2, 5, 6, 7}; sorted, without duplicates.
Result<std::vector<uint32_t>> ParseSelection(std::string_view text);

// The span of everything timed in a capture: activity chunks, ranges, graph
// events, marks, the session's start and the trailer's end.
struct CaptureExtent {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;  // inclusive: the latest plausible timestamp seen
  uint64_t implausible = 0;  // timestamps left out (PlausibleTime)
};
CaptureExtent ComputeExtent(const format::Capture& capture);
// Whether `t` can be a time of a capture anchored at `anchor` (its start; 0:
// unknown): below 2^63 and within kMaxPlausibleSpanNs of the anchor.
bool PlausibleTime(uint64_t anchor, uint64_t t);

// The windows `spec` yields for a capture, by start time (ties: longer
// first), indexed 0, 1, ...
Result<std::vector<Window>> ResolveWindows(const WindowSpec& spec, const format::Capture& capture,
                                           const CaptureExtent& extent, const RangeIndex& ranges);

// Keeps the windows whose index is in `selection` (all when empty); an index
// past the last window is an error.
Result<std::vector<Window>> SelectWindows(std::vector<Window> windows,
                                          const std::vector<uint32_t>& selection);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_WINDOW_H_
