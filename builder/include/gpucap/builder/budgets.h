// What the builder will spend on one capture, whatever the capture claims.
// Sizes, counts, lengths and times read from a capture are checked against
// these (and against what the bytes can hold) before anything is allocated,
// so a few KB of hostile input cannot ask for gigabytes or hours.
#ifndef GPUCAP_BUILDER_BUDGETS_H_
#define GPUCAP_BUILDER_BUDGETS_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

namespace gpucap::builder {

// Demangled kernel names and NVTX range names longer than this are cut and
// end in kTruncatedMarker (the longest CUTLASS names demangle to ~2 KB).
inline constexpr size_t kMaxNameBytes = 4096;
inline constexpr std::string_view kTruncatedMarker = " [truncated]";
// Mangled names longer than this are shown as written: the demangler's work
// space grows with its input, on the stack.
inline constexpr size_t kMaxMangledBytes = 8192;

// Push/pop ranges nested deeper than this on one thread (a program that
// forgets a pop in its step loop) are kept as ranges but not as parents.
inline constexpr size_t kMaxRangeDepth = 256;

// Windows one spec may resolve to, and window indices one --select may name.
inline constexpr size_t kMaxWindows = 100'000;
inline constexpr size_t kMaxSelected = 1'000'000;

// Timestamps further than this from the capture's anchor (its session's
// start, else its first chunk's) are implausible: no recording runs a year.
inline constexpr uint64_t kMaxPlausibleSpanNs = 366ull * 24 * 3600 * 1'000'000'000;

// A name cut to kMaxNameBytes with the marker, or the name.
std::string_view TruncateName(std::string_view name, std::string* storage);
// The same, keeping a cut name in a new string at the end of `cut` (views
// into a deque's strings stay valid as it grows); a name within the budget
// adds nothing, so cut->size() counts the names cut.
std::string_view TruncateName(std::string_view name, std::deque<std::string>* cut);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_BUDGETS_H_
