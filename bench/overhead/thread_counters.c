/* thread_counters.h's counters; build: cc -O2 -shared -fPIC thread_counters.c -o libthread_counters.so */
#include "thread_counters.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const struct {
  const char* name;
  unsigned type;
  unsigned long long config;
} kCounters[TC_N] = {
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"task_clock_ns", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {"context_switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
};

/* Per thread: the counters count the thread that opened them. */
static __thread int fds[TC_N] = {-1, -1, -1, -1, -1};
static __thread int errs[TC_N];
static __thread int opened;

int tc_open(void) {
  int n = 0;
  if (opened) {
    for (int i = 0; i < TC_N; ++i) n += fds[i] >= 0;
    return n;
  }
  opened = 1;
  for (int i = 0; i < TC_N; ++i) {
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = kCounters[i].type;
    a.config = kCounters[i].config;
    a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    /* user and kernel (the launch path's ioctl-free submission is user
     * space, but a recorder's syscalls and page faults are kernel) */
    fds[i] = (int)syscall(SYS_perf_event_open, &a, 0 /* this thread */, -1 /* any CPU */, -1, PERF_FLAG_FD_CLOEXEC);
    if (fds[i] < 0 && (errno == EACCES || errno == EPERM)) {
      a.exclude_kernel = 1; /* perf_event_paranoid 2: user space only */
      a.exclude_hv = 1;
      fds[i] = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    }
    errs[i] = fds[i] < 0 ? errno : 0;
    n += fds[i] >= 0;
  }
  return n;
}

int tc_read(long long* values) {
  int n = 0;
  for (int i = 0; i < TC_N; ++i) {
    unsigned long long buf[3];
    values[i] = -1;
    if (fds[i] < 0 || read(fds[i], buf, sizeof(buf)) != (ssize_t)sizeof(buf)) continue;
    /* value, time enabled, time running: scale if multiplexed */
    values[i] = (long long)(buf[2] && buf[2] < buf[1] ? (double)buf[0] * buf[1] / buf[2] : (double)buf[0]);
    ++n;
  }
  return n;
}

const char* tc_name(int i) { return i >= 0 && i < TC_N ? kCounters[i].name : "?"; }

const char* tc_status(int i) {
  if (i < 0 || i >= TC_N) return "?";
  if (!opened) return "not opened";
  return fds[i] >= 0 ? "ok" : strerror(errs[i]);
}

void tc_close(void) {
  for (int i = 0; i < TC_N; ++i) {
    if (fds[i] >= 0) close(fds[i]);
    fds[i] = -1;
  }
  opened = 0;
}
