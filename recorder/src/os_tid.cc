#include "os_tid.h"

#include <sys/syscall.h>
#include <unistd.h>

namespace gpucap::recorder {

uint32_t CurrentOsTid() {
  thread_local uint32_t tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return tid;
}

}  // namespace gpucap::recorder
