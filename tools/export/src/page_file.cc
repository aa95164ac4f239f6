#include "page_file.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <memory>

namespace gpucap::tools::sqlite {
namespace {

Status PwriteAll(int fd, const std::string& path, const uint8_t* p, size_t n, uint64_t offset) {
  while (n > 0) {
    ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return Status::IoError(path + ": writing at offset " + std::to_string(offset) + ": " + std::strerror(errno));
    p += w;
    n -= static_cast<size_t>(w);
    offset += static_cast<uint64_t>(w);
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<FilePageFile>> FilePageFile::Create(const std::string& path, uint32_t page_size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError(path + ": cannot create: " + std::strerror(errno));
  return std::unique_ptr<FilePageFile>(new FilePageFile(path, fd, page_size));
}

FilePageFile::~FilePageFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status FilePageFile::Write(uint32_t number, const uint8_t* page) {
  return PwriteAll(fd_, path_, page, page_size(), uint64_t{number - 1} * page_size());
}

Status FilePageFile::Patch(uint64_t offset, const uint8_t* bytes, size_t n) {
  return PwriteAll(fd_, path_, bytes, n, offset);
}

Status FilePageFile::Close() {
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return Status::IoError(path_ + ": closing: " + std::strerror(errno));
  return Status::Ok();
}

MemoryPageFile::~MemoryPageFile() { sqlite3_free(data_); }

Status MemoryPageFile::Write(uint32_t number, const uint8_t* page) {
  uint64_t end = uint64_t{number} * page_size();
  if (end > capacity_) {
    uint64_t capacity = std::max<uint64_t>(end, capacity_ * 2);
    auto* grown = static_cast<uint8_t*>(sqlite3_realloc64(data_, capacity));
    if (grown == nullptr) return Status::IoError("out of memory for a database image of " + std::to_string(capacity) + " bytes");
    data_ = grown;
    capacity_ = capacity;
  }
  if (end > size_) {
    std::memset(data_ + size_, 0, end - size_);
    size_ = end;
  }
  std::memcpy(data_ + end - page_size(), page, page_size());
  return Status::Ok();
}

Status MemoryPageFile::Patch(uint64_t offset, const uint8_t* bytes, size_t n) {
  if (offset + n > size_) return Status::Internal("database image: patch past its end");
  std::memcpy(data_ + offset, bytes, n);
  return Status::Ok();
}

int MemoryPageFile::HandTo(sqlite3* db) {
  uint8_t* image = data_;
  uint64_t size = size_, capacity = capacity_;
  data_ = nullptr;
  size_ = capacity_ = 0;
  return sqlite3_deserialize(db, "main", image, static_cast<sqlite3_int64>(size), static_cast<sqlite3_int64>(capacity),
                             SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE);
}

}  // namespace gpucap::tools::sqlite
