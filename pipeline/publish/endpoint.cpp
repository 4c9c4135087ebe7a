#include "publish/endpoint.hpp"

#include <cstdlib>

namespace stereod::publish {

std::string runtime_directory() {
  // systemd sets RUNTIME_DIRECTORY to the unit's RuntimeDirectory=, colon-separated when several.
  if (const char* d = std::getenv("RUNTIME_DIRECTORY"); d && *d) {
    const std::string s(d);
    return s.substr(0, s.find(':'));
  }
  if (const char* d = std::getenv("XDG_RUNTIME_DIR"); d && *d) return d;
  return "/tmp";
}

std::string default_endpoint() {
  return "ipc://" + runtime_directory() + "/stereod.sock";
}

}  // namespace stereod::publish
