// Shared by the export and report tests: a capture exported into a SQLite
// database in memory, read back through the SQLite C API, and the same
// windows' Chrome JSON traces read independently.
#ifndef GPUCAP_TESTS_TOOLS_EXPORT_TEST_UTIL_H_
#define GPUCAP_TESTS_TOOLS_EXPORT_TEST_UTIL_H_

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpucap/tools/export/sqlite_export.h"
#include "tool_test_util.h"

namespace gpucap::testing {

// Every row of `sql` on `db`, each cell as text ("NULL" for NULL); fails the
// test when the query does not prepare or does not run to its end.
std::vector<std::vector<std::string>> QueryRows(sqlite3* db, const std::string& sql);

class ExportDb {
 public:
  // Exports `captures` with window spec `window`; fails the test on error.
  ExportDb(const std::vector<std::string>& captures, const std::string& window = "all", int jobs = 0);
  ~ExportDb();
  sqlite3* db() const { return db_; }
  const tools::ExportReport& report() const { return report_; }
  // QueryRows on this database.
  std::vector<std::vector<std::string>> Rows(const std::string& sql) const { return QueryRows(db_, sql); }
  int64_t Int(const std::string& sql) const;  // the first cell of the first row

 private:
  sqlite3* db_ = nullptr;
  std::vector<std::unique_ptr<builder::CaptureIndex>> indexes_;
  tools::ExportReport report_;
};

// docs/sqlite.md, and its example queries by their "-- query: NAME" line.
std::string Docs();
std::map<std::string, std::string> DocQueries();

// A JSON event's absolute start in ns (CLOCK_REALTIME), from the trace's base.
int64_t AbsoluteTs(const Trace& t, const Json& e);

// An X event's arg as text: numbers as written, strings, arrays joined by '/'.
std::string ArgText(const Json& e, const char* key);

// "void ns::tiled_sum<128>(float const*, float*, int)" -> "tiled_sum", nsys's
// base name, written apart from the export's rule so the two check each other.
std::string BaseName(const std::string& name);

// The OS thread of a CPU track: `tid` itself, or for an overlap lane
// ("thread 7 (python) (overlap 1)") the thread whose track it extends.
uint64_t BaseThread(const Trace& t, uint64_t pid, uint64_t tid);

// GPU ops of a trace, with their launching call found through the ac2g flow
// ("s" on the call's thread, "f" on the op).
struct JsonOp {
  const Json* e;
  int64_t start, end;
  bool launched = false;
  int64_t launch_tid = 0, launch_start = 0, launch_dur = 0;
  uint64_t pid = 0;  // the launching process
  std::string launch_name;
};
std::vector<JsonOp> JsonOps(const Trace& t, bool kernels_only);

}  // namespace gpucap::testing

#endif  // GPUCAP_TESTS_TOOLS_EXPORT_TEST_UTIL_H_
