#include "spill_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "record.h"

namespace gpucap::tools::sqlite {
namespace {

// The write buffer: big writes, few system calls.
constexpr size_t kBufferBytes = size_t{1} << 20;

}  // namespace

SpillFile::~SpillFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status SpillFile::Error(const std::string& what, uint64_t offset) const {
  const int e = errno;
  std::string m = path_ + ": " + what + " at offset " + std::to_string(offset) +
                  " of the index keys' temporary file: " + std::strerror(e);
  return e == ENOSPC || e == EFBIG ? Status::NoSpace(std::move(m)) : Status::IoError(std::move(m));
}

Status SpillFile::Begin() {
  if (fd_ < 0) {
    std::vector<char> name(path_.begin(), path_.end());
    name.push_back('\0');
    fd_ = ::mkstemp(name.data());
    if (fd_ < 0) {
      return Status::IoError(path_ + ": cannot create the index keys' temporary file: " + std::strerror(errno));
    }
    path_ = name.data();
    ::unlink(path_.c_str());  // gone from the directory now; the data lives until close
    buffer_.resize(kBufferBytes);
  }
  run_start_ = end_;
  used_ = 0;
  return Status::Ok();
}

Status SpillFile::Flush() {
  size_t done = 0;
  while (done < used_) {
    const ssize_t n = ::pwrite(fd_, buffer_.data() + done, used_ - done, static_cast<off_t>(end_));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return Error("cannot write", end_);
    }
    done += static_cast<size_t>(n);
    end_ += static_cast<uint64_t>(n);
  }
  used_ = 0;
  return Status::Ok();
}

Status SpillFile::Append(const uint8_t* record, size_t size) {
  if (TryAppend(record, size)) return Status::Ok();
  uint8_t head[9];
  const size_t h = PutVarint(head, size);
  if (used_ + h + size > buffer_.size()) GPUCAP_RETURN_IF_ERROR(Flush());
  if (h + size > buffer_.size()) buffer_.resize(h + size);
  std::memcpy(buffer_.data() + used_, head, h);
  std::memcpy(buffer_.data() + used_ + h, record, size);
  used_ += h + size;
  return Status::Ok();
}

Result<SpillFile::Run> SpillFile::End() {
  GPUCAP_RETURN_IF_ERROR(Flush());
  return Run{run_start_, end_ - run_start_};
}

Status SpillFile::Read(uint64_t offset, size_t size, uint8_t* out) const {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd_, out + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;  // shorter than what was written
      return Error("cannot read", offset + done);
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace gpucap::tools::sqlite
