/* Counters of the calling thread through perf_event_open(2), without the
 * perf tool: instructions retired, cycles, task clock, context switches and
 * migrations, user and kernel together. Instructions retired do not move with
 * how fast the (virtual) CPU runs, which is what makes one process comparable
 * with another on a machine whose vCPU speed drifts (bench/README.md, "The
 * launch path in instructions").
 *
 * Each counter is opened on its own (not as a group), so a machine without a
 * hardware PMU (a VM that exposes none: ENOENT/EOPNOTSUPP) still gives the
 * software ones; a counter that failed to open reads as -1 and tc_status says
 * why. A counter the kernel multiplexed is scaled by enabled/running time.
 *
 *   tc_open()            open the counters for the calling thread (idempotent
 *                        per thread; returns how many opened)
 *   tc_read(values)      values[TC_N]: the current counts (-1: not open)
 *   tc_name(i)           "instructions", "cycles", ...
 *   tc_status(i)         "ok" or the errno text of its open
 *   tc_close()
 * Also loadable from Python through ctypes (thread_counters.py).
 */
#ifndef GPUCAP_BENCH_THREAD_COUNTERS_H_
#define GPUCAP_BENCH_THREAD_COUNTERS_H_

#ifdef __cplusplus
extern "C" {
#endif

enum {
  TC_INSTRUCTIONS,
  TC_CYCLES,
  TC_TASK_CLOCK_NS,
  TC_CONTEXT_SWITCHES,
  TC_MIGRATIONS,
  TC_N
};

int tc_open(void);
int tc_read(long long* values);
const char* tc_name(int i);
const char* tc_status(int i);
void tc_close(void);

#ifdef __cplusplus
}
#endif

#endif
