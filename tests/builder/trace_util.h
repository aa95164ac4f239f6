// Builds traces from synthetic captures and reads them back for assertions,
// including the Chrome JSON importer's rules (shared/reference/perfetto-facts.md).
#ifndef GPUCAP_TESTS_BUILDER_TRACE_UTIL_H_
#define GPUCAP_TESTS_BUILDER_TRACE_UTIL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpucap/builder/builder.h"
#include "json.h"

namespace gpucap::testing {

// A rendered trace, parsed.
struct Trace {
  std::string text;
  Json root;
  std::vector<const Json*> events;

  // Events of a phase ("X", "s", ...) and, if given, a category.
  std::vector<const Json*> Events(std::string_view ph, std::string_view cat = {}) const;
  // The X events named `name` (any category).
  std::vector<const Json*> Named(std::string_view name) const;
  // thread_name metadata for (pid, tid), or "".
  std::string ThreadName(uint64_t pid, uint64_t tid) const;
  // A count from the "gpucap" metadata object; -1 if absent.
  int64_t Count(std::string_view name) const;
};

// "123.456" -> 123456: timestamps compared exactly, not as doubles.
int64_t Nanos(const Json& us);

// Builds every window of `options` over the capture at `path` into memory.
// Fails the calling test (and returns empty) on error or invalid JSON.
std::vector<Trace> BuildTraces(const std::string& path, builder::BuildOptions options);
Trace BuildOne(const std::string& path, builder::BuildOptions options = {});

// Checks what an importer needs: top-level keys, pid/tid within uint32,
// X events with non-negative durations that nest per thread, flows bound
// (one "s" and one "f" per id and category, "f" with "bp":"e", each inside a
// slice of its thread), three decimals on timestamps.
void ExpectImporterRules(const Trace& trace);

}  // namespace gpucap::testing

#endif  // GPUCAP_TESTS_BUILDER_TRACE_UTIL_H_
