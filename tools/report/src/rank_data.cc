// The ranks part of the report: what the rules of rank_steps.h find, as the
// page draws it, and the clocks' alignment per rank.
#include <algorithm>
#include <map>

#include "report_parts.h"

namespace gpucap::tools::report_internal {
namespace {

// The spread of one step over the ranks.
void WriteSpread(std::vector<int64_t> v, JsonOut* j) {
  std::sort(v.begin(), v.end());
  j->BeginObject()
      .Field("min_ns", v.empty() ? int64_t{0} : v.front())
      .Field("p50_ns", Percentile(v, 0.5))
      .Field("p90_ns", Percentile(v, 0.9))
      .Field("max_ns", v.empty() ? int64_t{0} : v.back())
      .EndObject();
}

}  // namespace

void WriteRanks(const std::vector<RankSummary>& captures, JsonOut* j) {
  RankFindings f = FindAcrossRanks(captures);
  const std::vector<std::string>& steps = f.steps;
  const std::vector<int>& straggler = f.straggler;
  auto rank_of = [&](size_t c) { return captures[c].rank >= 0 ? captures[c].rank : static_cast<int32_t>(c); };

  j->Key("ranks").BeginObject().Key("steps").BeginArray();
  for (const std::string& s : steps) j->String(s);
  j->EndArray().Key("rows").BeginArray();
  for (size_t c = 0; c < captures.size(); ++c) {
    j->BeginObject().Field("capture", static_cast<uint64_t>(c)).Field("rank", rank_of(c));
    j->Field("host", captures[c].host).Key("step_ns").BeginArray();
    for (const std::string& s : steps) j->Int(f.by_key[c].at(s)->dur_ns);
    j->EndArray().Key("communication_ns").BeginArray();
    for (const std::string& s : steps) j->Int(f.by_key[c].at(s)->communication_ns);
    j->EndArray().Key("wait_ns").BeginArray();
    for (size_t s = 0; s < steps.size(); ++s) j->Int(f.Wait(c, s));
    j->EndArray().EndObject();
  }
  // The straggler per step, as the capture's position (null: no NCCL in it).
  j->EndArray().Key("straggler").BeginArray();
  for (int s : straggler) {
    if (s < 0) j->Null();
    else j->Int(s);
  }
  j->EndArray();

  // Each step's spread over the ranks: what a chart of a thousand ranks
  // shows instead of a thousand bars.
  auto spread = [&](const char* key, auto value) {
    j->Key(key).BeginArray();
    for (size_t s = 0; s < steps.size(); ++s) {
      std::vector<int64_t> v;
      for (size_t c = 0; c < captures.size(); ++c) v.push_back(value(c, s));
      WriteSpread(std::move(v), j);
    }
    j->EndArray();
  };
  spread("step_spread", [&](size_t c, size_t s) { return f.Step(c, s).dur_ns; });
  spread("wait_spread", [&](size_t c, size_t s) { return f.Wait(c, s); });

  j->Key("slow_rank");
  if (f.slow < 0) {
    j->Null();
  } else {
    size_t slow = static_cast<size_t>(f.slow);
    j->BeginObject()
        .Field("capture", static_cast<uint64_t>(slow))
        .Field("rank", rank_of(slow))
        .Field("host", captures[slow].host)
        .Field("steps", static_cast<uint64_t>(f.straggled[slow]))
        .Field("of", static_cast<uint64_t>(std::count_if(straggler.begin(), straggler.end(), [](int s) { return s >= 0; })))
        .EndObject();
  }
  j->Key("longest_step");
  if (f.longest < 0) {
    j->Null();
  } else {
    size_t longest = static_cast<size_t>(f.longest);
    j->BeginObject()
        .Field("step", steps[longest])
        .Field("index", static_cast<uint64_t>(longest))
        .Field("median_ns", f.medians[longest])
        .Field("others_median_ns", f.others_median_ns);
    j->Key("ratio");
    if (f.others_median_ns > 0) {
      j->Double(static_cast<double>(f.medians[longest]) / static_cast<double>(f.others_median_ns), 2);
    } else {
      j->Null();
    }
    j->Key("straggler");
    if (straggler[longest] < 0) j->Null();
    else j->Int(straggler[longest]);
    j->EndObject();
  }
  j->EndObject();
}

void WriteClocks(const JobClocks& clocks, JsonOut* j) {
  j->Key("clocks").BeginObject();
  j->Field("reference", static_cast<uint64_t>(clocks.reference)).Field("hosts", static_cast<uint64_t>(clocks.hosts));
  j->Field("worst_residual_ns", clocks.worst_residual_ns).Field("worst", static_cast<uint64_t>(clocks.worst));
  j->Key("rows").BeginArray();
  for (const RankClock& rc : clocks.ranks) {
    j->BeginObject()
        .Field("rank", static_cast<int64_t>(rc.rank))
        .Field("host", rc.host)
        .Field("aligned", rc.aligned)
        .Field("matched", static_cast<uint64_t>(rc.matched))
        .Field("offset_ns", rc.offset_ns)
        .Field("origin_ns", rc.origin_ns);
    j->Key("drift_ppm").Double(rc.drift_ppm(), 3);
    j->Field("residual_max_ns", rc.residual_max_ns).Field("residual_rms_ns", rc.residual_rms_ns);
    if (!rc.note.empty()) j->Field("note", rc.note);
    j->EndObject();
  }
  j->EndArray().EndObject();
}

std::vector<size_t> NotableCaptures(const std::vector<RankSummary>& captures, size_t most) {
  std::vector<size_t> out;
  auto add = [&](size_t c) {
    if (out.size() < most && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  };
  size_t lowest = 0;
  for (size_t c = 1; c < captures.size(); ++c) {
    if (captures[c].rank >= 0 && (captures[lowest].rank < 0 || captures[c].rank < captures[lowest].rank)) lowest = c;
  }
  add(lowest);
  if (captures.size() > 1) {
    RankFindings f = FindAcrossRanks(captures);
    if (f.slow >= 0) add(static_cast<size_t>(f.slow));
    if (f.longest >= 0 && f.straggler[static_cast<size_t>(f.longest)] >= 0) {
      add(static_cast<size_t>(f.straggler[static_cast<size_t>(f.longest)]));
    }
    // Then the stragglers of the other steps, the most frequent first.
    std::vector<size_t> by_times;
    for (size_t c = 0; c < captures.size(); ++c) {
      if (f.straggled[c] > 0) by_times.push_back(c);
    }
    std::stable_sort(by_times.begin(), by_times.end(),
                     [&](size_t a, size_t b) { return f.straggled[a] > f.straggled[b]; });
    for (size_t c : by_times) add(c);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gpucap::tools::report_internal
