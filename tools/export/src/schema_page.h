// The last step of a database image (page_file.h): sqlite_schema, the
// table B-tree rooted on page 1 with one row per table (type, name,
// tbl_name, rootpage, sql) per table and index, and the 100-byte database header in front of
// it ("The Database Header", "Storage Of The SQL Database Schema").
#ifndef GPUCAP_TOOLS_EXPORT_SRC_SCHEMA_PAGE_H_
#define GPUCAP_TOOLS_EXPORT_SRC_SCHEMA_PAGE_H_

#include <cstdint>
#include <span>
#include <string>

#include "gpucap/status.h"
#include "page_file.h"

namespace gpucap::tools::sqlite {

// One row of sqlite_schema: a table, or an index (`table`: its table's name).
struct SchemaTable {
  std::string name;
  std::string sql;  // CREATE TABLE / CREATE INDEX ..., as SQLite parses it when it opens the file
  uint32_t root;    // its B-tree's root page, written before this call
  std::string table = {};  // empty for a table
};

// Page 1 must have been allocated first (and left for this call); the
// header's page count is every page allocated so far.
Status WriteSchemaAndHeader(PageFile* file, std::span<const SchemaTable> tables);

}  // namespace gpucap::tools::sqlite

#endif  // GPUCAP_TOOLS_EXPORT_SRC_SCHEMA_PAGE_H_
