// Remembers which CUPTI string pointers (kernel names) the capture already
// defines. CUPTI hands out `const char*` into its own memory and names are
// useless offline without the text, so the first sighting of a pointer emits
// a (pointer -> text) definition ahead of the buffer that uses it.
#ifndef GPUCAP_RECORDER_STRING_INTERNER_H_
#define GPUCAP_RECORDER_STRING_INTERNER_H_

#include <cstdint>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "gpucap/format/model.h"

namespace gpucap::recorder {

class StringInterner {
 public:
  // Appends a definition to *out when `pointer` is new. Cheap when it is not.
  void Note(const char* pointer, std::vector<format::SmallMessage>* out);
  // The definitions in `defs` did not reach the writer: forget them so the
  // next buffer that uses them defines them again.
  void Forget(const std::vector<format::SmallMessage>& defs);
  // A module unloaded: its name memory may be reused for other text.
  void Clear();
  size_t size();

 private:
  std::mutex mu_;  // completion callbacks may run on more than one CUPTI thread
  std::unordered_set<uintptr_t> known_;
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_STRING_INTERNER_H_
