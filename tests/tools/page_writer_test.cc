// The export's page writer (tools/export/src: record.h, table_btree.h,
// schema_page.h) checked against SQLite itself: what it writes opens,
// passes PRAGMA integrity_check and reads back as the rows SQLite's own
// INSERT stores for the same values.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "export_test_util.h"
#include "page_file.h"
#include "record.h"
#include "schema_page.h"
#include "table_btree.h"

namespace gpucap::tools::sqlite {
namespace {

using Rows = std::vector<std::vector<std::string>>;
using gpucap::testing::QueryRows;

std::string One(sqlite3* db, const std::string& sql) {
  Rows r = QueryRows(db, sql);
  return r.empty() || r[0].empty() ? "(none)" : r[0][0];
}

// A database of one image, opened by SQLite (the connection owns the buffer).
sqlite3* Open(MemoryPageFile* file) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXPECT_EQ(file->HandTo(db), SQLITE_OK);
  return db;
}

struct Column {
  const char* decl;
  Affinity affinity;
};
const Column kColumns[] = {{"INTEGER", Affinity::kInteger}, {"REAL", Affinity::kReal},
                           {"TEXT", Affinity::kText}, {"", Affinity::kBlob}};
constexpr char kTableSql[] = "CREATE TABLE t (id INTEGER PRIMARY KEY, i INTEGER, r REAL, s TEXT, a)";

void Bind(sqlite3_stmt* st, int i, const Value& v) {
  switch (v.type) {
    case Value::Type::kNull: sqlite3_bind_null(st, i); break;
    case Value::Type::kInt: sqlite3_bind_int64(st, i, v.i); break;
    case Value::Type::kReal: sqlite3_bind_double(st, i, v.d); break;
    case Value::Type::kText: sqlite3_bind_text(st, i, v.text.data(), static_cast<int>(v.text.size()), SQLITE_STATIC); break;
  }
}

// Every value of `values` in each of t's four columns: one row per value,
// written by the page writer into `t` and inserted by SQLite into `ref`.
void ExpectSameAsInserted(const std::vector<Value>& values, uint32_t page_size) {
  MemoryPageFile file(page_size);
  file.Allocate();  // page 1
  const uint32_t root = file.Allocate();
  TableBtree tree(&file, root);
  RecordBuilder record;
  int64_t rowid = 1;
  for (const Value& v : values) {
    record.Clear();
    record.Add(Value::Null(), Affinity::kInteger);
    for (const Column& c : kColumns) record.Add(v, c.affinity);
    const std::vector<uint8_t>& r = record.Finish();
    ASSERT_TRUE(tree.Append(rowid++, r.data(), r.size()).ok());
  }
  ASSERT_TRUE(tree.Finish().ok());
  const SchemaTable table{"t", kTableSql, root};
  ASSERT_TRUE(WriteSchemaAndHeader(&file, {&table, 1}).ok());
  sqlite3* db = Open(&file);
  EXPECT_EQ(One(db, "PRAGMA integrity_check"), "ok");
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE ref (id INTEGER PRIMARY KEY, i INTEGER, r REAL, s TEXT, a)", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_stmt* ins = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "INSERT INTO ref VALUES (NULL, ?, ?, ?, ?)", -1, &ins, nullptr), SQLITE_OK);
  for (const Value& v : values) {
    for (int i = 1; i <= 4; ++i) Bind(ins, i, v);
    ASSERT_EQ(sqlite3_step(ins), SQLITE_DONE);
    sqlite3_reset(ins);
  }
  sqlite3_finalize(ins);
  const std::string cols =
      "id, typeof(i), quote(i), typeof(r), quote(r), typeof(s), quote(s), typeof(a), quote(a) FROM ";
  Rows written = QueryRows(db, "SELECT " + cols + "t ORDER BY id");
  Rows inserted = QueryRows(db, "SELECT " + cols + "ref ORDER BY id");
  EXPECT_EQ(written.size(), values.size());
  EXPECT_EQ(written, inserted);
  // Found by rowid through the interior pages, not only by a scan.
  for (int64_t id : {int64_t{1}, static_cast<int64_t>(values.size() / 2 + 1), static_cast<int64_t>(values.size())}) {
    std::string where = " WHERE id = ";
    where += std::to_string(id);
    EXPECT_EQ(QueryRows(db, "SELECT " + cols + "t" + where), QueryRows(db, "SELECT " + cols + "ref" + where)) << id;
  }
  sqlite3_close(db);
}

TEST(PageWriter, RecordsOfEverySerialTypeReadBackAsSqliteStoresThem) {
  // Integers at each size's edges (serial types 1-6, 8, 9), reals (7),
  // text (odd types) including empty, and values the affinities convert.
  std::vector<Value> values = {Value::Null(), Value::Int(0), Value::Int(1), Value::Int(2), Value::Int(-1)};
  for (int64_t edge : {int64_t{127}, int64_t{32767}, int64_t{8388607}, int64_t{2147483647}, (int64_t{1} << 47) - 1,
                       INT64_MAX}) {
    // Past each edge the next size (INT64_MAX has none: its neighbour
    // below, and -INT64_MAX - 1 is INT64_MIN). No arithmetic that overflows.
    values.push_back(Value::Int(edge));
    values.push_back(Value::Int(edge == INT64_MAX ? edge - 1 : edge + 1));
    values.push_back(Value::Int(-edge - 1));
    if (edge != INT64_MAX) values.push_back(Value::Int(-edge - 2));
  }
  values.push_back(Value::Int(INT64_MIN));
  for (double d : {0.0, 1.5, -2.25, 3.0, 1e300, -1e-300, 9.3e18}) values.push_back(Value::Real(d));
  for (const char* s : {"", "a", "kernel", "42", " -7 ", "3.5", "1e3", "0x10", "12abc", "9999999999999999999"}) {
    values.push_back(Value::Text(s));
  }
  ExpectSameAsInserted(values, 4096);
}

TEST(PageWriter, LongRecordsGoOnOverflowPages) {
  // Lengths around the local payload limits of 512-byte pages (477 keeps a
  // record on the leaf) and chains of several overflow pages.
  std::vector<std::string> texts;
  for (size_t n : {0, 400, 470, 471, 472, 477, 478, 479, 500, 508, 1000, 1019, 1020, 5000, 20000}) {
    texts.push_back(std::string(n, static_cast<char>('a' + n % 26)));
  }
  std::vector<Value> values;
  for (const std::string& t : texts) values.push_back(Value::Text(t));
  ExpectSameAsInserted(values, 512);
  ExpectSameAsInserted(values, 65536);
}

TEST(PageWriter, ManyRowsMakeSeveralInteriorLevels) {
  // 512-byte pages of 3 rows: 6000 rows need 2000 leaves, two interior levels and a root.
  std::vector<std::string> texts;
  for (int64_t i = 0; i < 6000; ++i) texts.push_back(std::to_string(i * 7919 % 100003) + std::string(25, 'k'));
  std::vector<Value> values;
  for (const std::string& t : texts) values.push_back(Value::Text(t));
  ExpectSameAsInserted(values, 512);
}

TEST(PageWriter, EveryRowCountNearPageBoundariesIsAValidTree) {
  // The last page of each level: a count just past a full page must not
  // leave an interior page with no cell (integrity_check says so). One
  // row per 512-byte leaf, about 70 leaves per interior page.
  const std::string text(60, 'r');
  for (size_t n = 0; n <= 220; ++n) {
    std::vector<Value> values(n, Value::Text(text));
    SCOPED_TRACE(n);
    ExpectSameAsInserted(values, 512);
  }
}

TEST(PageWriter, SchemaOfManyTablesSpansPagesBelowTheHeader) {
  // sqlite_schema on page 1 holds the database header in front of its
  // tree; 60 tables on 512-byte pages make that tree several pages deep.
  MemoryPageFile file(512);
  file.Allocate();
  std::vector<SchemaTable> tables;
  RecordBuilder record;
  for (int k = 0; k < 60; ++k) {
    const uint32_t root = file.Allocate();
    TableBtree tree(&file, root);
    record.Clear();
    record.Add(Value::Int(k), Affinity::kInteger);
    const std::vector<uint8_t>& r = record.Finish();
    ASSERT_TRUE(tree.Append(1, r.data(), r.size()).ok());
    ASSERT_TRUE(tree.Finish().ok());
    std::string name = "t";
    name += std::to_string(k);
    tables.push_back({name, "CREATE TABLE " + name + " (value INTEGER)", root});
  }
  ASSERT_TRUE(WriteSchemaAndHeader(&file, tables).ok());
  sqlite3* db = Open(&file);
  EXPECT_EQ(One(db, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(One(db, "SELECT count(*) FROM sqlite_schema"), "60");
  EXPECT_EQ(One(db, "SELECT value FROM t0"), "0");
  EXPECT_EQ(One(db, "SELECT value FROM t59"), "59");
  sqlite3_close(db);
}

TEST(PageWriter, RowidsThatDoNotIncreaseAreRefused) {
  MemoryPageFile file(4096);
  file.Allocate();
  TableBtree tree(&file, file.Allocate());
  const uint8_t record[] = {2, 0};  // one NULL column
  ASSERT_TRUE(tree.Append(5, record, sizeof record).ok());
  Status s = tree.Append(5, record, sizeof record);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("rowid 5 after 5"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace gpucap::tools::sqlite
