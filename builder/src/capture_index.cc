#include "gpucap/builder/capture_index.h"

#include <algorithm>

#include "gpucap/builder/budgets.h"
#include "names.h"

namespace gpucap::builder {

Result<std::unique_ptr<CaptureIndex>> CaptureIndex::Open(const std::string& path, bool verify) {
  format::LoadOptions options;
  options.verify_chunks = verify;
  auto capture = format::LoadCapture(path, options);
  if (!capture.ok()) return capture.status();
  return FromCapture(std::move(capture).value(), path);
}

std::unique_ptr<CaptureIndex> CaptureIndex::FromCapture(format::Capture capture, std::string path) {
  return std::unique_ptr<CaptureIndex>(new CaptureIndex(std::move(capture), std::move(path)));
}

CaptureIndex::CaptureIndex(format::Capture capture, std::string path)
    : capture_(std::move(capture)), path_(std::move(path)) {
  decoder_ = std::make_unique<Decoder>(capture_);
  clock_ = std::make_unique<ClockMap>(capture_);
  extent_ = ComputeExtent(capture_);
  ranges_ = std::make_unique<RangeIndex>(capture_, extent_.end_ns);
  graphs_ = std::make_unique<GraphIndex>(capture_);
  collectives_ = std::make_unique<CollectiveIndex>(capture_);
  for (size_t i = 0; i < capture_.chunks.size(); ++i) {
    const format::ChunkInfo& info = capture_.chunks[i].info;
    uint64_t first = info.min_start_ns;
    uint64_t last = std::max({info.min_start_ns, info.max_start_ns, info.max_end_ns});
    if (last == 0) {
      untimed_.push_back(i);
      continue;
    }
    if (first == 0) first = last;
    spans_.push_back({first, last, i});
  }
  for (const format::ThreadInfo& t : capture_.threads) {
    if (t.name.size() > kMaxNameBytes) {
      thread_names_[t.os_tid] = TruncateName(t.name, &cut_thread_names_.emplace_back());
    } else if (!t.name.empty()) {
      thread_names_[t.os_tid] = t.name;
    }
  }
  for (const format::StreamInfo& s : capture_.streams) {
    streams_[uint64_t{s.context_id} << 32 | s.stream_id] = &s;
  }
  demangled_count_ = capture_.strings.size();
  demangled_ = std::make_unique<std::atomic<const std::string*>[]>(demangled_count_);
  for (const format::MetadataBlob& b : capture_.metadata) {
    if (b.key_kind == format::MetadataKey::kRange) {
      // Attached to the innermost range open on its thread when it was
      // written (gpucap_metadata): keyed by that range's index.
      uint32_t innermost = ranges_->Innermost(ranges_->StackIdAt(b.os_tid, b.timestamp_ns));
      if (innermost != RangeIndex::kNone) metadata_[{b.key_kind, innermost}].push_back(&b);
    } else if (b.key_kind != format::MetadataKey::kGlobal) {
      metadata_[{b.key_kind, b.key}].push_back(&b);
    }
  }
}

Result<const StepRanges*> CaptureIndex::Steps(std::string_view pattern) const {
  std::string whole = pattern.empty() ? DefaultStepPattern(capture_) : std::string(pattern);
  std::lock_guard<std::mutex> lock(steps_mutex_);
  auto it = steps_.find(whole);
  if (it != steps_.end()) return static_cast<const StepRanges*>(it->second.get());
  auto matcher = NameMatcher::Compile(whole);
  if (!matcher.ok()) return Status::InvalidArgument("steps '" + whole + "': " + matcher.status().message());
  auto steps = std::make_unique<StepRanges>(*ranges_, capture_, *matcher);
  const StepRanges* out = steps.get();
  steps_.emplace(std::move(whole), std::move(steps));
  return out;
}

const TorchOperators& CaptureIndex::operators() const {
  std::call_once(operators_once_, [this] { operators_ = std::make_unique<TorchOperators>(*ranges_); });
  return *operators_;
}

std::vector<std::string> CaptureIndex::Warnings() const {
  std::vector<std::string> out;
  auto say = [&](uint64_t n, const std::string& what) {
    if (n != 0) out.push_back(path_ + ": " + std::to_string(n) + " " + what);
  };
  say(extent_.implausible, "timestamps more than a year from the capture's start (or past 2^63) left out of its time span");
  say(clock_->rejected(), "clock samples that cannot be (past 2^63, before 1970, or jumping by more than drift) ignored");
  say(ranges_->too_deep(), "NVTX ranges nested deeper than " + std::to_string(kMaxRangeDepth) +
                                " on their thread (a missing pop?) not used as parents");
  say(ranges_->cut_names(), "range names longer than " + std::to_string(kMaxNameBytes) + " bytes cut");
  return out;
}

std::span<const format::MetadataBlob* const> CaptureIndex::Metadata(format::MetadataKey kind, uint64_t key) const {
  if (metadata_.empty()) return {};
  auto it = metadata_.find({kind, key});
  if (it == metadata_.end()) return {};
  return it->second;
}

std::vector<size_t> CaptureIndex::ChunksOverlapping(uint64_t start, uint64_t end) const {
  std::vector<size_t> out = untimed_;
  for (const Span& s : spans_) {
    if (s.last >= start && s.first < end) out.push_back(s.chunk);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<size_t> CaptureIndex::ChunksEndingIn(uint64_t start, uint64_t end) const {
  std::vector<const Span*> hits;
  for (const Span& s : spans_) {
    if (s.last >= start && s.last < end) hits.push_back(&s);
  }
  std::sort(hits.begin(), hits.end(), [](const Span* a, const Span* b) {
    return a->last != b->last ? a->last > b->last : a->chunk < b->chunk;
  });
  std::vector<size_t> out;
  for (const Span* s : hits) out.push_back(s->chunk);
  return out;
}

CaptureIndex::~CaptureIndex() {
  for (size_t i = 0; i < demangled_count_; ++i) delete demangled_[i].load(std::memory_order_relaxed);
}

std::string_view CaptureIndex::KernelName(uint32_t index) const {
  if (index >= demangled_count_) return {};
  const std::string* name = demangled_[index].load(std::memory_order_acquire);
  return *(name != nullptr ? name : DemangleOnce(index));
}

const std::string* CaptureIndex::DemangleOnce(uint32_t index) const {
  auto mine = std::make_unique<std::string>(Demangle(capture_.strings[index].def.text));
  const std::string* published = nullptr;
  if (demangled_[index].compare_exchange_strong(published, mine.get(), std::memory_order_acq_rel,
                                                std::memory_order_acquire)) {
    return mine.release();
  }
  return published;  // another worker demangled it first; keep theirs
}

std::string_view CaptureIndex::ThreadName(uint32_t os_tid) const {
  // A name the program gave through NVTX says more than the OS name, which
  // for threads nobody named is the process name.
  std::string_view named = ranges_->ThreadName(os_tid);
  if (!named.empty()) return named;
  auto it = thread_names_.find(os_tid);
  return it != thread_names_.end() ? std::string_view(it->second) : std::string_view();
}

const format::DeviceInfo* CaptureIndex::Device(uint32_t id) const {
  for (const format::DeviceInfo& d : capture_.devices) {
    if (d.id == id) return &d;
  }
  return nullptr;
}

const format::StreamInfo* CaptureIndex::Stream(uint32_t context_id, uint32_t stream_id) const {
  auto it = streams_.find(uint64_t{context_id} << 32 | stream_id);
  return it != streams_.end() ? it->second : nullptr;
}

uint32_t CaptureIndex::pid() const {
  if (capture_.session && capture_.session->pid != 0) return capture_.session->pid;
  for (const format::ThreadInfo& t : capture_.threads) {
    if (t.pid != 0) return t.pid;
  }
  return 0x7fffffff;
}

std::string_view CaptureIndex::process_name() const {
  return capture_.session ? std::string_view(capture_.session->process_name) : std::string_view();
}

}  // namespace gpucap::builder
