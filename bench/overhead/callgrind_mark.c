// callgrind_mark.h's marks: valgrind's client requests, built into
// launch_loop and, as libcallgrind_mark.so, loaded by price_step.py through
// ctypes. They need valgrind's headers where they are built (Debian's
// valgrind package), not where they run; built without them, the marks do
// nothing and cg_mark_built says so.
#include "callgrind_mark.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
int cg_mark_built(void) { return 1; }
void cg_mark_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void cg_mark_dump(const char* label) { CALLGRIND_DUMP_STATS_AT(label); }
#else
int cg_mark_built(void) { return 0; }
void cg_mark_start(void) {}
void cg_mark_dump(const char* label) { (void)label; }
#endif

int cg_mark_from_environment(const char* program) {
  const char* mark = getenv("MARK");
  if (mark == NULL || strcmp(mark, "callgrind") != 0) return 0;
  if (!cg_mark_built()) {
    fprintf(stderr, "%s: MARK=callgrind, but built without valgrind's headers\n", program);
    exit(2);
  }
  cg_mark_start();
  return 1;
}
