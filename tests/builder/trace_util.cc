#include "trace_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace gpucap::testing {

using builder::BuildOptions;

std::vector<const Json*> Trace::Events(std::string_view ph, std::string_view cat) const {
  std::vector<const Json*> out;
  for (const Json* e : events) {
    if ((*e)["ph"].text != ph) continue;
    if (!cat.empty() && (*e)["cat"].text != cat) continue;
    out.push_back(e);
  }
  return out;
}

std::vector<const Json*> Trace::Named(std::string_view name) const {
  std::vector<const Json*> out;
  for (const Json* e : events) {
    if ((*e)["ph"].text == "X" && (*e)["name"].text == name) out.push_back(e);
  }
  return out;
}

std::string Trace::ThreadName(uint64_t pid, uint64_t tid) const {
  for (const Json* e : events) {
    if ((*e)["ph"].text == "M" && (*e)["name"].text == "thread_name" && (*e)["pid"].u() == pid &&
        (*e)["tid"].u() == tid) {
      return (*e)["args"]["name"].text;
    }
  }
  return "";
}

int64_t Trace::Count(std::string_view name) const {
  const Json* v = root["gpucap"]["counts"].Find(name);
  return v ? v->i() : -1;
}

int64_t Nanos(const Json& us) {
  const std::string& t = us.text;
  size_t dot = t.find('.');
  bool neg = !t.empty() && t[0] == '-';
  std::string whole = t.substr(neg ? 1 : 0, dot - (neg ? 1 : 0));
  std::string frac = dot == std::string::npos ? "" : t.substr(dot + 1);
  while (frac.size() < 3) frac.push_back('0');
  int64_t v = std::stoll(whole) * 1000 + std::stoll(frac.substr(0, 3));
  return neg ? -v : v;
}

namespace {

// A trace sink that renders into a string through the real renderer.
class Capturing {
 public:
  std::unique_ptr<builder::TraceSink> sink;
  std::string text;
  Capturing() { sink = builder::NewChromeJsonRenderer(builder::NewStringSink(&text)); }
};

}  // namespace

std::vector<Trace> BuildTraces(const std::string& path, BuildOptions options) {
  std::vector<Trace> out;
  auto index = builder::CaptureIndex::Open(path);
  EXPECT_TRUE(index.ok()) << index.status().message();
  if (!index.ok()) return out;
  builder::Builder b(**index, options);
  auto windows = b.Windows();
  EXPECT_TRUE(windows.ok()) << windows.status().message();
  if (!windows.ok()) return out;
  for (const builder::Window& w : *windows) {
    Capturing c;
    builder::WindowReport report;
    Status s = b.BuildWindow(w, c.sink.get(), &report);
    EXPECT_TRUE(s.ok()) << s.message();
    Trace t;
    t.text = std::move(c.text);
    std::string error;
    EXPECT_TRUE(ParseJson(t.text, &t.root, &error)) << "window " << w.index << ": invalid JSON: " << error;
    out.push_back(std::move(t));
  }
  // Pointers into roots are taken once the vector no longer moves.
  for (Trace& t : out) {
    for (const Json& e : t.root["traceEvents"].items) t.events.push_back(&e);
  }
  return out;
}

Trace BuildOne(const std::string& path, BuildOptions options) {
  std::vector<Trace> all = BuildTraces(path, options);
  EXPECT_EQ(all.size(), 1u);
  if (all.empty()) return Trace{};
  Trace t = std::move(all[0]);
  t.events.clear();
  for (const Json& e : t.root["traceEvents"].items) t.events.push_back(&e);
  return t;
}

void ExpectImporterRules(const Trace& t) {
  ASSERT_TRUE(t.root.is(Json::Type::kObject));
  for (const char* key : {"schemaVersion", "deviceProperties", "displayTimeUnit", "baseTimeNanoseconds",
                          "traceEvents", "traceName"}) {
    EXPECT_TRUE(t.root.has(key)) << key;
  }
  auto three_decimals = [](const Json& v) {
    size_t dot = v.text.find('.');
    return dot != std::string::npos && v.text.size() - dot - 1 == 3;
  };
  struct X {
    int64_t ts, end;
  };
  std::map<std::pair<uint64_t, uint64_t>, std::vector<X>> threads;
  for (const Json* e : t.events) {
    const std::string& ph = (*e)["ph"].text;
    for (const char* k : {"pid", "tid"}) {
      if (ph == "C" && std::string(k) == "tid") continue;
      const Json& v = (*e)[k];
      ASSERT_TRUE(v.is(Json::Type::kNumber)) << k << " in " << (*e)["name"].text;
      EXPECT_EQ(v.text.find_first_not_of("0123456789"), std::string::npos) << k << " " << v.text;
      EXPECT_LE(v.u(), 0xffffffffull);
    }
    ASSERT_TRUE((*e)["ts"].is(Json::Type::kNumber));
    EXPECT_TRUE(three_decimals((*e)["ts"])) << (*e)["ts"].text;
    if (ph == "X") {
      EXPECT_TRUE(three_decimals((*e)["dur"])) << (*e)["dur"].text;
      EXPECT_GE(Nanos((*e)["dur"]), 0);
      threads[{(*e)["pid"].u(), (*e)["tid"].u()}].push_back(
          {Nanos((*e)["ts"]), Nanos((*e)["ts"]) + Nanos((*e)["dur"])});
    }
  }
  // Nesting per thread: sorted by start (longer first), every slice ends
  // within the slices still open around it.
  for (auto& [thread, xs] : threads) {
    std::sort(xs.begin(), xs.end(), [](const X& a, const X& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.end > b.end;
    });
    std::vector<int64_t> open;
    for (const X& x : xs) {
      while (!open.empty() && open.back() <= x.ts) open.pop_back();
      EXPECT_TRUE(open.empty() || x.end <= open.back())
          << "partial overlap on pid " << thread.first << " tid " << thread.second << " at " << x.ts;
      open.push_back(x.end);
    }
  }
  // Flows: bound and paired.
  std::map<std::pair<std::string, uint64_t>, int> starts, ends;
  auto inside = [&](const Json& e) {
    int64_t ts = Nanos(e["ts"]);
    for (const X& x : threads[{e["pid"].u(), e["tid"].u()}]) {
      if (x.ts <= ts && ts <= x.end) return true;
    }
    return false;
  };
  for (const Json* e : t.events) {
    const std::string& ph = (*e)["ph"].text;
    if (ph != "s" && ph != "f") continue;
    auto key = std::pair{(*e)["cat"].text, (*e)["id"].u()};
    EXPECT_LT((*e)["id"].u(), 1ull << 53) << "flow ids must survive doubles";
    EXPECT_TRUE(inside(*e)) << ph << " flow " << key.second << " binds to no slice";
    if (ph == "s") {
      starts[key]++;
    } else {
      ends[key]++;
      EXPECT_EQ((*e)["bp"].text, "e");
    }
  }
  for (auto& [k, n] : starts) {
    EXPECT_EQ(n, 1) << "flow " << k.second;
    EXPECT_EQ(ends[k], 1) << "flow " << k.second << " starts but never ends";
  }
  for (auto& [k, n] : ends) EXPECT_EQ(starts[k], 1) << "flow " << k.second << " ends but never starts";
}

}  // namespace gpucap::testing
