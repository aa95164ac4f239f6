// Preloaded (LD_PRELOAD) into a program that crashes or hangs now and then
// under the recorder, on a machine without gdb: on SIGSEGV, SIGBUS, SIGILL or
// SIGABRT it prints the faulting thread's id, the address and instruction
// pointer, and the thread's call stack with each frame's shared object,
// offset and nearest symbol, then dies of the same signal. On SIGQUIT (a
// watchdog's, for a hang) every thread of the process prints its stack the
// same way, and the process goes on. For diagnosis only; nothing of gpucap
// loads it.
//   gcc -O1 -g -shared -fPIC segv_trace.c -o libsegv_trace.so -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <dirent.h>
#include <stdlib.h>

static void Frame(int fd, const char* what, void* ip) {
  Dl_info info;
  char line[512];
  if (dladdr(ip, &info) && info.dli_fname) {
    snprintf(line, sizeof(line), "segv_trace: %s %p %s+0x%lx (%s+0x%lx)\n", what, ip, info.dli_fname,
             (unsigned long)((char*)ip - (char*)info.dli_fbase), info.dli_sname ? info.dli_sname : "?",
             info.dli_saddr ? (unsigned long)((char*)ip - (char*)info.dli_saddr) : 0ul);
  } else {
    snprintf(line, sizeof(line), "segv_trace: %s %p ?\n", what, ip);
  }
  (void)!write(fd, line, strlen(line));
}

static void OnFault(int sig, siginfo_t* si, void* context) {
  char line[256];
  ucontext_t* uc = (ucontext_t*)context;
  void* ip = (void*)uc->uc_mcontext.gregs[REG_RIP];
  snprintf(line, sizeof(line), "segv_trace: signal %d in thread %ld, address %p\n", sig, (long)syscall(SYS_gettid),
           si->si_addr);
  (void)!write(2, line, strlen(line));
  Frame(2, "ip", ip);
  void* frames[48];
  int n = backtrace(frames, 48);
  for (int i = 0; i < n; ++i) Frame(2, "frame", frames[i]);
  signal(sig, SIG_DFL);
  raise(sig);
}

static void OnDumpThread(int sig) {
  (void)sig;
  char what[32];
  snprintf(what, sizeof(what), "t%ld", (long)syscall(SYS_gettid));
  void* frames[48];
  int n = backtrace(frames, 48);
  for (int i = 0; i < n; ++i) Frame(2, what, frames[i]);
}

static void OnQuit(int sig) {
  (void)sig;
  DIR* d = opendir("/proc/self/task");
  if (!d) return;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    long tid = atol(e->d_name);
    if (tid > 0) syscall(SYS_tgkill, getpid(), tid, SIGRTMIN + 5);
  }
  closedir(d);
}

__attribute__((constructor)) static void Install(void) {
  void* warm[2];
  backtrace(warm, 2);  // loads the unwinder now, not inside a handler
  signal(SIGRTMIN + 5, OnDumpThread);
  signal(SIGQUIT, OnQuit);
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = OnFault;
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  int signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGABRT};
  for (unsigned i = 0; i < sizeof(signals) / sizeof(signals[0]); ++i) sigaction(signals[i], &sa, NULL);
}
