#include "db_writer.h"

#include <sqlite3.h>

#include <algorithm>

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

namespace {

std::string CreateTable(const TableDef& t) {
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

// "INSERT INTO t (a, b) VALUES (?, ?), (?, ?), ..." for `rows` rows.
std::string InsertInto(const TableDef& t, size_t rows = 1) {
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
  sql += ") VALUES ";
  for (size_t r = 0; r < rows; ++r) sql += (r ? ", (" : "(") + values + ")";
  return sql;
}

// Rows per multi-row INSERT: enough to spread a statement's fixed cost,
// within SQLite's parameter limit.
constexpr size_t kRowsPerInsert = 32;

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
  for (const TableDef& t : Tables()) GPUCAP_RETURN_IF_ERROR(Exec(db, CreateTable(t)));
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
  for (sqlite3_stmt* s : insert_many_) sqlite3_finalize(s);
}

Status DbWriter::Prepare() {
  const size_t max_params = static_cast<size_t>(sqlite3_limit(db_, SQLITE_LIMIT_VARIABLE_NUMBER, -1));
  for (const TableDef& t : Tables()) {
    size_t i = static_cast<size_t>(t.id);
    std::string sql = InsertInto(t);
    if (sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &insert_[i], nullptr) != SQLITE_OK) {
      return SqliteError(db_, "preparing " + sql);
    }
    const size_t params = t.columns.size() + (t.has_id ? 1 : 0);
    many_rows_[i] = std::min(kRowsPerInsert, max_params / params);
    if (many_rows_[i] < 2) continue;
    sql = InsertInto(t, many_rows_[i]);
    if (sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &insert_many_[i], nullptr) != SQLITE_OK) {
      return SqliteError(db_, "preparing " + sql.substr(0, 200));
    }
  }
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

void DbWriter::BindRow(sqlite3_stmt* s, int first, const Cell* cell, size_t width, const RowBatch& batch,
                       const std::array<int64_t, kTableCount>& base, Bound* last) {
  const CaptureIds& c = captures_[batch.capture];
  for (size_t i = 0; i < width; ++i, ++cell) {
    int p = first + static_cast<int>(i);
    Bound now;
    switch (cell->kind) {
      case Cell::Kind::kNull: now = {Bound::kNull, 0}; break;
      case Cell::Kind::kInt: now = {Bound::kInt, cell->i}; break;
      case Cell::Kind::kReal: now = {Bound::kReal, cell->i}; break;  // the double's bits
      case Cell::Kind::kText: now = {Bound::kText, cell->i}; break;
      case Cell::Kind::kLiteral: now = {Bound::kLiteral, reinterpret_cast<intptr_t>(cell->p)}; break;
      case Cell::Kind::kString: now = {Bound::kInt, c.strings[static_cast<size_t>(cell->i)]}; break;
      case Cell::Kind::kStack: now = {Bound::kInt, c.stacks[static_cast<size_t>(cell->i)]}; break;
      case Cell::Kind::kRef: now = {Bound::kInt, base[static_cast<size_t>(cell->ref)] + cell->i}; break;
      case Cell::Kind::kProcess: now = {Bound::kInt, c.process}; break;
    }
    if (now.kind != Bound::kText && now == last[i]) continue;
    last[i] = now;
    switch (now.kind) {
      case Bound::kNull: sqlite3_bind_null(s, p); break;
      case Bound::kInt: sqlite3_bind_int64(s, p, now.v); break;
      case Bound::kReal: sqlite3_bind_double(s, p, cell->d); break;
      case Bound::kText: {
        const std::string& t = batch.texts[static_cast<size_t>(cell->i)];
        sqlite3_bind_text(s, p, t.data(), static_cast<int>(t.size()), SQLITE_STATIC);
        break;
      }
      case Bound::kLiteral:
        sqlite3_bind_text(s, p, cell->p->data(), static_cast<int>(cell->p->size()), SQLITE_STATIC);
        break;
      default: break;
    }
  }
}

Status DbWriter::Insert(TableId table, const RowBatch& batch, const std::array<int64_t, kTableCount>& base) {
  const size_t t = static_cast<size_t>(table);
  const TableDef& def = Table(table);
  const TableRows& rows = batch.tables[t];
  const size_t width = def.columns.size();
  const size_t params = width + (def.has_id ? 1 : 0);
  const Cell* cell = rows.cells.data();
  // Bindings outlive sqlite3_reset: a parameter bound to the same value as
  // in the row before (the process, window, stream, launch shape, NULLs) is
  // left alone, which saves most binds of a kernel row. Kept per parameter
  // (`id` aside), so per row slot of the multi-row statement.
  const size_t many = insert_many_[t] ? many_rows_[t] : 0;
  bound_[t].resize(width);
  bound_many_[t].resize(many * width);
  size_t r = 0;
  auto step = [&](sqlite3_stmt* s) {
    if (sqlite3_step(s) != SQLITE_DONE) return SqliteError(db_, "inserting into " + std::string(def.name));
    sqlite3_reset(s);
    return Status::Ok();
  };
  for (; many > 0 && rows.rows - r >= many; r += many) {
    sqlite3_stmt* s = insert_many_[t];
    for (size_t k = 0; k < many; ++k, cell += width) {
      int first = static_cast<int>(k * params) + 1;
      if (def.has_id) sqlite3_bind_int64(s, first++, base[t] + static_cast<int64_t>(r + k));
      BindRow(s, first, cell, width, batch, base, &bound_many_[t][k * width]);
    }
    GPUCAP_RETURN_IF_ERROR(step(s));
  }
  sqlite3_stmt* s = insert_[t];
  for (; r < rows.rows; ++r, cell += width) {
    int first = 1;
    if (def.has_id) sqlite3_bind_int64(s, first++, base[t] + static_cast<int64_t>(r));
    BindRow(s, first, cell, width, batch, base, bound_[t].data());
    GPUCAP_RETURN_IF_ERROR(step(s));
  }
  rows_[t] += rows.rows;
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
  for (const TableDef& t : Tables()) {
    if (t.id == TableId::kStrings || t.id == TableId::kAnnotationStacks) continue;
    GPUCAP_RETURN_IF_ERROR(Insert(t.id, batch, base));
  }
  return Status::Ok();
}

Status DbWriter::Finish(bool indexes) {
  if (indexes) {
    // The sorter may use a second thread: index building is most of the wall time.
    GPUCAP_RETURN_IF_ERROR(Exec(db_, "PRAGMA threads=2"));
    for (std::string_view index : Indexes()) GPUCAP_RETURN_IF_ERROR(Exec(db_, index));
  }
  GPUCAP_RETURN_IF_ERROR(Exec(db_, "COMMIT"));
  return Exec(db_, "PRAGMA locking_mode=NORMAL");
}

}  // namespace gpucap::tools::sqlite
