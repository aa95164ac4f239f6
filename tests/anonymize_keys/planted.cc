// Read by check_option_keys.py's own test: an option the anonymizer does
// not know, which it must report.
#include <cstdlib>

const char* Planted() {
  return std::getenv("GPUCAP_PLANTED_OPTION");
}
