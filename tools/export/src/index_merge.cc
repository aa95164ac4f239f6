#include "index_merge.h"

#include <algorithm>
#include <cstring>

#include "index_order.h"
#include "record.h"

namespace gpucap::tools::sqlite {
namespace {

// Bytes read from the spill file at a time, per run.
constexpr size_t kReadBytes = size_t{64} << 10;
constexpr size_t kMaxColumns = 17;  // 16 key columns and the rowid

// A varint at `p` of at most `n` bytes; 0 when it does not end in them.
size_t GetVarint(const uint8_t* p, size_t n, uint64_t* v) {
  uint64_t x = 0;
  for (size_t i = 0; i < 8 && i < n; ++i) {
    x = (x << 7) | (p[i] & 0x7f);
    if ((p[i] & 0x80) == 0) {
      *v = x;
      return i + 1;
    }
  }
  if (n < 9) return 0;
  *v = (x << 8) | p[8];
  return 9;
}

struct Column {
  Value::Type type;
  int64_t i;
  double d;
  const char* text;
  size_t size;
};

// One run read back record by record; the head's texts point into `buffer`.
class RunReader {
 public:
  RunReader(const SpillFile* file, SpillFile::Run run) : file_(file), next_(run.offset), left_(run.size) {}

  // The next record as the head; false at the run's end (`status` says
  // whether it ended well).
  bool Next(Status* status) {
    pos_ += head_size_;
    head_size_ = 0;
    if (pos_ == len_ && left_ == 0) return false;
    uint64_t size = 0;
    if (!Have(9, status)) return false;
    const size_t h = GetVarint(buffer_.data() + pos_, len_ - pos_, &size);
    if (h == 0 || !Have(h + size, status) || len_ - pos_ < h + size) return Bad(status);
    pos_ += h;
    head_size_ = size;
    return Decode(buffer_.data() + pos_, size) || Bad(status);
  }
  const Column* head() const { return columns_; }
  size_t columns() const { return count_; }
  const uint8_t* record() const { return buffer_.data() + pos_; }
  size_t record_size() const { return head_size_; }

 private:
  // At least `n` bytes from pos_ in the buffer, or what is left of the run
  // when that is less (false only on a read error).
  bool Have(size_t n, Status* status) {
    if (len_ - pos_ >= n || left_ == 0) return true;
    // An empty buffer's data() may be null, which memmove must not see.
    if (len_ > pos_) std::memmove(buffer_.data(), buffer_.data() + pos_, len_ - pos_);
    len_ -= pos_;
    pos_ = 0;
    // Small runs (many, under a small budget) get small buffers.
    const size_t room = std::max(n, static_cast<size_t>(std::min<uint64_t>(kReadBytes, len_ + left_)));
    if (buffer_.size() < room) buffer_.resize(room);
    const size_t want = static_cast<size_t>(std::min<uint64_t>(left_, buffer_.size() - len_));
    *status = file_->Read(next_, want, buffer_.data() + len_);
    if (!status->ok()) return false;
    next_ += want;
    left_ -= want;
    len_ += want;
    return true;
  }
  bool Bad(Status* status) {
    if (status->ok()) {
      *status = Status::Corrupt(file_->path() + ": a record cut short near offset " + std::to_string(next_) +
                                " of the index keys' temporary file");
    }
    return false;
  }
  // The record's columns (the serial types the export writes: NULL,
  // integers, reals, text).
  bool Decode(const uint8_t* r, size_t size) {
    uint64_t header = 0;
    size_t at = GetVarint(r, size, &header);
    if (at == 0 || header > size) return false;
    size_t body = static_cast<size_t>(header);
    count_ = 0;
    while (at < header) {
      uint64_t t = 0;
      const size_t n = GetVarint(r + at, static_cast<size_t>(header) - at, &t);
      if (n == 0 || count_ == kMaxColumns) return false;
      at += n;
      Column& c = columns_[count_++];
      c = {Value::Type::kInt, 0, 0, nullptr, 0};
      if (t == 0) {
        c.type = Value::Type::kNull;
      } else if (t == 8 || t == 9) {
        c.i = static_cast<int64_t>(t - 8);
      } else if (t <= 7) {
        const size_t bytes = kSerialBytes[t];
        if (body + bytes > size) return false;
        uint64_t u = 0;
        for (size_t k = 0; k < bytes; ++k) u = (u << 8) | r[body + k];
        body += bytes;
        if (t == 7) {
          c.type = Value::Type::kReal;
          std::memcpy(&c.d, &u, 8);
        } else {
          const unsigned shift = static_cast<unsigned>(64 - 8 * bytes);
          c.i = static_cast<int64_t>(u << shift) >> shift;  // sign-extended
        }
      } else if (t >= 13 && t % 2 == 1) {
        c.type = Value::Type::kText;
        c.size = static_cast<size_t>((t - 13) / 2);
        if (body + c.size > size) return false;
        c.text = reinterpret_cast<const char*>(r + body);
        body += c.size;
      } else {
        return false;  // blobs: the export stores none
      }
    }
    return true;
  }

  const SpillFile* file_;
  uint64_t next_, left_;  // the file's bytes not yet in the buffer
  std::vector<uint8_t> buffer_;
  size_t pos_ = 0, len_ = 0, head_size_ = 0;
  Column columns_[kMaxColumns];
  size_t count_ = 0;
};

// True when `a`'s head sorts after `b`'s (a min-heap by std::*_heap).
bool After(const RunReader& a, const RunReader& b) {
  const size_t n = std::min(a.columns(), b.columns());
  for (size_t c = 0; c < n; ++c) {
    const Column &x = a.head()[c], &y = b.head()[c];
    const int r = CompareStored(x.type, x.i, x.d, x.text, x.size, y.type, y.i, y.d, y.text, y.size);
    if (r != 0) return r > 0;
  }
  return a.columns() > b.columns();
}

}  // namespace

Status MergeRuns(const SpillFile& file, const std::vector<SpillFile::Run>& runs, IndexBtree* tree) {
  std::vector<RunReader> readers;
  readers.reserve(runs.size());
  std::vector<RunReader*> heap;
  Status status;
  for (const SpillFile::Run& run : runs) {
    readers.emplace_back(&file, run);
    if (readers.back().Next(&status)) heap.push_back(&readers.back());
    GPUCAP_RETURN_IF_ERROR(status);
  }
  auto after = [](const RunReader* a, const RunReader* b) { return After(*a, *b); };
  std::make_heap(heap.begin(), heap.end(), after);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), after);
    RunReader* least = heap.back();
    GPUCAP_RETURN_IF_ERROR(tree->Append(least->record(), least->record_size()));
    if (least->Next(&status)) {
      std::push_heap(heap.begin(), heap.end(), after);
    } else {
      GPUCAP_RETURN_IF_ERROR(status);
      heap.pop_back();
    }
  }
  return Status::Ok();
}

}  // namespace gpucap::tools::sqlite
