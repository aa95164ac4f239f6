#include "batch_table.h"

#include <sqlite3.h>

#include <cstdlib>
#include <string>

#include "db_writer.h"

namespace gpucap::tools::sqlite {
namespace {

constexpr char kModule[] = "gpucap_batch";

std::string VirtualName(const TableDef& t) { return "gpucap_batch_" + std::string(t.name); }

struct Vtab {
  sqlite3_vtab base{};
  const BatchTables::Feed* feed = nullptr;
  TableId table = TableId::kMeta;
  size_t width = 0;
  bool id = false;  // column 0 is the table's `id`, always NULL
};

struct Cursor {
  sqlite3_vtab_cursor base{};
  size_t row = 0, rows = 0;
  const Cell* cells = nullptr;  // row 0's first cell
};

// argv[3]: the schema table's position (TableId). The virtual table has the
// table's stored columns, in order, without declared types:
// the real table's column affinities apply on insert, as they did to bound
// values.
int Connect(sqlite3* db, void* aux, int argc, const char* const* argv, sqlite3_vtab** out, char** error) {
  if (argc < 4) {
    *error = sqlite3_mprintf("%s: no table given", kModule);
    return SQLITE_ERROR;
  }
  int id = std::atoi(argv[3]);
  if (id < 0 || static_cast<size_t>(id) >= kTableCount) {
    *error = sqlite3_mprintf("%s: no table %s", kModule, argv[3]);
    return SQLITE_ERROR;
  }
  const TableDef& t = Table(static_cast<TableId>(id));
  std::string sql = t.has_id ? "CREATE TABLE x(id" : "CREATE TABLE x(c0";
  for (size_t c = t.has_id ? 0 : 1; c < t.columns.size(); ++c) sql += ", c" + std::to_string(c);
  sql += ")";
  if (int rc = sqlite3_declare_vtab(db, sql.c_str()); rc != SQLITE_OK) return rc;
  auto* v = new Vtab;
  v->feed = static_cast<const BatchTables::Feed*>(aux);
  v->table = t.id;
  v->width = t.columns.size();
  v->id = t.has_id;
  *out = &v->base;
  return SQLITE_OK;
}

int Disconnect(sqlite3_vtab* v) {
  delete reinterpret_cast<Vtab*>(v);
  return SQLITE_OK;
}

int BestIndex(sqlite3_vtab*, sqlite3_index_info* info) {
  info->estimatedCost = 1e6;
  return SQLITE_OK;
}

int Open(sqlite3_vtab*, sqlite3_vtab_cursor** out) {
  *out = &(new Cursor)->base;
  return SQLITE_OK;
}

int Close(sqlite3_vtab_cursor* c) {
  delete reinterpret_cast<Cursor*>(c);
  return SQLITE_OK;
}

// Rows of the feed's batch; none when no batch is being written.
int Filter(sqlite3_vtab_cursor* base, int, const char*, int, sqlite3_value**) {
  auto* c = reinterpret_cast<Cursor*>(base);
  const auto* v = reinterpret_cast<const Vtab*>(base->pVtab);
  c->row = 0;
  c->rows = 0;
  if (const RowBatch* batch = v->feed->batch) {
    const TableRows& rows = batch->tables[static_cast<size_t>(v->table)];
    c->rows = rows.rows;
    c->cells = rows.cells.data();
  }
  return SQLITE_OK;
}

int Next(sqlite3_vtab_cursor* c) {
  reinterpret_cast<Cursor*>(c)->row++;
  return SQLITE_OK;
}

int Eof(sqlite3_vtab_cursor* base) {
  const auto* c = reinterpret_cast<const Cursor*>(base);
  return c->row >= c->rows;
}

// One cell, made global (row_batch.h's kinds). Text is handed over without
// a copy: the batch outlives the statement's step.
int Column(sqlite3_vtab_cursor* base, sqlite3_context* ctx, int column) {
  const auto* c = reinterpret_cast<const Cursor*>(base);
  const auto* v = reinterpret_cast<const Vtab*>(base->pVtab);
  const BatchTables::Feed& feed = *v->feed;
  size_t i = static_cast<size_t>(column);
  if (v->id) {
    if (i == 0) {
      sqlite3_result_null(ctx);  // SQLite picks the rowid
      return SQLITE_OK;
    }
    --i;
  }
  const Cell& cell = c->cells[c->row * v->width + i];
  switch (cell.kind) {
    case Cell::Kind::kNull: sqlite3_result_null(ctx); break;
    case Cell::Kind::kInt: sqlite3_result_int64(ctx, cell.i); break;
    case Cell::Kind::kReal: sqlite3_result_double(ctx, cell.d); break;
    case Cell::Kind::kText: {
      const std::string& t = feed.batch->texts[static_cast<size_t>(cell.i)];
      sqlite3_result_text(ctx, t.data(), static_cast<int>(t.size()), SQLITE_STATIC);
      break;
    }
    case Cell::Kind::kLiteral:
      sqlite3_result_text(ctx, cell.p->data(), static_cast<int>(cell.p->size()), SQLITE_STATIC);
      break;
    case Cell::Kind::kString: sqlite3_result_int64(ctx, (*feed.ids.strings)[static_cast<size_t>(cell.i)]); break;
    case Cell::Kind::kStack: sqlite3_result_int64(ctx, (*feed.ids.stacks)[static_cast<size_t>(cell.i)]); break;
    case Cell::Kind::kRef:
      sqlite3_result_int64(ctx, (*feed.ids.base)[static_cast<size_t>(cell.ref)] + cell.i);
      break;
    case Cell::Kind::kProcess: sqlite3_result_int64(ctx, feed.ids.process); break;
  }
  return SQLITE_OK;
}

int Rowid(sqlite3_vtab_cursor* base, sqlite3_int64* out) {
  *out = static_cast<sqlite3_int64>(reinterpret_cast<const Cursor*>(base)->row);
  return SQLITE_OK;
}

const sqlite3_module kRowsModule = {
    .iVersion = 0,
    .xCreate = Connect,
    .xConnect = Connect,
    .xBestIndex = BestIndex,
    .xDisconnect = Disconnect,
    .xDestroy = Disconnect,
    .xOpen = Open,
    .xClose = Close,
    .xFilter = Filter,
    .xNext = Next,
    .xEof = Eof,
    .xColumn = Column,
    .xRowid = Rowid,
    .xUpdate = nullptr,  // read-only
    .xBegin = nullptr,
    .xSync = nullptr,
    .xCommit = nullptr,
    .xRollback = nullptr,
    .xFindFunction = nullptr,
    .xRename = nullptr,
    .xSavepoint = nullptr,
    .xRelease = nullptr,
    .xRollbackTo = nullptr,
    .xShadowName = nullptr,
};

// "INSERT INTO t SELECT * FROM temp.gpucap_batch_t": `id` (when the table
// has one) NULL, so SQLite appends with rowids of its own. No column list:
// with one, SQLite copies every value into the insert's registers once more.
std::string InsertSelect(const TableDef& t) {
  return "INSERT INTO " + std::string(t.name) + " SELECT * FROM temp." + VirtualName(t);
}

}  // namespace

Result<std::unique_ptr<BatchTables>> BatchTables::Create(sqlite3* db) {
  std::unique_ptr<BatchTables> b(new BatchTables(db));
  if (sqlite3_create_module(db, kModule, &kRowsModule, &b->feed_) != SQLITE_OK) {
    return SqliteError(db, "registering the batch module");
  }
  b->module_ = true;
  for (const TableDef& t : Tables()) {
    size_t i = static_cast<size_t>(t.id);
    GPUCAP_RETURN_IF_ERROR(Exec(db, "CREATE VIRTUAL TABLE temp." + VirtualName(t) + " USING " + kModule + "(" +
                                        std::to_string(i) + ")"));
    b->created_[i] = true;
    std::string sql = InsertSelect(t);
    if (sqlite3_prepare_v3(db, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &b->insert_[i], nullptr) != SQLITE_OK) {
      return SqliteError(db, "preparing " + sql.substr(0, 200));
    }
  }
  return b;
}

BatchTables::~BatchTables() {
  for (sqlite3_stmt* s : insert_) sqlite3_finalize(s);
  for (const TableDef& t : Tables()) {
    if (created_[static_cast<size_t>(t.id)]) (void)Exec(db_, "DROP TABLE temp." + VirtualName(t));
  }
  // A null module drops the registration: nothing is left that points here.
  if (module_) sqlite3_create_module(db_, kModule, nullptr, nullptr);
}

Status BatchTables::Insert(TableId table, const RowBatch& batch, const BatchIds& ids) {
  const size_t t = static_cast<size_t>(table);
  const TableDef& def = Table(table);
  const size_t rows = batch.tables[t].rows;
  if (rows == 0) return Status::Ok();
  feed_ = {&batch, ids};
  sqlite3_stmt* s = insert_[t];
  int rc = sqlite3_step(s);
  sqlite3_reset(s);
  feed_ = {};
  if (rc != SQLITE_DONE) return SqliteError(db_, "inserting into " + std::string(def.name));
  if (static_cast<size_t>(sqlite3_changes64(db_)) != rows) {
    return Status::Internal(std::string(def.name) + ": " + std::to_string(sqlite3_changes64(db_)) + " of " +
                            std::to_string(rows) + " rows inserted");
  }
  if (def.has_id) {
    const int64_t last = (*ids.base)[t] + static_cast<int64_t>(rows) - 1;
    if (sqlite3_last_insert_rowid(db_) != last) {
      return Status::Internal(std::string(def.name) + ": SQLite gave the last row id " +
                              std::to_string(sqlite3_last_insert_rowid(db_)) + ", the writer " +
                              std::to_string(last));
    }
  }
  return Status::Ok();
}

}  // namespace gpucap::tools::sqlite
