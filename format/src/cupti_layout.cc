#include "gpucap/format/cupti_layout.h"

#include <algorithm>
#include <vector>

namespace gpucap::format {
namespace {

// One line of a generated table, before it is folded into RecordLayouts.
struct Row {
  uint32_t kind;
  const char* struct_name;  // set on record rows only
  uint32_t size;
  Field field;
  uint16_t offset;
  uint8_t field_size;
};

struct Cbid {
  uint32_t cbid;
  const char* name;
};

#define GPUCAP_LAYOUT(version)
#define GPUCAP_RECORD(kind, name, size) Row{kind, name, size, Field::kCount, 0, 0},
#define GPUCAP_FIELD(kind, field, offset, size) Row{kind, nullptr, 0, Field::field, offset, size},
#define GPUCAP_RUNTIME_CBID(cbid, name)
#define GPUCAP_DRIVER_CBID(cbid, name)
constexpr Row kRows_13_0[] = {
#include "../layouts/cupti_13_0.inc"
};
#undef GPUCAP_RECORD
#undef GPUCAP_FIELD
#undef GPUCAP_RUNTIME_CBID
#define GPUCAP_RECORD(kind, name, size)
#define GPUCAP_FIELD(kind, field, offset, size)
#define GPUCAP_RUNTIME_CBID(cbid, name) Cbid{cbid, name},
constexpr Cbid kRuntimeCbids[] = {
#include "../layouts/cupti_13_0.inc"
};
#undef GPUCAP_RUNTIME_CBID
#undef GPUCAP_DRIVER_CBID
#define GPUCAP_RUNTIME_CBID(cbid, name)
#define GPUCAP_DRIVER_CBID(cbid, name) Cbid{cbid, name},
constexpr Cbid kDriverCbids[] = {
#include "../layouts/cupti_13_0.inc"
};
#undef GPUCAP_LAYOUT
#undef GPUCAP_RECORD
#undef GPUCAP_FIELD
#undef GPUCAP_RUNTIME_CBID
#undef GPUCAP_DRIVER_CBID

std::vector<RecordLayout> Fold(std::span<const Row> rows, uint32_t version) {
  std::vector<RecordLayout> out;
  for (const Row& r : rows) {
    if (r.struct_name != nullptr) {
      RecordLayout l;
      l.kind = r.kind;
      l.struct_name = r.struct_name;
      l.size = r.size;
      l.cupti_version = version;
      out.push_back(l);
    } else if (!out.empty() && out.back().kind == r.kind) {
      out.back().fields[static_cast<size_t>(r.field)] = FieldLoc{r.offset, r.field_size};
    }
  }
  return out;
}

struct Tables {
  std::vector<RecordLayout> v13_0;
  std::vector<LayoutTable> tables;
  std::vector<std::string_view> runtime_names;
  std::vector<std::string_view> driver_names;

  Tables() {
    v13_0 = Fold(kRows_13_0, 130001);
    tables.push_back(LayoutTable{130001, v13_0});
    runtime_names = Names(kRuntimeCbids);
    driver_names = Names(kDriverCbids);
  }

  static std::vector<std::string_view> Names(std::span<const Cbid> cbids) {
    uint32_t max = 0;
    for (const Cbid& c : cbids) max = std::max(max, c.cbid);
    std::vector<std::string_view> names(max + 1);
    for (const Cbid& c : cbids) names[c.cbid] = c.name;
    return names;
  }
};

// Built once, never changed after: read-only shared state.
const Tables& GetTables() {
  static const Tables tables;
  return tables;
}

}  // namespace

const RecordLayout* LayoutTable::Find(uint32_t kind) const {
  for (const RecordLayout& r : records) {
    if (r.kind == kind) return &r;
  }
  return nullptr;
}

std::span<const LayoutTable> KnownLayoutTables() { return GetTables().tables; }

const LayoutTable* LayoutForVersion(uint32_t version) {
  for (const LayoutTable& t : KnownLayoutTables()) {
    if (t.cupti_version == version) return &t;
  }
  for (const LayoutTable& t : KnownLayoutTables()) {
    if (t.cupti_version / 100 == version / 100) return &t;
  }
  return nullptr;
}

const RecordLayout* MatchLayoutBySize(uint32_t kind, uint32_t size) {
  for (const LayoutTable& t : KnownLayoutTables()) {
    const RecordLayout* r = t.Find(kind);
    if (r != nullptr && r->size == size) return r;
  }
  return nullptr;
}

std::string_view RuntimeApiName(uint32_t cbid) {
  const auto& names = GetTables().runtime_names;
  return cbid < names.size() ? names[cbid] : std::string_view();
}

std::string_view DriverApiName(uint32_t cbid) {
  const auto& names = GetTables().driver_names;
  return cbid < names.size() ? names[cbid] : std::string_view();
}

}  // namespace gpucap::format
