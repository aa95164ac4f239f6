// gpucap export: the database, read through the SQLite C API, against the
// Chrome JSON build of the same windows on every fixture (same ops, times,
// names, annotations, launches); several ranks in one database; the schema
// held to docs/sqlite.md and the page's example queries run and checked;
// bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "../support/temp_dir.h"
#include "export_test_util.h"
#include "gpucap/tools/export/schema.h"
#include "scene.h"

namespace gpucap::testing {
namespace {

namespace bt = builder::testing;

// An optional JSON arg as the database writes it: absent or -1 ("unknown")
// is NULL; `zero_is_null` for CUPTI values where 0 means "not recorded".
std::string Opt(const std::string& v, bool zero_is_null = false) {
  return v.empty() || v == "-1" || (zero_is_null && v == "0") ? "NULL" : v;
}

// The device and stream cells of a GPU span, read from the track the trace
// draws it on: "stream <id>", its overlap lanes "stream <id> (overlap N)"
// and a graph's capture-stream lane "stream <id> (graph)" all name their
// stream; any other track gives none.
std::string StreamCells(const Trace& t, const Json& x) {
  std::string track = t.ThreadName(std::stoull(x["pid"].text), std::stoull(x["tid"].text));
  if (!track.starts_with("stream ")) return "NULL|NULL";
  std::string id = track.substr(7, track.find(' ', 7) - 7);
  return x["pid"].text + "|" + id;
}

// One line per op or range a window's JSON trace shows, in a form the
// database's rows are written in too.
std::multiset<std::string> JsonRows(const Trace& t) {
  std::multiset<std::string> out;
  for (const Json* e : t.events) {
    const Json& x = *e;
    const std::string& cat = x["cat"].text;
    if (cat == "cuda_event" && (x["ph"].text == "X" || x["ph"].text == "i")) {
      out.insert(cat + "|" + std::to_string(AbsoluteTs(t, x)) + "|" + x["pid"].text + "|" + x["tid"].text + "|" +
                 (x["args"].has("event_id") ? ArgText(x, "event_id") : ArgText(x, "cuda_event_id")) + "|" +
                 Opt(ArgText(x, "correlation"), true));
    }
    if (x["ph"].text != "X") continue;
    int64_t ts = AbsoluteTs(t, x), end = ts + Nanos(x["dur"]);
    std::string common = x["name"].text + "|" + std::to_string(ts) + "|" + std::to_string(end);
    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      out.insert(cat + "|" + common + "|" + ArgText(x, "device") + ArgText(x, "inDevice") + "|" +
                 ArgText(x, "stream") + "|" + ArgText(x, "correlation") + "|" + ArgText(x, "annotation stack") +
                 "|" + Opt(ArgText(x, "capture stream")));
    } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
      out.insert(cat + "|" + common + "|" + x["tid"].text + "|" + ArgText(x, "correlation"));
    } else if (cat == "user_annotation" || cat == "overhead") {
      out.insert(cat + "|" + common);
    } else if (cat == "gpu_user_annotation") {
      out.insert(cat + "|" + common + "|" + StreamCells(t, x) + "|" + Opt(ArgText(x, "External id"), true));
    } else if (cat == "cuda_sync") {
      out.insert(cat + "|" + common + "|" + ArgText(x, "device") + "|" + Opt(ArgText(x, "stream")) + "|" +
                 ArgText(x, "correlation") + "|" + Opt(ArgText(x, "wait_on_stream")) + "|" +
                 Opt(ArgText(x, "wait_on_cuda_event_id")) + "|" +
                 Opt(ArgText(x, "wait_on_cuda_event_record_corr_id")));
    }
    if (cat == "kernel") out.insert("queued|" + common + "|" + Opt(ArgText(x, "queued"), true));
  }
  return out;
}

// The same lines from the database, for window `window` (windows.id).
std::multiset<std::string> DbRows(const ExportDb& db, int64_t window) {
  std::multiset<std::string> out;
  std::string w = std::to_string(window);
  // A stack's names, outermost first.
  std::map<std::string, std::string> stacks;
  for (const auto& r : db.Rows("WITH RECURSIVE path(id, text) AS (SELECT a.id, s.value FROM annotation_stacks a "
                               "JOIN strings s ON s.id = a.name WHERE a.parent IS NULL UNION ALL SELECT a.id, "
                               "p.text || '/' || s.value FROM annotation_stacks a JOIN path p ON a.parent = p.id "
                               "JOIN strings s ON s.id = a.name) SELECT id, text FROM path")) {
    stacks[r[0]] = r[1];
  }
  auto ops = [&](const char* table, const char* cat) {
    for (const auto& r : db.Rows(std::string("SELECT s.value, t.start_ns, t.end_ns, t.device, t.stream, "
                                             "t.correlation, t.annotation_stack, t.capture_stream FROM ") +
                                 table + " t JOIN strings s ON s.id = t.name WHERE t.window = " + w)) {
      out.insert(std::string(cat) + "|" + r[0] + "|" + r[1] + "|" + r[2] + "|" + r[3] + "|" + r[4] + "|" + r[5] +
                 "|" + (r[6] == "NULL" ? "" : stacks[r[6]]) + "|" + r[7]);
    }
  };
  ops("kernels", "kernel");
  ops("memcpys", "gpu_memcpy");
  ops("memsets", "gpu_memset");
  for (const auto& r : db.Rows("SELECT a.domain, s.value, a.start_ns, a.end_ns, a.tid, a.correlation FROM api_calls a "
                               "JOIN strings s ON s.id = a.name WHERE a.window = " + w)) {
    out.insert("cuda_" + r[0] + "|" + r[1] + "|" + r[2] + "|" + r[3] + "|" + r[4] + "|" + r[5]);
  }
  for (const auto& r : db.Rows("SELECT s.value, r.start_ns, r.end_ns FROM nvtx_ranges r JOIN strings s ON "
                               "s.id = r.name WHERE r.kind != 'mark' AND r.window = " + w)) {
    out.insert("user_annotation|" + r[0] + "|" + r[1] + "|" + r[2]);
  }
  auto rows = [&](const std::string& prefix, const std::string& sql) {
    for (const auto& r : db.Rows(sql + w)) {
      std::string line = prefix;
      for (const std::string& cell : r) line += "|" + cell;
      out.insert(line);
    }
  };
  rows("overhead", "SELECT s.value, o.start_ns, o.end_ns FROM overheads o JOIN strings s ON s.id = o.name "
                   "WHERE o.window = ");
  rows("gpu_user_annotation", "SELECT s.value, g.start_ns, g.end_ns, g.device, g.stream, g.external_id FROM "
                              "gpu_annotations g JOIN strings s ON s.id = g.name WHERE g.window = ");
  rows("cuda_sync", "SELECT s.value, y.start_ns, y.end_ns, y.device, y.stream, y.correlation, y.wait_stream, "
                    "y.wait_event_id, y.wait_event_correlation FROM syncs y JOIN strings s ON s.id = y.name "
                    "WHERE y.window = ");
  rows("cuda_event", "SELECT ts_ns, device, stream, cuda_event_id, correlation FROM cuda_events WHERE window = ");
  rows("queued", "SELECT s.value, k.start_ns, k.end_ns, k.queued_us FROM kernels k JOIN strings s ON s.id = k.name "
                 "WHERE k.window = ");
  return out;
}

void ExpectSameAsJson(const std::string& path, const std::string& window) {
  SCOPED_TRACE(path + " --window " + window);
  builder::BuildOptions o;
  o.window = window;
  // The export's view of the ranges (sqlite_export.cc): as recorded.
  o.join.torch_view = false;
  o.join.gpu_ranges = builder::GpuRanges::kAll;
  std::vector<Trace> traces = BuildTraces(path, o);
  ExportDb db({path}, window);
  ASSERT_EQ(db.Int("SELECT COUNT(*) FROM windows"), static_cast<int64_t>(traces.size()));
  size_t compared = 0;
  for (size_t i = 0; i < traces.size(); ++i) {
    SCOPED_TRACE("window " + std::to_string(i));
    int64_t id = db.Int("SELECT id FROM windows WHERE window_index = " + std::to_string(i));
    std::multiset<std::string> json = JsonRows(traces[i]), rows = DbRows(db, id);
    compared += json.size();
    // Differences, a few, rather than two long lists.
    std::vector<std::string> only_json, only_db;
    std::set_difference(json.begin(), json.end(), rows.begin(), rows.end(), std::back_inserter(only_json));
    std::set_difference(rows.begin(), rows.end(), json.begin(), json.end(), std::back_inserter(only_db));
    EXPECT_TRUE(only_json.empty() && only_db.empty())
        << only_json.size() << " rows only in the JSON, first: " << (only_json.empty() ? "" : only_json[0]) << "\n"
        << only_db.size() << " only in the database, first: " << (only_db.empty() ? "" : only_db[0]);

    // Launches: every op the trace ties to a call by an ac2g flow has that
    // call as launch_id, with its thread and span.
    std::multiset<std::string> json_launch, db_launch;
    for (const JsonOp& op : JsonOps(traces[i], false)) {
      if (!op.launched) continue;
      json_launch.insert((*op.e)["name"].text + "|" + std::to_string(op.start) + "|" + op.launch_name + "|" +
                         std::to_string(op.launch_tid) + "|" + std::to_string(op.launch_start) + "|" +
                         std::to_string(op.launch_start + op.launch_dur));
    }
    for (const char* table : {"kernels", "memcpys", "memsets"}) {
      for (const auto& r : db.Rows(std::string("SELECT s.value, t.start_ns, sa.value, t.launch_tid, "
                                               "t.launch_start_ns, t.launch_end_ns, a.tid, a.start_ns, a.end_ns, "
                                               "a.correlation = t.correlation FROM ") +
                                   table + " t JOIN strings s ON s.id = t.name JOIN api_calls a ON a.id = "
                                   "t.launch_id JOIN strings sa ON sa.id = a.name WHERE t.window = " +
                                   std::to_string(id))) {
        db_launch.insert(r[0] + "|" + r[1] + "|" + r[2] + "|" + r[3] + "|" + r[4] + "|" + r[5]);
        EXPECT_EQ(r[3] + r[4] + r[5], r[6] + r[7] + r[8]) << "launch columns are the launching call's";
        EXPECT_EQ(r[9], "1") << "an op and its launch share the correlation id";
      }
    }
    EXPECT_EQ(json_launch, db_launch);
  }
  EXPECT_GT(compared, 0u);
}

TEST(Export, MatchesTheJsonBuildOnEveryFixture) {
  for (const std::string& name : FixtureNames()) ExpectSameAsJson(Fixture(name), "all");
}

TEST(Export, MatchesTheJsonBuildPerWindow) {
  ExpectSameAsJson(Fixture("torch_train"), "nvtx:ProfilerStep#\\d+");
  ExpectSameAsJson(Fixture("allreduce-0"), "nvtx:ProfilerStep#\\d+");
  ExpectSameAsJson(Fixture("basics"), "every:1ms");
}

// The JSON comparison above holds these tables to the trace; this holds the
// fixtures to having some, so that comparison is not of two empty sets.
TEST(Export, GpuAnnotationsOverheadsAndEventWaitsAreExported) {
  ExportDb graphs({Fixture("graphs_nvtx")});
  EXPECT_GT(graphs.Int("SELECT COUNT(*) FROM gpu_annotations WHERE device IS NOT NULL AND stream IS NOT NULL "
                       "AND external_id IS NOT NULL"), 0);
  EXPECT_GT(graphs.Int("SELECT COUNT(*) FROM overheads o JOIN strings s ON s.id = o.name WHERE o.end_ns >= "
                       "o.start_ns AND s.value != ''"), 0);
  ExportDb sync({Fixture("sync_events")});
  // A stream's wait names the event record's call: cudaEventRecord's correlation.
  EXPECT_GT(sync.Int("SELECT COUNT(*) FROM syncs y JOIN api_calls a ON a.correlation = y.wait_event_correlation "
                     "JOIN strings s ON s.id = a.name WHERE s.value LIKE 'cudaEventRecord%' AND y.wait_stream "
                     "IS NOT NULL"), 0);
}

// What the fixtures lack (their CUPTI gave no event device timestamps, no
// queued times, and none has a start/end range), in a synthetic capture: a
// kernel with a queued time, a CUDA event record waited on by a stream, a
// CUPTI overhead and a start/end range started on one thread and ended on
// another. Compared with its JSON build like the fixtures, and the range's
// thread with the capture's start event.
TEST(Export, EventRecordsQueuedTimesAndStartEndThreadsMatchTheJsonBuild) {
  Scene x;
  Scene::Ok(x.c().String(0x1000, "_Z6kernelv"));
  bt::ApiRecord a;
  a.cbid = 211;  // cudaLaunchKernel
  a.start = kT0 + 1000, a.end = kT0 + 1500, a.correlation = 1, a.tid = 4243;
  x.c().Api(a);
  bt::KernelRecord k;
  k.start = kT0 + 3000, k.end = kT0 + 4000, k.correlation = 1, k.name_pointer = 0x1000, k.queued = kT0 + 1400;
  x.c().Kernel(k);
  bt::CudaEventRecord e;
  e.correlation = 2, e.event_id = 9, e.device_timestamp = kT0 + 4100, e.event_sync_id = 55, e.stream = 7;
  x.c().CudaEvent(e);
  bt::SyncRecord y;
  y.type = 2;  // a stream waits on the event
  y.start = kT0 + 5000, y.end = kT0 + 5200, y.correlation = 3, y.stream = 8, y.cuda_event_id = 9, y.event_sync_id = 55;
  x.c().Sync(y);
  bt::OverheadRecord o;
  o.start = kT0 + 6000, o.end = kT0 + 6500;
  x.c().Overhead(o);
  Scene::Ok(x.c().StartRange(5, 4243, kT0 + 2000, "async_io"));  // started on 4243
  Scene::Ok(x.c().EndRange(5, 4244, kT0 + 9000));                 // ended on 4244
  const std::string path = x.Path();
  ExpectSameAsJson(path, "all");

  ExportDb db({path});
  EXPECT_EQ(db.Int("SELECT COUNT(*) FROM cuda_events WHERE cuda_event_id = 9 AND stream = 7"), 1);
  EXPECT_EQ(db.Int("SELECT COUNT(*) FROM syncs WHERE wait_event_id = 9 AND wait_stream = 7 AND "
                   "wait_event_correlation = 2"), 1);
  EXPECT_EQ(db.Int("SELECT COUNT(*) FROM kernels WHERE queued_us IS NOT NULL"), 1);
  EXPECT_EQ(db.Int("SELECT COUNT(*) FROM overheads"), 1);
  auto index = builder::CaptureIndex::Open(path);
  ASSERT_TRUE(index.ok());
  std::multiset<std::string> want, got;
  for (const format::RangeEvent& r : (*index)->capture().ranges) {
    if (r.kind == format::RangeKind::kStart) want.insert(r.name + "|" + std::to_string(r.os_tid));
  }
  for (const auto& r : db.Rows("SELECT s.value, r.tid FROM nvtx_ranges r JOIN strings s ON s.id = r.name "
                               "WHERE r.kind = 'start_end'")) {
    got.insert(r[0] + "|" + r[1]);
  }
  EXPECT_EQ(want, std::multiset<std::string>{"async_io|4243"});
  EXPECT_EQ(want, got);
}

TEST(Export, KernelColumnsCarryTheLaunchShapeAndGraphIds) {
  ExportDb db({Fixture("basics")});
  // fixtures/basics.expect.json: tiled_sum<128> and <256> with their block
  // sizes and static shared memory (512 and 1024 bytes), dynamic_smem with
  // 2048 bytes of dynamic shared memory; the base name drops the template
  // arguments (nsys's shortName).
  auto shapes = db.Rows("SELECT DISTINCT s.value, b.value, block_x, block_y, block_z, static_shared_memory, "
                        "dynamic_shared_memory, shared_memory FROM kernels k JOIN strings s ON s.id = k.name "
                        "JOIN strings b ON b.id = k.short_name WHERE b.value IN ('tiled_sum', 'dynamic_smem') "
                        "ORDER BY s.value");
  ASSERT_EQ(shapes.size(), 3u);
  EXPECT_EQ(shapes[0][1], "dynamic_smem");
  EXPECT_EQ(std::vector<std::string>(shapes[0].begin() + 2, shapes[0].end()),
            (std::vector<std::string>{"512", "1", "1", "0", "2048", "2048"}));
  EXPECT_EQ(shapes[1][1], "tiled_sum");
  EXPECT_NE(shapes[1][0].find("tiled_sum<128>"), std::string::npos) << shapes[1][0];
  EXPECT_EQ(std::vector<std::string>(shapes[1].begin() + 2, shapes[1].end()),
            (std::vector<std::string>{"128", "1", "1", "512", "0", "512"}));
  EXPECT_EQ(shapes[2][1], "tiled_sum");
  EXPECT_NE(shapes[2][0].find("tiled_sum<256>"), std::string::npos) << shapes[2][0];
  EXPECT_EQ(std::vector<std::string>(shapes[2].begin() + 2, shapes[2].end()),
            (std::vector<std::string>{"256", "1", "1", "1024", "0", "1024"}));
  EXPECT_EQ(db.Int("SELECT COUNT(*) FROM kernels k JOIN strings m ON m.id = k.mangled_name WHERE m.value LIKE '_Z%'"),
            101);
  EXPECT_EQ(db.Int("SELECT COUNT(*) FROM kernels WHERE grid_x IS NULL OR registers_per_thread IS NULL"), 0);

  ExportDb graphs({Fixture("graphs_nvtx")});
  // The built graph A->{B,C}->D replayed 7 times: 28 kernels with their
  // clone's node id and the capture-time node, which graph_nodes knows.
  EXPECT_EQ(graphs.Int("SELECT COUNT(*) FROM kernels k JOIN graph_nodes n ON n.process = k.process AND "
                       "n.node_id = k.capture_node_id AND n.cloned_from IS NULL JOIN strings s ON s.id = k.short_name "
                       "WHERE s.value IN ('node_a', 'node_b', 'node_c', 'node_d')"),
            28);
  EXPECT_EQ(graphs.Int("SELECT COUNT(*) FROM kernels WHERE graph_node_id IS NOT NULL AND capture_node_id IS NULL"), 0);
  EXPECT_GE(graphs.Int("SELECT COUNT(*) FROM graph_edges"), 4) << "A->B, A->C, B->D, C->D";
  EXPECT_GE(graphs.Int("SELECT COUNT(*) FROM graph_execs"), 1);
  // Nesting: every inner range is a child of its thread's outer range.
  auto inner = graphs.Rows("SELECT r.depth, p.tid = r.tid, ps.value FROM nvtx_ranges r JOIN strings s ON s.id = "
                           "r.name JOIN nvtx_ranges p ON p.id = r.parent JOIN strings ps ON ps.id = p.name "
                           "WHERE s.value = 'inner'");
  ASSERT_EQ(inner.size(), 6u);
  for (const auto& r : inner) {
    EXPECT_EQ(r[0], "1");
    EXPECT_EQ(r[1], "1");
    EXPECT_TRUE(r[2] == "thread0/outer" || r[2] == "thread1/outer") << r[2];
  }
  EXPECT_EQ(graphs.Int("SELECT COUNT(*) FROM nvtx_ranges WHERE depth = 0 AND parent IS NOT NULL"), 0);
}

TEST(Export, MetaHoldsTheSchemaVersionAndTheCaptureFacts) {
  ExportDb db({Fixture("counters")});
  EXPECT_EQ(db.Rows("SELECT value FROM meta WHERE process IS NULL AND key = 'schema_version'")[0][0],
            std::to_string(tools::sqlite::kSchemaVersionMajor) + "." +
                std::to_string(tools::sqlite::kSchemaVersionMinor));
  EXPECT_EQ(db.Rows("SELECT value FROM meta WHERE key = 'clock'")[0][0], "CLOCK_REALTIME");
  for (const char* key : {"cupti_dropped_records", "bytes_dropped", "damaged_regions", "frames_missing",
                          "corrupt_chunks", "clean_shutdown"}) {
    EXPECT_EQ(db.Int(std::string("SELECT COUNT(*) FROM meta WHERE process = 1 AND key = '") + key + "'"), 1) << key;
  }
  EXPECT_EQ(db.Int("SELECT value FROM meta WHERE key = 'clean_shutdown'"), 1);
  EXPECT_GT(db.Int("SELECT COUNT(*) FROM counters"), 10) << "NVML and PM samples";
  EXPECT_GT(db.Int("SELECT COUNT(*) FROM devices WHERE name LIKE '%H200%'"), 0);
  EXPECT_GT(db.Int("SELECT COUNT(*) FROM threads"), 0);
  EXPECT_EQ(db.Int("SELECT COUNT(*) FROM window_counts WHERE name = 'cupti dropped records'"), 1);
}

TEST(Export, DamagedCaptureIsExportedWithItsDamageCounted) {
  TempDir dir;
  std::string cut = dir.File("cut.gpucap");
  WriteCutCopy(Fixture("torch_train"), cut, 0.8);
  ExpectSameAsJson(cut, "all");
  ExportDb db({cut});
  EXPECT_GT(db.Int("SELECT COUNT(*) FROM kernels"), 0) << "what came before the cut";
  EXPECT_EQ(db.Int("SELECT value FROM meta WHERE key = 'clean_shutdown'"), 0);
  EXPECT_GT(db.Int("SELECT value FROM meta WHERE key = 'tail_bytes_lost'"), 0);
  EXPECT_GT(db.Int("SELECT COUNT(*) FROM meta WHERE key = 'warning'"), 0);
}

// The connection outlives the export (stats --report queries it): the load's
// transaction is committed, nothing of the writer is left in it, and it takes
// writes of its own.
TEST(Export, LeavesTheConnectionCommittedAndWritable) {
  ExportDb db({Fixture("basics")});
  EXPECT_GT(db.Int("SELECT COUNT(*) FROM kernels"), 0);
  EXPECT_NE(sqlite3_get_autocommit(db.db()), 0) << "no transaction left open";
  EXPECT_EQ(db.Int("SELECT COUNT(*) FROM temp.sqlite_schema"), 0);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db.db(), "BEGIN; CREATE TABLE mine (x); INSERT INTO mine VALUES (1); COMMIT", nullptr,
                         nullptr, &error),
            SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  EXPECT_EQ(db.Int("SELECT x FROM mine"), 1);
}

TEST(Export, RanksOfAJobGoIntoOneDatabaseInParallel) {
  std::vector<std::string> ranks = {Fixture("allreduce-0"), Fixture("allreduce-1")};
  ExportDb both(ranks, "nvtx:ProfilerStep#\\d+", 2);
  EXPECT_EQ(both.Rows("SELECT rank FROM processes ORDER BY rank"),
            (std::vector<std::vector<std::string>>{{"0"}, {"1"}}));
  for (size_t r = 0; r < ranks.size(); ++r) {
    ExportDb one({ranks[r]}, "nvtx:ProfilerStep#\\d+");
    std::string rank = std::to_string(r);
    for (const char* table : {"kernels", "memcpys", "memsets", "api_calls", "nvtx_ranges", "windows", "threads"}) {
      EXPECT_EQ(both.Int(std::string("SELECT COUNT(*) FROM ") + table + " WHERE rank = " + rank),
                one.Int(std::string("SELECT COUNT(*) FROM ") + table))
          << table << " rank " << rank;
    }
    // The same kernels, by name and time, through each database's strings.
    const char* kernels = "SELECT s.value, k.start_ns, k.dur_ns FROM kernels k JOIN strings s ON s.id = k.name ";
    EXPECT_EQ(both.Rows(std::string(kernels) + "WHERE k.rank = " + rank + " ORDER BY 2, 1"),
              one.Rows(std::string(kernels) + "ORDER BY 2, 1"));
  }
  // Every row names its capture's process and window of its own rank.
  EXPECT_EQ(both.Int("SELECT COUNT(*) FROM kernels k JOIN processes p ON p.id = k.process JOIN windows w ON "
                     "w.id = k.window WHERE p.rank != k.rank OR w.rank != k.rank"),
            0);
  EXPECT_EQ(both.Int("SELECT COUNT(*) - COUNT(DISTINCT value) FROM strings"), 0) << "a text is stored once";
  EXPECT_EQ(both.Int("SELECT COUNT(*) FROM kernels WHERE launch_id IS NOT NULL AND launch_id NOT IN "
                     "(SELECT id FROM api_calls WHERE process = kernels.process)"),
            0);
}

// docs/sqlite.md: every table and column the schema has.
TEST(Export, EveryTableAndColumnIsDocumented) {
  std::string docs = Docs();
  ASSERT_FALSE(docs.empty());
  for (const tools::sqlite::TableDef& t : tools::sqlite::Tables()) {
    size_t at = docs.find("\n### " + std::string(t.name) + "\n");
    ASSERT_NE(at, std::string::npos) << t.name << " has no section";
    size_t end = docs.find("\n#", at + 5);
    std::string section = docs.substr(at, end - at);
    // The first cell of each table row, split at commas.
    std::set<std::string> named;
    std::istringstream lines(section);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("| ", 0) != 0) continue;
      std::string cell = line.substr(2, line.find(" |", 1) - 2);
      std::istringstream parts(cell);
      for (std::string p; std::getline(parts, p, ',');) named.insert(p.substr(p.find_first_not_of(' ')));
    }
    if (t.has_id) {
      EXPECT_TRUE(named.count("id")) << t.name << ".id";
    }
    for (const tools::sqlite::ColumnDef& c : t.columns) {
      EXPECT_TRUE(named.count(std::string(c.name))) << t.name << "." << c.name << " is not documented";
    }
    if (!t.generated.empty()) {
      EXPECT_TRUE(named.count("dur_ns")) << t.name << ".dur_ns";
    }
  }
}

TEST(ExportDocs, TopKernelsPerStep) {
  std::string sql = DocQueries().at("top_kernels_per_step");
  builder::BuildOptions o;
  o.window = "nvtx:ProfilerStep#\\d+";
  std::vector<Trace> traces = BuildTraces(Fixture("torch_train"), o);
  ExportDb db({Fixture("torch_train")}, o.window);
  auto rows = db.Rows(sql);
  ASSERT_FALSE(rows.empty());
  // Independently: per window, kernel time by base name; the query's first
  // place must be the largest.
  size_t steps = 0;
  for (const Trace& t : traces) {
    std::map<std::string, int64_t> total;
    for (const Json* e : t.Events("X", "kernel")) total[BaseName((*e)["name"].text)] += Nanos((*e)["dur"]);
    if (total.empty()) continue;
    auto best = std::max_element(total.begin(), total.end(), [](auto& a, auto& b) {
      return a.second != b.second ? a.second < b.second : a.first > b.first;
    });
    std::string label = t.root["gpucap"]["window"]["label"].text;
    auto row = std::find_if(rows.begin(), rows.end(), [&](auto& r) { return r[1] == label && r[2] == "1"; });
    if (label.empty()) continue;
    ASSERT_NE(row, rows.end()) << label;
    EXPECT_EQ((*row)[3], best->first) << label;
    EXPECT_EQ((*row)[5], std::to_string(best->second)) << label;
    steps++;
  }
  EXPECT_EQ(steps, traces.size());
  for (const auto& r : rows) EXPECT_LE(std::stoi(r[2]), 5);
}

TEST(ExportDocs, NcclTimePerRank) {
  std::string sql = DocQueries().at("nccl_time_per_rank");
  ExportDb db({Fixture("allreduce-0"), Fixture("allreduce-1")});
  auto rows = db.Rows(sql);
  ASSERT_EQ(rows.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    Trace t = BuildOne(Fixture("allreduce-" + std::to_string(r)));
    int64_t n = 0, ns = 0;
    for (const Json* e : t.Events("X", "kernel")) {
      if ((*e)["name"].text.rfind("nccl", 0) != 0) continue;
      n++;
      ns += Nanos((*e)["dur"]);
    }
    EXPECT_GE(n, 4) << "4 all-reduces in steps per rank (fixtures/README.md)";
    EXPECT_EQ(rows[r], (std::vector<std::string>{std::to_string(r), std::to_string(n), std::to_string(ns)}));
  }
}

TEST(ExportDocs, IdleGapsPerStream) {
  std::string sql = DocQueries().at("idle_gaps_per_stream");
  ExportDb db({Fixture("basics")});
  auto rows = db.Rows(sql);
  Trace t = BuildOne(Fixture("basics"));
  // Independently: per GPU track (device, stream), ops by start.
  std::map<std::pair<uint64_t, uint64_t>, std::vector<std::pair<int64_t, int64_t>>> spans;
  for (const JsonOp& op : JsonOps(t, false)) {
    spans[{(*op.e)["pid"].u(), std::stoull(ArgText(*op.e, "stream"))}].push_back({op.start, op.end});
  }
  std::map<std::string, int64_t> idle;
  for (auto& [key, v] : spans) {
    std::sort(v.begin(), v.end());
    int64_t busy = v[0].second, gaps = 0;
    for (size_t i = 1; i < v.size(); ++i) {
      if (v[i].first > busy) {
        idle[std::to_string(key.first) + "/" + std::to_string(key.second)] += v[i].first - busy;
        gaps++;
      }
      busy = std::max(busy, v[i].second);
    }
  }
  ASSERT_EQ(rows.size(), idle.size());
  for (const auto& r : rows) EXPECT_EQ(std::to_string(idle[r[1] + "/" + r[2]]), r[4]) << r[1] << "/" << r[2];
}

TEST(ExportDocs, KernelsUnderARange) {
  std::string sql = DocQueries().at("kernels_under_range");
  ExportDb db({Fixture("graphs_nvtx")});
  auto rows = db.Rows(sql);
  Trace t = BuildOne(Fixture("graphs_nvtx"));
  std::map<std::string, std::pair<int64_t, int64_t>> under;
  for (const Json* e : t.Events("X", "kernel")) {
    std::string stack = "/" + ArgText(*e, "annotation stack") + "/";
    if (stack.find("/layer1/") == std::string::npos) continue;
    auto& [n, ns] = under[BaseName((*e)["name"].text)];
    n++;
    ns += Nanos((*e)["dur"]);
  }
  // captured_1 and captured_2 were captured under capture_region/layer1
  // and replayed 4 times (fixtures/README.md).
  ASSERT_EQ(under.size(), 2u);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) {
    EXPECT_EQ(r[1], "4") << r[0];
    EXPECT_EQ(std::to_string(under[r[0]].first), r[1]) << r[0];
    EXPECT_EQ(std::to_string(under[r[0]].second), r[2]) << r[0];
  }
}

TEST(ExportDocs, KernelsPerRangeInstance) {
  std::string sql = DocQueries().at("kernels_per_range_instance");
  ExportDb db({Fixture("graphs_nvtx")});
  auto rows = db.Rows(sql);
  Trace t = BuildOne(Fixture("graphs_nvtx"));
  std::vector<JsonOp> ops = JsonOps(t, true);
  std::map<std::string, int64_t> json, sql_counts;
  for (const Json* r : t.Events("X", "user_annotation")) {
    int64_t start = AbsoluteTs(t, *r), end = start + Nanos((*r)["dur"]);
    for (const JsonOp& op : ops) {
      uint64_t thread = BaseThread(t, (*r)["pid"].u(), (*r)["tid"].u());
      if (op.launched && op.launch_tid == static_cast<int64_t>(thread) && op.launch_start >= start &&
          op.launch_start < end) {
        json[(*r)["name"].text]++;
      }
    }
  }
  for (const auto& r : rows) sql_counts[r[1]] += std::stoll(r[2]);
  EXPECT_EQ(sql_counts, json);
  EXPECT_EQ(sql_counts["inner"], 12) << "eager_inner, 6 per thread";
}

TEST(ExportDocs, EveryQueryOnThePageIsTested) {
  std::set<std::string> names;
  for (const auto& [name, sql] : DocQueries()) names.insert(name);
  EXPECT_EQ(names, (std::set<std::string>{"top_kernels_per_step", "nccl_time_per_rank", "idle_gaps_per_stream",
                                          "kernels_under_range", "kernels_per_range_instance"}));
}

TEST(ExportCli, WritesTheDatabaseAndReplacesItOnlyWhenDone) {
  TempDir dir;
  std::string out = dir.File("basics.sqlite");
  // Without -q (which silences the summary too): the summary line.
  CliRun run = Gpucap("export " + Fixture("basics") + " -o " + out);
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("101 kernels"), std::string::npos) << run.output;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(out.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM kernels", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), 101);
  sqlite3_finalize(st);
  sqlite3_close(db);
  auto size = std::filesystem::file_size(out);

  // A failing export leaves the database that was there, and no partial file.
  CliRun none = Gpucap("export " + Fixture("basics") + " -q -o " + out + " --window 'nvtx:no such range'");
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.output.find("matches nothing"), std::string::npos) << none.output;
  EXPECT_EQ(std::filesystem::file_size(out), size);
  size_t files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir.path())) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);

  CliRun missing = Gpucap("export " + dir.File("absent.gpucap") + " -o " + out);
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.output.find("absent.gpucap"), std::string::npos) << missing.output;
  CliRun nowhere = Gpucap("export " + Fixture("basics") + " -q -o " + dir.File("no/such/dir/x.sqlite"));
  EXPECT_EQ(nowhere.code, 1);
  EXPECT_NE(nowhere.output.find("no/such/dir"), std::string::npos) << nowhere.output;
  CliRun usage = Gpucap("export " + Fixture("basics"));
  EXPECT_EQ(usage.code, 2) << usage.output;
}

}  // namespace
}  // namespace gpucap::testing
