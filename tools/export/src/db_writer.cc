#include "db_writer.h"

#include <sqlite3.h>

#include <cstring>

namespace gpucap::tools::sqlite {

namespace {

// SQLite's message, and the system's word for the failure under it (a full
// disk says "No space left on device", not only "disk I/O error").
std::string Message(sqlite3* db, const char* message) {
  std::string out = message != nullptr ? message : db != nullptr ? sqlite3_errmsg(db) : "out of memory";
  int system = db != nullptr ? sqlite3_system_errno(db) : 0;
  if (system != 0) out += std::string(" (") + std::strerror(system) + ")";
  return out;
}

}  // namespace

Status SqliteError(sqlite3* db, std::string_view what) {
  return Status::IoError(std::string(what) + ": " + Message(db, nullptr));
}

Status Exec(sqlite3* db, std::string_view sql) {
  char* error = nullptr;
  std::string text(sql);
  if (sqlite3_exec(db, text.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = Message(db, error);
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

std::string InsertSql(const TableDef& t) {
  std::string sql = "INSERT INTO " + std::string(t.name) + " (";
  std::string values;
  for (size_t i = 0; i < t.columns.size(); ++i) {
    sql += (i ? ", " : "") + std::string(t.columns[i].name);
    values += i ? ", ?" : "?";
  }
  return sql + ") VALUES (" + values + ")";
}

namespace {

constexpr size_t Index(TableId t) { return static_cast<size_t>(t); }

// The connection is the export's own and the file is thrown away if the
// export fails: no rollback journal, no fsync, no file locks taken and
// released per statement, 16 KiB pages (fewer interior cells and page
// headers per row; only possible while the database is empty), temporary
// sort files for CREATE INDEX in memory. A page cache of 16 MiB, not more:
// a cache that holds the whole database until the commit costs a page fault
// per fresh page and writes everything at the end; a small one writes pages
// out as they fill and reuses its memory (1M kernels: ~25% less CPU than
// with 256 MiB, bench/README.md).
constexpr char kBulkLoad[] =
    "PRAGMA page_size=16384; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;"
    "PRAGMA cache_size=-16384; PRAGMA temp_store=MEMORY";

}  // namespace

Result<std::unique_ptr<DbWriter>> DbWriter::Start(sqlite3* db, size_t captures,
                                                  const std::vector<std::pair<std::string, std::string>>& meta) {
  std::unique_ptr<DbWriter> w(new DbWriter(db));
  w->captures_.resize(captures);
  GPUCAP_RETURN_IF_ERROR(Exec(db, kBulkLoad));
  GPUCAP_RETURN_IF_ERROR(Exec(db, "BEGIN"));
  for (const TableDef& t : Tables()) GPUCAP_RETURN_IF_ERROR(Exec(db, CreateTableSql(t)));
  GPUCAP_RETURN_IF_ERROR(w->Prepare());
  for (auto& next : w->next_id_) next = 1;
  sqlite3_stmt* m = w->insert_[Index(TableId::kMeta)];
  for (const auto& [key, value] : meta) {
    sqlite3_bind_null(m, 1);
    sqlite3_bind_text(m, 2, key.data(), static_cast<int>(key.size()), SQLITE_TRANSIENT);
    sqlite3_bind_text(m, 3, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    if (sqlite3_step(m) != SQLITE_DONE) return SqliteError(db, "meta");
    sqlite3_reset(m);
    w->rows_[Index(TableId::kMeta)]++;
  }
  return w;
}

DbWriter::~DbWriter() {
  for (sqlite3_stmt* s : insert_) sqlite3_finalize(s);
}

Status DbWriter::Prepare() {
  for (const TableDef& t : Tables()) {
    std::string sql = InsertSql(t);
    if (sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &insert_[Index(t.id)], nullptr) !=
        SQLITE_OK) {
      return SqliteError(db_, "preparing " + sql.substr(0, 200));
    }
  }
  return Status::Ok();
}

// The batch's new strings and stacks get global ids (a string met in an
// earlier capture keeps the id it has). Those of the last capture are
// looked up but not remembered: no capture after it looks them up, and its
// own come once each (LocalIds), so a one-capture export keeps no map of
// its million distinct names.
Status DbWriter::Intern(const RowBatch& batch) {
  CaptureIds& c = captures_[batch.capture];
  const bool remember = batch.capture + 1 < captures_.size();
  sqlite3_stmt* s = insert_[Index(TableId::kStrings)];
  for (std::string_view text : batch.new_strings) {
    auto it = strings_.find(text);
    if (it != strings_.end()) {
      c.strings.push_back(it->second);
      continue;
    }
    const int64_t id = next_id_[Index(TableId::kStrings)]++;
    if (remember) strings_.emplace(text, id);
    sqlite3_bind_text(s, 1, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
    if (sqlite3_step(s) != SQLITE_DONE) return SqliteError(db_, "strings");
    sqlite3_reset(s);
    if (sqlite3_last_insert_rowid(db_) != id) return Status::Internal("strings: ids out of step");
    rows_[Index(TableId::kStrings)]++;
    c.strings.push_back(id);
  }
  sqlite3_stmt* k = insert_[Index(TableId::kAnnotationStacks)];
  for (auto [parent_local, name_local] : batch.new_stacks) {
    int64_t parent = c.stacks.at(parent_local), name = c.strings.at(name_local);
    auto it = stacks_.find({parent, name});
    if (it != stacks_.end()) {
      c.stacks.push_back(it->second);
      continue;
    }
    const int64_t id = next_id_[Index(TableId::kAnnotationStacks)]++;
    if (remember) stacks_.emplace(std::pair{parent, name}, id);
    int depth = stack_depth_[parent] + 1;
    stack_depth_.push_back(depth);
    if (parent) sqlite3_bind_int64(k, 1, parent);
    else sqlite3_bind_null(k, 1);
    sqlite3_bind_int(k, 2, depth);
    sqlite3_bind_int64(k, 3, name);
    if (sqlite3_step(k) != SQLITE_DONE) return SqliteError(db_, "annotation_stacks");
    sqlite3_reset(k);
    if (sqlite3_last_insert_rowid(db_) != id) return Status::Internal("annotation_stacks: ids out of step");
    rows_[Index(TableId::kAnnotationStacks)]++;
    c.stacks.push_back(id);
  }
  return Status::Ok();
}

// One cell, made global (row_batch.h's kinds). Texts are bound without a
// copy: the batch outlives the statement's step.
Status DbWriter::Insert(TableId table, const RowBatch& batch, const CaptureIds& ids,
                        const std::array<int64_t, kTableCount>& base) {
  const TableRows& rows = batch.tables[Index(table)];
  if (rows.rows == 0) return Status::Ok();
  const TableDef& def = Table(table);
  const int width = static_cast<int>(def.columns.size());
  sqlite3_stmt* s = insert_[Index(table)];
  const Cell* cell = rows.cells.data();
  for (size_t r = 0; r < rows.rows; ++r) {
    for (int i = 1; i <= width; ++i, ++cell) {
      switch (cell->kind) {
        case Cell::Kind::kNull: sqlite3_bind_null(s, i); break;
        case Cell::Kind::kInt: sqlite3_bind_int64(s, i, cell->i); break;
        case Cell::Kind::kReal: sqlite3_bind_double(s, i, cell->d); break;
        case Cell::Kind::kText: {
          const std::string& t = batch.texts[static_cast<size_t>(cell->i)];
          sqlite3_bind_text(s, i, t.data(), static_cast<int>(t.size()), SQLITE_STATIC);
          break;
        }
        case Cell::Kind::kLiteral:
          sqlite3_bind_text(s, i, cell->p->data(), static_cast<int>(cell->p->size()), SQLITE_STATIC);
          break;
        case Cell::Kind::kString: sqlite3_bind_int64(s, i, ids.strings[static_cast<size_t>(cell->i)]); break;
        case Cell::Kind::kStack: sqlite3_bind_int64(s, i, ids.stacks[static_cast<size_t>(cell->i)]); break;
        case Cell::Kind::kRef: sqlite3_bind_int64(s, i, window_base_[Index(cell->ref)] + cell->i); break;
        case Cell::Kind::kProcess: sqlite3_bind_int64(s, i, ids.process); break;
      }
    }
    if (sqlite3_step(s) != SQLITE_DONE) {
      Status error = SqliteError(db_, "inserting into " + std::string(def.name));
      sqlite3_reset(s);
      return error;
    }
    sqlite3_reset(s);
  }
  if (def.has_id) {
    const int64_t last = base[Index(table)] + static_cast<int64_t>(rows.rows) - 1;
    if (sqlite3_last_insert_rowid(db_) != last) {
      return Status::Internal(std::string(def.name) + ": SQLite gave the last row id " +
                              std::to_string(sqlite3_last_insert_rowid(db_)) + ", the writer " +
                              std::to_string(last));
    }
  }
  rows_[Index(table)] += rows.rows;
  return Status::Ok();
}

Status DbWriter::Write(const RowBatch& batch) {
  GPUCAP_RETURN_IF_ERROR(Intern(batch));
  std::array<int64_t, kTableCount> base = next_id_;
  // A window's later batches come right after its earlier ones (the order
  // of Write calls is a capture's batches in turn): their refs count from
  // where the window began.
  if (!batch.continues) window_base_ = base;
  for (size_t t = 0; t < kTableCount; ++t) next_id_[t] += static_cast<int64_t>(batch.tables[t].rows);
  CaptureIds& c = captures_[batch.capture];
  // The processes row comes in the capture's first batch: every other row
  // of the capture names it.
  if (batch.tables[Index(TableId::kProcesses)].rows > 0) c.process = base[Index(TableId::kProcesses)];
  for (const TableDef& t : Tables()) {
    if (t.id == TableId::kStrings || t.id == TableId::kAnnotationStacks) continue;
    GPUCAP_RETURN_IF_ERROR(Insert(t.id, batch, c, base));
  }
  return Status::Ok();
}

Status DbWriter::Finish(bool indexes) {
  if (indexes) {
    // The sorter may use a second thread: index building is a good part of the wall time.
    GPUCAP_RETURN_IF_ERROR(Exec(db_, "PRAGMA threads=2"));
    for (const IndexDef& index : Indexes()) GPUCAP_RETURN_IF_ERROR(Exec(db_, CreateIndexSql(index)));
  }
  GPUCAP_RETURN_IF_ERROR(Exec(db_, "COMMIT"));
  return Exec(db_, "PRAGMA locking_mode=NORMAL");
}

}  // namespace gpucap::tools::sqlite
