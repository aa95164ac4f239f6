// Resolves CUPTI string pointers (kernel names, marker names) to the text the
// recorder interned. A pointer's definition applies to chunks written after
// it; the recording process may reuse a pointer for another string later, so
// a chunk takes the latest definition written before it.
#ifndef GPUCAP_BUILDER_STRINGS_H_
#define GPUCAP_BUILDER_STRINGS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "gpucap/builder/tables.h"
#include "gpucap/format/capture.h"

namespace gpucap::builder {

class StringResolver {
 public:
  explicit StringResolver(const std::vector<format::SequencedString>& strings);

  struct Resolution {
    uint32_t index = kNoString;  // into the capture's strings
    bool late = false;           // only a definition written after the chunk was found
  };
  // The string `pointer` meant in the chunk with frame sequence `sequence`.
  // Falls back to the earliest later definition (a recorder that wrote the
  // definition late) and says so; kNoString when the pointer was never
  // defined or is null.
  Resolution Resolve(uint64_t pointer, uint32_t sequence) const;

 private:
  struct Entry {
    uint64_t pointer;
    uint32_t sequence;
    uint32_t index;
  };
  std::vector<Entry> entries_;  // by pointer, then sequence
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_STRINGS_H_
