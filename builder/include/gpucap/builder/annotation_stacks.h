// An op's annotation stack, by the rules of docs/semantics.md, over the
// per-thread stacks RangeIndex keeps:
//
//   - a range never closed is in no stack (we know when it began, not what it
//     covered: allreduce's NCCL ncclCommInitRankConfig, whose pop is lost);
//   - the step rule: when the launching thread has no step range open, the
//     step range open then on another thread of the process roots its stack
//     (PyTorch's autograd thread launches the backward pass while the main
//     thread is in step N, and Kineto counts it in that step).
//
// Which ranges are steps is the build's word, a pattern of whole names
// (JoinOptions::steps, `--steps`); DefaultStepPattern says what it is when
// nobody said. The same rule, with the window's own pattern, decides which
// ops an nvtx:REGEX window holds (window.h).
//
// StepRanges is derived once per capture and pattern (CaptureIndex::Steps);
// AnnotationStacks hands out stack ids for one window's join (ids valid
// while it lives).
#ifndef GPUCAP_BUILDER_ANNOTATION_STACKS_H_
#define GPUCAP_BUILDER_ANNOTATION_STACKS_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpucap/builder/name_matcher.h"
#include "gpucap/builder/ranges.h"
#include "gpucap/builder/torch_operators.h"
#include "gpucap/format/capture.h"

namespace gpucap::builder {

// Kineto's step ranges: torch.profiler's ProfilerStep#<n>.
inline constexpr std::string_view kKinetoStepPattern = R"(ProfilerStep#\d+)";

// The steps of a capture when the build names none: Kineto's, and the ranges
// the recorder was told mark windows (`gpucap record --window-nvtx REGEX`,
// or an NVTX capture range), which is how a user names their steps at
// record time. A record-time pattern RE2 does not take is left out.
std::string DefaultStepPattern(const format::Capture& capture);

// Whether a step or window pattern takes a range: its whole name as
// recorded, or as the trace shows it (an emit_nvtx user scope's, without
// the suffix). The one rule for --steps and nvtx:REGEX windows.
bool MatchesRangeName(const NameMatcher& pattern, std::string_view recorded);

// A range's name as the trace shows it: an emit_nvtx user scope's without
// its suffix ("train#3, op_id = 7" -> "train#3"); any other name as recorded.
std::string_view ShownStepName(std::string_view recorded);

// One step marked twice. Under emit_nvtx, PyTorch's record_function("train#3")
// is an NVTX range "train#3, op_id = 7"; a program that also pushes "train#3"
// itself (so that tools without emit_nvtx see it) has two nested ranges for
// one step. A range that a pattern takes, inside an earlier taken range of
// the same thread with the same name as shown, is that step again: it makes
// no step and no window of its own (otherwise each step would be two
// windows, and the other threads' work of the step, autograd's backward,
// would go to the inner one). Ranges are visited in start order
// (RangeIndex::ranges()), and only those the pattern takes.
class RepeatedSteps {
 public:
  // Whether `r`, named `recorded`, repeats the step its thread is in; when
  // it does not, it becomes the thread's step to compare later ones with.
  bool Repeats(const Range& r, std::string_view recorded) { return Repeats(r.os_tid, r.start_ns, r.end_ns, recorded); }
  // The same for a window the recorder marked (`--window-nvtx`: it marks
  // both ranges of a step marked twice) on thread `os_tid`.
  bool Repeats(uint32_t os_tid, uint64_t start_ns, uint64_t end_ns, std::string_view recorded);

 private:
  struct Taken {
    uint64_t end_ns;
    std::string_view shown;
  };
  // By thread: the taken ranges still open at the last start visited,
  // outermost first.
  std::unordered_map<uint32_t, std::vector<Taken>> open_;
};

class StepRanges {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  // The closed ranges whose whole name, as recorded, `steps` matches.
  StepRanges(const RangeIndex& ranges, const format::Capture& capture, const NameMatcher& steps);

  bool empty() const { return steps_.empty(); }
  bool IsStep(uint32_t range) const { return range < is_step_.size() && is_step_[range]; }
  // The closed step range open at `t` (start <= t < end) on a thread other
  // than `tid`, the latest-starting if several; kNone if none.
  uint32_t OpenAt(uint64_t t, uint32_t tid) const;
  // Whether step `step` holds a launch on `tid` at `t`: it is open on that
  // thread then, or the thread has no step of its own open and `step` is
  // the one OpenAt gives. `scratch` is the caller's.
  bool Holds(uint32_t step, uint32_t tid, uint64_t t, std::vector<uint32_t>* scratch) const;

 private:
  const RangeIndex& ranges_;
  std::vector<bool> is_step_;      // by range index
  std::vector<uint32_t> steps_;    // step range indices, by start
  std::vector<uint64_t> max_end_;  // max end over steps_[0..i]
};

class AnnotationStacks {
 public:
  // `operators`: which ranges are PyTorch operators (Owner's question).
  AnnotationStacks(const RangeIndex& ranges, const StepRanges& steps, const TorchOperators& operators);

  // The stack of thread `tid` at `t`; 0 is the empty stack.
  uint32_t At(uint32_t tid, uint64_t t);
  // Range indices (RangeIndex::ranges()), outermost first.
  std::span<const uint32_t> Stack(uint32_t id) const;
  bool Contains(uint32_t id, uint32_t range) const;
  // The innermost range of a stack; RangeIndex::kNone for the empty one.
  uint32_t Innermost(uint32_t id) const;
  // Innermost(At(tid, t)) without making the stack an id: for threads that
  // describe slices side by side (`scratch` is the caller's).
  uint32_t InnermostAt(uint32_t tid, uint64_t t, std::vector<uint32_t>* scratch) const;
  // `outer`'s ranges, then those of `inner` not already in it (a graph
  // replay: launch-time stack outside, capture-time stack inside; a range
  // open at both times appears once). Returns how many came from `outer`.
  size_t MergedStack(uint32_t outer, uint32_t inner, std::vector<uint32_t>* out) const;
  // The range whose "External id" a launch in the stack takes, as Kineto
  // gives a launch its innermost operator's id: the innermost operator
  // range, else the innermost range (standing in for an operator when the
  // program marked none). RangeIndex::kNone for the empty stack.
  uint32_t Owner(uint32_t id) const;
  // Owner(At(tid, t)) without making the stack an id (`scratch`: the caller's).
  uint32_t OwnerAt(uint32_t tid, uint64_t t, std::vector<uint32_t>* scratch) const;
  // The range a GPU-side user annotation is drawn for, for ops launched
  // under `stack` (outermost first): Kineto's, the innermost range that is
  // not an operator (the user annotation the launch ran in); kNone if none,
  // or if that range is a step (steps are never drawn on the GPU side).
  uint32_t LaunchingAnnotation(std::span<const uint32_t> stack) const;

 private:
  // The step rule: the step range that roots the stack of thread `tid` at
  // `t`, whose own ranges are `own`; StepRanges::kNone when it has a step
  // of its own or none is open elsewhere.
  uint32_t RootStep(uint32_t tid, uint64_t t, const std::vector<uint32_t>& own) const;

  const RangeIndex& ranges_;
  const StepRanges& steps_;
  const TorchOperators& operators_;
  std::vector<uint32_t> own_;  // scratch: the thread's own stack
  std::unordered_map<uint64_t, uint32_t> ids_;  // (base id, step) -> id
  std::vector<uint32_t> pool_;
  std::vector<uint32_t> begin_{0, 0};  // id -> offset; id 0 is the empty stack
  uint64_t last_key_ = UINT64_MAX;
  uint32_t last_id_ = 0;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_ANNOTATION_STACKS_H_
