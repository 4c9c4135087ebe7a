// Which disparities the adaptive-window matcher must compute where, for one level and one
// reference view: the work follows the search ranges (and so the foreground), never the full
// range of the level.
//
// Each row is cut into chunks of kWindowLanes pixels. For every chunk the plan holds the band
// (smallest interval) of disparities that its pixels need at each of the three steps:
//   aggregate(y, k): the aggregated costs A of output chunk (y, k): the union of its matched
//                    pixels' ranges, widened by 1 on each side at the finest level (the subpixel
//                    parabola reads A(d - 1) and A(d + 1));
//   sums(cy, k):     the sub-window sums S of row cy (from -s to H - 1 + s: sub-windows centred
//                    outside the image are read by pixels near the border), chunk k: the union of
//                    the aggregate bands of every chunk that reads them (rows cy - s, cy, cy + s,
//                    chunks within s pixels);
//   costs(r, k):     the pixel costs pc of row r, chunk k: the union of the sums bands of every
//                    sub-window that covers them.
// A band is a superset of what each single pixel needs; lanes outside their own pixel's needs
// compute values nobody reads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "stereo/match_side.hpp"
#include "stereo/params.hpp"
#include "stereo/search_range.hpp"

namespace stereod {

// Pixels per chunk: the width of the vector loops (16 lanes of 16 bits fill an AVX2 register, two
// SSE or NEON registers).
constexpr int kWindowLanes = 16;

struct DisparityBand {
  // Empty: hi < lo. An empty band is {large, -1}, so the union is a plain min and max.
  int lo = 1 << 30, hi = -1;
  bool empty() const { return hi < lo; }
  int size() const { return hi < lo ? 0 : hi - lo + 1; }
  void add(const DisparityBand& o) {
    lo = o.lo < lo ? o.lo : lo;
    hi = o.hi > hi ? o.hi : hi;
  }
};

// Calls fn(d, k0, k1) for every disparity d in a row's bands and every maximal run [k0, k1) of
// consecutive chunks whose bands hold d (in no particular order): the rows' loops then run over
// whole runs of pixels at once. One sweep over the chunks, whose cost follows the changes from
// band to band rather than disparities times chunks.
template <typename Fn>
void for_each_run(const DisparityBand* bands, int chunks, Fn&& fn) {
  std::int16_t start[kMaxDisparity];  // where the open run of d began; valid for d in `open`
  DisparityBand open;                 // the previous chunk's band: its disparities' runs are open
  for (int k = 0; k <= chunks; ++k) {
    const DisparityBand now = k < chunks ? bands[k] : DisparityBand{};
    auto end_runs = [&](int lo, int hi) {
      for (int d = lo; d <= hi; ++d) fn(d, static_cast<int>(start[d]), k);
    };
    auto start_runs = [&](int lo, int hi) {
      for (int d = lo; d <= hi; ++d) start[d] = static_cast<std::int16_t>(k);
    };
    if (now.empty()) {
      end_runs(open.lo, open.hi);
    } else if (open.empty()) {
      start_runs(now.lo, now.hi);
    } else {
      // open minus now ends; now minus open starts; both hold the rest, whose runs go on.
      end_runs(open.lo, std::min(open.hi, now.lo - 1));
      end_runs(std::max(open.lo, now.hi + 1), open.hi);
      start_runs(now.lo, std::min(now.hi, open.lo - 1));
      start_runs(std::max(now.lo, open.hi + 1), now.hi);
    }
    open = now;
  }
}

class WindowPlan {
 public:
  void build(const SearchRanges& ranges, const LevelMatchOptions& options);

  int width() const { return width_; }
  int height() const { return height_; }
  int chunks() const { return chunks_; }  // per row
  int subwindow() const { return subwindow_; }

  const DisparityBand& aggregate(int y, int k) const { return aggregate_[index(y, k)]; }
  // The bands of all chunks of a row.
  const DisparityBand* sums_row(int cy) const { return &sums_[index(cy + subwindow_, 0)]; }
  const DisparityBand* costs_row(int r) const { return &costs_[index(r, 0)]; }
  const DisparityBand& sums(int cy, int k) const { return sums_[index(cy + subwindow_, k)]; }
  const DisparityBand& costs(int r, int k) const { return costs_[index(r, k)]; }

  // An estimate of the work of output row y (the bands' sizes), for splitting rows into tasks.
  long long row_work(int y) const { return row_work_[static_cast<std::size_t>(y)]; }

 private:
  std::size_t index(int row, int k) const {
    return static_cast<std::size_t>(row) * static_cast<std::size_t>(chunks_) +
           static_cast<std::size_t>(k);
  }

  void widen_along_rows(const std::vector<DisparityBand>& in, int rows, int reach,
                        std::vector<DisparityBand>& out) const;

  int width_ = 0, height_ = 0, chunks_ = 0, subwindow_ = 0;
  std::vector<DisparityBand> aggregate_, sums_, costs_;
  std::vector<DisparityBand> scratch_;
  std::vector<long long> row_work_;  // per output row, for split_rows
};

}  // namespace stereod
