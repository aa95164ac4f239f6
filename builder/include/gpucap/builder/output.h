// Where rendered bytes go. Traces are streamed: a renderer appends as it
// goes and nothing holds the whole trace. A file appears under its name only
// once closed successfully (it is written beside it, then renamed), so a
// failed build never leaves a truncated trace that looks complete.
#ifndef GPUCAP_BUILDER_OUTPUT_H_
#define GPUCAP_BUILDER_OUTPUT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <mutex>
#include <utility>
#include <vector>

#include "gpucap/status.h"

namespace gpucap::builder {

class WorkQueue;  // gpucap/builder/work_queue.h

// Heap bytes handed from a writer to a sink without copying them. Not
// zeroed: a writer fills what it hands over.
struct ByteBlock {
  std::unique_ptr<char[]> data;
  size_t capacity = 0;
  // Makes room for n bytes; the contents are lost if it has to grow.
  void Reserve(size_t n) {
    if (n <= capacity) return;
    data.reset(new char[n]);
    capacity = n;
  }
};

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual Status Append(std::string_view bytes) = 0;
  // Appends block->data[0, used). A sink that keeps blocks of its own (gzip)
  // takes this one and gives back a spare of at least the same capacity,
  // saving a copy of every byte of a trace. By default the bytes are
  // appended and the block stays.
  virtual Status AppendBlock(ByteBlock* block, size_t used) { return Append({block->data.get(), used}); }
  // Completes the output. A sink destroyed without Close leaves nothing.
  virtual Status Close() = 0;
};

// Measured on this project's traces (bench/README.md), per core: libdeflate
// level 1 ~0.5 GB/s at ratio ~20, zlib level 1 ~0.25 GB/s at ~19, ISA-L
// level 0 with a Huffman code fitted to each block ~2 GB/s at ~18. Every
// codec's default level gives the same bytes for the same trace, so
// kDefault is ISA-L level 0 where gpucap was built with ISA-L, else
// libdeflate. ISA-L's levels 1-3 compress a little better but, on this
// project's machines, a block compressed in different runs occasionally came
// out as different (equally valid) bytes: with them, traces are identical
// only once decompressed.
enum class GzipCodec { kDefault, kIsal, kLibdeflate, kZlib };
// False for kIsal in a build without ISA-L.
bool GzipCodecAvailable(GzipCodec codec);
// What kDefault stands for in this build.
GzipCodec DefaultGzipCodec();
// "default", "isal", "libdeflate" or "zlib".
Result<GzipCodec> ParseGzipCodec(std::string_view name);

struct OutputOptions {
  // gzip for paths ending in ".gz". The stream is cut into blocks compressed
  // independently on `threads` threads and written as concatenated gzip
  // members, which every gzip reader (and Perfetto) reads as one stream.
  // The codec's own scale: ISA-L 0-3, libdeflate 1-12, zlib 1-9. -1: the
  // codec's fast reproducible level (ISA-L 0, libdeflate 1, zlib 1).
  int gzip_level = -1;
  // gzip whatever the name (standard output, `-o -`, has no ".gz" to say it).
  bool gzip = false;
  GzipCodec codec = GzipCodec::kDefault;
  size_t block_bytes = 1 << 20;
  int threads = 0;  // 0: one per core, the appending thread counted
  // The build's threads (BuildTraces sets it): members are compressed on
  // them, and `threads` is not used. Null: threads of the sink's own.
  WorkQueue* queue = nullptr;
};

// A file at `path`, gzipped when the name ends in ".gz".
Result<std::unique_ptr<ByteSink>> OpenOutput(const std::string& path, const OutputOptions& options = {});

// Plain file, written to `path`.tmp and renamed on Close.
Result<std::unique_ptr<ByteSink>> OpenFileSink(const std::string& path);
// Compresses into `inner`.
std::unique_ptr<ByteSink> NewGzipSink(std::unique_ptr<ByteSink> inner, const OutputOptions& options);
// Appends to a string (tests, tools that post-process).
std::unique_ptr<ByteSink> NewStringSink(std::string* out);

// Blocks handed back and forth between the renderers of a window's pieces
// (on any thread) and the window's sink, so that a piece's bytes land in
// storage used before rather than in pages new to the process.
class BlockPool {
 public:
  // A block of at least `capacity` bytes: a used one if any is kept.
  ByteBlock Take(size_t capacity);
  void Give(ByteBlock block);

 private:
  static constexpr size_t kKept = 64;
  std::mutex mu_;
  std::vector<ByteBlock> free_;
};

// Bytes rendered apart from the sink they are bound for (a piece of a
// window's slices, rendered on another thread: trace_model.h), kept as the
// writer handed them over, block by block, so that passing them on copies
// nothing.
struct RenderedPiece {
  std::vector<std::pair<ByteBlock, size_t>> blocks;  // (block, bytes used)
  BlockPool* pool = nullptr;  // where the blocks come from and go back to (may be null)
  // The run's place among its window's runs, set before its first slice:
  // for a renderer whose output tells runs apart (pftrace's sequence ids).
  uint32_t index = 0;
  // Hands every block to `sink` (AppendBlock), in order, and empties this;
  // what the sink gives back goes to the pool.
  Status MoveTo(ByteSink* sink);
};
// A sink that keeps what it is given in `into`.
std::unique_ptr<ByteSink> NewRenderedPieceSink(RenderedPiece* into);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_OUTPUT_H_
