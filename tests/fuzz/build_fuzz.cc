// libFuzzer target: arbitrary bytes as a capture handed to the builder. Every
// window spec kind is built into Chrome JSON (thrown away); decoding, windows
// and joins must fail with a Status or succeed, never crash or run away.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "gpucap/builder/builder.h"

namespace {

class Discard : public gpucap::builder::ByteSink {
 public:
  gpucap::Status Append(std::string_view) override { return gpucap::Status::Ok(); }
  gpucap::Status Close() override { return gpucap::Status::Ok(); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fd = memfd_create("capture", MFD_CLOEXEC);
  if (fd < 0) return 0;
  for (size_t done = 0; done < size;) {
    ssize_t w = write(fd, data + done, size - done);
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  auto index = gpucap::builder::CaptureIndex::Open(path);
  if (index.ok()) {
    // The first byte picks the window spec, so the fuzzer reaches them all.
    static const char* kSpecs[] = {"all", "marks", "every:1ms", "nvtx:.*", "range:+0ns:+1s"};
    gpucap::builder::BuildOptions o;
    o.window = kSpecs[size ? data[0] % 5 : 0];
    o.threads = 1;
    o.join.graph_dependencies = size > 1 && (data[1] & 1);
    gpucap::builder::Builder builder(**index, o);
    auto windows = builder.Windows();
    if (windows.ok()) {
      size_t built = 0;
      for (const auto& w : *windows) {
        if (++built > 8) break;  // bounded work per input
        auto sink = gpucap::builder::MakeRenderer(o.format, std::make_unique<Discard>());
        gpucap::builder::WindowReport report;
        (void)builder.BuildWindow(w, sink.get(), &report);
      }
    }
  }
  close(fd);
  return 0;
}
