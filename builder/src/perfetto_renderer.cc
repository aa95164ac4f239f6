// Perfetto's native trace format: a stream of TracePackets
// (shared/reference/perfetto-facts.md has the wire facts and the importer's
// rules this follows).
//
// Layout of the stream:
//   - track descriptors for every process, GPU and track (perfetto_tracks.h),
//     on no sequence;
//   - one packet sequence per track. Its first packet is a clock snapshot
//     that starts a sequence-scoped incremental clock at the track's first
//     timestamp; its next one clears and sets the sequence's incremental
//     state, with defaults that name the clock and the track, so no later
//     packet carries a clock id or a track uuid. Timestamps are then
//     deltas from the sequence's previous packet: a track's events are
//     written in time order (a slice's END when the next slice starts at or
//     after it), and a sequence per track keeps its deltas small and never
//     negative.
//   - names, categories, argument names and short string values interned:
//     defined on a sequence the first time one of its packets uses them,
//     but all of a run's definitions together, sorted, in one packet ahead
//     of the run (a run: consecutive packets of one sequence, up to
//     kRunBytes). The text then sits in one block that gzip compresses as
//     text (like names side by side), not scattered between events: -2 to
//     -5% on the fixtures (bench/README.md, "pftrace size").
//   - nothing the importer does without: no sequence_flags after a
//     sequence's first packet, whole counter values as varints. Flow ids
//     go in Perfetto's current fixed64 fields (perfetto_fields.h), not the
//     deprecated varint ones.
//   - pieces (a run of a large window's slices rendered on another thread,
//     trace_model.h): a sequence of their own for each track they hold
//     (id: a base above the whole's sequence ids + the piece's index + the
//     track; unique, as both only grow along the window), with iids of
//     their own in the order the piece first uses them, so a piece's bytes
//     depend on nothing else.
//     A sequence's state (clock, defaults, iids) is its own, so pieces side
//     by side stay correct. The join cuts pieces where every slice of the
//     track before has ended, so a piece's sequence holds whole slices.
//
// Complete slices become BEGIN/END pairs: the END is held on the track's
// stack of open slices and written once a later slice starts at or after
// it, so at equal times an END always comes before the next BEGIN. The join
// has already moved slices that would partially overlap to lanes, so every
// track's slices nest.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpucap/builder/renderer.h"
#include "gpucap/builder/output.h"
#include "gpucap/builder/trace_keys.h"
#include "flat_map.h"
#include "perfetto_fields.h"
#include "perfetto_interning.h"
#include "perfetto_recording.h"
#include "perfetto_tracks.h"
#include "proto_writer.h"

namespace gpucap::builder {
namespace {

// Longer strings are written where they are used: they are rarely repeated
// (descriptions, metadata blobs), and interning would keep them all.
constexpr size_t kMaxInternedString = 128;
// Bytes gathered before they go to the output.
constexpr size_t kFlushBytes = 1 << 20;
// Names without the join's name id get iids above every name id.
constexpr uint64_t kOwnNameBase = uint64_t{1} << 32;
// A run's packets are held until this many bytes, then written after the
// run's interned data.
constexpr size_t kRunBytes = 1 << 20;

class PerfettoRenderer : public TraceSink {
 public:
  explicit PerfettoRenderer(std::unique_ptr<ByteSink> out) : out_(std::move(out)) {}

  // A renderer of pieces of `whole`'s slices, after its Begin.
  PerfettoRenderer(const PerfettoRenderer& whole, RenderedPiece* out)
      : out_(NewRenderedPieceSink(out)), piece_sequence_base_(whole.piece_sequence_base_), piece_(out) {
    for (const Sequence& q : whole.sequences_) track_uuids_.push_back(q.track_uuid);
  }

  std::unique_ptr<TraceSink> NewPiece(RenderedPiece* out) override {
    if (piece_ != nullptr || sequences_.empty()) return nullptr;
    return std::make_unique<PerfettoRenderer>(*this, out);
  }

  Status AddPiece(RenderedPiece* piece) override {
    GPUCAP_RETURN_IF_ERROR(Flush());
    return piece->MoveTo(out_.get());
  }

  Status Begin(const TraceHeader& h) override {
    TrackLayout layout = LayOutTracks(h);
    uint64_t free_uuid = 1;
    for (const TrackDescriptorSpec& d : layout.descriptors) {
      WriteDescriptor(d, h);
      free_uuid = std::max(free_uuid, d.uuid + 1);
    }
    WriteRecordingTrack(h, free_uuid, static_cast<uint32_t>(h.tracks.size() + 1), &w_);
    piece_sequence_base_ = static_cast<uint32_t>(h.tracks.size() + 2);
    sequences_.resize(h.tracks.size());
    for (size_t i = 0; i < h.tracks.size(); ++i) {
      sequences_[i].id = static_cast<uint32_t>(i + 1);
      sequences_[i].track_uuid = layout.track_uuid[i];
    }
    EndRun();
    return MaybeFlush();
  }

  Status AddSlice(const Slice& s) override {
    if (piece_ != nullptr) [[unlikely]] return AddPieceSlice(s);
    if (s.track >= sequences_.size()) return Status::Internal("pftrace: slice on an unknown track");
    return AddSliceTo(sequences_[s.track], s);
  }

  Status AddCounter(const CounterPoint& c) override {
    if (c.track >= sequences_.size()) return Status::Internal("pftrace: counter on an unknown track");
    Sequence& q = sequences_[c.track];
    EnterRun(q);
    auto packet = StartPacket(q, c.ts_ns);
    auto event = w_.Begin(pf::packet::kTrackEvent);
    w_.Varint(pf::event::kType, pf::event::kCounter);
    // Whole values (bytes, counts, MHz) as varints; the importer takes
    // either field as the same double.
    if (!std::signbit(c.value) && c.value < 0x1p53 && c.value == static_cast<double>(static_cast<int64_t>(c.value))) {
      w_.Varint(pf::event::kCounterValue, static_cast<uint64_t>(c.value));
    } else {
      w_.Double(pf::event::kDoubleCounterValue, c.value);
    }
    w_.End(event);
    FinishPacket(q, c.ts_ns, packet);
    return MaybeFlush();
  }

  Status End() override {
    if (piece_ != nullptr) return EndPiece();
    for (Sequence& q : sequences_) {
      EnterRun(q);
      CloseUntil(q, INT64_MAX);
      GPUCAP_RETURN_IF_ERROR(MaybeFlush());
    }
    EndRun();
    GPUCAP_RETURN_IF_ERROR(Flush());
    return out_->Close();
  }

 private:
  // The argument names of a sequence's last slice: the next slice on a
  // track mostly has the same ones, from the same literals.
  struct Layout {
    std::vector<std::string_view> keys;
    std::vector<uint64_t> iids;    // per argument
    std::vector<uint32_t> order;   // the order arguments are written in
    bool reusable = false;         // every key a literal
  };

  static bool SameLayout(const Layout& l, std::span<const Arg> args) {
    if (!l.reusable || l.keys.size() != args.size()) return false;
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].key.data() != l.keys[i].data() || args[i].key.size() != l.keys[i].size() || args[i].foreign_key) {
        return false;
      }
    }
    return true;
  }

  struct Entry {
    uint32_t field;
    uint64_t iid;
    size_t at, size;  // its text in entry_text_
  };

  // One track's packet sequence.
  struct Sequence {
    uint32_t id = 0;
    uint64_t track_uuid = 0;
    bool started = false;    // its first packet is written (into a run)
    bool announced = false;  // its clock and defaults are out
    int64_t first_ts = 0;
    int64_t last_ts = 0;
    std::vector<int64_t> open;  // ends of the open slices, innermost last
    uint32_t categories = 0;    // bit per Category defined
    IidSet names, own_names, arg_names, strings;
    Layout layout;
  };

  // A piece's slice: on the piece's sequence for its track, started when
  // the track changes (a piece's slices come track by track).
  Status AddPieceSlice(const Slice& s) {
    if (s.track >= track_uuids_.size()) return Status::Internal("pftrace: slice on an unknown track");
    if (!piece_sequence_open_ || piece_track_ != s.track) {
      if (piece_sequence_open_) CloseSequence(piece_sequence_);
      piece_sequence_open_ = true;
      piece_track_ = s.track;
      piece_sequence_ = Sequence();
      piece_sequence_.id = piece_sequence_base_ + piece_->index + s.track;
      piece_sequence_.track_uuid = track_uuids_[s.track];
    }
    return AddSliceTo(piece_sequence_, s);
  }

  void CloseSequence(Sequence& q) {
    EnterRun(q);
    CloseUntil(q, INT64_MAX);
    EndRun();
  }

  // Ends the piece: its bytes out, and every id it gave forgotten, so that
  // the next piece's bytes depend on its slices alone.
  Status EndPiece() {
    if (piece_sequence_open_) CloseSequence(piece_sequence_);
    piece_sequence_open_ = false;
    own_names_ = StringIds();
    arg_names_ = StringIds();
    strings_ = StringIds();
    correlation_iid_ = arg_names_.Id(trace_keys::kCorrelation);
    external_id_iid_ = arg_names_.Id(trace_keys::kExternalId);
    piece_names_.Reset(0);
    Status status = piece_status_;
    piece_status_ = Status::Ok();
    GPUCAP_RETURN_IF_ERROR(status);
    GPUCAP_RETURN_IF_ERROR(Flush());
    return out_->Close();
  }

  Status AddSliceTo(Sequence& q, const Slice& s) {
    EnterRun(q);
    CloseUntil(q, s.ts_ns);
    if (!s.instant() && !q.open.empty() && s.ts_ns + s.dur_ns > q.open.back()) {
      // The importer would nest it anyway, silently wrong: the join puts
      // such slices on lanes, so this is a bug, and said so.
      return Status::Internal("pftrace: slice '" + std::string(s.name) + "' at " + std::to_string(s.ts_ns) +
                              " overlaps the slice open on its track without nesting in it");
    }
    Intern(q, s);
    auto packet = StartPacket(q, s.ts_ns);
    auto event = w_.Begin(pf::packet::kTrackEvent);
    w_.Varint(pf::event::kType, s.instant() ? pf::event::kInstant : pf::event::kSliceBegin);
    w_.Varint(pf::event::kNameIid, name_iid_);
    w_.Varint(pf::event::kCategoryIids, CategoryIid(s.category));
    WriteArgs(q.layout, s.args);
    // Flow ids unpacked (the importer ignores packed ones), in the current
    // fixed64 fields (perfetto_fields.h).
    for (const FlowEnd& f : s.flows_out) w_.Fixed64(pf::event::kFlowIds, FlowId(f));
    for (const FlowEnd& f : s.flows_in) w_.Fixed64(pf::event::kTerminatingFlowIds, FlowId(f));
    w_.End(event);
    FinishPacket(q, s.ts_ns, packet);
    if (!s.instant()) q.open.push_back(s.ts_ns + s.dur_ns);
    return MaybeFlush();
  }

  static uint64_t CategoryIid(Category c) { return static_cast<uint64_t>(c) + 1; }
  // The join's flow ids carry their kind in their high bits
  // (trace_keys.h), so they are unique in the trace as they are, and the
  // same as the Chrome JSON's. A launch's is its correlation id: the same
  // varint bytes as the correlation argument beside it.
  static uint64_t FlowId(const FlowEnd& f) { return f.id; }

  void WriteDescriptor(const TrackDescriptorSpec& d, const TraceHeader& h) {
    auto packet = w_.Begin(pf::trace::kPacket);
    auto td = w_.Begin(pf::packet::kTrackDescriptor);
    w_.Varint(pf::track::kUuid, d.uuid);
    if (d.parent_uuid != 0) w_.Varint(pf::track::kParentUuid, d.parent_uuid);
    switch (d.kind) {
      case TrackDescriptorSpec::Kind::kProcess: {
        auto p = w_.Begin(pf::track::kProcess);
        w_.Int(pf::process::kPid, d.pid);
        w_.String(pf::process::kProcessName, d.name);
        w_.End(p);
        break;
      }
      case TrackDescriptorSpec::Kind::kThread: {
        auto t = w_.Begin(pf::track::kThread);
        w_.Int(pf::thread::kPid, d.pid);
        w_.Int(pf::thread::kTid, d.tid);
        w_.String(pf::thread::kThreadName, d.name);
        w_.End(t);
        break;
      }
      case TrackDescriptorSpec::Kind::kCounter: {
        w_.String(pf::track::kName, d.name);
        auto c = w_.Begin(pf::track::kCounter);
        if (d.unit_bytes) w_.Varint(pf::counter::kUnit, pf::counter::kUnitSizeBytes);
        if (!d.unit_name.empty()) w_.String(pf::counter::kUnitName, d.unit_name);
        w_.End(c);
        break;
      }
      case TrackDescriptorSpec::Kind::kGroup:
      case TrackDescriptorSpec::Kind::kSlices:
        w_.String(pf::track::kName, d.name);
        break;
    }
    if (d.explicit_child_order) w_.Varint(pf::track::kChildOrdering, pf::track::kOrderingExplicit);
    if (d.rank) w_.Int(pf::track::kSiblingOrderRank, *d.rank);
    if (d.never_merge) w_.Varint(pf::track::kSiblingMergeBehavior, pf::track::kMergeNone);
    std::string description = d.description;
    if (d.kind == TrackDescriptorSpec::Kind::kProcess && d.parent_uuid == 0) description = TraceDescription(h);
    if (!description.empty()) w_.String(pf::track::kDescription, description);
    w_.End(td);
    w_.End(packet);
  }

  // What Chrome JSON puts in its "gpucap" object, for a person reading the
  // process track's description.
  static std::string TraceDescription(const TraceHeader& h) {
    std::string s = "gpucap trace " + h.trace_name + ": window " + std::to_string(h.window_index);
    if (!h.window_label.empty()) s += " (" + h.window_label + ")";
    s += " of " + h.capture_path;
    if (!h.host.empty()) s += " recorded on " + h.host;
    s += ". CUDA driver " + std::to_string(h.cuda_driver_version) + ", runtime " +
         std::to_string(h.cuda_runtime_version) + ", CUPTI " + std::to_string(h.cupti_version) + ".";
    for (const auto& [name, n] : h.counts) {
      if (n != 0) s += " " + name + ": " + std::to_string(n) + ".";
    }
    for (const std::string& w : h.warnings) s += " Warning: " + w;
    return s;
  }

  // Starts a packet on `q`, in the current run (EnterRun(q) first).
  proto::Writer::Nested StartPacket(Sequence& q, int64_t ts) {
    if (!q.started) {
      q.started = true;
      q.first_ts = ts < 0 ? 0 : ts;
      q.last_ts = q.first_ts;
    }
    auto packet = w_.Begin(pf::trace::kPacket);
    w_.Varint(pf::packet::kTrustedPacketSequenceId, q.id);
    return packet;
  }

  // Makes `q` the sequence of the run, ending the run before if it is
  // another's or full. Call before interning what a packet uses.
  void EnterRun(Sequence& q) {
    if (run_ == &q && w_.size() < kRunBytes) return;
    EndRun();
    run_ = &q;
  }

  // Writes the run out: first, on a sequence's first run, its clock; then
  // a packet with the sequence's state (cleared and defaulted on its first
  // run) and the run's interned data; then the run's packets.
  void EndRun() {
    Sequence* q = run_;
    run_ = nullptr;
    if (q != nullptr && q->started && !q->announced) {
      StartSequence(*q);
      q->announced = true;
      auto packet = out_w_.Begin(pf::trace::kPacket);
      out_w_.Varint(pf::packet::kTrustedPacketSequenceId, q->id);
      out_w_.Varint(pf::packet::kSequenceFlags,
                    pf::packet::kSeqIncrementalStateCleared | pf::packet::kSeqNeedsIncrementalState);
      out_w_.Bool(pf::packet::kFirstPacketOnSequence, true);
      auto defaults = out_w_.Begin(pf::packet::kTracePacketDefaults);
      out_w_.Varint(pf::defaults::kTimestampClockId, pf::clock::kIncremental);
      auto te = out_w_.Begin(pf::defaults::kTrackEventDefaults);
      out_w_.Varint(pf::defaults::kTrackUuid, q->track_uuid);
      out_w_.End(te);
      out_w_.End(defaults);
      WriteRunInterned();
      out_w_.End(packet);
    } else if (q != nullptr && !entries_.empty()) {
      auto packet = out_w_.Begin(pf::trace::kPacket);
      out_w_.Varint(pf::packet::kTrustedPacketSequenceId, q->id);
      WriteRunInterned();
      out_w_.End(packet);
    }
    // Later packets carry no sequence_flags: the importer reads
    // SEQ_NEEDS_INCREMENTAL_STATE only to skip packets of a sequence whose
    // state was lost, and a file written whole loses none.
    entries_.clear();
    entry_text_.clear();
    if (piece_ != nullptr && !w_.view().empty()) {
      // A piece's run goes to its sink as it is, not through out_w_: one
      // copy fewer, and out_w_ stays the size of the state packets (a
      // window's piece renderers are new each window: their bytes touch
      // new pages).
      Status s = Flush();
      if (s.ok()) s = out_->Append(w_.view());
      if (piece_status_.ok()) piece_status_ = s;
    } else {
      out_w_.Raw(w_.view());
    }
    w_.Clear();
  }

  // The run's definitions by kind, then text: like strings side by side
  // (`aten::item, op_id = 299`, `... = 307`) for gzip.
  void WriteRunInterned() {
    if (entries_.empty()) return;
    std::sort(entries_.begin(), entries_.end(), [this](const Entry& a, const Entry& b) {
      if (a.field != b.field) return a.field < b.field;
      return Text(a) < Text(b);
    });
    auto data = out_w_.Begin(pf::packet::kInternedData);
    for (const Entry& e : entries_) {
      auto m = out_w_.Begin(e.field);
      out_w_.Varint(pf::interned::kIid, e.iid);
      out_w_.String(pf::interned::kName, Text(e));
      out_w_.End(m);
    }
    out_w_.End(data);
  }

  // Ends a packet with its timestamp. The timestamp goes last, beside the
  // event's ids (correlation, flows): what changes from packet to packet
  // sits in one run, and the rest repeats as a whole for gzip to match.
  void FinishPacket(Sequence& q, int64_t ts, proto::Writer::Nested packet) {
    if (ts >= q.last_ts) {
      w_.Varint(pf::packet::kTimestamp, static_cast<uint64_t>(ts - q.last_ts));
      q.last_ts = ts;
    } else {
      // Never expected (a track's events are written in time order), but a
      // delta cannot go back: say this one in absolute boot time.
      w_.Varint(pf::packet::kTimestamp, static_cast<uint64_t>(ts < 0 ? 0 : ts));
      w_.Varint(pf::packet::kTimestampClockId, pf::clock::kBoottime);
    }
    w_.End(packet);
  }

  // The sequence's clock: incremental, starting at its first timestamp.
  // Trace time is CLOCK_REALTIME ns given as boot time (Perfetto's default
  // clock); REALTIME says so, for the UI's wall-clock display.
  void StartSequence(const Sequence& q) {
    uint64_t t = static_cast<uint64_t>(q.first_ts);
    auto packet = out_w_.Begin(pf::trace::kPacket);
    out_w_.Varint(pf::packet::kTrustedPacketSequenceId, q.id);
    auto snapshot = out_w_.Begin(pf::packet::kClockSnapshot);
    for (uint32_t clock : {pf::clock::kBoottime, pf::clock::kRealtime, pf::clock::kIncremental}) {
      auto c = out_w_.Begin(pf::clock::kClocks);
      out_w_.Varint(pf::clock::kClockId, clock);
      out_w_.Varint(pf::clock::kTimestamp, t);
      if (clock == pf::clock::kIncremental) out_w_.Bool(pf::clock::kIsIncremental, true);
      out_w_.End(c);
    }
    out_w_.End(snapshot);
    out_w_.End(packet);
  }

  // Writes the END of every open slice on `q` that ends at or before `ts`.
  void CloseUntil(Sequence& q, int64_t ts) {
    while (!q.open.empty() && q.open.back() <= ts) {
      int64_t end = q.open.back();
      q.open.pop_back();
      auto packet = StartPacket(q, end);
      auto event = w_.Begin(pf::packet::kTrackEvent);
      w_.Varint(pf::event::kType, pf::event::kSliceEnd);
      w_.End(event);
      FinishPacket(q, end, packet);
    }
  }

  // Looks up the iids `s` uses (into name_iid_, q.layout, string_iids_)
  // and adds the definitions `q` lacks to the run's (entries_).
  void Intern(Sequence& q, const Slice& s) {
    if (s.name_id != 0) {
      // A piece's describer numbers names as they come to it, over all the
      // pieces it described: a piece numbers them again, its own way.
      name_iid_ = piece_ == nullptr ? s.name_id
                                    : piece_names_.Insert(s.name_id, static_cast<uint32_t>(piece_names_.size() + 1));
      if (q.names.Insert(name_iid_)) AddEntry(pf::interned::kEventNames, name_iid_, s.name);
    } else {
      uint64_t own = own_names_.Id(s.name);
      name_iid_ = kOwnNameBase + own;
      if (q.own_names.Insert(own)) AddEntry(pf::interned::kEventNames, name_iid_, s.name);
    }
    uint32_t cat = 1u << static_cast<uint32_t>(s.category);
    if (!(q.categories & cat)) {
      q.categories |= cat;
      AddEntry(pf::interned::kEventCategories, CategoryIid(s.category), CategoryName(s.category));
    }
    string_iids_.clear();
    Layout& l = q.layout;
    if (!SameLayout(l, s.args)) {
      // Argument names, defined on this sequence where new to it, and the
      // order they are written in: the slice's own, but its ids
      // (correlation, External id) last, beside the flow ids and the
      // timestamp, so that the arguments ops of one kind share stay one run
      // of equal bytes for gzip.
      l.keys.clear();
      l.iids.clear();
      l.order.clear();
      l.reusable = true;
      tail_.clear();
      for (size_t i = 0; i < s.args.size(); ++i) {
        const Arg& a = s.args[i];
        // Keys not marked foreign are gpucap's own literals (trace_model.h).
        uint64_t key = arg_names_.Id(a.key, !a.foreign_key);
        l.keys.push_back(a.key);
        l.iids.push_back(key);
        l.reusable &= !a.foreign_key;
        if (q.arg_names.Insert(key)) AddEntry(pf::interned::kDebugAnnotationNames, key, a.key);
        (key == correlation_iid_ || key == external_id_iid_ ? tail_ : l.order).push_back(static_cast<uint32_t>(i));
      }
      l.order.insert(l.order.end(), tail_.begin(), tail_.end());
    }
    for (uint32_t i : l.order) {
      const Arg& a = s.args[i];
      if (a.type == Arg::Type::kString || a.type == Arg::Type::kJson) {
        InternString(q, a.s());
      } else if (a.type == Arg::Type::kStrings) {
        for (std::string_view v : a.strings()) InternString(q, v);
      }
    }
  }

  // A definition for the run; its text is copied (a slice's strings last
  // only for its call).
  void AddEntry(uint32_t field, uint64_t iid, std::string_view text) {
    entries_.push_back({field, iid, entry_text_.size(), text.size()});
    entry_text_.append(text);
  }
  std::string_view Text(const Entry& e) const { return std::string_view(entry_text_).substr(e.at, e.size); }

  void InternString(Sequence& q, std::string_view v) {
    if (v.size() > kMaxInternedString) {
      string_iids_.push_back(0);
      return;
    }
    uint64_t iid = strings_.Id(v);
    string_iids_.push_back(iid);
    if (q.strings.Insert(iid)) AddEntry(pf::interned::kDebugAnnotationStringValues, iid, v);
  }

  void WriteString(std::string_view v, size_t* next_string) {
    uint64_t iid = string_iids_[(*next_string)++];
    if (iid != 0) {
      w_.Varint(pf::annotation::kStringValueIid, iid);
    } else {
      w_.String(pf::annotation::kStringValue, v);
    }
  }

  void WriteArgs(const Layout& l, std::span<const Arg> args) {
    size_t next_string = 0;
    for (uint32_t i : l.order) {
      const Arg& a = args[i];
      // Integers, most of a slice's arguments, in one go.
      if (a.type == Arg::Type::kUint || a.type == Arg::Type::kInt) {
        bool u = a.type == Arg::Type::kUint;
        WriteIntAnnotation(l.iids[i], u ? pf::annotation::kUintValue : pf::annotation::kIntValue,
                           u ? a.u() : static_cast<uint64_t>(a.i()));
        continue;
      }
      auto d = w_.Begin(pf::event::kDebugAnnotations);
      w_.Varint(pf::annotation::kNameIid, l.iids[i]);
      switch (a.type) {
        case Arg::Type::kInt:
        case Arg::Type::kUint: break;
        case Arg::Type::kDouble:
        case Arg::Type::kFloat6: w_.Double(pf::annotation::kDoubleValue, a.d()); break;
        case Arg::Type::kString:
        case Arg::Type::kJson: WriteString(a.s(), &next_string); break;
        case Arg::Type::kInts:
          for (int64_t v : a.ints()) {
            auto e = w_.Begin(pf::annotation::kArrayValues);
            w_.Int(pf::annotation::kIntValue, v);
            w_.End(e);
          }
          break;
        case Arg::Type::kStrings:
          for (std::string_view v : a.strings()) {
            auto e = w_.Begin(pf::annotation::kArrayValues);
            WriteString(v, &next_string);
            w_.End(e);
          }
          break;
      }
      w_.End(d);
    }
  }

  // DebugAnnotation{name_iid, <field>: v}, its length known up front.
  void WriteIntAnnotation(uint64_t name_iid, uint32_t field, uint64_t v) {
    uint8_t* p = w_.Cursor(32);
    *p++ = proto::Tag(pf::event::kDebugAnnotations, proto::WireType::kLengthDelimited);
    uint8_t* len = p++;
    *p++ = proto::Tag(pf::annotation::kNameIid, proto::WireType::kVarint);
    p = proto::WriteVarint(name_iid, p);
    *p++ = static_cast<uint8_t>(proto::Tag(field, proto::WireType::kVarint));
    p = proto::WriteVarint(v, p);
    *len = static_cast<uint8_t>(p - len - 1);  // at most 22 bytes
    w_.Commit(p);
  }

  Status MaybeFlush() { return out_w_.size() >= kFlushBytes ? Flush() : Status::Ok(); }
  Status Flush() {
    Status s = out_->Append(out_w_.view());
    out_w_.Clear();
    return s;
  }

  std::unique_ptr<ByteSink> out_;
  proto::Writer out_w_{kFlushBytes + kRunBytes + (1 << 16)};  // to the sink
  proto::Writer w_{kRunBytes + (1 << 16)};                     // the run's packets
  Sequence* run_ = nullptr;                                      // whose run w_ holds
  std::vector<Entry> entries_;                                   // the run's definitions
  std::string entry_text_;
  std::vector<Sequence> sequences_;
  StringIds own_names_, arg_names_, strings_;
  // Per-slice scratch.
  uint64_t name_iid_ = 0;
  std::vector<uint64_t> string_iids_;
  std::vector<uint32_t> tail_;
  uint64_t correlation_iid_ = arg_names_.Id(trace_keys::kCorrelation);
  uint64_t external_id_iid_ = arg_names_.Id(trace_keys::kExternalId);
  // Pieces: sequence ids start above the whole's; a piece renderer knows
  // the piece it renders (its index), the tracks' uuids, its sequences,
  // and its own numbering of the describer's name ids.
  uint32_t piece_sequence_base_ = 0;
  RenderedPiece* piece_ = nullptr;
  std::vector<uint64_t> track_uuids_;
  Sequence piece_sequence_;  // the current track's
  bool piece_sequence_open_ = false;
  uint32_t piece_track_ = 0;
  FlatMap piece_names_;
  Status piece_status_ = Status::Ok();  // of the piece's appends in EndRun
};

}  // namespace

std::unique_ptr<TraceSink> NewPerfettoRenderer(std::unique_ptr<ByteSink> out) {
  return std::make_unique<PerfettoRenderer>(std::move(out));
}

}  // namespace gpucap::builder
