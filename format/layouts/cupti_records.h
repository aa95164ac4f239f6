// The CUPTI record struct versions gpucap records and reads, named once. The
// recorder sizes and walks its activity buffers by them, and the layout
// generator writes their offsets into layouts/*.inc, from which the builder
// reads captures without CUPTI. Moving to a newer struct version means
// changing it here and regenerating the layouts (format/CMakeLists.txt).
// Needs the CUPTI headers: only for code built with CUDA.
#ifndef GPUCAP_FORMAT_LAYOUTS_CUPTI_RECORDS_H_
#define GPUCAP_FORMAT_LAYOUTS_CUPTI_RECORDS_H_

#include <cupti_activity.h>

// X(alias, CUPTI struct): the alias is gpucap::cupti_records::<alias>.
#define GPUCAP_CUPTI_RECORDS(X)                    \
  X(KernelRecord, CUpti_ActivityKernel10)          \
  X(MemcpyRecord, CUpti_ActivityMemcpy6)           \
  X(PeerMemcpyRecord, CUpti_ActivityMemcpyPtoP4)   \
  X(MemsetRecord, CUpti_ActivityMemset4)           \
  X(OverheadRecord, CUpti_ActivityOverhead3)       \
  X(SyncRecord, CUpti_ActivitySynchronization2)    \
  X(CudaEventRecord, CUpti_ActivityCudaEvent2)     \
  X(MarkerRecord, CUpti_ActivityMarker2)          \
  X(GraphTraceRecord, CUpti_ActivityGraphTrace2)

namespace gpucap::cupti_records {

#define GPUCAP_CUPTI_RECORD_ALIAS(alias, type) using alias = type;
GPUCAP_CUPTI_RECORDS(GPUCAP_CUPTI_RECORD_ALIAS)
#undef GPUCAP_CUPTI_RECORD_ALIAS

// The struct's CUPTI name, for the generated layouts: "CUpti_ActivityKernel10".
template <typename T>
constexpr const char* kStructName = nullptr;
#define GPUCAP_CUPTI_RECORD_NAME(alias, type) \
  template <>                                 \
  inline constexpr const char* kStructName<type> = #type;
GPUCAP_CUPTI_RECORDS(GPUCAP_CUPTI_RECORD_NAME)
#undef GPUCAP_CUPTI_RECORD_NAME

}  // namespace gpucap::cupti_records

#endif  // GPUCAP_FORMAT_LAYOUTS_CUPTI_RECORDS_H_
