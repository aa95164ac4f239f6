// The capture file's on-disk layout below the Cap'n Proto messages: the file
// header, the frame header and the footer. Everything is little-endian and
// every frame starts 8-byte aligned, so a reader maps the file and hands
// payloads to Cap'n Proto without copying.
//
//   file    := FileHeader frame* [trailer-frame Footer]
//   frame   := FrameHeader payload (length bytes, a multiple of 8)
//   payload := Cap'n Proto message (segment table + segments), or, with
//              kFrameCompressed, u32 raw length, u32 zero, LZ4 block of it
//
// A frame header is protected by its own CRC32C so a reader can trust the
// length before it trusts the payload, and finds the next frame after damage
// by searching for kFrameMagic and checking the header CRC there.
#ifndef GPUCAP_FORMAT_FRAME_H_
#define GPUCAP_FORMAT_FRAME_H_

#include <cstddef>
#include <cstdint>

namespace gpucap::format {

inline constexpr uint16_t kFormatMajor = 1;
inline constexpr uint16_t kFormatMinor = 0;

inline constexpr char kFileMagic[8] = {'\x89', 'G', 'P', 'U', 'C', 'A', 'P', '\n'};
inline constexpr char kFooterMagic[8] = {'\x89', 'G', 'P', 'C', 'E', 'N', 'D', '\n'};
inline constexpr uint32_t kFrameMagic = 0x46435047;  // "GPCF" read as little-endian bytes

// Frame type codes. A reader skips (and counts) codes it does not know.
enum class FrameType : uint16_t {
  kSession = 1,
  kDevices = 2,
  kClocks = 3,
  kActivityChunk = 4,
  kStrings = 5,
  kRanges = 6,
  kGraphs = 7,
  kWindows = 8,
  kThreads = 9,
  kMetadata = 10,
  kStats = 11,
  kTrailer = 12,
  kCounters = 13,
  kStreams = 14,
};
const char* FrameTypeName(uint16_t type);
bool IsKnownFrameType(uint16_t type);

inline constexpr uint16_t kFrameCompressed = 1u << 0;

struct FileHeader {
  char magic[8];
  uint16_t major;
  uint16_t minor;
  uint32_t header_size;
  int64_t created_realtime_ns;
  uint32_t reserved;
  uint32_t crc;  // CRC32C of the bytes before it
};
static_assert(sizeof(FileHeader) == 32);

struct FrameHeader {
  uint32_t magic;
  uint32_t length;       // payload bytes that follow the header
  uint16_t type;
  uint16_t flags;
  uint32_t sequence;     // 0, 1, 2, ... in write order: gaps are lost frames
  uint32_t payload_crc;  // CRC32C of the payload
  uint32_t header_crc;   // CRC32C of the 20 bytes before it
};
static_assert(sizeof(FrameHeader) == 24);

struct Footer {
  uint64_t trailer_offset;
  char magic[8];
};
static_assert(sizeof(Footer) == 16);

// Bounds a reader enforces before it allocates or decompresses anything.
inline constexpr uint32_t kMaxFramePayload = 64u << 20;
inline constexpr uint32_t kMaxRawChunk = 256u << 20;

}  // namespace gpucap::format

#endif  // GPUCAP_FORMAT_FRAME_H_
