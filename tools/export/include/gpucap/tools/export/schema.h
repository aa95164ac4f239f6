// The SQLite schema `gpucap export` writes, named once: every table, its
// columns in insert order, and the indexes made after the load.
// docs/sqlite.md documents each of them; a test holds the two together.
//
// Conventions: every timestamp is CLOCK_REALTIME in ns (the clock the
// Chrome JSON traces are on, converted from CUPTI's by the capture's clock
// samples); `*_ns` columns are times, `dur_ns` a virtual end_ns - start_ns.
// Names are ids into `strings`; `process` is an id into `processes` and
// `rank` the capture's rank (-1 when the job set none).
#ifndef GPUCAP_TOOLS_EXPORT_SCHEMA_H_
#define GPUCAP_TOOLS_EXPORT_SCHEMA_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace gpucap::tools::sqlite {

// Bumped when a table or column changes meaning or goes away (meta's
// schema_version); adding a column or table bumps the minor.
inline constexpr int kSchemaVersionMajor = 1;
inline constexpr int kSchemaVersionMinor = 3;

// The tables, in the order a RowBatch holds them.
enum class TableId : uint8_t {
  kMeta,
  kStrings,
  kAnnotationStacks,
  kProcesses,
  kDevices,
  kThreads,
  kWindows,
  kWindowCounts,
  kKernels,
  kMemcpys,
  kMemsets,
  kSyncs,
  kApiCalls,
  kNvtxRanges,
  kCounters,
  kGraphNodes,
  kGraphEdges,
  kGraphExecs,
  kGpuAnnotations,
  kOverheads,
  kCudaEvents,
};
inline constexpr size_t kTableCount = 21;

struct ColumnDef {
  std::string_view name;
  std::string_view type;  // SQL declaration after the name
};

struct TableDef {
  TableId id;
  std::string_view name;
  // Tables with an `id INTEGER PRIMARY KEY` first column get their ids from
  // the writer (rows refer to each other by them before they are written);
  // the columns below follow it.
  bool has_id;
  std::span<const ColumnDef> columns;  // without `id`
  // Virtual columns (not inserted), as full declarations.
  std::span<const std::string_view> generated;
};

std::span<const TableDef> Tables();
const TableDef& Table(TableId id);
// The indexes the example queries of docs/sqlite.md use, made with
// CreateIndexSql after the rows are in.
struct IndexDef {
  std::string_view name;
  TableId table;
  bool unique;
  std::span<const std::string_view> columns;  // of the table's `columns`
};
std::span<const IndexDef> Indexes();
// "CREATE [UNIQUE ]INDEX name ON table(a, b)", as sqlite_schema keeps it.
std::string CreateIndexSql(const IndexDef& index);

}  // namespace gpucap::tools::sqlite

#endif  // GPUCAP_TOOLS_EXPORT_SCHEMA_H_
