// Issue 23 item 8: a capture cut with `trim --anonymize` can be attached to a
// public bug report. Every identifying string is planted in a capture; after
// anonymizing, the test lists every string the new capture holds (each text
// field of each message, plus the file's raw bytes) and finds none of them,
// while the trace keeps its shape.
#include <gtest/gtest.h>

#include <nettle/hmac.h>
#include <sys/stat.h>

#include <filesystem>
#include <set>

#include "gpucap/format/capture.h"
#include "gpucap/format/frame.h"
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


// Issue 41 item 7: hashes that reverse by guessing, link across fields, or
// leave payload bytes and schema words behind.

// The 64-bit FNV-1a the hashes used to be: what an attacker tries first.
std::string Fnv(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// The documented construction, computed here with Nettle directly:
// field_ + hex of the first 8 bytes of HMAC-SHA256(key, field || 0 || text).
std::string Expected(const std::string& key, const std::string& field, const std::string& text) {
  hmac_sha256_ctx ctx;
  hmac_sha256_set_key(&ctx, key.size(), reinterpret_cast<const uint8_t*>(key.data()));
  std::string input = field + std::string(1, '\0') + text;
  hmac_sha256_update(&ctx, input.size(), reinterpret_cast<const uint8_t*>(input.data()));
  uint8_t d[32];
  hmac_sha256_digest(&ctx, sizeof(d), d);
  char buf[17];
  for (int i = 0; i < 8; ++i) std::snprintf(buf + 2 * i, 3, "%02x", d[i]);
  return field + "_" + buf;
}

constexpr uint64_t kDomain = 7, kSchemaId = 0x10001;
constexpr uint64_t kCount = 12345, kStackAddress = 0x7ffdeadbeef0ull;

// A capture whose host, process and thread share one name, with an NVTX
// payload schema, an extended payload, a marker domain, an END range name,
// an option of the user's own and a stop reason holding a path.
std::string PlantJob(const TempDir& dir, const std::string& file) {
  std::string path = dir.File(file);
  format::SessionInfo s = syn::DefaultSession();
  s.host = "vm";
  s.process_name = "python3";
  s.options = {{"GPUCAP_NVTX", "1"}, {"GPUCAP_ALICE_SECRETKEY", "x"}};
  auto c = syn::SyntheticCapture::Create(path, s, {syn::H200(0)});
  EXPECT_TRUE(c.ok());
  auto& w = **c;
  EXPECT_TRUE(w.Message(format::ThreadInfo{4242, 1, 4242, "python3"}).ok());
  uint64_t t0 = 1'790'857'026'000'001'000;
  format::RangeEvent domain;
  domain.kind = format::RangeKind::kNameDomain;
  domain.id = kDomain;
  domain.domain = kDomain;
  domain.name = "secretdomainname";
  domain.timestamp_ns = t0 - 10;
  EXPECT_TRUE(w.Message(domain).ok());
  format::RangeEvent schema;
  schema.kind = format::RangeKind::kPayloadSchema;
  schema.id = kSchemaId;
  schema.domain = kDomain;
  schema.name = "secretschemaname";
  schema.timestamp_ns = t0 - 5;
  // uint64 count at 0, an address at 8, a char array at 16.
  schema.schema->entries = {{0, 18, "secretentry", "secretdescription", 0, 0},
                           {0, 23, "secretaddress", "", 0, 8},
                           {1u << 3, 1, "secrettext", "", 16, 16}};
  EXPECT_TRUE(w.Message(schema).ok());
  format::RangeEvent en;
  en.kind = format::RangeKind::kPayloadEnum;
  en.id = kSchemaId + 1;
  en.domain = kDomain;
  en.name = "secretenumname";
  en.schema->enum_entries = {{"secretenumvalue", 1, false}};
  en.timestamp_ns = t0 - 4;
  EXPECT_TRUE(w.Message(en).ok());
  format::RangeEvent push;
  push.kind = format::RangeKind::kPush;
  push.os_tid = 4242;
  push.domain = kDomain;
  push.timestamp_ns = t0;
  push.name = "step";
  std::string bytes(32, '\0');
  std::memcpy(bytes.data(), &kCount, 8);
  std::memcpy(bytes.data() + 8, &kStackAddress, 8);
  std::memcpy(bytes.data() + 16, "secretpayloadtxt", 16);
  push.ext_payloads = {{kSchemaId, bytes, false}};
  EXPECT_TRUE(w.Message(push).ok());
  EXPECT_TRUE(w.StartRange(9, 4242, t0 + 1, "secretstartname").ok());
  format::RangeEvent end;
  end.kind = format::RangeKind::kEnd;
  end.id = 9;
  end.os_tid = 4242;
  end.timestamp_ns = t0 + 5000;
  end.name = "secretendname";
  EXPECT_TRUE(w.Message(end).ok());
  EXPECT_TRUE(w.String(0x2000, "secretmarker").ok());
  EXPECT_TRUE(w.String(0x3000, "secretmarkerdomain").ok());
  w.Marker(1, t0 + 100, 1, 4242, 0x2000, 0x3000);
  for (uint32_t i = 0; i < 2; ++i) w.Api({false, 211, t0 + i * 1000, t0 + i * 1000 + 100, 4242, 4242, i + 1});
  EXPECT_TRUE(w.Pop(4242, t0 + 10'000, kDomain).ok());
  EXPECT_TRUE(w.Close("writer stopped: /home/alice/secretdisk: No space left on device").ok());
  return path;
}

struct Anonymized {
  std::string bytes;
  std::optional<format::Capture> capture;
};

Anonymized Trim(const TempDir& dir, const std::string& source, const std::string& out,
                std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"trim", source, "-q", "-w", "all", "--anonymize", "-o", dir.File(out)};
  args.insert(args.end(), extra.begin(), extra.end());
  LimitedRun r = RunGpucapLimited(args, Limits{});
  EXPECT_TRUE(r.ok()) << r.Describe();
  Anonymized a;
  a.bytes = ReadFile(dir.File(out));
  auto c = format::LoadCapture(dir.File(out));
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.status().message());
  if (c.ok()) a.capture.emplace(std::move(c).value());
  return a;
}

std::string Hex(const std::string& hashed) { return hashed.substr(hashed.rfind('_') + 1); }

TEST(AnonymizeTest, HashesCannotBeReversedByGuessingNorLinkFields) {
  TempDir dir;
  std::string source = PlantJob(dir, "job.gpucap");
  Anonymized a = Trim(dir, source, "a.gpucap");
  ASSERT_TRUE(a.capture && a.capture->session);
  const format::SessionInfo& s = *a.capture->session;
  // The unkeyed hash of the plain text is no longer what is written.
  EXPECT_NE(s.host, "host_" + Fnv("vm"));
  EXPECT_NE(s.process_name, "process_" + Fnv("python3"));
  EXPECT_EQ(a.bytes.find(Fnv("vm")), std::string::npos);
  EXPECT_EQ(a.bytes.find(Fnv("python3")), std::string::npos);
  // One text under two fields: two unrelated hashes.
  ASSERT_EQ(a.capture->threads.size(), 1u);
  EXPECT_EQ(s.process_name.rfind("process_", 0), 0u) << s.process_name;
  EXPECT_EQ(a.capture->threads[0].name.rfind("thread_", 0), 0u) << a.capture->threads[0].name;
  EXPECT_NE(Hex(s.process_name), Hex(a.capture->threads[0].name));
}

TEST(AnonymizeTest, RandomKeyPerRunAndOneKeyFileHashesAlike) {
  TempDir dir;
  std::string source = PlantJob(dir, "job.gpucap");
  Anonymized one = Trim(dir, source, "1.gpucap"), two = Trim(dir, source, "2.gpucap");
  ASSERT_TRUE(one.capture && two.capture);
  EXPECT_NE(one.capture->session->host, two.capture->session->host) << "no key file: a random key per run";
  EXPECT_NE(one.capture->threads[0].name, two.capture->threads[0].name);

  const std::string key = "the job's own secret key, 40 bytes long..";
  WriteFile(dir.File("job.key"), key);
  std::string other = PlantJob(dir, "job2.gpucap");
  Anonymized k1 = Trim(dir, source, "k1.gpucap", {"--anonymize-key", dir.File("job.key")});
  Anonymized k2 = Trim(dir, other, "k2.gpucap", {"--anonymize-key", dir.File("job.key")});
  ASSERT_TRUE(k1.capture && k2.capture);
  EXPECT_EQ(k1.capture->session->host, k2.capture->session->host);
  EXPECT_EQ(k1.capture->threads[0].name, k2.capture->threads[0].name);
  // The documented construction, computed independently.
  EXPECT_EQ(k1.capture->session->host, Expected(key, "host", "vm"));
  EXPECT_EQ(k1.capture->session->process_name, Expected(key, "process", "python3"));
  EXPECT_EQ(k1.capture->threads[0].name, Expected(key, "thread", "python3"));
}

TEST(AnonymizeTest, SchemaWordsPayloadBytesDomainsEndNamesStopReasonAndOptionKeysGo) {
  TempDir dir;
  std::string source = PlantJob(dir, "job.gpucap");
  Anonymized a = Trim(dir, source, "a.gpucap");
  ASSERT_TRUE(a.capture);
  for (const char* secret : {"secretdomainname", "secretschemaname", "secretentry", "secretdescription",
                             "secretaddress", "secrettext", "secretenumname", "secretenumvalue", "secretpayloadtxt",
                             "secretstartname", "secretendname", "secretmarker", "secretmarkerdomain", "secretdisk",
                             "/home/alice", "ALICE_SECRETKEY"}) {
    EXPECT_EQ(a.bytes.find(secret), std::string::npos) << secret << " survived in the file's bytes";
  }
  std::string address(8, '\0');
  std::memcpy(address.data(), &kStackAddress, 8);
  EXPECT_EQ(a.bytes.find(address), std::string::npos) << "the stack address survived";
  // What the payload's schema says is a number stays, in place.
  bool found = false;
  for (const format::RangeEvent& e : a.capture->ranges) {
    for (const format::ExtPayload& p : e.ext_payloads) {
      found = true;
      ASSERT_EQ(p.data.size(), 32u);
      uint64_t count = 0;
      std::memcpy(&count, p.data.data(), 8);
      EXPECT_EQ(count, kCount);
      EXPECT_EQ(p.data.substr(8), std::string(24, '\0'));
    }
  }
  EXPECT_TRUE(found) << "the extended payload was dropped with its event";
  // The recorder's own words stay: a known option key, the device model.
  ASSERT_TRUE(a.capture->session);
  std::set<std::string> keys;
  for (const auto& [k, v] : a.capture->session->options) keys.insert(k);
  EXPECT_TRUE(keys.count("GPUCAP_NVTX"));
  ASSERT_TRUE(a.capture->trailer);
  EXPECT_EQ(a.capture->trailer->stop_reason.rfind("stop_", 0), 0u) << a.capture->trailer->stop_reason;
  EXPECT_EQ(a.capture->devices.at(0).name, "NVIDIA H200");
}

TEST(AnonymizeTest, AHostileKeyFileIsRefusedClearly) {
  TempDir dir;
  std::string source = PlantJob(dir, "job.gpucap");
  WriteFile(dir.File("empty.key"), "");
  WriteFile(dir.File("short.key"), "0123456789");
  WriteFile(dir.File("huge.key"), std::string(10 << 20, 'k'));
  std::filesystem::create_directory(dir.File("dir.key"));
  for (const char* name : {"missing.key", "empty.key", "short.key", "huge.key", "dir.key"}) {
    std::string out = dir.File(std::string("out-") + name + ".gpucap");
    LimitedRun r = RunGpucapLimited({"trim", source, "-q", "-w", "all", "--anonymize-key", dir.File(name), "-o", out},
                                    Limits{});
    EXPECT_TRUE(r.exited() && r.code != 0) << name << ": " << r.Describe();
    EXPECT_NE(r.output.find(dir.File(name)), std::string::npos) << name << ": the error names the file\n" << r.output;
    EXPECT_NE(r.output.find("--anonymize-key"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("terminate"), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(out)) << name << ": nothing written";
  }
}

}  // namespace
}  // namespace gpucap::testing::hostile
