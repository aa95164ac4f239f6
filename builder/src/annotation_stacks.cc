#include "gpucap/builder/annotation_stacks.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

namespace gpucap::builder {

std::string DefaultStepPattern(const format::Capture& capture) {
  std::string pattern(kKinetoStepPattern);
  if (!capture.session) return pattern;
  std::string marked;
  for (const auto& [key, value] : capture.session->options) {
    if (key == "GPUCAP_WINDOW_NVTX") marked = value;
    // An NVTX capture range marks its ranges as windows when no
    // --window-nvtx names others (recorder/src/config.cc).
    if (key == "GPUCAP_CAPTURE_RANGE" && marked.empty() && value.rfind("nvtx:", 0) == 0) marked = value.substr(5);
  }
  if (marked.empty() || !NameMatcher::Compile(marked).ok()) return pattern;
  return "(?:" + pattern + ")|(?:" + marked + ")";
}

std::string_view ShownStepName(std::string_view recorded) {
  std::optional<TorchOperatorName> scope = ParseTorchRangeName(recorded);
  return scope && !IsTorchOperatorName(scope->name) ? scope->name : recorded;
}

bool MatchesRangeName(const NameMatcher& pattern, std::string_view recorded) {
  if (pattern.Matches(recorded)) return true;
  // A record_function step under emit_nvtx is "train_step, op_id = 5": the
  // pattern takes the name the trace shows (torch_operators.h), a prefix of
  // the recorded one when they differ.
  std::string_view shown = ShownStepName(recorded);
  return shown.size() != recorded.size() && pattern.Matches(shown);
}

bool RepeatedSteps::Repeats(uint32_t os_tid, uint64_t start_ns, uint64_t end_ns, std::string_view recorded) {
  std::string_view shown = ShownStepName(recorded);
  std::vector<Taken>& open = open_[os_tid];
  while (!open.empty() && open.back().end_ns < start_ns) open.pop_back();
  for (const Taken& t : open) {
    if (t.shown == shown && end_ns <= t.end_ns) return true;
  }
  open.push_back(Taken{end_ns, shown});
  return false;
}

StepRanges::StepRanges(const RangeIndex& ranges, const format::Capture& capture, const NameMatcher& steps)
    : ranges_(ranges) {
  const std::vector<Range>& all = ranges.ranges();
  is_step_.assign(all.size(), false);
  // Names repeat (an operator's range opens thousands of times): each
  // distinct name is matched once.
  std::unordered_map<std::string_view, bool> matched;
  RepeatedSteps repeated;
  for (uint32_t i = 0; i < all.size(); ++i) {
    if (!all[i].closed) continue;  // a step never closed covers nothing we know of, like any such range
    std::string_view name = capture.ranges[all[i].event].name;  // as recorded, not as cut for display
    auto [it, inserted] = matched.try_emplace(name, false);
    if (inserted) it->second = MatchesRangeName(steps, name);
    if (it->second && !repeated.Repeats(all[i], name)) {
      is_step_[i] = true;
      steps_.push_back(i);  // ranges() is by start already
    }
  }
  uint64_t m = 0;
  for (uint32_t s : steps_) {
    m = std::max(m, all[s].end_ns);
    max_end_.push_back(m);
  }
}

uint32_t StepRanges::OpenAt(uint64_t t, uint32_t tid) const {
  const std::vector<Range>& all = ranges_.ranges();
  auto pos = std::upper_bound(steps_.begin(), steps_.end(), t,
                              [&](uint64_t v, uint32_t s) { return v < all[s].start_ns; });
  // Back from the latest step starting at or before t, while an earlier one
  // could still be open (its running max end is past t).
  for (size_t i = pos - steps_.begin(); i-- > 0 && max_end_[i] > t;) {
    const Range& r = all[steps_[i]];
    if (r.end_ns > t && r.os_tid != tid) return steps_[i];
  }
  return kNone;
}

bool StepRanges::Holds(uint32_t step, uint32_t tid, uint64_t t, std::vector<uint32_t>* scratch) const {
  ranges_.Stack(ranges_.StackIdAt(tid, t), scratch);
  bool has_step = false;
  for (uint32_t r : *scratch) {
    if (r == step) return true;
    has_step = has_step || IsStep(r);
  }
  return !has_step && OpenAt(t, tid) == step;
}

AnnotationStacks::AnnotationStacks(const RangeIndex& ranges, const StepRanges& steps,
                                   const TorchOperators& operators)
    : ranges_(ranges), steps_(steps), operators_(operators) {}

uint32_t AnnotationStacks::RootStep(uint32_t tid, uint64_t t, const std::vector<uint32_t>& own) const {
  bool has_step = std::any_of(own.begin(), own.end(), [&](uint32_t r) { return steps_.IsStep(r); });
  return has_step ? StepRanges::kNone : steps_.OpenAt(t, tid);
}

uint32_t AnnotationStacks::At(uint32_t tid, uint64_t t) {
  uint32_t base = ranges_.StackIdAt(tid, t);
  ranges_.Stack(base, &own_);
  const std::vector<uint32_t>& own = own_;
  uint32_t step = RootStep(tid, t, own);
  uint64_t key = uint64_t{base} << 32 | step;
  if (key == last_key_) return last_id_;
  auto [it, inserted] = ids_.try_emplace(key, 0);
  if (inserted) {
    size_t from = pool_.size();
    if (step != StepRanges::kNone) pool_.push_back(step);
    const std::vector<Range>& all = ranges_.ranges();
    for (uint32_t r : own) {
      if (all[r].closed) pool_.push_back(r);
    }
    if (pool_.size() == from) {
      it->second = 0;
    } else {
      it->second = static_cast<uint32_t>(begin_.size() - 1);
      begin_.push_back(static_cast<uint32_t>(pool_.size()));
    }
  }
  last_key_ = key;
  last_id_ = it->second;
  return it->second;
}

std::span<const uint32_t> AnnotationStacks::Stack(uint32_t id) const {
  if (id == 0 || id + 1 >= begin_.size()) return {};
  return std::span<const uint32_t>(pool_.data() + begin_[id], begin_[id + 1] - begin_[id]);
}

bool AnnotationStacks::Contains(uint32_t id, uint32_t range) const {
  std::span<const uint32_t> s = Stack(id);
  return std::find(s.begin(), s.end(), range) != s.end();
}

}  // namespace gpucap::builder

namespace gpucap::builder {

uint32_t AnnotationStacks::Innermost(uint32_t id) const {
  std::span<const uint32_t> s = Stack(id);
  return s.empty() ? RangeIndex::kNone : s.back();
}

uint32_t AnnotationStacks::InnermostAt(uint32_t tid, uint64_t t, std::vector<uint32_t>* scratch) const {
  ranges_.Stack(ranges_.StackIdAt(tid, t), scratch);
  // At's stack is the step range (when the thread has none open), then the
  // thread's closed ranges: the innermost is the last closed one, else the step.
  const std::vector<Range>& all = ranges_.ranges();
  for (auto r = scratch->rbegin(); r != scratch->rend(); ++r) {
    if (all[*r].closed) return *r;
  }
  uint32_t step = RootStep(tid, t, *scratch);
  return step == StepRanges::kNone ? RangeIndex::kNone : step;
}

uint32_t AnnotationStacks::Owner(uint32_t id) const {
  std::span<const uint32_t> s = Stack(id);
  if (!operators_.empty()) {
    for (auto r = s.rbegin(); r != s.rend(); ++r) {
      if (operators_.Of(*r) != nullptr) return *r;
    }
  }
  return s.empty() ? RangeIndex::kNone : s.back();
}

uint32_t AnnotationStacks::OwnerAt(uint32_t tid, uint64_t t, std::vector<uint32_t>* scratch) const {
  if (!operators_.empty()) {
    // Operators are never steps, so the thread's own closed ranges hold
    // every operator At's stack would.
    ranges_.Stack(ranges_.StackIdAt(tid, t), scratch);
    const std::vector<Range>& all = ranges_.ranges();
    for (auto r = scratch->rbegin(); r != scratch->rend(); ++r) {
      if (all[*r].closed && operators_.Of(*r) != nullptr) return *r;
    }
  }
  return InnermostAt(tid, t, scratch);
}

uint32_t AnnotationStacks::LaunchingAnnotation(std::span<const uint32_t> stack) const {
  for (auto r = stack.rbegin(); r != stack.rend(); ++r) {
    if (operators_.Of(*r) != nullptr) continue;
    // A step gets no GPU-side slice even where it launched ops itself
    // (Kineto would draw one): HTA and TensorBoard take every event named
    // like a step for one, so a GPU-side ProfilerStep#N counts the step
    // twice and shifts their step numbers.
    return steps_.IsStep(*r) ? RangeIndex::kNone : *r;
  }
  return RangeIndex::kNone;
}

size_t AnnotationStacks::MergedStack(uint32_t outer, uint32_t inner, std::vector<uint32_t>* out) const {
  std::span<const uint32_t> a = Stack(outer);
  out->assign(a.begin(), a.end());
  for (uint32_t r : Stack(inner)) {
    if (std::find(a.begin(), a.end(), r) == a.end()) out->push_back(r);
  }
  return a.size();
}

}  // namespace gpucap::builder
