// Where a capture's bytes go. The writer thread is a Sink's only caller, and
// every byte of a capture passes through Append, so a disk error is seen in
// exactly one place.
#ifndef GPUCAP_FORMAT_SINK_H_
#define GPUCAP_FORMAT_SINK_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "gpucap/status.h"

namespace gpucap::format {

using ByteSpan = std::span<const uint8_t>;

class Sink {
 public:
  virtual ~Sink() = default;

  // Appends the pieces in order, all or nothing as far as the sink can tell;
  // after an error the sink's size is unknown (see Truncate).
  virtual Status Append(std::span<const ByteSpan> pieces) = 0;
  // Cuts the sink back to `size` bytes, dropping a partially appended frame.
  virtual Status Truncate(uint64_t size) = 0;
  virtual Status Sync() = 0;
  virtual Status Close() = 0;
  // For messages: the file name, or what the sink stands for.
  virtual const std::string& name() const = 0;
};

// A file sink that owns its descriptor. The file is created or truncated.
Result<std::unique_ptr<Sink>> OpenFileSink(const std::string& path);

// A sink over a descriptor opened elsewhere (O_APPEND not required). Takes
// ownership of fd.
std::unique_ptr<Sink> FileSinkFromFd(int fd, std::string name);

}  // namespace gpucap::format

#endif  // GPUCAP_FORMAT_SINK_H_
