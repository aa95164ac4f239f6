// libgpucap_exec: preloaded by `gpucap record` so that a recorded process
// that calls exec first closes its capture cleanly (the exec'd program gets a
// capture of its own). It depends on nothing and does nothing in processes
// without a recorder.
//
// The recorder registers its flush here when it starts. Exec from a child
// that fork or vfork made (subprocess launches) must not run it: the child
// does not own the capture, and may not even call the loader safely, so the
// flush runs only in the process that registered it.
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>

namespace {

std::atomic<void (*)()> g_flush{nullptr};
std::atomic<pid_t> g_owner{0};

void FlushRecorder() {
  auto fn = g_flush.load(std::memory_order_acquire);
  if (fn && getpid() == g_owner.load(std::memory_order_acquire)) fn();
}

template <typename Fn>
Fn Next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

// Resolved when the shim loads, never inside a forked child.
using ExecVE = int (*)(const char*, char* const*, char* const*);
using ExecV = int (*)(const char*, char* const*);
ExecVE g_execve = Next<ExecVE>("execve");
ExecV g_execv = Next<ExecV>("execv");
ExecV g_execvp = Next<ExecV>("execvp");
ExecVE g_execvpe = Next<ExecVE>("execvpe");

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void gpucap_exec_shim_register(void (*flush)(), pid_t owner) {
  g_owner.store(owner, std::memory_order_release);
  g_flush.store(flush, std::memory_order_release);
}

__attribute__((visibility("default"))) int execve(const char* path, char* const argv[],
                                                  char* const envp[]) {
  FlushRecorder();
  return g_execve(path, argv, envp);
}

__attribute__((visibility("default"))) int execv(const char* path, char* const argv[]) {
  FlushRecorder();
  return g_execv(path, argv);
}

__attribute__((visibility("default"))) int execvp(const char* file, char* const argv[]) {
  FlushRecorder();
  return g_execvp(file, argv);
}

__attribute__((visibility("default"))) int execvpe(const char* file, char* const argv[],
                                                   char* const envp[]) {
  FlushRecorder();
  return g_execvpe(file, argv, envp);
}

}  // extern "C"
