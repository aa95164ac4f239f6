#include "image_writer.h"

#include "db_writer.h"
#include "schema_page.h"

namespace gpucap::tools::sqlite {
ImageWriter::ImageWriter(PageFile* file, size_t captures,
                         const std::vector<std::pair<std::string, std::string>>& meta)
    : file_(file), captures_(captures) {
  file_->Allocate();  // page 1: sqlite_schema
  for (const TableDef& t : Tables()) {
    trees_.push_back(std::make_unique<TableBtree>(file_, file_->Allocate()));
    auto& a = affinity_[static_cast<size_t>(t.id)];
    for (const ColumnDef& c : t.columns) a.push_back(AffinityOf(c.type));
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

Status ImageWriter::AppendRow(TableId table, int64_t rowid) {
  const std::vector<uint8_t>& r = record_.Finish();
  rows_[static_cast<size_t>(table)]++;
  return trees_[static_cast<size_t>(table)]->Append(rowid, r.data(), r.size());
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
      record_.Clear();
      record_.Add(Value::Null(), Affinity::kInteger);
      record_.Add(parent ? Value::Int(parent) : Value::Null(), Affinity::kInteger);
      record_.Add(Value::Int(depth), Affinity::kInteger);
      record_.Add(Value::Int(name), Affinity::kInteger);
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
      for (size_t k = 0; k < width; ++k) {
        const Cell& cell = cells[k];
        Value v;
        switch (cell.kind) {
          case Cell::Kind::kNull: break;
          case Cell::Kind::kInt: v = Value::Int(cell.i); break;
          case Cell::Kind::kReal: v = Value::Real(cell.d); break;
          case Cell::Kind::kText: v = Value::Text(batch.texts[static_cast<size_t>(cell.i)]); break;
          case Cell::Kind::kLiteral: v = Value::Text(*cell.p); break;
          case Cell::Kind::kString: v = Value::Int(c.strings[static_cast<size_t>(cell.i)]); break;
          case Cell::Kind::kStack: v = Value::Int(c.stacks[static_cast<size_t>(cell.i)]); break;
          case Cell::Kind::kRef: v = Value::Int(base[static_cast<size_t>(cell.ref)] + cell.i); break;
          case Cell::Kind::kProcess: v = Value::Int(c.process); break;
        }
        record_.Add(v, affinity[k]);
      }
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
  return WriteSchemaAndHeader(file_, tables);
}

}  // namespace gpucap::tools::sqlite
