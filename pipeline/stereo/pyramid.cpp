#include "stereo/pyramid.hpp"

#include "stereo/pixel_ops.hpp"
#include "thread_pool.hpp"

namespace stereod {

void downsample(ImageView<const std::uint8_t> fine, Gray8& coarse, ThreadPool* pool) {
  const int w = (fine.width + 1) / 2;
  const int h = (fine.height + 1) / 2;
  coarse.ensure_size(w, h);
  auto rows = [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      std::uint8_t* out = coarse.row(y);
      for (int x = 0; x < w; ++x) {
        out[x] =
            downsample_at(fine.data, fine.width, fine.height, static_cast<int>(fine.stride), x, y);
      }
    }
  };
  for_rows(pool, h, rows);
}

}  // namespace stereod
