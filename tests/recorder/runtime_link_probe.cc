// Linked to the stand-in libcudart.so.13 (fake_cudart.cc) the way programs
// link to the runtime: its call by name binds to libgpucap_gate.so's stub
// when the gate is preloaded (runtime_entries.h). Prints the gate depth the
// runtime function saw: 1 through the stub, 0 (no gate) or -1 without.
#include <cstdio>

extern "C" int cudaGetDeviceCount(int* count);

int main() {
  int depth = -2;
  int r = cudaGetDeviceCount(&depth);
  std::printf("runtime call %d, depth inside %d\n", r, depth);
  return r;
}
