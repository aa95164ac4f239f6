// Writes a whole export as a SQLite database image without SQLite: the
// database header, sqlite_schema with every table of schema.h, and each
// table's B-tree (table_btree.h), rows appended in id order as batches
// come, and, when asked, each index of schema.h: its keys collected as the
// rows go out (index_keys.h), sorted and written as an index B-tree
// (index_btree.h) at the end. The keys held in memory stay under a budget:
// past it the biggest indexes spill sorted runs to a temporary file
// (spill_file.h), merged at the end. SQLite only ever reads the result
// (db_writer.h's path inserts the same rows and builds the same indexes
// through SQL).
#ifndef GPUCAP_TOOLS_EXPORT_SRC_IMAGE_WRITER_H_
#define GPUCAP_TOOLS_EXPORT_SRC_IMAGE_WRITER_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpucap/status.h"
#include "index_keys.h"
#include "page_file.h"
#include "record.h"
#include "row_batch.h"
#include "table_btree.h"

namespace gpucap::tools::sqlite {

class ImageWriter {
 public:
  // Reserves page 1 (sqlite_schema) and one root page per table (and per
  // index, with `indexes`). `key_memory`: the index keys' budget in bytes;
  // `spill_pattern`: mkstemp's template for the file they spill to.
  ImageWriter(PageFile* file, size_t captures, const std::vector<std::pair<std::string, std::string>>& meta,
              bool indexes, size_t key_memory, std::string spill_pattern);

  Status Write(const RowBatch& batch);
  // Writes the last pages, sqlite_schema and the header.
  Status Finish();

  const std::array<uint64_t, kTableCount>& rows() const { return rows_; }

 private:
  struct CaptureIds {
    std::vector<int64_t> strings{0};  // local -> global; 0 stays "none"
    std::vector<int64_t> stacks{0};
    int64_t process = 0;
  };
  struct Index {
    const IndexDef* def;
    uint32_t root;
    std::vector<size_t> columns;  // positions in the table's `columns`
    std::unique_ptr<IndexKeys> keys;
  };
  Status Intern(const RowBatch& batch);
  Status AppendRow(TableId table, int64_t rowid);  // the record in `record_`
  // Files row `rowid` of `table` with the table's indexes; `value(k)`: the
  // row's column k as given (before the column's affinity).
  template <typename ValueOf>
  Status AddToIndexes(TableId table, int64_t rowid, const ValueOf& value);
  // Spills the biggest indexes' keys while they hold more than the budget.
  Status BoundKeys();

  PageFile* file_;
  Status status_;  // of the constructor's meta rows
  std::vector<std::unique_ptr<TableBtree>> trees_;  // by TableId
  std::vector<Index> indexes_;
  size_t key_memory_;
  size_t check_every_;  // rows between two looks at the keys' memory
  size_t rows_since_check_ = 0;
  SpillFile spill_;
  std::array<std::vector<size_t>, kTableCount> table_indexes_;  // positions in indexes_
  std::array<std::string, 16> numbers_;  // Stored's scratch, one per key column
  std::array<Value, 16> key_;            // the key being filed
  std::array<std::vector<Affinity>, kTableCount> affinity_;
  std::array<int64_t, kTableCount> next_id_{};
  std::array<uint64_t, kTableCount> rows_{};
  RecordBuilder record_;
  std::vector<CaptureIds> captures_;
  std::unordered_map<std::string, int64_t> strings_;
  std::map<std::pair<int64_t, int64_t>, int64_t> stacks_;  // (parent, name) -> id
  std::vector<int> stack_depth_{-1};                       // by global id; id 0: the empty stack
};

}  // namespace gpucap::tools::sqlite

#endif  // GPUCAP_TOOLS_EXPORT_SRC_IMAGE_WRITER_H_
