// What the configuration tests ask of a loader run: its issues, and whether one names a key and
// says something.
#pragma once

#include <string>
#include <vector>

#include "daemon_config.hpp"

namespace stereod::test {

// The issues parsing `text` reports (relative paths from `base_dir`); none when it loads.
inline std::vector<ConfigIssue> config_issues(const std::string& text,
                                              const std::string& base_dir = ".") {
  try {
    parse_daemon_config(text, "t.yaml", base_dir);
  } catch (const ConfigError& e) {
    return e.issues();
  }
  return {};
}

inline bool mentions(const std::vector<ConfigIssue>& v, const std::string& key,
                     const std::string& text) {
  for (const auto& i : v) {
    if (i.key == key && i.message.find(text) != std::string::npos) return true;
  }
  return false;
}

// Every issue, one per line (for failure messages).
inline std::string all_issues(const std::vector<ConfigIssue>& v) {
  std::string s;
  for (const auto& i : v) s += i.to_string() + "\n";
  return s;
}

}  // namespace stereod::test
