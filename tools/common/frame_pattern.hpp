// Numbered file names from a printf-style pattern with exactly one integer conversion
// ("dir/left_%06d.png"), checked rather than handed to printf.
#pragma once

#include <string>

namespace stereod {

// Throws std::invalid_argument when the pattern has no integer conversion, more than one, or any
// other conversion.
std::string format_frame_path(const std::string& pattern, long long index);

}  // namespace stereod
