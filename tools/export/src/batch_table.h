// The rows of the batch being written, seen by SQLite as virtual tables
// (`temp.gpucap_batch_<table>`, one per schema table), so that a whole
// table's rows of a batch go in with one `INSERT INTO t (...) SELECT * FROM
// temp.gpucap_batch_t` step: SQLite reads each cell straight out of the
// batch (xColumn), with no bind call per value and no statement start and
// end per row or per few rows, and it picks the new rowids itself, which
// spares the uniqueness seek an explicit `id` costs (bench/README.md,
// "Session 6"). The ids it picks are the ones the writer assigned (tables
// are only ever appended to, from id 1 on), and each insert checks that.
//
// The temporary tables live in the connection's temp schema, never in the
// exported file, and are dropped with this object.
#ifndef GPUCAP_TOOLS_EXPORT_SRC_BATCH_TABLE_H_
#define GPUCAP_TOOLS_EXPORT_SRC_BATCH_TABLE_H_

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "gpucap/status.h"
#include "row_batch.h"

struct sqlite3;
struct sqlite3_stmt;

namespace gpucap::tools::sqlite {

// What turns a batch's capture-local cells into the values written: its
// strings and stacks as global ids, the first id of each table's rows in
// this batch, the capture's process id.
struct BatchIds {
  const std::vector<int64_t>* strings = nullptr;
  const std::vector<int64_t>* stacks = nullptr;
  const std::array<int64_t, kTableCount>* base = nullptr;
  int64_t process = 0;
};

class BatchTables {
 public:
  // Registers the module on `db` and makes one virtual table and one
  // INSERT ... SELECT per schema table.
  static Result<std::unique_ptr<BatchTables>> Create(sqlite3* db);
  ~BatchTables();

  // Writes the rows of `table` in `batch`. For a table with an `id`, the
  // ids SQLite gives them must be ids.base[table].. (an error otherwise).
  Status Insert(TableId table, const RowBatch& batch, const BatchIds& ids);

  // What the virtual tables read from while Insert steps (batch_table.cc).
  struct Feed {
    const RowBatch* batch = nullptr;
    BatchIds ids;
  };

 private:
  explicit BatchTables(sqlite3* db) : db_(db) {}
  sqlite3* db_;
  Feed feed_;
  std::array<sqlite3_stmt*, kTableCount> insert_{};
  bool module_ = false;
  std::array<bool, kTableCount> created_{};
};

}  // namespace gpucap::tools::sqlite

#endif  // GPUCAP_TOOLS_EXPORT_SRC_BATCH_TABLE_H_
