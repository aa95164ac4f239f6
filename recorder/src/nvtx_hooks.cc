#include "nvtx_hooks.h"

#include "nvtx_payload.h"  // NVTX's headers, without their implementation
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <cwchar>
#include <string>
#include <string_view>
#include <vector>

#include "process_recorder.h"
#include "recorder.h"

// NVTX's opaque handle types are pointers to structs it never defines; a tool
// defines them as it likes.
struct nvtxDomainRegistration_st {
  uint64_t id;
};
struct nvtxStringRegistration_st {
  std::string text;
};

namespace gpucap::recorder {
namespace {

using format::RangeEvent;
using format::RangeKind;

std::atomic<uint64_t> g_next_domain{1};
std::atomic<uint64_t> g_next_range{1};
std::atomic<uint64_t> g_next_schema{NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START};

uint64_t NextDynamicSchema() { return g_next_schema.fetch_add(1, std::memory_order_relaxed); }

std::string Utf8(const wchar_t* w) {
  std::string out;
  if (!w) return out;
  std::mbstate_t state{};
  char buf[MB_LEN_MAX];
  for (; *w; ++w) {
    size_t n = std::wcrtomb(buf, *w, &state);
    if (n == static_cast<size_t>(-1)) {
      out += '?';
      state = {};
    } else {
      out.append(buf, n);
    }
  }
  return out;
}

std::string MessageOf(const nvtxEventAttributes_t* a) {
  if (!a) return {};
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return a->message.ascii ? a->message.ascii : "";
    case NVTX_MESSAGE_TYPE_UNICODE: return Utf8(a->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED:
      return a->message.registered ? a->message.registered->text : "";
    default: return {};
  }
}

uint64_t DomainId(nvtxDomainHandle_t d) { return d ? d->id : 0; }

// What a range event carries but its name and extended payloads. The
// timestamp is CUPTI's clock, as every record's (the builder converts).
RangeFields Fields(RangeKind kind, nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a, Recorder* r) {
  RangeFields f;
  f.kind = kind;
  f.source = format::RangeSource::kNvtx;
  f.timestamp_ns = r->RangeNow();
  f.domain = DomainId(domain);
  if (a) {
    f.category = a->category;
    if (a->colorType == NVTX_COLOR_ARGB) f.color = a->color;
    switch (a->payloadType) {
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64: f.payload_type = 1; f.payload = a->payload.ullValue; break;
      case NVTX_PAYLOAD_TYPE_INT64: f.payload_type = 2; f.payload = static_cast<uint64_t>(a->payload.llValue); break;
      case NVTX_PAYLOAD_TYPE_DOUBLE: f.payload_type = 3; std::memcpy(&f.payload, &a->payload.dValue, 8); break;
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32: f.payload_type = 1; f.payload = a->payload.uiValue; break;
      case NVTX_PAYLOAD_TYPE_INT32:
        f.payload_type = 2;
        f.payload = static_cast<uint64_t>(int64_t{a->payload.iValue});
        break;
      case NVTX_PAYLOAD_TYPE_FLOAT: {
        double d = a->payload.fValue;
        f.payload_type = 3;
        std::memcpy(&f.payload, &d, 8);
        break;
      }
      default: break;
    }
  }
  return f;
}

// Extended payloads: the payload extension's own (payloads, count) or, for
// the core calls, those the attributes point at (NVTX_PAYLOAD_TYPE_EXT).
// Rare: most ranges have none and pay one test.
std::vector<format::ExtPayload> ExtOf(const nvtxEventAttributes_t* a, const nvtxPayloadData_t* payloads,
                                      size_t count) {
  if (payloads && count) return CopyPayloads(payloads, count);
  if (a && a->payloadType == NVTX_PAYLOAD_TYPE_EXT) return CopyAttributePayloads(*a);
  return {};
}

// Push depth per thread and domain, returned by push and pop as NVTX
// specifies: a pop ends the innermost push of its own domain only, so NCCL's
// ranges interleaved with the application's never end each other's.
struct DomainDepth {
  uint64_t domain;
  int depth;
};

// Everything a handler keeps per thread, in one trivially destructible
// thread_local: in a library NVTX loads with dlopen each thread_local is a
// __tls_get_addr call, and one with a destructor adds a guard. A thread uses
// a few domains; more than kInline spill into a vector of their own.
struct NvtxThread {
  static constexpr int kInline = 8;
  DomainDepth depths[kInline] = {};
  int domains = 0;
  RangeLog::WriterCache writer;
};
constinit thread_local NvtxThread t_nvtx;  // constant-initialised: no guard
thread_local std::vector<DomainDepth> t_more_depths;

// t_nvtx's address, looked up once per call: GCC recomputes a TLS address
// (a __tls_get_addr call here) wherever it is used rather than keep it in a
// register, unless it comes back from a call.
[[gnu::noinline]] NvtxThread* ThisThread() { return &t_nvtx; }

int& DepthOf(NvtxThread& t, nvtxDomainHandle_t domain) {
  uint64_t id = DomainId(domain);
  for (int i = 0; i < t.domains; ++i) {
    if (t.depths[i].domain == id) return t.depths[i].depth;
  }
  if (t.domains < NvtxThread::kInline) {
    t.depths[t.domains] = {id, 0};
    return t.depths[t.domains++].depth;
  }
  for (DomainDepth& d : t_more_depths) {
    if (d.domain == id) return d.depth;
  }
  t_more_depths.push_back({id, 0});
  return t_more_depths.back().depth;
}

// The name as NVTX gave it, without a copy unless it came as wide
// characters: the range's record copies it once.
std::string_view NameView(const nvtxEventAttributes_t* a, const char* ascii, std::string* keep) {
  if (ascii) return ascii;
  if (a && a->messageType == NVTX_MESSAGE_TYPE_ASCII) return a->message.ascii ? a->message.ascii : "";
  if (a && a->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
    return a->message.registered ? std::string_view(a->message.registered->text) : "";
  }
  *keep = MessageOf(a);
  return *keep;
}

// A push/pop range is where it is on its thread; a start/end range is its id
// (any thread may end it).
CaptureGate::RangeKey KeyOf(nvtxDomainHandle_t domain, int depth, uint64_t start_id) {
  if (start_id) return CaptureGate::RangeKey{0, 0, 0, start_id};
  return CaptureGate::RangeKey{CurrentOsTid(), DomainId(domain), depth, 0};
}

// Whether an event has anything to do: a recorder that records, or one
// whose capture ranges look at names. Paused, a range costs its depth and
// this test.
Recorder* Interested() {
  Recorder* r = ProcessRecorder();
  return r && (r->accepting() || r->gated()) ? r : nullptr;
}

// One event: capture ranges first (a matching range starts recording before
// its own event is taken), then the event while recording.
void Open(Recorder* r, NvtxThread& t, RangeKind kind, nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a,
          const char* ascii, int depth, uint64_t id, const nvtxPayloadData_t* payloads, size_t count) {
  std::string keep;
  std::string_view name;
  bool named = false;
  if (r->gated() && kind != RangeKind::kMark) {
    name = NameView(a, ascii, &keep);
    named = true;
    r->GateRangeOpen(name, [&] { return KeyOf(domain, depth, kind == RangeKind::kStart ? id : 0); });
  }
  if (!r->accepting()) return;
  if (!named) name = NameView(a, ascii, &keep);
  RangeFields f = Fields(kind, domain, a, r);
  f.id = id;
  std::vector<format::ExtPayload> ext = ExtOf(a, payloads, count);
  r->AddRangeFields(f, name, ext.empty() ? nullptr : &ext, &t.writer);
}

// A pop or end: its event while recording, then capture ranges (a recorded
// range stops recording after its end's event is taken).
void Close(Recorder* r, NvtxThread& t, RangeKind kind, nvtxDomainHandle_t domain, int depth, uint64_t id,
           const nvtxPayloadData_t* payloads, size_t count) {
  if (r->accepting()) {
    RangeFields f = Fields(kind, domain, nullptr, r);
    f.id = id;
    std::vector<format::ExtPayload> ext = ExtOf(nullptr, payloads, count);
    r->AddRangeFields(f, {}, ext.empty() ? nullptr : &ext, &t.writer);
  }
  if (r->gated()) r->GateRangeClose([&] { return KeyOf(domain, depth, kind == RangeKind::kEnd ? id : 0); });
}

int Push(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a, const char* ascii,
         const nvtxPayloadData_t* payloads = nullptr, size_t count = 0) {
  NvtxThread* t = ThisThread();
  int depth = DepthOf(*t, domain)++;
  if (Recorder* r = Interested()) Open(r, *t, RangeKind::kPush, domain, a, ascii, depth, 0, payloads, count);
  return depth;
}

int Pop(nvtxDomainHandle_t domain, const nvtxPayloadData_t* payloads = nullptr, size_t count = 0) {
  NvtxThread* t = ThisThread();
  int& depth = DepthOf(*t, domain);
  if (depth == 0) return -1;
  int now = --depth;
  if (Recorder* r = Interested()) Close(r, *t, RangeKind::kPop, domain, now, 0, payloads, count);
  return now;
}

nvtxRangeId_t Start(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a, const char* ascii,
                    const nvtxPayloadData_t* payloads = nullptr, size_t count = 0) {
  uint64_t id = g_next_range.fetch_add(1, std::memory_order_relaxed);
  if (Recorder* r = Interested()) Open(r, *ThisThread(), RangeKind::kStart, domain, a, ascii, 0, id, payloads, count);
  return id;
}

void End(nvtxDomainHandle_t domain, nvtxRangeId_t id, const nvtxPayloadData_t* payloads = nullptr,
         size_t count = 0) {
  if (Recorder* r = Interested()) Close(r, *ThisThread(), RangeKind::kEnd, domain, 0, id, payloads, count);
}

void Mark(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a, const char* ascii,
          const nvtxPayloadData_t* payloads = nullptr, size_t count = 0) {
  if (Recorder* r = Interested()) Open(r, *ThisThread(), RangeKind::kMark, domain, a, ascii, 0, 0, payloads, count);
}

// Names and payload schemas are rare and must not be lost to a pause: they
// bypass accepting().
void Define(RangeEvent e, nvtxDomainHandle_t domain) {
  Recorder* r = ProcessRecorder();
  if (!r) return;
  e.source = format::RangeSource::kNvtx;
  e.timestamp_ns = r->Now();
  e.os_tid = CurrentOsTid();
  e.domain = DomainId(domain);
  r->AddEvent(std::move(e));
}

void Name(RangeKind kind, nvtxDomainHandle_t domain, uint64_t id, std::string name) {
  RangeEvent e;
  e.kind = kind;
  e.id = id;
  e.name = std::move(name);
  Define(std::move(e), domain);
}

// --- the handlers NVTX calls ---

void NVTX_API MarkEx(const nvtxEventAttributes_t* a) { Mark(nullptr, a, nullptr); }
void NVTX_API MarkA(const char* m) { Mark(nullptr, nullptr, m); }
void NVTX_API MarkW(const wchar_t* m) { Mark(nullptr, nullptr, Utf8(m).c_str()); }
nvtxRangeId_t NVTX_API RangeStartEx(const nvtxEventAttributes_t* a) { return Start(nullptr, a, nullptr); }
nvtxRangeId_t NVTX_API RangeStartA(const char* m) { return Start(nullptr, nullptr, m); }
nvtxRangeId_t NVTX_API RangeStartW(const wchar_t* m) { return Start(nullptr, nullptr, Utf8(m).c_str()); }
void NVTX_API RangeEnd(nvtxRangeId_t id) { End(nullptr, id); }
int NVTX_API RangePushEx(const nvtxEventAttributes_t* a) { return Push(nullptr, a, nullptr); }
int NVTX_API RangePushA(const char* m) { return Push(nullptr, nullptr, m); }
int NVTX_API RangePushW(const wchar_t* m) { return Push(nullptr, nullptr, Utf8(m).c_str()); }
int NVTX_API RangePop() { return Pop(nullptr); }
void NVTX_API NameCategoryA(uint32_t c, const char* n) { Name(RangeKind::kNameCategory, nullptr, c, n ? n : ""); }
void NVTX_API NameCategoryW(uint32_t c, const wchar_t* n) { Name(RangeKind::kNameCategory, nullptr, c, Utf8(n)); }
void NVTX_API NameOsThreadA(uint32_t tid, const char* n) { Name(RangeKind::kNameThread, nullptr, tid, n ? n : ""); }
void NVTX_API NameOsThreadW(uint32_t tid, const wchar_t* n) { Name(RangeKind::kNameThread, nullptr, tid, Utf8(n)); }

void NVTX_API DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) { Mark(d, a, nullptr); }
nvtxRangeId_t NVTX_API DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) { return Start(d, a, nullptr); }
void NVTX_API DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id) { End(d, id); }
int NVTX_API DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) { return Push(d, a, nullptr); }
int NVTX_API DomainRangePop(nvtxDomainHandle_t d) { return Pop(d); }
void NVTX_API DomainNameCategoryA(nvtxDomainHandle_t d, uint32_t c, const char* n) { Name(RangeKind::kNameCategory, d, c, n ? n : ""); }
void NVTX_API DomainNameCategoryW(nvtxDomainHandle_t d, uint32_t c, const wchar_t* n) { Name(RangeKind::kNameCategory, d, c, Utf8(n)); }

// Registered strings and domains live as long as the process: NVTX hands the
// handles back on every event and never says when they die.
nvtxStringHandle_t NVTX_API DomainRegisterStringA(nvtxDomainHandle_t, const char* s) {
  return new nvtxStringRegistration_st{s ? s : ""};
}
nvtxStringHandle_t NVTX_API DomainRegisterStringW(nvtxDomainHandle_t, const wchar_t* s) {
  return new nvtxStringRegistration_st{Utf8(s)};
}
nvtxDomainHandle_t NVTX_API DomainCreateA(const char* name) {
  auto* d = new nvtxDomainRegistration_st{g_next_domain.fetch_add(1)};
  Name(RangeKind::kNameDomain, d, d->id, name ? name : "");
  return d;
}
nvtxDomainHandle_t NVTX_API DomainCreateW(const wchar_t* name) {
  auto* d = new nvtxDomainRegistration_st{g_next_domain.fetch_add(1)};
  Name(RangeKind::kNameDomain, d, d->id, Utf8(name));
  return d;
}
void NVTX_API DomainDestroy(nvtxDomainHandle_t) {}
void NVTX_API Initialize(const void*) {}

// --- the payload extension's handlers ---

uint64_t NVTX_API PayloadSchemaRegister(nvtxDomainHandle_t d, const nvtxPayloadSchemaAttr_t* a) {
  if (!a) return 0;
  RangeEvent e;
  e.kind = RangeKind::kPayloadSchema;
  e.id = SchemaIdOf(a->fieldMask, a->schemaId, NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID,
                    NextDynamicSchema);
  if ((a->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME) && a->name) e.name = a->name;
  e.schema = SchemaOf(*a);
  uint64_t id = e.id;
  Define(std::move(e), d);
  return id;
}
uint64_t NVTX_API PayloadEnumRegister(nvtxDomainHandle_t d, const nvtxPayloadEnumAttr_t* a) {
  if (!a) return 0;
  RangeEvent e;
  e.kind = RangeKind::kPayloadEnum;
  e.id = SchemaIdOf(a->fieldMask, a->schemaId, NVTX_PAYLOAD_ENUM_ATTR_FIELD_SCHEMA_ID,
                    NextDynamicSchema);
  if ((a->fieldMask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_NAME) && a->name) e.name = a->name;
  e.schema = EnumOf(*a);
  uint64_t id = e.id;
  Define(std::move(e), d);
  return id;
}
void NVTX_API MarkPayload(nvtxDomainHandle_t d, const nvtxPayloadData_t* p, size_t n) {
  Mark(d, nullptr, nullptr, p, n);
}
int NVTX_API RangePushPayload(nvtxDomainHandle_t d, const nvtxPayloadData_t* p, size_t n) {
  return Push(d, nullptr, nullptr, p, n);
}
int NVTX_API RangePopPayload(nvtxDomainHandle_t d, const nvtxPayloadData_t* p, size_t n) {
  return Pop(d, p, n);
}
nvtxRangeId_t NVTX_API RangeStartPayload(nvtxDomainHandle_t d, const nvtxPayloadData_t* p, size_t n) {
  return Start(d, nullptr, nullptr, p, n);
}
void NVTX_API RangeEndPayload(nvtxDomainHandle_t d, nvtxRangeId_t id, const nvtxPayloadData_t* p,
                              size_t n) {
  End(d, id, p, n);
}
uint8_t NVTX_API DomainIsEnabled(nvtxDomainHandle_t) { return 1; }

template <typename F>
void Set(NvtxFunctionTable table, unsigned size, unsigned cbid, F fn) {
  if (cbid < size && table[cbid]) *table[cbid] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

}  // namespace

bool InstallNvtxHooks(const void* (*get_export_table)(uint32_t)) {
  if (!get_export_table) return false;
  auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (!callbacks || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) ||
      !callbacks->GetModuleFunctionTable) {
    return false;
  }
  NvtxFunctionTable core = nullptr;
  unsigned core_size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) && core) {
    Set(core, core_size, NVTX_CBID_CORE_MarkEx, MarkEx);
    Set(core, core_size, NVTX_CBID_CORE_MarkA, MarkA);
    Set(core, core_size, NVTX_CBID_CORE_MarkW, MarkW);
    Set(core, core_size, NVTX_CBID_CORE_RangeStartEx, RangeStartEx);
    Set(core, core_size, NVTX_CBID_CORE_RangeStartA, RangeStartA);
    Set(core, core_size, NVTX_CBID_CORE_RangeStartW, RangeStartW);
    Set(core, core_size, NVTX_CBID_CORE_RangeEnd, RangeEnd);
    Set(core, core_size, NVTX_CBID_CORE_RangePushEx, RangePushEx);
    Set(core, core_size, NVTX_CBID_CORE_RangePushA, RangePushA);
    Set(core, core_size, NVTX_CBID_CORE_RangePushW, RangePushW);
    Set(core, core_size, NVTX_CBID_CORE_RangePop, RangePop);
    Set(core, core_size, NVTX_CBID_CORE_NameCategoryA, NameCategoryA);
    Set(core, core_size, NVTX_CBID_CORE_NameCategoryW, NameCategoryW);
    Set(core, core_size, NVTX_CBID_CORE_NameOsThreadA, NameOsThreadA);
    Set(core, core_size, NVTX_CBID_CORE_NameOsThreadW, NameOsThreadW);
  }
  NvtxFunctionTable core2 = nullptr;
  unsigned core2_size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size) && core2) {
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainMarkEx, DomainMarkEx);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx, DomainRangeStartEx);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, DomainRangeEnd);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, DomainRangePushEx);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, DomainRangePop);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainNameCategoryA, DomainNameCategoryA);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainNameCategoryW, DomainNameCategoryW);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, DomainRegisterStringA);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringW, DomainRegisterStringW);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, DomainCreateA);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateW, DomainCreateW);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainDestroy, DomainDestroy);
    Set(core2, core2_size, NVTX_CBID_CORE2_Initialize, Initialize);
  }
  return core != nullptr || core2 != nullptr;
}

bool InstallNvtxPayloadHooks(nvtxExtModuleInfo_t* info) {
  // Other modules (counters, memory) stay no-ops. Slots only grow between
  // versions of the extension, so a slot below slotCount means the same call.
  if (!info || info->moduleId != NVTX_EXT_PAYLOAD_MODULEID || info->segmentsCount < 1 ||
      !info->segments || !info->segments[0].functionSlots) {
    return false;
  }
  nvtxExtModuleSegment_t& seg = info->segments[0];
  auto set = [&](size_t cbid, auto fn) {
    if (cbid < seg.slotCount) seg.functionSlots[cbid] = reinterpret_cast<intptr_t>(fn);
  };
  set(NVTX3EXT_CBID_nvtxPayloadSchemaRegister, PayloadSchemaRegister);
  set(NVTX3EXT_CBID_nvtxPayloadEnumRegister, PayloadEnumRegister);
  set(NVTX3EXT_CBID_nvtxMarkPayload, MarkPayload);
  set(NVTX3EXT_CBID_nvtxRangePushPayload, RangePushPayload);
  set(NVTX3EXT_CBID_nvtxRangePopPayload, RangePopPayload);
  set(NVTX3EXT_CBID_nvtxRangeStartPayload, RangeStartPayload);
  set(NVTX3EXT_CBID_nvtxRangeEndPayload, RangeEndPayload);
  set(NVTX3EXT_CBID_nvtxDomainIsEnabled, DomainIsEnabled);
  return true;
}

}  // namespace gpucap::recorder
