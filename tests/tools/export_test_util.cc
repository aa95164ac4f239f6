#include "export_test_util.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

namespace gpucap::testing {

std::string Docs() {
  std::ifstream in(std::string(GPUCAP_SOURCE_DIR) + "/docs/sqlite.md");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::map<std::string, std::string> DocQueries() {
  std::map<std::string, std::string> out;
  std::string docs = Docs();
  std::regex block("```sql\\n-- query: (\\w+)\\n([\\s\\S]*?)```");
  for (auto it = std::sregex_iterator(docs.begin(), docs.end(), block); it != std::sregex_iterator(); ++it) {
    out[(*it)[1]] = (*it)[2];
  }
  return out;
}

ExportDb::ExportDb(const std::vector<std::string>& captures, const std::string& window, int jobs) {
  EXPECT_EQ(sqlite3_open(":memory:", &db_), SQLITE_OK);
  std::vector<const builder::CaptureIndex*> list;
  for (const std::string& path : captures) {
    auto index = builder::CaptureIndex::Open(path);
    EXPECT_TRUE(index.ok()) << index.status().message();
    if (!index.ok()) return;
    list.push_back(index->get());
    indexes_.push_back(std::move(index).value());
  }
  tools::ExportOptions o;
  o.build.window = window;
  o.jobs = jobs;
  auto report = tools::ExportCaptures(db_, list, o);
  EXPECT_TRUE(report.ok()) << report.status().message();
  if (report.ok()) report_ = *report;
}

ExportDb::~ExportDb() { sqlite3_close(db_); }

std::vector<std::vector<std::string>> QueryRows(sqlite3* db, const std::string& sql) {
  std::vector<std::vector<std::string>> out;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << sqlite3_errmsg(db) << " in: " << sql;
    return out;
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    auto& row = out.emplace_back();
    for (int i = 0; i < sqlite3_column_count(st); ++i) {
      const unsigned char* t = sqlite3_column_text(st, i);
      row.push_back(t ? reinterpret_cast<const char*>(t) : "NULL");
    }
  }
  EXPECT_EQ(rc, SQLITE_DONE) << sqlite3_errmsg(db) << " in: " << sql;
  sqlite3_finalize(st);
  return out;
}

int64_t ExportDb::Int(const std::string& sql) const {
  auto rows = Rows(sql);
  if (rows.empty() || rows[0].empty() || rows[0][0] == "NULL") return -1;
  return std::stoll(rows[0][0]);
}

int64_t AbsoluteTs(const Trace& t, const Json& e) {
  return static_cast<int64_t>(t.root["baseTimeNanoseconds"].u()) + Nanos(e["ts"]);
}

std::string ArgText(const Json& e, const char* key) {
  const Json* v = e["args"].Find(key);
  if (v == nullptr) return "";
  if (v->is(Json::Type::kArray)) {
    std::string s;
    for (const Json& item : v->items) s += (s.empty() ? "" : "/") + item.text;
    return s;
  }
  return v->text;
}

std::string BaseName(const std::string& full) {
  std::string name = full;
  // Cut by the builder's name budget: the parameters are what follows the
  // first '(' outside templates and "(anonymous namespace)".
  const std::string marker = " [truncated]";
  if (name.size() > marker.size() && name.compare(name.size() - marker.size(), marker.size(), marker) == 0) {
    name.resize(name.size() - marker.size());
    std::string anonymous = "(anonymous namespace)";
    int depth = 0;
    for (size_t i = 0; i < name.size(); ++i) {
      if (name.compare(i, anonymous.size(), anonymous) == 0) {
        i += anonymous.size() - 1;
        continue;
      }
      if (name[i] == '(' && depth == 0) {
        name.resize(i);
        break;
      }
      if (name[i] == '<' || name[i] == '(') depth++;
      if (name[i] == '>' || name[i] == ')') depth--;
    }
  }
  if (!name.empty() && name.back() == ')') {
    int depth = 0;
    for (size_t i = name.size(); i-- > 0;) {
      if (name[i] == ')') depth++;
      if (name[i] == '(' && --depth == 0) {
        name = name.substr(0, i);
        break;
      }
    }
  }
  // nsys's base name: no template arguments (every <...>, an unclosed one
  // to the end), then no return type (up to the last space) and no
  // namespaces (up to the last "::").
  std::string plain;
  int depth = 0;
  for (char ch : name) {
    if (ch == '<') depth++;
    else if (ch == '>' && depth > 0) depth--;
    else if (depth == 0) plain += ch;
  }
  size_t space = plain.rfind(' ');
  if (space != std::string::npos) plain = plain.substr(space + 1);
  size_t scope = plain.rfind("::");
  if (scope != std::string::npos) plain = plain.substr(scope + 2);
  return plain;
}

uint64_t BaseThread(const Trace& t, uint64_t pid, uint64_t tid) {
  std::string name = t.ThreadName(pid, tid);
  size_t lane = name.rfind(" (overlap ");
  if (lane == std::string::npos) return tid;
  std::string base = name.substr(0, lane);
  for (const Json* e : t.events) {
    if ((*e)["ph"].text == "M" && (*e)["name"].text == "thread_name" && (*e)["pid"].u() == pid &&
        (*e)["args"]["name"].text == base) {
      return (*e)["tid"].u();
    }
  }
  return tid;
}

std::vector<JsonOp> JsonOps(const Trace& t, bool kernels_only) {
  // Flow starts by id: the slice on the starting thread that holds them.
  std::map<uint64_t, const Json*> starts;
  std::map<uint64_t, uint64_t> ends;  // op position -> flow id
  std::vector<const Json*> apis;
  for (const Json* e : t.events) {
    const std::string& ph = (*e)["ph"].text;
    const std::string& cat = (*e)["cat"].text;
    if (ph == "s" && cat == "ac2g") starts[(*e)["id"].u()] = e;
    if (ph == "X" && (cat == "cuda_runtime" || cat == "cuda_driver")) apis.push_back(e);
  }
  auto launch_of = [&](const Json& s) -> const Json* {
    for (const Json* a : apis) {
      if ((*a)["tid"].u() == s["tid"].u() && (*a)["pid"].u() == s["pid"].u() && Nanos((*a)["ts"]) <= Nanos(s["ts"]) &&
          Nanos(s["ts"]) <= Nanos((*a)["ts"]) + Nanos((*a)["dur"])) {
        return a;
      }
    }
    return nullptr;
  };
  std::vector<JsonOp> ops;
  std::map<std::pair<uint64_t, int64_t>, size_t> by_place;  // (tid, ts) of the op -> index
  for (const Json* e : t.events) {
    const std::string& cat = (*e)["cat"].text;
    if ((*e)["ph"].text != "X") continue;
    if (cat != "kernel" && (kernels_only || (cat != "gpu_memcpy" && cat != "gpu_memset"))) continue;
    JsonOp op;
    op.e = e;
    op.start = AbsoluteTs(t, *e);
    op.end = op.start + Nanos((*e)["dur"]);
    by_place[{(*e)["pid"].u() << 32 | (*e)["tid"].u(), Nanos((*e)["ts"])}] = ops.size();
    ops.push_back(op);
  }
  // An "f" binds to the op on its track that holds its timestamp ("bp":"e").
  for (const Json* e : t.events) {
    if ((*e)["ph"].text != "f" || (*e)["cat"].text != "ac2g") continue;
    auto it = by_place.find({(*e)["pid"].u() << 32 | (*e)["tid"].u(), Nanos((*e)["ts"])});
    auto s = starts.find((*e)["id"].u());
    if (it == by_place.end() || s == starts.end()) continue;
    const Json* api = launch_of(*s->second);
    if (api == nullptr) continue;
    JsonOp& op = ops[it->second];
    op.launched = true;
    op.launch_tid = static_cast<int64_t>((*api)["tid"].u());
    op.pid = (*api)["pid"].u();
    op.launch_start = AbsoluteTs(t, *api);
    op.launch_dur = Nanos((*api)["dur"]);
    op.launch_name = (*api)["name"].text;
  }
  return ops;
}

}  // namespace gpucap::testing
