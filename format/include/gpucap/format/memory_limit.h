// How much memory reading one capture may take, whatever the capture says.
//
// A capture compresses its small messages (ranges, graph events, threads,
// strings, metadata) well: a few MB on disk can decode into millions of
// structs. The loader adds up what each decoded message costs in memory
// (DecodedBytes) and stops before the total, times kWorkFactor, passes the
// limit, with an error that names the file, what was too large, the limit
// and the flag that raises it (--max-memory): a clear refusal instead of a
// std::bad_alloc gigabytes later.
//
// The limit is per capture: by default 10x the file's size plus 256 MB (the
// budget every command is held to, tests/hostile/memory_test.cc); the CLI's
// --max-memory sets it for the whole process (SetMemoryLimit).
#ifndef GPUCAP_FORMAT_MEMORY_LIMIT_H_
#define GPUCAP_FORMAT_MEMORY_LIMIT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "gpucap/format/model.h"
#include "gpucap/status.h"

namespace gpucap::format {

// The default limit's parts: kDefaultPerFileByte x the file's size plus
// kDefaultFixedBytes.
inline constexpr uint64_t kDefaultPerFileByte = 10;
inline constexpr uint64_t kDefaultFixedBytes = 256ull << 20;
// What the commands build on top of the decoded messages (the range and
// graph indexes, the join's tables, the exporter's rows) takes up to about
// three times the messages again: the loader checks 4x their size (measured
// on tests/hostile/memory_families.h: trim, export and merge peak at 2.5-3.6x
// what `info` holds).
inline constexpr uint64_t kWorkFactor = 4;

// The process-wide limit: 0 restores the default (10x the file + 256 MB);
// UINT64_MAX is no limit.
void SetMemoryLimit(uint64_t bytes);
// The limit for a capture file of `file_bytes` bytes.
uint64_t MemoryLimitFor(uint64_t file_bytes);

// "512M", "4G", "1.5G", "1048576" (bytes), "none": bytes (UINT64_MAX for
// none). Suffixes K, M, G, T are powers of 1024.
Result<uint64_t> ParseMemorySize(std::string_view text);
// "3.2 GB", "512 MB", "700 KB", "12 bytes".
std::string MemorySizeText(uint64_t bytes);

// The memory one decoded message holds: its struct in the capture's list
// and the heap blocks of its strings and lists.
uint64_t DecodedBytes(const SmallMessage& message);

}  // namespace gpucap::format

#endif  // GPUCAP_FORMAT_MEMORY_LIMIT_H_
