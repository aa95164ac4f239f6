// gpucap export: captures -> one SQLite database (docs/sqlite.md).
//
//   ExportOptions o;
//   o.build.window = "nvtx:ProfilerStep#\\d+";
//   auto report = ExportToFile({"rank0.gpucap", "rank1.gpucap"}, "job.sqlite", o);
//
// Each capture's windows are joined by the builder exactly as `gpucap build`
// joins them (the rows are the slices its trace would show), several
// captures at once, and written as SQLite's file format by a page writer
// of our own (table B-trees appended in rowid order, index B-trees sorted
// and written after them, without SQLite's INSERT path or CREATE INDEX).
#ifndef GPUCAP_TOOLS_EXPORT_SQLITE_EXPORT_H_
#define GPUCAP_TOOLS_EXPORT_SQLITE_EXPORT_H_

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "gpucap/builder/builder.h"
#include "gpucap/status.h"
#include "gpucap/tools/export/schema.h"

struct sqlite3;

namespace gpucap::tools {

// The index keys an export holds in memory at most, over all its indexes
// (about 12 bytes per index entry, four entries per kernel); past it they
// spill, sorted, to a temporary file and are merged at the end.
inline constexpr size_t kIndexKeyMemory = size_t{64} << 20;

struct ExportOptions {
  // The window spec, selection, lookback and join options, as for a build;
  // `output`, `format` and `threads` are not used.
  builder::BuildOptions build;
  // Captures joined at once (0: one per core, at most one per capture).
  int jobs = 0;
  // Make the indexes docs/sqlite.md lists (off: a database read once into
  // another engine loads faster without them).
  bool indexes = true;
  // Every row through SQLite's INSERT (the writer before the page writer,
  // kept to compare the two: bench/README.md, tests/tools/).
  bool sqlite_inserts = false;
  // The index keys' memory budget in bytes (the database is the same
  // whatever it is; a small one makes more, shorter runs). The temporary
  // file sits beside the output (ExportToFile) or in $TMPDIR, else /tmp
  // (ExportCaptures), and is unlinked as soon as it is made.
  size_t index_key_memory = kIndexKeyMemory;
  // Called from the worker joining a capture before each of its windows.
  std::function<void(size_t capture, size_t window, size_t windows)> on_window;
};

struct ExportReport {
  uint64_t windows = 0;
  uint64_t rows = 0;  // over every table
  std::array<uint64_t, sqlite::kTableCount> table_rows{};
  std::vector<std::string> warnings;  // each prefixed with its capture's path
  double seconds = 0;                 // wall time of the whole export
  double index_seconds = 0;           // of that, making the indexes after the load (the page writer:
                                      // sorting the keys collected during it, writing the B-trees)
  uint64_t bytes = 0;                 // the database file's size (0 in memory)
};

// Exports into `db`, an open, empty database. The page writer builds the
// database in memory and hands it to `db` (sqlite3_deserialize): its main
// schema is then an in-memory database, whatever it was opened on (write
// files with ExportToFile).
Result<ExportReport> ExportCaptures(sqlite3* db, std::span<const builder::CaptureIndex* const> captures,
                                    const ExportOptions& options);

// Opens the captures, writes `path` (a sibling temporary renamed into place
// when done, so a failed export leaves no half database and an older one
// where it was).
Result<ExportReport> ExportToFile(const std::vector<std::string>& captures, const std::string& path,
                                  const ExportOptions& options);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_EXPORT_SQLITE_EXPORT_H_
