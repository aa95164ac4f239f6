#include "pm_metrics.h"

#include <unordered_set>

namespace gpucap::recorder {
namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t from = 0;
  for (;;) {
    size_t at = text.find(sep, from);
    out.push_back(Trim(text.substr(from, at == std::string::npos ? std::string::npos : at - from)));
    if (at == std::string::npos) return out;
    from = at + 1;
  }
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool ParseEntry(const std::string& entry, PmMetricChoice* choice, std::string* error) {
  std::string names = entry;
  choice->label.clear();
  choice->candidates.clear();
  if (size_t eq = entry.find('='); eq != std::string::npos) {
    choice->label = Trim(entry.substr(0, eq));
    names = entry.substr(eq + 1);
    if (choice->label.empty()) {
      *error = "empty label in PM metric entry '" + entry + "'";
      return false;
    }
  }
  for (std::string& name : Split(names, '|')) {
    if (name.empty()) {
      *error = "empty metric name in PM metric entry '" + entry + "'";
      return false;
    }
    choice->candidates.push_back(std::move(name));
  }
  return true;
}

}  // namespace

std::vector<std::string> DefaultPmMetricEntries() {
  // Names from NVIDIA's PM sampling metric table and Nsight's GPU metrics.
  // The _realtime tensor metric is the one PM sampling offers; the plain
  // hmma one is the range profiler's and is only a last resort. On GH100
  // (pm_probe, a 512 MiB copy loop) dram__throughput read 78% while
  // dramc__throughput, which the chip also knows, read under 1%: the latter
  // is only a fallback for chips without the former.
  return {
      "SM active=sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
      "DRAM throughput=dram__throughput.avg.pct_of_peak_sustained_elapsed"
      "|dramc__throughput.avg.pct_of_peak_sustained_elapsed",
      "Tensor pipe active=sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed"
      "|sm__pipe_tensor_op_hmma_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed"
      "|sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
  };
}

std::vector<std::string> SplitPmMetricList(const std::string& text) {
  std::vector<std::string> out;
  for (std::string& e : Split(text, ',')) {
    if (!e.empty()) out.push_back(std::move(e));
  }
  return out;
}

bool ParsePmMetricEntries(const std::vector<std::string>& entries,
                          std::vector<PmMetricChoice>* choices, std::string* error) {
  choices->clear();
  const std::vector<std::string> defaults = DefaultPmMetricEntries();
  std::vector<std::string> expanded;
  for (const std::string& e : entries.empty() ? std::vector<std::string>{"default"} : entries) {
    if (Trim(e) == "default") {
      expanded.insert(expanded.end(), defaults.begin(), defaults.end());
    } else {
      expanded.push_back(e);
    }
  }
  for (const std::string& e : expanded) {
    PmMetricChoice c;
    if (!ParseEntry(Trim(e), &c, error)) return false;
    choices->push_back(std::move(c));
  }
  return true;
}

PmMetricResolution ResolvePmMetrics(const std::vector<PmMetricChoice>& choices,
                                    const std::function<bool(const std::string&)>& known) {
  PmMetricResolution r;
  std::unordered_set<std::string> taken;
  for (const PmMetricChoice& c : choices) {
    const std::string* pick = nullptr;
    for (const std::string& name : c.candidates) {
      if (known(name)) {
        pick = &name;
        break;
      }
    }
    if (!pick) {
      std::string line = (c.label.empty() ? std::string() : c.label + ": ") + "none of";
      for (const std::string& name : c.candidates) line += " " + name;
      r.unavailable.push_back(line + " is known to this chip");
      continue;
    }
    if (taken.insert(*pick).second) r.chosen.push_back({c.label.empty() ? *pick : c.label, *pick});
  }
  return r;
}

std::string PmMetricUnit(const std::string& metric, const std::string& cupti_dim_unit) {
  if (EndsWith(metric, ".pct") || metric.find(".pct_of_peak") != std::string::npos) return "%";
  return cupti_dim_unit;
}

}  // namespace gpucap::recorder
