// The export's two writers side by side on the fixtures: the page writer
// (the default: table B-trees written as SQLite's file format) and every
// row through SQLite's INSERT (ExportOptions::sqlite_inserts). The same
// rows, with the same types, in every table; the file passes SQLite's own
// integrity check.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "../support/temp_dir.h"
#include "export_test_util.h"
#include "gpucap/tools/export/schema.h"
#include "gpucap/tools/export/sqlite_export.h"

namespace gpucap::testing {
namespace {

using Rows = std::vector<std::vector<std::string>>;

// Every column of `t`, quoted (so 1, 1.0 and '1' differ), in rowid order.
std::string AllOf(const tools::sqlite::TableDef& t) {
  std::string sql = "SELECT rowid";
  if (t.has_id) sql += ", quote(id)";
  for (const auto& c : t.columns) sql += ", quote(" + std::string(c.name) + ")";
  if (!t.generated.empty()) sql += ", quote(dur_ns)";
  return sql + " FROM " + std::string(t.name) + " ORDER BY rowid";
}

struct Exported {
  sqlite3* db = nullptr;
  std::vector<std::unique_ptr<builder::CaptureIndex>> indexes;
  ~Exported() { sqlite3_close(db); }
};

void ExportInto(Exported* out, const std::vector<std::string>& paths, bool inserts) {
  ASSERT_EQ(sqlite3_open(":memory:", &out->db), SQLITE_OK);
  std::vector<const builder::CaptureIndex*> list;
  for (const std::string& p : paths) {
    auto index = builder::CaptureIndex::Open(p);
    ASSERT_TRUE(index.ok()) << index.status().message();
    list.push_back(index->get());
    out->indexes.push_back(std::move(index).value());
  }
  tools::ExportOptions o;
  o.sqlite_inserts = inserts;
  o.jobs = 1;  // rows in one order, so ids match between the two
  auto report = tools::ExportCaptures(out->db, list, o);
  ASSERT_TRUE(report.ok()) << report.status().message();
}

void ExpectSameTables(const std::vector<std::string>& paths) {
  Exported pages, inserts;
  ExportInto(&pages, paths, false);
  ExportInto(&inserts, paths, true);
  if (pages.db == nullptr || inserts.db == nullptr) return;
  EXPECT_EQ(QueryRows(pages.db, "PRAGMA integrity_check"), (Rows{{"ok"}}));
  size_t rows = 0;
  for (const auto& t : tools::sqlite::Tables()) {
    Rows a = QueryRows(pages.db, AllOf(t)), b = QueryRows(inserts.db, AllOf(t));
    EXPECT_EQ(a, b) << t.name;
    rows += a.size();
  }
  EXPECT_GT(rows, 100u);
  const std::string schema = "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name";
  EXPECT_EQ(QueryRows(pages.db, schema), QueryRows(inserts.db, schema));
}

TEST(ExportPages, SameTablesAsSqliteInsertsOnEveryFixture) {
  for (const std::string& name : FixtureNames()) {
    SCOPED_TRACE(name);
    ExpectSameTables({Fixture(name)});
  }
  ExpectSameTables({Fixture("allreduce-0"), Fixture("allreduce-1")});  // two ranks, one database
}

TEST(ExportPages, TheFileIsAValidDatabaseWithAndWithoutIndexes) {
  TempDir dir;
  for (bool indexes : {false, true}) {
    std::string out = dir.File(indexes ? "with.sqlite" : "without.sqlite");
    tools::ExportOptions o;
    o.indexes = indexes;
    auto report = tools::ExportToFile({Fixture("torch_train"), Fixture("basics")}, out, o);
    ASSERT_TRUE(report.ok()) << report.status().message();
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(out.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    EXPECT_EQ(QueryRows(db, "PRAGMA integrity_check"), (Rows{{"ok"}}));
    EXPECT_EQ(QueryRows(db, "PRAGMA page_size"), (Rows{{"16384"}}));
    EXPECT_EQ(QueryRows(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'index'"),
              (Rows{{std::to_string(indexes ? tools::sqlite::Indexes().size() : 0)}}));
    uint64_t rows = 0;
    for (const auto& t : tools::sqlite::Tables()) {
      rows += std::stoull(QueryRows(db, "SELECT count(*) FROM " + std::string(t.name))[0][0]);
    }
    EXPECT_EQ(rows, report->rows);
    sqlite3_close(db);
  }
}

}  // namespace
}  // namespace gpucap::testing
