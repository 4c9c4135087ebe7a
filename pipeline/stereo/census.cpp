#include "stereo/census.hpp"

#include "stereo/pixel_ops.hpp"
#include "thread_pool.hpp"

namespace stereod {

void census_transform(ImageView<const std::uint8_t> img, int window_w, int window_h,
                      Image<std::uint64_t>& codes, ThreadPool* pool) {
  codes.ensure_size(img.width, img.height);
  const int stride = static_cast<int>(img.stride);
  auto rows = [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      std::uint64_t* out = codes.row(y);
      for (int x = 0; x < img.width; ++x) {
        out[x] = census_at(img.data, img.width, img.height, stride, x, y, window_w, window_h);
      }
    }
  };
  for_rows(pool, img.height, rows);
}

}  // namespace stereod
