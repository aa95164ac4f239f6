#include "rows_again.h"

#include <string>

namespace gpucap::builder {
namespace {

template <class Table>
RowSource::Seen Hash(const Table& t) {
  RowSource::Seen seen{t.size(), 0xcbf29ce484222325ull};
  for (size_t i = 0; i < t.size(); ++i) {
    seen.hash = (seen.hash ^ t.start[i]) * 0x100000001b3ull;
    seen.hash = (seen.hash ^ t.correlation[i]) * 0x100000001b3ull;
  }
  return seen;
}

template <class Table>
Table& Rows(ActivityTables& t) {
  if constexpr (std::is_same_v<Table, KernelTable>) {
    return t.kernels;
  } else {
    return t.apis;
  }
}

}  // namespace

RowSource::Seen SeenOf(const KernelTable& t) { return Hash(t); }
RowSource::Seen SeenOf(const ApiTable& t) { return Hash(t); }

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

Status DecodeAgain(const CaptureIndex& index, size_t chunk, uint32_t family, const RowSource::Seen& first,
                   ActivityTables* out) {
  const format::ChunkView& view = index.capture().chunks[chunk];
  const char* what = family == kKernels ? "kernels" : "API calls";
  DecodeStats stats;
  std::vector<uint64_t> scratch;
  *out = ActivityTables();
  index.decoder().DecodeChunk(chunk, family, out, &stats, &scratch);
  if (stats.corrupt_chunks != 0) {
    // The decoder's line names the file and offset.
    std::string line = stats.problems.empty() ? index.path() + ": offset " + std::to_string(view.frame_offset)
                                              : stats.problems.front();
    return Status::Corrupt(line + " (found damaged when decoded again for its " + what + ")");
  }
  RowSource::Seen seen = family == kKernels ? SeenOf(out->kernels) : SeenOf(out->apis);
  if (seen.rows != first.rows || seen.hash != first.hash) {
    return Status::Corrupt(index.path() + ": offset " + std::to_string(view.frame_offset) +
                           ": activity chunk: decoded again for its " + what + ", it gives other rows (" +
                           std::to_string(seen.rows) + ", " + std::to_string(first.rows) +
                           " the first time): the capture changed while the trace was built");
  }
  return Status::Ok();
}

}  // namespace gpucap::builder
