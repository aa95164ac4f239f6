#include "gpucap/tools/json/json_text.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>

namespace gpucap::tools {
namespace {

constexpr size_t kReadChunk = 1 << 20;

}  // namespace

JsonText::JsonText(std::string text) : size_(text.size()) {
  text.resize(size_ + kPadding, '\0');
  bytes_ = std::move(text);
}

Result<JsonText> JsonText::Read(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return Status::NotFound(path + ": cannot open");
  gzbuffer(f, kReadChunk);
  JsonText t;
  struct stat st;
  // A plain file's text fits where it was reserved; a gzipped one grows.
  if (stat(path.c_str(), &st) == 0 && st.st_size > 0) t.bytes_.reserve(static_cast<size_t>(st.st_size) + kPadding);
  int n;
  for (;;) {
    // Room to read into: what was reserved first, then doubling.
    if (t.bytes_.size() == t.size_) {
      t.bytes_.resize(std::max(t.bytes_.capacity(), t.size_ + std::max(kReadChunk, t.size_)));
    }
    size_t room = std::min(t.bytes_.size() - t.size_, size_t{1} << 30);
    n = gzread(f, t.bytes_.data() + t.size_, static_cast<unsigned>(room));
    if (n <= 0) break;
    t.size_ += static_cast<size_t>(n);
  }
  int err = 0;
  std::string message = n < 0 ? gzerror(f, &err) : "";
  gzclose(f);
  if (n < 0) return Status::IoError(path + ": cannot read: " + message);
  t.bytes_.resize(t.size_ + kPadding);
  std::fill(t.bytes_.begin() + static_cast<std::ptrdiff_t>(t.size_), t.bytes_.end(), '\0');
  return t;
}

}  // namespace gpucap::tools
