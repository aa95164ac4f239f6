#include "table_btree.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "btree_cells.h"
#include "record.h"

namespace gpucap::tools::sqlite {
namespace {

constexpr uint8_t kLeaf = 0x0d, kInteriorPage = 0x05;

size_t InteriorCell(int64_t key) { return 4 + VarintLength(static_cast<uint64_t>(key)); }

}  // namespace

TableBtree::TableBtree(PageFile* file, uint32_t root)
    : file_(file), root_(root), header_room_(root == 1 ? 100 : 0), leaf_(file->page_size()),
      content_(file->page_size()), scratch_(file->page_size()) {}

Status TableBtree::Cell(int64_t rowid, size_t size, size_t local, uint8_t** payload) {
  if (rows_ > 0 && rowid <= last_rowid_) {
    return Status::Internal("page writer: rowid " + std::to_string(rowid) + " after " + std::to_string(last_rowid_));
  }
  const size_t cell = VarintLength(size) + VarintLength(static_cast<uint64_t>(rowid)) + local + (local < size ? 4 : 0);
  const size_t used = 8 + 2 * pointers_.size();
  if (!pointers_.empty() && used + 2 + cell > content_ - header_room_) {
    uint32_t number = file_->Allocate();
    GPUCAP_RETURN_IF_ERROR(WriteLeaf(number));
    GPUCAP_RETURN_IF_ERROR(Push(0, {number, last_rowid_}));
  }
  content_ -= cell;
  uint8_t* p = leaf_.data() + content_;
  p += PutVarint(p, size);
  p += PutVarint(p, static_cast<uint64_t>(rowid));
  *payload = p;
  pointers_.push_back(static_cast<uint16_t>(content_));
  last_rowid_ = rowid;
  rows_++;
  return Status::Ok();
}

Status TableBtree::Append(int64_t rowid, const uint8_t* record, size_t size) {
  // How much of the record stays on the leaf ("Cell Payload Overflow Pages").
  const size_t local = LocalPayload(file_->page_size(), size, Tree::kTable);
  uint8_t* p = nullptr;
  GPUCAP_RETURN_IF_ERROR(Cell(rowid, size, local, &p));
  std::memcpy(p, record, local);
  if (local < size) {
    // The overflow pages come after the leaf a full page wrote out.
    uint32_t overflow = 0;
    GPUCAP_RETURN_IF_ERROR(WriteOverflow(file_, record + local, size - local, &overflow, &scratch_));
    Put32(p + local, overflow);
  }
  return Status::Ok();
}

Status TableBtree::Append(int64_t rowid, RecordBuilder* record) {
  const size_t size = record->Size();
  if (size > MaxLocal(file_->page_size(), Tree::kTable)) {
    const std::vector<uint8_t>& r = record->Finish();
    return Append(rowid, r.data(), r.size());
  }
  uint8_t* p = nullptr;
  GPUCAP_RETURN_IF_ERROR(Cell(rowid, size, size, &p));
  record->CopyTo(p);
  return Status::Ok();
}

Status TableBtree::WriteLeaf(uint32_t number) {
  const size_t h = number == 1 ? 100 : 0;
  uint8_t* p = leaf_.data();
  std::memset(p, 0, content_);  // header, pointers and the unused gap
  p[h] = kLeaf;
  Put16(p + h + 3, static_cast<uint32_t>(pointers_.size()));
  Put16(p + h + 5, content_ == 65536 ? 0 : static_cast<uint32_t>(content_));
  for (size_t i = 0; i < pointers_.size(); ++i) Put16(p + h + 8 + 2 * i, pointers_[i]);
  GPUCAP_RETURN_IF_ERROR(file_->Write(number, p));
  pointers_.clear();
  content_ = file_->page_size();
  return Status::Ok();
}

Status TableBtree::WriteInterior(uint32_t number, const std::vector<Entry>& entries) {
  const size_t h = number == 1 ? 100 : 0, u = file_->page_size();
  uint8_t* p = scratch_.data();
  std::memset(p, 0, u);
  size_t content = u;
  const size_t cells = entries.size() - 1;  // the last child is the right-most pointer
  for (size_t i = 0; i < cells; ++i) {
    content -= InteriorCell(entries[i].key);
    Put32(p + content, entries[i].child);
    PutVarint(p + content + 4, static_cast<uint64_t>(entries[i].key));
    Put16(p + h + 12 + 2 * i, static_cast<uint32_t>(content));
  }
  p[h] = kInteriorPage;
  Put16(p + h + 3, static_cast<uint32_t>(cells));
  Put16(p + h + 5, content == 65536 ? 0 : static_cast<uint32_t>(content));
  Put32(p + h + 8, entries.back().child);
  return file_->Write(number, p);
}

// Files a written child page on the interior level above it; a full page of
// that level waits in `prev` until the next one starts, so that the level's
// last page never ends up with only its right-most pointer.
Status TableBtree::Push(size_t level, Entry e) {
  if (levels_.size() <= level) levels_.resize(level + 1);
  Interior& l = levels_[level];
  const size_t cell = InteriorCell(l.cur.empty() ? 0 : l.cur.back().key);
  if (!l.cur.empty() && 12 + 2 * l.cur.size() + l.cur_bytes + cell > Usable()) {
    if (!l.prev.empty()) {
      uint32_t number = file_->Allocate();
      GPUCAP_RETURN_IF_ERROR(WriteInterior(number, l.prev));
      levels_[level].wrote = true;
      GPUCAP_RETURN_IF_ERROR(Push(level + 1, {number, levels_[level].prev.back().key}));
    }
    Interior& again = levels_[level];  // Push may have grown levels_
    again.prev.swap(again.cur);
    again.cur.clear();
    again.cur_bytes = 0;
  }
  Interior& now = levels_[level];
  // Every entry but the page's last becomes a cell; count the one before it.
  if (!now.cur.empty()) now.cur_bytes += InteriorCell(now.cur.back().key);
  now.cur.push_back(e);
  return Status::Ok();
}

Status TableBtree::Finish() {
  if (levels_.empty()) return WriteLeaf(root_);  // one leaf (or none): the root
  uint32_t number = file_->Allocate();
  GPUCAP_RETURN_IF_ERROR(WriteLeaf(number));
  GPUCAP_RETURN_IF_ERROR(Push(0, {number, last_rowid_}));
  for (size_t level = 0; level < levels_.size(); ++level) {
    const bool top = level + 1 == levels_.size();
    if (top && levels_[level].prev.empty() && !levels_[level].wrote) {
      return WriteInterior(root_, levels_[level].cur);
    }
    if (!levels_[level].prev.empty()) {
      if (levels_[level].cur.size() == 1) {
        levels_[level].cur.insert(levels_[level].cur.begin(), levels_[level].prev.back());
        levels_[level].prev.pop_back();
      }
      uint32_t n = file_->Allocate();
      GPUCAP_RETURN_IF_ERROR(WriteInterior(n, levels_[level].prev));
      GPUCAP_RETURN_IF_ERROR(Push(level + 1, {n, levels_[level].prev.back().key}));
    }
    uint32_t n = file_->Allocate();
    GPUCAP_RETURN_IF_ERROR(WriteInterior(n, levels_[level].cur));
    GPUCAP_RETURN_IF_ERROR(Push(level + 1, {n, levels_[level].cur.back().key}));
  }
  return Status::Internal("page writer: no root");  // the loop always ends at a top level
}

}  // namespace gpucap::tools::sqlite
