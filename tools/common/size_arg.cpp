#include "size_arg.hpp"

#include <exception>

namespace stereod {

bool parse_size(const std::string& s, int& w, int& h) {
  const auto x = s.find('x');
  if (x == std::string::npos) return false;
  try {
    std::size_t used = 0;
    w = std::stoi(s.substr(0, x), &used);
    if (used != x) return false;
    h = std::stoi(s.substr(x + 1), &used);
    return used == s.size() - x - 1 && w > 0 && h > 0;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace stereod
