#include "stereo/window_plan.hpp"

#include <algorithm>

namespace stereod {

// out[row][k]: the union of in[row][k - reach .. k + reach].
void WindowPlan::widen_along_rows(const std::vector<DisparityBand>& in, int rows, int reach,
                                  std::vector<DisparityBand>& out) const {
  out.assign(static_cast<std::size_t>(rows) * chunks_, DisparityBand{});
  for (int row = 0; row < rows; ++row) {
    const DisparityBand* from = &in[index(row, 0)];
    DisparityBand* to = &out[index(row, 0)];
    for (int k = 0; k < chunks_; ++k) {
      for (int kk = std::max(0, k - reach); kk <= std::min(chunks_ - 1, k + reach); ++kk) {
        to[k].add(from[kk]);
      }
    }
  }
}

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
      // Branch-free: a pixel without a range adds the empty band (a min and a max that change
      // nothing), so the loop vectorises.
      const int x1 = std::min(w, (k + 1) * kWindowLanes);
      int band_lo = DisparityBand{}.lo, band_hi = -1;
      for (int x = k * kWindowLanes; x < x1; ++x) {
        const bool matched = hi[x] >= lo[x];
        const int l = matched ? std::max(0, lo[x] - pad) : DisparityBand{}.lo;
        const int h2 = matched ? std::min(o.disparities - 1, hi[x] + pad) : -1;
        band_lo = std::min(band_lo, l);
        band_hi = std::max(band_hi, h2);
      }
      aggregate_[index(y, k)] = {band_lo, band_hi};
    }
  }
  // Both unions are separable: first over neighbouring chunks, then over rows.
  // Sub-window sums of row cy, chunk k are read by output rows cy - s, cy, cy + s, from chunks
  // whose pixels lie within s of chunk k.
  const int reach = (s + kWindowLanes - 1) / kWindowLanes;
  widen_along_rows(aggregate_, h, reach, scratch_);
  for (int cy = -s; cy < h + s; ++cy) {
    DisparityBand* band = &sums_[index(cy + s, 0)];
    for (int y : {cy - s, cy, cy + s}) {
      if (y < 0 || y >= h) continue;
      const DisparityBand* from = &scratch_[index(y, 0)];
      for (int k = 0; k < k_count; ++k) band[k].add(from[k]);
    }
  }
  // Pixel costs of row r are summed into the sub-windows centred on rows r - half .. r + half
  // (the edge rows also into those centred outside the image, which repeat them).
  const int cost_reach = (half + kWindowLanes - 1) / kWindowLanes;
  widen_along_rows(sums_, h + 2 * s, cost_reach, scratch_);
  for (int r = 0; r < h; ++r) {
    const int cy0 = r == 0 ? -s : r - half;
    const int cy1 = r == h - 1 ? h - 1 + s : r + half;
    DisparityBand* band = &costs_[index(r, 0)];
    for (int cy = cy0; cy <= cy1; ++cy) {
      const DisparityBand* from = &scratch_[index(cy + s, 0)];
      for (int k = 0; k < k_count; ++k) band[k].add(from[k]);
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

}  // namespace stereod
