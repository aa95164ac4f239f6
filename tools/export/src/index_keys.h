// One index's entries, collected as its table's rows are written and put in
// the index's order (https://www.sqlite.org/fileformat2.html, "Index
// B-Trees", and datatype3.html's "Comparison Expressions"): column by
// column NULL first, then numbers by value (an integer and a real compare
// as numbers), then text by memcmp (the BINARY collation), then blobs;
// entries equal on every key column by rowid.
//
// Rows come in rowid order 1, 2, 3, ... (the page writer's ids), so the
// rowid is the entry's position plus one and is not stored. Keys of
// integers and NULLs, all the export's indexes but strings(value), take a
// fast path: the leading columns become a group (hashed once per row, few
// distinct: process, device, stream, thread, name) and the last column an
// order-preserving 64-bit word; the order is a counting sort by group
// (stable, so rowids stay in order) and, within a group, a stable sort by
// the word that costs a linear check when the rows came sorted (start
// times on a stream). Any other value switches the index to the general
// comparison.
//
// Memory is bounded by the caller: SpillTo sorts the entries held so far
// (a run) and writes their records to a spill file (spill_file.h), and
// WriteTo then merges the runs (index_merge.h) into the same B-tree, byte
// for byte, that one sort in memory gives.
#ifndef GPUCAP_TOOLS_EXPORT_SRC_INDEX_KEYS_H_
#define GPUCAP_TOOLS_EXPORT_SRC_INDEX_KEYS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "gpucap/status.h"
#include "index_btree.h"
#include "record.h"
#include "spill_file.h"

namespace gpucap::tools::sqlite {

class IndexKeys {
 public:
  explicit IndexKeys(size_t columns);

  // The key's values as the table stores them (record.h's Stored) for row
  // `rowid`; rowids must be 1, 2, 3, ...
  Status Add(int64_t rowid, const Value* key);
  static constexpr uint64_t kSign = uint64_t{1} << 63;
  // The fast path's form of a stored value: NULL -> 0, an integer -> its
  // value with the sign bit flipped (so unsigned order is SQLite's: NULL
  // before every integer). False for anything else, and for INT64_MIN,
  // which would meet NULL: those take Add.
  static bool Word(const Value& v, uint64_t* w) {
    if (v.type == Value::Type::kNull) {
      *w = 0;
      return true;
    }
    if (v.type != Value::Type::kInt || v.i == INT64_MIN) return false;
    *w = static_cast<uint64_t>(v.i) ^ kSign;
    return true;
  }
  // Add for a key whose every value Word took: false (nothing added) when
  // it must go through AddWords (the general path, a rowid out of order).
  // No Status on the hot path: it is a string to build and destroy per call.
  bool TryAddWords(int64_t rowid, const uint64_t* words) {
    if (general_ || rowid != static_cast<int64_t>(entries_) + 1) return false;
    entries_++;
    group_.push_back(Group(words));
    if (tail_) tail_words_.push_back(words[columns_ - 1]);
    return true;
  }
  Status AddWords(int64_t rowid, const uint64_t* words);
  // Appends every entry's record (the key columns, then the rowid) to
  // `tree` in the index's order, and frees the entries.
  Status WriteTo(IndexBtree* tree);
  // Writes the entries held in memory, sorted, as a run of `file` and
  // drops them (the groups seen stay); WriteTo merges the runs. Every
  // spill of one index goes to the same file.
  Status SpillTo(SpillFile* file);

  uint64_t entries() const { return entries_; }
  bool general() const { return general_; }
  // The memory the entries held take, in bytes: the vectors' capacity,
  // which a spill frees (kept capacity would add up, index by index, to
  // several budgets).
  size_t bytes() const {
    return group_.capacity() * sizeof(uint32_t) + tail_words_.capacity() * sizeof(uint64_t) +
           keys_.capacity() * sizeof(Key) + text_.size();
  }
  size_t runs() const { return runs_.size(); }

 private:
  // A stored value, its text in `text_` (the general path).
  struct Key {
    Value::Type type;
    int64_t i;
    double d;
    size_t text, size;
  };
  uint32_t Group(const uint64_t* words) {
    if (last_group_ != UINT32_MAX) {
      const uint64_t* last = &group_words_[size_t{last_group_} * group_columns_];
      size_t c = 0;
      while (c < group_columns_ && last[c] == words[c]) ++c;
      if (c == group_columns_) return last_group_;
    }
    return FindGroup(words);
  }
  uint32_t FindGroup(const uint64_t* words);
  void ToGeneral();
  void AddGeneral(const Value* key);
  Value ValueOf(const Key& k) const;
  // The entries held in memory, in order, to `sink` (an IndexBtree or a
  // SpillFile run).
  template <typename Sink>
  Status WriteFast(Sink* sink);
  template <typename Sink>
  Status WriteGeneral(Sink* sink);
  template <typename Sink>
  Status Emit(Sink* sink, const Value* key, int64_t rowid);
  void StartRun();

  size_t columns_, group_columns_;  // group: all but the last column (the only one of one)
  bool tail_;                       // a last column outside the group
  uint64_t entries_ = 0;
  uint64_t spilled_ = 0;  // entries in runs_: the rowid of the first held is spilled_ + 1
  bool general_ = false;
  SpillFile* spill_ = nullptr;
  std::vector<SpillFile::Run> runs_;
  // The fast path.
  std::vector<uint64_t> group_words_;  // group_columns_ words per group
  std::vector<uint32_t> slots_;        // open addressing: group + 1, 0 free
  uint32_t last_group_ = UINT32_MAX;
  std::vector<uint32_t> group_;        // by entry
  std::vector<uint64_t> tail_words_;   // by entry, when tail_
  // The general path: columns_ keys per entry.
  std::vector<Key> keys_;
  std::string text_;
  RecordBuilder record_;
};

}  // namespace gpucap::tools::sqlite

#endif  // GPUCAP_TOOLS_EXPORT_SRC_INDEX_KEYS_H_
