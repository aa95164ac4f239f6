// Writes a whole export as a SQLite database image without SQLite: the
// database header, sqlite_schema with every table of schema.h, and each
// table's B-tree (table_btree.h), rows appended in id order as batches
// come. SQLite then opens the image to make the indexes (db_writer.h's
// path inserts the same rows through SQL; both give the same tables).
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
#include "page_file.h"
#include "record.h"
#include "row_batch.h"
#include "table_btree.h"

namespace gpucap::tools::sqlite {

class ImageWriter {
 public:
  // Reserves page 1 (sqlite_schema) and one root page per table.
  ImageWriter(PageFile* file, size_t captures, const std::vector<std::pair<std::string, std::string>>& meta);

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
  Status Intern(const RowBatch& batch);
  Status AppendRow(TableId table, int64_t rowid);  // the record in `record_`

  PageFile* file_;
  Status status_;  // of the constructor's meta rows
  std::vector<std::unique_ptr<TableBtree>> trees_;  // by TableId
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
