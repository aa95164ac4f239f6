// Kineto's Chrome trace JSON. Field order and names follow what
// torch.profiler writes (shared/reference/kineto_sample.json) so tools that
// read Kineto traces (Perfetto, chrome://tracing, HTA, TensorBoard) read
// these; gpucap's additions are extra args and a "gpucap" metadata object.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <vector>

#include "gpucap/builder/renderer.h"
#include "json_writer.h"

namespace gpucap::builder {
namespace {

class ChromeJsonRenderer : public TraceSink {
 public:
  explicit ChromeJsonRenderer(std::unique_ptr<ByteSink> out) : out_(std::move(out)), w_(out_.get()) {}

  // A renderer of one piece of `whole`'s slices (after its Begin): the same
  // event heads, caches of its own. Every event after Begin's metadata
  // starts with ",\n", so a piece's text is what `whole` would have written.
  ChromeJsonRenderer(const ChromeJsonRenderer& whole, std::unique_ptr<ByteSink> out)
      : out_(std::move(out)), w_(out_.get()), base_(whole.base_), first_(false), tracks_(whole.tracks_),
        piece_(true) {
    for (size_t i = 0; i < 2; ++i) {
      for (size_t c = 0; c < kCategories; ++c) heads_[i][c] = whole.heads_[i][c];
    }
  }

  std::unique_ptr<TraceSink> NewPiece(RenderedPiece* out) override {
    if (piece_ || first_) return nullptr;
    return std::make_unique<ChromeJsonRenderer>(*this, NewRenderedPieceSink(out));
  }

  Status AddPiece(RenderedPiece* piece) override {
    GPUCAP_RETURN_IF_ERROR(w_.Flush());
    return piece->MoveTo(out_.get());
  }

  Status Begin(const TraceHeader& h) override {
    Status pieces = MakePieces(h);
    if (!pieces.ok()) return pieces;
    w_.Raw("{\n\"schemaVersion\":1,\n");
    DistributedInfo(h);
    DeviceProperties(h);
    GpucapInfo(h);
    MetadataEvents(h);
    return w_.MaybeFlush();
  }

  Status AddSlice(const Slice& s) override {
    const TrackRef& t = tracks_[s.track];
    std::string_view name = EscapedName(s.name_id, s.name);
    // The fixed part of an event through one cursor: most of a trace.
    char* p = w_.Room(name.size() + 2 * Piece::kCapacity + 2 * JsonWriter::kMaxNumber + 32);
    *p = ',';
    p += !first_;
    *p++ = '\n';
    first_ = false;
    size_t category = static_cast<size_t>(s.category);
    p = PutPiece(p, heads_[s.instant() ? 1 : 0][category < kCategories ? category : 0]);
    p = PutBytes(p, name);
    p = PutPiece(p, t.where);
    p = ts_text_.Put(p, s.ts_ns - base_);
    if (!s.instant()) {
      p = PutBytes(p, ",\"dur\":");
      p = PutMicros(p, s.dur_ns);
    }
    w_.Commit(p);
    if (!s.args.empty()) {
      w_.Raw(",\"args\":{");
      size_t shared_end = s.shared_id != 0 ? size_t{s.shared_first} + s.shared_count : 0;
      for (size_t i = 0; i < s.args.size();) {
        if (i) w_.Char(',');
        if (i == s.shared_first && shared_end > i && shared_end <= s.args.size()) {
          WriteShared(s.shared_id, s.args.subspan(i, s.shared_count));
          i = shared_end;
        } else {
          WriteArg(s.args[i++]);
        }
      }
      w_.Char('}');
    }
    w_.Char('}');
    // Flow v1: "s" binds to the slice enclosing its time on its thread, "f"
    // with "bp":"e" to the enclosing slice too. Launch flows start where the
    // launch starts (as Kineto); dependency flows leave where the
    // predecessor ends and arrive where the successor starts.
    for (const FlowEnd& f : s.flows_out) {
      int64_t at = s.ts_ns;
      if (f.kind == FlowKind::kGraphDependency && s.dur_ns > 1) at = s.ts_ns + s.dur_ns - 1;
      Flow('s', f, t, at);
    }
    for (const FlowEnd& f : s.flows_in) Flow('f', f, t, s.ts_ns);
    return w_.MaybeFlush();
  }

  Status AddCounter(const CounterPoint& c) override {
    const TrackRef& t = tracks_[c.track];
    Open();
    w_.Raw("{\"ph\":\"C\",\"name\":");
    w_.String(t.name);
    w_.Raw(",\"pid\":");
    w_.Uint(t.pid);
    w_.Raw(",\"ts\":");
    w_.Micros(c.ts_ns - base_);
    w_.Raw(",\"args\":{\"value\":");
    w_.Double(c.value);
    w_.Raw("}}");
    return w_.MaybeFlush();
  }

  Status End() override {
    if (piece_) {
      GPUCAP_RETURN_IF_ERROR(w_.Flush());
      return out_->Close();
    }
    // The window itself, as Kineto's "PyTorch Profiler (0)" span: a window
    // with nothing else in it still has a duration event, which readers
    // that tabulate ts and dur (HTA) need.
    Open();
    w_.Raw("{\"ph\":\"X\",\"cat\":\"Trace\",\"name\":");
    // Named by label where there is one: a trimmed copy numbers its windows
    // afresh, and must still give the same trace.
    w_.String(window_.label.empty() ? "gpucap window " + std::to_string(window_.index)
                                    : "gpucap window: " + window_.label);
    w_.Raw(",\"pid\":");
    w_.Uint(kWindowPid);
    w_.Raw(",\"tid\":");
    w_.Uint(kWindowTid);
    w_.Raw(",\"ts\":");
    w_.Micros(window_.start_ns - base_);
    w_.Raw(",\"dur\":");
    w_.Micros(std::max<int64_t>(window_.end_ns - window_.start_ns, 0));
    w_.Raw("}");
    w_.Raw("\n],\n\"traceName\":");
    w_.String(trace_name_);
    w_.Raw("\n}\n");
    GPUCAP_RETURN_IF_ERROR(w_.Flush());
    return out_->Close();
  }

 private:
  // Begin's parts, in the order they write.
  // The per-track and per-category event heads, made once.
  Status MakePieces(const TraceHeader& h) {
    base_ = h.base_time_ns;
    trace_name_ = h.trace_name;
    window_ = {h.window_index, h.window_label, h.window_start_ns, h.window_end_ns};
    for (const Track& t : h.tracks) {
      const Process& p = h.processes[t.process];
      std::string where = ",\"pid\":" + std::to_string(p.pid) + ",\"tid\":" + std::to_string(t.tid) + ",\"ts\":";
      tracks_.push_back({p.pid, t.tid, t.name, Piece(where)});
    }
    for (int instant = 0; instant < 2; ++instant) {
      for (size_t c = 0; c < kCategories; ++c) {
        std::string head = instant ? "{\"ph\":\"i\",\"cat\":\"" + std::string(CategoryName(Category(c))) +
                                         "\",\"s\":\"t\",\"name\":"
                                   : "{\"ph\":\"X\",\"cat\":\"" + std::string(CategoryName(Category(c))) +
                                         "\",\"name\":";
        heads_[instant][c] = Piece(head);
      }
    }
    // The pieces are gpucap's own text and uint32 ids; a cut one would be
    // broken JSON, so say so rather than write it.
    bool complete = flow_start_.complete && flow_end_.complete;
    for (const FlowTail* tail : {&launch_tail_, &dependency_tail_}) complete &= tail->start.complete && tail->end.complete;
    for (const auto& row : heads_) {
      for (const Piece& head : row) complete &= head.complete;
    }
    for (const TrackRef& t : tracks_) complete &= t.where.complete;
    if (!complete) return Status::Internal("Chrome JSON: an event piece is longer than its 64-byte slot");
    return Status::Ok();
  }

  void DistributedInfo(const TraceHeader& h) {
    // HTA finds the rank in the raw text, before any parsing, with a pattern
    // that wants whitespace after the colon, as Kineto's writer puts it; and
    // in the first lines. No other "rank" is written with a space, so the
    // text's first match is the parser's value.
    if (h.rank >= 0) {
      w_.Raw("\"distributedInfo\":{");
      if (!h.distributed_backend.empty()) {
        w_.Raw("\"backend\": ");
        w_.String(h.distributed_backend);
        w_.Raw(",");
      }
      w_.Raw("\"rank\": ");
      w_.Int(h.rank);
      w_.Raw(",\"world_size\": ");
      w_.Int(h.world_size);
      if (h.local_rank >= 0) {
        w_.Raw(",\"local_rank\": ");
        w_.Int(h.local_rank);
      }
      w_.Raw("},\n");
    }
  }

  void DeviceProperties(const TraceHeader& h) {
    // TensorBoard's plugin looks a device up by its id as a position in this
    // list: every id from 0 to the highest has its entry, a device the
    // capture holds no facts about by its id alone.
    std::vector<const format::DeviceInfo*> devices;
    for (const format::DeviceInfo& d : h.devices) devices.push_back(&d);
    std::stable_sort(devices.begin(), devices.end(), [](auto* a, auto* b) { return a->id < b->id; });
    w_.Raw("\"deviceProperties\":[");
    uint64_t next_id = 0;
    for (size_t i = 0; i < devices.size(); ++i) {
      const format::DeviceInfo& d = *devices[i];
      if (d.id < next_id) continue;  // the same device twice (a merge of one host's ranks)
      for (; next_id < d.id && next_id < kMaxDeviceGap; ++next_id) {
        w_.Raw(next_id ? ",\n{\"id\":" : "\n{\"id\":");
        w_.Uint(next_id);
        w_.Raw("}");
      }
      w_.Raw(next_id ? ",\n{" : "\n{");
      next_id = uint64_t{d.id} + 1;
      w_.Raw("\"id\":"); w_.Uint(d.id);
      w_.Raw(",\"name\":"); w_.String(d.name);
      w_.Raw(",\"totalGlobalMem\":"); w_.Uint(d.total_global_mem);
      w_.Raw(",\"computeMajor\":"); w_.Int(d.compute_major);
      w_.Raw(",\"computeMinor\":"); w_.Int(d.compute_minor);
      w_.Raw(",\"maxThreadsPerBlock\":"); w_.Int(d.max_threads_per_block);
      w_.Raw(",\"maxThreadsPerMultiprocessor\":"); w_.Int(d.max_threads_per_multiprocessor);
      w_.Raw(",\"regsPerBlock\":"); w_.Int(d.regs_per_block);
      w_.Raw(",\"warpSize\":"); w_.Int(d.warp_size);
      w_.Raw(",\"sharedMemPerBlock\":"); w_.Int(d.shared_mem_per_block);
      w_.Raw(",\"numSms\":"); w_.Int(d.num_sms);
      w_.Raw(",\"regsPerMultiprocessor\":"); w_.Int(d.regs_per_multiprocessor);
      w_.Raw(",\"sharedMemPerBlockOptin\":"); w_.Int(d.shared_mem_per_block_optin);
      w_.Raw(",\"sharedMemPerMultiprocessor\":"); w_.Int(d.shared_mem_per_multiprocessor);
      w_.Raw("}");
    }
  }

  // The trace's top-level facts, gpucap's object, and the start of traceEvents.
  void GpucapInfo(const TraceHeader& h) {
    w_.Raw("\n],\n\"trace_id\":\"");
    w_.Raw(TraceId(h));
    w_.Raw("\",\n\"cuda_driver_version\":");
    w_.Int(h.cuda_driver_version);
    w_.Raw(",\n\"cuda_runtime_version\":");
    w_.Int(h.cuda_runtime_version);
    w_.Raw(",\n\"cupti_version\":");
    w_.Uint(h.cupti_version);
    w_.Raw(",\n\"gpucap\":{\"capture\":");
    w_.String(h.capture_path);
    w_.Raw(",\"host\":");
    w_.String(h.host);
    w_.Raw(",\"window\":{\"index\":");
    w_.Uint(h.window_index);
    w_.Raw(",\"label\":");
    w_.String(h.window_label);
    w_.Raw(",\"start_ns\":");
    w_.Int(h.window_start_ns);
    w_.Raw(",\"end_ns\":");
    w_.Int(h.window_end_ns);
    w_.Raw("},\"counts\":{");
    for (size_t i = 0; i < h.counts.size(); ++i) {
      if (i) w_.Raw(",");
      w_.String(h.counts[i].first);
      w_.Raw(":");
      w_.Uint(h.counts[i].second);
    }
    w_.Raw("},\"warnings\":[");
    for (size_t i = 0; i < h.warnings.size(); ++i) {
      if (i) w_.Raw(",");
      w_.String(h.warnings[i]);
    }
    w_.Raw("]");
    if (!h.recording.empty()) Recording(h.recording);
    w_.Raw("},\n\"displayTimeUnit\":\"ms\",\n\"baseTimeNanoseconds\":");
    w_.Int(base_);
    w_.Raw(",\n\"traceEvents\":[");
  }

  void MetadataEvents(const TraceHeader& h) {
    int64_t ts = h.window_start_ns;
    for (const Process& p : h.processes) {
      Meta("process_name", p.pid, 0, ts, "name", p.name);
      if (!p.label.empty()) Meta("process_labels", p.pid, 0, ts, "labels", p.label);
      MetaIndex("process_sort_index", p.pid, 0, ts, p.sort_index);
    }
    for (const Track& t : h.tracks) {
      if (t.kind == Track::Kind::kCounter) continue;
      uint32_t pid = h.processes[t.process].pid;
      Meta("thread_name", pid, t.tid, ts, "name", t.name);
      MetaIndex("thread_sort_index", pid, t.tid, ts, t.sort_index);
    }
    Meta("process_name", kWindowPid, 0, ts, "name", "Spans");
    MetaIndex("process_sort_index", kWindowPid, 0, ts, kWindowSortIndex);
    Meta("thread_name", kWindowPid, kWindowTid, ts, "name", "gpucap window");
  }

  // The window's own span (End) sits in a process of its own, as Kineto's
  // "Spans": a number, as Perfetto's importer wants, beside the overhead's
  // INT32_MAX and above any Linux pid; listed last.
  static constexpr uint32_t kWindowPid = 0x7ffffffe, kWindowTid = 1;
  static constexpr int64_t kWindowSortIndex = 0x7ffffffe;
  // Device ids past this are not padded for (a damaged capture's garbage).
  static constexpr uint64_t kMaxDeviceGap = 1024;

  // Kineto's trace_id: 32 hex digits naming one trace. Here a hash of what
  // tells this window of this process apart, so a rebuild gives the same id,
  // and so does a trimmed copy (where the window's index may differ).
  static std::string TraceId(const TraceHeader& h) {
    auto mix = [](uint64_t hash, std::string_view bytes) {
      for (unsigned char c : bytes) hash = (hash ^ c) * 0x100000001b3ull;  // FNV-1a
      return (hash ^ 0xff) * 0x100000001b3ull;
    };
    std::string facts = h.host + '\0' + h.window_label + '\0' + std::to_string(h.rank) + '\0' + std::to_string(h.window_start_ns) + '\0' +
                        std::to_string(h.window_end_ns);
    for (const Process& p : h.processes) facts += '\0' + std::to_string(p.pid) + p.name;
    uint64_t a = mix(0xcbf29ce484222325ull, facts), b = mix(0x84222325cbf29ce4ull ^ a, facts);
    char text[33];
    std::snprintf(text, sizeof text, "%016" PRIX64 "%016" PRIX64, a, b);
    return text;
  }

  struct WindowFacts {
    uint32_t index = 0;
    std::string label;
    int64_t start_ns = 0, end_ns = 0;
  };

  struct TrackRef {
    uint32_t pid, tid;
    std::string name;
    Piece where;  // ,"pid":P,"tid":T,"ts":  (every event on the track writes it)
  };

  // A run of args repeated across slices: formatted the first time, copied
  // after.
  void WriteShared(uint32_t id, std::span<const Arg> run) {
    size_t at = id % kSharedIdsLive;
    if (at >= shared_.size()) shared_.resize(std::min<size_t>(kSharedIdsLive, std::max(at + 1, 2 * shared_.size())));
    SharedText& slot = shared_[at];
    if (slot.id == id) {
      w_.Raw(slot.text);
      return;
    }
    size_t from = w_.Position();
    for (size_t i = 0; i < run.size(); ++i) {
      if (i) w_.Char(',');
      WriteArg(run[i]);
    }
    slot.id = id;
    slot.text.assign(w_.Since(from));
  }

  void Open() {
    w_.Raw(first_ ? "\n" : ",\n");
    first_ = false;
  }

  // The gpucap object's "recording": when the recorder recorded within this
  // window (realtime ns), and why (a sampled step names its range).
  void Recording(const std::vector<format::RecordingInterval>& intervals) {
    w_.Raw(",\"recording\":[");
    for (size_t i = 0; i < intervals.size(); ++i) {
      const format::RecordingInterval& r = intervals[i];
      w_.Raw(i ? ",{\"state\":" : "{\"state\":");
      w_.String(format::RecordingStateName(r.state));
      w_.Raw(",\"start_ns\":");
      w_.Uint(r.start_ns);
      w_.Raw(",\"end_ns\":");
      w_.Uint(r.end_ns);
      w_.Raw(",\"why\":");
      w_.String(r.why);
      w_.Raw("}");
    }
    w_.Raw("]");
  }

  void Meta(const char* what, uint32_t pid, uint32_t tid, int64_t ts, const char* key, std::string_view value) {
    Open();
    w_.Raw("{\"name\":\"");
    w_.Raw(what);
    w_.Raw("\",\"ph\":\"M\",\"ts\":");
    w_.Micros(ts - base_);
    w_.Raw(",\"pid\":");
    w_.Uint(pid);
    w_.Raw(",\"tid\":");
    w_.Uint(tid);
    w_.Raw(",\"args\":{\"");
    w_.Raw(key);
    w_.Raw("\":");
    w_.String(value);
    w_.Raw("}}");
  }

  void MetaIndex(const char* what, uint32_t pid, uint32_t tid, int64_t ts, int64_t index) {
    Open();
    w_.Raw("{\"name\":\"");
    w_.Raw(what);
    w_.Raw("\",\"ph\":\"M\",\"ts\":");
    w_.Micros(ts - base_);
    w_.Raw(",\"pid\":");
    w_.Uint(pid);
    w_.Raw(",\"tid\":");
    w_.Uint(tid);
    w_.Raw(",\"args\":{\"sort_index\":");
    w_.Int(index);
    w_.Raw("}}");
  }

  // Flow events are half of a trace's events: written from a few
  // prebuilt pieces.
  void Flow(char ph, const FlowEnd& f, const TrackRef& t, int64_t ts) {
    const FlowTail& tail = f.kind == FlowKind::kLaunch           ? launch_tail_
                           : f.kind == FlowKind::kGraphDependency ? dependency_tail_
                                                                  : forward_backward_tail_;
    char* p = w_.Room(3 * Piece::kCapacity + 2 * JsonWriter::kMaxNumber);
    p = PutPiece(p, ph == 's' ? flow_start_ : flow_end_);
    p = PutUint(p, f.id);
    p = PutPiece(p, t.where);
    p = ts_text_.Put(p, ts - base_);
    p = PutPiece(p, ph == 'f' ? tail.end : tail.start);
    w_.Commit(p);
  }

  // ,"cat":"<kind>","name":"<kind>"} and the same with "bp":"e" for ends.
  struct FlowTail {
    explicit FlowTail(std::string_view kind)
        : start(",\"cat\":\"" + std::string(kind) + "\",\"name\":\"" + std::string(kind) + "\"}"),
          end(",\"cat\":\"" + std::string(kind) + "\",\"name\":\"" + std::string(kind) + "\",\"bp\":\"e\"}") {}
    Piece start, end;
  };
  const FlowTail launch_tail_{FlowKindName(FlowKind::kLaunch)};
  const FlowTail dependency_tail_{FlowKindName(FlowKind::kGraphDependency)};
  const FlowTail forward_backward_tail_{FlowKindName(FlowKind::kForwardBackward)};
  const Piece flow_start_{",\n{\"ph\":\"s\",\"id\":"};
  const Piece flow_end_{",\n{\"ph\":\"f\",\"id\":"};
  static constexpr size_t kCategories = static_cast<size_t>(Category::kCudaGraph) + 1;
  Piece heads_[2][kCategories];  // {"ph":"X","cat":"<category>","name":  and the instant's

  // Escaping a kernel name costs more than writing it: done once per name.
  std::string_view EscapedName(uint32_t id, std::string_view name) {
    if (id == 0) {
      unnamed_.clear();
      AppendJsonString(&unnamed_, name);
      return unnamed_;
    }
    if (id >= names_.size()) names_.resize(id + 1);
    std::string& escaped = names_[id];
    if (escaped.empty()) AppendJsonString(&escaped, name);
    return escaped;
  }

  void WriteArg(const Arg& a) {
    if (a.foreign_key) {
      w_.String(a.key);
      w_.Char(':');
    } else {
      w_.Key(a.key);
    }
    switch (a.type) {
      case Arg::Type::kInt: w_.Int(a.i()); break;
      case Arg::Type::kUint: w_.Uint(a.u()); break;
      case Arg::Type::kDouble: w_.Double(a.d()); break;
      case Arg::Type::kFloat6: w_.Float6(a.d()); break;
      case Arg::Type::kString: w_.String(a.s()); break;
      case Arg::Type::kInts:
        w_.Char('[');
        for (size_t i = 0; i < a.ints().size(); ++i) {
          if (i) w_.Char(',');
          w_.Int(a.ints()[i]);
        }
        w_.Char(']');
        break;
      case Arg::Type::kStrings:
        w_.Char('[');
        for (size_t i = 0; i < a.strings().size(); ++i) {
          if (i) w_.Char(',');
          w_.String(a.strings()[i]);
        }
        w_.Char(']');
        break;
      case Arg::Type::kJson: w_.Raw(a.s()); break;
    }
  }

  std::unique_ptr<ByteSink> out_;
  JsonWriter w_;
  int64_t base_ = 0;
  bool first_ = true;
  std::vector<TrackRef> tracks_;
  std::vector<std::string> names_;
  std::string unnamed_;
  TimeText ts_text_;
  // The text of Slice::shared_id's args, in slot id % kSharedIdsLive
  // (trace_model.h): the ids of the last runs only. A cache of every id
  // grew with the window: 178 MB in the 20M-event bench's `all` window.
  struct SharedText {
    uint32_t id = 0;  // 0: empty
    std::string text;
  };
  std::vector<SharedText> shared_;
  std::string trace_name_;
  WindowFacts window_;
  bool piece_ = false;  // renders a piece of another's slices (no header, no end)
};

}  // namespace

std::unique_ptr<TraceSink> NewChromeJsonRenderer(std::unique_ptr<ByteSink> out) {
  return std::make_unique<ChromeJsonRenderer>(std::move(out));
}

}  // namespace gpucap::builder
