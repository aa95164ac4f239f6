#include "export_tables.h"

#include <cstring>
#include <mutex>
#include <unordered_map>

#include "driver_wrap.h"
#include "hook_probe.h"

namespace gpucap::gate {

// {a094798c-2e74-2e74-93f2-0800200c0a66}: named by the open
// reimplementations of the driver's private interface (ZLUDA).
const unsigned char kRuntimeCallbackHooksId[16] = {0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74,
                                                   0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66};

bool IsRuntimeCallbackHooks(const void* uuid_bytes) {
  return uuid_bytes && std::memcmp(uuid_bytes, kRuntimeCallbackHooksId, sizeof kRuntimeCallbackHooksId) == 0;
}

namespace {

struct Copies {
  std::mutex mu;
  std::unordered_map<const void*, const void*> of;  // original -> copy
  ExportTableCounts counts;
};

Copies& State() {
  static Copies* c = new Copies();  // never destroyed: handed-out copies outlive exit
  return *c;
}

}  // namespace

const void* WrapTable(const void* table, bool (*is_code)(const void*)) {
  Copies& c = State();
  std::lock_guard<std::mutex> lock(c.mu);
  if (!table) {
    ++c.counts.tables_refused;
    return nullptr;
  }
  auto it = c.of.find(table);
  if (it != c.of.end()) return it->second;
  uint64_t bytes;
  std::memcpy(&bytes, table, sizeof bytes);
  if (bytes % 8 != 0 || bytes < 16 || bytes > kMaxTableBytes || !WrapSupported()) {
    ++c.counts.tables_refused;
    return nullptr;
  }
  size_t words = bytes / 8;
  auto* copy = new uintptr_t[words];
  std::memcpy(copy, table, bytes);
  uint64_t wrapped = 0;
  for (size_t i = 1; i < words; ++i) {
    auto* entry = reinterpret_cast<void*>(copy[i]);
    if (!entry || !is_code(entry)) continue;
    void* stub = Wrap(entry);
    if (stub == entry) {  // no room for a stub: the copy would not cover it
      delete[] copy;
      ++c.counts.tables_refused;
      return nullptr;
    }
    copy[i] = reinterpret_cast<uintptr_t>(stub);
    ++wrapped;
  }
  // A diagnostic (hook_probe.h): only the entries wrapped above are probed.
  if (HookProbeOn()) InstallHookProbes(copy, bytes);
  c.of.emplace(table, copy);
  ++c.counts.tables_wrapped;
  c.counts.entries_wrapped += wrapped;
  return copy;
}

ExportTableCounts export_table_counts() {
  Copies& c = State();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.counts;
}

void CountRefusedTable() {
  Copies& c = State();
  std::lock_guard<std::mutex> lock(c.mu);
  ++c.counts.tables_refused;
}

}  // namespace gpucap::gate
