// What the configuration tests share: the issues a text gives, and whether one names a key.
#pragma once

#include <string>
#include <vector>

#include "daemon_config.hpp"

namespace stereod::test {

// Every issue of `text` (none when it loads); relative paths are taken from `base_dir`.
inline std::vector<ConfigIssue> config_issues(const std::string& text,
                                              const std::string& base_dir = ".") {
  try {
    parse_daemon_config(text, "t.yaml", base_dir);
  } catch (const ConfigError& e) {
    return e.issues();
  }
  return {};
}

// True when an issue is at `key` and its message contains `text`.
inline bool mentions(const std::vector<ConfigIssue>& v, const std::string& key,
                     const std::string& text) {
  for (const auto& i : v) {
    if (i.key == key && i.message.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace stereod::test
