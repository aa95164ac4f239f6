// The recorder of this process: the one global gpucap keeps. CUPTI's buffer
// callbacks and NVTX's handlers take no user data, so they find the recorder
// here; the injection entry points (injection.cc) set it when the first of
// them runs, and the fork hook clears it in the child, so that after fork no
// hook can reach the parent's abandoned recorder.
#ifndef GPUCAP_RECORDER_PROCESS_RECORDER_H_
#define GPUCAP_RECORDER_PROCESS_RECORDER_H_

namespace gpucap::recorder {

class Recorder;

// The recorder, or nullptr before it starts, when it could not start, and in
// a forked child.
Recorder* ProcessRecorder();
void SetProcessRecorder(Recorder* recorder);
// Clears it and returns what it held (after fork, in the child).
Recorder* TakeProcessRecorder();

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_PROCESS_RECORDER_H_
