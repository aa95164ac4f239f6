// Issue 23 item 8: a capture cut with `trim --anonymize` can be attached to a
// public bug report. Every identifying string is planted in a capture; after
// anonymizing, the test lists every string the new capture holds (each text
// field of each message, plus the file's raw bytes) and finds none of them,
// while the trace keeps its shape.
#include <gtest/gtest.h>

#include <filesystem>

#include "gpucap/format/capture.h"
#include "hostile_test.h"
#include "synthetic_capture.h"

namespace gpucap::testing::hostile {
namespace {

namespace syn = builder::testing;

const std::vector<std::string> kSecrets = {
    "secrethost-9f3a", "secretproc-77", "/home/alice/secretproj/train.py", "--data=/mnt/secretdata",
    "SECRET_TOKEN_123", "0000:9a:00.0", "secret-thread-x", "secretblobname", "secretblobdata",
    "secretlabel", "secretrange", "secretnvtxthread", "secret_kernel_zz", "secretsrc", "secret-error"};

std::string Plant(const TempDir& dir) {
  std::string path = dir.File("secretsrc.gpucap");
  format::SessionInfo s = syn::DefaultSession();
  s.host = "secrethost-9f3a";
  s.process_name = "secretproc-77";
  s.command_line = {"python3", "/home/alice/secretproj/train.py", "--data=/mnt/secretdata"};
  s.options = {{"GPUCAP_ENV", "SECRET_TOKEN_123"}};
  format::DeviceInfo d = syn::H200(0);
  d.pci_bus_id = "0000:9a:00.0";
  for (size_t i = 0; i < d.uuid.size(); ++i) d.uuid[i] = static_cast<uint8_t>(0xa0 + i);
  auto c = syn::SyntheticCapture::Create(path, s, {d});
  EXPECT_TRUE(c.ok());
  auto& w = **c;
  EXPECT_TRUE(w.Message(format::ThreadInfo{4242, 1, 4242, "secret-thread-x"}).ok());
  format::MetadataBlob blob;
  blob.name = "secretblobname";
  blob.data = "secretblobdata";
  blob.timestamp_ns = 1'790'857'026'000'001'000;
  blob.os_tid = 4242;
  EXPECT_TRUE(w.Message(blob).ok());
  format::WindowMark mark;
  mark.kind = format::WindowMarkKind::kInstant;
  mark.timestamp_ns = 1'790'857'026'000'000'500;
  mark.label = "secretlabel";
  EXPECT_TRUE(w.Message(mark).ok());
  format::RangeEvent name;
  name.kind = format::RangeKind::kNameThread;
  name.os_tid = 4242;
  name.name = "secretnvtxthread";
  name.timestamp_ns = 1'790'857'026'000'000'100;
  EXPECT_TRUE(w.Message(name).ok());
  format::RecorderStats stats;
  stats.writer_error = "secret-error";
  EXPECT_TRUE(w.Message(stats).ok());
  EXPECT_TRUE(w.String(0x1000, "secret_kernel_zz").ok());
  uint64_t t0 = 1'790'857'026'000'001'000;
  EXPECT_TRUE(w.Push(4242, t0, "secretrange").ok());
  for (uint32_t i = 0; i < 4; ++i) {
    w.Api({false, 211, t0 + i * 1000, t0 + i * 1000 + 100, 4242, 4242, i + 1});
    syn::KernelRecord k;
    k.start = t0 + i * 1000 + 200;
    k.end = k.start + 300;
    k.correlation = i + 1;
    k.name_pointer = 0x1000;
    w.Kernel(k);
  }
  EXPECT_TRUE(w.Pop(4242, t0 + 10'000).ok());
  EXPECT_TRUE(w.Close().ok());
  return path;
}

// Every text a capture holds, message by message.
std::vector<std::string> Strings(const format::Capture& c) {
  std::vector<std::string> out;
  if (c.session) {
    const format::SessionInfo& s = *c.session;
    out.insert(out.end(), {s.host, s.process_name, s.tool_version});
    out.insert(out.end(), s.command_line.begin(), s.command_line.end());
    for (const auto& [k, v] : s.options) out.insert(out.end(), {k, v});
  }
  for (const auto& d : c.devices) out.insert(out.end(), {d.name, d.pci_bus_id, std::string(d.uuid.begin(), d.uuid.end())});
  for (const auto& s : c.strings) out.push_back(s.def.text);
  for (const auto& r : c.ranges) out.push_back(r.name);
  for (const auto& g : c.graphs) out.push_back(g.function_name);
  for (const auto& m : c.windows) out.push_back(m.label);
  for (const auto& t : c.threads) out.push_back(t.name);
  for (const auto& b : c.metadata) out.insert(out.end(), {b.name, b.content_type, b.data});
  for (const auto& s : c.stats) out.push_back(s.writer_error);
  for (const auto& d : c.counter_defs) out.insert(out.end(), {d.name, d.unit});
  if (c.trailer) out.insert(out.end(), {c.trailer->stop_reason, c.trailer->stats.writer_error});
  return out;
}

TEST(AnonymizeTest, NoPlantedStringSurvives) {
  TempDir dir;
  std::string source = Plant(dir);
  {
    auto before = format::LoadCapture(source);
    ASSERT_TRUE(before.ok());
    std::string all;
    for (const std::string& s : Strings(*before)) all += s + "\n";
    for (const std::string& secret : kSecrets) {
      if (secret != "secretsrc") {
        EXPECT_NE(all.find(secret), std::string::npos) << secret << " was not planted";
      }
    }
  }
  std::string anon = dir.File("anon.gpucap");
  // Trimmed by its telling name, so the source path reaches the provenance.
  LimitedRun r = RunOn(dir, ReadFile(source), {"trim", source, "-w", "all", "--anonymize", "-o", anon});
  ASSERT_TRUE(r.ok()) << r.Describe();
  auto after = format::LoadCapture(anon);
  ASSERT_TRUE(after.ok()) << after.status().message();
  std::vector<std::string> strings = Strings(*after);
  std::string bytes = ReadFile(anon);
  for (const std::string& secret : kSecrets) {
    for (const std::string& s : strings) EXPECT_EQ(s.find(secret), std::string::npos) << "'" << s << "' keeps " << secret;
    EXPECT_EQ(bytes.find(secret), std::string::npos) << secret << " in the file's bytes";
  }
  std::string uuid;
  for (size_t i = 0; i < 16; ++i) uuid.push_back(static_cast<char>(0xa0 + i));
  EXPECT_EQ(bytes.find(uuid), std::string::npos) << "the device uuid survived";
  // The shape stays: the same threads, kernels and ranges.
  ASSERT_EQ(after->threads.size(), 1u);
  EXPECT_FALSE(after->threads[0].name.empty());
  ASSERT_TRUE(after->session.has_value());
  EXPECT_EQ(after->session->command_line.size(), 3u);
  ASSERT_EQ(after->devices.size(), 1u);
  EXPECT_EQ(after->devices[0].name, "NVIDIA H200");
}

}  // namespace
}  // namespace gpucap::testing::hostile
