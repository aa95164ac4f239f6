// The export's two writers side by side on the fixtures: the page writer
// (the default: table B-trees written as SQLite's file format) and every
// row through SQLite's INSERT (ExportOptions::sqlite_inserts). The same
// rows, with the same types, in every table; the file passes SQLite's own
// integrity check.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
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

// Every entry of `index` in the index's own order: its columns and rowid.
std::string IndexScan(const tools::sqlite::IndexDef& index) {
  std::string cols;
  for (std::string_view c : index.columns) cols += (cols.empty() ? "" : ", ") + std::string(c);
  std::string quoted;
  for (std::string_view c : index.columns) quoted += "quote(" + std::string(c) + "), ";
  return "SELECT " + quoted + "rowid FROM " + std::string(tools::sqlite::Table(index.table).name) + " INDEXED BY " +
         std::string(index.name) + " ORDER BY " + cols;
}

struct Exported {
  sqlite3* db = nullptr;
  std::vector<std::unique_ptr<builder::CaptureIndex>> indexes;
  ~Exported() { sqlite3_close(db); }
};

void ExportInto(Exported* out, const std::vector<std::string>& paths, bool inserts, bool indexes = true) {
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
  o.indexes = indexes;
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
  // Each index written by the page writer, scanned in its order, against
  // the one SQLite's CREATE INDEX built over the same rows.
  for (const auto& index : tools::sqlite::Indexes()) {
    EXPECT_EQ(QueryRows(pages.db, IndexScan(index)), QueryRows(inserts.db, IndexScan(index))) << index.name;
  }
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

// Index keys over a budget of one byte spill a run per row of every index
// to a temporary file beside the output and are merged back: the file
// comes out byte for byte the same, and nothing is left beside it.
TEST(ExportPages, IndexKeysSpilledToATemporaryFileGiveTheSameBytes) {
  TempDir dir;
  const std::vector<std::string> captures = {Fixture("torch_train"), Fixture("allreduce-0"), Fixture("basics")};
  std::string bytes[2];
  for (size_t budget : {tools::kIndexKeyMemory, size_t{1}}) {
    std::string out = dir.File(budget == 1 ? "spilled.sqlite" : "held.sqlite");
    tools::ExportOptions o;
    o.index_key_memory = budget;
    o.jobs = 1;
    auto report = tools::ExportToFile(captures, out, o);
    ASSERT_TRUE(report.ok()) << report.status().message();
    bytes[budget == 1] = ReadFile(out);
  }
  EXPECT_GT(bytes[0].size(), 16384u);
  EXPECT_TRUE(bytes[0] == bytes[1]) << "sizes " << bytes[0].size() << " and " << bytes[1].size();
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"held.sqlite", "spilled.sqlite"}));
}

// The documented queries read the indexes the page writer wrote (the plan
// names them) and answer as they do without any index.
TEST(ExportPages, TheExampleQueriesUseTheWrittenIndexesAndAnswerTheSame) {
  const std::map<std::string, std::set<std::string>> uses = {
      {"top_kernels_per_step", {}},
      {"nccl_time_per_rank", {"kernels_by_name"}},
      {"idle_gaps_per_stream", {"kernels_by_stream", "memcpys_by_stream", "memsets_by_stream"}},
      {"kernels_under_range", {"strings_by_value", "stacks_by_name", "stacks_by_parent", "kernels_by_stack"}},
      {"kernels_per_range_instance", {"kernels_by_launch"}},
  };
  const std::vector<std::string> paths = {Fixture("allreduce-0"), Fixture("allreduce-1"), Fixture("torch_train")};
  Exported with, without;
  ExportInto(&with, paths, false, true);
  ExportInto(&without, paths, false, false);
  if (with.db == nullptr || without.db == nullptr) return;
  std::set<std::string> all;
  for (const auto& [name, sql] : DocQueries()) {
    SCOPED_TRACE(name);
    std::set<std::string> used;
    for (const auto& row : QueryRows(with.db, "EXPLAIN QUERY PLAN " + sql)) {
      for (const auto& index : tools::sqlite::Indexes()) {
        if (row.back().find(" INDEX " + std::string(index.name) + " ") != std::string::npos ||
            row.back().ends_with(" INDEX " + std::string(index.name))) {
          used.insert(std::string(index.name));
        }
      }
    }
    EXPECT_EQ(used, uses.at(name));
    all.insert(used.begin(), used.end());
    Rows a = QueryRows(with.db, sql), b = QueryRows(without.db, sql);
    EXPECT_EQ(a, b);
  }
  EXPECT_EQ(all.size(), 9u);  // of 13: nvtx, counters and graph_nodes keep theirs for ad hoc queries
}

}  // namespace
}  // namespace gpucap::testing
