// The page's files (web/), compiled into stereod-view (the build embeds them: embed.cmake), so
// that the program needs nothing beside it and the page nothing from the network.
#pragma once

#include <map>
#include <string>

#include "web_server.hpp"

namespace stereod::view {

// Path ("/", "/viewer.js", ...) -> content type and bytes.
std::map<std::string, Asset> web_assets();

}  // namespace stereod::view
