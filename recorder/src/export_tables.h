// The driver's export tables that the entry gate covers (entry_gate.h,
// docs/recorder-detach.md). libcudart asks the driver, through
// cuGetExportTable, for private tables of function pointers; one of them,
// the tools runtime-callback hooks, is how every runtime API call (its
// enter and exit) reaches CUPTI's callbacks. A thread inside one of those
// functions is inside CUPTI without having made a driver call the gate
// sees, and a cuptiFinalize then crashes it (measured on the H200: 207 of
// 250 SIGUSR2 stress runs). So the gate hands libcudart a copy of that
// table whose functions are wrapped like any driver entry point.
//
// Contract:
// - A table is a size word (bytes, the word itself included) followed by
//   that many bytes of entries. WrapTable copies it, replacing each entry
//   that `is_code` says is a function (an address in the driver's
//   executable segments) by its stub (driver_wrap.h), leaving every other
//   word as it was. A table whose size word is not a multiple of 8 between
//   16 and kMaxTableBytes is refused (nullptr): the caller hands out the
//   original and the gate cannot vouch for it.
// - The copy of a given table is made once and never freed (tables live as
//   long as the driver); later requests get the same copy. Thread-safe.
// - Counters say what was wrapped and what was refused; a refusal means a
//   detach would race (the recorder then keeps CUPTI attached).
#ifndef GPUCAP_RECORDER_EXPORT_TABLES_H_
#define GPUCAP_RECORDER_EXPORT_TABLES_H_

#include <cstddef>
#include <cstdint>

namespace gpucap::gate {

// The runtime-callback hooks table's id, as cuGetExportTable takes it
// (a CUuuid's 16 bytes).
extern const unsigned char kRuntimeCallbackHooksId[16];
bool IsRuntimeCallbackHooks(const void* uuid_bytes);

constexpr size_t kMaxTableBytes = 64 * 8;

const void* WrapTable(const void* table, bool (*is_code)(const void*));

struct ExportTableCounts {
  uint64_t tables_wrapped = 0;   // distinct tables handed out as copies
  uint64_t entries_wrapped = 0;  // functions among their entries
  uint64_t tables_refused = 0;   // requests answered with the original
};
ExportTableCounts export_table_counts();
// A table the caller could not wrap (refused, or no driver code to check
// against) and handed out as it was.
void CountRefusedTable();

}  // namespace gpucap::gate

#endif  // GPUCAP_RECORDER_EXPORT_TABLES_H_
