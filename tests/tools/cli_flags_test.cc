// Each subcommand flag that changes what gpucap does, run as a user runs it
// and checked by its effect (not by its presence in --help): two runs that
// differ only in the flag, and what must differ between their outputs.
// Expected numbers come from the fixtures' manifests (fixtures/*.expect.json).
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>
#include <tuple>

#include "../support/temp_dir.h"
#include "tool_test_util.h"

namespace gpucap::testing {
namespace {

namespace fs = std::filesystem;

std::string Head(const std::string& path, size_t n) { return ReadFile(path).substr(0, n); }

// A trace's text without its name (the output file's name by default).
std::string Unnamed(const std::string& text) {
  return std::regex_replace(text, std::regex("\"traceName\":\"[^\"]*\""), "\"traceName\":\"\"");
}

std::set<std::string> FilesIn(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

Json Manifest(const std::string& name) {
  return ParseOrFail(ReadFile(std::string(GPUCAP_SOURCE_DIR) + "/fixtures/" + name + ".expect.json"));
}

size_t TorchSteps() {
  Json m = Manifest("torch_train");
  return m["eager_steps"].items.size() + m["graph_steps"].items.size();
}

TEST(CliBuild, FormatFollowsTheNameUnlessGiven) {
  TempDir dir;
  std::string c = Fixture("basics");
  ASSERT_EQ(Gpucap("build " + c + " -q -o " + dir.File("a.json")).code, 0);
  ASSERT_EQ(Gpucap("build " + c + " -q -o " + dir.File("a.pftrace")).code, 0);
  ASSERT_EQ(Gpucap("build " + c + " -q -f pftrace -o " + dir.File("b.trace")).code, 0);
  // A format that contradicts the name is a usage error (issue 43 item 3),
  // and nothing is written.
  CliRun contradiction = Gpucap("build " + c + " -q -f pftrace -o " + dir.File("b.json"));
  EXPECT_EQ(contradiction.code, 2) << contradiction.output;
  EXPECT_FALSE(std::filesystem::exists(dir.File("b.json")));
  ASSERT_EQ(Gpucap("build " + c + " -q -o " + dir.File("a.json.gz")).code, 0);
  EXPECT_EQ(Head(dir.File("a.json"), 1), "{");
  // A Trace's first byte: field 1 (packet), length-delimited.
  EXPECT_EQ(Head(dir.File("a.pftrace"), 1), "\x0a");
  EXPECT_EQ(Head(dir.File("b.trace"), 1), "\x0a") << "-f pftrace where the name says nothing";
  EXPECT_EQ(Head(dir.File("a.json.gz"), 2), "\x1f\x8b");
  auto gz = ReadTrace(dir.File("a.json.gz"));
  ASSERT_TRUE(gz);
  EXPECT_EQ(Unnamed(gz->text), Unnamed(ReadFile(dir.File("a.json"))));
  CliRun bad = Gpucap("build " + c + " -q -f svg -o " + dir.File("c.json"));
  EXPECT_EQ(bad.code, 2) << bad.output;
}

TEST(CliBuild, WindowAndSelectChooseTheFilesWritten) {
  TempDir dir;
  CliRun r = Gpucap("build " + Fixture("torch_train") + " -q -w 'nvtx:ProfilerStep#\\d+' -s 2,3 -o " + dir.File("t.json"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(FilesIn(dir.File("")), (std::set<std::string>{"t.2-ProfilerStep#2.json", "t.3-ProfilerStep#3.json"}));
  for (int step : {2, 3}) {
    auto t = ReadTrace(dir.File("t." + std::to_string(step) + "-ProfilerStep#" + std::to_string(step) + ".json"));
    ASSERT_TRUE(t);
    std::set<std::string> steps;
    for (const Json* e : t->Events("X", "user_annotation")) {
      if ((*e)["name"].text.rfind("ProfilerStep#", 0) == 0) steps.insert((*e)["name"].text);
    }
    EXPECT_EQ(steps, (std::set<std::string>{"ProfilerStep#" + std::to_string(step)}));
  }
  CliRun past = Gpucap("build " + Fixture("torch_train") + " -q -w 'nvtx:ProfilerStep#\\d+' -s 99 -o " + dir.File("x.json"));
  EXPECT_NE(past.code, 0);
  EXPECT_NE(past.output.find("99"), std::string::npos) << past.output;
}

TEST(CliBuild, ListWindowsPrintsThemAndWritesNothing) {
  TempDir dir;
  CliRun r = Gpucap("build " + Fixture("torch_train") + " -w 'nvtx:ProfilerStep#\\d+' --list-windows -o " + dir.File("t.json"));
  ASSERT_EQ(r.code, 0) << r.output;
  for (size_t i = 0; i < TorchSteps(); ++i) {
    EXPECT_TRUE(std::regex_search(r.output, std::regex("(^|\\n) *" + std::to_string(i) + " .*ProfilerStep#" + std::to_string(i) + "\\n")))
        << i << "\n" << r.output;
  }
  EXPECT_EQ(r.output.find("ProfilerStep#" + std::to_string(TorchSteps())), std::string::npos);
  EXPECT_TRUE(FilesIn(dir.File("")).empty());
}

TEST(CliBuild, GraphDependenciesDrawsDependencyFlows) {
  TempDir dir;
  std::string c = Fixture("graphs_nvtx");
  ASSERT_EQ(Gpucap("build " + c + " -q -o " + dir.File("plain.json")).code, 0);
  ASSERT_EQ(Gpucap("build " + c + " -q --graph-dependencies -o " + dir.File("deps.json")).code, 0);
  auto plain = ReadTrace(dir.File("plain.json"));
  auto deps = ReadTrace(dir.File("deps.json"));
  ASSERT_TRUE(plain && deps);
  EXPECT_TRUE(plain->Events("s", "graph_dependency").empty());
  size_t starts = deps->Events("s", "graph_dependency").size();
  EXPECT_GT(starts, 0u);
  EXPECT_EQ(deps->Events("f", "graph_dependency").size(), starts);
  // The same slices; the ops an arrow reaches lose their launch flow (a
  // replay's launch flows to its roots).
  EXPECT_EQ(plain->Events("X").size(), deps->Events("X").size());
  std::set<std::tuple<std::string, std::string, std::string>> reached;
  for (const auto* f : deps->Events("f", "graph_dependency")) {
    reached.emplace((*f)["pid"].text, (*f)["tid"].text, (*f)["ts"].text);
  }
  EXPECT_EQ(plain->Events("s", "ac2g").size() - deps->Events("s", "ac2g").size(), reached.size());
  EXPECT_GT(reached.size(), 0u);
}

TEST(CliBuild, GzipLevelAndCodecChangeTheBytesNotTheTrace) {
  TempDir dir;
  std::string c = Fixture("torch_train");
  ASSERT_EQ(Gpucap("build " + c + " -q --gzip-codec zlib --gzip-level 1 -o " + dir.File("z1.json.gz")).code, 0);
  ASSERT_EQ(Gpucap("build " + c + " -q --gzip-codec zlib --gzip-level 9 -o " + dir.File("z9.json.gz")).code, 0);
  ASSERT_EQ(Gpucap("build " + c + " -q --gzip-codec libdeflate --gzip-level 12 -o " + dir.File("d12.json.gz")).code, 0);
  EXPECT_LT(fs::file_size(dir.File("z9.json.gz")), fs::file_size(dir.File("z1.json.gz")));
  auto z1 = ReadTrace(dir.File("z1.json.gz")), z9 = ReadTrace(dir.File("z9.json.gz")), d12 = ReadTrace(dir.File("d12.json.gz"));
  ASSERT_TRUE(z1 && z9 && d12);
  EXPECT_EQ(Unnamed(z1->text), Unnamed(z9->text));
  EXPECT_EQ(Unnamed(z1->text), Unnamed(d12->text));
  CliRun bad = Gpucap("build " + c + " -q --gzip-codec bogus -o " + dir.File("x.json.gz"));
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.output.find("--gzip-codec 'bogus'"), std::string::npos) << bad.output;
}

TEST(CliBuild, ThreadsChangeNothingInTheOutput) {
  TempDir dir;
  std::string c = Fixture("torch_train");
  ASSERT_EQ(Gpucap("build " + c + " -q -j 1 -o " + dir.File("one.json")).code, 0);
  ASSERT_EQ(Gpucap("build " + c + " -q -j 4 -o " + dir.File("four.json")).code, 0);
  EXPECT_EQ(Unnamed(ReadFile(dir.File("one.json"))), Unnamed(ReadFile(dir.File("four.json"))));
}

TEST(CliStats, TopTableFormatAndOutput) {
  TempDir dir;
  std::string c = Fixture("basics");
  size_t kernels = Manifest("basics")["kernel_shapes"].members.size();
  CliRun top = Gpucap("stats " + c + " -q -n 2 -t kernels");
  ASSERT_EQ(top.code, 0) << top.output;
  EXPECT_NE(top.output.find("GPU kernels"), std::string::npos);
  EXPECT_EQ(top.output.find("CUDA API calls"), std::string::npos) << "-t kernels prints only that table";
  EXPECT_EQ(top.output.find("GPU streams"), std::string::npos);
  EXPECT_NE(top.output.find("... " + std::to_string(kernels - 2) + " more (--top)"), std::string::npos) << top.output;
  CliRun all = Gpucap("stats " + c + " -q");
  for (const char* title : {"GPU kernels", "GPU memory copies and sets", "CUDA API calls", "GPU streams"}) {
    EXPECT_NE(all.output.find(title), std::string::npos) << title;
  }
  EXPECT_EQ(all.output.find("more (--top)"), std::string::npos);

  std::string out = dir.File("s.json");
  CliRun json = Gpucap("stats " + c + " -q -f json -o " + out);
  ASSERT_EQ(json.code, 0) << json.output;
  EXPECT_EQ(json.output.find("\"tables\""), std::string::npos) << "-o writes the file, not stdout";
  Json s = ParseOrFail(ReadFile(out));
  EXPECT_EQ(s["tables"]["kernels"].items.size(), kernels);
}

TEST(CliDiff, ThresholdMinDeltaCountsTopAndFormat) {
  std::string a = Fixture("allreduce-0"), b = Fixture("allreduce-1");
  CliRun def = Gpucap("diff " + a + " " + b + " -q");
  EXPECT_EQ(def.code, 3) << "rank 1 waits far longer in its all-reduce\n" << def.output;
  EXPECT_NE(def.output.find("PAST THE THRESHOLD"), std::string::npos);
  CliRun loose = Gpucap("diff " + a + " " + b + " -q --threshold 1000000% --min-delta 1s");
  EXPECT_EQ(loose.code, 0) << loose.output;
  EXPECT_NE(loose.output.find("within the threshold"), std::string::npos);
  // The fill kernel runs a different number of times on the two ranks.
  CliRun counts = Gpucap("diff " + a + " " + b + " -q --threshold 1000000% --min-delta 1s --counts");
  EXPECT_EQ(counts.code, 3) << counts.output;
  EXPECT_NE(counts.output.find("any count changed"), std::string::npos);
  CliRun one = Gpucap("diff " + a + " " + b + " -q -n 1");
  EXPECT_NE(one.output.find("more"), std::string::npos) << one.output;
  CliRun json = Gpucap("diff " + a + " " + b + " -q -f json");
  EXPECT_EQ(json.code, 3);
  Json j = ParseOrFail(json.output);
  EXPECT_TRUE(j.has("past"));
  CliRun mean = Gpucap("diff " + a + " " + b + " -q --metric mean");
  EXPECT_NE(mean.output.find("mean"), std::string::npos) << mean.output;
  EXPECT_EQ(Gpucap("diff " + a + " " + b + " -q --metric median").code, 2);
}

TEST(CliDiff, WindowOfBComparesTwoWindowsOfOneCapture) {
  std::string c = Fixture("torch_train");
  std::string w = " -q -w 'nvtx:ProfilerStep#\\d+' -s 1 --threshold 1000000% --min-delta 1s --counts";
  CliRun same = Gpucap("diff " + c + " " + c + w);
  EXPECT_EQ(same.code, 0) << same.output;
  // Step 1 is eager, step 6 a CUDA-graph replay (the manifest's graph_steps):
  // the kernels differ in count.
  CliRun other = Gpucap("diff " + c + " " + c + w + " --select-b 6");
  EXPECT_EQ(other.code, 3) << other.output;
  CliRun by_spec = Gpucap("diff " + c + " " + c + w + " --window-b all --select-b ''");
  EXPECT_EQ(by_spec.code, 3) << "the whole capture against one step\n" << by_spec.output;
}

TEST(CliTrim, AnonymizeHashesKernelNames) {
  TempDir dir;
  std::string small = dir.File("anon.gpucap");
  CliRun r = Gpucap("trim " + Fixture("basics") + " -q -w all --anonymize -o " + small);
  ASSERT_EQ(r.code, 0) << r.output;
  ASSERT_EQ(Gpucap("build " + small + " -q -o " + dir.File("a.json")).code, 0);
  auto t = ReadTrace(dir.File("a.json"));
  ASSERT_TRUE(t);
  auto kernels = t->Events("X", "kernel");
  ASSERT_FALSE(kernels.empty());
  std::set<std::string> names;
  for (const Json* k : kernels) {
    EXPECT_EQ((*k)["name"].text.rfind("kernel_", 0), 0u) << (*k)["name"].text;
    names.insert((*k)["name"].text);
  }
  EXPECT_EQ(names.size(), Manifest("basics")["kernel_shapes"].members.size()) << "one hash per distinct name";
  EXPECT_EQ(ReadFile(small).find("tiled_sum"), std::string::npos) << "no name left in the file";
}

TEST(CliFixture, NameSetsTheFilesBaseName) {
  TempDir dir;
  CliRun r = Gpucap("fixture " + Fixture("counters") + " -q -w 'nvtx:busy' --name busy -o " + dir.File("fx"));
  ASSERT_EQ(r.code, 0) << r.output;
  std::set<std::string> files = FilesIn(dir.File("fx"));
  EXPECT_TRUE(files.count("busy.gpucap") && files.count("busy.fixture.json") && files.count("busy.stats.json"));
  for (const std::string& f : files) EXPECT_EQ(f.rfind("busy", 0), 0u) << f;
  Json m = ParseOrFail(ReadFile(dir.File("fx/busy.fixture.json")));
  EXPECT_EQ(m["capture"].text, "busy.gpucap");
  // One golden per busy phase the program ran (the manifest's phases).
  size_t busy = 0;
  Json manifest = Manifest("counters");  // the loop below must not outlive it
  for (const Json& p : manifest["phases"].items) busy += p.text == "busy";
  size_t chrome = 0;
  for (const Json& g : m["goldens"].items) {
    chrome += std::regex_match(g.text, std::regex("busy\\.\\d+-busy\\.json"));
  }
  EXPECT_EQ(chrome, busy) << ReadFile(dir.File("fx/busy.fixture.json"));
}

TEST(CliMerge, WindowMergesEachStepOfTheRanks) {
  TempDir dir;
  CliRun r = Gpucap("merge " + Fixture("allreduce-0") + " " + Fixture("allreduce-1") +
                    " -q -w 'nvtx:ProfilerStep#\\d+' -o " + dir.File("m.json"));
  ASSERT_EQ(r.code, 0) << r.output;
  Json m = Manifest("allreduce-0");
  std::set<std::string> want;
  for (const Json& s : m["steps"].items) want.insert("m." + s.text + "-ProfilerStep#" + s.text + ".json");
  EXPECT_EQ(FilesIn(dir.File("")), want);
  auto t = ReadTrace(dir.File("m.0-ProfilerStep#0.json"));
  ASSERT_TRUE(t);
  std::set<std::string> ranks;
  for (const Json* e : t->events) {
    if ((*e)["ph"].text == "M" && (*e)["name"].text == "process_name") {
      std::string n = (*e)["args"]["name"].text;
      if (n.rfind("rank ", 0) == 0) ranks.insert(n.substr(0, 6));
    }
  }
  EXPECT_EQ(ranks, (std::set<std::string>{"rank 0", "rank 1"}));
}

}  // namespace
}  // namespace gpucap::testing
