#include "stereo/speckle.hpp"

#include <algorithm>
#include <cstdlib>

#include "stereo/pixel_ops.hpp"

namespace stereod {

// Flood fill on a copy of the map with a one-pixel border of kInvalidDisparity, so neighbours need
// neither bounds checks nor divisions: a region is grown from each unvisited valid pixel in
// row-major order, exactly as the definition reads, and removed when it is small.
void SpeckleFilter::apply(Disparity16& d, int min_size, int max_step) {
  if (min_size <= 1) return;
  const int w = d.width(), h = d.height();
  const int pw = w + 2;
  const std::size_t padded = static_cast<std::size_t>(pw) * (h + 2);
  map_.assign(padded, kInvalidDisparity);
  for (int y = 0; y < h; ++y) {
    std::copy(d.row(y), d.row(y) + w, map_.data() + static_cast<std::size_t>(y + 1) * pw + 1);
  }
  visited_.assign(padded, 0);
  const int step[4] = {-1, 1, -pw, pw};
  std::uint16_t* px = map_.data();
  for (int y = 1; y <= h; ++y) {
    for (int start = y * pw + 1; start < y * pw + 1 + w; ++start) {
      if (visited_[start] || px[start] == kInvalidDisparity) continue;
      members_.clear();
      members_.push_back(start);
      visited_[start] = 1;
      // members_ doubles as the queue: everything before `next` has had its neighbours looked at.
      for (std::size_t next = 0; next < members_.size(); ++next) {
        const int i = members_[next];
        const int v = px[i];
        for (int s : step) {
          const int j = i + s;
          if (visited_[j] || px[j] == kInvalidDisparity || std::abs(px[j] - v) > max_step) continue;
          visited_[j] = 1;
          members_.push_back(j);
        }
      }
      if (static_cast<int>(members_.size()) < min_size) {
        for (int i : members_) {
          const int yy = i / pw - 1, xx = i % pw - 1;  // only for the few pixels removed
          d(xx, yy) = kInvalidDisparity;
        }
      }
    }
  }
}

}  // namespace stereod
