// Rows on their way from one capture's join to the database: cells per
// table, with strings, annotation stacks and row references still local to
// the capture. The writer (db_writer.h) turns them into global ids, so
// captures can be joined in parallel and written by one connection.
#ifndef GPUCAP_TOOLS_EXPORT_SRC_ROW_BATCH_H_
#define GPUCAP_TOOLS_EXPORT_SRC_ROW_BATCH_H_

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpucap/tools/export/schema.h"

namespace gpucap::tools::sqlite {

struct Cell {
  enum class Kind : uint8_t {
    kNull,
    kInt,
    kReal,
    kText,    // index into RowBatch::texts
    kLiteral, // a std::string_view with static storage, by address
    kString,  // the capture's local string id -> strings.id
    kStack,   // the capture's local annotation stack id -> annotation_stacks.id (0: none)
    kRef,     // row `i` of table `ref` in the same window -> that row's id (RowBatch::continues)
    kProcess, // the capture's processes.id
  };
  Kind kind = Kind::kNull;
  TableId ref = TableId::kMeta;
  union {
    int64_t i;
    double d;
    const std::string_view* p;
  };
  Cell() : i(0) {}
};

struct TableRows {
  std::vector<Cell> cells;
  size_t rows = 0;
};

// Texts kept for as long as the arena lives, packed into 64 KiB blocks
// (a long one in a block of its own): one allocation per block rather than
// a std::string, and its heap block, per text.
class TextArena {
 public:
  std::string_view Keep(std::string_view s) {
    if (s.empty()) return {};
    if (s.size() > kBlock / 4) {
      auto own = std::make_unique_for_overwrite<char[]>(s.size());
      std::copy(s.begin(), s.end(), own.get());
      std::string_view kept(own.get(), s.size());
      // Before the block being packed, which stays the last.
      blocks_.insert(blocks_.end() - (left_ > 0 ? 1 : 0), std::move(own));
      return kept;
    }
    if (s.size() > left_) {
      blocks_.push_back(std::make_unique_for_overwrite<char[]>(kBlock));
      left_ = kBlock;
    }
    char* at = blocks_.back().get() + (kBlock - left_);
    std::copy(s.begin(), s.end(), at);
    left_ -= s.size();
    return {at, s.size()};
  }

 private:
  static constexpr size_t kBlock = size_t{1} << 16;
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t left_ = 0;  // unused bytes at the end of the last block
};

// A capture's strings and stacks, interned as they are first met. Ids start
// at 1; each batch ships the ones added since the last. Each text is kept
// once, in `texts`, which this map's keys, the batches' new strings and the
// writer's map all point into (a capture of a million distinct range names
// held each in four std::strings of its own); `texts` outlives this, until
// the export has written its last batch.
class LocalIds {
 public:
  explicit LocalIds(TextArena* texts) : texts_(*texts) {}

  uint32_t String(std::string_view s) {
    auto it = strings_.find(s);
    if (it != strings_.end()) return it->second;
    std::string_view kept = texts_.Keep(s);
    pending_strings_.push_back(kept);
    pending_bytes_ += sizeof(std::string_view);
    uint32_t id = static_cast<uint32_t>(++string_count_);
    strings_.emplace(kept, id);
    return id;
  }
  // The stack `parent` extended by the range named `name` (a local string).
  uint32_t Stack(uint32_t parent, uint32_t name) {
    uint64_t key = uint64_t{parent} << 32 | name;
    auto it = stacks_.find(key);
    if (it != stacks_.end()) return it->second;
    pending_stacks_.emplace_back(parent, name);
    pending_bytes_ += sizeof(pending_stacks_[0]);
    uint32_t id = static_cast<uint32_t>(++stack_count_);
    stacks_.emplace(key, id);
    return id;
  }
  // What TakePending would move into a batch, in bytes.
  size_t pending_bytes() const { return pending_bytes_; }
  void TakePending(std::vector<std::string_view>* strings, std::vector<std::pair<uint32_t, uint32_t>>* stacks) {
    strings->swap(pending_strings_);
    pending_strings_.clear();
    stacks->swap(pending_stacks_);
    pending_stacks_.clear();
    pending_bytes_ = 0;
  }

 private:
  TextArena& texts_;
  std::unordered_map<std::string_view, uint32_t> strings_;  // keys in texts_
  std::unordered_map<uint64_t, uint32_t> stacks_;
  std::vector<std::string_view> pending_strings_;
  std::vector<std::pair<uint32_t, uint32_t>> pending_stacks_;
  size_t pending_bytes_ = 0;
  size_t string_count_ = 0, stack_count_ = 0;
};

struct RowBatch {
  uint32_t capture = 0;  // position among the exported captures
  // A window's rows may come in several batches, handed over one after the
  // other (window_rows.h). Cell::kRef counts from the first row each table
  // was given in the batch that started the window, so a later batch refers
  // to rows of an earlier one: false for that first batch (and for every
  // batch that is no window's), true for the rest of its window.
  bool continues = false;
  std::array<TableRows, kTableCount> tables;
  std::vector<std::string> texts;
  size_t text_bytes = 0;  // of `texts`
  // Local strings and stacks first met in this batch, in id order; the
  // strings in their capture's TextArena (LocalIds).
  std::vector<std::string_view> new_strings;
  std::vector<std::pair<uint32_t, uint32_t>> new_stacks;  // (parent, name)

  size_t rows() const {
    size_t n = 0;
    for (const TableRows& t : tables) n += t.rows;
    return n;
  }
  // About what the batch holds, in bytes: its cells and texts.
  size_t bytes() const {
    size_t n = text_bytes + texts.size() * sizeof(std::string);
    for (const TableRows& t : tables) n += t.cells.size() * sizeof(Cell);
    return n;
  }
};

// Appends one row, cell by cell, in the schema's column order.
class RowWriter {
 public:
  RowWriter(RowBatch* batch, TableId table) : batch_(*batch), rows_(batch->tables[static_cast<size_t>(table)]) {
    first_ = rows_.cells.size();
  }
  ~RowWriter() {
    assert(rows_.cells.size() - first_ == Table(static_cast<TableId>(&rows_ - batch_.tables.data())).columns.size());
    rows_.rows++;
  }
  size_t row() const { return rows_.rows; }  // this row's index in its table, in this batch
  size_t cell() const { return rows_.cells.size(); }  // the next cell's index

  RowWriter& Null() { return Push(Cell::Kind::kNull, 0); }
  RowWriter& Int(int64_t v) { return Push(Cell::Kind::kInt, v); }
  RowWriter& Real(double v) {
    Cell& c = rows_.cells.emplace_back();
    c.kind = Cell::Kind::kReal;
    c.d = v;
    return *this;
  }
  RowWriter& Text(std::string_view s) {
    batch_.texts.emplace_back(s);
    batch_.text_bytes += s.size();
    return Push(Cell::Kind::kText, static_cast<int64_t>(batch_.texts.size() - 1));
  }
  // Text that lives as long as the program (a constant): no copy.
  RowWriter& Literal(const std::string_view* s) {
    Cell& c = rows_.cells.emplace_back();
    c.kind = Cell::Kind::kLiteral;
    c.p = s;
    return *this;
  }
  RowWriter& String(uint32_t local) { return local ? Push(Cell::Kind::kString, local) : Null(); }
  RowWriter& Stack(uint32_t local) { return local ? Push(Cell::Kind::kStack, local) : Null(); }
  RowWriter& Ref(TableId table, int64_t row) {
    if (row < 0) return Null();
    Push(Cell::Kind::kRef, row);
    rows_.cells.back().ref = table;
    return *this;
  }
  RowWriter& Process() { return Push(Cell::Kind::kProcess, 0); }
  // The columns every row of a capture starts with: process, rank.
  RowWriter& Owner(int32_t rank) { return Process().Int(rank); }
  // Zero stands for "none" in CUPTI's ids.
  RowWriter& NonZero(uint64_t v) { return v ? Int(static_cast<int64_t>(v)) : Null(); }

 private:
  RowWriter& Push(Cell::Kind kind, int64_t v) {
    Cell& c = rows_.cells.emplace_back();
    c.kind = kind;
    c.i = v;
    return *this;
  }
  RowBatch& batch_;
  TableRows& rows_;
  size_t first_;
};

}  // namespace gpucap::tools::sqlite

#endif  // GPUCAP_TOOLS_EXPORT_SRC_ROW_BATCH_H_
