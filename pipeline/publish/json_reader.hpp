// Checked reading of JSON that arrived over the wire. Received text is untrusted: every failure
// becomes a ProtocolError that names the field by its full path ("header.cameras[1].capture_ns"),
// says what was expected and shows what came instead; nothing here crashes or reads out of bounds.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace stereod::publish {

// A message that does not follow docs/PROTOCOL.md. what() says what was wrong and where.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Field order is kept so that headers read in the order docs/PROTOCOL.md lists them.
using Json = nlohmann::ordered_json;

// Parses `text` as one JSON object. `what` names it in errors ("header", "stats"). Rejects text
// longer than max_bytes and nesting deeper than 16 levels before parsing, so hostile input cannot
// exhaust memory or the stack.
Json parse_json_object(std::string_view text, std::string_view what, std::size_t max_bytes);

// A short, printable rendering of a value for error messages (long values are cut).
std::string describe(const Json& value);

// Untrusted bytes made safe to print: non-printable bytes become '?', long text is cut.
std::string printable(std::string_view bytes, std::size_t max_chars = 60);

class JsonReader {
 public:
  // Throws ProtocolError when `object` is not a JSON object.
  JsonReader(const Json& object, std::string path);

  const std::string& path() const { return path_; }
  std::string path_of(std::string_view key) const;
  bool has(std::string_view key) const;

  // Each throws ProtocolError when the key is missing or its value has the wrong type or range.
  const Json& field(std::string_view key) const;
  std::string string(std::string_view key) const;
  bool boolean(std::string_view key) const;
  std::int64_t integer(std::string_view key, std::int64_t lo, std::int64_t hi) const;
  std::uint64_t unsigned_integer(std::string_view key) const;
  double number(std::string_view key) const;  // finite
  // An object or array field; more than `max_size` members or elements is an error too.
  JsonReader object(std::string_view key, std::size_t max_size = kUnlimited) const;
  const Json& array(std::string_view key, std::size_t max_size = kUnlimited) const;
  // The i-th element of an array field, as an object.
  JsonReader element(std::string_view key, std::size_t index) const;

  // The object itself (e.g. to iterate over its members).
  const Json& json() const { return object_; }

  static constexpr std::size_t kUnlimited = static_cast<std::size_t>(-1);

 private:
  [[noreturn]] void fail(std::string_view key, const std::string& expected) const;
  void check_size(std::string_view key, const Json& value, std::size_t max_size) const;

  const Json& object_;
  std::string path_;
};

}  // namespace stereod::publish
