#include "decode_again.h"

#include <string>
#include <vector>

#include "gpucap/builder/decode.h"

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

}  // namespace

RowSource::Seen SeenOf(const KernelTable& t) { return Hash(t); }
RowSource::Seen SeenOf(const ApiTable& t) { return Hash(t); }

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
