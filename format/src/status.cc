#include "gpucap/status.h"

namespace gpucap {

const char* CodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk: return "ok";
    case Status::Code::kInvalidArgument: return "invalid argument";
    case Status::Code::kNotFound: return "not found";
    case Status::Code::kCorrupt: return "corrupt";
    case Status::Code::kUnsupported: return "unsupported";
    case Status::Code::kIoError: return "I/O error";
    case Status::Code::kNoSpace: return "no space";
    case Status::Code::kResourceExhausted: return "resource exhausted";
    case Status::Code::kInternal: return "internal error";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(CodeName(code_)) + ": " + message_;
}

}  // namespace gpucap
