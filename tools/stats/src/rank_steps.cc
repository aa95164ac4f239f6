#include "gpucap/tools/stats/rank_steps.h"

#include <algorithm>
#include <cmath>

namespace gpucap::tools {
namespace {

int64_t CommunicationNs(const GpuStats& s) {
  int64_t n = 0;
  for (const auto& [device, d] : s.devices) n += d.communication_ns;
  return n;
}

}  // namespace

int64_t Percentile(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t i = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, i == 0 ? 0 : i - 1)];
}

int64_t Median(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return Percentile(v, 0.5);
}

RankSummary Summarize(const CaptureStats& stats) {
  RankSummary r;
  r.rank = stats.rank;
  r.host = stats.host;
  for (size_t i = 0; i < stats.windows.size(); ++i) {
    const WindowStats& w = stats.windows[i];
    r.steps.push_back({w.window.label.empty() ? "#" + std::to_string(i) : w.window.label, w.end_ns - w.start_ns,
                       CommunicationNs(w.stats)});
  }
  return r;
}

RankFindings FindAcrossRanks(const std::vector<RankSummary>& captures) {
  RankFindings f;
  // Steps every capture has, in the first capture's order.
  f.by_key.resize(captures.size());
  for (size_t c = 0; c < captures.size(); ++c) {
    for (const RankSummary::Step& s : captures[c].steps) f.by_key[c].emplace(s.key, &s);
  }
  for (const RankSummary::Step& s : captures.front().steps) {
    bool everywhere =
        std::all_of(f.by_key.begin(), f.by_key.end(), [&](const auto& m) { return m.count(s.key) > 0; });
    if (everywhere) f.steps.push_back(s.key);
  }
  std::vector<int64_t>& least = f.least;
  std::vector<int>& straggler = f.straggler;
  least.assign(f.steps.size(), INT64_MAX);
  straggler.assign(f.steps.size(), -1);
  for (size_t s = 0; s < f.steps.size(); ++s) {
    for (size_t c = 0; c < captures.size(); ++c) {
      int64_t n = f.Step(c, s).communication_ns;
      if (n > 0 && n < least[s]) {
        least[s] = n;
        straggler[s] = static_cast<int>(c);
      }
    }
  }
  // The slow rank: the straggler of the most steps (the first capture of
  // those tied).
  f.straggled.assign(captures.size(), 0);
  for (int s : straggler) {
    if (s >= 0) f.straggled[static_cast<size_t>(s)]++;
  }
  size_t slow = std::max_element(f.straggled.begin(), f.straggled.end()) - f.straggled.begin();
  if (f.straggled[slow] > 0) f.slow = static_cast<int>(slow);
  // The longest step, by its median over the ranks, against the other
  // steps' median.
  for (size_t s = 0; s < f.steps.size(); ++s) {
    std::vector<int64_t> v;
    for (size_t c = 0; c < captures.size(); ++c) v.push_back(f.Step(c, s).dur_ns);
    f.medians.push_back(Median(std::move(v)));
  }
  if (!f.steps.empty()) {
    f.longest = static_cast<int>(std::max_element(f.medians.begin(), f.medians.end()) - f.medians.begin());
    std::vector<int64_t> others;
    for (size_t s = 0; s < f.medians.size(); ++s) {
      if (static_cast<int>(s) != f.longest) others.push_back(f.medians[s]);
    }
    f.others_median_ns = others.empty() ? 0 : Median(others);
  }
  return f;
}

int64_t RankFindings::Wait(size_t capture, size_t step) const {
  return straggler[step] < 0 ? 0 : std::max<int64_t>(0, Step(capture, step).communication_ns - least[step]);
}

}  // namespace gpucap::tools
