// Reads a Perfetto trace (a TracePacket stream) the way Perfetto's importer
// does, from the protobuf wire format up, without sharing a line with the
// renderer: its own field numbers (from shared/reference/perfetto-facts.md),
// its own wire decoding. While it reads it checks the importer's rules and
// records every violation:
//
//   - the file is repeated Trace.packet and nothing else, every message
//     parses to its end;
//   - every track_event packet has a nonzero trusted_packet_sequence_id, a
//     sequence's first packet clears its incremental state (flags 3);
//     later ones may leave the flags out;
//   - every iid (names, categories, annotation names, string values) is
//     defined on its sequence before or in the packet that uses it;
//   - incremental timestamps have a clock snapshot on their sequence, and
//     a track's events never go back in time;
//   - every BEGIN has its END on its track, an END never closes what is not
//     open, so no two slices on a track partially overlap;
//   - flows start once, terminate once, and not before they start;
//   - counter events sit on counter tracks, slices never do;
//   - repeated scalars (flow ids, category iids) are unpacked; flow ids
//     come as fixed64 (flow_ids) or varints (flow_ids_old), not both on one
//     event;
//   - tracks are described once, parents before children, events only go
//     to described tracks.
#ifndef GPUCAP_TESTS_PFTRACE_PFTRACE_READER_H_
#define GPUCAP_TESTS_PFTRACE_PFTRACE_READER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucap::testing {

struct PfTrack {
  uint64_t uuid = 0;
  uint64_t parent = 0;
  std::string name;  // the track's name, or process_name / thread_name
  bool is_process = false, is_thread = false, is_counter = false;
  int32_t pid = 0;
  int64_t tid = 0;
  std::string unit_name;
  uint32_t unit = 0;
  bool explicit_order = false;
  std::optional<int32_t> rank;
  uint32_t merge = 0;  // sibling_merge_behavior
  std::string description;
};

struct PfSlice {
  uint64_t track = 0;
  std::string name, category;
  int64_t ts = 0;
  int64_t dur = -1;  // -1: an instant
  // Argument name -> value as text: integers in decimal, doubles in their
  // shortest round-trip form, strings as they are, arrays as [a,b].
  std::vector<std::pair<std::string, std::string>> args;
  std::vector<uint64_t> flows_out, flows_in;
};

struct PfCounter {
  uint64_t track = 0;
  int64_t ts = 0;
  double value = 0;
};

// How a trace says what it says: by reference to interned data, or inline.
struct PfEncoding {
  uint64_t names_by_iid = 0, names_inline = 0;                  // event names
  uint64_t arg_names_by_iid = 0, arg_names_inline = 0;          // debug annotation names
  uint64_t strings_by_iid = 0, strings_inline = 0;              // debug annotation string values
  uint64_t categories_by_iid = 0, categories_inline = 0;
  // The same text defined again on a sequence that already has it (under
  // any iid of the same kind): interning that does not save.
  uint64_t redefinitions = 0;
  uint64_t sequences = 0;                // sequences that cleared their state
  uint64_t packets_with_flags = 0;       // packets carrying sequence_flags
  uint64_t fixed64_flow_ids = 0, varint_flow_ids = 0;  // flow ends of either kind
  uint64_t packets_with_interned = 0;    // packets carrying interned_data
  uint64_t events_with_interned = 0;     // of those, the ones that also carry a track event
};

struct PfTrace {
  std::map<uint64_t, PfTrack> tracks;
  std::vector<uint64_t> track_order;  // uuids in file order
  std::vector<PfSlice> slices;        // in the order they end (instants: as met)
  std::vector<PfCounter> counters;
  uint64_t packets = 0;
  PfEncoding encoding;
  std::vector<std::string> errors;  // the rules broken, one line each

  const PfTrack* Track(uint64_t uuid) const {
    auto it = tracks.find(uuid);
    return it == tracks.end() ? nullptr : &it->second;
  }
};

// Reads `bytes` (an uncompressed trace). Never fails: what is wrong is in
// errors.
PfTrace ReadPftrace(std::string_view bytes);

// gzip (one member or several) to bytes; empty on error.
std::string Gunzip(std::string_view gz);

}  // namespace gpucap::testing

#endif  // GPUCAP_TESTS_PFTRACE_PFTRACE_READER_H_
