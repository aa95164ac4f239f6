// The checked-in CUPTI layout tables: what the builder decodes with.
#include "gpucap/format/cupti_layout.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gpucap/format/activity_kind.h"

namespace gpucap::format {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Only where the build found CUPTI headers: elsewhere (CI has no CUDA) there
// is nothing to compare with, and a test that skips would pass as if checked.
#if defined(GPUCAP_LAYOUT_GENERATOR) && defined(GPUCAP_CUPTI_INCLUDE_DIR)
TEST(CuptiLayout, GeneratedTableMatchesTheHeadersWhereTheyExist) {
  std::string command = std::string(GPUCAP_LAYOUT_GENERATOR) + " " + GPUCAP_CUPTI_INCLUDE_DIR;
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string generated;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) generated.append(buf.data(), n);
  ASSERT_EQ(pclose(pipe), 0) << command;
  std::string checked_in = ReadAll(std::string(GPUCAP_SOURCE_DIR) + "/format/layouts/cupti_13_0.inc");
  EXPECT_EQ(generated, checked_in)
      << "format/layouts/cupti_13_0.inc is stale: run `ninja -C build regen_cupti_layouts`";
}
#endif

TEST(CuptiLayout, KernelRecordOf13_0) {
  const LayoutTable* t = LayoutForVersion(130001);
  ASSERT_NE(t, nullptr);
  const RecordLayout* k = t->Find(static_cast<uint32_t>(ActivityKind::kConcurrentKernel));
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->struct_name, "CUpti_ActivityKernel10");
  EXPECT_EQ(k->size, 216u);
  EXPECT_EQ(k->at(Field::kStart).offset, 16);
  EXPECT_EQ(k->at(Field::kStart).size, 8);
  EXPECT_EQ(k->at(Field::kName).size, 8);
  EXPECT_FALSE(k->at(Field::kCbid).present());
  // Every field lies inside the record.
  for (const LayoutTable& table : KnownLayoutTables()) {
    for (const RecordLayout& r : table.records) {
      for (const FieldLoc& f : r.fields) {
        if (f.present()) {
          EXPECT_LE(f.offset + f.size, r.size) << r.struct_name;
        }
      }
      EXPECT_EQ(r.size % 8, 0u) << r.struct_name << ": CUPTI records are 8-byte aligned";
    }
  }
}

TEST(CuptiLayout, EveryKindTheRecorderWritesHasALayout) {
  const LayoutTable* t = LayoutForVersion(130001);
  ASSERT_NE(t, nullptr);
  for (ActivityKind k : {ActivityKind::kConcurrentKernel, ActivityKind::kMemcpy, ActivityKind::kMemcpy2,
                         ActivityKind::kMemset, ActivityKind::kRuntime, ActivityKind::kDriver,
                         ActivityKind::kExternalCorrelation, ActivityKind::kOverhead,
                         ActivityKind::kSynchronization, ActivityKind::kCudaEvent, ActivityKind::kMarker,
                         ActivityKind::kEnvironment}) {
    EXPECT_NE(t->Find(static_cast<uint32_t>(k)), nullptr) << ActivityKindName(static_cast<uint32_t>(k));
  }
}

TEST(CuptiLayout, VersionsMatchByReleaseAndUnknownOnesDoNot) {
  EXPECT_NE(LayoutForVersion(130002), nullptr);  // an update of 13.0
  EXPECT_EQ(LayoutForVersion(120800), nullptr);
  EXPECT_EQ(LayoutForVersion(0), nullptr);
  EXPECT_NE(MatchLayoutBySize(static_cast<uint32_t>(ActivityKind::kConcurrentKernel), 216), nullptr);
  EXPECT_EQ(MatchLayoutBySize(static_cast<uint32_t>(ActivityKind::kConcurrentKernel), 224), nullptr);
}

TEST(CuptiLayout, ApiNamesAsKinetoPrintsThem) {
  EXPECT_EQ(RuntimeApiName(211), "cudaLaunchKernel");
  EXPECT_EQ(RuntimeApiName(430), "cudaLaunchKernelExC");
  EXPECT_EQ(RuntimeApiName(214), "cudaLaunchKernel_ptsz");
  EXPECT_EQ(RuntimeApiName(311), "cudaGraphLaunch");
  EXPECT_EQ(DriverApiName(307), "cuLaunchKernel");
  EXPECT_EQ(RuntimeApiName(0), "");
  EXPECT_EQ(RuntimeApiName(1u << 30), "");
}

TEST(CuptiLayout, FieldsReadBackWhatWasWritten) {
  const RecordLayout* k = MatchLayoutBySize(static_cast<uint32_t>(ActivityKind::kConcurrentKernel), 216);
  ASSERT_NE(k, nullptr);
  std::array<uint8_t, 216> rec{};
  WriteField(rec.data(), k->at(Field::kStart), 0x1122334455667788ull);
  WriteField(rec.data(), k->at(Field::kGridX), static_cast<uint64_t>(-3));
  WriteField(rec.data(), k->at(Field::kRegistersPerThread), 80);
  EXPECT_EQ(ReadUnsigned(rec.data(), k->at(Field::kStart)), 0x1122334455667788ull);
  EXPECT_EQ(ReadSigned(rec.data(), k->at(Field::kGridX)), -3);
  EXPECT_EQ(ReadUnsigned(rec.data(), k->at(Field::kRegistersPerThread)), 80u);
  EXPECT_EQ(ReadUnsigned(rec.data(), k->at(Field::kCbid)), 0u);  // absent field
}

}  // namespace
}  // namespace gpucap::format
