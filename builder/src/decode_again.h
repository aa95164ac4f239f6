// A chunk's kernel or API rows decoded a second time, and checked to be the
// rows the first decoding gave: the work behind a RowSource (row_source.h)
// that the builder hands a large window's join. Below the join's rows had
// again (rows_again.h), which only compares what it is given, and the
// builder (builder.cc), which decodes with it; includes neither.
// Private to the builder.
#ifndef GPUCAP_BUILDER_SRC_DECODE_AGAIN_H_
#define GPUCAP_BUILDER_SRC_DECODE_AGAIN_H_

#include <cstddef>
#include <cstdint>

#include "gpucap/builder/capture_index.h"
#include "gpucap/builder/row_source.h"
#include "gpucap/builder/tables.h"
#include "gpucap/status.h"

namespace gpucap::builder {

// The count of `t`'s rows and a hash of their starts and correlation ids:
// what tells the rows decoded again from the first ones.
RowSource::Seen SeenOf(const KernelTable& t);
RowSource::Seen SeenOf(const ApiTable& t);

// Decodes the rows of `family` (kKernels, all columns; or kApis) of chunk
// `chunk` of `index`'s capture again into `out`, and checks them against
// `first`: a RowSource's work. A chunk damaged now, or decoding to other
// rows, is an error naming the capture and the chunk's offset.
Status DecodeAgain(const CaptureIndex& index, size_t chunk, uint32_t family, const RowSource::Seen& first,
                   ActivityTables* out);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_SRC_DECODE_AGAIN_H_
