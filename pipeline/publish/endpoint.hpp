// Where the daemon binds by default, so that clients find it without being told.
#pragma once

#include <string>

namespace stereod::publish {

// $RUNTIME_DIRECTORY (systemd; its first entry), else $XDG_RUNTIME_DIR, else /tmp.
std::string runtime_directory();
// ipc://<runtime_directory()>/stereod.sock
std::string default_endpoint();

}  // namespace stereod::publish
