// One table's B-tree written bottom-up, rows appended in rowid order (the
// file format's "B-tree Pages": table leaves 0x0d with the records,
// interior pages 0x05 with child pointers and their largest rowid, records
// too long for a page continued on overflow pages). Every page is written
// once, full, when the next row does not fit; Finish writes what is left
// and the root at the page number the table was given up front, so that
// sqlite_schema can name it.
#ifndef GPUCAP_TOOLS_EXPORT_SRC_TABLE_BTREE_H_
#define GPUCAP_TOOLS_EXPORT_SRC_TABLE_BTREE_H_

#include <cstdint>
#include <vector>

#include "gpucap/status.h"
#include "page_file.h"
#include "record.h"

namespace gpucap::tools::sqlite {

class TableBtree {
 public:
  // `root`: a page allocated for this table; page 1 leaves room for the
  // database header in every page of its tree.
  TableBtree(PageFile* file, uint32_t root);

  // Rowids must increase from call to call.
  Status Append(int64_t rowid, const uint8_t* record, size_t size);
  // The record `record` holds, written on the leaf without a copy between
  // (the same cell as Append of its Finish).
  Status Append(int64_t rowid, RecordBuilder* record);
  Status Finish();

  uint64_t rows() const { return rows_; }

 private:
  struct Entry {
    uint32_t child;
    int64_t key;  // the largest rowid under `child`
  };
  struct Interior {
    std::vector<Entry> prev, cur;  // `prev` full, written once `cur` is known not to be the last
    size_t cur_bytes = 0;          // cells of `cur`
    bool wrote = false;
  };
  size_t Usable() const { return file_->page_size() - header_room_; }
  // The cell of a `size`-byte record keeping `local` bytes on the leaf:
  // written out the full leaf first, then room made and the size and
  // rowid put; `*payload` is where the local bytes go.
  Status Cell(int64_t rowid, size_t size, size_t local, uint8_t** payload);
  Status WriteLeaf(uint32_t number);
  Status Push(size_t level, Entry e);
  Status WriteInterior(uint32_t number, const std::vector<Entry>& entries);

  PageFile* file_;
  uint32_t root_;
  size_t header_room_;  // 100 on page 1's tree
  // The leaf being filled: cells from the end of `leaf_` down.
  std::vector<uint8_t> leaf_;
  std::vector<uint16_t> pointers_;
  size_t content_;  // where the lowest cell starts
  int64_t last_rowid_ = 0;
  uint64_t rows_ = 0;
  std::vector<Interior> levels_;  // levels_[0] holds the leaves' entries
  std::vector<uint8_t> scratch_;
};

}  // namespace gpucap::tools::sqlite

#endif  // GPUCAP_TOOLS_EXPORT_SRC_TABLE_BTREE_H_
