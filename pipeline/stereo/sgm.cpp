#include "stereo/sgm.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "stereo/sgm_ops.hpp"
#include "thread_pool.hpp"

namespace stereod {
namespace {

constexpr std::uint32_t kInfinite = kSgmInfinite;

// One path direction: the predecessor of (x, y) is (x - dx, y - dy).
struct Direction {
  int dx, dy;
};
// Top-down scan (predecessor above or to the left), then bottom-up; the first two of each are the
// 4-path set.
constexpr Direction kTopDown[4] = {{1, 0}, {0, 1}, {1, 1}, {-1, 1}};
constexpr Direction kBottomUp[4] = {{-1, 0}, {0, -1}, {-1, -1}, {1, -1}};

// L of pixel p over its range [lo, hi] (costs c, kNoCost where not allowed) from its predecessor's
// Lq over [qlo, qhi] with minimum q_min (q_min == kInfinite: no predecessor, the path restarts).
// `pad` is scratch of at least hi - lo + 3 values. Returns the minimum of the new L.
std::uint32_t path_step(const std::uint32_t* c, int lo, int hi, const std::uint32_t* lq, int qlo,
                        int qhi, std::uint32_t q_min, std::uint32_t p1, std::uint32_t p2,
                        std::uint32_t* __restrict l, std::uint32_t* __restrict pad) {
  const int n = hi - lo + 1;
  std::uint32_t l_min = kInfinite;
  if (q_min == kInfinite) {
    for (int j = 0; j < n; ++j) {
      l[j] = sgm_start_cost(c[j]);
      l_min = std::min(l_min, l[j]);
    }
    return l_min;
  }
  // pad[j] = Lq(lo - 1 + j), infinite outside q's range: the loop below then has no branches.
  const int first = std::max(qlo, lo - 1), last = std::min(qhi, hi + 1);
  std::fill(pad, pad + n + 2, kInfinite);
  for (int d = first; d <= last; ++d) pad[d - lo + 1] = lq[d - qlo];
  const std::uint32_t jump = q_min + p2;
  for (int j = 0; j < n; ++j) {
    const std::uint32_t v = sgm_path_cost(c[j], pad[j + 1], pad[j], pad[j + 2], q_min, p1, jump);
    l[j] = v;
    l_min = std::min(l_min, v);
  }
  return l_min;
}

// One scan (top-down or bottom-up) of one view over `paths` directions, S of those paths into
// `sums` (laid out as the volume).
class Scan {
 public:
  Scan(const CostVolume& volume, const SearchRanges& ranges, ImageView<const std::uint8_t> gray,
       const SgmOptions& o, bool top_down, std::uint32_t* sums)
      : volume_(volume), ranges_(ranges), gray_(gray), o_(o), top_down_(top_down), sums_(sums) {}

  void run() {
    const int w = volume_.width(), h = volume_.height();
    const int directions = o_.paths / 2;
    const Direction* dirs = top_down_ ? kTopDown : kBottomUp;
    std::size_t row_max = 0;
    for (int y = 0; y < h; ++y) row_max = std::max(row_max, row_size(y));
    pad_.assign(static_cast<std::size_t>(o_.disparities) + 2, kInfinite);
    for (int step = 0; step < 256; ++step) {
      jumps_[step] = sgm_jump_penalty(o_.p1, o_.p2, o_.gradient, step);
    }
    for (int k = 0; k < directions; ++k) {
      for (int j = 0; j < 2; ++j) {
        rows_[k][j].assign(row_max, 0);
        mins_[k][j].assign(static_cast<std::size_t>(w), kInfinite);
      }
    }
    for (int i = 0; i < h; ++i) {
      const int y = top_down_ ? i : h - 1 - i;
      const int cur = i & 1, prev = cur ^ 1;
      const std::size_t row0 = volume_.offset(0, y);
      for (int j = 0; j < w; ++j) {
        const int x = top_down_ ? j : w - 1 - j;
        const int lo = ranges_.lo(x, y), hi = ranges_.hi(x, y);
        if (hi < lo) {
          for (int k = 0; k < directions; ++k)
            mins_[k][cur][static_cast<std::size_t>(x)] = kInfinite;
          continue;
        }
        const std::size_t at = volume_.offset(x, y);
        const std::uint32_t* c = volume_.at(x, y);
        std::uint32_t* s = sums_ + at;
        for (int d = 0; d <= hi - lo; ++d) s[d] = 0;
        for (int k = 0; k < directions; ++k) {
          const int qx = x - dirs[k].dx, qy = y - dirs[k].dy;
          std::uint32_t* l = rows_[k][cur].data() + (at - row0);
          const std::uint32_t* lq = nullptr;
          std::uint32_t q_min = kInfinite;
          int qlo = 1, qhi = 0;
          std::uint32_t p2 = o_.p2;
          if (qx >= 0 && qx < w && qy >= 0 && qy < h) {
            const int side = qy == y ? cur : prev;
            q_min = mins_[k][side][static_cast<std::size_t>(qx)];
            qlo = ranges_.lo(qx, qy);
            qhi = ranges_.hi(qx, qy);
            lq = rows_[k][side].data() + (volume_.offset(qx, qy) - volume_.offset(0, qy));
            p2 = jumps_[static_cast<std::size_t>(std::abs(int{gray_(x, y)} - int{gray_(qx, qy)}))];
          }
          mins_[k][cur][static_cast<std::size_t>(x)] =
              path_step(c, lo, hi, lq, qlo, qhi, q_min, o_.p1, p2, l, pad_.data());
          // Not-allowed candidates add 0: S is read only where C is allowed.
          for (int d = 0; d <= hi - lo; ++d) s[d] += sgm_sum_term(l[d]);
        }
      }
    }
  }

 private:
  std::size_t row_size(int y) const {
    const std::size_t end = y + 1 < volume_.height() ? volume_.offset(0, y + 1) : volume_.size();
    return end - volume_.offset(0, y);
  }

  const CostVolume& volume_;
  const SearchRanges& ranges_;
  ImageView<const std::uint8_t> gray_;
  const SgmOptions& o_;
  bool top_down_;
  std::uint32_t* sums_;
  // Per direction, L of the current and the previous row (laid out as the volume's rows), and
  // each pixel's minimum L (kInfinite: no allowed candidate, or not matched).
  std::vector<std::uint32_t> rows_[4][2];
  std::vector<std::uint32_t> mins_[4][2];
  std::vector<std::uint32_t> pad_;
  std::uint32_t jumps_[256];  // P2 by intensity step
};

}  // namespace

std::string sgm_volume_error(std::size_t cells, Aggregation mode) {
  const bool cross = mode == Aggregation::kCross;
  // Bytes a cell: sgm keeps the volume and two scans' sums; cross the volume and its region sums.
  const std::size_t bytes = cross ? 8 : 12;
  return std::string("stereo.aggregation ") + std::string(to_string(mode)) +
         ": this frame's search ranges need " + std::to_string(cells) +
         " cost cells in one view (" + std::to_string(cells * bytes >> 20) + " MiB with the " +
         (cross ? "region" : "path") + " sums); the limit is " + std::to_string(kSgmMaxCells) +
         " (lower max_disparity or the image size, or use aggregation: window)";
}

void size_view_outputs(const ViewMatch& view, int w, int h) {
  view.disparity->ensure_size(w, h);
  if (view.q4) view.q4->ensure_size(w, h);
  if (view.cost_ratio) view.cost_ratio->ensure_size(w, h);
  if (view.confidence) view.confidence->ensure_size(w, h);
}

void CostVolume::layout(const SearchRanges& ranges, Aggregation mode) {
  width_ = ranges.lo.width();
  height_ = ranges.lo.height();
  offsets_.resize(static_cast<std::size_t>(width_) * static_cast<std::size_t>(height_) + 1);
  std::size_t n = 0;
  for (int y = 0; y < height_; ++y) {
    const std::int16_t* lo = ranges.lo.row(y);
    const std::int16_t* hi = ranges.hi.row(y);
    for (int x = 0; x < width_; ++x) {
      offsets_[static_cast<std::size_t>(y) * static_cast<std::size_t>(width_) +
               static_cast<std::size_t>(x)] = n;
      n += hi[x] >= lo[x] ? static_cast<std::size_t>(hi[x] - lo[x] + 1) : 0;
    }
  }
  if (n > kSgmMaxCells) throw std::runtime_error(sgm_volume_error(n, mode));
  offsets_.back() = n;
  values_.resize(n);
}

void SgmMatcher::match(const ViewMatch (&views)[2], const ImageView<const std::uint8_t> (&gray)[2],
                       const SgmOptions& o, ThreadPool* pool) {
  if (o.paths != 4 && o.paths != 8) throw std::logic_error("SgmMatcher: 4 or 8 paths");
  for (int v = 0; v < 2; ++v) {
    if (!views[v].volume) throw std::logic_error("SgmMatcher: a view without its cost volume");
    for (auto& s : sums_[v]) s.resize(views[v].volume->size());
    size_view_outputs(views[v], views[v].volume->width(), views[v].volume->height());
  }
  // The two scans of both views are independent: four tasks.
  for_rows(pool, 4, [&](int t0, int t1) {
    for (int t = t0; t < t1; ++t) {
      const int v = t / 2;
      const bool top_down = t % 2 == 0;
      Scan(*views[v].volume, *views[v].ranges, gray[v], o, top_down,
           sums_[v][top_down ? 0 : 1].data())
          .run();
    }
  });
  const int h = views[0].volume->height();
  for_rows(pool, 2 * h, [&](int r0, int r1) {
    for (int v = 0; v < 2; ++v) {
      const int y0 = std::max(r0 - v * h, 0), y1 = std::min(r1 - v * h, h);
      if (y0 >= y1) continue;
      const std::uint32_t* down = sums_[v][0].data();
      const std::uint32_t* up = sums_[v][1].data();
      pick_volume_winners(
          views[v], *views[v].volume, [&](std::size_t at) { return down[at] + up[at]; },
          o.disparities, o.uniqueness, o.refine_subpixel, y0, y1);
    }
  });
}

}  // namespace stereod
