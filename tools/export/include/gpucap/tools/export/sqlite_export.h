// gpucap export: captures -> one SQLite database (docs/sqlite.md).
//
//   ExportOptions o;
//   o.build.window = "nvtx:ProfilerStep#\\d+";
//   auto report = ExportToFile({"rank0.gpucap", "rank1.gpucap"}, "job.sqlite", o);
//
// Each capture's windows are joined by the builder exactly as `gpucap build`
// joins them (the rows are the slices its trace would show), several
// captures at once on one WorkQueue, and written through SQLite's C API:
// one transaction, a prepared INSERT per table, the indexes made after the
// rows.
//
// The database depends only on the captures (their order on the command
// line) and the options, never on --parallel or on which capture's join
// finishes first: rows go in capture by capture, each capture's windows in
// window order (window by window in time), so every `id` is the same run to
// run; the same statements in the same order make the same file, byte for
// byte. Nothing of the run itself (time, pid, host) is written.
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

struct ExportOptions {
  // The window spec, selection, lookback and join options, as for a build;
  // `output` and `format` are not used, `queue` is the export's own.
  // `threads`: threads in all (0: one per core), at least `jobs`: the
  // captures' workers and their joins' decoding share them.
  builder::BuildOptions build;
  // Captures joined at once (0: one per core, at most one per capture).
  // The database is the same whatever it is.
  int jobs = 0;
  // Make the indexes docs/sqlite.md lists (off: a database read once into
  // another engine loads faster without them).
  bool indexes = true;
  // For tests: the bytes of rows a window gathers before handing them to
  // the writer (0: the export's own bound, 4 MiB). The database is the
  // same whatever it is; a tiny one splits every window into many batches.
  size_t batch_bytes = 0;
  // Called from the worker joining a capture before each of its windows.
  std::function<void(size_t capture, size_t window, size_t windows)> on_window;
};

struct ExportReport {
  uint64_t windows = 0;
  // Batches of rows written: each capture's facts and its decoding's, and
  // each window's rows in one or more (ExportOptions::batch_bytes).
  uint64_t batches = 0;
  uint64_t rows = 0;  // over every table
  std::array<uint64_t, sqlite::kTableCount> table_rows{};
  std::vector<std::string> warnings;  // each prefixed with its capture's path
  double seconds = 0;                 // wall time of the whole export
  double index_seconds = 0;           // of that, CREATE INDEX after the rows are in
  uint64_t bytes = 0;                 // the database file's size (0 in memory)
};

// Exports into `db`, an open, empty database (a file or ":memory:"), in
// one transaction it opens and commits. Sets the bulk-load pragmas on the
// connection (journal off, synchronous off, exclusive locking, 16 KiB pages
// when the database is still empty): meant for a connection made for it.
Result<ExportReport> ExportCaptures(sqlite3* db, std::span<const builder::CaptureIndex* const> captures,
                                    const ExportOptions& options);
// The same, each capture opened when a worker reaches it and let go once
// joined.
Result<ExportReport> ExportCaptures(sqlite3* db, size_t count, const builder::CaptureOpener& open,
                                    const ExportOptions& options);

// Opens the captures and writes the database at `path`: SQLite writes a
// sibling temporary (`path` + ".partial-" + pid), renamed onto `path` only
// when the export has succeeded, so a failed export leaves no half database
// and an older one where it was; the temporary is removed on failure.
Result<ExportReport> ExportToFile(const std::vector<std::string>& captures, const std::string& path,
                                  const ExportOptions& options);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_EXPORT_SQLITE_EXPORT_H_
