// Host-device synchronisation of every kind CUPTI's SYNCHRONIZATION records
// tell apart (stream, event, context, stream-wait-event), event records on
// two streams, NVTX marks, and external correlation ids pushed around
// launches as a framework does. Recorded with
// --kinds default,synchronization,cuda_event,marker.
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>

#include "common.h"

__global__ void spin(float* x, int n, int rounds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int r = 0; r < rounds; ++r) v = v * 0.999f + 0.001f;
  x[i] = v;
}

int main(int argc, char** argv) {
  const char* manifest_path = argc > 1 ? argv[1] : "sync_events.expect.json";
  Manifest m;
  const int n = 1 << 18;
  float *a, *b;
  CK(cudaMalloc(&a, n * sizeof(float)));
  CK(cudaMalloc(&b, n * sizeof(float)));
  cudaStream_t s0, s1;
  CK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  cudaEvent_t produced, consumed;
  CK(cudaEventCreate(&produced));
  CK(cudaEventCreateWithFlags(&consumed, cudaEventDisableTiming));

  const int iters = 3;
  for (int it = 0; it < iters; ++it) {
    nvtxMarkA(("iteration " + std::to_string(it)).c_str());
    m.Add("nvtx_marks");
    uint64_t ext = 1000 + it;
    bool pushed = cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, ext) ==
                  CUPTI_SUCCESS;
    spin<<<(n + 255) / 256, 256, 0, s0>>>(a, n, 2000);
    m.Add("kernel:spin");
    CK(cudaEventRecord(produced, s0));
    m.Add("event_record");
    CK(cudaStreamWaitEvent(s1, produced, 0));  // s1 waits on s0's event
    m.Add("sync:stream_wait_event");
    spin<<<(n + 255) / 256, 256, 0, s1>>>(b, n, 500);
    m.Add("kernel:spin");
    CK(cudaEventRecord(consumed, s1));
    m.Add("event_record");
    if (pushed) {
      uint64_t last = 0;
      cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
      m.Add("external_ids_pushed");
    }
    CK(cudaEventSynchronize(consumed));
    m.Add("sync:event");
    spin<<<(n + 255) / 256, 256, 0, s0>>>(a, n, 1000);
    m.Add("kernel:spin");
    CK(cudaStreamSynchronize(s0));
    m.Add("sync:stream");
    CK(cudaDeviceSynchronize());
    m.Add("sync:context");
  }
  m.Fact("iterations", std::to_string(iters));
  m.Fact("external_kind", "\"CUSTOM0\"");
  m.Fact("external_ids", "[1000, 1001, 1002]");
  m.Fact("kernels_per_external_id", "2");
  m.Fact("streams_used", "2");
  m.Write(manifest_path);
  CK(cudaFree(a));
  CK(cudaFree(b));
  std::printf("sync_events: done\n");
  return 0;
}
