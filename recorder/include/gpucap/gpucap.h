/* gpucap: annotations and record-time windows for programs that link gpucap.
 *
 * Every call is a cheap no-op when the process is not being recorded (no
 * recorder loaded, or recording paused), so the calls can stay in production
 * code. The recorder is loaded by the CUDA driver at CUDA initialisation:
 * calls made before the program's first CUDA call are not recorded.
 *
 *   uint64_t w = gpucap_window_begin("step 12");
 *   gpucap_range_push("forward");
 *   ...
 *   gpucap_range_pop();
 *   gpucap_window_end(w);
 *
 * Link with libgpucap_api.a (and -ldl). */
#ifndef GPUCAP_GPUCAP_H_
#define GPUCAP_GPUCAP_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A nested range on the calling thread, like nvtxRangePush/Pop. */
int gpucap_range_push(const char* name);
int gpucap_range_pop(void);
/* An instant on the calling thread. */
void gpucap_mark(const char* name);
/* A record-time window: a hint the builder can use to cut traces
 * (gpucap build --window marks). Returns 0 when not recording. */
uint64_t gpucap_window_begin(const char* label);
void gpucap_window_end(uint64_t window);
/* A blob (e.g. JSON describing a collective) attached to the innermost range
 * open on the calling thread. */
int gpucap_metadata(const char* name, const char* content_type, const void* data, size_t size);
/* 1 while the recorder is loaded and recording, else 0. */
int gpucap_is_recording(void);
/* Under `gpucap record --ring-mb N` (the flight recorder): asks for a dump
 * of the ring, its trigger "api: <why>". Returns at once (the recorder's
 * threads write it); 1 when asked, 0 when there is no recorder or no ring. */
int gpucap_dump(const char* why);

#ifdef __cplusplus
}
#endif

#endif /* GPUCAP_GPUCAP_H_ */
