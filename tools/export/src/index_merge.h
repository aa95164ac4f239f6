// The last step of an index whose keys spilled (index_keys.h): its sorted
// runs in the spill file (spill_file.h) merged k ways into its B-tree. Each
// run's records are in index order and every record ends with its rowid,
// so the next entry is the least head by index_order.h's rule column by
// column, rowid included; no two compare equal.
#ifndef GPUCAP_TOOLS_EXPORT_SRC_INDEX_MERGE_H_
#define GPUCAP_TOOLS_EXPORT_SRC_INDEX_MERGE_H_

#include <vector>

#include "gpucap/status.h"
#include "index_btree.h"
#include "spill_file.h"

namespace gpucap::tools::sqlite {

Status MergeRuns(const SpillFile& file, const std::vector<SpillFile::Run>& runs, IndexBtree* tree);

}  // namespace gpucap::tools::sqlite

#endif  // GPUCAP_TOOLS_EXPORT_SRC_INDEX_MERGE_H_
