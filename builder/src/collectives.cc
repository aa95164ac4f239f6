#include "gpucap/builder/collectives.h"

#include <array>
#include <cctype>
#include <cstring>
#include <map>
#include <optional>

namespace gpucap::builder {
namespace {

using format::RangeKind;

constexpr std::string_view kCommEntry = "NCCL communicator ID";
constexpr std::string_view kSizeEntry = "Message size [bytes]";
constexpr std::string_view kRanksEntry = "No. of ranks";

// Bytes of the NVTX payload entry types NCCL uses, LP64 (the recorder keeps
// no per-module size table; NCCL is built LP64). NVTX_PAYLOAD_ENTRY_TYPE_*:
// 1..10 C types char..unsigned long long, 11..18 fixed ints, 19..21 floats,
// 22 size_t, 23 address. 0: not an integer read here.
uint32_t EntryBytes(uint64_t type) {
  static constexpr std::array<uint8_t, 24> kBytes = {0, 1, 1, 2, 2, 4, 4, 8, 8, 8, 8, 1,
                                                     1, 2, 2, 4, 4, 8, 8, 0, 0, 0, 8, 8};
  return type < kBytes.size() ? kBytes[type] : 0;
}

std::optional<uint64_t> ReadEntry(const format::PayloadSchema& schema, std::string_view entry,
                                  std::string_view data) {
  for (const format::PayloadSchemaEntry& e : schema.entries) {
    if (e.name != entry) continue;
    uint32_t n = EntryBytes(e.type);
    // Not e.offset + n: an offset near 2^64 wraps it past the check.
    if (n == 0 || e.offset > data.size() || data.size() - e.offset < n) return std::nullopt;
    uint64_t v = 0;
    std::memcpy(&v, data.data() + e.offset, n);  // little-endian, as recorded
    return v;
  }
  return std::nullopt;
}

}  // namespace

CollectiveIndex::CollectiveIndex(const format::Capture& capture) {
  std::map<uint64_t, const format::PayloadSchema*> schemas;
  for (const format::RangeEvent& e : capture.ranges) {
    if (e.kind == RangeKind::kPayloadSchema) schemas.emplace(e.id, &*e.schema);
  }
  if (schemas.empty()) return;
  struct Ranks {
    int64_t count;
    uint32_t event;
  };
  std::unordered_map<uint64_t, Ranks> ranks;  // communicator -> "No. of ranks", and where it was said
  for (uint32_t i = 0; i < capture.ranges.size(); ++i) {
    const format::RangeEvent& e = capture.ranges[i];
    for (const format::ExtPayload& p : e.ext_payloads) {
      auto s = schemas.find(p.schema_id);
      if (s == schemas.end()) continue;
      std::optional<uint64_t> comm = ReadEntry(*s->second, kCommEntry, p.data);
      if (!comm) continue;
      if (auto n = ReadEntry(*s->second, kRanksEntry, p.data)) ranks[*comm] = {static_cast<int32_t>(*n), i};
      std::optional<uint64_t> bytes = ReadEntry(*s->second, kSizeEntry, p.data);
      if (bytes && (e.kind == RangeKind::kPush || e.kind == RangeKind::kStart)) {
        by_event_[i] = Collective{CollectiveName(e.name), *comm, *bytes, -1, UINT32_MAX};
      }
    }
  }
  for (auto& [event, c] : by_event_) {
    auto it = ranks.find(c.comm);
    if (it == ranks.end()) continue;
    c.group_size = it->second.count;
    c.group_size_event = it->second.event;
  }
}

std::string CollectiveName(std::string_view f) {
  if (f.starts_with("nccl")) f.remove_prefix(4);
  std::string out;
  for (size_t i = 0; i < f.size(); ++i) {
    char c = f[i];
    if (std::isupper(static_cast<unsigned char>(c))) {
      if (i > 0) out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out;
}

KernelDtype DtypeFromKernelName(std::string_view k) {
  struct Token {
    std::string_view text;
    KernelDtype dtype;
  };
  // Longest and most specific first: "bf16" before "f16", "__nv_bfloat16"
  // before anything a template argument could contain.
  static constexpr Token kTokens[] = {
      {"__nv_bfloat16", {"BFloat16", 2}}, {"__nv_fp8_e4m3", {"Float8_e4m3fn", 1}},
      {"__nv_fp8_e5m2", {"Float8_e5m2", 1}}, {"__half", {"Half", 2}},
      // ncclDevKernel_<Coll>_<Op>_<type>_<algo>_<proto>
      {"_bf16_", {"BFloat16", 2}}, {"_f8e4m3_", {"Float8_e4m3fn", 1}}, {"_f8e5m2_", {"Float8_e5m2", 1}},
      {"_f16_", {"Half", 2}}, {"_f32_", {"Float", 4}}, {"_f64_", {"Double", 8}},
      {"_i8_", {"Char", 1}}, {"_u8_", {"Byte", 1}}, {"_i32_", {"Int", 4}}, {"_u32_", {"UInt32", 4}},
      {"_i64_", {"Long", 8}}, {"_u64_", {"UInt64", 8}},
      // Demangled template arguments.
      {"<float>", {"Float", 4}}, {"<double>", {"Double", 8}}, {"<half>", {"Half", 2}},
      {"<signed char>", {"Char", 1}}, {"<unsigned char>", {"Byte", 1}}, {"<int>", {"Int", 4}},
      {"<unsigned int>", {"UInt32", 4}}, {"<long>", {"Long", 8}}, {"<unsigned long>", {"UInt64", 8}},
      // Itanium-mangled one-letter template arguments: I<type>E.
      {"IfE", {"Float", 4}}, {"IdE", {"Double", 8}}, {"IaE", {"Char", 1}}, {"IhE", {"Byte", 1}},
      {"IiE", {"Int", 4}}, {"IjE", {"UInt32", 4}}, {"IlE", {"Long", 8}}, {"ImE", {"UInt64", 8}},
  };
  for (const Token& t : kTokens) {
    if (k.find(t.text) != std::string_view::npos) return t.dtype;
  }
  return {};
}

}  // namespace gpucap::builder
