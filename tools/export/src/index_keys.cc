#include "index_keys.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "index_merge.h"
#include "index_order.h"

namespace gpucap::tools::sqlite {
namespace {

constexpr uint64_t kSign = IndexKeys::kSign;

// Gives a container's memory back (`v = {}` would only empty it: the
// initializer-list assignment keeps the capacity).
template <typename V>
void Free(V* v) {
  V().swap(*v);
}

Value FromWord(uint64_t w) { return w == 0 ? Value::Null() : Value::Int(static_cast<int64_t>(w ^ kSign)); }

// A word's serial type at `types[*nt]`, its bytes at `body + *nb` (which
// needs 8 bytes of room).
[[gnu::always_inline]] inline void PutWord(uint64_t w, uint8_t* types, size_t* nt, uint8_t* body, size_t* nb) {
  if (w == 0) {
    types[(*nt)++] = 0;
    return;
  }
  const auto i = static_cast<int64_t>(w ^ kSign);
  const uint8_t t = IntSerialType(i);
  types[(*nt)++] = t;
  PutBigEndian(body + *nb, static_cast<uint64_t>(i), kSerialBytes[t]);
  *nb += kSerialBytes[t];
}

uint64_t Hash(const uint64_t* words, size_t n) {
  uint64_t h = 0;
  for (size_t i = 0; i < n; ++i) {
    h = (h ^ words[i]) * 0x9e3779b97f4a7c15ULL;
    h ^= h >> 29;
  }
  return h;
}

}  // namespace

IndexKeys::IndexKeys(size_t columns)
    : columns_(columns), group_columns_(columns > 1 ? columns - 1 : 1), tail_(columns > 1), slots_(64, 0) {}

uint32_t IndexKeys::FindGroup(const uint64_t* words) {
  const size_t n = group_columns_;
  const size_t groups = group_words_.size() / n;
  if (2 * (groups + 1) > slots_.size()) {
    std::vector<uint32_t> bigger(2 * slots_.size(), 0);
    const size_t mask = bigger.size() - 1;
    for (uint32_t g = 0; g < groups; ++g) {
      size_t s = Hash(&group_words_[g * n], n) & mask;
      while (bigger[s] != 0) s = (s + 1) & mask;
      bigger[s] = g + 1;
    }
    slots_.swap(bigger);
  }
  const size_t mask = slots_.size() - 1;
  size_t s = Hash(words, n) & mask;
  for (; slots_[s] != 0; s = (s + 1) & mask) {
    const uint32_t g = slots_[s] - 1;
    if (std::memcmp(&group_words_[g * n], words, 8 * n) == 0) return last_group_ = g;
  }
  const auto g = static_cast<uint32_t>(groups);
  slots_[s] = g + 1;
  group_words_.insert(group_words_.end(), words, words + n);
  return last_group_ = g;
}

Status IndexKeys::AddWords(int64_t rowid, const uint64_t* words) {
  Value key[16];
  for (size_t c = 0; c < columns_; ++c) key[c] = FromWord(words[c]);
  return Add(rowid, key);
}

Status IndexKeys::Add(int64_t rowid, const Value* key) {
  if (rowid != static_cast<int64_t>(entries_) + 1) {
    return Status::Internal("index writer: row " + std::to_string(rowid) + " after " + std::to_string(entries_));
  }
  entries_++;
  if (!general_) {
    uint64_t words[16];
    bool fast = columns_ <= 16;
    for (size_t c = 0; fast && c < columns_; ++c) fast = Word(key[c], &words[c]);
    if (fast) {
      group_.push_back(Group(words));
      if (tail_) tail_words_.push_back(words[columns_ - 1]);
      return Status::Ok();
    }
    ToGeneral();
  }
  AddGeneral(key);
  return Status::Ok();
}

void IndexKeys::AddGeneral(const Value* key) {
  for (size_t c = 0; c < columns_; ++c) {
    const Value& v = key[c];
    Key k{v.type, v.i, v.d, text_.size(), v.text.size()};
    if (v.type == Value::Type::kText) text_.append(v.text);
    keys_.push_back(k);
  }
}

// The entries so far, from words to keys (a value the fast path cannot hold came).
void IndexKeys::ToGeneral() {
  general_ = true;
  const size_t before = group_.size();
  std::vector<Value> row(columns_);
  for (size_t e = 0; e < before; ++e) {
    const uint64_t* words = &group_words_[group_[e] * group_columns_];
    for (size_t c = 0; c < group_columns_; ++c) row[c] = FromWord(words[c]);
    if (tail_) row[columns_ - 1] = FromWord(tail_words_[e]);
    AddGeneral(row.data());
  }
  Free(&group_words_);
  Free(&slots_);
  Free(&group_);
  Free(&tail_words_);
}

Value IndexKeys::ValueOf(const Key& k) const {
  switch (k.type) {
    case Value::Type::kNull: return Value::Null();
    case Value::Type::kInt: return Value::Int(k.i);
    case Value::Type::kReal: return Value::Real(k.d);
    case Value::Type::kText: return Value::Text(std::string_view(text_).substr(k.text, k.size));
  }
  return Value::Null();
}

template <typename Sink>
Status IndexKeys::Emit(Sink* tree, const Value* key, int64_t rowid) {
  record_.Clear();
  for (size_t c = 0; c < columns_; ++c) record_.Add(key[c], Affinity::kBlob);  // stored values: no conversion
  record_.Add(Value::Int(rowid), Affinity::kInteger);
  const std::vector<uint8_t>& r = record_.Finish();
  return tree->Append(r.data(), r.size());
}

Status IndexKeys::WriteTo(IndexBtree* tree) {
  Status s;
  if (runs_.empty()) {
    s = general_ ? WriteGeneral(tree) : WriteFast(tree);
  } else {
    if (entries_ > spilled_) s = SpillTo(spill_);
    if (s.ok()) s = MergeRuns(*spill_, runs_, tree);
  }
  *this = IndexKeys(columns_);
  return s;
}

Status IndexKeys::SpillTo(SpillFile* file) {
  if (entries_ == spilled_) return Status::Ok();
  if (spill_ != nullptr && spill_ != file) return Status::Internal("index writer: runs of one index in two files");
  spill_ = file;
  GPUCAP_RETURN_IF_ERROR(file->Begin());
  GPUCAP_RETURN_IF_ERROR(general_ ? WriteGeneral(file) : WriteFast(file));
  auto run = file->End();
  if (!run.ok()) return run.status();
  runs_.push_back(*run);
  StartRun();
  return Status::Ok();
}

// Frees the entries held, keeping the groups.
void IndexKeys::StartRun() {
  spilled_ = entries_;
  Free(&group_);
  Free(&tail_words_);
  Free(&keys_);
  Free(&text_);
  if (general_) {
    general_ = false;
    group_words_.clear();
    slots_.assign(64, 0);
    last_group_ = UINT32_MAX;
  }
}

template <typename Sink>
Status IndexKeys::WriteFast(Sink* tree) {
  const size_t n = group_columns_, groups = group_words_.size() / n;
  // Groups in key order, then every entry placed after the groups before its own.
  std::vector<uint32_t> by_key(groups);
  std::iota(by_key.begin(), by_key.end(), 0u);
  std::sort(by_key.begin(), by_key.end(), [&](uint32_t a, uint32_t b) {
    return std::lexicographical_compare(&group_words_[a * n], &group_words_[a * n] + n, &group_words_[b * n],
                                        &group_words_[b * n] + n);
  });
  std::vector<uint64_t> start(groups + 1, 0);
  std::vector<uint32_t> rank(groups);
  for (uint32_t r = 0; r < groups; ++r) rank[by_key[r]] = r;
  for (uint32_t g : group_) start[rank[g] + 1]++;
  for (size_t r = 0; r < groups; ++r) start[r + 1] += start[r];
  struct Entry {
    uint64_t tail;
    uint32_t index;
  };
  std::vector<Entry> order(group_.size());
  {
    std::vector<uint64_t> next(start.begin(), start.end() - 1);
    for (uint32_t e = 0; e < group_.size(); ++e) order[next[rank[group_[e]]]++] = {tail_ ? tail_words_[e] : 0, e};
  }
  // Records straight from the words: the group's serial types and body
  // bytes once per group, then each entry's last column and rowid.
  uint8_t head[16], body[16 * 8 + 8], record[1 + 17 + 17 * 8 + 8];
  for (size_t r = 0; r < groups; ++r) {
    Entry* first = order.data() + start[r];
    Entry* last = order.data() + start[r + 1];
    auto by_tail = [](const Entry& a, const Entry& b) { return a.tail < b.tail; };
    if (tail_ && !std::is_sorted(first, last, by_tail)) std::stable_sort(first, last, by_tail);
    const uint64_t* words = &group_words_[by_key[r] * n];
    size_t types = 0, bytes = 0;
    for (size_t c = 0; c < n; ++c) PutWord(words[c], head, &types, body, &bytes);
    // The record up to the entry's own columns: header size, the group's
    // types, (two types of the entry), the group's body.
    const size_t own = tail_ ? 2 : 1;
    record[0] = static_cast<uint8_t>(1 + types + own);  // under 128: one byte a column
    std::memcpy(record + 1, head, types);
    std::memcpy(record + 1 + types + own, body, bytes);
    uint8_t* const own_types = record + 1 + types;
    uint8_t* const own_body = record + 1 + types + own + bytes;
    for (Entry* e = first; e != last; ++e) {
      size_t nt = 0, nb = 0;
      if (tail_) PutWord(e->tail, own_types, &nt, own_body, &nb);
      PutWord(static_cast<uint64_t>(static_cast<int64_t>(spilled_ + e->index) + 1) ^ kSign, own_types, &nt, own_body,
              &nb);
      const auto size = static_cast<size_t>(own_body + nb - record);
      if (!tree->TryAppend(record, size)) GPUCAP_RETURN_IF_ERROR(tree->Append(record, size));
    }
  }
  return Status::Ok();
}

template <typename Sink>
Status IndexKeys::WriteGeneral(Sink* tree) {
  const size_t cols = columns_;
  auto compare = [&](const Key& a, const Key& b) {
    return CompareStored(a.type, a.i, a.d, text_.data() + a.text, a.size, b.type, b.i, b.d, text_.data() + b.text,
                         b.size);
  };
  std::vector<uint32_t> order(entries_ - spilled_);
  std::iota(order.begin(), order.end(), 0u);
  // Stable: entries equal on every key column stay in rowid order.
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    for (size_t c = 0; c < cols; ++c) {
      if (int r = compare(keys_[a * cols + c], keys_[b * cols + c]); r != 0) return r < 0;
    }
    return false;
  });
  std::vector<Value> key(cols);
  for (uint32_t e : order) {
    for (size_t c = 0; c < cols; ++c) key[c] = ValueOf(keys_[e * cols + c]);
    GPUCAP_RETURN_IF_ERROR(Emit(tree, key.data(), static_cast<int64_t>(spilled_ + e) + 1));
  }
  return Status::Ok();
}

}  // namespace gpucap::tools::sqlite
