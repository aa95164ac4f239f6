// Across ranks: steps are matched by window label (a step is the window of
// the same label in every capture; unlabelled windows match by position).
// A collective kernel runs from the moment its rank reaches it until the
// last rank does, so within a step the rank with the least NCCL time is the
// one the others waited for: the straggler. Each rank's wait is its NCCL
// time past the straggler's.
#include <algorithm>
#include <map>

#include "report_parts.h"

namespace gpucap::tools::report_internal {
namespace {

std::string StepKey(const WindowStats& w, size_t position) {
  return w.window.label.empty() ? "#" + std::to_string(position) : w.window.label;
}

int64_t CommunicationNs(const GpuStats& s) {
  int64_t n = 0;
  for (const auto& [device, d] : s.devices) n += d.communication_ns;
  return n;
}

}  // namespace

void WriteRanks(const std::vector<CaptureData>& captures, JsonOut* j) {
  // Steps every capture has, in the first capture's order.
  std::vector<std::map<std::string, const WindowStats*>> by_key(captures.size());
  for (size_t c = 0; c < captures.size(); ++c) {
    const auto& ws = captures[c].stats.windows;
    for (size_t i = 0; i < ws.size(); ++i) by_key[c].emplace(StepKey(ws[i], i), &ws[i]);
  }
  std::vector<std::string> steps;
  const auto& first = captures.front().stats.windows;
  for (size_t i = 0; i < first.size(); ++i) {
    std::string key = StepKey(first[i], i);
    bool everywhere = std::all_of(by_key.begin(), by_key.end(), [&](const auto& m) { return m.count(key) > 0; });
    if (everywhere) steps.push_back(key);
  }
  std::vector<int64_t> least(steps.size(), INT64_MAX);
  std::vector<int> straggler(steps.size(), -1);
  for (size_t s = 0; s < steps.size(); ++s) {
    for (size_t c = 0; c < captures.size(); ++c) {
      int64_t n = CommunicationNs(by_key[c].at(steps[s])->stats);
      if (n > 0 && n < least[s]) {
        least[s] = n;
        straggler[s] = static_cast<int>(c);
      }
    }
  }
  j->Key("ranks").BeginObject().Key("steps").BeginArray();
  for (const std::string& s : steps) j->String(s);
  j->EndArray().Key("rows").BeginArray();
  for (size_t c = 0; c < captures.size(); ++c) {
    int32_t rank = captures[c].stats.rank;
    j->BeginObject().Field("capture", static_cast<uint64_t>(c)).Field("rank", rank >= 0 ? rank : static_cast<int32_t>(c));
    j->Key("step_ns").BeginArray();
    for (const std::string& s : steps) {
      const WindowStats* w = by_key[c].at(s);
      j->Int(w->end_ns - w->start_ns);
    }
    j->EndArray().Key("communication_ns").BeginArray();
    for (const std::string& s : steps) j->Int(CommunicationNs(by_key[c].at(s)->stats));
    j->EndArray().Key("wait_ns").BeginArray();
    for (size_t s = 0; s < steps.size(); ++s) {
      int64_t n = CommunicationNs(by_key[c].at(steps[s])->stats);
      j->Int(straggler[s] < 0 ? 0 : std::max<int64_t>(0, n - least[s]));
    }
    j->EndArray().EndObject();
  }
  // The straggler per step, as the capture's position (null: no NCCL in it).
  j->EndArray().Key("straggler").BeginArray();
  for (int s : straggler) {
    if (s < 0) j->Null();
    else j->Int(s);
  }
  j->EndArray().EndObject();
}

}  // namespace gpucap::tools::report_internal
