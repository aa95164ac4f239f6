// Decodes activity chunks (raw CUPTI buffers) into ActivityTables with the
// record layouts of the CUPTI version that wrote the capture. Never includes
// CUPTI: layouts come from gpucap/format/cupti_layout.h.
//
// Records are walked (record_walk.h) with the per-kind strides the recorder stored with each
// chunk (then the layout's size, then the session's sizes: record_shapes.h). A kind gpucap has
// no layout for is stepped over and counted; a record whose size nothing
// tells ends the walk of its chunk, and the bytes after it are counted.
#ifndef GPUCAP_BUILDER_DECODE_H_
#define GPUCAP_BUILDER_DECODE_H_

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "gpucap/builder/record_shapes.h"
#include "gpucap/builder/strings.h"
#include "gpucap/builder/tables.h"
#include "gpucap/format/capture.h"
#include "gpucap/format/cupti_layout.h"
#include "gpucap/status.h"

namespace gpucap::builder {

// Record families, to decode only some of a chunk (a lookback for launch
// records needs no kernels).
enum Family : uint32_t {
  kKernels = 1u << 0,
  kMemcpys = 1u << 1,
  kMemsets = 1u << 2,
  kApis = 1u << 3,
  kExternals = 1u << 4,
  kOverheads = 1u << 5,
  kSyncs = 1u << 6,
  kCudaEvents = 1u << 7,
  kMarkers = 1u << 8,
  kEnvironment = 1u << 9,
  kGraphTraces = 1u << 10,
  kAllFamilies = (1u << 11) - 1,
  // Not a family: with kKernels, the kernels' argument columns are freed
  // once their chunk is decoded (KernelTable::DropArgs), for a window too
  // large to hold them; kernel_rows.h brings them back.
  kNoKernelArgs = 1u << 11,
};

// The family of an activity kind's records; 0 for kinds no family reads.
uint32_t FamilyOf(uint32_t kind);

// What decoding found besides rows. Merged across chunks.
struct DecodeStats {
  uint64_t records = 0;                         // records walked
  uint64_t chunks = 0;
  std::map<uint32_t, uint64_t> skipped_kinds;   // kind -> records without a usable layout
  uint64_t unwalkable_bytes = 0;                // after a record of unknown size
  uint64_t unresolved_names = 0;                // string pointers never defined
  uint64_t late_names = 0;                      // defined only after their chunk
  uint64_t corrupt_chunks = 0;                  // failed to decompress or checksum
  uint64_t backward_spans = 0;                  // kernels, copies, memsets ending before they start
  std::vector<std::string> problems;            // one line per bad chunk, file and offset

  void Merge(const DecodeStats& other);
};

class Decoder {
 public:
  // Picks layouts for `capture`, which must outlive the decoder.
  explicit Decoder(const format::Capture& capture);

  // The CUPTI version records are decoded as, and a line for the person
  // reading when that version has no table of its own.
  uint32_t cupti_version() const { return shapes_.cupti_version(); }
  const std::string& version_warning() const { return shapes_.version_warning(); }
  // How records sit in the capture's chunks, kind by kind: what the record
  // walk (record_walk.h) steps by.
  const RecordShapes& shapes() const { return shapes_; }

  // Decompresses chunk `index` of the capture and appends its rows of the
  // families in `families` to `out`. A corrupt chunk is counted and
  // described in `stats`, its rows skipped, and the call still succeeds:
  // one bad buffer must not cost the whole trace. `scratch` is reused.
  // With kNoKernelArgs in `families`, `out`'s kernels lose their argument
  // columns afterwards.
  void DecodeChunk(size_t index, uint32_t families, ActivityTables* out, DecodeStats* stats,
                   std::vector<uint64_t>* scratch) const;

  // Walks raw CUPTI bytes of a chunk with sequence `sequence`.
  void DecodeRecords(std::span<const uint8_t> raw, const format::ChunkInfo& info, uint32_t sequence,
                     uint32_t families, ActivityTables* out, DecodeStats* stats) const;

  // Lines for a person about what was skipped, naming the CUPTI version.
  std::vector<std::string> Describe(const DecodeStats& stats) const;

 private:
  const format::Capture& capture_;
  RecordShapes shapes_;
  StringResolver strings_;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_DECODE_H_
