#include "gpucap/tools/stats/stats_table.h"

#include <algorithm>
#include <cstdio>

#include "gpucap/tools/json/json_out.h"

namespace gpucap::tools {
namespace {

using Unit = Column::Unit;

double Percent(int64_t part, int64_t whole) { return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0; }

template <typename T>
void Limit(std::vector<T>* rows, size_t top, size_t* left_out) {
  if (top > 0 && rows->size() > top) {
    *left_out = rows->size() - top;
    rows->resize(top);
  }
}

std::vector<Column> DurationColumns() {
  return {{"time_pct", "Time (%)", Unit::kPercent}, {"total_ns", "Total (us)", Unit::kNanos},
          {"count", "Count", Unit::kCount},         {"mean_ns", "Mean (us)", Unit::kNanos},
          {"median_ns", "Median (us)", Unit::kNanos}, {"min_ns", "Min (us)", Unit::kNanos},
          {"max_ns", "Max (us)", Unit::kNanos},     {"name", "Name", Unit::kText}};
}

Table DurationTable(std::string name, std::string title, const std::map<std::string, Durations>& entries,
                    size_t top) {
  Table t{std::move(name), std::move(title), DurationColumns(), {}, 0};
  std::vector<std::pair<const std::string*, const Durations*>> order;
  int64_t whole = 0;
  for (const auto& [n, d] : entries) {
    order.emplace_back(&n, &d);
    whole += d.total;
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second->total > b.second->total; });
  Limit(&order, top, &t.rows_left_out);
  for (const auto& [n, d] : order) {
    t.rows.push_back({Percent(d->total, whole), d->total, static_cast<int64_t>(d->count), d->Mean(), d->Median(),
                      d->min, d->max, *n});
  }
  return t;
}

std::string Text(const Cell& c, Unit unit) {
  char buf[64];
  switch (unit) {
    case Unit::kNanos:
      std::snprintf(buf, sizeof(buf), "%.3f", static_cast<double>(std::get<int64_t>(c)) / 1000.0);
      return buf;
    case Unit::kPercent:
      std::snprintf(buf, sizeof(buf), "%.1f", std::get<double>(c));
      return buf;
    case Unit::kRate:
      std::snprintf(buf, sizeof(buf), "%.3f", std::get<double>(c));
      return buf;
    case Unit::kCount:
      return std::to_string(std::get<int64_t>(c));
    case Unit::kText:
      return std::get<std::string>(c);
  }
  return {};
}

std::string CsvField(const Cell& c, Unit unit) {
  if (unit == Unit::kText) {
    const std::string& s = std::get<std::string>(c);
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) {
      if (ch == '"') q += '"';
      q += ch;
    }
    return q + "\"";
  }
  if (unit == Unit::kPercent || unit == Unit::kRate) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.3f", std::get<double>(c));
    return buf;
  }
  return std::to_string(std::get<int64_t>(c));
}

std::string RenderText(const GpuStats& stats, const std::vector<Table>& tables) {
  std::string out;
  char buf[160];
  std::snprintf(buf, sizeof(buf), "%llu window(s), %.3f ms in all, %.3f ms of kernel time\n",
                static_cast<unsigned long long>(stats.windows), stats.window_ns / 1e6, stats.KernelNs() / 1e6);
  out += buf;
  for (const Table& t : tables) {
    out += "\n" + t.title + "\n\n";
    if (t.rows.empty()) {
      out += "  (none)\n";
      continue;
    }
    std::vector<std::vector<std::string>> cells;
    std::vector<size_t> width(t.columns.size());
    for (size_t c = 0; c < t.columns.size(); ++c) width[c] = t.columns[c].header.size();
    for (const auto& row : t.rows) {
      cells.emplace_back();
      for (size_t c = 0; c < t.columns.size(); ++c) {
        cells.back().push_back(Text(row[c], t.columns[c].unit));
        width[c] = std::max(width[c], cells.back().back().size());
      }
    }
    auto line = [&](const std::vector<std::string>& fields) {
      std::string l = " ";
      for (size_t c = 0; c < fields.size(); ++c) {
        bool last = c + 1 == fields.size();
        bool left = t.columns[c].unit == Unit::kText;
        std::string pad(width[c] - fields[c].size(), ' ');
        l += " ";
        if (left) {
          l += fields[c];
          if (!last) l += pad;
        } else {
          l += pad + fields[c];
        }
        l += last ? "" : " ";
      }
      out += l + "\n";
    };
    std::vector<std::string> header;
    std::vector<std::string> rule;
    for (size_t c = 0; c < t.columns.size(); ++c) {
      header.push_back(t.columns[c].header);
      rule.push_back(std::string(width[c], '-'));
    }
    line(header);
    line(rule);
    for (const auto& row : cells) line(row);
    if (t.rows_left_out) out += "  ... " + std::to_string(t.rows_left_out) + " more (--top)\n";
  }
  for (const std::string& w : stats.warnings) out += "\nwarning: " + w;
  if (!stats.warnings.empty()) out += "\n";
  return out;
}

std::string RenderCsv(const std::vector<Table>& tables) {
  std::string out;
  for (size_t i = 0; i < tables.size(); ++i) {
    const Table& t = tables[i];
    if (i) out += "\n";
    out += "# " + t.name + "\n";
    for (size_t c = 0; c < t.columns.size(); ++c) out += (c ? "," : "") + t.columns[c].key;
    out += "\n";
    for (const auto& row : t.rows) {
      for (size_t c = 0; c < t.columns.size(); ++c) {
        if (c) out += ",";
        out += CsvField(row[c], t.columns[c].unit);
      }
      out += "\n";
    }
  }
  return out;
}

std::string RenderJson(const GpuStats& stats, const std::vector<Table>& tables) {
  JsonOut j;
  j.BeginObject()
      .Field("windows", stats.windows)
      .Field("window_ns", stats.window_ns)
      .Field("kernel_ns", stats.KernelNs())
      .Field("gpu_ops_without_launch", stats.gpu_ops_without_launch);
  j.Key("tables").BeginObject();
  for (const Table& t : tables) {
    j.Key(t.name).BeginArray();
    for (const auto& row : t.rows) {
      j.BeginObject();
      for (size_t c = 0; c < t.columns.size(); ++c) {
        j.Key(t.columns[c].key);
        const Cell& cell = row[c];
        if (const auto* i = std::get_if<int64_t>(&cell)) j.Int(*i);
        if (const auto* d = std::get_if<double>(&cell)) j.Double(*d, 3);
        if (const auto* s = std::get_if<std::string>(&cell)) j.String(*s);
      }
      j.EndObject();
    }
    j.EndArray();
  }
  j.EndObject();
  j.Key("warnings").BeginArray();
  for (const std::string& w : stats.warnings) j.String(w);
  j.EndArray();
  j.EndObject();
  return j.Take();
}

}  // namespace

std::vector<Table> StatsTables(const GpuStats& stats, size_t top) {
  std::vector<Table> tables;
  tables.push_back(DurationTable("kernels", "GPU kernels", stats.kernels, top));

  Table copies{"copies", "GPU memory copies and sets", {{"count", "Count", Unit::kCount},
               {"bytes", "Bytes", Unit::kCount}, {"total_ns", "Total (us)", Unit::kNanos},
               {"mean_ns", "Mean (us)", Unit::kNanos}, {"bandwidth_gbps", "GB/s", Unit::kRate},
               {"name", "Operation", Unit::kText}}, {}, 0};
  std::vector<std::pair<const std::string*, const CopyStats*>> copy_order;
  for (const auto& [n, c] : stats.copies) copy_order.emplace_back(&n, &c);
  std::stable_sort(copy_order.begin(), copy_order.end(),
                   [](const auto& a, const auto& b) { return a.second->time.total > b.second->time.total; });
  Limit(&copy_order, top, &copies.rows_left_out);
  for (const auto& [n, c] : copy_order) {
    // Bytes per ns is GB/s.
    double rate = c->time.total > 0 ? static_cast<double>(c->bytes) / static_cast<double>(c->time.total) : 0.0;
    // Cells are signed: a (saturated) total past 2^63-1 shows as 2^63-1, never negative.
    int64_t bytes = static_cast<int64_t>(std::min<uint64_t>(c->bytes, INT64_MAX));
    copies.rows.push_back({static_cast<int64_t>(c->time.count), bytes, c->time.total,
                           c->time.Mean(), rate, *n});
  }
  tables.push_back(std::move(copies));

  tables.push_back(DurationTable("apis", "CUDA API calls", stats.apis, top));

  int64_t gpu_ns = stats.KernelNs();
  for (const auto& [n, c] : stats.copies) gpu_ns += c.time.total;
  Table ranges{"ranges", "NVTX ranges: their own time, and the GPU ops launched or captured inside them",
               {{"count", "Count", Unit::kCount}, {"cpu_total_ns", "CPU total (us)", Unit::kNanos},
                {"gpu_ops", "GPU ops", Unit::kCount}, {"gpu_ns", "GPU time (us)", Unit::kNanos},
                {"gpu_pct", "GPU (%)", Unit::kPercent}, {"name", "Range", Unit::kText}}, {}, 0};
  std::vector<std::pair<const std::string*, const RangeStats*>> range_order;
  for (const auto& [n, r] : stats.ranges) range_order.emplace_back(&n, &r);
  std::stable_sort(range_order.begin(), range_order.end(), [](const auto& a, const auto& b) {
    if (a.second->gpu_ns != b.second->gpu_ns) return a.second->gpu_ns > b.second->gpu_ns;
    return a.second->cpu.total > b.second->cpu.total;
  });
  Limit(&range_order, top, &ranges.rows_left_out);
  for (const auto& [n, r] : range_order) {
    ranges.rows.push_back({static_cast<int64_t>(r->cpu.count), r->cpu.total, static_cast<int64_t>(r->gpu_ops),
                           r->gpu_ns, Percent(r->gpu_ns, gpu_ns), *n});
  }
  tables.push_back(std::move(ranges));

  Table streams{"streams", "GPU streams: time with at least one kernel, copy or set running",
                {{"device", "GPU", Unit::kCount}, {"stream", "Stream", Unit::kCount}, {"ops", "Ops", Unit::kCount},
                 {"busy_ns", "Busy (us)", Unit::kNanos}, {"busy_pct", "Busy (%)", Unit::kPercent}}, {}, 0};
  for (const auto& [key, s] : stats.streams) {
    streams.rows.push_back({static_cast<int64_t>(key.first), static_cast<int64_t>(key.second),
                            static_cast<int64_t>(s.ops), s.busy_ns, Percent(s.busy_ns, stats.window_ns)});
  }
  tables.push_back(std::move(streams));
  return tables;
}

Table DevicesTable(const GpuStats& stats) {
  Table t{"devices", "GPUs: op time by kind (summed over streams), time with any op running, and idle",
          {{"device", "GPU", Unit::kCount}, {"compute_ns", "Compute (us)", Unit::kNanos},
           {"communication_ns", "NCCL (us)", Unit::kNanos}, {"memcpy_ns", "Memcpy (us)", Unit::kNanos},
           {"memset_ns", "Memset (us)", Unit::kNanos}, {"busy_ns", "Busy (us)", Unit::kNanos},
           {"idle_ns", "Idle (us)", Unit::kNanos}, {"busy_pct", "Busy (%)", Unit::kPercent}}, {}, 0};
  for (const auto& [device, d] : stats.devices) {
    t.rows.push_back({static_cast<int64_t>(device), d.compute_ns, d.communication_ns, d.memcpy_ns, d.memset_ns,
                      d.busy_ns, d.idle_ns, Percent(d.busy_ns, d.busy_ns + d.idle_ns)});
  }
  return t;
}

Result<TableFormat> ParseTableFormat(const std::string& name) {
  if (name == "text" || name == "table") return TableFormat::kText;
  if (name == "csv") return TableFormat::kCsv;
  if (name == "json") return TableFormat::kJson;
  return Status::InvalidArgument("--format '" + name + "': expected table (or text), csv or json");
}

std::string RenderTables(const GpuStats& stats, const std::vector<Table>& tables, TableFormat format) {
  switch (format) {
    case TableFormat::kText: return RenderText(stats, tables);
    case TableFormat::kCsv: return RenderCsv(tables);
    case TableFormat::kJson: return RenderJson(stats, tables);
  }
  return {};
}

}  // namespace gpucap::tools
