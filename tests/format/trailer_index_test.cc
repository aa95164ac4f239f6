// The trailer's index is trusted only when every entry describes a frame
// inside the file, before the trailer: a trailer that passes its checksum
// but points elsewhere (a bug in a writer, a file spliced by hand) must not
// send the reader to read frames that are not there. The reader scans instead.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "frame_codec.h"
#include "gpucap/format/capture.h"
#include "message_codec.h"
#include "sample_capture.h"
#include "../support/temp_dir.h"

namespace gpucap::format {
namespace {

class TrailerIndex : public ::testing::Test {
 protected:
  void SetUp() override {
    contents_ = testing::MakeSampleContents(4, 1500, 3);
    path_ = dir_.File("sample.gpucap");
    ASSERT_TRUE(testing::WriteSample(path_, contents_, true, 512).ok());
    bytes_ = testing::ReadFile(path_);
    auto file = CaptureFile::Open(path_);
    ASSERT_TRUE(file.ok()) << file.status().message();
    ASSERT_NE((*file)->trailer(), nullptr) << "the sample must close cleanly with a trailer";
    trailer_ = *(*file)->trailer();
    std::memcpy(&footer_, bytes_.data() + bytes_.size() - sizeof(Footer), sizeof(Footer));
    ASSERT_GT(trailer_.index.size(), 4u);
  }

  // The file with its trailer re-encoded after `edit`, with valid checksums.
  std::string Rewritten(const std::function<void(Trailer&)>& edit) {
    Trailer t = trailer_;
    edit(t);
    capnp::MallocMessageBuilder builder;
    EncodeTrailer(t, builder.initRoot<schema::Trailer>());
    FlatMessage flat(builder);
    FrameHeader old;
    std::memcpy(&old, bytes_.data() + footer_.trailer_offset, sizeof(old));
    FrameHeader h = MakeFrameHeader(old.type, old.flags, old.sequence, flat.pieces());
    std::string out = bytes_.substr(0, footer_.trailer_offset);
    out.append(reinterpret_cast<const char*>(&h), sizeof(h));
    for (const ByteSpan& p : flat.pieces()) out.append(reinterpret_cast<const char*>(p.data()), p.size());
    Footer f = MakeFooter(footer_.trailer_offset);
    out.append(reinterpret_cast<const char*>(&f), sizeof(f));
    std::string p = dir_.File("edited.gpucap");
    testing::WriteFile(p, out);
    return p;
  }

  bool TrailerTrusted(const std::string& path) {
    auto file = CaptureFile::Open(path);
    EXPECT_TRUE(file.ok());
    return file.ok() && (*file)->trailer() != nullptr;
  }

  // Whatever the trailer says, every chunk reads back with its bytes.
  void ExpectAllChunks(const std::string& path) {
    auto capture = LoadCapture(path);
    ASSERT_TRUE(capture.ok()) << capture.status().message();
    ASSERT_EQ(capture->chunks.size(), contents_.chunks.size());
  }

  testing::TempDir dir_;
  std::string path_, bytes_;
  testing::SampleContents contents_;
  Trailer trailer_;
  Footer footer_{};
};

TEST_F(TrailerIndex, AnUneditedReEncodingIsTrusted) {
  // The control: the rewrite itself keeps the trailer valid.
  EXPECT_TRUE(TrailerTrusted(Rewritten([](Trailer&) {})));
}

TEST_F(TrailerIndex, EntriesPointingOutsideTheFramesAreNotTrusted) {
  const uint64_t trailer_at = footer_.trailer_offset;
  struct Case {
    const char* what;
    std::function<void(Trailer&)> edit;
  };
  std::vector<Case> cases = {
      {"inside the file header", [](Trailer& t) { t.index[1].offset = 8; }},
      {"unaligned", [](Trailer& t) { t.index[1].offset += 4; }},
      {"past the trailer", [&](Trailer& t) { t.index[2].offset = trailer_at + 64; }},
      {"running into the trailer", [&](Trailer& t) { t.index.back().length += 8; }},
      {"past the end of the file", [](Trailer& t) { t.index[0].offset = 1ull << 40; }},
      {"a length that wraps", [](Trailer& t) { t.index[0].length = UINT32_MAX; }},
  };
  for (const Case& c : cases) {
    std::string p = Rewritten(c.edit);
    EXPECT_FALSE(TrailerTrusted(p)) << c.what;
    ExpectAllChunks(p);
  }
}

// Each of the index's rules on its own: every case below breaks exactly one
// (the entry is otherwise an intact frame's, in file order, inside the
// file), so a reader that drops that one rule trusts the index.
TEST_F(TrailerIndex, EachRuleAloneRefusesTheIndex) {
  const uint64_t trailer_at = footer_.trailer_offset;
  FrameHeader first;
  std::memcpy(&first, bytes_.data() + trailer_.index[1].offset, sizeof(first));
  ASSERT_EQ(first.length, trailer_.index[1].length);
  ASSERT_GE(first.length, 16u);
  struct Case {
    const char* what;
    std::function<void(Trailer&)> edit;
  };
  std::vector<Case> cases = {
      // Order: both frames are real and intact, the second named first.
      {"out of order", [](Trailer& t) { std::swap(t.index[1], t.index[2]); }},
      {"the same frame twice", [](Trailer& t) { t.index[2] = t.index[1]; }},
      // Length: the frame there is 8 bytes longer than the entry says, and
      // the entry still ends before the next one starts.
      {"shorter than its frame", [](Trailer& t) { t.index[1].length -= 8; }},
      // Type: the right offset and length, another frame type.
      {"another frame's type", [](Trailer& t) { t.index[1].type = static_cast<uint16_t>(t.index[1].type + 1); }},
  };
  for (const Case& c : cases) {
    std::string p = Rewritten(c.edit);
    EXPECT_FALSE(TrailerTrusted(p)) << c.what;
    ExpectAllChunks(p);
  }

  // Bounds: the last entry names the trailer frame itself, which is intact,
  // aligned, after every other entry and of the type and length the entry
  // says; but it is not before the trailer. The trailer's length is known
  // once it is written, and does not change with the value (fixed-width
  // fields), so it is written twice.
  auto at_trailer = [&](uint32_t length) {
    return [trailer_at, length](Trailer& t) {
      t.index.back().offset = trailer_at;
      t.index.back().type = static_cast<uint16_t>(FrameType::kTrailer);
      t.index.back().length = length;
    };
  };
  auto trailer_length = [&](const std::string& path) {
    std::string b = testing::ReadFile(path);
    FrameHeader h;
    std::memcpy(&h, b.data() + trailer_at, sizeof(h));
    return h.length;
  };
  uint32_t length = trailer_length(Rewritten(at_trailer(0)));
  std::string p = Rewritten(at_trailer(length));
  ASSERT_EQ(trailer_length(p), length) << "the trailer's length changed with the entry's value";
  EXPECT_FALSE(TrailerTrusted(p)) << "an entry naming the trailer, past the frames";
  ExpectAllChunks(p);
}

}  // namespace
}  // namespace gpucap::format
