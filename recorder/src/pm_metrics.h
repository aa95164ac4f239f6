// Which PM sampling metrics become counter tracks. Users (GPUCAP_PM_METRICS)
// and the defaults write them the same way:
//
//   [label=]metric[|alternative...]
//
// Chips name the same quantity differently (dram__ on one, dramc__ on
// another), so an entry may list alternatives, best first; the sampler takes
// the first one the chip knows. The label names the track; without one the
// track is named after the metric. Nothing here talks to CUPTI, so all of it
// is tested without a GPU.
#ifndef GPUCAP_RECORDER_PM_METRICS_H_
#define GPUCAP_RECORDER_PM_METRICS_H_

#include <functional>
#include <string>
#include <vector>

namespace gpucap::recorder {

struct PmMetricChoice {
  std::string label;                    // empty: the chosen metric's name
  std::vector<std::string> candidates;  // best first
  bool operator==(const PmMetricChoice&) const = default;
};

// A metric the sampler will collect, and the track it feeds.
struct PmMetric {
  std::string label;
  std::string name;
  bool operator==(const PmMetric&) const = default;
};

// SM active %, DRAM throughput %, tensor pipe active %: what a kernel
// timeline wants next to it, and few enough to fit one pass.
std::vector<std::string> DefaultPmMetricEntries();

// "a, b,,c" -> {"a", "b", "c"}: commas separate entries; blanks around an
// entry and empty entries are dropped.
std::vector<std::string> SplitPmMetricList(const std::string& text);

// Parses entries; an empty list means the defaults and the entry "default"
// stands for them among others. False, with *error naming the entry, when an
// entry has an empty label or metric name.
bool ParsePmMetricEntries(const std::vector<std::string>& entries,
                          std::vector<PmMetricChoice>* choices, std::string* error);

struct PmMetricResolution {
  std::vector<PmMetric> chosen;
  // One line per entry none of whose candidates the chip knows.
  std::vector<std::string> unavailable;
};

// Takes for each choice the first candidate `known` accepts. A metric that
// two entries resolve to is collected once, under the first entry's label.
PmMetricResolution ResolvePmMetrics(const std::vector<PmMetricChoice>& choices,
                                    const std::function<bool(const std::string&)>& known);

// The track's unit: "%" for percentages (the name says so: .pct,
// .pct_of_peak_*), otherwise the dimension CUPTI reports, if any.
std::string PmMetricUnit(const std::string& metric, const std::string& cupti_dim_unit);

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_PM_METRICS_H_
