// Names for code addresses (CUDA graph host functions). dladdr only sees
// exported symbols, and a host function is usually a static function of the
// executable; the file's own symbol table names it.
#ifndef GPUCAP_RECORDER_SYMBOLIZE_H_
#define GPUCAP_RECORDER_SYMBOLIZE_H_

#include <cstdint>
#include <string>

namespace gpucap::recorder {

// The symbol covering `address`, mangled as in the binary, or "" if none.
std::string SymbolFor(uint64_t address);

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_SYMBOLIZE_H_
