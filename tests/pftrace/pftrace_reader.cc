#include "pftrace_reader.h"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <set>
#include <unordered_map>

namespace gpucap::testing {
namespace {

// --- Wire format ------------------------------------------------------------

struct Field {
  uint32_t number = 0;
  uint32_t wire_type = 0;  // 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32
  uint64_t value = 0;      // varint and fixed values
  std::string_view bytes;  // length-delimited
};

// Iterates over the fields of one message; ok() turns false at the first
// malformed byte and stays false.
class Fields {
 public:
  explicit Fields(std::string_view msg) : p_(msg) {}
  bool Next(Field* f) {
    if (p_.empty() || !ok_) return false;
    uint64_t tag;
    if (!Varint(&tag)) return ok_ = false;
    f->number = static_cast<uint32_t>(tag >> 3);
    f->wire_type = static_cast<uint32_t>(tag & 7);
    f->bytes = {};
    switch (f->wire_type) {
      case 0:
        if (!Varint(&f->value)) return ok_ = false;
        return true;
      case 1:
        if (p_.size() < 8) return ok_ = false;
        std::memcpy(&f->value, p_.data(), 8);
        p_.remove_prefix(8);
        return true;
      case 5: {
        if (p_.size() < 4) return ok_ = false;
        uint32_t v;
        std::memcpy(&v, p_.data(), 4);
        f->value = v;
        p_.remove_prefix(4);
        return true;
      }
      case 2: {
        uint64_t n;
        if (!Varint(&n) || n > p_.size()) return ok_ = false;
        f->bytes = p_.substr(0, n);
        p_.remove_prefix(n);
        return true;
      }
      default:
        return ok_ = false;
    }
  }
  bool ok() const { return ok_; }

 private:
  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_.empty()) return false;
      uint8_t b = static_cast<uint8_t>(p_[0]);
      p_.remove_prefix(1);
      *v |= uint64_t{b & 0x7fu} << shift;
      if (b < 0x80) return true;
    }
    return false;
  }
  std::string_view p_;
  bool ok_ = true;
};

// Field numbers, from the published protos (perfetto-facts.md).
namespace f {
constexpr uint32_t kTracePacket = 1;
// TracePacket
constexpr uint32_t kClockSnapshot = 6, kTimestamp = 8, kSeqId = 10, kTrackEvent = 11, kInterned = 12,
                   kSeqFlags = 13, kClockId = 58, kDefaults = 59, kTrackDescriptor = 60, kFirstOnSeq = 87;
// TrackEvent
constexpr uint32_t kCategoryIids = 3, kAnnotations = 4, kType = 9, kNameIid = 10, kTrackUuid = 11,
                   kCategories = 22, kName = 23, kCounterValue = 30, kDoubleCounterValue = 44, kFlowIds = 47,
                   kTerminatingFlowIds = 48, kFlowIdsOld = 36, kTerminatingFlowIdsOld = 42;
}  // namespace f

std::string DoubleText(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

// --- The reader -------------------------------------------------------------

class Reader {
 public:
  PfTrace Read(std::string_view bytes) {
    Fields packets(bytes);
    Field pf;
    while (packets.Next(&pf)) {
      if (pf.number != f::kTracePacket || pf.wire_type != 2) {
        Error("top-level field " + std::to_string(pf.number) + " is not Trace.packet");
        continue;
      }
      offset_ = out_.packets++;
      Packet(pf.bytes);
    }
    if (!packets.ok()) Error("the trace does not parse to its end");
    for (auto& [uuid, stack] : open_) {
      if (!stack.empty()) Error("track " + TrackName(uuid) + ": " + std::to_string(stack.size()) + " slices never end");
    }
    CheckFlows();
    return std::move(out_);
  }

 private:
  struct Sequence {
    bool cleared = false;
    bool has_clock = false;
    uint64_t clock_value = 0;  // the incremental clock's last value
    uint32_t default_clock = 0;
    uint64_t default_track = 0;
    std::unordered_map<uint64_t, std::string> names, categories, arg_names, strings;
    std::set<std::pair<uint32_t, std::string>> defined;  // (InternedData field, text)
  };
  struct Open {
    PfSlice slice;
  };
  struct FlowEvent {
    int64_t ts;
    uint64_t packet;
    uint64_t id;
    bool terminating;
  };

  void Error(const std::string& what) {
    if (out_.errors.size() < 50) out_.errors.push_back("packet " + std::to_string(offset_) + ": " + what);
  }
  std::string TrackName(uint64_t uuid) {
    const PfTrack* t = out_.Track(uuid);
    return t ? "'" + t->name + "' (" + std::to_string(uuid) + ")" : std::to_string(uuid);
  }

  void Packet(std::string_view bytes) {
    Fields fields(bytes);
    Field x;
    std::optional<uint64_t> timestamp;
    uint32_t seq_id = 0, flags = 0, clock_id = 0;
    bool has_flags = false;
    std::string_view event, interned, defaults, descriptor, snapshot;
    int others = 0;
    while (fields.Next(&x)) {
      switch (x.number) {
        case f::kTimestamp: timestamp = x.value; break;
        case f::kSeqId: seq_id = static_cast<uint32_t>(x.value); break;
        case f::kSeqFlags: flags = static_cast<uint32_t>(x.value), has_flags = true; break;
        case f::kClockId: clock_id = static_cast<uint32_t>(x.value); break;
        case f::kTrackEvent: event = x.bytes; break;
        case f::kInterned: interned = x.bytes; break;
        case f::kDefaults: defaults = x.bytes; break;
        case f::kTrackDescriptor: descriptor = x.bytes; break;
        case f::kClockSnapshot: snapshot = x.bytes; break;
        case f::kFirstOnSeq: break;
        default: others++; break;
      }
    }
    if (!fields.ok()) Error("packet does not parse");
    if (has_flags) out_.encoding.packets_with_flags++;
    if (others) Error("packet has fields this reader does not know");
    if (snapshot.data() != nullptr) {
      if (event.data() || interned.data() || defaults.data() || descriptor.data() || timestamp || has_flags) {
        Error("a clock snapshot packet carries something else");
      }
      ClockSnapshot(snapshot, seq_id);
      return;
    }
    if (descriptor.data() != nullptr) Descriptor(descriptor);
    Sequence* seq = nullptr;
    if (seq_id != 0) seq = &sequences_[seq_id];
    bool needs_state = event.data() != nullptr || interned.data() != nullptr || defaults.data() != nullptr;
    if (needs_state) {
      if (seq == nullptr) {
        Error("track event, interned data or defaults on sequence id 0");
        return;
      }
      if (flags & 1) {
        seq->cleared = true;
        out_.encoding.sequences++;
        seq->defined.clear();
        seq->names.clear();
        seq->categories.clear();
        seq->arg_names.clear();
        seq->strings.clear();
        seq->default_clock = 0;
        seq->default_track = 0;
      } else if (!seq->cleared) {
        Error("sequence " + std::to_string(seq_id) + " uses incremental state before clearing it (flags 3)");
      }
      // Later packets may leave the flags out: the importer reads NEEDS
      // (2) only to skip packets of a sequence whose state was lost.
      if (has_flags && !(flags & 1) && !(flags & 2)) {
        Error("sequence " + std::to_string(seq_id) + ": sequence_flags without CLEARED or NEEDS");
      }
    }
    if (defaults.data() != nullptr) Defaults(defaults, seq);
    if (interned.data() != nullptr) {
      out_.encoding.packets_with_interned++;
      if (event.data() != nullptr) out_.encoding.events_with_interned++;
      Interned(interned, seq);
    }
    if (event.data() == nullptr) return;
    // The packet's time.
    int64_t ts = 0;
    uint32_t clock = clock_id != 0 ? clock_id : seq->default_clock;
    if (!timestamp) {
      Error("track event without a timestamp");
    } else if (clock >= 64 && clock <= 127) {
      if (!seq->has_clock) {
        Error("incremental timestamp before its sequence's clock snapshot");
      } else {
        seq->clock_value += *timestamp;
        ts = static_cast<int64_t>(seq->clock_value);
      }
    } else {
      ts = static_cast<int64_t>(*timestamp);
    }
    TrackEvent(event, *seq, ts);
  }

  void ClockSnapshot(std::string_view bytes, uint32_t seq_id) {
    Fields fields(bytes);
    Field x;
    bool boottime = false;
    while (fields.Next(&x)) {
      if (x.number != 1) continue;
      Fields clock(x.bytes);
      Field c;
      uint32_t id = 0;
      uint64_t value = 0;
      bool incremental = false;
      while (clock.Next(&c)) {
        if (c.number == 1) id = static_cast<uint32_t>(c.value);
        if (c.number == 2) value = c.value;
        if (c.number == 3) incremental = c.value != 0;
      }
      if (id == 6) boottime = true;
      if (id >= 64 && id <= 127) {
        if (seq_id == 0) {
          Error("sequence-scoped clock in a snapshot on sequence 0");
          continue;
        }
        if (!incremental) Error("sequence clock " + std::to_string(id) + " is not incremental");
        Sequence& s = sequences_[seq_id];
        s.has_clock = true;
        s.clock_value = value;
      }
    }
    if (!boottime) Error("clock snapshot without BOOTTIME");
  }

  void Defaults(std::string_view bytes, Sequence* seq) {
    Fields fields(bytes);
    Field x;
    while (fields.Next(&x)) {
      if (x.number == 58) seq->default_clock = static_cast<uint32_t>(x.value);
      if (x.number == 11) {
        Fields te(x.bytes);
        Field t;
        while (te.Next(&t)) {
          if (t.number == 11) seq->default_track = t.value;
        }
      }
    }
  }

  void Interned(std::string_view bytes, Sequence* seq) {
    Fields fields(bytes);
    Field x;
    while (fields.Next(&x)) {
      std::unordered_map<uint64_t, std::string>* table = nullptr;
      switch (x.number) {
        case 1: table = &seq->categories; break;
        case 2: table = &seq->names; break;
        case 3: table = &seq->arg_names; break;
        case 29: table = &seq->strings; break;
        default: Error("interned data of an unexpected kind " + std::to_string(x.number)); continue;
      }
      Fields entry(x.bytes);
      Field e;
      uint64_t iid = 0;
      std::string text;
      while (entry.Next(&e)) {
        if (e.number == 1) iid = e.value;
        if (e.number == 2) text = std::string(e.bytes);
      }
      if (iid == 0) Error("interned entry with iid 0");
      if (!seq->defined.emplace(x.number, text).second) out_.encoding.redefinitions++;
      (*table)[iid] = text;
    }
  }

  std::string Lookup(const std::unordered_map<uint64_t, std::string>& table, uint64_t iid, const char* what) {
    auto it = table.find(iid);
    if (it == table.end()) {
      Error(std::string(what) + " iid " + std::to_string(iid) + " used before it is defined on its sequence");
      return "?";
    }
    return it->second;
  }

  std::string AnnotationValue(std::string_view bytes, Sequence& seq, std::string* name) {
    Fields fields(bytes);
    Field x;
    std::string value;
    std::vector<std::string> items;
    bool array = false;
    while (fields.Next(&x)) {
      switch (x.number) {
        case 1:
          *name = Lookup(seq.arg_names, x.value, "annotation name");
          out_.encoding.arg_names_by_iid++;
          break;
        case 10:
          *name = std::string(x.bytes);
          out_.encoding.arg_names_inline++;
          break;
        case 2: value = x.value ? "true" : "false"; break;
        case 3: value = std::to_string(x.value); break;
        case 4: value = std::to_string(static_cast<int64_t>(x.value)); break;
        case 5: {
          double d;
          std::memcpy(&d, &x.value, 8);
          value = DoubleText(d);
          break;
        }
        case 6:
          value = std::string(x.bytes);
          out_.encoding.strings_inline++;
          break;
        case 17:
          value = Lookup(seq.strings, x.value, "annotation string");
          out_.encoding.strings_by_iid++;
          break;
        case 12: {
          array = true;
          std::string ignored;
          items.push_back(AnnotationValue(x.bytes, seq, &ignored));
          break;
        }
        default: Error("debug annotation field " + std::to_string(x.number)); break;
      }
    }
    if (array) {
      value = "[";
      for (size_t i = 0; i < items.size(); ++i) value += (i ? "," : "") + items[i];
      value += "]";
    }
    return value;
  }

  void TrackEvent(std::string_view bytes, Sequence& seq, int64_t ts) {
    Fields fields(bytes);
    Field x;
    uint32_t type = 0;
    uint64_t track = seq.default_track;
    PfSlice s;
    std::optional<double> counter;
    std::vector<uint64_t> old_out, old_in;
    while (fields.Next(&x)) {
      switch (x.number) {
        case f::kType: type = static_cast<uint32_t>(x.value); break;
        case f::kTrackUuid: track = x.value; break;
        case f::kNameIid:
          s.name = Lookup(seq.names, x.value, "event name");
          out_.encoding.names_by_iid++;
          break;
        case f::kName:
          s.name = std::string(x.bytes);
          out_.encoding.names_inline++;
          break;
        case f::kCategoryIids:
          if (x.wire_type != 0) Error("category_iids packed");
          s.category = Lookup(seq.categories, x.value, "category");
          out_.encoding.categories_by_iid++;
          break;
        case f::kCategories:
          s.category = std::string(x.bytes);
          out_.encoding.categories_inline++;
          break;
        case f::kAnnotations: {
          std::string name;
          std::string value = AnnotationValue(x.bytes, seq, &name);
          s.args.emplace_back(name, value);
          break;
        }
        case f::kFlowIds:
          if (x.wire_type != 1) Error("flow_ids packed or not fixed64");
          s.flows_out.push_back(x.value);
          break;
        case f::kTerminatingFlowIds:
          if (x.wire_type != 1) Error("terminating_flow_ids packed or not fixed64");
          s.flows_in.push_back(x.value);
          break;
        // The varint forms, read by the importer where an event has none of
        // the fixed64 ones (so mixing the two loses the varints).
        case f::kFlowIdsOld:
          if (x.wire_type != 0) Error("flow_ids_old packed or not a varint");
          old_out.push_back(x.value);
          break;
        case f::kTerminatingFlowIdsOld:
          if (x.wire_type != 0) Error("terminating_flow_ids_old packed or not a varint");
          old_in.push_back(x.value);
          break;
        case f::kDoubleCounterValue: {
          double d;
          std::memcpy(&d, &x.value, 8);
          counter = d;
          break;
        }
        case f::kCounterValue: counter = static_cast<double>(static_cast<int64_t>(x.value)); break;
        default: Error("track event field " + std::to_string(x.number)); break;
      }
    }
    out_.encoding.fixed64_flow_ids += s.flows_out.size() + s.flows_in.size();
    out_.encoding.varint_flow_ids += old_out.size() + old_in.size();
    if (s.flows_out.empty()) s.flows_out = std::move(old_out);
    else if (!old_out.empty()) Error("flow_ids and flow_ids_old on one event: the importer drops the old ones");
    if (s.flows_in.empty()) s.flows_in = std::move(old_in);
    else if (!old_in.empty()) Error("terminating_flow_ids and terminating_flow_ids_old on one event: the importer drops the old ones");
    const PfTrack* t = out_.Track(track);
    if (t == nullptr) {
      Error("event on undescribed track " + std::to_string(track));
      return;
    }
    int64_t& last = last_ts_[track];
    if (ts < last) Error("track " + TrackName(track) + " goes back in time");
    last = ts;
    s.track = track;
    s.ts = ts;
    if (type == 4) {
      if (!t->is_counter) Error("counter event on slice track " + TrackName(track));
      if (!counter) Error("counter event without a value");
      out_.counters.push_back({track, ts, counter.value_or(0)});
      return;
    }
    if (t->is_counter) Error("slice event on counter track " + TrackName(track));
    std::vector<PfSlice>& stack = open_[track];
    switch (type) {
      case 1:
        FlowsAt(s, ts);
        stack.push_back(std::move(s));
        break;
      case 2:
        if (stack.empty()) {
          Error("END with nothing open on " + TrackName(track));
          break;
        }
        stack.back().dur = ts - stack.back().ts;
        out_.slices.push_back(std::move(stack.back()));
        stack.pop_back();
        break;
      case 3:
        FlowsAt(s, ts);
        out_.slices.push_back(std::move(s));
        break;
      default:
        Error("track event of type " + std::to_string(type));
    }
  }

  // The importer binds flows after sorting events by time (ties in file
  // order), so that is the order they are checked in.
  void FlowsAt(const PfSlice& s, int64_t ts) {
    for (uint64_t id : s.flows_out) flow_events_.push_back({ts, offset_, id, false});
    for (uint64_t id : s.flows_in) flow_events_.push_back({ts, offset_, id, true});
  }

  void CheckFlows() {
    std::stable_sort(flow_events_.begin(), flow_events_.end(),
                     [](const FlowEvent& a, const FlowEvent& b) { return a.ts < b.ts; });
    std::map<uint64_t, int> state;  // 1 started, 2 terminated
    for (const FlowEvent& e : flow_events_) {
      offset_ = e.packet;
      int& st = state[e.id];
      std::string id = std::to_string(e.id);
      if (!e.terminating) {
        if (st == 1) Error("flow " + id + " starts twice (a chain, not an arrow)");
        if (st == 2) Error("flow " + id + " starts again after it terminated");
        st = 1;
      } else {
        if (st == 0) Error("flow " + id + " terminates before it starts");
        if (st == 2) Error("flow " + id + " terminates twice");
        st = 2;
      }
    }
    for (const auto& [id, st] : state) {
      if (st == 1) Error("flow " + std::to_string(id) + " never terminates");
    }
  }

  void Descriptor(std::string_view bytes) {
    PfTrack t;
    Fields fields(bytes);
    Field x;
    while (fields.Next(&x)) {
      switch (x.number) {
        case 1: t.uuid = x.value; break;
        case 2: t.name = std::string(x.bytes); break;
        case 5: t.parent = x.value; break;
        case 11: t.explicit_order = x.value == 3; break;
        case 12: t.rank = static_cast<int32_t>(x.value); break;
        case 14: t.description = std::string(x.bytes); break;
        case 15: t.merge = static_cast<uint32_t>(x.value); break;
        case 3: {
          t.is_process = true;
          Fields p(x.bytes);
          Field y;
          while (p.Next(&y)) {
            if (y.number == 1) t.pid = static_cast<int32_t>(y.value);
            if (y.number == 6) t.name = std::string(y.bytes);
          }
          if (t.pid <= 0) Error("process descriptor with pid " + std::to_string(t.pid));
          break;
        }
        case 4: {
          t.is_thread = true;
          Fields p(x.bytes);
          Field y;
          bool pid = false, tid = false;
          while (p.Next(&y)) {
            if (y.number == 1) t.pid = static_cast<int32_t>(y.value), pid = true;
            if (y.number == 2) t.tid = static_cast<int64_t>(y.value), tid = true;
            if (y.number == 5) t.name = std::string(y.bytes);
          }
          if (!pid || !tid || t.pid <= 0 || t.tid <= 0) Error("thread descriptor without a valid pid and tid");
          break;
        }
        case 8: {
          t.is_counter = true;
          Fields p(x.bytes);
          Field y;
          while (p.Next(&y)) {
            if (y.number == 3) t.unit = static_cast<uint32_t>(y.value);
            if (y.number == 6) t.unit_name = std::string(y.bytes);
          }
          break;
        }
        default: Error("track descriptor field " + std::to_string(x.number)); break;
      }
    }
    if (t.uuid == 0) Error("track descriptor without uuid");
    if (out_.tracks.count(t.uuid)) Error("track " + std::to_string(t.uuid) + " described twice");
    if (t.parent != 0 && !out_.tracks.count(t.parent)) Error("track " + t.name + " before its parent");
    out_.track_order.push_back(t.uuid);
    out_.tracks[t.uuid] = std::move(t);
  }

  PfTrace out_;
  uint64_t offset_ = 0;
  std::unordered_map<uint32_t, Sequence> sequences_;
  std::map<uint64_t, std::vector<PfSlice>> open_;
  std::unordered_map<uint64_t, int64_t> last_ts_;
  std::vector<FlowEvent> flow_events_;
};

}  // namespace

PfTrace ReadPftrace(std::string_view bytes) { return Reader().Read(bytes); }

std::string Gunzip(std::string_view gz) {
  std::string out;
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) return "";
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  char buf[1 << 16];
  while (true) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    int rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - z.avail_out);
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      inflateReset(&z);  // the next gzip member
      continue;
    }
    if (rc != Z_OK) {
      out.clear();
      break;
    }
  }
  inflateEnd(&z);
  return out;
}

}  // namespace gpucap::testing
