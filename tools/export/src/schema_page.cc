#include "schema_page.h"

#include <sqlite3.h>

#include <array>
#include <cstring>

#include "record.h"
#include "table_btree.h"

namespace gpucap::tools::sqlite {
namespace {

void Put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}

// The 100-byte database header ("The Database Header"): a legacy (rollback
// journal) UTF-8 database of schema format 4, no free pages, no vacuum.
std::array<uint8_t, 100> Header(uint32_t page_size, uint32_t pages) {
  std::array<uint8_t, 100> h{};
  std::memcpy(h.data(), "SQLite format 3", 16);
  const uint32_t size_field = page_size == 65536 ? 1 : page_size;
  h[16] = static_cast<uint8_t>(size_field >> 8);
  h[17] = static_cast<uint8_t>(size_field);
  h[18] = h[19] = 1;  // file format write/read version: legacy
  h[21] = 64;         // payload fractions, fixed by the format
  h[22] = 32;
  h[23] = 32;
  Put32(&h[24], 1);      // change counter ...
  Put32(&h[28], pages);  // ... so that this size is valid (== offset 92)
  Put32(&h[40], 1);      // schema cookie
  Put32(&h[44], 4);      // schema format
  Put32(&h[56], 1);      // UTF-8
  Put32(&h[92], 1);      // version-valid-for
  Put32(&h[96], static_cast<uint32_t>(sqlite3_libversion_number()));
  return h;
}

}  // namespace

Status WriteSchemaAndHeader(PageFile* file, std::span<const SchemaTable> tables) {
  TableBtree schema(file, 1);
  RecordBuilder record;
  int64_t rowid = 1;
  for (const SchemaTable& t : tables) {
    record.Clear();
    const bool index = !t.table.empty();
    record.Add(Value::Text(index ? "index" : "table"), Affinity::kText);
    record.Add(Value::Text(t.name), Affinity::kText);
    record.Add(Value::Text(index ? t.table : t.name), Affinity::kText);
    record.Add(Value::Int(t.root), Affinity::kInteger);
    record.Add(Value::Text(t.sql), Affinity::kText);
    const std::vector<uint8_t>& r = record.Finish();
    GPUCAP_RETURN_IF_ERROR(schema.Append(rowid++, r.data(), r.size()));
  }
  GPUCAP_RETURN_IF_ERROR(schema.Finish());
  const std::array<uint8_t, 100> header = Header(file->page_size(), file->pages());
  return file->Patch(0, header.data(), header.size());
}

}  // namespace gpucap::tools::sqlite
