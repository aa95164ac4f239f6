#include "gpucap/builder/output.h"

#include "gpucap/format/output_file.h"

#include "gpucap/builder/work_queue.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <unistd.h>
#include <sys/stat.h>
#include <zlib.h>
#ifdef GPUCAP_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

namespace gpucap::builder {
namespace {

// A trace file through format::OutputFile: never over an input or a
// non-regular file, replacing the previous one only when complete.
class FileSink : public ByteSink {
 public:
  explicit FileSink(std::unique_ptr<format::OutputFile> file) : file_(std::move(file)) {}

  Status Append(std::string_view bytes) override {
    if (file_ == nullptr) return Status::IoError("trace file already closed");
    return file_->Write(bytes);
  }

  Status Close() override {
    if (file_ == nullptr) return Status::IoError("trace file already closed");
    Status s = file_->Commit();
    file_.reset();  // removes the temporary file if the commit failed
    return s;
  }

 private:
  std::unique_ptr<format::OutputFile> file_;
};

class StringSink : public ByteSink {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  Status Append(std::string_view bytes) override {
    out_->append(bytes);
    return Status::Ok();
  }
  Status Close() override { return Status::Ok(); }

 private:
  std::string* out_;
};

// A byte buffer that is not zeroed on growth: blocks are filled before
// they are read, and zeroing a megabyte per block showed in profiles.
struct Buffer : ByteBlock {
  size_t size = 0;
};

// Per-thread compressor state, made on first use.
struct Compressor {
  libdeflate_compressor* libdeflate = nullptr;
  int libdeflate_level = 0;  // what `libdeflate` was made for
  std::vector<uint8_t> isal_level_buf;
  ~Compressor() {
    if (libdeflate != nullptr) libdeflate_free_compressor(libdeflate);
  }
};

GzipCodec Resolve(GzipCodec codec) { return codec == GzipCodec::kDefault ? DefaultGzipCodec() : codec; }

// The level `level` stands for with `codec` (resolved): -1 is the codec's
// fast reproducible level.
int LevelFor(GzipCodec codec, int level) {
  if (level < 0) return codec == GzipCodec::kIsal ? 0 : 1;
  return level;
}

#ifdef GPUCAP_HAVE_ISAL
// A Huffman code for ISA-L level 0, fitted to `in`. Level 0 with ISA-L's
// built-in code compresses this JSON 13:1; a code fitted to 64 contiguous
// KiB from the block's middle (not its start, which may be a trace's
// metadata) gives 18:1, where fitting it to the whole block gives 18.2:1 at
// 60% of the speed. Eight 8 KiB slices spread over the block gave only 15:1.
// The sample is the trace's own bytes, so the output is a function of the
// trace.
std::shared_ptr<const isal_hufftables> FitCode(const Buffer& in) {
  isal_huff_histogram histogram{};
  constexpr size_t kSample = 64 << 10;
  auto* bytes = reinterpret_cast<uint8_t*>(in.data.get());
  if (in.size <= kSample) {
    isal_update_histogram(bytes, static_cast<int>(in.size), &histogram);
  } else {
    isal_update_histogram(bytes + (in.size - kSample) / 2, static_cast<int>(kSample), &histogram);
  }
  auto code = std::make_shared<isal_hufftables>();
  isal_create_hufftables(code.get(), &histogram);
  return code;
}
#endif

// One gzip member from `in`; `code` is ISA-L level 0's Huffman code
// (GzipSink::AttachCode), unused otherwise.
bool CompressMember(GzipCodec codec, int level, const Buffer& in, Buffer* out, Compressor* state,
                    const void* code) {
  level = LevelFor(codec, level);
#ifdef GPUCAP_HAVE_ISAL
  if (codec == GzipCodec::kIsal) {
    level = std::clamp(level, 0, 3);
    static constexpr uint32_t kLevelBuf[] = {ISAL_DEF_LVL0_DEFAULT, ISAL_DEF_LVL1_DEFAULT,
                                             ISAL_DEF_LVL2_DEFAULT, ISAL_DEF_LVL3_DEFAULT};
    // Cleared per block, so no block's compression depends on another's.
    state->isal_level_buf.assign(kLevelBuf[level], 0);
    isal_zstream z{};
    isal_deflate_init(&z);
    z.level = static_cast<uint32_t>(level);
    z.level_buf = state->isal_level_buf.data();
    z.level_buf_size = static_cast<uint32_t>(state->isal_level_buf.size());
    if (level == 0) {
      if (code == nullptr) return false;
      z.hufftables = const_cast<isal_hufftables*>(static_cast<const isal_hufftables*>(code));
    }
    z.gzip_flag = IGZIP_GZIP;
    z.end_of_stream = 1;
    z.flush = NO_FLUSH;
    // Stored blocks bound the output of ISA-L's own codes. A fitted code
    // does not fall back to them: bytes the sample never saw get codes of
    // up to 15 bits, so the bound is twice the input.
    out->Reserve((level == 0 ? 2 * in.size : in.size + in.size / 16) + 1024);
    z.next_in = reinterpret_cast<uint8_t*>(in.data.get());
    z.avail_in = static_cast<uint32_t>(in.size);
    z.next_out = reinterpret_cast<uint8_t*>(out->data.get());
    z.avail_out = static_cast<uint32_t>(out->capacity);
    int rc = isal_deflate(&z);
    out->size = z.total_out;
    return rc == COMP_OK && z.internal_state.state == ZSTATE_END;
  }
#endif
  if (codec == GzipCodec::kLibdeflate) {
    level = std::clamp(level, 1, 12);
    if (state->libdeflate != nullptr && state->libdeflate_level != level) {
      libdeflate_free_compressor(state->libdeflate);  // another sink's level
      state->libdeflate = nullptr;
    }
    if (state->libdeflate == nullptr) {
      state->libdeflate = libdeflate_alloc_compressor(level);
      state->libdeflate_level = level;
    }
    if (state->libdeflate == nullptr) return false;
    out->Reserve(libdeflate_gzip_compress_bound(state->libdeflate, in.size));
    out->size = libdeflate_gzip_compress(state->libdeflate, in.data.get(), in.size, out->data.get(), out->capacity);
    return out->size != 0;
  }
  z_stream z{};
  if (deflateInit2(&z, std::clamp(level, 1, 9), Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
  out->Reserve(deflateBound(&z, in.size) + 32);
  z.next_in = reinterpret_cast<Bytef*>(in.data.get());
  z.avail_in = static_cast<uInt>(in.size);
  z.next_out = reinterpret_cast<Bytef*>(out->data.get());
  z.avail_out = static_cast<uInt>(out->capacity);
  int rc = deflate(&z, Z_FINISH);
  out->size = z.total_out;
  deflateEnd(&z);
  return rc == Z_STREAM_END;
}

// Blocks go to the build's work queue (work_queue.h) and come back
// compressed; they are written in order by the appending thread. At most
// 2 x threads blocks are in flight, and blocks are reused, which bounds
// memory whatever the trace's size. With one thread in all, a block is
// compressed on the appending thread once that many wait.
class GzipSink : public ByteSink {
 public:
  GzipSink(std::unique_ptr<ByteSink> inner, const OutputOptions& o) : inner_(std::move(inner)), options_(o) {
    queue_ = o.queue;
    if (queue_ == nullptr) {
      own_queue_ = std::make_unique<WorkQueue>(o.threads);
      queue_ = own_queue_.get();
    }
    members_ = std::make_unique<WorkQueue::Ordered>(queue_);
    max_in_flight_ = static_cast<size_t>(queue_->threads()) * 2;
    options_.block_bytes = std::max<size_t>(options_.block_bytes, 4096);
  }
  // Members not written are waited for before the blocks they use go.
  ~GzipSink() override { members_.reset(); }

  Status Append(std::string_view bytes) override {
    while (!bytes.empty()) {
      if (current_ == nullptr) current_ = TakeBlock();
      Buffer& in = current_->in;
      size_t n = std::min(options_.block_bytes - in.size, bytes.size());
      std::memcpy(in.data.get() + in.size, bytes.data(), n);
      in.size += n;
      bytes.remove_prefix(n);
      if (in.size == options_.block_bytes) GPUCAP_RETURN_IF_ERROR(Submit());
    }
    return Status::Ok();
  }

  // The writer's block becomes a gzip member as it is: its bytes are not
  // copied into a block of this sink's. Members are then as long as the
  // writer's flushes, which depend only on the trace, so traces stay
  // reproducible.
  Status AppendBlock(ByteBlock* block, size_t used) override {
    if (used == 0) return Status::Ok();
    if (current_ != nullptr && current_->in.size > 0) {
      return Append({block->data.get(), used});  // after bytes copied in earlier
    }
    Block* b = TakeBlock(/*reserve=*/false);
    size_t capacity = block->capacity;
    std::swap(b->in.data, block->data);
    std::swap(b->in.capacity, block->capacity);
    b->in.size = used;
    block->Reserve(capacity);  // a block new to this sink had no storage yet
    current_ = b;
    return Submit();
  }

  Status Close() override {
    if (current_ != nullptr && current_->in.size > 0) GPUCAP_RETURN_IF_ERROR(Submit());
    GPUCAP_RETURN_IF_ERROR(Drain(0));
    return inner_->Close();
  }

 private:
  struct Block {
    Buffer in, out;
    std::shared_ptr<const void> code;  // ISA-L level 0's Huffman code for this block
  };

  // ISA-L level 0 takes its Huffman code from the caller: one is fitted to
  // the first block of every kBlocksPerCode, on this thread, and the group's
  // blocks share it. Fitting one per block cost 3% of a build (the sample's
  // histogram reads 64 KiB four times slower than compressing it). Measured
  // on the 5M-kernel bench capture, against a code per block: groups of 4
  // made the gzip 0.2% larger with 1 s windows and 0.5% with 100 ms ones;
  // groups of 8 made it 0.7% and 6% larger.
  static constexpr size_t kBlocksPerCode = 4;
  void AttachCode(Block* block) {
#ifdef GPUCAP_HAVE_ISAL
    GzipCodec codec = Resolve(options_.codec);
    if (codec != GzipCodec::kIsal || LevelFor(codec, options_.gzip_level) != 0) return;
    if (submitted_ % kBlocksPerCode == 0) code_ = FitCode(block->in);
    block->code = code_;
#else
    (void)block;
#endif
    submitted_++;
  }

  Block* TakeBlock(bool reserve = true) {
    Block* b;
    if (free_.empty()) {
      blocks_.push_back(std::make_unique<Block>());
      b = blocks_.back().get();
    } else {
      b = free_.back();
      free_.pop_back();
    }
    if (reserve) b->in.Reserve(options_.block_bytes);
    b->in.size = 0;
    return b;
  }

  Status Submit() {
    Block* block = current_;
    current_ = nullptr;
    AttachCode(block);
    pending_.push_back(block);
    GzipCodec codec = Resolve(options_.codec);
    int level = options_.gzip_level;
    members_->Submit([block, codec, level] {
      // Compressor state is the thread's: any thread of the queue may take
      // any sink's blocks.
      thread_local Compressor state;
      if (!CompressMember(codec, level, block->in, &block->out, &state, block->code.get())) {
        return Status::Internal("gzip compression failed");
      }
      return Status::Ok();
    });
    return Drain(max_in_flight_);
  }

  // Writes finished blocks in order until at most `keep` remain in flight.
  Status Drain(size_t keep) {
    while (!pending_.empty()) {
      if (pending_.size() <= keep && !members_->OldestDone()) return Status::Ok();
      GPUCAP_RETURN_IF_ERROR(members_->TakeOldest());
      Block* head = pending_.front();
      pending_.pop_front();
      Status s = inner_->Append(std::string_view(head->out.data.get(), head->out.size));
      free_.push_back(head);
      GPUCAP_RETURN_IF_ERROR(s);
    }
    return Status::Ok();
  }

  std::unique_ptr<ByteSink> inner_;
  OutputOptions options_;
  std::unique_ptr<WorkQueue> own_queue_;  // when the options name none
  WorkQueue* queue_ = nullptr;
  size_t max_in_flight_ = 2;
  std::vector<std::unique_ptr<Block>> blocks_;  // every block made; reused through free_
  std::vector<Block*> free_;
  Block* current_ = nullptr;
  size_t submitted_ = 0;               // blocks submitted so far
  std::shared_ptr<const void> code_;   // the current group's code
  std::deque<Block*> pending_;         // submitted, not yet written, in members_' order
  // Declared last: destroyed first, waiting for members still compressing.
  std::unique_ptr<WorkQueue::Ordered> members_;
};

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

GzipCodec DefaultGzipCodec() {
#ifdef GPUCAP_HAVE_ISAL
  return GzipCodec::kIsal;
#else
  return GzipCodec::kLibdeflate;
#endif
}

Result<GzipCodec> ParseGzipCodec(std::string_view name) {
  if (name == "default") return GzipCodec::kDefault;
  if (name == "isal") return GzipCodec::kIsal;
  if (name == "libdeflate") return GzipCodec::kLibdeflate;
  if (name == "zlib") return GzipCodec::kZlib;
  return Status::InvalidArgument("--gzip-codec '" + std::string(name) + "': expected default, isal, libdeflate or zlib");
}

bool GzipCodecAvailable(GzipCodec codec) {
#ifndef GPUCAP_HAVE_ISAL
  if (codec == GzipCodec::kIsal) return false;
#endif
  (void)codec;
  return true;
}

Result<std::unique_ptr<ByteSink>> OpenFileSink(const std::string& path) {
  // Said before anything is written: renaming onto a folder would fail only
  // at the end, with a message about the temporary file.
  struct stat st;
  if (path.empty() || path.back() == '/' || (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))) {
    return Status::InvalidArgument(path + ": is a folder; give a file name (e.g. " +
                                   (path.empty() || path.back() == '/' ? path : path + "/") + "trace.json.gz)");
  }
  auto file = format::OutputFile::Create(path);
  if (!file.ok()) return file.status();
  return std::unique_ptr<ByteSink>(new FileSink(std::move(file).value()));
}

std::unique_ptr<ByteSink> NewGzipSink(std::unique_ptr<ByteSink> inner, const OutputOptions& options) {
  return std::make_unique<GzipSink>(std::move(inner), options);
}

std::unique_ptr<ByteSink> NewStringSink(std::string* out) { return std::make_unique<StringSink>(out); }

Result<std::unique_ptr<ByteSink>> OpenOutput(const std::string& path, const OutputOptions& options) {
  auto file = OpenFileSink(path);
  if (!file.ok()) return file.status();
  if (!EndsWith(path, ".gz") && !options.gzip) return file;
  if (!GzipCodecAvailable(options.codec)) {
    return Status::Unsupported(path + ": this gpucap was built without ISA-L; choose another gzip codec");
  }
  return NewGzipSink(std::move(file).value(), options);
}

}  // namespace gpucap::builder
