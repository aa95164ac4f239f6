// libFuzzer target: arbitrary bytes as a capture file. The reader must
// return errors or damage reports, never crash, hang or allocate without
// bound; whatever it accepts must decompress or report why not.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpucap/format/capture.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The reader maps files; a memfd is a file without touching the disk.
  int fd = memfd_create("capture", MFD_CLOEXEC);
  if (fd < 0) return 0;
  size_t done = 0;
  while (done < size) {
    ssize_t w = write(fd, data + done, size - done);
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  for (bool use_trailer : {true, false}) {
    gpucap::format::LoadOptions options;
    options.read.use_trailer = use_trailer;
    auto capture = gpucap::format::LoadCapture(path, options);
    if (!capture.ok()) continue;
    (void)capture->report.Describe(path);
    std::vector<uint64_t> raw;
    for (const auto& chunk : capture->chunks) {
      (void)gpucap::format::DecompressChunk(*capture->file, chunk, &raw);
    }
  }
  close(fd);
  return 0;
}
