// The one connection that writes an export: creates the schema, inserts
// each batch's rows with one prepared INSERT per table (values bound cell
// by cell, texts without a copy), inside one transaction (journal off, as
// a half-written export is thrown away anyway), gives rows their global
// ids, and makes the indexes after the load.
//
// Ids are the order of Write calls: the writer appends, and SQLite gives
// each new row the id after the table's last (checked per batch). The
// caller decides that order (sqlite_export.cc: capture by capture), and
// writes a window's batches one after the other, so that a batch that
// continues a window (RowBatch::continues) refers to rows of the earlier
// ones.
#ifndef GPUCAP_TOOLS_EXPORT_SRC_DB_WRITER_H_
#define GPUCAP_TOOLS_EXPORT_SRC_DB_WRITER_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpucap/status.h"
#include "row_batch.h"

struct sqlite3;
struct sqlite3_stmt;

namespace gpucap::tools::sqlite {

// "what failed: SQLite's message".
Status SqliteError(sqlite3* db, std::string_view what);
Status Exec(sqlite3* db, std::string_view sql);
// "CREATE TABLE t (id INTEGER PRIMARY KEY, ...)", as sqlite_schema keeps it.
std::string CreateTableSql(const TableDef& t);
// "INSERT INTO t (a, b) VALUES (?, ?)": every stored column but `id`.
std::string InsertSql(const TableDef& t);

class DbWriter {
 public:
  // Sets the bulk-load pragmas, creates the schema in `db` (empty) for
  // `captures` captures, opens the load's transaction and writes the meta
  // rows of the database itself.
  static Result<std::unique_ptr<DbWriter>> Start(sqlite3* db, size_t captures,
                                                 const std::vector<std::pair<std::string, std::string>>& meta);
  ~DbWriter();

  Status Write(const RowBatch& batch);
  // Makes the indexes (when asked) and commits.
  Status Finish(bool indexes);

  const std::array<uint64_t, kTableCount>& rows() const { return rows_; }

 private:
  struct CaptureIds {
    std::vector<int64_t> strings{0};  // local -> global; 0 stays "none"
    std::vector<int64_t> stacks{0};
    int64_t process = 0;
  };
  explicit DbWriter(sqlite3* db) : db_(db) {}
  Status Prepare();
  Status Intern(const RowBatch& batch);
  // The rows of `table` in `batch`; `base`: the first id of each table's
  // rows in this batch.
  Status Insert(TableId table, const RowBatch& batch, const CaptureIds& ids,
                const std::array<int64_t, kTableCount>& base);

  sqlite3* db_;
  std::array<sqlite3_stmt*, kTableCount> insert_{};
  std::array<int64_t, kTableCount> next_id_{};
  // Each table's first id in the window being written: what Cell::kRef counts from.
  std::array<int64_t, kTableCount> window_base_{};
  std::array<uint64_t, kTableCount> rows_{};
  std::vector<CaptureIds> captures_;
  // Keys: the batches' new strings, in their captures' TextArenas, which
  // live until the last Write (sqlite_export.cc).
  std::unordered_map<std::string_view, int64_t> strings_;
  std::map<std::pair<int64_t, int64_t>, int64_t> stacks_;  // (parent, name) -> id
  std::vector<int> stack_depth_{-1};                       // by global id; id 0: the empty stack
};

}  // namespace gpucap::tools::sqlite

#endif  // GPUCAP_TOOLS_EXPORT_SRC_DB_WRITER_H_
