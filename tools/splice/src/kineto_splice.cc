#include "gpucap/tools/splice/kineto_splice.h"

#include <algorithm>
#include <unordered_map>
#include "gpucap/format/output_file.h"

#include "gpucap/builder/trace_keys.h"
#include "gpucap/tools/json/json_read.h"

namespace gpucap::tools {
namespace {

using builder::Arg;
using builder::Category;

bool IsGpuCategory(std::string_view cat) {
  namespace k = builder::trace_keys;
  return cat == k::kCatKernel || cat == k::kCatGpuMemcpy || cat == k::kCatGpuMemset || cat == k::kCatCudaRuntime ||
         cat == k::kCatCudaDriver || cat == k::kCatGpuUserAnnotation || cat == k::kFlowLaunch;
}

bool NumberAs(std::string_view number, uint32_t* out) {
  int64_t i;
  if (!JsonInt(number, &i) || i < 0 || i > UINT32_MAX) return false;
  *out = static_cast<uint32_t>(i);
  return true;
}

// The fields of an event the splice reads; the others are checked and left.
enum class Field { kPh, kCat, kName, kPid, kTid, kTs, kDur, kArgs, kOther };

// By length first: one or two comparisons a key, for millions of events.
Field FieldOf(std::string_view key) {
  switch (key.size()) {
    case 2: return key == "ph" ? Field::kPh : key == "ts" ? Field::kTs : Field::kOther;
    case 3:
      return key == "cat" ? Field::kCat : key == "pid" ? Field::kPid : key == "tid" ? Field::kTid
             : key == "dur" ? Field::kDur : Field::kOther;
    case 4: return key == "name" ? Field::kName : key == "args" ? Field::kArgs : Field::kOther;
    default: return Field::kOther;
  }
}

// Sums without overflow's undefined behaviour: a hostile base time and ts
// wrap instead.
int64_t Plus(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }

}  // namespace

// One walk of the document with simdjson's On-Demand API: what the splice
// needs of every event is read, everything else is checked and left where it
// is (the splice copies it through). Times are kept relative to the base
// time until the end, since baseTimeNanoseconds may follow traceEvents.
class KinetoReader {
 public:
  explicit KinetoReader(KinetoTrace* t) : t_(*t), text_(t->text_.view()) {}

  Status Read() {
    ondemand::parser parser;
    ondemand::document doc;
    ondemand::value root;
    ondemand::json_type type;
    GPUCAP_RETURN_IF_ERROR(OpenJsonObject(parser, t_.text_, "a trace", &doc, &root));
    t_.root_open_ = static_cast<size_t>(root.raw_json_token().data() - text_.data());
    bool have_events = false;
    GPUCAP_RETURN_IF_ERROR(ForEachJsonMember(text_, root, [&](std::string_view key, ondemand::value v) -> Status {
      t_.keys_.emplace(key);
      if (key == "baseTimeNanoseconds") {
        std::string_view number;
        GPUCAP_RETURN_IF_ERROR(ReadJsonNumberText(text_, v, &number, 1));
        JsonInt(number, &t_.base_ns_);
        return Status::Ok();
      }
      if (key != "traceEvents") return CheckJsonValue(text_, v, 1);
      const char* at = v.raw_json_token().data();
      if (auto e = v.type().get(type)) return JsonError(text_, e, at);
      if (type != ondemand::json_type::array) {
        return Status::Corrupt("not a Chrome trace: traceEvents at byte offset " + std::to_string(at - text_.data()) +
                               " is not an array");
      }
      have_events = true;
      GPUCAP_RETURN_IF_ERROR(Events(v));
      // Just past the array's ']': only whitespace lies between it and the
      // next token, where the walk now is.
      const char* next = JsonWhere(doc);
      if (next == nullptr) return JsonError(text_, simdjson::INCOMPLETE_ARRAY_OR_OBJECT, nullptr);
      size_t close = static_cast<size_t>(next - text_.data());
      while (close > 0 && std::string_view(" \t\n\r").find(text_[close - 1]) != std::string_view::npos) --close;
      if (close == 0 || text_[close - 1] != ']') return Status::Internal("traceEvents' ']' is not where the walk left it");
      t_.events_close_ = close - 1;
      return Status::Ok();
    }));
    GPUCAP_RETURN_IF_ERROR(CloseJson(text_, doc));
    if (!have_events) return Status::Corrupt("not a Chrome trace: no traceEvents array");
    Finish();
    return Status::Ok();
  }

 private:
  // The last traceEvents array is the one read, as JSON.parse would.
  Status Events(ondemand::value events) {
    t_.events_ = t_.gpu_events_ = 0;
    t_.cpu_pids_.clear();
    t_.named_pids_.clear();
    t_.named_threads_.clear();
    t_.ops_.clear();
    any_span_ = false;
    return ForEachJsonElement(text_, events, [&](ondemand::value e) { return Event(e); });
  }

  Status Event(ondemand::value e) {
    t_.events_++;
    ondemand::json_type type;
    if (auto err = e.type().get(type)) return JsonError(text_, err, e.raw_json_token().data());
    // An element that is no object has no members: it is checked and skipped.
    if (type != ondemand::json_type::object) return CheckJsonValue(text_, e, 2);
    std::string_view ph, cat, name, number;  // the strings' views last while the document is walked
    uint32_t pid = 0, tid = 0;
    bool has_pid = false, has_tid = false;
    int64_t ts = 0, dur = 0;
    bool has_ts = false;
    uint64_t external = 0;
    GPUCAP_RETURN_IF_ERROR(ForEachJsonMember(text_, e, [&](std::string_view key, ondemand::value v) -> Status {
      Field field = FieldOf(key);
      switch (field) {
        case Field::kPh: return ReadJsonString(text_, v, &ph, 3);
        case Field::kCat: return ReadJsonString(text_, v, &cat, 3);
        case Field::kName: return ReadJsonString(text_, v, &name, 3);
        case Field::kPid:
        case Field::kTid:
        case Field::kTs:
        case Field::kDur:
          GPUCAP_RETURN_IF_ERROR(ReadJsonNumberText(text_, v, &number, 3));
          if (field == Field::kPid) has_pid = NumberAs(number, &pid);
          if (field == Field::kTid) has_tid = NumberAs(number, &tid);
          if (field == Field::kTs) has_ts = JsonMicrosToNanos(number, &ts);
          if (field == Field::kDur) JsonMicrosToNanos(number, &dur);
          return Status::Ok();
        case Field::kArgs: {
          ondemand::json_type args_type;
          if (auto err = v.type().get(args_type)) return JsonError(text_, err, v.raw_json_token().data());
          if (args_type != ondemand::json_type::object) return CheckJsonValue(text_, v, 3);
          return ForEachJsonMember(text_, v, [&](std::string_view k, ondemand::value a) -> Status {
            if (k != builder::trace_keys::kExternalId) return CheckJsonValue(text_, a, 4);
            GPUCAP_RETURN_IF_ERROR(ReadJsonNumberText(text_, a, &number, 4));
            int64_t id;
            if (JsonInt(number, &id) && id > 0) external = static_cast<uint64_t>(id);
            return Status::Ok();
          });
        }
        case Field::kOther: break;
      }
      return CheckJsonValue(text_, v, 3);
    }));
    if (IsGpuCategory(cat)) {
      t_.gpu_events_++;
      return Status::Ok();
    }
    if (ph == "M" && has_pid) {
      if (name == "process_name" || name == "process_labels" || name == "process_sort_index") t_.named_pids_.insert(pid);
      if ((name == "thread_name" || name == "thread_sort_index") && has_tid) t_.named_threads_.insert({pid, tid});
      return Status::Ok();
    }
    if (ph != "X" || !has_ts) return Status::Ok();
    // The span counts every CPU-side event, the profiler's own session span
    // ("Trace", on a pid that is a name) included.
    int64_t start = ts, end = Plus(start, std::max<int64_t>(dur, 0));
    if (!any_span_ || start < t_.first_ns_) t_.first_ns_ = start;
    if (!any_span_ || end > t_.last_ns_) t_.last_ns_ = end;
    any_span_ = true;
    if (!has_pid || !has_tid) return Status::Ok();
    if (cat == builder::trace_keys::kCatCpuOp || cat == builder::trace_keys::kCatUserAnnotation) {
      t_.cpu_pids_.insert(pid);
      if (external != 0) t_.ops_[{pid, tid}].push_back({start, end, external, -1});
    }
    return Status::Ok();
  }

  // Times onto the base time; the ops of a thread nest: sorted outer first,
  // each one's parent is the nearest open op that still encloses it.
  void Finish() {
    if (any_span_) {
      t_.first_ns_ = Plus(t_.base_ns_, t_.first_ns_);
      t_.last_ns_ = Plus(t_.base_ns_, t_.last_ns_);
    }
    for (auto& [thread, ops] : t_.ops_) {
      for (KinetoTrace::Op& op : ops) {
        op.start = Plus(t_.base_ns_, op.start);
        op.end = Plus(t_.base_ns_, op.end);
      }
      std::stable_sort(ops.begin(), ops.end(), [](const KinetoTrace::Op& a, const KinetoTrace::Op& b) {
        return a.start != b.start ? a.start < b.start : a.end > b.end;
      });
      std::vector<int32_t> open;
      for (size_t i = 0; i < ops.size(); ++i) {
        while (!open.empty() && ops[static_cast<size_t>(open.back())].end < ops[i].start) open.pop_back();
        ops[i].parent = open.empty() ? -1 : open.back();
        open.push_back(static_cast<int32_t>(i));
      }
    }
  }

  KinetoTrace& t_;
  std::string_view text_;
  bool any_span_ = false;
};

Result<KinetoTrace> KinetoTrace::Read(const std::string& path) {
  format::RegisterInputPath(path);  // --into's trace is an input: never an output
  auto text = JsonText::Read(path);
  if (!text.ok()) return text.status();
  return Parse(std::move(text).value(), path);
}

Result<KinetoTrace> KinetoTrace::Parse(std::string text, const std::string& path) {
  return Parse(JsonText(std::move(text)), path);
}

Result<KinetoTrace> KinetoTrace::Parse(JsonText text, const std::string& path) {
  KinetoTrace t;
  t.path_ = path;
  t.text_ = std::move(text);
  Status s = KinetoReader(&t).Read();
  if (!s.ok()) return Status::Corrupt(path + ": " + s.message());
  return t;
}

uint64_t KinetoTrace::ExternalIdAt(uint32_t pid, uint32_t tid, int64_t ns) const {
  auto it = ops_.find({pid, tid});
  if (it == ops_.end()) return 0;
  const std::vector<Op>& ops = it->second;
  auto after = std::upper_bound(ops.begin(), ops.end(), ns, [](int64_t t, const Op& o) { return t < o.start; });
  for (int32_t i = static_cast<int32_t>(after - ops.begin()) - 1; i >= 0; i = ops[static_cast<size_t>(i)].parent) {
    if (ops[static_cast<size_t>(i)].end >= ns) return ops[static_cast<size_t>(i)].external_id;
  }
  return 0;
}

namespace {

// Sits between the Chrome renderer and the output file: keeps the events
// the renderer writes (one per line) and drops its document around them,
// writing the profiler's document around them instead. Metadata events for
// processes and threads the profiler already names are dropped too.
class SpliceBytes : public builder::ByteSink {
 public:
  SpliceBytes(std::unique_ptr<builder::ByteSink> out, const KinetoTrace& k) : out_(std::move(out)), k_(k) {
    need_comma_ = k.has_events();
  }

  Status Append(std::string_view bytes) override {
    pending_.append(bytes);
    size_t start = 0;
    for (size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1) {
      GPUCAP_RETURN_IF_ERROR(Line(std::string_view(pending_).substr(start, nl - start)));
    }
    pending_.erase(0, start);
    return Status::Ok();
  }

  Status Close() override {
    if (!pending_.empty()) GPUCAP_RETURN_IF_ERROR(Line(pending_));
    pending_.clear();
    if (state_ != State::kFooter) return Status::Internal("the Chrome renderer's output did not have the expected shape");
    GPUCAP_RETURN_IF_ERROR(out_->Append(std::string_view(k_.text()).substr(k_.events_close())));
    return out_->Close();
  }

  uint64_t dropped_metadata() const { return dropped_; }

 private:
  enum class State { kHeader, kEvents, kFooter };

  Status Line(std::string_view line) {
    switch (state_) {
      case State::kHeader:
        if (line == "\"traceEvents\":[") {
          state_ = State::kEvents;
          return Opening();
        }
        header_.append(line).push_back('\n');
        return Status::Ok();
      case State::kEvents:
        if (line == "],") {
          state_ = State::kFooter;
          return Status::Ok();
        }
        if (!line.empty() && line.back() == ',') line.remove_suffix(1);
        if (line.empty() || Redundant(line)) return Status::Ok();
        GPUCAP_RETURN_IF_ERROR(out_->Append(need_comma_ ? ",\n" : "\n"));
        need_comma_ = true;
        return out_->Append(line);
      case State::kFooter:
        return Status::Ok();
    }
    return Status::Ok();
  }

  // The profiler's document up to the end of its events, with the keys it
  // lacks added from the renderer's header.
  Status Opening() {
    std::string_view doc = k_.text();
    GPUCAP_RETURN_IF_ERROR(out_->Append(doc.substr(0, k_.root_open() + 1)));
    JsonText header(header_ + "\"traceEvents\":[]}");
    std::string added;
    Status s = ReadOwn(header, [&](std::string_view key, ondemand::value v) -> Status {
      if (key == "schemaVersion" || key == "displayTimeUnit" || key == "baseTimeNanoseconds" || key == "traceEvents" ||
          k_.HasKey(std::string(key))) {
        return CheckJsonValue(header.view(), v);
      }
      auto span = JsonSpan(header.view(), v);
      if (!span.ok()) return span.status();
      added.append("\n\"").append(key).append("\":").append(*span).append(",");
      return Status::Ok();
    });
    if (!s.ok()) return Status::Internal("the renderer's header is not JSON: " + s.message());
    GPUCAP_RETURN_IF_ERROR(out_->Append(added));
    return out_->Append(doc.substr(k_.root_open() + 1, k_.events_close() - k_.root_open() - 1));
  }

  // Process and thread names the profiler already gave.
  bool Redundant(std::string_view line) {
    if (line.rfind("{\"name\":\"process_", 0) != 0 && line.rfind("{\"name\":\"thread_", 0) != 0) return false;
    JsonText text{std::string(line)};
    std::string_view name_view, number;
    std::string name;
    uint32_t pid = 0, tid = 0;
    Status s = ReadOwn(text, [&](std::string_view key, ondemand::value x) -> Status {
      int64_t i;
      if (key == "name") {
        GPUCAP_RETURN_IF_ERROR(ReadJsonString(text.view(), x, &name_view));
        name.assign(name_view);
        return Status::Ok();
      }
      if (key != "pid" && key != "tid") return CheckJsonValue(text.view(), x);
      GPUCAP_RETURN_IF_ERROR(ReadJsonNumberText(text.view(), x, &number));
      if (key == "pid" && JsonInt(number, &i)) pid = static_cast<uint32_t>(i);
      if (key == "tid" && JsonInt(number, &i)) tid = static_cast<uint32_t>(i);
      return Status::Ok();
    });
    if (!s.ok()) return false;
    bool drop = name.rfind("process_", 0) == 0 ? k_.NamesProcess(pid) : k_.NamesThread(pid, tid);
    dropped_ += drop;
    return drop;
  }

  // The members of one of the renderer's objects, in order.
  template <typename Visit>
  Status ReadOwn(const JsonText& text, Visit&& visit) {
    ondemand::document doc;
    ondemand::value root;
    GPUCAP_RETURN_IF_ERROR(OpenJsonObject(parser_, text, "an object", &doc, &root));
    GPUCAP_RETURN_IF_ERROR(ForEachJsonMember(text.view(), root, visit));
    return CloseJson(text.view(), doc);
  }

  std::unique_ptr<builder::ByteSink> out_;
  const KinetoTrace& k_;
  ondemand::parser parser_;
  State state_ = State::kHeader;
  std::string pending_, header_;
  bool need_comma_ = false;
  uint64_t dropped_ = 0;
};

// Forwards the join to the renderer against the profiler's base time,
// without the CPU-side annotations (the profiler has its own), and with
// launches tied to the profiler's ops.
class SpliceSink : public builder::TraceSink {
 public:
  SpliceSink(std::unique_ptr<builder::TraceSink> renderer, const KinetoTrace& k, SpliceReport* report)
      : out_(std::move(renderer)), k_(k), r_(*report) {}

  Status Begin(const builder::TraceHeader& header) override {
    builder::TraceHeader h = header;
    h.base_time_ns = k_.base_time_ns();
    cpu_.assign(h.tracks.size(), {false, 0, 0});
    for (const builder::Track& t : h.tracks) {
      const builder::Process& p = h.processes[t.process];
      cpu_[t.id] = {p.kind == builder::Process::Kind::kCpu, p.os_pid, t.tid};
    }
    return out_->Begin(h);
  }

  Status AddSlice(const builder::Slice& s) override {
    const Thread& track = cpu_[s.track];
    if (track.cpu && (s.category == Category::kUserAnnotation || s.category == Category::kCpuOp ||
                      s.category == Category::kCpuInstant)) {
      return Status::Ok();
    }
    // A launch is a call that started GPU work drawn here (a launch flow):
    // Kineto ties only those to an op, not every call made inside one.
    bool launch = (s.category == Category::kCudaRuntime || s.category == Category::kCudaDriver) &&
                  !s.flows_out.empty();
    bool op = s.category == Category::kKernel || s.category == Category::kGpuMemcpy ||
              s.category == Category::kGpuMemset;
    if (!launch && !op) return out_->AddSlice(s);
    uint64_t correlation = 0;
    size_t capture_id_at = s.args.size();  // the join's External id: pushed by the process, else a range's stand-in
    for (size_t i = 0; i < s.args.size(); ++i) {
      const Arg& a = s.args[i];
      if (a.key == builder::trace_keys::kExternalId) capture_id_at = i;
      if (a.key == builder::trace_keys::kCorrelation && a.type == Arg::Type::kUint) correlation = a.u();
    }
    bool has_capture_id = capture_id_at < s.args.size();
    // The profiler's op around the launch first: its id is what the
    // profiler's own trace uses for that launch. The capture's id only
    // where the profiler has no op there.
    uint64_t external = 0;
    if (launch) {
      external = k_.ExternalIdAt(track.pid, track.tid, s.ts_ns);
      if (external == 0) {
        if (has_capture_id) {
          r_.launches_linked_by_capture++;
        } else {
          r_.launches_unlinked++;
        }
        return out_->AddSlice(s);
      }
      r_.launches_linked_by_time++;
      by_correlation_[correlation] = external;
    } else {
      auto it = by_correlation_.find(correlation);
      if (it == by_correlation_.end()) return out_->AddSlice(s);
      external = it->second;
      r_.ops_linked++;
    }
    builder::Slice linked = s;
    if (has_capture_id) {
      args_.assign(s.args.begin(), s.args.end());
      args_[capture_id_at] = Arg::Uint(builder::trace_keys::kExternalId, external);
      // A run shared with other slices no longer is one once a value in it changed.
      if (capture_id_at >= s.shared_first && capture_id_at < size_t{s.shared_first} + s.shared_count) {
        linked.shared_id = 0;
      }
    } else {
      // Kineto puts the External id first.
      args_.assign(1, Arg::Uint(builder::trace_keys::kExternalId, external));
      args_.insert(args_.end(), s.args.begin(), s.args.end());
      linked.shared_first = s.shared_first + 1;  // the run moved with the args
    }
    linked.args = args_;
    return out_->AddSlice(linked);
  }

  Status AddCounter(const builder::CounterPoint& p) override { return out_->AddCounter(p); }
  Status End() override { return out_->End(); }

 private:
  struct Thread {
    bool cpu;
    uint32_t pid, tid;
  };
  std::unique_ptr<builder::TraceSink> out_;
  const KinetoTrace& k_;
  SpliceReport& r_;
  std::vector<Thread> cpu_;
  // CPU tracks stream before GPU tracks (their processes sort first), so a
  // launch's id is known when its ops arrive.
  std::unordered_map<uint64_t, uint64_t> by_correlation_;
  std::vector<Arg> args_;
};

// The CUPTI time that converts to `realtime_ns`: the clock map's offset is
// nearly constant, so two refinements land within a nanosecond or two.
uint64_t ToCupti(const builder::ClockMap& clock, int64_t realtime_ns) {
  int64_t t = realtime_ns;
  for (int i = 0; i < 3; ++i) t -= clock.ToRealtime(static_cast<uint64_t>(std::max<int64_t>(t, 0))) - realtime_ns;
  return static_cast<uint64_t>(std::max<int64_t>(t, 0));
}

}  // namespace

builder::Window KinetoWindow(const builder::CaptureIndex& index, const KinetoTrace& kineto) {
  builder::Window w;
  w.label = "torch.profiler";
  auto [first, last] = kineto.span();
  w.start_ns = ToCupti(index.clock(), first);
  w.end_ns = std::max(ToCupti(index.clock(), last) + 1, w.start_ns + 1);
  w.ops_by_launch = true;
  return w;
}

Result<SpliceReport> SpliceIntoKineto(const builder::CaptureIndex& index, const builder::BuildOptions& options,
                                      const builder::Window& window, const KinetoTrace& kineto,
                                      const std::string& output) {
  SpliceReport report;
  if (kineto.gpu_events() > 0) {
    report.warnings.push_back(kineto.path() + " already holds " + std::to_string(kineto.gpu_events()) +
                              " GPU events; gpucap's are added beside them");
  }
  const auto& session = index.capture().session;
  if (session && !kineto.cpu_pids().empty() && !kineto.cpu_pids().count(session->pid)) {
    report.warnings.push_back(kineto.path() + " profiles another process than " + index.path() + " (pid " +
                              std::to_string(session->pid) + "): launches cannot be tied to its ops");
  }
  auto [first, last] = kineto.span();
  int64_t from = index.clock().ToRealtime(window.start_ns), to = index.clock().ToRealtime(window.end_ns);
  if (last != 0 && (to < first || from > last)) {
    report.warnings.push_back("the window and " + kineto.path() + " do not overlap in time: check that both come from one run");
  }
  auto file = builder::OpenOutput(output, options.output_options);
  if (!file.ok()) return file.status();
  auto bytes = std::make_unique<SpliceBytes>(std::move(file).value(), kineto);
  auto renderer = builder::NewChromeJsonRenderer(std::move(bytes));
  SpliceSink sink(std::move(renderer), kineto, &report);
  builder::BuildOptions o = options;
  if (o.join.trace_name.empty()) o.join.trace_name = kineto.path();
  builder::Builder b(index, o);
  GPUCAP_RETURN_IF_ERROR(b.BuildWindow(window, &sink, &report.window));
  for (const std::string& line : index.capture().report.Describe(index.path())) report.warnings.push_back(line);
  return report;
}

}  // namespace gpucap::tools
