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

  // What the reader says is wrong with the index; empty when trusted.
  std::string IndexProblem(const std::string& path) {
    auto file = CaptureFile::Open(path);
    EXPECT_TRUE(file.ok());
    if (!file.ok()) return "(does not open)";
    return (*file)->Scan([](const FrameRef&) { return true; }).index_problem;
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
// (the entry is otherwise an intact frame's, inside the file). The file is
// read frame by frame whichever rule refuses the index, so each case also
// checks which problem the reader names: the entry that broke the rule, at
// its offset. A reader that dropped the rule would refuse the index later,
// for a gap it computed from the bad entry (or a wrapped one), and say so.
TEST_F(TrailerIndex, EachRuleAloneRefusesTheIndexAndNamesTheEntry) {
  const uint64_t trailer_at = footer_.trailer_offset;
  const uint64_t second = trailer_.index[1].offset, third = trailer_.index[2].offset;
  FrameHeader first;
  std::memcpy(&first, bytes_.data() + second, sizeof(first));
  ASSERT_EQ(first.length, trailer_.index[1].length);
  ASSERT_GE(first.length, 16u);
  ASSERT_EQ(third, second + sizeof(FrameHeader) + first.length) << "the writer indexes frames back to back";
  auto entry = [](uint64_t offset) {
    return "its entry for offset " + std::to_string(offset) + " does not name the next intact frame of the file";
  };
  struct Case {
    const char* what;
    std::function<void(Trailer&)> edit;
    std::string problem;  // as the reader names it, written from the rule
  };
  std::vector<Case> cases = {
      // Order: both frames real and intact; the first out-of-place entry
      // names a frame after a gap (the one it skipped), which is reported.
      {"out of order", [](Trailer& t) { std::swap(t.index[1], t.index[2]); },
       "it omits the " + std::to_string(third - second) + " bytes at offset " + std::to_string(second)},
      {"the same frame twice", [](Trailer& t) { t.index[2] = t.index[1]; }, entry(second)},
      // Length: the frame there is 8 bytes longer than the entry says.
      {"shorter than its frame", [](Trailer& t) { t.index[1].length -= 8; }, entry(second)},
      // Type: the right offset and length, another frame type.
      {"another frame's type", [](Trailer& t) { t.index[1].type = static_cast<uint16_t>(t.index[1].type + 1); },
       entry(second)},
  };
  for (const Case& c : cases) {
    std::string p = Rewritten(c.edit);
    EXPECT_FALSE(TrailerTrusted(p)) << c.what;
    EXPECT_EQ(IndexProblem(p), c.problem) << c.what;
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
  EXPECT_EQ(IndexProblem(p), entry(trailer_at));
  ExpectAllChunks(p);
}

TEST_F(TrailerIndex, AnIndexThatOmitsFramesNamesTheGap) {
  const uint64_t second = trailer_.index[1].offset, third = trailer_.index[2].offset;
  std::string p = Rewritten([](Trailer& t) { t.index.erase(t.index.begin() + 1); });
  EXPECT_FALSE(TrailerTrusted(p));
  EXPECT_EQ(IndexProblem(p), "it omits the " + std::to_string(third - second) + " bytes at offset " +
                                 std::to_string(second));
  ExpectAllChunks(p);
  const uint64_t last = trailer_.index.back().offset;
  p = Rewritten([](Trailer& t) { t.index.pop_back(); });
  EXPECT_EQ(IndexProblem(p), "it omits the " + std::to_string(footer_.trailer_offset - last) + " bytes at offset " +
                                 std::to_string(last) + ", before the trailer");
}

}  // namespace
}  // namespace gpucap::format
