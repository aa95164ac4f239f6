// A stream's priority and flags come from the parameters of the driver call
// that made it, read at its exit: no CUDA call is made inside a CUPTI
// callback (recorder/src/stream_facts.h says why).
#include "stream_facts.h"

#include <cuda.h>
#include <cupti.h>
#include <gtest/gtest.h>

namespace gpucap::recorder {
namespace {

TEST(StreamFacts, PriorityAndFlagsAreTheCreatingCallsOwn) {
  CUstream made = reinterpret_cast<CUstream>(0x1234);
  cuStreamCreateWithPriority_params with_priority{&made, CU_STREAM_NON_BLOCKING, -3};
  auto p = StreamCreationParams(CUPTI_DRIVER_TRACE_CBID_cuStreamCreateWithPriority, &with_priority);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->stream, static_cast<void*>(made));
  EXPECT_EQ(p->flags, static_cast<uint32_t>(CU_STREAM_NON_BLOCKING));
  EXPECT_EQ(p->priority, -3);

  CUstream plain_stream = reinterpret_cast<CUstream>(0x5678);
  cuStreamCreate_params plain{&plain_stream, CU_STREAM_DEFAULT};
  auto q = StreamCreationParams(CUPTI_DRIVER_TRACE_CBID_cuStreamCreate, &plain);
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->stream, static_cast<void*>(plain_stream));
  EXPECT_EQ(q->flags, static_cast<uint32_t>(CU_STREAM_DEFAULT));
  EXPECT_EQ(q->priority, 0) << "cuStreamCreate makes streams of the default priority";
}

TEST(StreamFacts, OtherCallsAndMissingHandlesSayNothing) {
  CUstream made = reinterpret_cast<CUstream>(0x1234);
  cuStreamCreate_params plain{&made, 0};
  EXPECT_FALSE(StreamCreationParams(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &plain).has_value());
  EXPECT_FALSE(StreamCreationParams(CUPTI_DRIVER_TRACE_CBID_cuStreamCreate, nullptr).has_value());
  cuStreamCreate_params no_handle{nullptr, 0};
  EXPECT_FALSE(StreamCreationParams(CUPTI_DRIVER_TRACE_CBID_cuStreamCreate, &no_handle).has_value());
}

TEST(StreamFacts, AFailedOrEnteringCallDescribesNoStream) {
  CUstream made = reinterpret_cast<CUstream>(0x1234);
  cuStreamCreate_params plain{&made, 0};
  CUresult failed = CUDA_ERROR_OUT_OF_MEMORY, ok = CUDA_SUCCESS;
  CUpti_CallbackData cb{};
  cb.functionParams = &plain;
  cb.context = reinterpret_cast<CUcontext>(0x9);
  cb.callbackSite = CUPTI_API_EXIT;
  cb.functionReturnValue = &failed;
  EXPECT_FALSE(DescribeCreatedStream(CUPTI_DRIVER_TRACE_CBID_cuStreamCreate, &cb, 1, 2).has_value());
  cb.functionReturnValue = &ok;
  cb.callbackSite = CUPTI_API_ENTER;
  EXPECT_FALSE(DescribeCreatedStream(CUPTI_DRIVER_TRACE_CBID_cuStreamCreate, &cb, 1, 2).has_value())
      << "at the call's entry the handle is not written yet";
}

}  // namespace
}  // namespace gpucap::recorder
