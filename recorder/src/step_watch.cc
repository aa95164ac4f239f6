#include "step_watch.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <utility>

namespace gpucap::recorder {
namespace {

std::string Millis(uint64_t ns) {
  char text[32];
  snprintf(text, sizeof(text), "%.1f ms", static_cast<double>(ns) / 1e6);
  return text;
}

}  // namespace

std::string StepWatch::Family(const std::string& name) {
  std::string family;
  for (char c : name) {
    if (!std::isdigit(static_cast<unsigned char>(c))) family += c;
  }
  return family;
}

double StepWatch::Median(const std::deque<uint64_t>& durations) const {
  std::vector<uint64_t> v(durations.begin(), durations.end());
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  double upper = static_cast<double>(v[mid]);
  if (v.size() % 2) return upper;
  double lower = static_cast<double>(*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)));
  return (lower + upper) / 2;
}

void StepWatch::Observe(const StepEnd& step) {
  armed_ = true;
  if (step.end_ns >= last_end_ns_) {
    last_end_ns_ = step.end_ns;
    last_ = step;
  }
  if (!(o_.slow_factor > 0)) return;
  uint32_t window = std::max<uint32_t>(o_.slow_window, 1);
  std::deque<uint64_t>& h = history_[std::to_string(step.os_tid) + '\0' + Family(step.name)];
  if (h.size() >= window) {
    double median = Median(h);
    if (static_cast<double>(step.duration_ns) > o_.slow_factor * median) {
      ++slow_steps_;
      if (dumped_slow_ && step.end_ns < last_slow_dump_end_ns_ + o_.min_interval_ns) {
        ++suppressed_;
        ++suppressed_since_dump_;
      } else {
        char ratio[32];
        snprintf(ratio, sizeof(ratio), "%.1fx", median > 0 ? static_cast<double>(step.duration_ns) / median : 0.0);
        std::string trigger = "slow step: " + step.name + " took " + Millis(step.duration_ns) + ", " + ratio +
                              " the median " + Millis(static_cast<uint64_t>(median)) + " of the last " +
                              std::to_string(h.size()) + " on thread " + std::to_string(step.os_tid);
        if (suppressed_since_dump_) {
          trigger += "; " + std::to_string(suppressed_since_dump_) + " slow step" +
                     (suppressed_since_dump_ == 1 ? "" : "s") + " not dumped before it (rate limit)";
        }
        pending_.push_back({step.end_ns + o_.settle_ns, std::move(trigger)});
        dumped_slow_ = true;
        last_slow_dump_end_ns_ = step.end_ns;
        suppressed_since_dump_ = 0;
      }
    }
  }
  h.push_back(step.duration_ns);
  while (h.size() > window) h.pop_front();
}

std::vector<std::string> StepWatch::Poll(uint64_t now_ns) {
  std::vector<std::string> due;
  if (o_.hang_ns && armed_ && now_ns >= last_end_ns_ && now_ns - last_end_ns_ >= o_.hang_ns) {
    armed_ = false;
    char seconds[32];
    snprintf(seconds, sizeof(seconds), "%g", static_cast<double>(o_.hang_ns) / 1e9);
    due.push_back(std::string("hang: no step closed for ") + seconds + " s (the last, " + last_.name +
                  ", on thread " + std::to_string(last_.os_tid) + ")");
  }
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (now_ns >= it->due_ns) {
      due.push_back(std::move(it->trigger));
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  return due;
}

std::vector<std::string> StepWatch::TakePending() {
  std::vector<std::string> out;
  for (Pending& p : pending_) out.push_back(std::move(p.trigger));
  pending_.clear();
  return out;
}

}  // namespace gpucap::recorder
