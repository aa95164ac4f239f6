// The torch.profiler trace reader's work, two ways, on one document: what
// the splice reads of every event (ph, cat, name, pid, tid, ts, dur and
// args' "External id"), through gpucap's span scanner (json_scan.h, which
// checks the whole document first) and through simdjson's On-Demand API
// (which checks what it walks).
//   scan_bench FILE.json ROUNDS hand|simdjson
// Prints the events read and a checksum of what was read, which must agree.
#include <simdjson.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "gpucap/tools/json/json_scan.h"

using namespace gpucap::tools;

namespace {

uint64_t Hash(uint64_t h, std::string_view s) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

uint64_t Hand(std::string_view doc, uint64_t* events) {
  uint64_t h = 1469598103934665603ull;
  auto root = ScanJsonDocument(doc);
  if (!root.ok()) return 0;
  JsonValue list;
  (void)ForEachMember(*root, [&](const std::string& k, const JsonValue& v) {
    if (k == "traceEvents") list = v;
    return true;
  });
  (void)ForEachElement(list, [&](const JsonValue& e) {
    ++*events;
    (void)ForEachMember(e, [&](const std::string& k, const JsonValue& v) {
      int64_t n = 0;
      if (k == "ph" || k == "cat" || k == "name") h = Hash(h, JsonString(v));
      else if (k == "pid" || k == "tid") h += JsonInt(v, &n) ? static_cast<uint64_t>(n) : 0;
      else if (k == "ts" || k == "dur") h += JsonMicrosToNanos(v, &n) ? static_cast<uint64_t>(n) : 0;
      else if (k == "args" && v.type == JsonValue::Type::kObject) {
        (void)ForEachMember(v, [&](const std::string& a, const JsonValue& x) {
          if (a == "External id" && JsonInt(x, &n)) h += static_cast<uint64_t>(n);
          return true;
        });
      }
      return true;
    });
    return true;
  });
  return h;
}

uint64_t Simd(simdjson::ondemand::parser& parser, const simdjson::padded_string& doc, uint64_t* events) {
  uint64_t h = 1469598103934665603ull;
  auto d = parser.iterate(doc);
  simdjson::ondemand::object root;
  if (d.get_object().get(root)) return 0;
  for (auto member : root) {
    std::string_view key;
    if (member.unescaped_key().get(key) || key != "traceEvents") continue;
    simdjson::ondemand::array list;
    if (member.value().get_array().get(list)) return 0;
    for (auto element : list) {
      simdjson::ondemand::object e;
      if (element.get_object().get(e)) continue;
      ++*events;
      for (auto f : e) {
        std::string_view k;
        if (f.unescaped_key().get(k)) return 0;
        auto v = f.value();
        int64_t n = 0;
        if (k == "ph" || k == "cat" || k == "name") {
          std::string_view s;
          if (!v.get_string().get(s)) h = Hash(h, s);
        } else if (k == "pid" || k == "tid") {
          if (!v.get_int64().get(n)) h += static_cast<uint64_t>(n);
        } else if (k == "ts" || k == "dur") {
          std::string_view raw = v.raw_json_token();
          while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t')) {
            raw.remove_suffix(1);
          }
          if (JsonMicrosToNanos(JsonValue{JsonValue::Type::kNumber, raw, 0}, &n)) h += static_cast<uint64_t>(n);
        } else if (k == "args") {
          simdjson::ondemand::object args;
          if (v.get_object().get(args)) continue;
          for (auto a : args) {
            std::string_view ak;
            if (a.unescaped_key().get(ak)) return 0;
            if (ak == "External id" && !a.value().get_int64().get(n)) h += static_cast<uint64_t>(n);
          }
        }
      }
    }
  }
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: scan_bench FILE.json ROUNDS hand|simdjson\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  simdjson::padded_string padded(text);
  simdjson::ondemand::parser parser;
  int rounds = std::atoi(argv[2]);
  bool hand = std::string(argv[3]) == "hand";
  uint64_t h = 0, events = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < rounds; ++r) {
    events = 0;
    h = hand ? Hand(text, &events) : Simd(parser, padded, &events);
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s: %zu bytes, %llu events, checksum %016llx, %.1f ms a round (%d rounds)\n", argv[3], text.size(),
              static_cast<unsigned long long>(events), static_cast<unsigned long long>(h), 1000 * s / rounds, rounds);
  return h == 0;
}
