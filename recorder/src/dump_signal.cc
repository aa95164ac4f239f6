#include "dump_signal.h"

#include <signal.h>

#include "process_recorder.h"
#include "recorder.h"

namespace gpucap::recorder {
namespace {

void OnDumpSignal(int) {
  if (Recorder* r = ProcessRecorder()) r->RequestSignalDump();
}

}  // namespace

bool InstallDumpSignal() {
  struct sigaction old {};
  if (sigaction(SIGUSR1, nullptr, &old) != 0 || old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO)) {
    return false;
  }
  struct sigaction sa {};
  sa.sa_handler = OnDumpSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  return sigaction(SIGUSR1, &sa, nullptr) == 0;
}

}  // namespace gpucap::recorder
