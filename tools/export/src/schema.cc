#include "gpucap/tools/export/schema.h"

#include <array>

namespace gpucap::tools::sqlite {
namespace {

constexpr std::string_view kInt = "INTEGER";
constexpr std::string_view kReal = "REAL";
constexpr std::string_view kText = "TEXT";
// No declared type: SQLite keeps each value as given (text stays text).
constexpr std::string_view kAny = "";

// Columns every row of one capture carries.
#define GPUCAP_OWNER {"process", kInt}, {"rank", kInt}
// What a GPU op carries besides its own columns: where and when it ran and
// the join's results.
#define GPUCAP_OP_HEAD GPUCAP_OWNER, {"window", kInt}, {"device", kInt}, {"context", kInt}, {"stream", kInt}, \
                       {"start_ns", kInt}, {"end_ns", kInt}, {"name", kInt}
#define GPUCAP_OP_TAIL {"correlation", kInt}, {"external_id", kInt}, {"graph_id", kInt}, \
                       {"graph_node_id", kInt}, {"capture_node_id", kInt}, {"launch_id", kInt}, \
                       {"launch_tid", kInt}, {"launch_start_ns", kInt}, {"launch_end_ns", kInt}, \
                       {"annotation_stack", kInt}, {"capture_stream", kInt}

constexpr ColumnDef kMeta[] = {{"process", kInt}, {"key", kText}, {"value", kAny}};
constexpr ColumnDef kStrings[] = {{"value", kText}};
constexpr ColumnDef kStacks[] = {{"parent", kInt}, {"depth", kInt}, {"name", kInt}};
constexpr ColumnDef kProcesses[] = {
    {"rank", kInt},         {"local_rank", kInt},          {"world_size", kInt},
    {"pid", kInt},          {"ppid", kInt},                {"name", kText},
    {"host", kText},        {"command_line", kText},       {"capture_path", kText},
    {"tool_version", kText}, {"cupti_version", kInt},      {"cuda_driver_version", kInt},
    {"cuda_runtime_version", kInt}, {"start_ns", kInt},    {"end_ns", kInt},
    {"clean_shutdown", kInt}};
constexpr ColumnDef kDevices[] = {
    GPUCAP_OWNER, {"device", kInt}, {"name", kText}, {"uuid", kText}, {"pci_bus_id", kText},
    {"compute_major", kInt}, {"compute_minor", kInt}, {"num_sms", kInt}, {"total_global_mem", kInt},
    {"clock_rate_khz", kInt}, {"memory_clock_rate_khz", kInt}, {"memory_bus_width", kInt},
    {"l2_cache_size", kInt}};
constexpr ColumnDef kThreads[] = {GPUCAP_OWNER, {"pid", kInt}, {"tid", kInt}, {"cupti_thread_id", kInt},
                                  {"name", kText}};
constexpr ColumnDef kWindows[] = {GPUCAP_OWNER, {"window_index", kInt}, {"label", kText},
                                  {"start_ns", kInt}, {"end_ns", kInt}, {"ops_by_launch", kInt}};
constexpr ColumnDef kWindowCounts[] = {{"window", kInt}, {"name", kText}, {"value", kInt}};
constexpr ColumnDef kKernels[] = {
    GPUCAP_OP_HEAD, {"mangled_name", kInt}, {"short_name", kInt},
    {"grid_x", kInt}, {"grid_y", kInt}, {"grid_z", kInt}, {"block_x", kInt}, {"block_y", kInt},
    {"block_z", kInt}, {"registers_per_thread", kInt}, {"shared_memory", kInt},
    {"static_shared_memory", kInt}, {"dynamic_shared_memory", kInt},
    {"queued_us", kInt}, GPUCAP_OP_TAIL};
constexpr ColumnDef kMemcpys[] = {GPUCAP_OP_HEAD, {"copy_kind", kText}, {"src_kind", kText},
                                  {"dst_kind", kText}, {"bytes", kInt}, {"src_device", kInt},
                                  {"dst_device", kInt}, GPUCAP_OP_TAIL};
constexpr ColumnDef kMemsets[] = {GPUCAP_OP_HEAD, {"bytes", kInt}, GPUCAP_OP_TAIL};
constexpr ColumnDef kSyncs[] = {GPUCAP_OP_HEAD, {"wait_stream", kInt}, {"wait_event_id", kInt},
                                {"wait_event_correlation", kInt}, {"correlation", kInt}};
constexpr ColumnDef kApiCalls[] = {GPUCAP_OWNER, {"window", kInt}, {"domain", kText}, {"tid", kInt},
                                   {"start_ns", kInt}, {"end_ns", kInt}, {"name", kInt}, {"cbid", kInt},
                                   {"correlation", kInt}, {"external_id", kInt}};
constexpr ColumnDef kNvtxRanges[] = {GPUCAP_OWNER, {"window", kInt}, {"kind", kText}, {"tid", kInt},
                                     {"domain", kInt}, {"start_ns", kInt}, {"end_ns", kInt}, {"name", kInt},
                                     {"depth", kInt}, {"parent", kInt}, {"category", kInt},
                                     {"payload", kAny}, {"end_tid", kInt}};
constexpr ColumnDef kCounters[] = {GPUCAP_OWNER, {"window", kInt}, {"device", kInt}, {"name", kInt},
                                   {"unit", kText}, {"ts_ns", kInt}, {"value", kReal}};
constexpr ColumnDef kGraphNodes[] = {GPUCAP_OWNER, {"graph_id", kInt}, {"node_id", kInt}, {"type", kInt},
                                     {"type_name", kText}, {"tid", kInt}, {"created_ns", kInt},
                                     {"function_name", kInt}, {"cloned_from", kInt}, {"origin_node_id", kInt}};
constexpr ColumnDef kGraphEdges[] = {GPUCAP_OWNER, {"graph_id", kInt}, {"from_node", kInt}, {"to_node", kInt},
                                     {"added_ns", kInt}, {"removed_ns", kInt}};
constexpr ColumnDef kGraphExecs[] = {GPUCAP_OWNER, {"exec_id", kInt}, {"graph_id", kInt}, {"tid", kInt},
                                     {"created_ns", kInt}, {"updates", kInt}, {"destroyed_ns", kInt}};

constexpr ColumnDef kGpuAnnotations[] = {GPUCAP_OWNER, {"window", kInt}, {"device", kInt}, {"stream", kInt},
                                         {"start_ns", kInt}, {"end_ns", kInt}, {"name", kInt},
                                         {"external_id", kInt}};
constexpr ColumnDef kOverheads[] = {GPUCAP_OWNER, {"window", kInt}, {"start_ns", kInt}, {"end_ns", kInt},
                                    {"name", kInt}};
constexpr ColumnDef kCudaEvents[] = {GPUCAP_OWNER, {"window", kInt}, {"device", kInt}, {"stream", kInt},
                                     {"ts_ns", kInt}, {"cuda_event_id", kInt}, {"correlation", kInt}};

constexpr std::string_view kDur[] = {"dur_ns INTEGER GENERATED ALWAYS AS (end_ns - start_ns) VIRTUAL"};
constexpr std::span<const std::string_view> kNone;

const std::array<TableDef, kTableCount> kTables = {{
    {TableId::kMeta, "meta", false, kMeta, kNone},
    {TableId::kStrings, "strings", true, kStrings, kNone},
    {TableId::kAnnotationStacks, "annotation_stacks", true, kStacks, kNone},
    {TableId::kProcesses, "processes", true, kProcesses, kNone},
    {TableId::kDevices, "devices", false, kDevices, kNone},
    {TableId::kThreads, "threads", false, kThreads, kNone},
    {TableId::kWindows, "windows", true, kWindows, kNone},
    {TableId::kWindowCounts, "window_counts", false, kWindowCounts, kNone},
    {TableId::kKernels, "kernels", true, kKernels, kDur},
    {TableId::kMemcpys, "memcpys", true, kMemcpys, kDur},
    {TableId::kMemsets, "memsets", true, kMemsets, kDur},
    {TableId::kSyncs, "syncs", true, kSyncs, kDur},
    {TableId::kApiCalls, "api_calls", true, kApiCalls, kDur},
    {TableId::kNvtxRanges, "nvtx_ranges", true, kNvtxRanges, kDur},
    {TableId::kCounters, "counters", false, kCounters, kNone},
    {TableId::kGraphNodes, "graph_nodes", false, kGraphNodes, kNone},
    {TableId::kGraphEdges, "graph_edges", false, kGraphEdges, kNone},
    {TableId::kGraphExecs, "graph_execs", false, kGraphExecs, kNone},
    {TableId::kGpuAnnotations, "gpu_annotations", true, kGpuAnnotations, kDur},
    {TableId::kOverheads, "overheads", true, kOverheads, kDur},
    {TableId::kCudaEvents, "cuda_events", true, kCudaEvents, kNone},
}};

// What the example queries in docs/sqlite.md filter, join and order on; api_calls
// has none (ops reach their call by its id), since every index on a table of
// millions of rows costs the export about as much as loading it. Each
// index's columns are named once, in kCols_<index name>.
#define GPUCAP_INDEX(name, table, unique) {#name, TableId::table, unique, kCols_##name}
constexpr std::string_view kCols_kernels_by_stream[] = {"process", "device", "stream", "start_ns"};  // idle gaps
constexpr std::string_view kCols_kernels_by_name[] = {"name"};                  // one kernel, NCCL
constexpr std::string_view kCols_kernels_by_stack[] = {"annotation_stack"};    // under a range
constexpr std::string_view kCols_kernels_by_launch[] = {"process", "launch_tid", "launch_start_ns"};  // per range
constexpr std::string_view kCols_memcpys_by_stream[] = {"process", "device", "stream", "start_ns"};
constexpr std::string_view kCols_memsets_by_stream[] = {"process", "device", "stream", "start_ns"};
constexpr std::string_view kCols_nvtx_by_thread[] = {"process", "tid", "start_ns"};
constexpr std::string_view kCols_nvtx_by_name[] = {"name"};
constexpr std::string_view kCols_stacks_by_parent[] = {"parent"};
constexpr std::string_view kCols_stacks_by_name[] = {"name"};
constexpr std::string_view kCols_counters_by_name[] = {"process", "name", "ts_ns"};
constexpr std::string_view kCols_graph_nodes_by_id[] = {"process", "node_id"};
constexpr std::string_view kCols_strings_by_value[] = {"value"};

constexpr IndexDef kIndexes[] = {
    GPUCAP_INDEX(kernels_by_stream, kKernels, false),
    GPUCAP_INDEX(kernels_by_name, kKernels, false),
    GPUCAP_INDEX(kernels_by_stack, kKernels, false),
    GPUCAP_INDEX(kernels_by_launch, kKernels, false),
    GPUCAP_INDEX(memcpys_by_stream, kMemcpys, false),
    GPUCAP_INDEX(memsets_by_stream, kMemsets, false),
    GPUCAP_INDEX(nvtx_by_thread, kNvtxRanges, false),
    GPUCAP_INDEX(nvtx_by_name, kNvtxRanges, false),
    GPUCAP_INDEX(stacks_by_parent, kAnnotationStacks, false),
    GPUCAP_INDEX(stacks_by_name, kAnnotationStacks, false),
    GPUCAP_INDEX(counters_by_name, kCounters, false),
    GPUCAP_INDEX(graph_nodes_by_id, kGraphNodes, false),
    GPUCAP_INDEX(strings_by_value, kStrings, true),
};
#undef GPUCAP_INDEX

}  // namespace

std::span<const TableDef> Tables() { return kTables; }
const TableDef& Table(TableId id) { return kTables[static_cast<size_t>(id)]; }
std::span<const IndexDef> Indexes() { return kIndexes; }

std::string CreateIndexSql(const IndexDef& index) {
  std::string sql = index.unique ? "CREATE UNIQUE INDEX " : "CREATE INDEX ";
  sql += std::string(index.name) + " ON " + std::string(Table(index.table).name) + "(";
  for (size_t i = 0; i < index.columns.size(); ++i) sql += (i ? ", " : "") + std::string(index.columns[i]);
  return sql + ")";
}

}  // namespace gpucap::tools::sqlite
