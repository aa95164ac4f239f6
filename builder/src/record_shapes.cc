#include "gpucap/builder/record_shapes.h"

namespace gpucap::builder {

using format::RecordLayout;

RecordShapes::RecordShapes(const format::Capture& capture) {
  if (capture.session) {
    version_ = capture.session->cupti_runtime_version;
    if (version_ == 0) version_ = capture.session->cupti_header_version;
    for (const format::KindSize& k : capture.session->record_sizes) session_sizes_[k.kind] = k.size;
  }
  table_ = format::LayoutForVersion(version_);
  if (table_ == nullptr) {
    version_warning_ = "CUPTI version " + std::to_string(version_) +
                       " has no layout table in this gpucap; decoding only the record kinds "
                       "whose size matches a known layout";
  }
}

uint32_t RecordShapes::StrideFor(uint32_t kind, const format::ChunkInfo& info) const {
  for (const format::KindSize& k : info.record_sizes) {
    if (k.kind == kind) return k.size;
  }
  if (table_ != nullptr) {
    if (const RecordLayout* l = table_->Find(kind)) return l->size;
  }
  auto it = session_sizes_.find(kind);
  return it == session_sizes_.end() ? 0 : it->second;
}

const RecordLayout* RecordShapes::LayoutFor(uint32_t kind, uint32_t stride) const {
  if (table_ != nullptr) {
    const RecordLayout* l = table_->Find(kind);
    if (l != nullptr && l->size == stride) return l;
  }
  // Unknown version, or a size the version's table does not expect: the
  // bytes are only trusted when some known struct has exactly that size.
  return format::MatchLayoutBySize(kind, stride);
}

RecordShapes::Shape RecordShapes::ShapeOf(uint32_t kind, const format::ChunkInfo& info) const {
  Shape shape;
  shape.stride = StrideFor(kind, info);
  if (shape.stride != 0) shape.layout = LayoutFor(kind, shape.stride);
  return shape;
}

}  // namespace gpucap::builder
