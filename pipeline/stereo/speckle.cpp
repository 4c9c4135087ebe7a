#include "stereo/speckle.hpp"

#include <cstdlib>

#include "stereo/pixel_ops.hpp"

namespace stereod {

void SpeckleFilter::apply(Disparity16& d, int min_size, int max_step) {
  if (min_size <= 1) return;
  const int w = d.width(), h = d.height();
  const std::size_t n = d.size();
  label_.assign(n, 0);  // 0: not visited
  std::uint16_t* px = d.data();
  for (std::size_t start = 0; start < n; ++start) {
    if (label_[start] != 0 || px[start] == kInvalidDisparity) continue;
    // Flood fill the region of `start`, remembering its members.
    members_.clear();
    stack_.clear();
    stack_.push_back(static_cast<std::int32_t>(start));
    label_[start] = 1;
    while (!stack_.empty()) {
      const int i = stack_.back();
      stack_.pop_back();
      members_.push_back(i);
      const int x = i % w, y = i / w;
      const int v = px[i];
      const int nb[4] = {x > 0 ? i - 1 : -1, x + 1 < w ? i + 1 : -1, y > 0 ? i - w : -1,
                         y + 1 < h ? i + w : -1};
      for (int j : nb) {
        if (j < 0 || label_[j] != 0 || px[j] == kInvalidDisparity) continue;
        if (std::abs(px[j] - v) > max_step) continue;
        label_[j] = 1;
        stack_.push_back(j);
      }
    }
    if (static_cast<int>(members_.size()) < min_size) {
      for (int i : members_) px[i] = kInvalidDisparity;
    }
  }
}

}  // namespace stereod
