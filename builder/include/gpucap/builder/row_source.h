// RowSource: how a large window's join has rows again that it gave up while
// it ran (builder.h, kernels_kept_whole). Its own header, below the join
// (join.h) and the rows had again (builder/src/rows_again.h), so that
// neither has to include the other to name it.
#ifndef GPUCAP_BUILDER_ROW_SOURCE_H_
#define GPUCAP_BUILDER_ROW_SOURCE_H_

#include <cstdint>
#include <functional>

#include "gpucap/builder/tables.h"
#include "gpucap/status.h"

namespace gpucap::builder {

// Rows a large window's join gives up while it runs and has again from the
// capture as it writes their slices (builder.h, kernels_kept_whole): the
// kernels' argument columns (parts decoded with kNoKernelArgs), then the
// kernel and API rows altogether. Called from the window's join only.
struct RowSource {
  // What a part's rows of a family were when the join was given them: their
  // count and a hash of their starts and correlation ids (decode_again.h).
  struct Seen {
    uint64_t rows = 0;
    uint64_t hash = 0;
  };
  // Fills `out` with part `part`'s rows of `family` (kKernels: argument
  // columns included; kApis), decoded again: the same rows in the same
  // order, checked against `first`. An error (the chunk found damaged this
  // time) names the file and offset, and ends the window with it.
  std::function<Status(uint16_t part, uint32_t family, const Seen& first, ActivityTables* out)> again;
  // The join is done with the rows of `family` (kKernels or kApis) it was
  // given, and will not read them again: the caller may free them. Called
  // only when `again` is set and some part lacks its kernel arguments.
  std::function<void(uint32_t family)> release;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_ROW_SOURCE_H_
