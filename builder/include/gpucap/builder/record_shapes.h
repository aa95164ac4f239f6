// How the raw CUPTI records of a capture's chunks are laid out, kind by
// kind: the stride from one record to the next (the recorder's per-kind
// sizes for the chunk, then the size of the layout the capture's CUPTI
// version has for the kind, then the session's sizes) and the layout its
// fields are read with. Below both the record walk (record_walk.h) and the
// decoder (decode.h), which read records through it; it knows neither.
// Never includes CUPTI: layouts come from gpucap/format/cupti_layout.h.
#ifndef GPUCAP_BUILDER_RECORD_SHAPES_H_
#define GPUCAP_BUILDER_RECORD_SHAPES_H_

#include <cstdint>
#include <map>
#include <string>

#include "gpucap/format/capture.h"
#include "gpucap/format/cupti_layout.h"

namespace gpucap::builder {

class RecordShapes {
 public:
  // Picks the layout table of `capture`'s CUPTI version; `capture` must
  // outlive this.
  explicit RecordShapes(const format::Capture& capture);

  // The CUPTI version records are read as, and a line for the person
  // reading when that version has no table of its own.
  uint32_t cupti_version() const { return version_; }
  const std::string& version_warning() const { return version_warning_; }

  // How records of `kind` sit in a chunk described by `info`: the stride
  // from one to the next (0: nothing tells) and the layout their fields are
  // read with (null: none known; the decoder skips them).
  struct Shape {
    uint32_t stride = 0;
    const format::RecordLayout* layout = nullptr;
  };
  Shape ShapeOf(uint32_t kind, const format::ChunkInfo& info) const;

 private:
  const format::RecordLayout* LayoutFor(uint32_t kind, uint32_t stride) const;
  uint32_t StrideFor(uint32_t kind, const format::ChunkInfo& info) const;

  uint32_t version_ = 0;
  const format::LayoutTable* table_ = nullptr;
  std::string version_warning_;
  std::map<uint32_t, uint32_t> session_sizes_;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_RECORD_SHAPES_H_
