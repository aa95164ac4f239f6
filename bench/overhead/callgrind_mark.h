// Marks that cut a run under callgrind (bench/overhead/instr.sh) into the
// regions whose instructions are counted. Outside valgrind each is a few
// instructions that do nothing, so a workload built with them times the same.
//
// Callgrind 3.19 dumps only the calling thread's counts at a client request:
// a region's dump is the instructions the calling (launching) thread retired
// since its previous dump. Other threads' counts come in the dump made when
// the program ends.
#ifndef GPUCAP_BENCH_CALLGRIND_MARK_H_
#define GPUCAP_BENCH_CALLGRIND_MARK_H_

#ifdef __cplusplus
extern "C" {
#endif

// 1 where valgrind's headers were found at build time; 0: the marks are no-ops.
int cg_mark_built(void);
// MARK=callgrind in the environment: starts instrumenting and returns 1; no
// MARK: returns 0. MARK=callgrind in a build without valgrind's headers ends
// the program (exit 2) with a line naming `program`, rather than counting
// nothing.
int cg_mark_from_environment(const char* program);
// Starts instrumenting (run with --instr-atstart=no: CUDA's start-up runs
// uninstrumented, which is several times faster under valgrind).
void cg_mark_start(void);
// Ends the calling thread's current region, labelled `label`: a dump of what
// it retired since its last dump.
void cg_mark_dump(const char* label);

#ifdef __cplusplus
}
#endif

#endif  // GPUCAP_BENCH_CALLGRIND_MARK_H_
