// Kernel and API rows had again from the capture, for a window too large to
// hold them through its join (builder.h, kernels_kept_whole;
// row_source.h). Such a window's chunks are decoded without the kernels'
// argument columns (decode.h, kNoKernelArgs: 64 of a kernel row's 104
// bytes); once the ops are joined the join gives the kernel rows back, and
// once the slices are collected the API rows. What a slice needs of them is
// read as it is written, and the slices of one track go out in time order,
// so the rows come one chunk after another: a few chunks decoded again are
// kept, the one used longest ago handed back for the next. One per family
// per window join, never shared between window workers. Below the join:
// it knows the rows and their source (row_source.h), not the join.
// Private to the builder.
#ifndef GPUCAP_BUILDER_SRC_ROWS_AGAIN_H_
#define GPUCAP_BUILDER_SRC_ROWS_AGAIN_H_

#include <array>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "gpucap/builder/decode.h"
#include "gpucap/builder/row_source.h"
#include "gpucap/builder/tables.h"
#include "gpucap/status.h"

namespace gpucap::builder {

// Table: KernelTable (family kKernels) or ApiTable (kApis).
template <class Table>
class RowsAgain {
 public:
  RowsAgain(std::span<const ActivityTables* const> parts, uint32_t family, const RowSource& source)
      : parts_(parts), family_(family), source_(source) {}

  // Part `part`'s rows with every column. When they cannot be had again
  // (the chunk is found damaged this time, or decodes to other rows),
  // status() says why and the rows given are zeros of the right count, so
  // nothing reads out of bounds; the caller stops at the status.
  const Table& Of(uint16_t part) {
    if (!released_) {
      const Table& t = Mine(part);
      if (Whole(t)) return t;
    }
    return Again(part);
  }
  // Whether the window's parts lack kernel arguments, and a source can give
  // them back: then the join hands its rows back once it is done with them.
  bool CanRelease() const;
  // Notes what the parts' rows are, then hands them to the source to free
  // (RowSource::release); from here on every Of decodes again.
  void Release();
  bool released() const { return released_; }
  // Whether every part holds its rows whole, so that Of only reads (and
  // several threads may call it at once).
  bool AllWhole() const {
    if (released_) return false;
    for (uint16_t p = 0; p < parts_.size(); ++p) {
      if (!Whole(Mine(p))) return false;
    }
    return true;
  }
  const Status& status() const { return status_; }
  uint64_t decodes() const { return decodes_; }  // chunks decoded again

 private:
  const Table& Mine(uint16_t part) const {
    if constexpr (std::is_same_v<Table, KernelTable>) {
      return parts_[part]->kernels;
    } else {
      return parts_[part]->apis;
    }
  }
  static bool Whole(const Table& t) {
    if constexpr (std::is_same_v<Table, KernelTable>) {
      return t.has_args();
    } else {
      return true;
    }
  }
  const Table& Again(uint16_t part);

  struct Slot {
    uint32_t part = UINT32_MAX;
    uint64_t used = 0;
    ActivityTables rows;  // only this family's
  };
  // Four: a window's tracks interleave little within a chunk's span of
  // time, and a chunk's rows are a few MB.
  static constexpr size_t kSlots = 4;

  std::span<const ActivityTables* const> parts_;
  uint32_t family_;
  const RowSource& source_;
  std::vector<RowSource::Seen> seen_;  // per part, noted by Release
  bool released_ = false;
  std::array<Slot, kSlots> slots_;
  uint64_t clock_ = 0;
  uint64_t decodes_ = 0;
  Status status_ = Status::Ok();
};

extern template class RowsAgain<KernelTable>;
extern template class RowsAgain<ApiTable>;

// The kernel and API rows a window's slices are written from, as one pair:
// the join's, which it gives back while it runs, or a piece describer's own
// (slice_describer.h), since a RowsAgain is used by one thread at a time.
struct WindowRows {
  WindowRows(std::span<const ActivityTables* const> parts, const RowSource& source)
      : kernels(parts, kKernels, source), apis(parts, kApis, source) {}
  RowsAgain<KernelTable> kernels;
  RowsAgain<ApiTable> apis;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_SRC_ROWS_AGAIN_H_
