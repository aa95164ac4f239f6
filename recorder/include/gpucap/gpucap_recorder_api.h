/* The table of functions the recorder library exports for the gpucap C API.
 * Programs do not use this directly: they include gpucap.h and link
 * libgpucap_api, which finds this table in the loaded recorder. */
#ifndef GPUCAP_RECORDER_API_H_
#define GPUCAP_RECORDER_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct GpucapRecorderApiV1 {
  size_t size; /* of this struct, for later versions to grow it */
  int (*range_push)(const char* name);
  int (*range_pop)(void);
  void (*mark)(const char* name);
  uint64_t (*window_begin)(const char* label);
  void (*window_end)(uint64_t id);
  int (*metadata)(const char* name, const char* content_type, const void* data, size_t size);
  int (*is_recording)(void);
  /* Added later: present when size covers it. */
  int (*dump)(const char* why);
} GpucapRecorderApiV1;

/* Exported by libgpucap_recorder.so. */
const GpucapRecorderApiV1* gpucap_recorder_api_v1(void);

#ifdef __cplusplus
}
#endif

#endif /* GPUCAP_RECORDER_API_H_ */
