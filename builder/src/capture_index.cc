#include "gpucap/builder/capture_index.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "gpucap/builder/budgets.h"
#include "gpucap/format/recording_state.h"
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
    if (!t.name.empty()) thread_names_[t.os_tid] = TruncateName(t.name, &cut_thread_names_);
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
  std::call_once(operators_once_, [this] { operators_ = std::make_unique<TorchOperators>(capture_, *ranges_); });
  return *operators_;
}

uint32_t CaptureIndex::FirstLaunchCorrelation() const {
  std::call_once(first_launch_once_, [this] {
    if (!capture_.trailer || capture_.trailer->trigger.empty()) return;
    auto holds_launches = [](const format::ChunkInfo& info) {
      for (const format::KindCount& k : info.kind_counts) {
        if (k.count != 0 && FamilyOf(k.kind) == kApis) return true;
      }
      return false;
    };
    uint32_t lowest = UINT32_MAX;
    std::vector<uint64_t> scratch;
    for (size_t i = 0; i < capture_.chunks.size(); ++i) {
      if (!holds_launches(capture_.chunks[i].info)) continue;
      ActivityTables tables;
      DecodeStats stats;
      decoder_->DecodeChunk(i, kApis, &tables, &stats, &scratch);
      for (uint32_t c : tables.apis.correlation) {
        if (c != 0) lowest = std::min(lowest, c);
      }
    }
    if (lowest != UINT32_MAX) first_launch_correlation_ = lowest;
  });
  return first_launch_correlation_;
}

const std::vector<std::pair<uint64_t, uint64_t>>& CaptureIndex::PausedStretches() const {
  std::call_once(paused_once_, [this] {
    for (const format::RecordingInterval& r : format::RecordingIntervals(capture_.metadata, UINT64_MAX)) {
      if (r.state == format::RecordingState::kPaused && r.end_ns > r.start_ns) paused_.emplace_back(r.start_ns, r.end_ns);
    }
  });
  return paused_;
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
  for (std::string& line : Contradictions()) out.push_back(std::move(line));
  return out;
}

// What the capture says that cannot all be true, each named once with the
// first place it is said: counted and reported, never trusted silently.
std::vector<std::string> CaptureIndex::Contradictions() const {
  std::vector<std::string> out;
  const std::string at = path_ + ": ";
  // Chunks claiming more records than their raw bytes can hold.
  uint64_t impossible = 0;
  std::string first;
  for (const format::ChunkView& v : capture_.chunks) {
    uint64_t stride = UINT64_MAX;
    for (const format::KindSize& k : v.info.record_sizes) {
      if (k.size != 0) stride = std::min<uint64_t>(stride, k.size);
    }
    if (stride == UINT64_MAX) stride = 8;  // no record is smaller than its kind field and a field
    if (v.info.record_count > v.info.raw_size / stride) {
      if (impossible++ == 0) {
        first = "offset " + std::to_string(v.frame_offset) + ": " + std::to_string(v.info.record_count) +
                " records in " + std::to_string(v.info.raw_size) + " raw bytes";
      }
    }
  }
  if (impossible != 0) {
    out.push_back(at + std::to_string(impossible) + " activity chunk(s) claim more records than their bytes hold (" +
                  first + "): their counts are not trusted, their records are walked");
  }
  for (const format::DeviceInfo& d : capture_.devices) {
    if (d.name.empty() && d.num_sms == 0 && d.compute_major == 0 && d.total_global_mem == 0) {
      out.push_back(at + "device " + std::to_string(d.id) +
                    " has no properties (no name, SMs, compute capability or memory): shown as an unknown GPU");
    }
  }
  uint64_t not_numbers = 0;
  for (const format::CounterSample& c : capture_.counter_samples) {
    if (!std::isfinite(c.value)) not_numbers++;
  }
  if (not_numbers != 0) {
    out.push_back(at + std::to_string(not_numbers) + " GPU counter sample(s) are NaN or infinite");
  }
  // Graph dependencies that loop: no order of the nodes can honour them.
  std::map<uint64_t, std::set<uint64_t>> edges;
  for (const format::GraphEvent& e : capture_.graphs) {
    if (e.kind == format::GraphEventKind::kDependencyAdded) edges[e.node_id].insert(e.peer_node_id);
    if (e.kind == format::GraphEventKind::kDependencyRemoved) {
      auto it = edges.find(e.node_id);
      if (it != edges.end()) it->second.erase(e.peer_node_id);
    }
  }
  std::map<uint64_t, uint8_t> state;  // 1: on the path, 2: done
  uint64_t cycles = 0, cycle_node = 0;
  for (const auto& kv : edges) {
    uint64_t root = kv.first;
    if (state[root] != 0) continue;
    std::vector<std::pair<uint64_t, std::set<uint64_t>::const_iterator>> path;
    state[root] = 1;
    path.emplace_back(root, edges[root].cbegin());
    while (!path.empty()) {
      auto& [node, next] = path.back();
      const std::set<uint64_t>& to = edges[node];
      if (next == to.cend()) {
        state[node] = 2;
        path.pop_back();
        continue;
      }
      uint64_t peer = *next++;
      uint8_t& st = state[peer];
      if (st == 1) {
        if (cycles++ == 0) cycle_node = peer;
      } else if (st == 0) {
        st = 1;
        path.emplace_back(peer, edges[peer].cbegin());
      }
    }
  }
  if (cycles != 0) {
    out.push_back(at + "graph dependencies form a cycle (through node " + std::to_string(cycle_node) +
                  "): the dependency arrows drawn cannot all be true");
  }
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

CaptureOpener OpenedCaptures(std::span<const CaptureIndex* const> captures) {
  std::vector<const CaptureIndex*> held(captures.begin(), captures.end());
  return [held](size_t i) -> Result<std::shared_ptr<const CaptureIndex>> {
    return std::shared_ptr<const CaptureIndex>(held.at(i), [](const CaptureIndex*) {});
  };
}

}  // namespace gpucap::builder
