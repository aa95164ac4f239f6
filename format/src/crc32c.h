// CRC32C (Castagnoli), the checksum of every frame. Hardware-accelerated
// where the CPU has SSE4.2, table-driven elsewhere; both give the same value.
#ifndef GPUCAP_FORMAT_CRC32C_H_
#define GPUCAP_FORMAT_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace gpucap::format {

// Extends `crc` (0 for a fresh checksum) over n bytes.
uint32_t Crc32c(uint32_t crc, const void* data, size_t n);
// The portable implementation, exposed so tests can compare both paths.
uint32_t Crc32cPortable(uint32_t crc, const void* data, size_t n);

}  // namespace gpucap::format

#endif  // GPUCAP_FORMAT_CRC32C_H_
