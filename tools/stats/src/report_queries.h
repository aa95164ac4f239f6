// One function per nsys report, each over an export (docs/sqlite.md). The
// rules each follows are written where it is defined and, per report, in
// docs/cli.md with the Analysis Guide's section.
#ifndef GPUCAP_TOOLS_STATS_REPORT_QUERIES_H_
#define GPUCAP_TOOLS_STATS_REPORT_QUERIES_H_

#include <sqlite3.h>

#include "gpucap/status.h"
#include "gpucap/tools/stats/stats_reports.h"

namespace gpucap::tools::reports {

// cuda_reports.cc: the CUDA API, kernel and memory operation reports.
Result<Report> CudaApiSum(sqlite3* db);
Result<Report> CudaGpuKernSum(sqlite3* db, KernelNameForm names);
Result<Report> CudaGpuKernGbSum(sqlite3* db, KernelNameForm names);
Result<Report> CudaGpuMemTimeSum(sqlite3* db);
Result<Report> CudaGpuMemSizeSum(sqlite3* db);
Result<Report> CudaGpuSum(sqlite3* db, KernelNameForm names);
Result<Report> CudaGpuTrace(sqlite3* db, KernelNameForm names);
Result<Report> CudaKernExecSum(sqlite3* db, KernelNameForm names);

// nvtx_reports.cc: the NVTX range reports.
Result<Report> NvtxSum(sqlite3* db);
Result<Report> NvtxPushPopSum(sqlite3* db);
Result<Report> NvtxGpuProjSum(sqlite3* db);
Result<Report> NvtxKernSum(sqlite3* db, KernelNameForm names);

}  // namespace gpucap::tools::reports

#endif  // GPUCAP_TOOLS_STATS_REPORT_QUERIES_H_
