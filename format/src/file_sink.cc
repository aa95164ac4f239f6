#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "gpucap/format/sink.h"

namespace gpucap::format {
namespace {

Status ErrnoStatus(int err, const std::string& name, const char* what, uint64_t offset) {
  std::string msg = name + ": " + what + " failed at offset " + std::to_string(offset) + ": " +
                    std::strerror(err);
  if (err == ENOSPC || err == EDQUOT || err == EFBIG) return Status::NoSpace(msg);
  return Status::IoError(msg);
}

class FileSink final : public Sink {
 public:
  FileSink(int fd, std::string name) : fd_(fd), name_(std::move(name)) {
    off_t pos = lseek(fd_, 0, SEEK_CUR);
    offset_ = pos > 0 ? static_cast<uint64_t>(pos) : 0;
  }
  ~FileSink() override {
    if (fd_ >= 0) close(fd_);
  }

  Status Append(std::span<const ByteSpan> pieces) override {
    if (fd_ < 0) return Status::IoError(name_ + ": append after close");
    std::vector<iovec> iov;
    iov.reserve(pieces.size());
    for (const ByteSpan& p : pieces) {
      if (!p.empty()) iov.push_back({const_cast<uint8_t*>(p.data()), p.size()});
    }
    size_t first = 0;
    while (first < iov.size()) {
      int n = static_cast<int>(std::min<size_t>(iov.size() - first, IOV_MAX));
      ssize_t w = writev(fd_, iov.data() + first, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus(errno, name_, "write", offset_);
      }
      if (w == 0) return ErrnoStatus(ENOSPC, name_, "write", offset_);
      offset_ += static_cast<uint64_t>(w);
      // Advance past what was written; a short write continues mid-piece.
      size_t left = static_cast<size_t>(w);
      while (first < iov.size() && left >= iov[first].iov_len) left -= iov[first++].iov_len;
      if (left > 0) {
        iov[first].iov_base = static_cast<uint8_t*>(iov[first].iov_base) + left;
        iov[first].iov_len -= left;
      }
    }
    return Status::Ok();
  }

  Status Truncate(uint64_t size) override {
    if (fd_ < 0) return Status::IoError(name_ + ": truncate after close");
    if (ftruncate(fd_, static_cast<off_t>(size)) != 0) {
      return ErrnoStatus(errno, name_, "truncate", size);
    }
    if (lseek(fd_, static_cast<off_t>(size), SEEK_SET) < 0) {
      return ErrnoStatus(errno, name_, "seek", size);
    }
    offset_ = size;
    return Status::Ok();
  }

  Status Sync() override {
    if (fd_ >= 0 && fdatasync(fd_) != 0) return ErrnoStatus(errno, name_, "fdatasync", offset_);
    return Status::Ok();
  }

  Status Close() override {
    if (fd_ < 0) return Status::Ok();
    int rc = close(fd_);
    fd_ = -1;
    if (rc != 0 && errno != EINTR) return ErrnoStatus(errno, name_, "close", offset_);
    return Status::Ok();
  }

  const std::string& name() const override { return name_; }

 private:
  int fd_;
  std::string name_;
  uint64_t offset_ = 0;
};

}  // namespace

Result<std::unique_ptr<Sink>> OpenFileSink(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::IoError(path + ": cannot create capture file: " + std::strerror(errno));
  }
  return std::unique_ptr<Sink>(new FileSink(fd, path));
}

std::unique_ptr<Sink> FileSinkFromFd(int fd, std::string name) {
  return std::unique_ptr<Sink>(new FileSink(fd, std::move(name)));
}

}  // namespace gpucap::format
