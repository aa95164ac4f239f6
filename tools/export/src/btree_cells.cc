#include "btree_cells.h"

#include <algorithm>
#include <cstring>

namespace gpucap::tools::sqlite {

Status WriteOverflow(PageFile* file, const uint8_t* rest, size_t size, uint32_t* first,
                     std::vector<uint8_t>* scratch) {
  const size_t room = file->page_size() - 4;
  const size_t pages = (size + room - 1) / room;
  scratch->resize(file->page_size());
  uint32_t number = file->Allocate();
  *first = number;
  for (size_t i = 0; i < pages; ++i) {
    const size_t n = std::min(room, size - i * room);
    const uint32_t next = i + 1 < pages ? file->Allocate() : 0;
    std::memset(scratch->data(), 0, scratch->size());
    Put32(scratch->data(), next);
    std::memcpy(scratch->data() + 4, rest + i * room, n);
    GPUCAP_RETURN_IF_ERROR(file->Write(number, scratch->data()));
    number = next;
  }
  return Status::Ok();
}

}  // namespace gpucap::tools::sqlite
