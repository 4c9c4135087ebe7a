// "WxH" on a tool's command line.
#pragma once

#include <string>

namespace stereod {

// Parses "640x480" into positive width and height; false on anything else.
bool parse_size(const std::string& text, int& width, int& height);

}  // namespace stereod
