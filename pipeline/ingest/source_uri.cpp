#include "ingest/source_uri.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <iomanip>
#include <sstream>

namespace stereod {
namespace {

enum class OptionType { kInt, kDouble, kBool, kChoice };

struct OptionSpec {
  const char* name;
  OptionType type;
  double lo;
  double hi;
  const char* choices;  // kChoice: comma-separated
};

constexpr double kIntMax = 2147483647.0;
constexpr double kMaxReplay = 100000.0;  // frames

// videotestsrc's pattern nicks (GStreamer 1.20 and later).
constexpr const char* kTestPatterns =
    "smpte,snow,black,white,red,green,blue,checkers-1,checkers-2,checkers-4,checkers-8,circular,"
    "blink,smpte75,zone-plate,gamut,chroma-zone-plate,solid-color,ball,smpte100,bar,pinwheel,"
    "spokes,gradient,colors";

const std::vector<OptionSpec>& options_of(SourceScheme scheme) {
  static const std::vector<OptionSpec> none;
  static const std::vector<OptionSpec> csi = {
      {"sensor_mode", OptionType::kInt, -1, 31, nullptr},
      {"flip", OptionType::kInt, 0, 7, nullptr},
  };
  static const std::vector<OptionSpec> rtsp = {
      {"latency", OptionType::kInt, 0, 10000, nullptr},
      {"protocols", OptionType::kChoice, 0, 0, "tcp,udp,udp-mcast,http"},
  };
  // replay: frames made once at start-up and served from memory (replay_source.hpp).
  static const std::vector<OptionSpec> images = {
      {"start", OptionType::kInt, 0, kIntMax, nullptr},
      {"replay", OptionType::kInt, 0, kMaxReplay, nullptr},
  };
  static const std::vector<OptionSpec> test = {
      {"pattern", OptionType::kChoice, 0, 0, kTestPatterns},
      {"live", OptionType::kBool, 0, 0, nullptr},
      {"num_buffers", OptionType::kInt, 1, kIntMax, nullptr},
      {"horizontal_speed", OptionType::kInt, -1000, 1000, nullptr},
  };
  // Names as in SyntheticOptions; the scene checks their combination when it is built.
  static const std::vector<OptionSpec> synthetic = {
      {"objects", OptionType::kInt, 0, 64, nullptr},
      {"seed", OptionType::kInt, 0, 4294967295.0, nullptr},
      {"min_disparity", OptionType::kInt, 0, 1024, nullptr},
      {"max_disparity", OptionType::kInt, 1, 1024, nullptr},
      {"noise_sigma", OptionType::kDouble, 0, 64, nullptr},
      {"flicker", OptionType::kDouble, 0, 0.5, nullptr},
      {"shadow", OptionType::kBool, 0, 0, nullptr},
      {"color", OptionType::kBool, 0, 0, nullptr},
      {"texture", OptionType::kChoice, 0, 0, "any,hstripes,vbars,mixed"},
      {"focal_px", OptionType::kDouble, 0, 1e6, nullptr},
      {"baseline_m", OptionType::kDouble, 0, 1000, nullptr},
      {"replay", OptionType::kInt, 0, kMaxReplay, nullptr},
  };
  switch (scheme) {
    case SourceScheme::kCsi:
      return csi;
    case SourceScheme::kRtsp:
      return rtsp;
    case SourceScheme::kImages:
      return images;
    case SourceScheme::kTest:
      return test;
    case SourceScheme::kSynthetic:
      return synthetic;
    default:
      return none;
  }
}

struct SchemeName {
  const char* name;
  SourceScheme scheme;
};
constexpr SchemeName kSchemes[] = {
    {"v4l2", SourceScheme::kV4l2}, {"csi", SourceScheme::kCsi},
    {"rtsp", SourceScheme::kRtsp}, {"rtsps", SourceScheme::kRtsp},
    {"file", SourceScheme::kFile}, {"images", SourceScheme::kImages},
    {"test", SourceScheme::kTest}, {"synthetic", SourceScheme::kSynthetic},
    {"gst", SourceScheme::kGst},
};

[[noreturn]] void fail(const std::string& uri, const std::string& what) {
  throw SourceUriError("source URI \"" + redact_uri(uri) + "\": " + what);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(const std::string& uri, const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    const int hi = i + 1 < s.size() ? hex_digit(s[i + 1]) : -1;
    const int lo = i + 2 < s.size() ? hex_digit(s[i + 2]) : -1;
    if (hi < 0 || lo < 0) fail(uri, "bad percent escape in \"" + s + "\" (expected %XX)");
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

bool parse_bool(const std::string& v, bool& out) {
  const std::string l = lower(v);
  if (l == "true" || l == "1" || l == "yes" || l == "on") {
    out = true;
    return true;
  }
  if (l == "false" || l == "0" || l == "no" || l == "off") {
    out = false;
    return true;
  }
  return false;
}

bool parse_number(const std::string& v, bool integer, double& out) {
  if (v.empty()) return false;
  errno = 0;
  char* end = nullptr;
  if (integer) {
    const long long n = std::strtoll(v.c_str(), &end, 10);
    out = static_cast<double>(n);
  } else {
    out = std::strtod(v.c_str(), &end);
  }
  return errno == 0 && end == v.c_str() + v.size();
}

std::string format_number(double v) {
  std::ostringstream out;
  out << std::setprecision(10) << v;
  return out.str();
}

std::string join_names(const std::vector<OptionSpec>& specs) {
  std::string s;
  for (const auto& spec : specs) s += (s.empty() ? "" : ", ") + std::string(spec.name);
  return s.empty() ? "none" : s;
}

void check_option(const std::string& uri, const OptionSpec& spec, const std::string& value) {
  const std::string what = "option " + std::string(spec.name) + "=\"" + value + "\": ";
  double n = 0;
  bool b = false;
  switch (spec.type) {
    case OptionType::kBool:
      if (!parse_bool(value, b)) fail(uri, what + "expected true or false");
      return;
    case OptionType::kInt:
    case OptionType::kDouble: {
      const bool integer = spec.type == OptionType::kInt;
      if (!parse_number(value, integer, n)) {
        fail(uri, what + (integer ? "expected an integer" : "expected a number"));
      }
      if (n < spec.lo || n > spec.hi) {
        fail(uri, what + "out of range [" + format_number(spec.lo) + ", " + format_number(spec.hi) +
                      "]");
      }
      return;
    }
    case OptionType::kChoice: {
      const std::string list = spec.choices;
      std::size_t start = 0;
      while (start <= list.size()) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        if (list.compare(start, comma - start, value) == 0 && comma - start == value.size()) {
          return;
        }
        start = comma + 1;
      }
      std::string shown = list;
      std::replace(shown.begin(), shown.end(), ',', ' ');
      fail(uri, what + "expected one of: " + shown);
    }
  }
}

// "k=v&k2=v2" into `out`, every key known to the scheme and every value valid.
void parse_options(const std::string& uri, SourceScheme scheme, const std::string& query,
                   std::map<std::string, std::string>& out) {
  const auto& specs = options_of(scheme);
  std::size_t start = 0;
  while (start < query.size()) {
    const std::size_t amp = std::min(query.find('&', start), query.size());
    const std::string item = query.substr(start, amp - start);
    start = amp + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    const std::string key = percent_decode(uri, item.substr(0, eq));
    if (eq == std::string::npos || eq + 1 == item.size()) {
      fail(uri, "option \"" + key + "\" has no value (expected " + key + "=value)");
    }
    const std::string value = percent_decode(uri, item.substr(eq + 1));
    const auto spec = std::find_if(specs.begin(), specs.end(),
                                   [&](const OptionSpec& s) { return key == s.name; });
    if (spec == specs.end()) {
      fail(uri, "unknown option \"" + key + "\" for " + scheme_name(scheme) +
                    ":// (known: " + join_names(specs) + ")");
    }
    if (out.count(key)) fail(uri, "option \"" + key + "\" given twice");
    check_option(uri, *spec, value);
    out[key] = value;
  }
}

// An image pattern must hold exactly one integer conversion (%d, %06d, %u, ...) and nothing else
// that printf would interpret: multifilesrc hands it to printf.
void check_image_pattern(const std::string& uri, const std::string& pattern) {
  int conversions = 0;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') continue;
    if (i + 1 < pattern.size() && pattern[i + 1] == '%') {
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    while (j < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[j]))) ++j;
    if (j - i > 3 || j >= pattern.size() || (pattern[j] != 'd' && pattern[j] != 'u')) {
      fail(uri, "image pattern \"" + pattern +
                    "\": only one integer conversion such as %06d is allowed (write %% for %)");
    }
    ++conversions;
    i = j;
  }
  if (conversions != 1) {
    fail(uri, "image pattern \"" + pattern + "\" needs exactly one integer conversion, e.g. " +
                  "images:///data/left_%06d.png");
  }
  const std::string l = lower(pattern);
  if (!ends_with(l, ".png") && !ends_with(l, ".jpg") && !ends_with(l, ".jpeg")) {
    fail(uri, "image pattern \"" + pattern + "\": expected .png, .jpg or .jpeg files");
  }
}

void check_location(SourceUri& s) {
  const std::string& uri = s.uri;
  switch (s.scheme) {
    case SourceScheme::kV4l2:
      if (s.location.empty() || s.location[0] != '/') {
        fail(uri, "expected a device path, e.g. v4l2:///dev/video0");
      }
      return;
    case SourceScheme::kCsi: {
      double id = 0;
      if (!parse_number(s.location, true, id) || id < 0 || id > 15) {
        fail(uri, "expected a sensor id 0..15, e.g. csi://0");
      }
      return;
    }
    case SourceScheme::kRtsp: {
      // The authority, less any user:password@, must name a host.
      const std::size_t start = s.location.find("://") + 3;
      const std::size_t end = std::min(s.location.find('/', start), s.location.size());
      const std::size_t at = s.location.rfind('@', end);
      const std::size_t host = at != std::string::npos && at >= start ? at + 1 : start;
      if (host >= end) fail(uri, "expected a host, e.g. rtsp://192.168.1.10:554/stream");
      return;
    }
    case SourceScheme::kFile:
      if (s.location.empty()) fail(uri, "expected a file path, e.g. file:///data/left.mkv");
      return;
    case SourceScheme::kImages:
      if (s.location.empty()) {
        fail(uri, "expected a numbered file pattern, e.g. images:///data/left_%06d.png");
      }
      check_image_pattern(uri, s.location);
      return;
    case SourceScheme::kTest:
      if (!s.location.empty()) {
        fail(uri,
             "test:// takes options only, e.g. test://?pattern=ball (got \"" + s.location + "\")");
      }
      return;
    case SourceScheme::kSynthetic:
      if (!s.location.empty() && s.location != "left" && s.location != "right" &&
          s.location != "above" && s.location != "below") {
        fail(uri,
             "expected synthetic://left, synthetic://right, synthetic://above, "
             "synthetic://below or synthetic:// (got \"" +
                 s.location + "\")");
      }
      return;
    case SourceScheme::kGst:
      if (s.location.find_first_not_of(" \t\r\n") == std::string::npos) {
        fail(uri, "expected a GStreamer launch description after gst://");
      }
      return;
  }
}

const std::string& checked_option(const SourceUri& s, const std::string& key) {
  static const std::string empty;
  const auto it = s.options.find(key);
  return it == s.options.end() ? empty : it->second;
}

}  // namespace

const char* scheme_name(SourceScheme scheme) {
  for (const auto& s : kSchemes) {
    if (s.scheme == scheme) return s.name;
  }
  return "?";
}

std::string known_schemes() {
  return "v4l2, csi, rtsp, file, images, test, synthetic, gst";
}

std::string redact_uri(const std::string& uri) {
  const std::size_t sep = uri.find("://");
  if (sep == std::string::npos || uri.compare(0, 3, "gst") == 0) return uri;
  const std::size_t authority = sep + 3;
  const std::size_t end = std::min(uri.find('/', authority), uri.size());
  const std::size_t at = uri.rfind('@', end);
  if (at == std::string::npos || at < authority) return uri;
  return uri.substr(0, authority) + "***" + uri.substr(at);
}

SourceUri parse_source_uri(const std::string& uri) {
  SourceUri s;
  s.uri = uri;
  const std::size_t sep = uri.find("://");
  if (sep == std::string::npos || sep == 0) {
    fail(uri, "not a source URI: expected scheme://..., with scheme one of " + known_schemes());
  }
  const std::string scheme = lower(uri.substr(0, sep));
  const auto known = std::find_if(std::begin(kSchemes), std::end(kSchemes),
                                  [&](const SchemeName& k) { return scheme == k.name; });
  if (known == std::end(kSchemes)) {
    fail(uri, "unknown scheme \"" + scheme + "\" (known: " + known_schemes() + ")");
  }
  s.scheme = known->scheme;
  const std::string rest = uri.substr(sep + 3);

  if (s.scheme == SourceScheme::kGst) {
    s.location = rest;  // a launch description: GStreamer parses it
  } else if (s.scheme == SourceScheme::kRtsp) {
    // The camera's URL is passed on whole; stereod's own options follow '#'.
    const std::size_t hash = uri.find('#');
    s.location = uri.substr(0, hash);
    if (hash != std::string::npos) parse_options(uri, s.scheme, uri.substr(hash + 1), s.options);
  } else {
    const std::size_t q = rest.find('?');
    // An image pattern is printf's ('%' starts its conversion), not percent-encoded.
    s.location = s.scheme == SourceScheme::kImages ? rest.substr(0, q)
                                                   : percent_decode(uri, rest.substr(0, q));
    if (q != std::string::npos) parse_options(uri, s.scheme, rest.substr(q + 1), s.options);
  }
  check_location(s);
  return s;
}

long long SourceUri::option_int(const std::string& key, long long fallback) const {
  const std::string& v = checked_option(*this, key);
  return v.empty() ? fallback : std::strtoll(v.c_str(), nullptr, 10);
}

double SourceUri::option_double(const std::string& key, double fallback) const {
  const std::string& v = checked_option(*this, key);
  return v.empty() ? fallback : std::strtod(v.c_str(), nullptr);
}

bool SourceUri::option_bool(const std::string& key, bool fallback) const {
  const std::string& v = checked_option(*this, key);
  bool b = fallback;
  if (!v.empty()) parse_bool(v, b);
  return b;
}

std::string SourceUri::option(const std::string& key, const std::string& fallback) const {
  const std::string& v = checked_option(*this, key);
  return v.empty() ? fallback : v;
}

}  // namespace stereod
