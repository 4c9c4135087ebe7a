#include "page_messages.hpp"

#include <cstdint>

#include "colormap.hpp"
#include "publish/json_reader.hpp"

namespace stereod::view {
namespace {

// The payloads the page draws.
bool drawn(const std::string& name) {
  return name == publish::kDisparityPayload || name == publish::kMaskPayload ||
         name == publish::kLeftPayload || name == publish::kConfidencePayload;
}

publish::Json pair_list(const std::set<std::string>& pairs) {
  publish::Json list = publish::Json::array();
  for (const auto& p : pairs) list.push_back(p);
  return list;
}

std::string dump(const publish::Json& j) {
  return j.dump(-1, ' ', false, publish::Json::error_handler_t::replace);
}

}  // namespace

std::string frame_message(const client::Frame& frame) {
  const auto& h = frame.header();
  publish::Json parts = publish::Json::array();
  std::string bytes;
  for (const auto& p : h.payloads) {
    if (!drawn(p.name)) continue;
    const std::string_view data = frame.payload(p.name);
    parts.push_back({{"name", p.name},
                     {"encoding", p.encoding},
                     {"width", p.width},
                     {"height", p.height},
                     {"stride", p.stride},
                     {"offset", bytes.size()}});
    bytes.append(data.data(), data.size());
  }
  // The header goes in as it arrived: the page reads the same fields a client does.
  const std::string json = std::string("{\"header\":") + std::string(frame.header_json()) +
                           ",\"parts\":" + dump(parts) + "}";
  std::string out;
  out.reserve(4 + json.size() + bytes.size());
  const auto n = static_cast<std::uint32_t>(json.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
  out += json;
  out += bytes;
  return out;
}

std::string hello_message(const std::set<std::string>& pairs) {
  publish::Json colormap = publish::Json::array();
  for (const auto& c : sub::perceptual_colormap()) colormap.push_back({c[0], c[1], c[2]});
  return dump({{"type", "hello"}, {"pairs", pair_list(pairs)}, {"colormap", colormap}});
}

std::string pairs_message(const std::set<std::string>& pairs) {
  return dump({{"type", "pairs"}, {"pairs", pair_list(pairs)}});
}

std::string stats_message(const stats::StatsSnapshot& snapshot) {
  return "{\"type\":\"stats\",\"stats\":" + stats::encode_stats(snapshot) + "}";
}

std::string error_message(const client::Frame& frame) {
  const auto& info = frame.header().info;
  return dump(
      {{"type", "error"}, {"pair", info.pair}, {"sequence", info.sequence}, {"error", info.error}});
}

}  // namespace stereod::view
