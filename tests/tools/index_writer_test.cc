// The export's index writer (tools/export/src: index_keys.h, index_btree.h)
// checked against SQLite: a table and its indexes written by the page
// writer open, pass PRAGMA integrity_check (which looks every row up in
// every index, so an entry out of order is a row "missing from index"),
// and a scan of each index returns the rows in the order SQLite's own
// sorter gives them. The keys spilled to a file in runs and merged give
// the same image byte for byte.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "export_test_util.h"
#include "index_btree.h"
#include "index_keys.h"
#include "index_merge.h"
#include "page_file.h"
#include "record.h"
#include "schema_page.h"
#include "spill_file.h"
#include "table_btree.h"

namespace gpucap::tools::sqlite {
namespace {

using Rows = std::vector<std::vector<std::string>>;
using gpucap::testing::QueryRows;

sqlite3* Open(MemoryPageFile* file) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXPECT_EQ(file->HandTo(db), SQLITE_OK);
  return db;
}

// t(id INTEGER PRIMARY KEY, a <type_a>, b <type_b>) with indexes t_ab ON
// t(a, b) and t_b ON t(b); `rows` gives (a, b) per row, as values before
// the columns' affinity.
struct Case {
  std::string type_a = "INTEGER", type_b = "INTEGER";
  std::vector<std::pair<Value, Value>> rows;
  uint32_t page_size = 512;
  std::deque<std::string> texts;  // what Text values of `rows` point into
  Value Text(std::string s) { return Value::Text(texts.emplace_back(std::move(s))); }
};

std::string SpillPattern() { return ::testing::TempDir() + "gpucap-index-spill-XXXXXX"; }

std::string Bytes(sqlite3* db) {
  sqlite3_int64 size = 0;
  unsigned char* p = sqlite3_serialize(db, "main", &size, 0);
  std::string bytes(reinterpret_cast<const char*>(p), static_cast<size_t>(size));
  sqlite3_free(p);
  return bytes;
}

// Writes the image and opens it; with `spill_every`, both indexes spill a
// run after every that many rows.
sqlite3* Write(const Case& c, size_t spill_every) {
  MemoryPageFile file(c.page_size);
  file.Allocate();  // page 1
  const uint32_t table_root = file.Allocate(), ab_root = file.Allocate(), b_root = file.Allocate();
  TableBtree table(&file, table_root);
  IndexKeys ab(2), b(1);
  SpillFile spill(SpillPattern());
  const Affinity fa = AffinityOf(c.type_a), fb = AffinityOf(c.type_b);
  RecordBuilder record;
  std::string na, nb;
  int64_t rowid = 1;
  for (const auto& [va, vb] : c.rows) {
    record.Clear();
    record.Add(Value::Null(), Affinity::kInteger);
    record.Add(va, fa);
    record.Add(vb, fb);
    const std::vector<uint8_t>& r = record.Finish();
    EXPECT_TRUE(table.Append(rowid, r.data(), r.size()).ok());
    const Value key[] = {Stored(va, fa, &na), Stored(vb, fb, &nb)};
    EXPECT_TRUE(ab.Add(rowid, key).ok());
    EXPECT_TRUE(b.Add(rowid, key + 1).ok());
    if (spill_every > 0 && rowid % static_cast<int64_t>(spill_every) == 0) {
      EXPECT_TRUE(ab.SpillTo(&spill).ok());
      EXPECT_TRUE(b.SpillTo(&spill).ok());
      EXPECT_EQ(ab.bytes(), 0u);  // freed, not only emptied
    }
    rowid++;
  }
  if (spill_every > 0 && c.rows.size() >= spill_every) {
    EXPECT_EQ(ab.runs(), c.rows.size() / spill_every);
  }
  EXPECT_TRUE(table.Finish().ok());
  IndexBtree ab_tree(&file, ab_root), b_tree(&file, b_root);
  EXPECT_TRUE(ab.WriteTo(&ab_tree).ok());
  EXPECT_TRUE(ab_tree.Finish().ok());
  EXPECT_TRUE(b.WriteTo(&b_tree).ok());
  EXPECT_TRUE(b_tree.Finish().ok());
  EXPECT_EQ(ab_tree.entries(), c.rows.size());
  const std::string table_sql = "CREATE TABLE t (id INTEGER PRIMARY KEY, a " + c.type_a + ", b " + c.type_b + ")";
  const SchemaTable schema[] = {{"t", table_sql, table_root},
                                {"t_ab", "CREATE INDEX t_ab ON t(a, b)", ab_root, "t"},
                                {"t_b", "CREATE INDEX t_b ON t(b)", b_root, "t"}};
  EXPECT_TRUE(WriteSchemaAndHeader(&file, schema).ok());
  return Open(&file);
}

// Writes the image, opens it and checks it; spilled every 1, 3 and 97
// rows, the image is the same.
void Check(const Case& c) {
  sqlite3* db = Write(c, 0);
  const std::string bytes = Bytes(db);
  for (size_t every : {1, 3, 97}) {
    sqlite3* spilled = Write(c, every);
    EXPECT_TRUE(Bytes(spilled) == bytes) << "spilled every " << every << " rows";
    sqlite3_close(spilled);
  }
  EXPECT_EQ(QueryRows(db, "PRAGMA integrity_check"), (Rows{{"ok"}}));
  // A scan of the index in its order against SQLite's sorter on the table.
  EXPECT_EQ(QueryRows(db, "SELECT quote(a), quote(b), rowid FROM t INDEXED BY t_ab ORDER BY a, b, rowid"),
            QueryRows(db, "SELECT quote(a), quote(b), rowid FROM t NOT INDEXED ORDER BY a, b, rowid"));
  EXPECT_EQ(QueryRows(db, "SELECT quote(b), rowid FROM t INDEXED BY t_b ORDER BY b, rowid"),
            QueryRows(db, "SELECT quote(b), rowid FROM t NOT INDEXED ORDER BY b, rowid"));
  // The plan really reads the index.
  Rows plan = QueryRows(db, "EXPLAIN QUERY PLAN SELECT a, b FROM t INDEXED BY t_ab ORDER BY a, b, rowid");
  ASSERT_FALSE(plan.empty());
  EXPECT_NE(plan[0].back().find("t_ab"), std::string::npos);
  // SQLite's own index over the same rows holds the same entries in the same order.
  ASSERT_EQ(sqlite3_exec(db, "CREATE INDEX ref_ab ON t(a, b)", nullptr, nullptr, nullptr), SQLITE_OK);
  EXPECT_EQ(QueryRows(db, "SELECT quote(a), quote(b), rowid FROM t INDEXED BY t_ab ORDER BY a, b"),
            QueryRows(db, "SELECT quote(a), quote(b), rowid FROM t INDEXED BY ref_ab ORDER BY a, b"));
  EXPECT_EQ(QueryRows(db, "PRAGMA integrity_check"), (Rows{{"ok"}}));
  sqlite3_close(db);
}

TEST(IndexWriter, IntegersNullsAndNegativesOnTheFastPath) {
  Case c;
  const int64_t values[] = {0, 1, -1, 2, 127, 128, -128, -129, 32767, -32768, 1 << 23, -(1 << 23),
                            INT64_MAX, INT64_MIN + 1, int64_t{1} << 40, -(int64_t{1} << 47)};
  for (int round = 0; round < 3; ++round) {
    for (int64_t a : values) {
      for (int64_t b : {int64_t{5}, int64_t{-5}, a}) c.rows.push_back({Value::Int(a), Value::Int(b)});
      c.rows.push_back({Value::Null(), Value::Int(a)});
      c.rows.push_back({Value::Int(a), Value::Null()});
    }
  }
  Check(c);
}

TEST(IndexWriter, ManyDuplicateKeysOverSeveralLevels) {
  Case c;
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) c.rows.push_back({Value::Int(rng() % 3), Value::Int(rng() % 2 ? 9 : -9)});
  Check(c);
}

TEST(IndexWriter, UnsortedLastColumnWithinAGroup) {
  Case c;
  std::mt19937 rng(11);
  // Two "streams" interleaved, start times shuffled: the within-group sort.
  for (int i = 0; i < 5000; ++i) {
    c.rows.push_back({Value::Int(i % 2), Value::Int(static_cast<int64_t>(rng() % 100000) - 50000)});
  }
  Check(c);
}

TEST(IndexWriter, IntegersAndRealsOfEqualValueCompareAsNumbers) {
  Case c;
  c.type_a = "";  // no affinity: values stay as given
  c.type_b = "REAL";
  const double two53 = 9007199254740992.0;
  const Value values[] = {Value::Int(1),    Value::Real(1.0),       Value::Real(1.5),  Value::Int(2),
                          Value::Real(-0.0), Value::Int(0),         Value::Real(-2.5), Value::Int(-3),
                          Value::Null(),    Value::Text("1"),       Value::Text(""),   Value::Real(two53),
                          Value::Int(9007199254740993LL),           Value::Int(INT64_MIN), Value::Real(-1e300),
                          Value::Int(INT64_MAX), Value::Real(9223372036854775807.0), Value::Real(NAN),
                          // An integer and a real of the same whole part: the fraction orders them.
                          Value::Int(3), Value::Real(3.25), Value::Int(-7), Value::Real(-7.75), Value::Real(-6.5)};
  for (const Value& a : values) {
    for (const Value& b : values) c.rows.push_back({a, b});
  }
  Check(c);
}

TEST(IndexWriter, TextWithCommonPrefixesAndBinaryCollation) {
  Case c;
  c.type_a = "TEXT";
  c.type_b = "TEXT";
  const char* texts[] = {"", "a", "ab", "abc", "abd", "b", "B", "a\x7f", "\xc3\xa9", "ab\x01", "12", "9", "abc"};
  for (const char* a : texts) {
    for (const char* b : texts) c.rows.push_back({Value::Text(a), Value::Text(b)});
    c.rows.push_back({Value::Text(a), Value::Null()});
    c.rows.push_back({Value::Int(12), Value::Text(a)});  // a number in a TEXT column is stored as text
  }
  Check(c);
}

TEST(IndexWriter, LongKeysOverflowTheIndexPagesLocalPayload) {
  // X on an index page of 512 bytes is (500*64/255)-23 = 102 bytes; of 4096, 1002.
  for (uint32_t page : {512u, 4096u}) {
    Case c;
    c.type_a = "TEXT";
    c.page_size = page;
    int i = 0;
    for (size_t n : {0, 1, 80, 95, 99, 100, 101, 102, 103, 110, 200, 488, 489, 1000, 1001, 1002, 1003, 3000, 9000}) {
      for (char fill : {'x', 'y'}) {
        c.rows.push_back({c.Text(std::string(n, fill) + std::to_string(i % 3)), Value::Int(i)});
        ++i;
      }
    }
    for (int k = 0; k < 300; ++k) c.rows.push_back({c.Text(std::string(150 + k % 40, 'k')), Value::Int(k)});
    SCOPED_TRACE(page);
    Check(c);
  }
}

TEST(IndexWriter, EveryEntryCountNearPageBoundaries) {
  // Entries of ~90 bytes, four or five to a 512-byte page: every count up to
  // three interior levels' worth puts the held-back divider and the last
  // page's refill at each boundary.
  for (size_t n = 0; n <= 260; ++n) {
    Case c;
    c.type_a = "TEXT";
    for (size_t i = 0; i < n; ++i) {
      c.rows.push_back({c.Text(std::string(80, 'a') + std::to_string(100000 + (i * 7919) % 1000)), Value::Int(1)});
    }
    SCOPED_TRACE(n);
    Check(c);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(IndexWriter, AValueOffTheFastPathSwitchesMidway) {
  Case c;
  for (int i = 0; i < 500; ++i) c.rows.push_back({Value::Int(i % 7), Value::Int(500 - i)});
  c.rows.push_back({Value::Real(2.5), Value::Int(INT64_MIN)});  // a real in INTEGER, INT64_MIN: general path
  for (int i = 0; i < 500; ++i) c.rows.push_back({Value::Int(i % 5), Value::Text("3")});  // numeric text -> 3
  Check(c);
}

TEST(IndexWriter, DuplicateKeysAcrossManyRunsKeepRowidOrder) {
  Case c;
  c.page_size = 1024;
  std::mt19937 rng(3);
  // Few distinct keys, repeated in every run, and NULLs among them.
  for (int i = 0; i < 3000; ++i) {
    const uint32_t r = rng();
    c.rows.push_back({r % 5 == 0 ? Value::Null() : Value::Int(r % 3), r % 7 == 0 ? Value::Null() : Value::Int(r % 4)});
  }
  Check(c);
}

TEST(IndexWriter, TheSpillFileIsGoneFromItsDirectoryOnceMade) {
  SpillFile spill(SpillPattern());
  ASSERT_TRUE(spill.Begin().ok());
  EXPECT_NE(spill.path(), SpillPattern());  // mkstemp named it
  struct stat st;
  EXPECT_NE(::stat(spill.path().c_str(), &st), 0);
  const uint8_t record[] = {2, 1, 7};
  ASSERT_TRUE(spill.Append(record, sizeof record).ok());
  auto run = spill.End();
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->size, 1 + sizeof record);
  uint8_t back[4];
  ASSERT_TRUE(spill.Read(run->offset, sizeof back, back).ok());
  EXPECT_EQ(back[0], sizeof record);
  EXPECT_FALSE(spill.Read(run->offset, 64, back).ok());  // past its end
}

TEST(IndexWriter, ASpillFileThatCannotBeMadeIsAnErrorNamingIt) {
  SpillFile spill(::testing::TempDir() + "no-such-dir/keys-XXXXXX");
  IndexKeys keys(1);
  const Value v = Value::Int(3);
  ASSERT_TRUE(keys.Add(1, &v).ok());
  Status s = keys.SpillTo(&spill);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no-such-dir/keys-XXXXXX"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("temporary file"), std::string::npos) << s.message();
}

TEST(IndexWriter, AFullDiskWhileSpillingIsAnErrorNamingTheFileAndOffset) {
  // The file size limit stands in for a full disk: writes past it fail
  // with EFBIG (SIGXFSZ ignored) as they would with ENOSPC.
  rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  SpillFile spill(SpillPattern());
  IndexKeys keys(2);
  Status s;
  for (int64_t i = 1; i <= 200000 && s.ok(); ++i) {
    const Value key[] = {Value::Int(i % 3), Value::Int(i)};
    s = keys.Add(i, key);
  }
  if (s.ok()) s = keys.SpillTo(&spill);
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::signal(SIGXFSZ, old_handler);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kNoSpace) << s.message();
  EXPECT_NE(s.message().find(spill.path()), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("at offset 4096"), std::string::npos) << s.message();
}

TEST(IndexWriter, RowsOutOfRowidOrderAreRefused) {
  IndexKeys keys(1);
  const Value v = Value::Int(3);
  ASSERT_TRUE(keys.Add(1, &v).ok());
  EXPECT_FALSE(keys.Add(3, &v).ok());
}

}  // namespace
}  // namespace gpucap::tools::sqlite
