// The NVTX reports of nsys stats over an export.
//
// Range names: nvtx_sum and nvtx_pushpop_sum name a range `domain:name`
// outside the default domain and `name` inside it; the reports that project
// ranges onto GPU work (nvtx_gpu_proj_sum, nvtx_kern_sum) name every range
// `domain:name` with an empty domain for the default one (`:forward`), as
// nsys's scripts build them (coalesce(domain, '') || ':' || text).
//
// Containment, as nsys's scripts test it: a GPU op is in a range when the
// API call that launched it lies within the range (range start <= call
// start and call end <= range end) on the range's thread. Only ranges that
// start and end on one thread count there (the guide's words for
// nvtx_gpu_proj_sum; nsys's scripts for both keep the NVTX_EVENTS rows with
// no endGlobalTid): push/pop ranges, and start/end ranges started on a
// known thread and ended on the same one or never ended (end_tid NULL). A
// start/end range ended on another thread is left out, and takes no part
// in the nesting either.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "report_queries.h"
#include "report_summary.h"

namespace gpucap::tools::reports {
namespace {

constexpr const char* kStyleSql = "CASE r.kind WHEN 'push_pop' THEN 'PushPop' ELSE 'StartEnd' END";

// A range of one thread, and what the projection and nesting give it.
struct Range {
  int64_t id = 0, process = 0, tid = 0, start = 0, end = 0;
  std::string name, style;
  int level = 0;
  int parent = -1;  // index in its thread's ranges
  // The ops it holds.
  int64_t ops = 0, first_start = INT64_MAX, last_end = INT64_MIN;
  std::set<int64_t> correlations;
};

// An op with its launching call.
struct Op {
  int64_t id = 0, process = 0, tid = 0, call_start = 0, call_end = 0, start = 0, end = 0, correlation = 0;
  bool launched = false;
  std::string name;
};

// The ranges that can hold ops, per (process, thread), each thread's
// sorted by start, longest first, then id; with their nesting: a range's
// parent is the tightest other range of its thread holding it whole (the
// least (start - parent start) + (parent end - end)), as nsys's scripts
// find it; of two with the same span the earlier id is the parent (nsys
// leaves the pair parenting each other, and both out of its tree).
using Threads = std::map<std::pair<int64_t, int64_t>, std::vector<Range>>;

Result<Threads> LoadRanges(sqlite3* db) {
  Threads threads;
  std::string sql = std::string("SELECT r.id, r.process, r.tid, r.start_ns, r.end_ns, COALESCE(d.value, '') || ':' || "
                                "s.value, ") + kStyleSql +
                    " FROM nvtx_ranges r JOIN strings s ON s.id = r.name LEFT JOIN strings d ON d.id = r.domain "
                    "WHERE r.kind != 'mark' AND r.tid IS NOT NULL AND (r.end_tid IS NULL OR r.end_tid = r.tid)";
  Status s = ForEachRow(db, sql, [&](sqlite3_stmt* st) {
    Range r;
    r.id = sqlite3_column_int64(st, 0);
    r.process = sqlite3_column_int64(st, 1);
    r.tid = sqlite3_column_int64(st, 2);
    r.start = sqlite3_column_int64(st, 3);
    r.end = sqlite3_column_int64(st, 4);
    r.name = Text(st, 5);
    r.style = Text(st, 6);
    threads[{r.process, r.tid}].push_back(std::move(r));
  });
  if (!s.ok()) return s;
  for (auto& entry : threads) {
    std::vector<Range>& ranges = entry.second;
    std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
      return std::tie(a.start, b.end, a.id) < std::tie(b.start, a.end, b.id);
    });
    std::vector<int> open;  // earlier ranges that may still hold later ones
    for (size_t i = 0; i < ranges.size(); ++i) {
      Range& c = ranges[i];
      std::erase_if(open, [&](int p) { return ranges[p].end < c.start; });
      int64_t best = INT64_MAX;
      for (int p : open) {
        const Range& pr = ranges[p];
        if (pr.end < c.end) continue;
        int64_t tightness = (c.start - pr.start) + (pr.end - c.end);
        if (tightness <= best) {
          best = tightness;
          c.parent = p;
        }
      }
      if (c.parent >= 0) c.level = ranges[c.parent].level + 1;
      open.push_back(static_cast<int>(i));
    }
  }
  return threads;
}

// Calls `fn(range, op)` for every range holding an op's launching call.
// Ops sorted by call start sweep each thread's ranges once.
template <typename Fn>
void Contain(Threads* threads, std::vector<Op>* ops, Fn fn) {
  std::sort(ops->begin(), ops->end(), [](const Op& a, const Op& b) {
    return std::tie(a.process, a.tid, a.call_start, a.id) < std::tie(b.process, b.tid, b.call_start, b.id);
  });
  size_t i = 0;
  while (i < ops->size()) {
    size_t j = i;
    while (j < ops->size() && (*ops)[j].process == (*ops)[i].process && (*ops)[j].tid == (*ops)[i].tid) ++j;
    auto it = threads->find({(*ops)[i].process, (*ops)[i].tid});
    if (it != threads->end()) {
      std::vector<Range>& ranges = it->second;
      std::vector<Range*> open;
      size_t next = 0;
      for (size_t o = i; o < j; ++o) {
        Op& op = (*ops)[o];
        if (!op.launched) continue;
        while (next < ranges.size() && ranges[next].start <= op.call_start) open.push_back(&ranges[next++]);
        std::erase_if(open, [&](const Range* r) { return r->end < op.call_start; });
        for (Range* r : open) {
          if (r->end >= op.call_end) fn(*r, op);
        }
      }
    }
    i = j;
  }
}

Status LoadOps(sqlite3* db, const std::string& sql, std::vector<Op>* ops) {
  return ForEachRow(db, sql, [&](sqlite3_stmt* st) {
    Op op;
    op.id = sqlite3_column_int64(st, 0);
    op.process = sqlite3_column_int64(st, 1);
    op.launched = sqlite3_column_type(st, 2) != SQLITE_NULL;
    op.tid = sqlite3_column_int64(st, 2);
    op.call_start = sqlite3_column_int64(st, 3);
    op.call_end = sqlite3_column_int64(st, 4);
    op.start = sqlite3_column_int64(st, 5);
    op.end = sqlite3_column_int64(st, 6);
    op.correlation = sqlite3_column_int64(st, 7);
    op.name = Text(st, 8);
    ops->push_back(std::move(op));
  });
}

std::string OpsSql(const char* table, const std::string& name) {
  return std::string("SELECT o.id, o.process, o.launch_tid, o.launch_start_ns, o.launch_end_ns, o.start_ns, o.end_ns, "
                     "o.correlation, ") + name + " FROM " + table + " o";
}

Result<std::map<int64_t, int64_t>> ProcessPids(sqlite3* db) {
  std::map<int64_t, int64_t> pids;
  Status s = ForEachRow(db, "SELECT id, pid FROM processes",
                        [&](sqlite3_stmt* st) { pids[sqlite3_column_int64(st, 0)] = sqlite3_column_int64(st, 1); });
  if (!s.ok()) return s;
  return pids;
}

}  // namespace

Result<Report> NvtxSum(sqlite3* db) {
  auto groups = GroupSamples(db,
                             std::string("SELECT ") + kStyleSql +
                                 ", COALESCE(d.value || ':', '') || s.value, r.dur_ns FROM nvtx_ranges r "
                                 "JOIN strings s ON s.id = r.name LEFT JOIN strings d ON d.id = r.domain "
                                 "WHERE r.kind != 'mark'",
                             2);
  if (!groups.ok()) return groups.status();
  return TimeSummary("nvtx_sum", "NVTX Range Summary", "Instances", {{"Style", Kind::kText}, {"Range", Kind::kText}},
                     *groups);
}

Result<Report> NvtxPushPopSum(sqlite3* db) {
  auto groups = GroupSamples(db,
                             "SELECT COALESCE(d.value || ':', '') || s.value, r.dur_ns FROM nvtx_ranges r "
                             "JOIN strings s ON s.id = r.name LEFT JOIN strings d ON d.id = r.domain "
                             "WHERE r.kind = 'push_pop'",
                             1);
  if (!groups.ok()) return groups.status();
  return TimeSummary("nvtx_pushpop_sum", "NVTX Push/Pop Range Summary", "Instances", {{"Range", Kind::kText}},
                     *groups);
}

Result<Report> NvtxGpuProjSum(sqlite3* db) {
  // Each range instance holding at least one GPU op (kernel, copy, memset)
  // projects onto the GPU as the span from its first op's start to its last
  // op's end; its GPU ops are its ops' distinct correlation ids (the ops of
  // one graph launch count once, as in nsys); its level is its depth in the
  // nesting (0 outermost), its children the ranges whose parent it is that
  // project too. Summed per (name, style), largest total projection first.
  auto threads = LoadRanges(db);
  if (!threads.ok()) return threads.status();
  std::vector<Op> ops;
  for (const char* table : {"kernels", "memcpys", "memsets"}) {
    Status s = LoadOps(db, OpsSql(table, "''") + " WHERE o.launch_tid IS NOT NULL", &ops);
    if (!s.ok()) return s;
  }
  Contain(&*threads, &ops, [](Range& r, const Op& op) {
    r.ops++;
    r.first_start = std::min(r.first_start, op.start);
    r.last_end = std::max(r.last_end, op.end);
    r.correlations.insert(op.correlation);
  });
  struct Sums {
    std::vector<int64_t> proj;
    int64_t range_ns = 0, gpu_ops = 0, levels = 0, children = 0;
  };
  std::map<std::pair<std::string, std::string>, Sums> by_name;
  for (auto& [thread, ranges] : *threads) {
    std::vector<int64_t> children(ranges.size());
    for (const Range& r : ranges) {
      if (r.ops > 0 && r.parent >= 0) children[r.parent]++;
    }
    for (size_t i = 0; i < ranges.size(); ++i) {
      const Range& r = ranges[i];
      if (r.ops == 0) continue;
      Sums& s = by_name[{r.name, r.style}];
      s.proj.push_back(r.last_end - r.first_start);
      s.range_ns += r.end - r.start;
      s.gpu_ops += static_cast<int64_t>(r.correlations.size());
      s.levels += r.level;
      s.children += children[i];
    }
  }
  Report r{"nvtx_gpu_proj_sum", "NVTX GPU Projection Summary",
           {{"Range", Kind::kText}, {"Style", Kind::kText}, {"Total Proj Time", Kind::kTime},
            {"Total Range Time", Kind::kTime}, {"Range Instances", Kind::kCount}},
           {}};
  AddStatColumns(&r.columns, "Proj ", Kind::kTime);
  for (const char* h : {"Total GPU Ops"}) r.columns.push_back({h, Kind::kCount});
  for (const char* h : {"Avg GPU Ops", "Avg Range Lvl", "Avg Num Child"}) r.columns.push_back({h, Kind::kRatio});
  std::vector<std::pair<Summary, std::vector<ReportCell>>> rows;
  for (const auto& [key, s] : by_name) {
    Summary p = Summarise(s.proj);
    double n = static_cast<double>(p.count);
    std::vector<ReportCell> row = {key.first, key.second, p.total, s.range_ns, p.count};
    AddStatCells(&row, p);
    row.push_back(s.gpu_ops);
    row.push_back(Round1(static_cast<double>(s.gpu_ops) / n));
    row.push_back(Round1(static_cast<double>(s.levels) / n));
    row.push_back(Round1(static_cast<double>(s.children) / n));
    rows.emplace_back(p, std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first.total > b.first.total; });
  for (auto& [s, row] : rows) r.rows.push_back(std::move(row));
  return r;
}

Result<Report> NvtxKernSum(sqlite3* db, KernelNameForm names) {
  // Each kernel pairs with every range holding its launch (a stack of
  // push/pop ranges: all of them, not only the innermost); the pairs are
  // grouped by (PID, TID, range, style, kernel name): NVTX Inst counts the
  // group's distinct ranges, Kern Inst its distinct kernels, and the times
  // are over its pairs (a kernel inside two ranges of one name counts
  // twice). As nsys's script joins kernels to ranges with LEFT JOINs, a
  // kernel launched inside no range makes a row of its own with the range,
  // style and NVTX Inst empty (and PID and TID too when its launch is not
  // known). Rows by range, PID, TID, then total time, largest first.
  auto threads = LoadRanges(db);
  if (!threads.ok()) return threads.status();
  auto pids = ProcessPids(db);
  if (!pids.ok()) return pids.status();
  std::vector<Op> ops;
  Status loaded = LoadOps(db, OpsSql("kernels", "kn.value") + " JOIN strings kn ON kn.id = o." + KernelNameColumn(names),
                          &ops);
  if (!loaded.ok()) return loaded;
  using Key = std::tuple<std::string, ReportCell, ReportCell, std::string, std::string>;  // range, pid, tid, style, kernel
  struct Pairs {
    std::set<int64_t> ranges, kernels;
    std::vector<int64_t> durations;
  };
  std::map<Key, Pairs> groups;
  std::map<int64_t, bool> in_range;  // by kernel id
  auto pid_of = [&](const Op& op) -> ReportCell {
    auto it = pids->find(op.process);
    return it == pids->end() ? ReportCell{} : ReportCell{it->second};
  };
  Contain(&*threads, &ops, [&](const Range& r, const Op& op) {
    Pairs& p = groups[{r.name, pid_of(op), op.tid, r.style, op.name}];
    p.ranges.insert(r.id);
    p.kernels.insert(op.id);
    p.durations.push_back(op.end - op.start);
    in_range[op.id] = true;
  });
  for (const Op& op : ops) {
    if (in_range.count(op.id)) continue;
    ReportCell pid = op.launched ? pid_of(op) : ReportCell{};
    ReportCell tid = op.launched ? ReportCell{op.tid} : ReportCell{};
    Pairs& p = groups[{"", pid, tid, "", op.name}];
    p.kernels.insert(op.id);
    p.durations.push_back(op.end - op.start);
  }
  Report r{"nvtx_kern_sum", "NVTX Range Kernel Summary",
           {{"NVTX Range", Kind::kText}, {"Style", Kind::kText}, {"PID", Kind::kInt}, {"TID", Kind::kInt},
            {"NVTX Inst", Kind::kCount}, {"Kern Inst", Kind::kCount}, {"Total Time", Kind::kTime}},
           {}};
  AddStatColumns(&r.columns, "", Kind::kTime);
  r.columns.push_back({"Kernel Name", Kind::kText});
  struct Row {
    Key key;
    Summary s;
    std::vector<ReportCell> cells;
  };
  std::vector<Row> rows;
  for (const auto& [key, p] : groups) {
    const auto& [range, pid, tid, style, kernel] = key;
    Summary s = Summarise(p.durations);
    std::vector<ReportCell> cells = {range.empty() ? ReportCell{} : ReportCell{range},
                                     style.empty() ? ReportCell{} : ReportCell{style},
                                     pid,
                                     tid,
                                     static_cast<int64_t>(p.ranges.size()),
                                     static_cast<int64_t>(p.kernels.size()),
                                     s.total};
    AddStatCells(&cells, s);
    cells.push_back(kernel);
    rows.push_back({key, s, std::move(cells)});
  }
  // The map's order is range, PID, TID (NULL first, as SQLite sorts it),
  // style, kernel; total time breaks ties within a (range, PID, TID).
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    const auto& [ra, pa, ta, sa, ka] = a.key;
    const auto& [rb, pb, tb, sb, kb] = b.key;
    if (std::tie(ra, pa, ta) != std::tie(rb, pb, tb)) return std::tie(ra, pa, ta) < std::tie(rb, pb, tb);
    return a.s.total > b.s.total;
  });
  for (Row& row : rows) r.rows.push_back(std::move(row.cells));
  return r;
}

}  // namespace gpucap::tools::reports
