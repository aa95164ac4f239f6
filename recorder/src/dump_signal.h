// SIGUSR1 as the flight recorder's dump request (`gpucap record --ring-mb`):
// the handler leaves the request with the process's recorder (one relaxed
// store, async-signal-safe); the control thread collects and the writer
// thread writes the dump. Taken only where the program left SIGUSR1 at its
// default action, which would have killed it: a handler the program
// installed is the program's business. SIGUSR2 stays the pause toggle.
#ifndef GPUCAP_RECORDER_DUMP_SIGNAL_H_
#define GPUCAP_RECORDER_DUMP_SIGNAL_H_

namespace gpucap::recorder {

// True when the handler was installed.
bool InstallDumpSignal();

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_DUMP_SIGNAL_H_
