// Where the page writer (table_btree.h) puts a database image: numbered
// pages of one size, allocated in order from 1, written once each (the
// database header on page 1 is patched last). A file (the export's
// temporary) or memory (handed to SQLite with sqlite3_deserialize).
#ifndef GPUCAP_TOOLS_EXPORT_SRC_PAGE_FILE_H_
#define GPUCAP_TOOLS_EXPORT_SRC_PAGE_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "gpucap/status.h"

struct sqlite3;

namespace gpucap::tools::sqlite {

class PageFile {
 public:
  explicit PageFile(uint32_t page_size) : page_size_(page_size) {}
  virtual ~PageFile() = default;
  uint32_t page_size() const { return page_size_; }
  uint32_t Allocate() { return ++pages_; }
  uint32_t pages() const { return pages_; }
  // Writes `page_size()` bytes as page `number` (from 1).
  virtual Status Write(uint32_t number, const uint8_t* page) = 0;
  // Overwrites `n` bytes at `offset` of the image (the database header).
  virtual Status Patch(uint64_t offset, const uint8_t* bytes, size_t n) = 0;

 private:
  uint32_t page_size_;
  uint32_t pages_ = 0;
};

class FilePageFile : public PageFile {
 public:
  // Creates (truncates) `path`.
  static Result<std::unique_ptr<FilePageFile>> Create(const std::string& path, uint32_t page_size);
  ~FilePageFile() override;
  Status Write(uint32_t number, const uint8_t* page) override;
  Status Patch(uint64_t offset, const uint8_t* bytes, size_t n) override;
  Status Close();

 private:
  FilePageFile(std::string path, int fd, uint32_t page_size) : PageFile(page_size), path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_;
};

// The image in one buffer from sqlite3_malloc64, so SQLite can own it.
class MemoryPageFile : public PageFile {
 public:
  explicit MemoryPageFile(uint32_t page_size) : PageFile(page_size) {}
  ~MemoryPageFile() override;
  Status Write(uint32_t number, const uint8_t* page) override;
  Status Patch(uint64_t offset, const uint8_t* bytes, size_t n) override;
  // Gives the image to `db` as its main database (sqlite3_deserialize; SQLite
  // frees and may grow it). SQLite owns the buffer from then on, also when it
  // refuses it. Returns SQLite's result code.
  int HandTo(sqlite3* db);

 private:
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0, capacity_ = 0;
};

}  // namespace gpucap::tools::sqlite

#endif  // GPUCAP_TOOLS_EXPORT_SRC_PAGE_FILE_H_
