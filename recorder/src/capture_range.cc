#include "capture_range.h"

#include <cstdlib>

namespace gpucap::recorder {

using format::RecordingState;

bool ParseCaptureRange(const std::string& text, CaptureRangeSpec* spec, std::string* error) {
  if (text == "cudaProfilerApi") {
    spec->source = CaptureRangeSpec::Source::kProfilerApi;
    return true;
  }
  if (text.rfind("nvtx:", 0) == 0 && text.size() > 5) {
    spec->source = CaptureRangeSpec::Source::kNvtx;
    spec->pattern = text.substr(5);
    return true;
  }
  *error = "capture range '" + text + "' is neither nvtx:REGEX nor cudaProfilerApi";
  return false;
}

bool ParseCaptureRangeEnd(const std::string& text, CaptureRangeSpec* spec, std::string* error) {
  spec->end_given = true;
  if (text == "stop") {
    spec->end_after = 1;
    return true;
  }
  if (text == "repeat") {
    spec->end_after = 0;
    return true;
  }
  if (text.rfind("repeat:", 0) == 0) {
    char* end = nullptr;
    long n = std::strtol(text.c_str() + 7, &end, 10);
    if (end && *end == '\0' && end != text.c_str() + 7 && n >= 1 && n <= UINT32_MAX) {
      spec->end_after = static_cast<uint32_t>(n);
      return true;
    }
  }
  *error = "capture range end '" + text + "' is not stop, repeat or repeat:N (N >= 1)";
  return false;
}

CaptureGate::CaptureGate(CaptureRangeSpec spec) : spec_([&] {
  // Sampling and triggers are for long runs: unless told otherwise they
  // go on for every range, not just the first.
  if (!spec.end_given && (spec.sample_every > 1 || !spec.trigger_file.empty())) spec.end_after = 0;
  return spec;
}()),
      sample_(spec_.sample_every, spec_.sample_seed) {}

bool CaptureGate::WillRecord(uint64_t index) const {
  if (finished_) return false;
  if (armed_ > 0) return true;
  if (spec_.sample_every > 1) return sample_.Chosen(index);
  return spec_.trigger_file.empty();
}

CaptureGate::Decision CaptureGate::ArmFor(uint64_t index, const char* after) {
  early_ = true;
  Decision d;
  d.action = Action::kRecord;
  d.state = armed_ == 0 && spec_.sample_every > 1 ? RecordingState::kSampled : RecordingState::kRecording;
  d.why = std::string("armed ") + after + " for matching range #" + std::to_string(index);
  return d;
}

CaptureGate::Decision CaptureGate::Initial() {
  std::lock_guard<std::mutex> lock(mu_);
  return InitialLocked();
}

CaptureGate::Decision CaptureGate::Hold(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  held_ = true;
  Decision d;
  d.action = Action::kPause;
  d.why = why;
  return d;
}

CaptureGate::Decision CaptureGate::Release() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!held_) return {};
  held_ = false;
  return InitialLocked();
}

CaptureGate::Decision CaptureGate::InitialLocked() {
  if (spec_.arm_early && WillRecord(0)) return ArmFor(0, "at the start");
  Decision d;
  d.action = Action::kPause;
  d.why = spec_.source == CaptureRangeSpec::Source::kProfilerApi
              ? "waiting for cudaProfilerStart"
              : "waiting for an NVTX range matching '" + spec_.pattern + "'";
  if (!spec_.trigger_file.empty()) d.why += " and the trigger file " + spec_.trigger_file;
  return d;
}

CaptureGate::Decision CaptureGate::Open(const RangeKey& key, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (held_ || active_.load(std::memory_order_relaxed) || finished_) return {};
  uint64_t index = seen_++;
  if (!WillRecord(index)) {
    // Arming early: the range before a recorded one is watched for its end.
    if (spec_.arm_early && WillRecord(seen_)) {
      watching_ = true;
      active_key_ = key;
      active_name_ = name;
      active_.store(true, std::memory_order_release);
    }
    Decision d;
    d.ahead = WillRecord(seen_);
    d.ranges_seen = seen_;
    return d;
  }
  early_ = false;
  active_key_ = key;
  active_index_ = index;
  active_name_ = name;
  Decision d;
  d.action = Action::kRecord;
  d.label = name;
  d.range_index = index;
  std::string range = "range '" + name + "' (#" + std::to_string(index) + ")";
  if (armed_ > 0) {
    --armed_;
    active_trigger_ = true;
    d.state = RecordingState::kRecording;
    d.why = range + ": trigger file, " + std::to_string(armed_) + " more to record";
  } else if (spec_.sample_every > 1) {
    active_trigger_ = false;
    ++sampled_;
    d.state = RecordingState::kSampled;
    d.why = range + ": " + sample_.Describe() + ", sample " + std::to_string(sampled_);
  } else {
    active_trigger_ = false;
    d.state = RecordingState::kRecording;
    d.why = range + ": capture range";
  }
  active_.store(true, std::memory_order_release);
  return d;
}

CaptureGate::Decision CaptureGate::Close(const RangeKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!active_.load(std::memory_order_relaxed) || !(key == active_key_)) return {};
  active_.store(false, std::memory_order_release);
  active_trigger_ = false;
  if (watching_) {
    watching_ = false;
    if (WillRecord(seen_)) return ArmFor(seen_, "at the previous range's end");
    return {};
  }
  ++recorded_;
  Decision d;
  d.state = RecordingState::kPaused;
  if (spec_.end_after != 0 && recorded_ >= spec_.end_after) {
    finished_ = true;
    d.action = Action::kPauseAndStop;
    d.why = "capture range end: " + std::to_string(recorded_) + " range(s) recorded";
    return d;
  }
  if (spec_.arm_early && WillRecord(seen_)) return ArmFor(seen_, "at the previous range's end");
  d.action = Action::kPause;
  d.why = "range '" + active_name_ + "' ended";
  return d;
}

CaptureGate::Decision CaptureGate::Arm(uint32_t ranges, const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_ || ranges == 0) return {};
  armed_ += ranges;
  if (spec_.arm_early && !held_ && !active_.load(std::memory_order_relaxed) && !early_) {
    Decision d = ArmFor(seen_, "by the trigger");
    d.why = why + ": " + d.why;
    return d;
  }
  return {};
}

void CaptureGate::Dropped(const RangeKey& key, uint64_t index) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!active_.load(std::memory_order_relaxed) || watching_ || !(key == active_key_) || index != active_index_) {
    return;
  }
  active_.store(false, std::memory_order_release);
  if (active_trigger_) {
    ++armed_;
    active_trigger_ = false;
  } else if (spec_.sample_every > 1 && sampled_ > 0) {
    --sampled_;
  }
  ++dropped_;
}

uint64_t CaptureGate::ranges_dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

bool CaptureGate::trigger_busy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return armed_ > 0 || (active_.load(std::memory_order_relaxed) && active_trigger_);
}

uint64_t CaptureGate::ranges_seen() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_;
}

uint64_t CaptureGate::ranges_recorded() const {
  std::lock_guard<std::mutex> lock(mu_);
  return recorded_;
}

bool CaptureGate::finished() const {
  std::lock_guard<std::mutex> lock(mu_);
  return finished_;
}

}  // namespace gpucap::recorder
