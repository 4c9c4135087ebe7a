#include "stereo/adaptive_window.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "cpu_features.hpp"
#include "stereo/confidence.hpp"
#include "stereo/pixel_costs.hpp"
#include "stereo/pixel_ops.hpp"
#include "stereo/sgm.hpp"
#include "thread_pool.hpp"

namespace stereod {
namespace {

// The 8 neighbouring sub-windows, in units of s; the centre one is handled on its own.
constexpr int kNeighbourDx[8] = {-1, 0, 1, -1, 1, -1, 0, 1};
constexpr int kNeighbourDy[8] = {-1, -1, -1, 0, 0, 1, 1, 1};

}  // namespace

// Scratch of one row band's task, kept between frames.
struct AdaptiveWindowMatcher::Part {
  SubwindowSums sums[2];   // per view
  PixelCosts pixel_costs;  // shared by both views
  // Per lane type: A over a chunk's band, and which targets a row's candidates may use.
  template <typename T>
  struct Lanes {
    std::vector<T> aggregated, allowed;
  };
  Lanes<std::uint16_t> lanes16;
  Lanes<std::uint32_t> lanes32;
  template <typename T>
  Lanes<T>& lanes() {
    if constexpr (sizeof(T) == 2) {
      return lanes16;
    } else {
      return lanes32;
    }
  }
};

namespace {

// The lanes of one chunk while its band is scanned: each pixel's range (empty for lanes past the
// image or not matched), the best A so far and its disparity, and the candidates tried.
template <typename T>
struct ChunkLanes {
  std::int16_t lo[kWindowLanes], hi[kWindowLanes];
  T best[kWindowLanes];
  std::int16_t best_d[kWindowLanes];
  std::int16_t count[kWindowLanes];
};

// Scans the band of a chunk (pixels x0 .. x0 + kWindowLanes - 1 of row y): for each disparity, A
// of every lane from the centre sum and its eight neighbours' (kNone where the target is not
// allowed), kept in `aggregated` (lane-minor), and the running winner among the candidates inside
// each lane's range. The lane loop is branch-free, so it is one vector loop (checked with
// -fopt-info-vec; docs/PERFORMANCE.md); kVectorBytes is the register width it is written for.
template <typename T, bool kBest4, int kVectorBytes>
[[gnu::always_inline]] inline void scan_band_lanes(const SubwindowSums& sums, int y, int x0, int s,
                                                   const DisparityBand& band, const T* allowed,
                                                   int direction, const T* k_mask,
                                                   T* __restrict aggregated, ChunkLanes<T>& state) {
  ChunkLanes<T> lanes = state;  // a local copy: no stores that might alias the loads
  for (int dd = band.lo; dd <= band.hi; ++dd) {
    const std::uint16_t* centre = sums.row(y, dd) + x0;
    const std::uint16_t* nb[8];
    for (int j = 0; j < 8; ++j) {
      nb[j] = sums.row(y + s * kNeighbourDy[j], dd) + x0 + s * kNeighbourDx[j];
    }
    const T* ok = allowed + direction * dd;
    T* a_out = aggregated + static_cast<std::size_t>(dd - band.lo) * kWindowLanes;
    const std::int16_t d = static_cast<std::int16_t>(dd);
    // A register of lanes at a time: the network keeps 8 values of every lane live, and a whole
    // chunk of them does not fit in the 16 SSE registers.
    for (int i0 = 0; i0 < kWindowLanes; i0 += kVectorBytes / static_cast<int>(sizeof(T))) {
      for (int i = i0; i < i0 + kVectorBytes / static_cast<int>(sizeof(T)); ++i) {
        T v[8] = {nb[0][i], nb[1][i], nb[2][i], nb[3][i], nb[4][i], nb[5][i], nb[6][i], nb[7][i]};
        T sum = 0;
        if (kBest4) {
          sum = sum_smallest_4_of_8_t(v);
        } else {
          sort8_t(v);
#pragma GCC unroll 8
          for (int j = 0; j < 8; ++j) sum = static_cast<T>(sum + (v[j] & k_mask[j]));
        }
        const T raw = static_cast<T>(centre[i] + sum);  // computed unconditionally: no branch
        // Selections as masks, not `c ? a : b` into the lane arrays: GCC turns those into
        // conditional stores, and a loop with conditional stores is not vectorised.
        // ok is all ones where the candidate is allowed: elsewhere A becomes all ones, kNone.
        const T a = static_cast<T>(raw | ~ok[i]);
        a_out[i] = a;
        const bool in_range = (lanes.lo[i] <= d) & (d <= lanes.hi[i]);  // bitwise: no branch
        const T candidate = static_cast<T>(a | static_cast<T>(T(in_range) - T(1)));
        const std::int16_t better = static_cast<std::int16_t>(-(candidate < lanes.best[i]));
        lanes.count[i] = static_cast<std::int16_t>(lanes.count[i] + (in_range & (ok[i] & 1)));
        lanes.best_d[i] = static_cast<std::int16_t>((d & better) | (lanes.best_d[i] & ~better));
        lanes.best[i] = candidate < lanes.best[i] ? candidate : lanes.best[i];
      }
    }
  }
  state = lanes;
}

// The same, compiled for the baseline (16-byte registers: SSE, NEON) and, on x86-64, for AVX2.
template <typename T, bool kBest4>
void scan_band_baseline(const SubwindowSums& sums, int y, int x0, int s, const DisparityBand& band,
                        const T* allowed, int direction, const T* k_mask, T* __restrict aggregated,
                        ChunkLanes<T>& state) {
  scan_band_lanes<T, kBest4, 16>(sums, y, x0, s, band, allowed, direction, k_mask, aggregated,
                                 state);
}

#if STEREOD_X86_AVX2_PATHS
template <typename T, bool kBest4>
STEREOD_TARGET_AVX2 void scan_band_avx2(const SubwindowSums& sums, int y, int x0, int s,
                                        const DisparityBand& band, const T* allowed, int direction,
                                        const T* k_mask, T* __restrict aggregated,
                                        ChunkLanes<T>& state) {
  scan_band_lanes<T, kBest4, 32>(sums, y, x0, s, band, allowed, direction, k_mask, aggregated,
                                 state);
}
#endif

template <typename T, bool kBest4>
void scan_band(const SubwindowSums& sums, int y, int x0, int s, const DisparityBand& band,
               const T* allowed, int direction, const T* k_mask, T* __restrict aggregated,
               ChunkLanes<T>& state, bool wide) {
#if STEREOD_X86_AVX2_PATHS
  if (wide) {
    scan_band_avx2<T, kBest4>(sums, y, x0, s, band, allowed, direction, k_mask, aggregated, state);
    return;
  }
#endif
  (void)wide;
  scan_band_baseline<T, kBest4>(sums, y, x0, s, band, allowed, direction, k_mask, aggregated,
                                state);
}

// One output row's aggregation and winners, chunk by chunk. T is the lane type of A: 16 bits
// wherever the largest possible A fits, else 32.
class RowMatcher {
 public:
  RowMatcher(const ViewMatch& view, const LevelMatchOptions& o, const WindowPlan& plan,
             AdaptiveWindowMatcher::Part& part)
      : side_(view.side),
        ranges_(*view.ranges),
        volume_(view.volume),
        o_(o),
        plan_(plan),
        part_(part) {
    // Which targets a candidate may use, per row: margins as wide as the search plus a chunk, so
    // x + direction * d indexes it for every lane; 0 outside the image.
    margin_ = o.disparities + kWindowLanes;
    const std::size_t n = static_cast<std::size_t>(plan.chunks() * kWindowLanes + 2 * margin_);
    part.lanes16.allowed.assign(n, 0);
    part.lanes32.allowed.assign(n, 0);
    // A of a chunk over its band, which is at most the level's range.
    const std::size_t band_lanes = static_cast<std::size_t>(o.disparities) * kWindowLanes;
    if (part.lanes16.aggregated.size() < band_lanes) part.lanes16.aggregated.resize(band_lanes);
    if (part.lanes32.aggregated.size() < band_lanes) part.lanes32.aggregated.resize(band_lanes);
  }

  // Row y's winners into disparity, and (each optional) q4, confidence and cost ratio (the last
  // only with q4).
  template <typename T, bool kBest4>
  long long match_row(const SubwindowSums& sums, int y, std::int16_t* disparity, std::uint16_t* q4,
                      std::uint8_t* confidence, std::uint32_t* cost_ratio);

 private:
  template <typename T, bool kBest4>
  long long match_chunk(const SubwindowSums& sums, int y, int k, const DisparityBand& band,
                        std::int16_t* disparity, std::uint16_t* q4, std::uint8_t* confidence,
                        std::uint32_t* cost_ratio);

  const MatchSide& side_;
  const SearchRanges& ranges_;
  CostVolume* volume_;
  const LevelMatchOptions& o_;
  const WindowPlan& plan_;
  AdaptiveWindowMatcher::Part& part_;  // allowed: all ones where the target exists and is
                                       // foreground
  int margin_ = 0;
  bool wide_ = wide_vectors();  // AVX2 versions of the lane loops
};

template <typename T, bool kBest4>
long long RowMatcher::match_row(const SubwindowSums& sums, int y, std::int16_t* disparity,
                                std::uint16_t* q4, std::uint8_t* confidence,
                                std::uint32_t* cost_ratio) {
  const int w = plan_.width();
  T* allowed = part_.lanes<T>().allowed.data() + margin_;
  const std::uint8_t* fg = side_.tgt_foreground.empty() ? nullptr : side_.tgt_foreground.row(y);
  for (int x = 0; x < w; ++x) allowed[x] = static_cast<T>(T(0) - T(!fg || fg[x] != 0));
  long long evaluated = 0;
  for (int k = 0; k < plan_.chunks(); ++k) {
    const DisparityBand& band = plan_.aggregate(y, k);
    if (band.empty()) {
      const int x0 = k * kWindowLanes, x1 = std::min(w, x0 + kWindowLanes);
      std::fill(disparity + x0, disparity + x1, kNoDisparity);
      if (q4) std::fill(q4 + x0, q4 + x1, kInvalidDisparity);
      if (cost_ratio) std::fill(cost_ratio + x0, cost_ratio + x1, kNoCost);
      if (confidence) std::fill(confidence + x0, confidence + x1, std::uint8_t{0});
      continue;
    }
    evaluated += match_chunk<T, kBest4>(sums, y, k, band, disparity, q4, confidence, cost_ratio);
  }
  return evaluated;
}

template <typename T, bool kBest4>
long long RowMatcher::match_chunk(const SubwindowSums& sums, int y, int k,
                                  const DisparityBand& band, std::int16_t* disparity,
                                  std::uint16_t* q4, std::uint8_t* confidence,
                                  std::uint32_t* cost_ratio) {
  constexpr int kLanes = kWindowLanes;
  constexpr T kNone = std::numeric_limits<T>::max();  // larger than any A
  const int x0 = k * kLanes;
  const int lanes = std::min(kLanes, plan_.width() - x0);
  ChunkLanes<T> state;
  for (int i = 0; i < kLanes; ++i) {
    const bool inside = i < lanes;
    state.lo[i] = inside ? ranges_.lo(x0 + i, y) : 1;
    state.hi[i] = inside ? ranges_.hi(x0 + i, y) : 0;
    state.best[i] = kNone;
    state.best_d[i] = kNoDisparity;
    state.count[i] = 0;
  }
  T* aggregated = part_.lanes<T>().aggregated.data();  // A over the band, lane-minor
  T k_mask[8];  // all ones for the k smallest, which join the sum
  for (int j = 0; j < 8; ++j) k_mask[j] = j < o_.best_k ? std::numeric_limits<T>::max() : T(0);
  scan_band<T, kBest4>(sums, y, x0, o_.subwindow, band,
                       part_.lanes<T>().allowed.data() + margin_ + x0, side_.direction, k_mask,
                       aggregated, state, wide_);
  const std::int16_t* lo = state.lo;
  const std::int16_t* hi = state.hi;
  const T* best = state.best;
  long long evaluated = 0;
  for (int i = 0; i < lanes; ++i) {
    evaluated += state.count[i];
    auto cost_at = [&](int dd) {
      return aggregated[static_cast<std::size_t>(dd - band.lo) * kLanes + i];
    };
    if (volume_) {  // every candidate's A for the semi-global pass (kNoCost: not allowed)
      std::uint32_t* out = volume_->at(x0 + i, y);
      for (int dd = lo[i]; dd <= hi[i]; ++dd) {
        const T a = cost_at(dd);
        out[dd - lo[i]] = a == kNone ? kNoCost : a;
      }
    }
    std::uint8_t* c = confidence ? confidence + x0 + i : nullptr;
    const int d = apply_winner_rules(int{state.best_d[i]}, best[i], lo[i], hi[i], cost_at, kNone,
                                     o_.uniqueness, c);
    disparity[x0 + i] = static_cast<std::int16_t>(d);
    if (!q4) continue;
    if (d == kNoDisparity) {
      q4[x0 + i] = kInvalidDisparity;
      if (cost_ratio) cost_ratio[x0 + i] = kNoCost;
      continue;
    }
    // A(d - 1) and A(d + 1) are in the band (it is widened by 1 at this level); kNone there means
    // that candidate is not allowed. The rule itself is the CUDA engine's (pixel_ops.hpp).
    q4[x0 + i] = subpixel_disparity(d, o_.disparities, best[i], cost_at, kNone, o_.refine_subpixel);
    if (cost_ratio) {
      cost_ratio[x0 + i] = winner_cost_ratio_at(d, o_.disparities, best[i], cost_at, kNone);
    }
  }
  return evaluated;
}

// The largest pixel cost the tables can give.
std::uint32_t max_pixel_cost(const CostTables& t) {
  const std::uint32_t ad = *std::max_element(std::begin(t.ad), std::end(t.ad));
  const std::uint32_t census =
      t.uses_census ? *std::max_element(std::begin(t.census), std::end(t.census)) : t.census[0];
  return std::max(ad + census, t.outside);
}

}  // namespace

bool candidate_allowed(const MatchSide& side, int x, int y, int d) {
  const int tx = x + side.direction * d;
  if (tx < 0 || tx >= side.ref.width) return false;
  return side.tgt_foreground.empty() || side.tgt_foreground(tx, y) != 0;
}

std::uint32_t naive_subwindow_sum(const MatchSide& side, const CostTables& costs, int subwindow,
                                  int cx, int cy, int d) {
  // The definition, clamping every coordinate.
  const int h = subwindow / 2;
  std::uint32_t sum = 0;
  for (int v = -h; v <= h; ++v) {
    for (int u = -h; u <= h; ++u) {
      sum += side_pixel_cost(side, costs, clamp_int(cx + u, 0, side.ref.width - 1),
                             clamp_int(cy + v, 0, side.ref.height - 1), d);
    }
  }
  return sum;
}

std::uint32_t naive_aggregated_cost(const MatchSide& side, const CostTables& costs, int subwindow,
                                    int best_k, int x, int y, int d) {
  std::vector<std::uint32_t> nb;
  for (int j = 0; j < 8; ++j) {
    nb.push_back(naive_subwindow_sum(side, costs, subwindow, x + subwindow * kNeighbourDx[j],
                                     y + subwindow * kNeighbourDy[j], d));
  }
  std::sort(nb.begin(), nb.end());
  std::uint32_t total = naive_subwindow_sum(side, costs, subwindow, x, y, d);
  for (int i = 0; i < best_k; ++i) total += nb[i];
  return total;
}

AdaptiveWindowMatcher::AdaptiveWindowMatcher() = default;
AdaptiveWindowMatcher::~AdaptiveWindowMatcher() = default;
AdaptiveWindowMatcher::AdaptiveWindowMatcher(AdaptiveWindowMatcher&&) noexcept = default;
AdaptiveWindowMatcher& AdaptiveWindowMatcher::operator=(AdaptiveWindowMatcher&&) noexcept = default;

std::vector<int> AdaptiveWindowMatcher::split_rows(int parts) const {
  const int h = plans_[0].height();
  parts = std::max(1, std::min(parts, h));
  long long total = 0;
  for (int y = 0; y < h; ++y) total += plans_[0].row_work(y) + plans_[1].row_work(y);
  std::vector<int> bounds{0};
  long long acc = 0;
  for (int y = 0; y + 1 < h && static_cast<int>(bounds.size()) < parts; ++y) {
    acc += plans_[0].row_work(y) + plans_[1].row_work(y);
    // A boundary after row y once this part holds its share of the work.
    if (acc * parts >= total * static_cast<long long>(bounds.size())) bounds.push_back(y + 1);
  }
  bounds.push_back(h);
  return bounds;
}

void AdaptiveWindowMatcher::match(const ViewMatch (&views)[2], const CostTables& costs,
                                  const LevelMatchOptions& o, ThreadPool* pool) {
  const int w = views[0].side.ref.width, h = views[0].side.ref.height;
  if (views[0].side.direction != -1 || views[1].side.direction != +1 ||
      views[1].side.ref.width != w || views[1].side.ref.height != h) {
    throw std::logic_error("AdaptiveWindowMatcher::match: views must be left, then right");
  }
  for_rows(pool, 2, [&](int v0, int v1) {
    for (int v = v0; v < v1; ++v) {
      views[v].disparity->ensure_size(w, h);
      if (views[v].q4) views[v].q4->ensure_size(w, h);
      if (views[v].cost_ratio) views[v].cost_ratio->ensure_size(w, h);
      if (views[v].confidence) views[v].confidence->ensure_size(w, h);
      plans_[v].build(*views[v].ranges, o);
    }
  });
  // Pixel costs are stored in 8 bits and sub-window sums in 16 (s*s*255 fits); A in 16 bits
  // where (1 + k) sub-window sums of the largest pixel cost fit, else in 32.
  const std::uint32_t pc_max = max_pixel_cost(costs);
  if (pc_max > 255) throw std::logic_error("pixel costs above 255 are not supported");
  const std::uint64_t a_max =
      static_cast<std::uint64_t>(1 + o.best_k) * o.subwindow * o.subwindow * pc_max;
  const bool narrow = a_max < 0xFFFF;
  const int s = o.subwindow, half = s / 2;

  // Two row bands per thread: a thread that another process holds up leaves its second band to
  // the others (each band boundary recomputes s + s/2 rows of costs and sums, a few per cent).
  const std::vector<int> bounds = split_rows(pool ? 2 * static_cast<int>(pool->size()) : 1);
  const int parts = static_cast<int>(bounds.size()) - 1;
  if (static_cast<int>(parts_.size()) < parts) parts_.resize(static_cast<std::size_t>(parts));
  std::atomic<long long> evaluated{0};
  for_rows(pool, parts, [&](int p0, int p1) {
    for (int p = p0; p < p1; ++p) {
      Part& part = parts_[static_cast<std::size_t>(p)];
      part.pixel_costs.start(views[0].side, costs);
      for (int v = 0; v < 2; ++v) part.sums[v].start(plans_[v], o.disparities);
      RowMatcher rows[2] = {RowMatcher(views[0], o, plans_[0], part),
                            RowMatcher(views[1], o, plans_[1], part)};
      const int y0 = bounds[static_cast<std::size_t>(p)];
      const int y1 = bounds[static_cast<std::size_t>(p) + 1];
      // Rows in order: the sums of rows up to y + s, from the costs of rows up to y + s + s/2.
      int next_sum = y0 - s, next_cost = std::max(0, y0 - s - half);
      const int last_sum = y1 - 1 + s;
      long long local = 0;
      for (int y = y0; y < y1; ++y) {
        for (; next_sum <= std::min(y + s, last_sum); ++next_sum) {
          const int needed = clamp_int(next_sum + half, 0, h - 1);
          for (; next_cost <= needed; ++next_cost) {
            part.pixel_costs.compute_row(next_cost, part.sums[0], part.sums[1]);
          }
          part.sums[0].compute_sums(next_sum);
          part.sums[1].compute_sums(next_sum);
        }
        for (int v = 0; v < 2; ++v) {
          std::int16_t* d_row = views[v].disparity->row(y);
          std::uint16_t* q4_row = views[v].q4 ? views[v].q4->row(y) : nullptr;
          std::uint32_t* cost_row = views[v].cost_ratio ? views[v].cost_ratio->row(y) : nullptr;
          std::uint8_t* c_row = views[v].confidence ? views[v].confidence->row(y) : nullptr;
          if (narrow && o.best_k == 4) {
            local += rows[v].match_row<std::uint16_t, true>(part.sums[v], y, d_row, q4_row, c_row,
                                                            cost_row);
          } else if (narrow) {
            local += rows[v].match_row<std::uint16_t, false>(part.sums[v], y, d_row, q4_row, c_row,
                                                             cost_row);
          } else {
            local += rows[v].match_row<std::uint32_t, false>(part.sums[v], y, d_row, q4_row, c_row,
                                                             cost_row);
          }
        }
      }
      evaluated += local;
    }
  });
  candidates_ = evaluated.load();
}

}  // namespace stereod
