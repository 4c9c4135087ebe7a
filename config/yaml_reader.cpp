#include "yaml_reader.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

namespace stereod {
namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string type_name(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
      return "nothing";
    case YAML::NodeType::Scalar:
      return "\"" + n.Scalar() + "\"";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    default:
      return "an undefined value";
  }
}

}  // namespace

std::string ConfigIssue::to_string() const {
  std::ostringstream out;
  out << file;
  if (line > 0) out << ":" << line << ":" << column;
  out << ": ";
  if (!key.empty()) out << key << ": ";
  out << message;
  return out.str();
}

ConfigError::ConfigError(std::vector<ConfigIssue> issues)
    : std::runtime_error([&] {
        std::string all;
        for (const auto& i : issues) all += (all.empty() ? "" : "\n") + i.to_string();
        return all;
      }()),
      issues_(std::move(issues)) {}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

void YamlReader::throw_if_failed() const {
  if (issues_.empty()) return;
  // In file order, whatever order the checks ran in (cross-references are checked late).
  std::vector<ConfigIssue> sorted = issues_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const ConfigIssue& a, const ConfigIssue& b) {
    return a.line != b.line ? a.line < b.line : a.column < b.column;
  });
  // A runaway file can hold thousands: the first ones say what is wrong.
  if (sorted.size() > kMaxIssues) {
    const std::size_t more = sorted.size() - kMaxIssues;
    sorted.resize(kMaxIssues);
    sorted.push_back({file_, 0, 0, "",
                      "... and " + std::to_string(more) + " more problems (the first " +
                          std::to_string(kMaxIssues) + " are listed)"});
  }
  throw ConfigError(sorted);
}

void YamlReader::add(const YAML::Node& at, const std::string& key, const std::string& message) {
  ConfigIssue issue;
  issue.file = file_;
  if (at.IsDefined() && at.Mark().line >= 0) {
    issue.line = at.Mark().line + 1;
    issue.column = at.Mark().column + 1;
  }
  issue.key = key;
  issue.message = message;
  issues_.push_back(std::move(issue));
}

bool YamlReader::expect_map(const YAML::Node& node, const std::string& path, bool optional) {
  if (!node.IsDefined() || node.IsNull()) {
    if (!optional) add(node, path, "missing (expected a map)");
    return false;
  }
  if (!node.IsMap()) {
    add(node, path, "expected a map, got " + type_name(node));
    return false;
  }
  return true;
}

void YamlReader::check_keys(const YAML::Node& map, const std::string& path,
                            const std::vector<std::string>& known) {
  if (!map.IsDefined() || !map.IsMap()) return;
  std::set<std::string> seen;
  std::map<std::string, int> first_line;
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) {
      add(kv.first, path, "keys must be plain names");
      continue;
    }
    const std::string key = kv.first.Scalar();
    // yaml-cpp keeps both entries of a repeated key and lookups see only the first: the second,
    // usually the one just edited, would be ignored without a word.
    if (!seen.insert(key).second) {
      add(kv.first, join(path, key),
          "key given twice (the first is at line " + std::to_string(first_line[key]) + ")");
      continue;
    }
    first_line[key] = kv.first.Mark().line + 1;
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string msg = "unknown key";
    const std::string guess = closest_match(key, known);
    if (!guess.empty()) msg += "; did you mean \"" + guess + "\"?";
    add(kv.first, join(path, key), msg);
  }
}

void YamlReader::read(const YAML::Node& map, const std::string& path, const char* key, int& out,
                      long long lo, long long hi) {
  const YAML::Node n = map[key];
  if (!n.IsDefined()) return;
  const std::string where = join(path, key);
  long long v = 0;
  if (!n.IsScalar() || !YAML::convert<long long>::decode(n, v)) {
    add(n, where, "expected an integer, got " + type_name(n));
    return;
  }
  if (v < lo || v > hi) {
    add(n, where,
        "value " + std::to_string(v) + " is out of range (expected " + std::to_string(lo) + " to " +
            std::to_string(hi) + ")");
    return;
  }
  out = static_cast<int>(v);
}

void YamlReader::read(const YAML::Node& map, const std::string& path, const char* key, double& out,
                      double lo, double hi) {
  const YAML::Node n = map[key];
  if (!n.IsDefined()) return;
  const std::string where = join(path, key);
  double v = 0;
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, v) || !std::isfinite(v)) {
    add(n, where, "expected a number, got " + type_name(n));
    return;
  }
  if (v < lo || v > hi) {
    std::ostringstream msg;
    msg << "value " << v << " is out of range (expected " << lo << " to " << hi << ")";
    add(n, where, msg.str());
    return;
  }
  out = v;
}

void YamlReader::read(const YAML::Node& map, const std::string& path, const char* key, bool& out) {
  const YAML::Node n = map[key];
  if (!n.IsDefined()) return;
  bool v = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) {
    add(n, join(path, key), "expected true or false, got " + type_name(n));
    return;
  }
  out = v;
}

void YamlReader::read(const YAML::Node& map, const std::string& path, const char* key,
                      std::string& out) {
  const YAML::Node n = map[key];
  if (!n.IsDefined()) return;
  if (!n.IsScalar()) {
    add(n, join(path, key), "expected a string, got " + type_name(n));
    return;
  }
  out = n.Scalar();
}

}  // namespace stereod
