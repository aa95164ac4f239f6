#include "gpucap/tools/trim/anonymize.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <set>

namespace gpucap::tools {
namespace {

// Option keys the recorder (recorder/src/config.cc) and trim write: they say
// what was set, never by whom. Any other key (a GPUCAP_ variable of the
// user's own) is hashed like the values, which can be paths.
// tests/anonymize_keys/check_option_keys.py fails when the recorder or the
// CLI spells a GPUCAP_ option this list lacks.
const std::set<std::string, std::less<>>& KnownOptionKeys() {
  static const std::set<std::string, std::less<>> keys = {
      "GPUCAP_API", "GPUCAP_API_RECORDS", "GPUCAP_BUFFER_KB", "GPUCAP_CAPTURE_ARM", "GPUCAP_CAPTURE_RANGE",
      "GPUCAP_CAPTURE_RANGE_END", "GPUCAP_CAPTURE_STREAMS", "GPUCAP_COUNTERS", "GPUCAP_COUNTER_MS",
      "GPUCAP_CUDA_GRAPH_TRACE", "GPUCAP_DELAY_S", "GPUCAP_DEVICE_BUFFER_KB", "GPUCAP_DEVICE_BUFFERS_AHEAD", "GPUCAP_DURATION_S",
      "GPUCAP_FLUSH_MS", "GPUCAP_GRAPHS", "GPUCAP_HOST_NODE_TIMES", "GPUCAP_KINDS", "GPUCAP_LATENCY_TIMESTAMPS",
      "GPUCAP_MAX_MB", "GPUCAP_NVTX", "GPUCAP_OUTPUT", "GPUCAP_PAUSED_GRAPHS", "GPUCAP_PAUSE_DETACH",
      "GPUCAP_PM_INTERVAL_US", "GPUCAP_PM_METRICS", "GPUCAP_POOL_MB", "GPUCAP_QUIET", "GPUCAP_RANGE_CLOCK",
      "GPUCAP_RESOURCE", "GPUCAP_SAMPLE", "GPUCAP_SESSION_START_NS", "GPUCAP_START_PAUSED", "GPUCAP_SUBSCRIBE",
      "GPUCAP_SYSTEM_TIDS", "GPUCAP_TRIGGER_FILE", "GPUCAP_TRIGGER_WINDOWS", "GPUCAP_WINDOW_NVTX",
      "GPUCAP_SAMPLE_SEED", "GPUCAP_SIGUSR2", "GPUCAP_DETACH_LATE_OFF", "GPUCAP_RECLAIM_AT_DETACH", "GPUCAP_PER_THREAD_BUFFERS", "GPUCAP_FLUSH_GATED", "GPUCAP_SWITCHES_GATED", "GPUCAP_ATTACH_AHEAD", "GPUCAP_ATTACH_PREPARE", "GPUCAP_ATTACH_WARM", "GPUCAP_DETACH_QUIET_MS", "GPUCAP_DETACH_WAIT_US",
      "GPUCAP_GATE_HOOKS", "GPUCAP_GATE_HOOK_PROBE", "GPUCAP_RING_MB", "GPUCAP_RING_S", "GPUCAP_RING_DUMP_AT_EXIT",
      "GPUCAP_RING_CRASH", "GPUCAP_RING_FLUSH_MS", "GPUCAP_RING_HANG_S", "GPUCAP_RING_HANG_CALL_S",
      "GPUCAP_RING_SLOW_STEP", "GPUCAP_RING_SLOW_WINDOW", "GPUCAP_RING_DUMP_INTERVAL_S",
      "unknown_kinds", "bad_cuda_graph_trace", "cuda_graph_trace_refused", "bad_api_records", "gpucap.trimmed_from", "gpucap.trim_window",
      "gpucap.trim_select", "gpucap.anonymized"};
  return keys;
}

// Why the recorder stopped, in its own words (recorder_control.cc,
// injection.cc, capture_writer.cc); anything else (a writer error holds
// paths) is hashed.
bool KnownStopReason(std::string_view r) {
  static const std::set<std::string, std::less<>> reasons = {
      "exit", "exec", "SIGTERM", "SIGINT", "signal", "capture range end", "duration reached",
      "writer destroyed without Close", "flight-recorder dump",
      // The crash trigger's (recorder/src/crash_dump.cc).
      "crash: SIGSEGV", "crash: SIGBUS", "crash: SIGFPE", "crash: SIGILL", "crash: SIGABRT"};
  if (reasons.count(r)) return true;
  constexpr std::string_view kCap = "size cap of ", kCapEnd = " bytes reached";
  if (r.starts_with(kCap) && r.ends_with(kCapEnd) && r.size() > kCap.size() + kCapEnd.size()) {
    std::string_view digits = r.substr(kCap.size(), r.size() - kCap.size() - kCapEnd.size());
    return std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  }
  return false;
}

// Payload schema entry names the builder reads (collectives.cc): NCCL's own
// words, kept so an anonymized capture still shows collective sizes.
bool BuilderReadsEntry(std::string_view name) {
  return name == "NCCL communicator ID" || name == "Message size [bytes]" || name == "No. of ranks";
}

// Bytes of an NVTX_PAYLOAD_ENTRY_TYPE_* that is a number: 3..10 short..
// unsigned long long (LP64), 11..18 fixed-size integers, 19 float, 20
// double, 22 size_t. 0 for the rest: characters (1, 2, 24..), long double,
// addresses (23) and other schemas' ids.
uint32_t NumberBytes(uint64_t type) {
  static constexpr std::array<uint8_t, 23> kBytes = {0, 0, 0, 2, 2, 4, 4, 8, 8, 8, 8, 1,
                                                     1, 2, 2, 4, 4, 8, 8, 4, 8, 0, 8};
  return type < kBytes.size() ? kBytes[type] : 0;
}

}  // namespace

const std::vector<FieldRule>& SchemaFieldRules() {
  static const std::vector<FieldRule> rules = {
      {"KeyValue.key", "hashed", "option names: the recorder's and trim's own kept, any other hashed"},
      {"KeyValue.value", "hashed", "option values can be paths"},
      {"Session.toolVersion", "kept", "gpucap's release, the same for every user of it; readers check it"},
      {"Session.host", "hashed", "the machine"},
      {"Session.commandLine", "hashed", "paths and arguments, one hash each"},
      {"Session.processName", "hashed", "the program"},
      {"Device.uuid", "zeroed", "identifies the board"},
      {"Device.name", "kept", "the product's model name (\"NVIDIA H200\"), shared by every board of it"},
      {"Device.pciBusId", "hashed", "the machine's layout"},
      {"ActivityChunk.payload", "numbers kept",
       "CUPTI records of fixed layouts: ids, times, sizes; their names are StringDefs, hashed"},
      {"StringDef.text", "hashed", "kernel, range and domain names"},
      {"RangeEvent.name", "hashed", "range, thread, domain, category and payload schema names"},
      {"ExtPayload.data", "numbers kept", "bytes a registered schema says are numbers; the rest zeroed"},
      {"PayloadSchemaEntry.name", "hashed", "kept only for the NCCL entries the builder reads"},
      {"PayloadSchemaEntry.description", "hashed", "the program's words"},
      {"PayloadEnumEntry.name", "hashed", "the program's words"},
      {"GraphEvent.functionName", "hashed", "kernel and host function names"},
      {"WindowMark.label", "hashed", "the program's words"},
      {"ThreadInfo.name", "hashed", "the program's words"},
      {"MetadataBlob.name", "hashed", "the program's words"},
      {"MetadataBlob.contentType", "hashed", "the program's words"},
      {"MetadataBlob.data", "hashed", "the program's data, one hash for the whole blob"},
      {"Stats.writerError", "hashed", "holds paths"},
      {"NamedCount.name", "hashed", "counter names a recorder build added"},
      {"CounterDef.name", "kept", "the sampler's metric names (NVML, CUPTI PM sampling), the same on every machine"},
      {"CounterDef.unit", "kept", "units of those metrics"},
      {"Trailer.stopReason", "hashed", "the recorder's own reasons kept; others (errors with paths) hashed"},
      {"Trailer.trigger", "hashed",
       "a flight-recorder dump's trigger: the recorder's own words kept, the program's gpucap_dump reasons hashed"},
  };
  return rules;
}

Anonymizer::Anonymizer(AnonymizeKey key, const std::string& keep, const format::Capture& capture)
    : key_(std::move(key)) {
  if (!keep.empty()) {
    auto m = builder::NameMatcher::Compile(keep);
    if (m.ok()) keep_.emplace(std::move(m).value());
  }
  for (const format::RangeEvent& e : capture.ranges) {
    if (e.kind == format::RangeKind::kPayloadSchema) schemas_[{e.domain, e.id}] = *e.schema;
  }
}

void Anonymizer::Session(format::SessionInfo* s) const {
  s->host = key_.Hash("host", s->host);
  s->process_name = key_.Hash("process", s->process_name);
  for (std::string& arg : s->command_line) arg = key_.Hash("arg", arg);
  for (auto& [k, value] : s->options) {
    if (!KnownOptionKeys().count(k)) k = key_.Hash("option", k);
    value = key_.Hash("value", value);
  }
}

void Anonymizer::Device(format::DeviceInfo* d) const {
  d->pci_bus_id = key_.Hash("pci", d->pci_bus_id);
  d->uuid.fill(0);
}

void Anonymizer::Thread(format::ThreadInfo* t) const { t->name = key_.Hash("thread", t->name); }

void Anonymizer::WindowMark(format::WindowMark* m) const { m->label = key_.Hash("label", m->label); }

void Anonymizer::Metadata(format::MetadataBlob* b) const {
  b->name = key_.Hash("name", b->name);
  b->content_type = key_.Hash("type", b->content_type);
  b->data = key_.Hash("data", b->data);
}

void Anonymizer::Stats(format::RecorderStats* s) const {
  s->writer_error = key_.Hash("error", s->writer_error);
  for (auto& [name, value] : s->extra) name = key_.Hash("counter", name);
}

void Anonymizer::Graph(format::GraphEvent* e) const {
  bool kernel = e->node_type == 0 && e->kind == format::GraphEventKind::kNodeCreated;
  e->function_name = key_.Hash(kernel ? "kernel" : "function", e->function_name);
}

std::string Anonymizer::RangeName(const std::string& name) const {
  if (name.empty() || (keep_ && keep_->Matches(name))) return name;
  return key_.Hash("range", name);
}

std::string Anonymizer::StopReason(const std::string& reason) const {
  // The writer joins its own reason to the recorder's with "; ".
  std::string out;
  size_t from = 0;
  while (from <= reason.size()) {
    size_t at = reason.find("; ", from);
    std::string part = reason.substr(from, at == std::string::npos ? std::string::npos : at - from);
    if (!out.empty()) out += "; ";
    out += KnownStopReason(part) ? part : key_.Hash("stop", part);
    if (at == std::string::npos) break;
    from = at + 2;
  }
  return out;
}

void Anonymizer::Range(format::RangeEvent* e) const {
  using K = format::RangeKind;
  switch (e->kind) {
    case K::kNameThread: e->name = key_.Hash("thread", e->name); break;
    case K::kNameDomain: e->name = Domain(e->name); break;
    case K::kNameCategory: e->name = key_.Hash("category", e->name); break;
    case K::kPayloadSchema:
    case K::kPayloadEnum: e->name = key_.Hash("schema", e->name); break;
    default: e->name = RangeName(e->name); break;
  }
  for (format::PayloadSchemaEntry& entry : e->schema->entries) {
    if (!BuilderReadsEntry(entry.name)) entry.name = key_.Hash("entry", entry.name);
    entry.description = key_.Hash("description", entry.description);
  }
  for (format::PayloadEnumEntry& entry : e->schema->enum_entries) entry.name = key_.Hash("enum", entry.name);
  for (format::ExtPayload& p : e->ext_payloads) Payload(*e, &p);
}

void Anonymizer::Payload(const format::RangeEvent& e, format::ExtPayload* p) const {
  std::string kept(p->data.size(), '\0');
  auto it = schemas_.find({e.domain, p->schema_id});
  if (it != schemas_.end()) {
    for (const format::PayloadSchemaEntry& entry : it->second.entries) {
      uint32_t n = NumberBytes(entry.type);
      // Flags mark arrays, pointers and deep copies: not a number in place.
      if (n == 0 || entry.flags != 0 || entry.offset > p->data.size() || p->data.size() - entry.offset < n) continue;
      std::memcpy(kept.data() + entry.offset, p->data.data() + entry.offset, n);
    }
  }
  p->data = std::move(kept);
}

}  // namespace gpucap::tools
