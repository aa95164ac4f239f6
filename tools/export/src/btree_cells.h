// What table and index B-trees share (https://www.sqlite.org/fileformat2.html,
// "B-tree Pages"): big-endian page fields, how much of a cell's payload
// stays on its page, and the overflow chain that carries the rest.
#ifndef GPUCAP_TOOLS_EXPORT_SRC_BTREE_CELLS_H_
#define GPUCAP_TOOLS_EXPORT_SRC_BTREE_CELLS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpucap/status.h"
#include "page_file.h"

namespace gpucap::tools::sqlite {

inline void Put16(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
inline void Put32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}
inline uint32_t Get32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

enum class Tree : uint8_t { kTable, kIndex };

// The bytes of a `size`-byte payload kept on a page of `page_size` bytes
// ("Cell Payload Overflow Pages"): all of it up to X (U-35 on table leaves,
// (U-12)*64/255-23 on index pages), else K or M as the spec sets them.
inline size_t MaxLocal(size_t page_size, Tree tree) {
  return tree == Tree::kTable ? page_size - 35 : ((page_size - 12) * 64 / 255) - 23;
}
inline size_t LocalPayload(size_t page_size, size_t size, Tree tree) {
  const size_t u = page_size, x = MaxLocal(page_size, tree);
  if (size <= x) return size;
  const size_t m = ((u - 12) * 32 / 255) - 23;
  const size_t k = m + ((size - m) % (u - 4));
  return k <= x ? k : m;
}

// Writes `rest` on overflow pages (each: the next page's number, 0 on the
// last, then content); `*first` is the chain's first page. `scratch` holds
// one page.
Status WriteOverflow(PageFile* file, const uint8_t* rest, size_t size, uint32_t* first,
                     std::vector<uint8_t>* scratch);

}  // namespace gpucap::tools::sqlite

#endif  // GPUCAP_TOOLS_EXPORT_SRC_BTREE_CELLS_H_
