#include "index_btree.h"

#include <cstring>

#include "btree_cells.h"
#include "record.h"

namespace gpucap::tools::sqlite {
namespace {

constexpr uint8_t kLeaf = 0x0a, kInteriorPage = 0x02;
size_t HeaderSize(size_t level) { return level == 0 ? 8 : 12; }

}  // namespace

IndexBtree::IndexBtree(PageFile* file, uint32_t root)
    : file_(file), root_(root), max_local_(MaxLocal(file->page_size(), Tree::kIndex)) {
  At(0);
}

IndexBtree::Level& IndexBtree::At(size_t level) {
  while (levels_.size() <= level) {
    levels_.emplace_back();
    levels_.back().page.resize(file_->page_size());
    levels_.back().content = file_->page_size();
  }
  return levels_[level];
}

Status IndexBtree::AppendSlow(const uint8_t* record, size_t size) {
  // The cell's payload part, the same on a leaf and, as a divider, on an
  // interior page: size, the local bytes, the overflow chain's first page.
  const size_t local = LocalPayload(file_->page_size(), size, Tree::kIndex);
  cell_.resize(9 + local + 4);
  size_t n = PutVarint(cell_.data(), size);
  std::memcpy(cell_.data() + n, record, local);
  n += local;
  if (local < size) {
    uint32_t overflow = 0;
    GPUCAP_RETURN_IF_ERROR(WriteOverflow(file_, record + local, size - local, &overflow, &scratch_));
    Put32(cell_.data() + n, overflow);
    n += 4;
  }
  entries_++;
  return Add(0, 0, cell_.data(), n);
}

void IndexBtree::Place(Level* l, size_t level, uint32_t child, const uint8_t* cell, size_t size) {
  const size_t total = size + (level > 0 ? 4 : 0);
  l->content -= total;
  uint8_t* p = l->page.data() + l->content;
  if (level > 0) {
    Put32(p, child);
    p += 4;
  }
  std::memcpy(p, cell, size);
  l->pointers.push_back(static_cast<uint16_t>(l->content));
}

// Files `cell` (with its left child on interior levels) on `level`'s page.
// When it does not fit, it waits as the level's divider: the next cell to
// come writes the full page and sends the divider up.
Status IndexBtree::Add(size_t level, uint32_t child, const uint8_t* cell, size_t size) {
  Level& l = At(level);
  if (l.has_pending) {
    uint32_t number = file_->Allocate();
    GPUCAP_RETURN_IF_ERROR(WritePage(level, number, l.pending_child));
    Level& again = levels_[level];
    std::vector<uint8_t> up;
    up.swap(again.pending);
    again.has_pending = false;
    GPUCAP_RETURN_IF_ERROR(Add(level + 1, number, up.data(), up.size()));
    Level& now = levels_[level];  // Add may have grown levels_
    now.pending.swap(up);
    Place(&now, level, child, cell, size);
    return Status::Ok();
  }
  const size_t total = size + (level > 0 ? 4 : 0);
  const size_t used = HeaderSize(level) + 2 * (l.pointers.size() + 1) + (file_->page_size() - l.content);
  if (l.pointers.empty() || used + total <= file_->page_size()) {
    Place(&l, level, child, cell, size);
    return Status::Ok();
  }
  l.pending.assign(cell, cell + size);
  l.pending_child = child;
  l.has_pending = true;
  return Status::Ok();
}

// Writes the page `level` holds as page `number` and empties it; `right`:
// an interior page's right-most child.
Status IndexBtree::WritePage(size_t level, uint32_t number, uint32_t right) {
  Level& l = levels_[level];
  const size_t h = HeaderSize(level);
  uint8_t* p = l.page.data();
  std::memset(p, 0, l.content);
  p[0] = level == 0 ? kLeaf : kInteriorPage;
  Put16(p + 3, static_cast<uint32_t>(l.pointers.size()));
  Put16(p + 5, l.content == 65536 ? 0 : static_cast<uint32_t>(l.content));
  if (level > 0) Put32(p + 8, right);
  for (size_t i = 0; i < l.pointers.size(); ++i) Put16(p + h + 2 * i, l.pointers[i]);
  GPUCAP_RETURN_IF_ERROR(file_->Write(number, p));
  l.pointers.clear();
  l.content = file_->page_size();
  return Status::Ok();
}

// The level's last page, `right` its right-most child (interior levels).
// A divider still waiting has no entry after it: the page's last cell goes
// up instead, and the waiting one starts the level's final page.
Status IndexBtree::FinishLevel(size_t level, uint32_t right) {
  Level& l = At(level);
  if (l.has_pending) {
    const size_t n = l.pointers.size();
    const size_t start = l.pointers[n - 1], end = n >= 2 ? l.pointers[n - 2] : file_->page_size();
    std::vector<uint8_t> last(l.page.begin() + static_cast<ptrdiff_t>(start), l.page.begin() + static_cast<ptrdiff_t>(end));
    l.pointers.pop_back();
    l.content = end;
    uint32_t last_child = 0;
    size_t skip = 0;
    if (level > 0) {
      last_child = Get32(last.data());
      skip = 4;
    }
    uint32_t number = file_->Allocate();
    GPUCAP_RETURN_IF_ERROR(WritePage(level, number, last_child));
    GPUCAP_RETURN_IF_ERROR(Add(level + 1, number, last.data() + skip, last.size() - skip));
    Level& now = levels_[level];
    now.has_pending = false;
    Place(&now, level, now.pending_child, now.pending.data(), now.pending.size());
  }
  if (level + 1 == levels_.size()) return WritePage(level, root_, right);
  uint32_t number = file_->Allocate();
  GPUCAP_RETURN_IF_ERROR(WritePage(level, number, right));
  return FinishLevel(level + 1, number);
}

Status IndexBtree::Finish() { return FinishLevel(0, 0); }

}  // namespace gpucap::tools::sqlite
