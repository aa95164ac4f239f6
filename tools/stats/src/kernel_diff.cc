#include "gpucap/tools/stats/kernel_diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "gpucap/tools/json/json_out.h"

namespace gpucap::tools {
namespace {

double ChangePct(int64_t a, int64_t b) {
  if (a == 0) return b == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return 100.0 * static_cast<double>(b - a) / static_cast<double>(a);
}

bool Regressed(int64_t a, int64_t b, const DiffOptions& o) {
  return b - a > o.min_delta_ns && ChangePct(a, b) > o.threshold_pct;
}

std::string Pct(double pct) {
  if (std::isinf(pct)) return "new";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%+.1f%%", pct);
  return buf;
}

std::string Us(int64_t ns, bool sign = false) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), sign ? "%+.3f" : "%.3f", static_cast<double>(ns) / 1000.0);
  return buf;
}

const char* MetricName(DiffOptions::Metric m) { return m == DiffOptions::Metric::kTotal ? "total" : "mean"; }

}  // namespace

KernelDiff DiffKernels(const GpuStats& a, const GpuStats& b, const DiffOptions& o) {
  KernelDiff d;
  std::set<std::string> names;
  for (const auto& [n, v] : a.kernels) names.insert(n);
  for (const auto& [n, v] : b.kernels) names.insert(n);
  auto value = [&](const Durations* x) -> int64_t {
    if (x == nullptr) return 0;
    return o.metric == DiffOptions::Metric::kTotal ? x->total : x->Mean();
  };
  for (const std::string& n : names) {
    auto ia = a.kernels.find(n);
    auto ib = b.kernels.find(n);
    const Durations* da = ia == a.kernels.end() ? nullptr : &ia->second;
    const Durations* db = ib == b.kernels.end() ? nullptr : &ib->second;
    KernelDelta k;
    k.name = n;
    k.count_a = da ? da->count : 0;
    k.count_b = db ? db->count : 0;
    k.value_a = value(da);
    k.value_b = value(db);
    k.change_pct = ChangePct(k.value_a, k.value_b);
    k.past = Regressed(k.value_a, k.value_b, o) || (o.counts && k.count_a != k.count_b);
    d.past += k.past;
    d.kernels.push_back(std::move(k));
  }
  std::stable_sort(d.kernels.begin(), d.kernels.end(), [](const KernelDelta& x, const KernelDelta& y) {
    if (x.past != y.past) return x.past;
    return std::llabs(x.delta()) > std::llabs(y.delta());
  });
  d.kernel_ns_a = a.KernelNs();
  d.kernel_ns_b = b.KernelNs();
  // Summed time compares runs of one length; per launch, the kernels say it.
  d.total_past = o.metric == DiffOptions::Metric::kTotal && Regressed(d.kernel_ns_a, d.kernel_ns_b, o);
  return d;
}

std::string DiffText(const KernelDiff& d, const DiffOptions& o, size_t top) {
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof(buf), "kernel time: %.3f ms -> %.3f ms (%s)\n\n", d.kernel_ns_a / 1e6, d.kernel_ns_b / 1e6,
                Pct(ChangePct(d.kernel_ns_a, d.kernel_ns_b)).c_str());
  out += buf;
  std::string metric = MetricName(o.metric);
  std::vector<std::vector<std::string>> rows = {
      {"", "Count A", "Count B", metric + " A (us)", metric + " B (us)", "Delta (us)", "Change", "Name"}};
  size_t shown = 0;
  for (const KernelDelta& k : d.kernels) {
    if (top > 0 && shown == top) break;
    shown++;
    rows.push_back({k.past ? "!" : "", std::to_string(k.count_a), std::to_string(k.count_b), Us(k.value_a),
                    Us(k.value_b), Us(k.delta(), true), Pct(k.change_pct), k.name});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      std::string pad(width[c] - r[c].size(), ' ');
      line += c + 1 == r.size() ? r[c] : (c == 0 ? r[c] + pad : pad + r[c]) + "  ";
    }
    out += line + "\n";
  }
  if (shown < d.kernels.size()) out += "... " + std::to_string(d.kernels.size() - shown) + " more (--top)\n";
  std::snprintf(buf, sizeof(buf), "\nthreshold: %s time up by more than %.1f%% and %s us%s\n", metric.c_str(),
                o.threshold_pct, Us(o.min_delta_ns).c_str(), o.counts ? ", or any count changed" : "");
  out += buf;
  if (d.Past()) {
    out += "PAST THE THRESHOLD: " + std::to_string(d.past) + " kernel(s)";
    if (d.total_past) out += ", and the total kernel time";
    out += "\n";
  } else {
    out += "within the threshold\n";
  }
  return out;
}

std::string DiffJson(const KernelDiff& d, const DiffOptions& o) {
  JsonOut j;
  j.BeginObject()
      .Field("metric", MetricName(o.metric))
      .Key("threshold_pct").Double(o.threshold_pct, 3)
      .Field("min_delta_ns", o.min_delta_ns)
      .Field("counts", o.counts)
      .Field("kernel_ns_a", d.kernel_ns_a)
      .Field("kernel_ns_b", d.kernel_ns_b)
      .Field("total_past", d.total_past)
      .Field("past", static_cast<uint64_t>(d.past));
  j.Key("kernels").BeginArray();
  for (const KernelDelta& k : d.kernels) {
    j.BeginObject()
        .Field("name", k.name)
        .Field("count_a", k.count_a)
        .Field("count_b", k.count_b)
        .Field("ns_a", k.value_a)
        .Field("ns_b", k.value_b)
        .Field("delta_ns", k.delta());
    j.Key("change_pct");
    if (std::isinf(k.change_pct)) j.Null(); else j.Double(k.change_pct, 3);
    j.Field("past", k.past).EndObject();
  }
  j.EndArray().EndObject();
  return j.Take();
}

Result<double> ParsePercent(const std::string& text) {
  std::string t = text;
  if (!t.empty() && t.back() == '%') t.pop_back();
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !std::isfinite(v) || v < 0) {
    return Status::InvalidArgument("'" + text + "' is not a percentage (e.g. 10 or 2.5%)");
  }
  return v;
}

}  // namespace gpucap::tools
