#include "publish/json_reader.hpp"

#include <cmath>

namespace stereod::publish {
namespace {

constexpr int kMaxDepth = 16;

// Deepest bracket nesting outside strings; stops counting once past the limit.
int nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
      if (deepest > kMaxDepth) break;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

const char* type_name(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "an integer";
    case Json::value_t::number_float:
      return "a number";
    default:
      return "an unknown value";
  }
}

}  // namespace

Json parse_json_object(std::string_view text, std::string_view what, std::size_t max_bytes) {
  if (text.size() > max_bytes) {
    throw ProtocolError(std::string(what) + ": " + std::to_string(text.size()) +
                        " bytes, more than the " + std::to_string(max_bytes) + " allowed");
  }
  if (nesting_depth(text) > kMaxDepth) {
    throw ProtocolError(std::string(what) + ": JSON nested deeper than " +
                        std::to_string(kMaxDepth) + " levels");
  }
  Json j;
  try {
    j = Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    throw ProtocolError(std::string(what) + ": not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object()) {
    throw ProtocolError(std::string(what) + ": expected a JSON object, got " + describe(j));
  }
  return j;
}

std::string describe(const Json& value) {
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  constexpr std::size_t kMax = 40;
  if (text.size() > kMax) text = text.substr(0, kMax) + "...";
  return std::string(type_name(value)) + " " + text;
}

std::string printable(std::string_view bytes, std::size_t max_chars) {
  std::string out;
  for (const char c : bytes.substr(0, max_chars)) {
    out += (c >= 0x20 && c < 0x7F) ? c : '?';
  }
  if (bytes.size() > max_chars) out += "...";
  return out;
}

JsonReader::JsonReader(const Json& object, std::string path)
    : object_(object), path_(std::move(path)) {
  if (!object_.is_object()) {
    throw ProtocolError(path_ + ": expected an object, got " + describe(object_));
  }
}

std::string JsonReader::path_of(std::string_view key) const {
  return path_ + "." + std::string(key);
}

bool JsonReader::has(std::string_view key) const {
  return object_.find(std::string(key)) != object_.end();
}

void JsonReader::fail(std::string_view key, const std::string& expected) const {
  throw ProtocolError(path_of(key) + ": expected " + expected + ", got " + describe(field(key)));
}

const Json& JsonReader::field(std::string_view key) const {
  const auto it = object_.find(std::string(key));
  if (it == object_.end()) throw ProtocolError(path_of(key) + ": missing");
  return *it;
}

std::string JsonReader::string(std::string_view key) const {
  const Json& v = field(key);
  if (!v.is_string()) fail(key, "a string");
  return v.get<std::string>();
}

bool JsonReader::boolean(std::string_view key) const {
  const Json& v = field(key);
  if (!v.is_boolean()) fail(key, "true or false");
  return v.get<bool>();
}

std::int64_t JsonReader::integer(std::string_view key, std::int64_t lo, std::int64_t hi) const {
  const Json& v = field(key);
  const std::string expected =
      "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (hi < 0 || u > static_cast<std::uint64_t>(hi)) fail(key, expected);
    const auto i = static_cast<std::int64_t>(u);
    if (i < lo) fail(key, expected);
    return i;
  }
  if (!v.is_number_integer()) fail(key, expected);
  const auto i = v.get<std::int64_t>();
  if (i < lo || i > hi) fail(key, expected);
  return i;
}

std::uint64_t JsonReader::unsigned_integer(std::string_view key) const {
  const Json& v = field(key);
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  // A non-negative value parsed into the signed slot (nlohmann picks unsigned for those, but be
  // tolerant of writers that do not).
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(v.get<std::int64_t>());
  }
  fail(key, "a non-negative integer");
}

double JsonReader::number(std::string_view key) const {
  const Json& v = field(key);
  if (!v.is_number()) fail(key, "a number");
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail(key, "a finite number");
  return d;
}

void JsonReader::check_size(std::string_view key, const Json& value, std::size_t max_size) const {
  if (value.size() > max_size) {
    throw ProtocolError(path_of(key) + ": " + std::to_string(value.size()) + " entries, at most " +
                        std::to_string(max_size) + " expected");
  }
}

JsonReader JsonReader::object(std::string_view key, std::size_t max_size) const {
  const Json& v = field(key);
  if (!v.is_object()) fail(key, "an object");
  check_size(key, v, max_size);
  return JsonReader(v, path_of(key));
}

const Json& JsonReader::array(std::string_view key, std::size_t max_size) const {
  const Json& v = field(key);
  if (!v.is_array()) fail(key, "an array");
  check_size(key, v, max_size);
  return v;
}

JsonReader JsonReader::element(std::string_view key, std::size_t index) const {
  const Json& a = array(key);
  const std::string p = path_of(key) + "[" + std::to_string(index) + "]";
  if (index >= a.size()) throw ProtocolError(p + ": missing");
  return JsonReader(a[index], p);
}

}  // namespace stereod::publish
