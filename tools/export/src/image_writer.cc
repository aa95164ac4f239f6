#include "image_writer.h"

#include <algorithm>

#include "db_writer.h"
#include "schema_page.h"

namespace gpucap::tools::sqlite {
ImageWriter::ImageWriter(PageFile* file, size_t captures,
                         const std::vector<std::pair<std::string, std::string>>& meta, bool indexes,
                         size_t key_memory, std::string spill_pattern)
    : file_(file),
      key_memory_(key_memory),
      // A row adds at most a few dozen bytes of keys: looking every 4096
      // rows overshoots a budget of megabytes by little and costs nothing
      // per row; a budget of a few KB (the tests) is looked at every row.
      check_every_(std::clamp<size_t>(key_memory / 16384, 1, 4096)),
      spill_(std::move(spill_pattern)),
      captures_(captures) {
  file_->Allocate();  // page 1: sqlite_schema
  for (const TableDef& t : Tables()) {
    trees_.push_back(std::make_unique<TableBtree>(file_, file_->Allocate()));
    auto& a = affinity_[static_cast<size_t>(t.id)];
    for (const ColumnDef& c : t.columns) a.push_back(AffinityOf(c.type));
    if (t.columns.size() + 1 > RecordBuilder::kMaxColumns && status_.ok()) {
      status_ = Status::Internal("table " + std::string(t.name) + ": over RecordBuilder::kMaxColumns columns");
    }
  }
  for (const IndexDef& d : indexes ? Indexes() : std::span<const IndexDef>()) {
    Index index{&d, file_->Allocate(), {}, std::make_unique<IndexKeys>(d.columns.size())};
    const TableDef& t = Table(d.table);
    if (d.columns.size() > 16 && status_.ok()) status_ = Status::Internal("index " + std::string(d.name) + ": over 16 columns");
    for (std::string_view name : d.columns) {
      auto it = std::find_if(t.columns.begin(), t.columns.end(), [&](const ColumnDef& c) { return c.name == name; });
      if (it == t.columns.end() && status_.ok()) {
        status_ = Status::Internal("index " + std::string(d.name) + ": no column " + std::string(name));
      }
      index.columns.push_back(it == t.columns.end() ? 0 : static_cast<size_t>(it - t.columns.begin()));
    }
    table_indexes_[static_cast<size_t>(d.table)].push_back(indexes_.size());
    indexes_.push_back(std::move(index));
  }
  for (auto& next : next_id_) next = 1;
  for (const auto& [key, value] : meta) {
    record_.Clear();
    record_.Add(Value::Null(), Affinity::kInteger);
    record_.Add(Value::Text(key), Affinity::kText);
    record_.Add(Value::Text(value), Affinity::kBlob);
    if (status_.ok()) status_ = AppendRow(TableId::kMeta, next_id_[0]++);
  }
}

template <typename ValueOf>
Status ImageWriter::AddToIndexes(TableId table, int64_t rowid, const ValueOf& value) {
  const std::vector<Affinity>& affinity = affinity_[static_cast<size_t>(table)];
  uint64_t words[16];
  for (size_t i : table_indexes_[static_cast<size_t>(table)]) {
    Index& index = indexes_[i];
    const size_t n = index.columns.size();
    bool fast = true;
    for (size_t c = 0; c < n && fast; ++c) {
      const size_t k = index.columns[c];
      fast = IndexKeys::Word(StoredFast(value(k), affinity[k], &numbers_[c]), &words[c]);
    }
    if (fast) {
      if (!index.keys->TryAddWords(rowid, words)) GPUCAP_RETURN_IF_ERROR(index.keys->AddWords(rowid, words));
      continue;
    }
    for (size_t c = 0; c < n; ++c) {
      const size_t k = index.columns[c];
      key_[c] = StoredFast(value(k), affinity[k], &numbers_[c]);  // IndexKeys copies texts
    }
    GPUCAP_RETURN_IF_ERROR(index.keys->Add(rowid, key_.data()));
  }
  if (++rows_since_check_ < check_every_) return Status::Ok();
  rows_since_check_ = 0;
  return BoundKeys();
}

Status ImageWriter::BoundKeys() {
  size_t held = 0;
  for (const Index& index : indexes_) held += index.keys->bytes();
  if (held <= key_memory_) return Status::Ok();
  // The biggest first, down to half the budget: fewer, longer runs.
  std::vector<Index*> by_size;
  for (Index& index : indexes_) by_size.push_back(&index);
  std::sort(by_size.begin(), by_size.end(),
            [](const Index* a, const Index* b) { return a->keys->bytes() > b->keys->bytes(); });
  for (Index* index : by_size) {
    if (held <= key_memory_ / 2) break;
    const size_t bytes = index->keys->bytes();
    GPUCAP_RETURN_IF_ERROR(index->keys->SpillTo(&spill_));
    held -= bytes;
  }
  return Status::Ok();
}

Status ImageWriter::AppendRow(TableId table, int64_t rowid) {
  rows_[static_cast<size_t>(table)]++;
  return trees_[static_cast<size_t>(table)]->Append(rowid, &record_);
}

// As DbWriter::Intern: a batch's new strings and stacks get global ids (a
// string met in another capture keeps its id), appended in id order.
Status ImageWriter::Intern(const RowBatch& batch) {
  CaptureIds& c = captures_[batch.capture];
  int64_t& next_string = next_id_[static_cast<size_t>(TableId::kStrings)];
  for (const std::string& text : batch.new_strings) {
    auto [it, inserted] = strings_.try_emplace(text, next_string);
    if (inserted) {
      record_.Clear();
      record_.Add(Value::Null(), Affinity::kInteger);
      record_.Add(Value::Text(text), Affinity::kText);
      GPUCAP_RETURN_IF_ERROR(AddToIndexes(TableId::kStrings, next_string, [&](size_t) { return Value::Text(text); }));
      GPUCAP_RETURN_IF_ERROR(AppendRow(TableId::kStrings, next_string++));
    }
    c.strings.push_back(it->second);
  }
  int64_t& next_stack = next_id_[static_cast<size_t>(TableId::kAnnotationStacks)];
  for (auto [parent_local, name_local] : batch.new_stacks) {
    int64_t parent = c.stacks.at(parent_local), name = c.strings.at(name_local);
    auto [it, inserted] = stacks_.try_emplace({parent, name}, next_stack);
    if (inserted) {
      int depth = stack_depth_[static_cast<size_t>(parent)] + 1;
      stack_depth_.push_back(depth);
      const Value row[] = {parent ? Value::Int(parent) : Value::Null(), Value::Int(depth), Value::Int(name)};
      record_.Clear();
      record_.Add(Value::Null(), Affinity::kInteger);
      for (const Value& v : row) record_.Add(v, Affinity::kInteger);
      GPUCAP_RETURN_IF_ERROR(AddToIndexes(TableId::kAnnotationStacks, next_stack, [&](size_t k) { return row[k]; }));
      GPUCAP_RETURN_IF_ERROR(AppendRow(TableId::kAnnotationStacks, next_stack++));
    }
    c.stacks.push_back(it->second);
  }
  return Status::Ok();
}

Status ImageWriter::Write(const RowBatch& batch) {
  GPUCAP_RETURN_IF_ERROR(status_);
  GPUCAP_RETURN_IF_ERROR(Intern(batch));
  const std::array<int64_t, kTableCount> base = next_id_;
  CaptureIds& c = captures_[batch.capture];
  // The processes row comes first: every other row of the capture names it.
  if (batch.tables[static_cast<size_t>(TableId::kProcesses)].rows > 0) {
    c.process = base[static_cast<size_t>(TableId::kProcesses)];
  }
  for (const TableDef& t : Tables()) {
    if (t.id == TableId::kStrings || t.id == TableId::kAnnotationStacks) continue;
    const size_t ti = static_cast<size_t>(t.id);
    const TableRows& rows = batch.tables[ti];
    const std::vector<Affinity>& affinity = affinity_[ti];
    const size_t width = affinity.size();
    for (size_t r = 0; r < rows.rows; ++r) {
      record_.Clear();
      if (t.has_id) record_.Add(Value::Null(), Affinity::kInteger);  // the rowid's alias is stored NULL
      const Cell* cells = rows.cells.data() + r * width;
      auto value = [&](size_t k) {
        const Cell& cell = cells[k];
        switch (cell.kind) {
          case Cell::Kind::kNull: break;
          case Cell::Kind::kInt: return Value::Int(cell.i);
          case Cell::Kind::kReal: return Value::Real(cell.d);
          case Cell::Kind::kText: return Value::Text(batch.texts[static_cast<size_t>(cell.i)]);
          case Cell::Kind::kLiteral: return Value::Text(*cell.p);
          case Cell::Kind::kString: return Value::Int(c.strings[static_cast<size_t>(cell.i)]);
          case Cell::Kind::kStack: return Value::Int(c.stacks[static_cast<size_t>(cell.i)]);
          case Cell::Kind::kRef: return Value::Int(base[static_cast<size_t>(cell.ref)] + cell.i);
          case Cell::Kind::kProcess: return Value::Int(c.process);
        }
        return Value::Null();
      };
      for (size_t k = 0; k < width; ++k) record_.Add(value(k), affinity[k]);
      if (!table_indexes_[ti].empty()) GPUCAP_RETURN_IF_ERROR(AddToIndexes(t.id, next_id_[ti], value));
      GPUCAP_RETURN_IF_ERROR(AppendRow(t.id, next_id_[ti]++));
    }
  }
  return Status::Ok();
}

Status ImageWriter::Finish() {
  GPUCAP_RETURN_IF_ERROR(status_);
  for (auto& tree : trees_) GPUCAP_RETURN_IF_ERROR(tree->Finish());
  // The roots the constructor reserved: 2, 3, ... in schema.h's order.
  std::vector<SchemaTable> tables;
  for (const TableDef& t : Tables()) {
    tables.push_back({std::string(t.name), CreateTableSql(t), static_cast<uint32_t>(t.id) + 2});
  }
  for (Index& index : indexes_) {
    IndexBtree tree(file_, index.root);
    GPUCAP_RETURN_IF_ERROR(index.keys->WriteTo(&tree));
    GPUCAP_RETURN_IF_ERROR(tree.Finish());
    index.keys.reset();
    tables.push_back({std::string(index.def->name), CreateIndexSql(*index.def), index.root,
                      std::string(Table(index.def->table).name)});
  }
  return WriteSchemaAndHeader(file_, tables);
}

}  // namespace gpucap::tools::sqlite
