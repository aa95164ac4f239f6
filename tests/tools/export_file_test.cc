// The database file an export writes: a valid SQLite database with and
// without its indexes, the example queries reading the indexes, the same
// bytes whatever the run and whatever --parallel (ids in capture order,
// then time: sqlite_export.h), and the same rows however finely a window's
// rows are cut into batches.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "../support/temp_dir.h"
#include "export_test_util.h"
#include "synthetic_capture.h"
#include "gpucap/tools/export/schema.h"
#include "gpucap/tools/export/sqlite_export.h"

namespace gpucap::testing {
namespace {

using Rows = std::vector<std::vector<std::string>>;

struct Exported {
  sqlite3* db = nullptr;
  std::vector<std::unique_ptr<builder::CaptureIndex>> indexes;
  ~Exported() { sqlite3_close(db); }
};

void ExportInto(Exported* out, const std::vector<std::string>& paths, bool indexes) {
  ASSERT_EQ(sqlite3_open(":memory:", &out->db), SQLITE_OK);
  std::vector<const builder::CaptureIndex*> list;
  for (const std::string& p : paths) {
    auto index = builder::CaptureIndex::Open(p);
    ASSERT_TRUE(index.ok()) << index.status().message();
    list.push_back(index->get());
    out->indexes.push_back(std::move(index).value());
  }
  tools::ExportOptions o;
  o.indexes = indexes;
  auto report = tools::ExportCaptures(out->db, list, o);
  ASSERT_TRUE(report.ok()) << report.status().message();
}

TEST(ExportFile, IsAValidDatabaseWithAndWithoutIndexes) {
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
    // Nothing of the bulk load stays with the file: a reader gets SQLite's defaults.
    EXPECT_EQ(QueryRows(db, "PRAGMA journal_mode"), (Rows{{"delete"}}));
    EXPECT_EQ(QueryRows(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'index'"),
              (Rows{{std::to_string(indexes ? tools::sqlite::Indexes().size() : 0)}}));
    uint64_t rows = 0;
    for (const auto& t : tools::sqlite::Tables()) {
      rows += std::stoull(QueryRows(db, "SELECT count(*) FROM " + std::string(t.name))[0][0]);
    }
    EXPECT_EQ(rows, report->rows);
    sqlite3_close(db);
  }
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"with.sqlite", "without.sqlite"})) << "no temporary left beside them";
}

// The documented queries read the indexes (the plan names them) and answer
// as they do without any index.
TEST(ExportFile, TheExampleQueriesUseTheIndexesAndAnswerTheSame) {
  const std::map<std::string, std::set<std::string>> uses = {
      {"top_kernels_per_step", {}},
      {"nccl_time_per_rank", {"kernels_by_name"}},
      {"idle_gaps_per_stream", {"kernels_by_stream", "memcpys_by_stream", "memsets_by_stream"}},
      {"kernels_under_range", {"strings_by_value", "stacks_by_name", "stacks_by_parent", "kernels_by_stack"}},
      {"kernels_per_range_instance", {"kernels_by_launch"}},
  };
  const std::vector<std::string> paths = {Fixture("allreduce-0"), Fixture("allreduce-1"), Fixture("torch_train")};
  Exported with, without;
  ExportInto(&with, paths, true);
  ExportInto(&without, paths, false);
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

// Makes capture 1's join run ahead of capture 0's: capture 0 starts its
// first window only once capture 1 has handed over its facts and its first
// window (it is about to start its second). With ids in the order batches
// finish, capture 1's process and windows would come first.
class Capture1First {
 public:
  void OnWindow(size_t capture, size_t window) {
    std::unique_lock lock(mu_);
    if (capture == 1 && window >= 1) {
      ahead_ = true;
      cv_.notify_all();
    } else if (capture == 0 && window == 0) {
      // A guard against a hang, never a timing condition: capture 1's
      // worker runs beside this one (jobs = 2).
      EXPECT_TRUE(cv_.wait_for(lock, std::chrono::minutes(2), [&] { return ahead_; }))
          << "capture 1 never reached its second window";
    }
  }
  bool ahead() const { return ahead_; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool ahead_ = false;
};

std::string ExportBytes(const std::string& out, int jobs, Capture1First* order) {
  tools::ExportOptions o;
  o.build.window = "nvtx:ProfilerStep#\\d+";
  o.jobs = jobs;
  if (order != nullptr) o.on_window = [order](size_t c, size_t w, size_t) { order->OnWindow(c, w); };
  auto report = tools::ExportToFile({Fixture("allreduce-0"), Fixture("allreduce-1")}, out, o);
  EXPECT_TRUE(report.ok()) << report.status().message();
  return ReadFile(out);
}

// issue 43: two ranks exported with step windows gave a different file each
// run (window and process ids followed the order the joins finished in).
TEST(ExportFile, TheSameBytesRunToRunAndAtAnyParallel) {
  TempDir dir;
  const std::string one = ExportBytes(dir.File("one.sqlite"), 1, nullptr);
  const std::string again = ExportBytes(dir.File("again.sqlite"), 1, nullptr);
  const std::string two = ExportBytes(dir.File("two.sqlite"), 2, nullptr);
  Capture1First order;
  const std::string reversed = ExportBytes(dir.File("reversed.sqlite"), 2, &order);
  EXPECT_TRUE(order.ahead());
  ASSERT_GT(one.size(), 16384u);
  EXPECT_TRUE(one == again) << "two runs at --parallel 1";
  EXPECT_TRUE(one == two) << "--parallel 1 and 2";
  EXPECT_TRUE(one == reversed) << "capture 1 joined first";

  // The documented order: capture order on the command line, then time.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(dir.File("reversed.sqlite").c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  EXPECT_EQ(QueryRows(db, "SELECT id, rank FROM processes ORDER BY id"), (Rows{{"1", "0"}, {"2", "1"}}));
  EXPECT_EQ(QueryRows(db, "SELECT COUNT(*) FROM windows a JOIN windows b ON a.id < b.id WHERE a.process > b.process "
                          "OR (a.process = b.process AND a.start_ns > b.start_ns)"),
            (Rows{{"0"}}));
  EXPECT_EQ(QueryRows(db, "SELECT COUNT(*) FROM kernels a JOIN kernels b ON b.id = a.id + 1 "
                          "WHERE a.process > b.process OR (a.process = b.process AND a.window > b.window)"),
            (Rows{{"0"}}));
  sqlite3_close(db);
}


// A window's rows go to the writer in batches of about ExportOptions::
// batch_bytes (window_rows.h); refs from a later batch (a kernel's launch,
// a range's parent, every row's window) count from the window's first row.
// A bound of one byte hands over nearly every row on its own: the database
// must hold the same rows, ids and refs as with the default bound.
struct BatchedExport {
  Exported db;
  tools::ExportReport report;
};

void ExportBatched(BatchedExport* out, const std::vector<std::string>& paths, const std::string& window, int jobs,
                   size_t batch_bytes) {
  ASSERT_EQ(sqlite3_open(":memory:", &out->db.db), SQLITE_OK);
  std::vector<const builder::CaptureIndex*> list;
  for (const std::string& p : paths) {
    auto index = builder::CaptureIndex::Open(p);
    ASSERT_TRUE(index.ok()) << index.status().message();
    list.push_back(index->get());
    out->db.indexes.push_back(std::move(index).value());
  }
  tools::ExportOptions o;
  o.build.window = window;
  o.jobs = jobs;
  o.batch_bytes = batch_bytes;
  auto report = tools::ExportCaptures(out->db.db, list, o);
  ASSERT_TRUE(report.ok()) << report.status().message();
  out->report = *report;
}

int64_t Count(sqlite3* db, const std::string& sql) { return std::stoll(QueryRows(db, sql).at(0).at(0)); }

TEST(ExportFile, RowsCutIntoTinyBatchesGiveTheSameDatabase) {
  struct Case {
    std::vector<std::string> captures;
    std::string window;
    int jobs;
  };
  std::vector<Case> cases;
  for (const std::string& name : FixtureNames()) cases.push_back({{Fixture(name)}, "all", 1});
  for (const char* name : {"capture_lanes", "nvtx_domains", "capture_nvtx", "sync_events", "graph_nodes"}) {
    cases.push_back({{Fixture(name)}, "all", 1});
  }
  cases.push_back({{Fixture("allreduce-0"), Fixture("allreduce-1")}, "nvtx:ProfilerStep#\\d+", 2});
  cases.push_back({{Fixture("torch_train"), Fixture("basics")}, "all", 2});
  int64_t launches = 0, parents = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.captures[0] + " (" + std::to_string(c.captures.size()) + " captures)");
    BatchedExport whole, tiny;
    ExportBatched(&whole, c.captures, c.window, c.jobs, 0);
    ExportBatched(&tiny, c.captures, c.window, c.jobs, 1);
    // With the default bound each window is one batch; with one byte, more.
    const uint64_t captures = c.captures.size();
    EXPECT_EQ(whole.report.batches, whole.report.windows + 2 * captures);
    EXPECT_GT(tiny.report.batches, 3 * (tiny.report.windows + 2 * captures));
    for (const tools::sqlite::TableDef& t : tools::sqlite::Tables()) {
      const std::string sql = "SELECT rowid, * FROM " + std::string(t.name) + " ORDER BY rowid";
      Rows a = QueryRows(whole.db.db, sql), b = QueryRows(tiny.db.db, sql);
      EXPECT_EQ(a.size(), b.size()) << t.name;
      EXPECT_TRUE(a == b) << t.name << ": the rows differ";
    }
    // Refs that point at a row of the same window that holds the referring
    // row as its columns say (the launch's times, the parent around its
    // child): counted by query, so a ref resolved against the wrong batch shows.
    sqlite3* db = tiny.db.db;
    const int64_t launched = Count(db, "SELECT COUNT(*) FROM kernels WHERE launch_id IS NOT NULL");
    EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM kernels k JOIN api_calls a ON a.id = k.launch_id "
                        "WHERE a.window = k.window AND a.start_ns = k.launch_start_ns AND a.end_ns = k.launch_end_ns"),
              launched);
    const int64_t nested = Count(db, "SELECT COUNT(*) FROM nvtx_ranges WHERE parent IS NOT NULL");
    EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM nvtx_ranges r JOIN nvtx_ranges p ON p.id = r.parent "
                        "WHERE p.window = r.window AND p.start_ns <= r.start_ns AND p.end_ns >= r.end_ns "
                        "AND p.depth + 1 = r.depth AND p.id < r.id"),
              nested);
    EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM nvtx_ranges r JOIN windows w ON w.id = r.window "
                        "WHERE w.process = r.process"),
              Count(db, "SELECT COUNT(*) FROM nvtx_ranges"));
    launches += launched;
    parents += nested;
  }
  // The fixtures have both kinds of refs, so the checks above checked something.
  EXPECT_GT(launches, 1000);
  EXPECT_GT(parents, 100);
}


// The join streams a process's CPU threads before its GPUs (a CPU process
// sorts by its pid, a GPU at 5000000 and up), so an op's launching call
// has come when the op comes. A pid above that puts the GPU first: each
// op's launch cells wait for the call, and the batch with them.
TEST(ExportFile, OpsStreamedBeforeTheirLaunchingCallsGetThem) {
  TempDir dir;
  const std::string path = dir.File("gpu_first.gpucap");
  constexpr uint32_t kPid = 6'000'000, kTid = 6'000'001;
  constexpr int kLaunches = 300;
  {
    format::SessionInfo session = builder::testing::DefaultSession();
    session.pid = kPid;
    auto made = builder::testing::SyntheticCapture::Create(path, session, {builder::testing::H200(0)});
    ASSERT_TRUE(made.ok()) << made.status().message();
    builder::testing::SyntheticCapture& c = **made;
    const uint64_t t0 = session.start_cupti_ns;
    format::ClockSample clock;
    clock.kind = format::ClockKind::kStart;
    clock.cupti_ns = t0;
    clock.realtime_ns = static_cast<int64_t>(t0);
    clock.monotonic_ns = 1000;
    ASSERT_TRUE(c.Message(clock).ok());
    ASSERT_TRUE(c.Message(format::ThreadInfo{kPid, 1, kTid, "main"}).ok());
    ASSERT_TRUE(c.String(0x1000, "void k(int)").ok());
    for (uint32_t i = 0; i < kLaunches; ++i) {
      builder::testing::ApiRecord a;
      a.start = t0 + 10000 * (i + 1);
      a.end = a.start + 2000;
      a.pid = kPid;
      a.tid = kTid;
      a.correlation = i + 1;
      c.Api(a);
      builder::testing::KernelRecord k;
      k.start = a.start + 5000;
      k.end = k.start + 3000;
      k.correlation = i + 1;
      k.name_pointer = 0x1000;
      c.Kernel(k);
    }
    ASSERT_TRUE(c.Close().ok());
  }
  BatchedExport whole, tiny;
  ExportBatched(&whole, {path}, "all", 1, 0);
  ExportBatched(&tiny, {path}, "all", 1, 1);
  for (const tools::sqlite::TableDef& t : tools::sqlite::Tables()) {
    const std::string sql = "SELECT rowid, * FROM " + std::string(t.name) + " ORDER BY rowid";
    EXPECT_TRUE(QueryRows(whole.db.db, sql) == QueryRows(tiny.db.db, sql)) << t.name << ": the rows differ";
  }
  for (sqlite3* db : {whole.db.db, tiny.db.db}) {
    EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM kernels"), kLaunches);
    // Each kernel's launch is the call of its correlation id, on the thread that made it.
    EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM kernels k JOIN api_calls a ON a.id = k.launch_id "
                        "WHERE a.correlation = k.correlation AND k.launch_tid = " + std::to_string(kTid) +
                        " AND k.launch_start_ns = a.start_ns AND k.launch_end_ns = a.end_ns"),
              kLaunches);
  }
  // Held until the calls came: fewer batches than rows.
  EXPECT_LT(tiny.report.batches, 2u * kLaunches);
}

}  // namespace
}  // namespace gpucap::testing
