// The tables `gpucap stats` prints, as data first: columns with a unit and
// rows of cells, then rendered as aligned text (times in us), CSV or JSON
// (times in integer ns, so scripts never parse rounding).
#ifndef GPUCAP_TOOLS_STATS_TABLE_H_
#define GPUCAP_TOOLS_STATS_TABLE_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "gpucap/tools/stats/gpu_stats.h"

namespace gpucap::tools {

struct Column {
  enum class Unit { kCount, kNanos, kPercent, kRate, kText };
  std::string key;     // CSV header and JSON key
  std::string header;  // text header
  Unit unit = Unit::kCount;
};

using Cell = std::variant<int64_t, double, std::string>;

struct Table {
  std::string name;   // "kernels", "copies", "apis", "ranges", "streams"
  std::string title;  // for the text form
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
  size_t rows_left_out = 0;  // by --top
};

// The five tables, largest first; `top` > 0 keeps that many rows of each but
// the streams table.
std::vector<Table> StatsTables(const GpuStats& stats, size_t top);

// Per GPU, where its time went (DeviceStats): not among the five, asked for
// by name (`gpucap stats --table devices`), as `gpucap report` draws it.
Table DevicesTable(const GpuStats& stats);

enum class TableFormat { kText, kCsv, kJson };
Result<TableFormat> ParseTableFormat(const std::string& name);
std::string RenderTables(const GpuStats& stats, const std::vector<Table>& tables, TableFormat format);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_STATS_TABLE_H_
