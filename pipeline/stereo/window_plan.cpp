#include "stereo/window_plan.hpp"

#include <algorithm>

namespace stereod {

void WindowPlan::build(const SearchRanges& ranges, const LevelMatchOptions& o) {
  const int w = ranges.lo.width(), h = ranges.lo.height();
  const int s = o.subwindow, half = s / 2;
  const int pad = o.subpixel ? 1 : 0;
  width_ = w;
  height_ = h;
  subwindow_ = s;
  chunks_ = (w + kWindowLanes - 1) / kWindowLanes;
  const int k_count = chunks_;
  aggregate_.assign(static_cast<std::size_t>(h) * k_count, DisparityBand{});
  sums_.assign(static_cast<std::size_t>(h + 2 * s) * k_count, DisparityBand{});
  costs_.assign(static_cast<std::size_t>(h) * k_count, DisparityBand{});

  for (int y = 0; y < h; ++y) {
    const std::int16_t* lo = ranges.lo.row(y);
    const std::int16_t* hi = ranges.hi.row(y);
    for (int k = 0; k < k_count; ++k) {
      DisparityBand& band = aggregate_[index(y, k)];
      const int x1 = std::min(w, (k + 1) * kWindowLanes);
      for (int x = k * kWindowLanes; x < x1; ++x) {
        if (hi[x] < lo[x]) continue;
        band.add({std::max(0, lo[x] - pad), std::min(o.disparities - 1, hi[x] + pad)});
      }
    }
  }
  // Sub-window sums of row cy, chunk k are read by output rows cy - s, cy, cy + s, from chunks
  // whose pixels lie within s of chunk k.
  const int reach = (s + kWindowLanes - 1) / kWindowLanes;
  for (int cy = -s; cy < h + s; ++cy) {
    for (int k = 0; k < k_count; ++k) {
      DisparityBand& band = sums_[index(cy + s, k)];
      for (int y : {cy - s, cy, cy + s}) {
        if (y < 0 || y >= h) continue;
        for (int kk = std::max(0, k - reach); kk <= std::min(k_count - 1, k + reach); ++kk) {
          band.add(aggregate_[index(y, kk)]);
        }
      }
    }
  }
  // Pixel costs of row r are summed into the sub-windows centred on rows r - half .. r + half
  // (the edge rows also into those centred outside the image, which repeat them).
  const int cost_reach = (half + kWindowLanes - 1) / kWindowLanes;
  for (int r = 0; r < h; ++r) {
    const int cy0 = r == 0 ? -s : r - half;
    const int cy1 = r == h - 1 ? h - 1 + s : r + half;
    for (int k = 0; k < k_count; ++k) {
      DisparityBand& band = costs_[index(r, k)];
      for (int cy = cy0; cy <= cy1; ++cy) {
        for (int kk = std::max(0, k - cost_reach); kk <= std::min(k_count - 1, k + cost_reach);
             ++kk) {
          band.add(sums(cy, kk));
        }
      }
    }
  }
  row_work_.assign(static_cast<std::size_t>(h), 0);
  for (int y = 0; y < h; ++y) {
    long long work = 1;
    for (int k = 0; k < k_count; ++k) {
      work += aggregate(y, k).size() + sums(y, k).size() + costs(y, k).size();
    }
    row_work_[static_cast<std::size_t>(y)] = work;
  }
}

std::vector<int> WindowPlan::split_rows(int parts) const {
  parts = std::max(1, std::min(parts, height_));
  long long total = 0;
  for (long long v : row_work_) total += v;
  std::vector<int> bounds{0};
  long long acc = 0;
  for (int y = 0; y < height_ && static_cast<int>(bounds.size()) < parts; ++y) {
    acc += row_work_[static_cast<std::size_t>(y)];
    // A boundary after row y once this part holds its share of the work.
    if (acc * parts >= total * static_cast<long long>(bounds.size()) && y + 1 < height_) {
      bounds.push_back(y + 1);
    }
  }
  bounds.push_back(height_);
  return bounds;
}

}  // namespace stereod
