// The temporary file that bounds the index keys' memory (index_keys.h):
// sorted runs of index records, each record its size as a varint then its
// bytes, written one run after another and read back, every run at once,
// by the merge (index_merge.h). Made on the first spill with mkstemp from a
// template and unlinked at once, so no path, failed or not, leaves it
// behind; errors name the file, the offset and the system's reason.
#ifndef GPUCAP_TOOLS_EXPORT_SRC_SPILL_FILE_H_
#define GPUCAP_TOOLS_EXPORT_SRC_SPILL_FILE_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gpucap/status.h"

namespace gpucap::tools::sqlite {

class SpillFile {
 public:
  // `pattern`: mkstemp's template, ending in XXXXXX. Nothing is created yet.
  explicit SpillFile(std::string pattern) : path_(std::move(pattern)) {}
  ~SpillFile();
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;

  struct Run {
    uint64_t offset = 0, size = 0;
  };
  // A run is written between Begin and End by TryAppend/Append (the sink
  // interface of IndexBtree): records in index order.
  Status Begin();
  bool TryAppend(const uint8_t* record, size_t size) {
    if (size >= 0x80 || used_ + 1 + size > buffer_.size()) return false;
    buffer_[used_] = static_cast<uint8_t>(size);
    std::memcpy(buffer_.data() + used_ + 1, record, size);
    used_ += 1 + size;
    return true;
  }
  Status Append(const uint8_t* record, size_t size);
  Result<Run> End();

  // Reads `size` bytes at `offset` into `out` (a run's part, for the merge).
  Status Read(uint64_t offset, size_t size, uint8_t* out) const;
  const std::string& path() const { return path_; }
  uint64_t bytes() const { return end_; }

 private:
  Status Flush();
  Status Error(const std::string& what, uint64_t offset) const;

  std::string path_;  // the template until created, then the name it had
  int fd_ = -1;
  uint64_t end_ = 0, run_start_ = 0;
  std::vector<uint8_t> buffer_;
  size_t used_ = 0;
};

}  // namespace gpucap::tools::sqlite

#endif  // GPUCAP_TOOLS_EXPORT_SRC_SPILL_FILE_H_
