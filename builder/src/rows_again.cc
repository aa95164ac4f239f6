#include "rows_again.h"

#include "decode_again.h"

#include <string>

namespace gpucap::builder {
namespace {

template <class Table>
Table& Rows(ActivityTables& t) {
  if constexpr (std::is_same_v<Table, KernelTable>) {
    return t.kernels;
  } else {
    return t.apis;
  }
}

}  // namespace


template <class Table>
bool RowsAgain<Table>::CanRelease() const {
  if (!source_.again || !source_.release || released_) return false;
  for (const ActivityTables* p : parts_) {
    if (!p->kernels.has_args()) return true;
  }
  return false;
}

template <class Table>
void RowsAgain<Table>::Release() {
  seen_.resize(parts_.size());
  for (size_t p = 0; p < parts_.size(); ++p) seen_[p] = SeenOf(Mine(static_cast<uint16_t>(p)));
  released_ = true;
  source_.release(family_);
}

template <class Table>
const Table& RowsAgain<Table>::Again(uint16_t part) {
  Slot* slot = &slots_[0];
  for (Slot& s : slots_) {
    if (s.part == part) {
      s.used = ++clock_;
      return Rows<Table>(s.rows);
    }
    if (s.used < slot->used) slot = &s;
  }
  RowSource::Seen first = released_ ? seen_[part] : SeenOf(Mine(part));
  slot->part = part;
  slot->used = ++clock_;
  Table& rows = Rows<Table>(slot->rows);
  rows.clear();
  decodes_++;
  Status s = source_.again ? source_.again(part, family_, first, &slot->rows)
                           : Status::Internal("rows given up by the join, and nothing to decode them again");
  if (!s.ok()) {
    if (status_.ok()) status_ = s;
    rows.clear();
    rows.resize(first.rows);
    slot->part = UINT32_MAX;  // asked again, tried again; the first status stays
  }
  return rows;
}

template class RowsAgain<KernelTable>;
template class RowsAgain<ApiTable>;

}  // namespace gpucap::builder
