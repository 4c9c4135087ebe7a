// Typed, checked reading of YAML maps. Every problem becomes a ConfigIssue that names the file,
// line and column, the key's full path and what was expected; reading goes on after a problem so
// one pass reports all of them. Unknown keys get a "did you mean" from the known ones.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace stereod {

struct ConfigIssue {
  std::string file;
  int line = 0;     // 1-based; 0 when unknown
  int column = 0;   // 1-based
  std::string key;  // full path, e.g. "pairs[0].stereo.levels"
  std::string message;

  std::string to_string() const;  // "file:line:column: key: message"
};

// Thrown by loaders that found problems; what() lists every issue, one per line.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<ConfigIssue> issues);
  const std::vector<ConfigIssue>& issues() const { return issues_; }

 private:
  std::vector<ConfigIssue> issues_;
};

// The closest of `candidates` to `word` by edit distance, or "" when none is close.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }
  std::vector<ConfigIssue>& issues() { return issues_; }
  bool ok() const { return issues_.empty(); }
  // Throws ConfigError when any issue was recorded: the first kMaxIssues in file order, then one
  // that says how many more there were.
  void throw_if_failed() const;
  static constexpr std::size_t kMaxIssues = 100;

  void add(const YAML::Node& at, const std::string& key, const std::string& message);

  // True when `node` is a map (or absent, when optional); records an issue otherwise.
  bool expect_map(const YAML::Node& node, const std::string& path, bool optional = true);
  // Records every key of `map` that is not among `known`, with a suggestion.
  void check_keys(const YAML::Node& map, const std::string& path,
                  const std::vector<std::string>& known);

  // Each reads map[key] into `out` when present and valid, and leaves `out` alone otherwise.
  void read(const YAML::Node& map, const std::string& path, const char* key, int& out, long long lo,
            long long hi);
  void read(const YAML::Node& map, const std::string& path, const char* key, double& out, double lo,
            double hi);
  void read(const YAML::Node& map, const std::string& path, const char* key, bool& out);
  void read(const YAML::Node& map, const std::string& path, const char* key, std::string& out);

  // Reads one of a fixed set of names into its value.
  template <typename T>
  void read_choice(const YAML::Node& map, const std::string& path, const char* key, T& out,
                   std::initializer_list<std::pair<const char*, T>> choices) {
    std::string name;
    const std::size_t before = issues_.size();
    read(map, path, key, name);
    if (issues_.size() != before || name.empty()) return;
    std::vector<std::string> names;
    for (const auto& c : choices) {
      if (name == c.first) {
        out = c.second;
        return;
      }
      names.emplace_back(c.first);
    }
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    std::string msg = "unknown value \"" + name + "\" (expected one of: " + list + ")";
    const std::string guess = closest_match(name, names);
    if (!guess.empty()) msg += "; did you mean \"" + guess + "\"?";
    add(map[key], join(path, key), msg);
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

 private:
  std::string file_;
  std::vector<ConfigIssue> issues_;
};

}  // namespace stereod
