// stereod-bench matcher-work: how much work the adaptive-window matcher's candidate ranges ask
// for at each level, and what the CUDA engine's tile design computes for them (issue 11's floor
// and prediction, docs/PERFORMANCE.md). No GPU is needed: the ranges come from the CPU engine,
// which the CUDA engine equals bit for bit.
//
// Per level and view, on the benchmark pair of `stereod-bench speed` (background off):
// - candidates: the disparities the pixels try (their ranges, within the image);
// - needs: the costs the winners read (candidates, and at the finest level one more on each side
//   for the parabola);
// - the tile design (cuda/kernels/match_window.cu, geometry given by the options): work items
//   (a tile, or one segment of a tile whose candidates span more than a segment), rounds of four
//   disparities, cell-rounds (a cell of the tile and its 4-pixel halo computed for one round) and
//   the pixel costs they compute (4 per cell-round);
// - the exact floor of pixel costs for a view: the cells (x, y, d) some pixel within 4 rows and
//   columns needs at d (the adaptive window's 9 sub-windows of 3 x 3 reach 4 pixels around it),
//   each computed once;
// - shared by both views: the right view's cost at (x, d) is the left view's at (x + d, d) (the
//   same two pixels), so one volume in the left view's coordinates serves both; so is its
//   aggregated cost (the same windows over the same cells), apart from the 4 columns at the image's
//   sides where the windows' reads are clamped: the L+R row's "needs" counts the aggregations one
//   such volume evaluates (each needed (x, y, d) of the left view's coordinates once);
// - at the finest level, other designs on the same tiles: each cell's exact interval of needs, a
//   row of cells taking its cells' union, the left view's tiles computing both views' costs; and
//   without tiles, one banded volume for both views (each cell once, for the hull of the needs
//   within 4 pixels of it) with the widths of its bands.
// The reach of 4 pixels is the default window's (3 x 3 sub-windows at +-3, match_window.cu);
// other `subwindow` settings run the generic matcher, which this does not model.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench.hpp"
#include "kernels/shared_finest.cuh"
#include "middlebury.hpp"
#include "plane_scenes.hpp"
#include "stereo/cross_check.hpp"
#include "stereo/pixel_ops.hpp"
#include "stereo/search_range.hpp"

namespace stereod::bench {
namespace {

constexpr int kHalo = 4;  // sub-window centres at +-3, each sub-window +-1
constexpr int kRound = 4;
constexpr int kEmptyLo = 1 << 20, kEmptyHi = -(1 << 20);

struct Interval {
  int lo = kEmptyLo, hi = kEmptyHi;
  bool empty() const { return lo > hi; }
  void add(int l, int h) {
    if (l > h) return;
    lo = std::min(lo, l);
    hi = std::max(hi, h);
  }
  void add(const Interval& o) { add(o.lo, o.hi); }
};

using ViewRanges = LevelCandidates;

struct TileWork {
  long long items = 0, rounds = 0, cell_rounds = 0, output_rounds = 0;
};

// The costs a pixel whose candidates are clo .. chi needs: them, widened by `pad` (the parabola's
// neighbours at the finest level), within 0 .. nd - 1; empty without candidates.
Interval need_interval(int clo, int chi, int pad, int nd) {
  Interval n;
  if (clo <= chi) n.add(std::max(0, clo - pad), std::min(nd - 1, chi + pad));
  return n;
}

// Pixel i's needs in view r.
Interval need_of(const ViewRanges& r, std::size_t i, int pad) {
  return need_interval(r.lo[i], r.hi[i], pad, r.nd);
}

// Per cell row (or column) of a tile and its halo: the union of the needs of the output rows
// (columns) within 4 of it, as match_window.cu's union_within takes them.
void cells_union(const std::vector<Interval>& outputs, std::vector<Interval>& cells) {
  const int n = static_cast<int>(outputs.size());
  for (int c = 0; c < static_cast<int>(cells.size()); ++c) {
    Interval& u = cells[static_cast<std::size_t>(c)];
    u = Interval{};
    for (int j = std::max(0, c - 2 * kHalo); j <= std::min(n - 1, c); ++j)
      u.add(outputs[static_cast<std::size_t>(j)]);
  }
}

// The cells of a tile computed in the round of d0 .. d0 + 3: those whose row's and column's
// intervals, crossed, meet it (match_window.cu's cell_rounds).
long long crossed_cells(const std::vector<Interval>& cell_rows,
                        const std::vector<Interval>& cell_cols, int d0) {
  long long n = 0;
  for (const Interval& a : cell_rows)
    for (const Interval& b : cell_cols) {
      const int first = std::max(a.lo, b.lo) - (kRound - 1), last = std::min(a.hi, b.hi);
      n += first <= d0 && d0 <= last;
    }
  return n;
}

// The rounds of four from `base` on that meet lo .. hi (lo >= base, lo <= hi).
long long rounds_meeting(int lo, int hi, int base) {
  return (hi - base) / kRound - (lo - base) / kRound + 1;
}

// The tile design's work for one view (match_window.cu's rules: the tile's candidate union split
// into segments of `segment`, each pixel's needs in the segment, the cells' row and column unions
// of the needs of the outputs within 4, rounds of four from the item's first need).
TileWork tile_work(const ViewRanges& r, bool finest, int tile_w, int tile_h, int segment) {
  TileWork out;
  const int pad = finest ? 1 : 0;
  const int cw = tile_w + 2 * kHalo, ch = tile_h + 2 * kHalo;
  std::vector<Interval> rows(static_cast<std::size_t>(tile_h)),
      cols(static_cast<std::size_t>(tile_w));
  std::vector<Interval> cell_rows(static_cast<std::size_t>(ch)),
      cell_cols(static_cast<std::size_t>(cw));
  std::vector<Interval> need(static_cast<std::size_t>(tile_w * tile_h));
  for (int y0 = 0; y0 < r.h; y0 += tile_h) {
    for (int x0 = 0; x0 < r.w; x0 += tile_w) {
      Interval tile;
      for (int y = y0; y < std::min(r.h, y0 + tile_h); ++y)
        for (int x = x0; x < std::min(r.w, x0 + tile_w); ++x)
          tile.add(r.lo[static_cast<std::size_t>(y) * r.w + x],
                   r.hi[static_cast<std::size_t>(y) * r.w + x]);
      if (tile.empty()) continue;
      // The finest level's rule (piece_length): segments of `segment`. The coarser levels' pieces
      // and the coarsest level's shorter segments (segment_length) are not modelled, so their
      // items and rounds are approximate; their cells and costs follow the same rules.
      const int len = segment;
      const int segments = (tile.hi - tile.lo) / len + 1;
      for (int seg = 0; seg < segments; ++seg) {
        const int c0 = tile.lo + seg * len, c1 = std::min(tile.hi, c0 + len - 1);
        std::fill(rows.begin(), rows.end(), Interval{});
        std::fill(cols.begin(), cols.end(), Interval{});
        Interval item;
        for (int ty = 0; ty < tile_h; ++ty) {
          for (int tx = 0; tx < tile_w; ++tx) {
            Interval& n = need[static_cast<std::size_t>(ty * tile_w + tx)];
            n = Interval{};
            const int x = x0 + tx, y = y0 + ty;
            if (x >= r.w || y >= r.h) continue;
            const std::size_t i = static_cast<std::size_t>(y) * r.w + x;
            n = need_interval(std::max(r.lo[i], c0), std::min(r.hi[i], c1), pad, r.nd);
            if (n.empty()) continue;
            rows[static_cast<std::size_t>(ty)].add(n);
            cols[static_cast<std::size_t>(tx)].add(n);
            item.add(n);
          }
        }
        ++out.items;
        if (item.empty()) continue;
        cells_union(rows, cell_rows);
        cells_union(cols, cell_cols);
        for (int d0 = item.lo; d0 <= item.hi; d0 += kRound) {
          ++out.rounds;
          out.cell_rounds += crossed_cells(cell_rows, cell_cols, d0);
          for (const Interval& n : need) out.output_rounds += n.lo <= d0 + kRound - 1 && n.hi >= d0;
        }
      }
    }
  }
  return out;
}

// Cell-rounds of a tile design over one view's tiles, without segments (a tile's whole union in
// rounds of four), where the cells serve the needs of `own` and, when `mapped` is given, also the
// other view's: its pixel x at d needs the cell of this view's x + d (the right view mapped into
// the left's coordinates), so one tile computes the costs both views read there.
long long union_cell_rounds(const ViewRanges& own, const ViewRanges* mapped, bool finest,
                            int tile_w, int tile_h) {
  const int pad = finest ? 1 : 0;
  const int cw = tile_w + 2 * kHalo, ch = tile_h + 2 * kHalo;
  long long cell_rounds = 0;
  std::vector<Interval> rows(static_cast<std::size_t>(tile_h)),
      cols(static_cast<std::size_t>(tile_w));
  std::vector<Interval> cell_rows(static_cast<std::size_t>(ch)),
      cell_cols(static_cast<std::size_t>(cw));
  for (int y0 = 0; y0 < own.h; y0 += tile_h) {
    for (int x0 = 0; x0 < own.w; x0 += tile_w) {
      std::fill(rows.begin(), rows.end(), Interval{});
      std::fill(cols.begin(), cols.end(), Interval{});
      Interval tile;
      for (int ty = 0; ty < tile_h && y0 + ty < own.h; ++ty) {
        const int y = y0 + ty;
        for (int tx = 0; tx < tile_w && x0 + tx < own.w; ++tx) {
          const Interval n = need_of(own, static_cast<std::size_t>(y) * own.w + x0 + tx, pad);
          rows[static_cast<std::size_t>(ty)].add(n);
          cols[static_cast<std::size_t>(tx)].add(n);
          tile.add(n);
        }
        if (!mapped) continue;
        // The other view's pixels x whose x + d lands in the tile for some needed d.
        for (int x = std::max(0, x0 - own.nd - pad); x < std::min(own.w, x0 + tile_w); ++x) {
          const Interval n = need_of(*mapped, static_cast<std::size_t>(y) * own.w + x, pad);
          if (n.empty()) continue;
          const int d_lo = std::max(n.lo, x0 - x), d_hi = std::min(n.hi, x0 + tile_w - 1 - x);
          for (int d = d_lo; d <= d_hi; ++d) {
            rows[static_cast<std::size_t>(ty)].add(d, d);
            cols[static_cast<std::size_t>(x + d - x0)].add(d, d);
            tile.add(d, d);
          }
        }
      }
      if (tile.empty()) continue;
      cells_union(rows, cell_rows);
      cells_union(cols, cell_cols);
      for (int d0 = tile.lo; d0 <= tile.hi; d0 += kRound)
        cell_rounds += crossed_cells(cell_rows, cell_cols, d0);
    }
  }
  return cell_rounds;
}

// Per pixel of `own`'s coordinates: the hull of the needs there (`need`: its own pixels' and, with
// `mapped`, the other view's mapped in: the right view's pixel x at d is the left's x + d), and
// each cell's hull of the needs within 4 pixels of it (`cell`: their 9 x 9 min and max, taken
// separably and clamped at the borders): what a cell must be computed for.
struct NeedHulls {
  std::vector<int> need_lo, need_hi, cell_lo, cell_hi;
};
NeedHulls need_hulls(const ViewRanges& own, const ViewRanges* mapped, bool finest) {
  const int pad = finest ? 1 : 0;
  const int w = own.w, h = own.h;
  std::vector<int> lo(static_cast<std::size_t>(w) * h, kEmptyLo),
      hi(static_cast<std::size_t>(w) * h, kEmptyHi);
  auto add = [&](int x, int y, const Interval& n) {
    if (x < 0 || x >= w || n.empty()) return;
    const std::size_t i = static_cast<std::size_t>(y) * w + x;
    lo[i] = std::min(lo[i], n.lo);
    hi[i] = std::max(hi[i], n.hi);
  };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const std::size_t i = static_cast<std::size_t>(y) * w + x;
      add(x, y, need_of(own, i, pad));
      if (!mapped) continue;
      const Interval n = need_of(*mapped, i, pad);
      for (int d = n.lo; d <= n.hi; ++d) add(x + d, y, Interval{d, d});
    }
  NeedHulls out;
  out.need_lo = lo;
  out.need_hi = hi;
  auto spread = [&](bool along_x) {
    std::vector<int> l2(lo.size()), h2(hi.size());
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        int l = kEmptyLo, u = kEmptyHi;
        for (int k = -kHalo; k <= kHalo; ++k) {
          const int xx = along_x ? std::clamp(x + k, 0, w - 1) : x;
          const int yy = along_x ? y : std::clamp(y + k, 0, h - 1);
          const std::size_t j = static_cast<std::size_t>(yy) * w + xx;
          l = std::min(l, lo[j]);
          u = std::max(u, hi[j]);
        }
        l2[static_cast<std::size_t>(y) * w + x] = l;
        h2[static_cast<std::size_t>(y) * w + x] = u;
      }
    lo.swap(l2);
    hi.swap(h2);
  };
  spread(true);
  spread(false);
  out.cell_lo = std::move(lo);
  out.cell_hi = std::move(hi);
  return out;
}

// Cell-rounds of a tile design in which each cell is computed exactly for the interval of the
// needs within 4 pixels of it (need_hulls; the fourth session's variant), in rounds of four from
// the tile's first need: for one view, or (with `mapped`) for the left view's tiles serving both
// views. With `per_row`, a row of cells takes the rounds of its cells' union (one warp on a row
// runs its lanes together).
long long exact_cell_rounds(const ViewRanges& own, const ViewRanges* mapped, bool finest,
                            int tile_w, int tile_h, bool per_row) {
  const int w = own.w, h = own.h;
  const NeedHulls hulls = need_hulls(own, mapped, finest);
  const std::vector<int>&need_lo = hulls.need_lo, &need_hi = hulls.need_hi;
  const std::vector<int>&lo = hulls.cell_lo, &hi = hulls.cell_hi;
  long long cell_rounds = 0;
  for (int y0 = 0; y0 < h; y0 += tile_h)
    for (int x0 = 0; x0 < w; x0 += tile_w) {
      Interval tile;
      for (int y = y0; y < std::min(h, y0 + tile_h); ++y)
        for (int x = x0; x < std::min(w, x0 + tile_w); ++x) {
          const std::size_t i = static_cast<std::size_t>(y) * w + x;
          tile.add(need_lo[i], need_hi[i]);
        }
      if (tile.empty()) continue;
      for (int cy = y0 - kHalo; cy < y0 + tile_h + kHalo; ++cy) {
        Interval row;  // the union of the row's cells (lanes of a warp take one round together)
        long long own_rounds = 0;
        for (int cx = x0 - kHalo; cx < x0 + tile_w + kHalo; ++cx) {
          const std::size_t j =
              static_cast<std::size_t>(std::clamp(cy, 0, h - 1)) * w + std::clamp(cx, 0, w - 1);
          const int l = std::max(lo[j], tile.lo), u = std::min(hi[j], tile.hi);
          if (l > u) continue;
          own_rounds += rounds_meeting(l, u, tile.lo);
          row.add(l, u);
        }
        if (!per_row)
          cell_rounds += own_rounds;
        else if (!row.empty())
          cell_rounds += (tile_w + 2 * kHalo) * rounds_meeting(row.lo, row.hi, tile.lo);
      }
    }
  return cell_rounds;
}

// One banded volume for both views, without tiles (a design not built; docs/PERFORMANCE.md): each
// cell of the left view's coordinates computed once, for the hull of the needs within 4 pixels of
// it, both views' mapped in (need_hulls), and each output aggregated once for the hull of the
// needs at it. `bands_within[k]`: the cells whose band is at most 8 << k wide (8, 16, 32), for a
// layout of fixed-width bands.
struct BandedVolume {
  long long pixel_costs = 0, aggregations = 0, cells = 0;
  long long bands_within[3] = {0, 0, 0};
  int widest = 0;
};
BandedVolume banded_volume(const ViewRanges& left, const ViewRanges& right) {
  const NeedHulls hulls = need_hulls(left, &right, true);
  BandedVolume b;
  for (std::size_t i = 0; i < hulls.cell_lo.size(); ++i) {
    if (hulls.need_lo[i] <= hulls.need_hi[i])
      b.aggregations += hulls.need_hi[i] - hulls.need_lo[i] + 1;
    if (hulls.cell_lo[i] > hulls.cell_hi[i]) continue;
    const int width = hulls.cell_hi[i] - hulls.cell_lo[i] + 1;
    b.pixel_costs += width;
    ++b.cells;
    b.widest = std::max(b.widest, width);
    for (int k = 0; k < 3; ++k) b.bands_within[k] += width <= (8 << k) ? 1 : 0;
  }
  return b;
}

// Bit planes over the disparities, one word per 64 of them, per pixel.
struct NeedVolume {
  int w = 0, h = 0, words = 0;
  std::vector<std::uint64_t> bits;
  NeedVolume(int w_, int h_, int nd) : w(w_), h(h_), words((nd + 63) / 64) {
    bits.assign(static_cast<std::size_t>(w) * h * words, 0);
  }
  std::uint64_t* at(int x, int y) { return &bits[(static_cast<std::size_t>(y) * w + x) * words]; }
  void mark(int x, int y, int d) {
    if (x < 0 || x >= w) return;
    at(x, y)[d >> 6] |= 1ull << (d & 63);
  }
  // Every set cell spread to the cells within `r` columns and rows (clamped to the image, as
  // the matcher's windows clamp their reads).
  void dilate(int r) {
    std::vector<std::uint64_t> tmp(bits.size(), 0);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        for (int k = -r; k <= r; ++k) {
          const int xx = std::clamp(x + k, 0, w - 1);
          for (int q = 0; q < words; ++q)
            tmp[(static_cast<std::size_t>(y) * w + xx) * words + q] |= at(x, y)[q];
        }
    std::fill(bits.begin(), bits.end(), 0);
    for (int y = 0; y < h; ++y)
      for (int k = -r; k <= r; ++k) {
        const int yy = std::clamp(y + k, 0, h - 1);
        for (std::size_t q = 0; q < static_cast<std::size_t>(w) * words; ++q)
          bits[static_cast<std::size_t>(yy) * w * words + q] |=
              tmp[static_cast<std::size_t>(y) * w * words + q];
      }
  }
  long long count() const {
    long long n = 0;
    for (std::uint64_t b : bits) n += __builtin_popcountll(b);
    return n;
  }
};

// The needs of view `v` marked into `vol` in the left view's coordinates (the right view's pixel
// x at d is the left view's x + d).
void mark_needs(const ViewRanges& r, int v, bool finest, NeedVolume& vol) {
  const int pad = finest ? 1 : 0;
  for (int y = 0; y < r.h; ++y)
    for (int x = 0; x < r.w; ++x) {
      const std::size_t i = static_cast<std::size_t>(y) * r.w + x;
      const Interval n = need_of(r, i, pad);
      for (int d = n.lo; d <= n.hi; ++d) vol.mark(v == 0 ? x : x + d, y, d);
    }
}

}  // namespace

LevelCandidates level_candidates(const CpuStereoMatcher& m, const StereoParams& sp, int s, int v) {
  const Gray8& g = m.level_gray(s, 0);
  const int w = g.width(), h = g.height(), levels = effective_levels(sp);
  LevelCandidates r;
  r.w = w, r.h = h, r.nd = level_disparities(sp.max_disparity, s);
  SearchRanges ranges;
  if (s == levels - 1) {
    full_search_ranges(w, h, {}, r.nd, ranges);
  } else {
    // The parents, cross-checked as the matcher checks them (match_level).
    Image<std::int16_t> checked[2];
    if (sp.cross_check) {
      cross_check(m.level_disparity(s + 1, 0), m.level_disparity(s + 1, 1),
                  sp.cross_check_tolerance, checked[0], checked[1]);
    } else {
      checked[0] = m.level_disparity(s + 1, 0);
      checked[1] = m.level_disparity(s + 1, 1);
    }
    parent_search_ranges(checked[v], w, h, {}, sp.parent_radius, r.nd, ranges);
  }
  r.lo.resize(static_cast<std::size_t>(w) * h);
  r.hi.resize(r.lo.size());
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const std::size_t i = static_cast<std::size_t>(y) * w + x;
      r.lo[i] = ranges.lo(x, y);
      r.hi[i] = std::min<int>(ranges.hi(x, y), v == 0 ? x : w - 1 - x);
    }
  return r;
}

bool load_studied_frame(const char* command, const CommonOptions& common, int width, int height,
                        int max_disparity, const std::string& scene_dir, StudiedFrame& out) {
  out.params = resolve_stereo_only(common, false);
  out.params.stereo.max_disparity = max_disparity;
  out.source = "the benchmark pair of `speed` (seed 11)";
  if (!scene_dir.empty()) {
    out.scene = load_scene_option(command, scene_dir);
    if (!out.scene) return false;
    out.params.stereo.max_disparity = out.scene->files.max_disparity;
    out.source = "scene " + out.scene->files.name;
    out.frame.left = out.scene->left.view();
    out.frame.right = out.scene->right.view();
  } else {
    out.pair = make_benchmark_pair(width, height, max_disparity, 11);
    out.frame.left = out.pair.left.view();
    out.frame.right = out.pair.right.view();
  }
  return true;
}

const CpuStereoMatcher& StudiedFrame::match(unsigned threads) {
  cpu = std::make_unique<CpuPairProcessor>(params.stereo, params.background, threads);
  PairOutput out;
  cpu->process(frame, out);
  return cpu->matcher();
}

int run_matcher_work(const CommonOptions& common, const MatcherWorkOptions& o) {
  StudiedFrame f;
  if (!load_studied_frame("matcher-work", common, o.width, o.height, o.max_disparity, o.scene, f))
    return 2;
  const StereoParams& sp = f.params.stereo;
  // The model is match_window.cu's: the window alone, sub-window 3, no uniqueness test.
  if (sp.aggregation != Aggregation::kWindow || sp.subwindow != 3 || sp.uniqueness != 0) {
    std::fprintf(stderr,
                 "stereod-bench matcher-work: models the default window matcher only (aggregation "
                 "window, subwindow 3, uniqueness 0); got aggregation %s, subwindow %d, "
                 "uniqueness %d\n",
                 std::string(to_string(sp.aggregation)).c_str(), sp.subwindow, sp.uniqueness);
    return 2;
  }
  const CpuStereoMatcher& m = f.match(common.threads);
  const PairFrame& pf = f.frame;
  const std::string& source = f.source;
  const int levels = effective_levels(sp);
  std::printf(
      "matcher work, %dx%d D=%d, %d levels, %s; tile %dx%d, segment %d at the finest level\n",
      pf.left.width, pf.left.height, sp.max_disparity, levels, source.c_str(), o.tile_w, o.tile_h,
      o.segment);
  std::printf("%5s %4s %10s %11s %11s | %7s %7s %11s %11s %11s | %11s %11s\n", "level", "view",
              "pixels", "candidates", "needs", "items", "rounds", "cell-rounds", "pixel costs",
              "out-rounds", "exact costs", "shared");
  // Level 0's totals, for the summary; and the model's own consistency: the design computes every
  // cost some pixel needs (so never fewer than the floor), and every output visits its needs.
  long long design0 = 0, exact0 = 0, shared0 = 0, needs0 = 0, output0 = 0, shared_needs0 = 0;
  BandedVolume banded0;
  bool consistent = true;
  for (int s = levels - 1; s >= 0; --s) {
    const Gray8& g = m.level_gray(s, 0);
    const int w = g.width(), h = g.height(), nd = level_disparities(sp.max_disparity, s);
    const bool finest = s == 0;
    const ViewRanges r[2] = {level_candidates(m, sp, s, 0), level_candidates(m, sp, s, 1)};
    NeedVolume shared(w, h, nd);
    for (int v = 0; v < 2; ++v) {
      long long candidates = 0, needs = 0;
      const int pad = finest ? 1 : 0;
      for (std::size_t i = 0; i < r[v].lo.size(); ++i) {
        if (r[v].lo[i] > r[v].hi[i]) continue;
        const Interval n = need_of(r[v], i, pad);
        candidates += r[v].hi[i] - r[v].lo[i] + 1;
        needs += n.hi - n.lo + 1;
      }
      const TileWork t = tile_work(r[v], finest, o.tile_w, o.tile_h, o.segment);
      NeedVolume own(w, h, nd);
      mark_needs(r[v], 0, finest, own);  // in the view's own coordinates
      own.dilate(kHalo);
      mark_needs(r[v], v, finest, shared);
      const long long own_count = own.count();
      consistent =
          consistent && kRound * t.cell_rounds >= own_count && kRound * t.output_rounds >= needs;
      if (finest) {
        design0 += kRound * t.cell_rounds;
        exact0 += own_count;
        needs0 += needs;
        output0 += kRound * t.output_rounds;
      }
      std::printf("%5d %4s %10lld %11lld %11lld | %7lld %7.2f %11lld %11lld %11lld | %11lld %11s\n",
                  s, v == 0 ? "L" : "R", static_cast<long long>(w) * h, candidates, needs, t.items,
                  t.items ? double(t.rounds) / t.items : 0.0, t.cell_rounds, kRound * t.cell_rounds,
                  kRound * t.output_rounds, own_count, "");
    }
    // Before the dilation: the aggregations both views read; after it: the pixel costs they need.
    const long long shared_needs_count = shared.count();
    shared.dilate(kHalo);
    const long long shared_count = shared.count();
    std::printf("%5d %4s %10s %11s %11lld | %7s %7s %11s %11s %11s | %11s %11lld\n", s, "L+R", "",
                "", shared_needs_count, "", "", "", "", "", "", shared_count);
    if (!finest) continue;
    shared0 = shared_count;
    shared_needs0 = shared_needs_count;
    // Other designs' pixel costs at the finest level, on the same tiles (no segments): each
    // cell's exact interval (the 9 x 9 min / max of the needs around it) rather than its row's and
    // column's unions crossed; a row of cells taking its cells' union (one warp per row); the left
    // view's tiles computing the costs of both views.
    const long long apart = union_cell_rounds(r[0], nullptr, true, o.tile_w, o.tile_h) +
                            union_cell_rounds(r[1], nullptr, true, o.tile_w, o.tile_h);
    const long long together = union_cell_rounds(r[0], &r[1], true, o.tile_w, o.tile_h);
    const long long exact_apart =
        exact_cell_rounds(r[0], nullptr, true, o.tile_w, o.tile_h, false) +
        exact_cell_rounds(r[1], nullptr, true, o.tile_w, o.tile_h, false);
    const long long exact_together =
        exact_cell_rounds(r[0], &r[1], true, o.tile_w, o.tile_h, false);
    const long long row_apart = exact_cell_rounds(r[0], nullptr, true, o.tile_w, o.tile_h, true) +
                                exact_cell_rounds(r[1], nullptr, true, o.tile_w, o.tile_h, true);
    std::printf(
        "finest level, %dx%d tiles without segments, pixel costs (each view / the left "
        "view's tiles for both):\n",
        o.tile_w, o.tile_h);
    std::printf("  rows' and columns' unions crossed   %11lld / %11lld\n", kRound * apart,
                kRound * together);
    std::printf("  each cell's exact interval          %11lld / %11lld\n", kRound * exact_apart,
                kRound * exact_together);
    std::printf("  a row of cells takes their union    %11lld\n", kRound * row_apart);
    // The shared finest level as built (cuda/kernels/shared_finest.cuh): the left view's tiles
    // serve the shared right pixels only, the others keep right items of their own.
    ViewRanges served = r[1], residual = r[1];
    long long with_candidates = 0, shared_pixels = 0;
    for (std::size_t i = 0; i < r[1].lo.size(); ++i) {
      if (r[1].lo[i] > r[1].hi[i]) continue;
      ++with_candidates;
      const int x = static_cast<int>(i % static_cast<std::size_t>(w));
      const bool is_shared =
          cuda::shared_cands_of(r[1].lo[i], r[1].hi[i], x, w, nd) != cuda::kNotShared;
      ViewRanges& without = is_shared ? residual : served;
      without.lo[i] = 0;
      without.hi[i] = -1;
      shared_pixels += is_shared ? 1 : 0;
    }
    const long long as_built = union_cell_rounds(r[0], &served, true, o.tile_w, o.tile_h) +
                               union_cell_rounds(residual, nullptr, true, o.tile_w, o.tile_h);
    std::printf(
        "  as built: shared right pixels served (%.1f %% of those with candidates), the others "
        "apart  %11lld (%.2f of each view's)\n",
        with_candidates ? 100.0 * shared_pixels / with_candidates : 0.0, kRound * as_built,
        apart ? double(as_built) / apart : 0.0);
    banded0 = banded_volume(r[0], r[1]);
  }
  std::printf(
      "finest level, pixel costs: the tile design %lld, each view's floor %lld (%.2fx "
      "fewer), one volume for both views %lld (%.2fx fewer)\n",
      design0, exact0, exact0 ? double(design0) / exact0 : 0.0, shared0,
      shared0 ? double(design0) / shared0 : 0.0);
  std::printf(
      "finest level, aggregations: the tile design evaluates %lld, the two views need %lld, one "
      "volume for both views %lld (%.2fx fewer than the design)\n",
      output0, needs0, shared_needs0, shared_needs0 ? double(output0) / shared_needs0 : 0.0);
  if (banded0.cells > 0) {
    const double cells = static_cast<double>(banded0.cells);
    std::printf(
        "finest level, one banded volume for both views (each cell once, for the hull of the "
        "needs within 4 of it): pixel costs %lld (%.2fx fewer than the design), aggregations "
        "%lld (%.2fx fewer); bands at most 8 / 16 / 32 wide: %.1f / %.1f / %.1f %% of the cells, "
        "the widest %d\n",
        banded0.pixel_costs, banded0.pixel_costs ? double(design0) / banded0.pixel_costs : 0.0,
        banded0.aggregations, banded0.aggregations ? double(output0) / banded0.aggregations : 0.0,
        100.0 * banded0.bands_within[0] / cells, 100.0 * banded0.bands_within[1] / cells,
        100.0 * banded0.bands_within[2] / cells, banded0.widest);
  }
  // The bands hold every cell the one volume needs, and its aggregations.
  consistent =
      consistent && banded0.pixel_costs >= shared0 && banded0.aggregations >= shared_needs0;
  if (!consistent || shared0 > exact0 || shared_needs0 > needs0) {
    std::fprintf(stderr, "stereod-bench matcher-work: the work model is inconsistent\n");
    return 1;
  }
  return 0;
}

}  // namespace stereod::bench
