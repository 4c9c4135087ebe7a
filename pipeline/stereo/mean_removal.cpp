#include "stereo/mean_removal.hpp"

#include "stereo/pixel_ops.hpp"
#include "thread_pool.hpp"

namespace stereod {

void remove_local_mean(ImageView<const std::uint8_t> img, int radius, Gray8& out,
                       ThreadPool* pool) {
  out.ensure_size(img.width, img.height);
  const int stride = static_cast<int>(img.stride);
  auto rows = [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      std::uint8_t* o = out.row(y);
      for (int x = 0; x < img.width; ++x) {
        o[x] = mean_removed_at(img.data, img.width, img.height, stride, x, y, radius);
      }
    }
  };
  for_rows(pool, img.height, rows);
}

}  // namespace stereod
