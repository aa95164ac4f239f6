// The flight recorder's crash trigger (`gpucap record --ring-mb`): SIGSEGV,
// SIGBUS, SIGFPE, SIGILL and SIGABRT write the ring as a dump, trigger
// "crash: SIGSEGV" (etc.), to the next free `<out>.ring-N.gpucap`, then
// hand the signal on as if gpucap were not there.
//
// The handler writes the snapshot the capture writer keeps current
// (format's crash_slot.h, ring_snapshot.h) with async-signal-safe calls
// only: open (O_CREAT | O_EXCL: never over a file), write, close, getpid,
// gettid, clock_gettime, nanosleep, sigaction, pthread_sigmask, raise. No
// allocation, no lock, no stdio; its stack use is under a kilobyte (the
// path lives in static storage). One dump per process: a later crash
// signal, or one raised while the dump is written, goes straight on.
//
// Handing on: the program's handler found at install runs next, with the
// signal's own arguments (SA_SIGINFO or not, its mask, SA_RESETHAND); where
// there was none, the default action is put back and the signal raised
// again, so that the process dies of it, with its core, as it would have.
// A handler the program installs later replaces this one (that is the
// program's business); one that hands on to the previous handler, as
// Python's faulthandler does, gets both: its own output, then the dump.
//
// Stack overflow: the handler runs on the crashing thread's stack, or on
// its alternate stack where the thread has one (SA_ONSTACK; Python's
// faulthandler and Rust give their threads one). A thread that overflowed
// its stack and has none cannot run any handler: the kernel kills the
// process with SIGSEGV and there is no dump.
//
// In a forked child the ring is the parent's: no dump, the signal is
// handed on.
#ifndef GPUCAP_RECORDER_CRASH_DUMP_H_
#define GPUCAP_RECORDER_CRASH_DUMP_H_

#include <memory>
#include <string>

#include "gpucap/format/crash_slot.h"

namespace gpucap::recorder {

// Installs the handler for the five signals, dumps going next to
// `output_path` (RingDumpPath's names). False, installing nothing, when a
// handler was installed already or the path is too long; the slot is kept
// for the life of the process. `quiet`: no line on stderr for a dump
// written (a failed one is always said).
bool InstallCrashDump(std::shared_ptr<format::RingCrashSlot> slot, const std::string& output_path, bool quiet);

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_CRASH_DUMP_H_
