// What stereod-view sends its page over the WebSocket (web/viewer.js reads it):
//  - binary, one per frame: a 4-byte little-endian length N, N bytes of JSON
//      {"header": <the frame's header as it arrived>,
//       "parts": [{"name", "encoding", "width", "height", "stride", "offset"}, ...]}
//    then the parts' bytes, each at `offset` bytes after the JSON: the payloads the page draws
//    (disparity, mask, left, confidence), as they arrived (the page computes depth and points
//    from the disparity and the header's camera model, as docs/PROTOCOL.md says);
//  - text, JSON with a "type": "hello" (the colormap, the pairs known), "pairs" (the list grew),
//    "stats" (a stats-topic snapshot) or "error" (a failed frame).
#pragma once

#include <set>
#include <string>

#include "stats/stats.hpp"
#include "stereod_client.hpp"

namespace stereod::view {

std::string frame_message(const client::Frame& frame);
std::string hello_message(const std::set<std::string>& pairs);
std::string pairs_message(const std::set<std::string>& pairs);
std::string stats_message(const stats::StatsSnapshot& snapshot);
std::string error_message(const client::Frame& frame);

}  // namespace stereod::view
