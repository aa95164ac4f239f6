#include "tool_test_util.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <zlib.h>

#include <cstdio>

#include "../support/temp_dir.h"

namespace gpucap::testing {

std::string Fixture(const std::string& name) { return std::string(GPUCAP_SOURCE_DIR) + "/fixtures/" + name + ".gpucap"; }

const std::vector<std::string>& FixtureNames() {
  static const std::vector<std::string> names = {"basics", "graphs_nvtx", "torch_train", "counters",
                                                 "peer",   "allreduce-0", "allreduce-1"};
  return names;
}

void WriteCutCopy(const std::string& from, const std::string& to, double fraction) {
  std::string bytes = ReadFile(from);
  WriteFile(to, bytes.substr(0, static_cast<size_t>(bytes.size() * fraction)));
}

void WriteFlippedCopy(const std::string& from, const std::string& to, double fraction) {
  std::string bytes = ReadFile(from);
  size_t at = static_cast<size_t>(bytes.size() * fraction);
  for (size_t i = at; i < at + 64 && i < bytes.size(); ++i) bytes[i] = static_cast<char>(~bytes[i]);
  WriteFile(to, bytes);
}

std::unique_ptr<Trace> ParseTrace(std::string text) {
  auto t = std::make_unique<Trace>();
  t->text = std::move(text);
  std::string error;
  EXPECT_TRUE(ParseJson(t->text, &t->root, &error)) << error;
  for (const Json& e : t->root["traceEvents"].items) t->events.push_back(&e);
  return t;
}

std::unique_ptr<Trace> ReadTrace(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr) << path;
  std::string out;
  if (f != nullptr) {
    char buf[65536];
    int n;
    while ((n = gzread(f, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
    gzclose(f);
  }
  return ParseTrace(std::move(out));
}

Json ParseOrFail(const std::string& text) {
  Json j;
  std::string error;
  EXPECT_TRUE(ParseJson(text, &j, &error)) << error << "\n" << text.substr(0, 400);
  return j;
}

}  // namespace gpucap::testing
