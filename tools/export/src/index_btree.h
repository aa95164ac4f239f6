// One index's B-tree written bottom-up from its entries in index order (the
// file format's index pages: leaves 0x0a with the entries' records, interior
// pages 0x02 whose cells are entries too, each with the child page of the
// entries before it). Unlike a table, every entry is stored once: the one
// that does not fit on a full leaf goes up as the divider between that
// leaf and the next. A divider is held back until the next entry shows
// that more follow, so no page but the root is ever left without a cell;
// Finish writes the root at the page number reserved for the index.
#ifndef GPUCAP_TOOLS_EXPORT_SRC_INDEX_BTREE_H_
#define GPUCAP_TOOLS_EXPORT_SRC_INDEX_BTREE_H_

#include <cstdint>
#include <cstring>
#include <vector>

#include "gpucap/status.h"
#include "page_file.h"

namespace gpucap::tools::sqlite {

class IndexBtree {
 public:
  // `root`: a page allocated for this index (never page 1).
  IndexBtree(PageFile* file, uint32_t root);

  // Entries (records: the key columns, then the rowid) in index order.
  Status Append(const uint8_t* record, size_t size) {
    return TryAppend(record, size) ? Status::Ok() : AppendSlow(record, size);
  }
  // The common case, inline and without a Status: a short entry that fits
  // on the leaf being filled. False: nothing written, call Append.
  bool TryAppend(const uint8_t* record, size_t size) {
    Level& leaf = levels_[0];
    const size_t u = file_->page_size();
    if (size < 0x80 && size <= max_local_ && !leaf.has_pending &&
        (leaf.pointers.empty() || 8 + 2 * (leaf.pointers.size() + 1) + (u - leaf.content) + 1 + size <= u)) {
      leaf.content -= 1 + size;
      uint8_t* p = leaf.page.data() + leaf.content;
      *p = static_cast<uint8_t>(size);  // the payload's size, a one-byte varint
      std::memcpy(p + 1, record, size);
      leaf.pointers.push_back(static_cast<uint16_t>(leaf.content));
      entries_++;
      return true;
    }
    return false;
  }
  Status Finish();

  uint64_t entries() const { return entries_; }

 private:
  // One level's page being filled: cells from the end of `page` down, in
  // key order; on interior levels each cell starts with its left child.
  struct Level {
    std::vector<uint8_t> page;
    std::vector<uint16_t> pointers;
    size_t content = 0;
    std::vector<uint8_t> pending;  // the cell that did not fit (payload part)
    uint32_t pending_child = 0;
    bool has_pending = false;
  };
  Status AppendSlow(const uint8_t* record, size_t size);
  Status Add(size_t level, uint32_t child, const uint8_t* cell, size_t size);
  Status FinishLevel(size_t level, uint32_t right);
  Status WritePage(size_t level, uint32_t number, uint32_t right);
  void Place(Level* l, size_t level, uint32_t child, const uint8_t* cell, size_t size);
  Level& At(size_t level);

  PageFile* file_;
  uint32_t root_;
  size_t max_local_;  // X: payloads up to it stay whole on their page
  uint64_t entries_ = 0;
  std::vector<Level> levels_;  // levels_[0]: the leaves
  std::vector<uint8_t> cell_, scratch_;
};

}  // namespace gpucap::tools::sqlite

#endif  // GPUCAP_TOOLS_EXPORT_SRC_INDEX_BTREE_H_
