// --trigger-file: a person or a watchdog asks a running recorder for a trace
// by creating a file; the recorder takes it away (renamed PATH.done) once the
// ranges it asked for are in the capture, so its disappearance says "done".
#ifndef GPUCAP_RECORDER_TRIGGER_FILE_H_
#define GPUCAP_RECORDER_TRIGGER_FILE_H_

#include <string>

namespace gpucap::recorder {

class TriggerFile {
 public:
  explicit TriggerFile(std::string path) : path_(std::move(path)) {}
  // One stat(): cheap enough for every pass of the control loop.
  bool Present() const;
  // Renames it to PATH.done (replacing an older one), or removes it where
  // renaming fails; returns what it did, for the log.
  std::string Retire() const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_TRIGGER_FILE_H_
