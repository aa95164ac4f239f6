#include "db_writer.h"

#include <sqlite3.h>


namespace gpucap::tools::sqlite {

Status SqliteError(sqlite3* db, std::string_view what) {
  return Status::IoError(std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

Status Exec(sqlite3* db, std::string_view sql) {
  char* error = nullptr;
  std::string text(sql);
  if (sqlite3_exec(db, text.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : sqlite3_errmsg(db);
    sqlite3_free(error);
    return Status::IoError("sqlite: " + message + " (in: " + text.substr(0, 80) + ")");
  }
  return Status::Ok();
}

std::string CreateTableSql(const TableDef& t) {
  std::string sql = "CREATE TABLE " + std::string(t.name) + " (";
  bool first = true;
  auto add = [&](std::string_view piece) {
    if (!first) sql += ", ";
    first = false;
    sql += piece;
  };
  if (t.has_id) add("id INTEGER PRIMARY KEY");
  for (const ColumnDef& c : t.columns) add(c.type.empty() ? std::string(c.name) : std::string(c.name) + " " + std::string(c.type));
  for (std::string_view g : t.generated) add(g);
  return sql + ")";
}

namespace {

// "INSERT INTO t (id, a, b) VALUES (?, ?, ?)".
std::string InsertInto(const TableDef& t) {
  std::string sql = "INSERT INTO " + std::string(t.name) + " (";
  std::string values;
  bool first = true;
  auto add = [&](std::string_view name) {
    if (!first) {
      sql += ", ";
      values += ", ";
    }
    first = false;
    sql += name;
    values += "?";
  };
  if (t.has_id) add("id");
  for (const ColumnDef& c : t.columns) add(c.name);
  return sql + ") VALUES (" + values + ")";
}

}  // namespace

Result<std::unique_ptr<DbWriter>> DbWriter::Start(sqlite3* db, size_t captures,
                                                  const std::vector<std::pair<std::string, std::string>>& meta) {
  std::unique_ptr<DbWriter> w(new DbWriter(db));
  w->captures_.resize(captures);
  // The export is written once, start to end: a crash leaves a file that
  // is deleted anyway, so no journal and no syncs until the end.
  GPUCAP_RETURN_IF_ERROR(Exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA temp_store=MEMORY;"
                                  "PRAGMA cache_size=-262144; PRAGMA locking_mode=EXCLUSIVE"));
  GPUCAP_RETURN_IF_ERROR(Exec(db, "BEGIN"));
  for (const TableDef& t : Tables()) GPUCAP_RETURN_IF_ERROR(Exec(db, CreateTableSql(t)));
  GPUCAP_RETURN_IF_ERROR(w->Prepare());
  for (auto& next : w->next_id_) next = 1;
  sqlite3_stmt* m = w->insert_[static_cast<size_t>(TableId::kMeta)];
  for (const auto& [key, value] : meta) {
    sqlite3_bind_null(m, 1);
    sqlite3_bind_text(m, 2, key.data(), static_cast<int>(key.size()), SQLITE_TRANSIENT);
    sqlite3_bind_text(m, 3, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    if (sqlite3_step(m) != SQLITE_DONE) return SqliteError(db, "meta");
    sqlite3_reset(m);
  }
  return w;
}

DbWriter::~DbWriter() {
  for (sqlite3_stmt* s : insert_) sqlite3_finalize(s);
}

Status DbWriter::Prepare() {
  for (TableId id : {TableId::kMeta, TableId::kStrings, TableId::kAnnotationStacks}) {
    std::string sql = InsertInto(Table(id));
    if (sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &insert_[static_cast<size_t>(id)],
                           nullptr) != SQLITE_OK) {
      return SqliteError(db_, "preparing " + sql);
    }
  }
  auto batches = BatchTables::Create(db_);
  if (!batches.ok()) return batches.status();
  batches_ = std::move(batches).value();
  return Status::Ok();
}

// The batch's new strings and stacks get global ids (a string met in
// another capture keeps the id it has).
Status DbWriter::Intern(const RowBatch& batch) {
  CaptureIds& c = captures_[batch.capture];
  sqlite3_stmt* s = insert_[static_cast<size_t>(TableId::kStrings)];
  for (const std::string& text : batch.new_strings) {
    auto [it, inserted] = strings_.try_emplace(text, next_id_[static_cast<size_t>(TableId::kStrings)]);
    if (inserted) {
      next_id_[static_cast<size_t>(TableId::kStrings)]++;
      sqlite3_bind_int64(s, 1, it->second);
      sqlite3_bind_text(s, 2, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
      if (sqlite3_step(s) != SQLITE_DONE) return SqliteError(db_, "strings");
      sqlite3_reset(s);
      rows_[static_cast<size_t>(TableId::kStrings)]++;
    }
    c.strings.push_back(it->second);
  }
  sqlite3_stmt* k = insert_[static_cast<size_t>(TableId::kAnnotationStacks)];
  for (auto [parent_local, name_local] : batch.new_stacks) {
    int64_t parent = c.stacks.at(parent_local), name = c.strings.at(name_local);
    auto [it, inserted] = stacks_.try_emplace({parent, name}, next_id_[static_cast<size_t>(TableId::kAnnotationStacks)]);
    if (inserted) {
      next_id_[static_cast<size_t>(TableId::kAnnotationStacks)]++;
      int depth = stack_depth_[parent] + 1;
      stack_depth_.push_back(depth);
      sqlite3_bind_int64(k, 1, it->second);
      if (parent) sqlite3_bind_int64(k, 2, parent);
      else sqlite3_bind_null(k, 2);
      sqlite3_bind_int(k, 3, depth);
      sqlite3_bind_int64(k, 4, name);
      if (sqlite3_step(k) != SQLITE_DONE) return SqliteError(db_, "annotation_stacks");
      sqlite3_reset(k);
      rows_[static_cast<size_t>(TableId::kAnnotationStacks)]++;
    }
    c.stacks.push_back(it->second);
  }
  return Status::Ok();
}

Status DbWriter::Write(const RowBatch& batch) {
  GPUCAP_RETURN_IF_ERROR(Intern(batch));
  std::array<int64_t, kTableCount> base = next_id_;
  for (size_t t = 0; t < kTableCount; ++t) next_id_[t] += static_cast<int64_t>(batch.tables[t].rows);
  CaptureIds& c = captures_[batch.capture];
  // The processes row goes first: every other row of the capture names it.
  if (batch.tables[static_cast<size_t>(TableId::kProcesses)].rows > 0) {
    c.process = base[static_cast<size_t>(TableId::kProcesses)];
  }
  const BatchIds ids{&c.strings, &c.stacks, &base, c.process};
  for (const TableDef& t : Tables()) {
    if (t.id == TableId::kStrings || t.id == TableId::kAnnotationStacks) continue;
    GPUCAP_RETURN_IF_ERROR(batches_->Insert(t.id, batch, ids));
    rows_[static_cast<size_t>(t.id)] += batch.tables[static_cast<size_t>(t.id)].rows;
  }
  return Status::Ok();
}

Status MakeIndexes(sqlite3* db) {
  // The sorter may use a second thread: index building is most of the wall time.
  GPUCAP_RETURN_IF_ERROR(Exec(db, "PRAGMA threads=2"));
  for (const IndexDef& index : Indexes()) GPUCAP_RETURN_IF_ERROR(Exec(db, CreateIndexSql(index)));
  return Status::Ok();
}

Status DbWriter::Finish(bool indexes) {
  if (indexes) GPUCAP_RETURN_IF_ERROR(MakeIndexes(db_));
  GPUCAP_RETURN_IF_ERROR(Exec(db_, "COMMIT"));
  return Exec(db_, "PRAGMA locking_mode=NORMAL");
}

}  // namespace gpucap::tools::sqlite
