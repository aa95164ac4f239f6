#include "gpucap/format/memory_limit.h"

#include <atomic>
#include <charconv>
#include <cstdio>

namespace gpucap::format {
namespace {

std::atomic<uint64_t> g_limit{0};

// A std::string's own heap block: none within the short-string buffer.
uint64_t Heap(const std::string& s) { return s.size() > 15 ? s.capacity() + 1 : 0; }

struct Cost {
  uint64_t operator()(const SessionInfo& s) const {
    uint64_t n = Heap(s.tool_version) + Heap(s.host) + Heap(s.process_name);
    for (const std::string& a : s.command_line) n += sizeof(a) + Heap(a);
    for (const auto& [k, v] : s.options) n += sizeof(k) * 2 + Heap(k) + Heap(v);
    return n + (s.enabled_kinds.size() + s.record_sizes.size()) * 8;
  }
  uint64_t operator()(const DeviceInfo& d) const { return Heap(d.name) + Heap(d.pci_bus_id); }
  // Every command keeps a demangled (or cut) copy of a kernel's name.
  uint64_t operator()(const StringDef& s) const { return 2 * Heap(s.text); }
  uint64_t operator()(const RangeEvent& e) const {
    uint64_t n = Heap(e.name);
    for (const ExtPayload& p : e.ext_payloads) n += sizeof(p) + Heap(p.data);
    for (const PayloadSchemaEntry& s : e.schema->entries) n += sizeof(s) + Heap(s.name) + Heap(s.description);
    for (const PayloadEnumEntry& s : e.schema->enum_entries) n += sizeof(s) + Heap(s.name);
    return n;
  }
  // The graph index, and the exporter's graph tables, hold about as much
  // again per event (measured on GraphNodes: export peaks near 760 bytes a
  // node).
  uint64_t operator()(const GraphEvent& e) const { return sizeof(e) + Heap(e.function_name); }
  uint64_t operator()(const WindowMark& m) const { return Heap(m.label); }
  uint64_t operator()(const ThreadInfo& t) const { return Heap(t.name); }
  uint64_t operator()(const MetadataBlob& b) const { return Heap(b.name) + Heap(b.content_type) + Heap(b.data); }
  uint64_t operator()(const RecorderStats& s) const {
    uint64_t n = Heap(s.writer_error);
    for (const auto& [k, v] : s.extra) n += sizeof(k) + 8 + Heap(k);
    return n;
  }
  uint64_t operator()(const CounterDef& d) const { return Heap(d.name) + Heap(d.unit); }
  template <typename T>
  uint64_t operator()(const T&) const {
    return 0;
  }
};

}  // namespace

void SetMemoryLimit(uint64_t bytes) { g_limit.store(bytes, std::memory_order_relaxed); }

uint64_t MemoryLimitFor(uint64_t file_bytes) {
  uint64_t set = g_limit.load(std::memory_order_relaxed);
  if (set != 0) return set;
  if (file_bytes > (UINT64_MAX - kDefaultFixedBytes) / kDefaultPerFileByte) return UINT64_MAX;
  return kDefaultPerFileByte * file_bytes + kDefaultFixedBytes;
}

Result<uint64_t> ParseMemorySize(std::string_view text) {
  if (text == "none") return UINT64_MAX;
  auto bad = [&] {
    return Status::InvalidArgument("'" + std::string(text) +
                                   "' is not a memory size (e.g. 512M, 4G, 1.5G, none; K, M, G, T are powers of 1024)");
  };
  if (text.empty()) return bad();
  uint64_t scale = 1;
  switch (text.back()) {
    case 'K': case 'k': scale = 1ull << 10; break;
    case 'M': case 'm': scale = 1ull << 20; break;
    case 'G': case 'g': scale = 1ull << 30; break;
    case 'T': case 't': scale = 1ull << 40; break;
    default: break;
  }
  if (scale != 1) text.remove_suffix(1);
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size() || !(v > 0)) return bad();
  long double bytes = static_cast<long double>(v) * static_cast<long double>(scale);
  if (bytes >= 18446744073709551615.0L) return UINT64_MAX;
  return static_cast<uint64_t>(bytes);
}

std::string MemorySizeText(uint64_t bytes) {
  char buf[64];
  if (bytes == UINT64_MAX) return "no limit";
  if (bytes >= (1ull << 30)) {
    std::snprintf(buf, sizeof(buf), "%.1f GB", static_cast<double>(bytes) / (1ull << 30));
  } else if (bytes >= (1ull << 20)) {
    std::snprintf(buf, sizeof(buf), "%.0f MB", static_cast<double>(bytes) / (1ull << 20));
  } else if (bytes >= (1ull << 10)) {
    std::snprintf(buf, sizeof(buf), "%.0f KB", static_cast<double>(bytes) / (1ull << 10));
  } else {
    std::snprintf(buf, sizeof(buf), "%llu bytes", static_cast<unsigned long long>(bytes));
  }
  return buf;
}

uint64_t DecodedBytes(const SmallMessage& message) {
  // The list element (the capture's vectors hold each type by value) plus
  // its heap blocks.
  return std::visit([](const auto& m) { return sizeof(m) + Cost{}(m); }, message);
}

}  // namespace gpucap::format
