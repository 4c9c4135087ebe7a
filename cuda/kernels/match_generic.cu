// Stage: the adaptive-window matcher for every setting the window path does not cover (any odd
// sub-window size, any k, the uniqueness test), one block per 32 x 8 pixels of every pixel. Each
// pixel finds its own range (the rule in pixel_ops.hpp, reading the parents through the
// cross-check), then the block walks the union of its pixels' ranges one disparity at a time: the
// pixel costs of the tile and its halo, the s x s sub-window sums, and every pixel whose range
// holds d aggregates its 9 sub-windows. Simple and general; the defaults take match_window.cu
// instead, unless the confidence is asked for: it needs the runner-up cost, which this kernel keeps
// (the four lowest costs of each pixel, as for the uniqueness test).
#include "kernels/device_common.cuh"
#include "kernels/launch.cuh"
#include "kernels/stages.hpp"
#include "stereo/confidence.hpp"

namespace stereod::cuda {
namespace {

constexpr int kMaxSub = 9;
constexpr int kMaxHalo = kMaxSub + kMaxSub / 2;  // sub-window centres at +-s, each +-s/2 wide
constexpr int kGenTileW = kBlockW + 2 * kMaxHalo;
constexpr int kGenTileH = kBlockH + 2 * kMaxHalo;
constexpr std::uint32_t kNone = 0xFFFFFFFFu;

// One view at one level, in the names the kernel reads.
struct View {
  const std::uint8_t* ref_ad;
  const std::uint8_t* tgt_ad;
  const std::uint64_t* ref_census;
  const std::uint64_t* tgt_census;
  const std::uint8_t* ref_fg;
  const std::uint8_t* tgt_fg;
  const std::int16_t* parent_this;   // the coarser level's map of this view (null: coarsest)
  const std::int16_t* parent_other;  // and of the other view, for the cross-check
  std::int16_t* out_disp;
  std::uint16_t* out_q4;         // finest level: 16 d + subpixel offset
  std::uint8_t* out_confidence;  // finest level, left view, when asked for: confidence8
  int direction;
};

struct Params {
  int width, height, parent_width, parent_height, disparities;
  int subwindow, best_k, parent_radius, tolerance, uniqueness;
  bool cross_check, subpixel, refine_subpixel;
  const CostTables& tables;
};

__device__ __forceinline__ View view_of(const MemberArgs& a, int level, int view) {
  const LevelBuffers& lv = a.level[level];
  const int o = 1 - view;
  const bool coarsest = level + 1 >= a.levels;
  View v;
  v.ref_ad = lv.ad[view] ? lv.ad[view] : lv.gray[view];
  v.tgt_ad = lv.ad[o] ? lv.ad[o] : lv.gray[o];
  v.ref_census = lv.census[view];
  v.tgt_census = lv.census[o];
  v.ref_fg = a.modeling ? lv.mask[view] : nullptr;
  v.tgt_fg = a.modeling ? lv.mask[o] : nullptr;
  v.parent_this = coarsest ? nullptr : a.level[level + 1].disp[view];
  v.parent_other = coarsest ? nullptr : a.level[level + 1].disp[o];
  v.out_disp = lv.disp[view];
  v.out_q4 = level == 0 ? a.q4[view] : nullptr;
  v.out_confidence = level == 0 && view == 0 ? a.out_confidence : nullptr;
  v.direction = view == 0 ? -1 : 1;
  return v;
}

// `volume`: the semi-global pass's window (sgm_subwindow, sgm_best_k).
__device__ __forceinline__ Params params_of(const MemberArgs& a, int level, bool volume) {
  const LevelBuffers& lv = a.level[level];
  const bool coarsest = level + 1 >= a.levels;
  return Params{lv.width,
                lv.height,
                coarsest ? 0 : a.level[level + 1].width,
                coarsest ? 0 : a.level[level + 1].height,
                lv.disparities,
                volume ? sgm_subwindow(a.stereo) : a.stereo.subwindow,
                volume ? sgm_best_k(a.stereo) : a.stereo.best_k,
                a.stereo.parent_radius,
                a.stereo.cross_check_tolerance,
                a.stereo.uniqueness,
                a.stereo.cross_check,
                level == 0,
                a.stereo.subpixel,
                a.tables};
}

// This pixel's search range from the coarser level, reading the parents through the cross-check.
__device__ __forceinline__ void checked_parent_range(const Params& a, const View& v, int x, int y,
                                                     int& lo, int& hi) {
  const int pw = a.parent_width;
  parent_range(
      [&](int u, int row) {
        return static_cast<int>(checked_value(v.parent_this, v.parent_other, pw, u, row,
                                              v.direction, a.cross_check, a.tolerance));
      },
      pw, a.parent_height, x, y, a.parent_radius, a.disparities, lo, hi);
}

__device__ __forceinline__ void top4_insert(std::uint32_t (&v)[4], int (&d)[4], std::uint32_t a,
                                            int disp) {
  // Sorted ascending by value; an equal value goes after (the earlier, smaller d stays first).
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if (a < v[i]) {
      const std::uint32_t tv = v[i];
      const int td = d[i];
      v[i] = a;
      d[i] = disp;
      a = tv;
      disp = td;
    }
  }
}

// kRatio: also write the cost ratios (compiled apart, so that pairs without them run the code they
// ran before). At least one block per SM is all the bound asks: with the confidence's four lowest
// costs the kernel needs 96 registers, and without the second argument ptxas capped sm_87 at 80
// and spilled.
// kVolume: semi-global aggregation's volume pass. Each pixel's range is the one search_ranges
// wrote (the volume's layout follows it), and every candidate's A (kNoCost where it is not
// allowed) goes to the volume, with S zeroed for the paths; no winners.
template <bool kRatio, bool kVolume>
__global__ void __launch_bounds__(kBlockW* kBlockH, 1)
    match_generic_kernel(const BatchRecord* __restrict__ batch, int level) {
  after_previous_stage();
  __shared__ std::uint32_t pc[kGenTileH][kGenTileW];  // pixel costs of the tile and its halo
  __shared__ std::uint32_t hs[kGenTileH][kGenTileW];  // horizontal s-sums
  __shared__ std::uint32_t sw[kGenTileH][kGenTileW];  // s x s sub-window sums
  __shared__ std::uint8_t ad_table[256];
  __shared__ std::uint8_t census_table[65];
  __shared__ int tile_lo, tile_hi;

  const MemberArgs& args = *batch->member[blockIdx.z >> 1];
  const int view = blockIdx.z & 1;
  const View v = view_of(args, level, view);
  const Params a = params_of(args, level, kVolume);
  const int tid = threadIdx.y * kBlockW + threadIdx.x;
  const int x0 = blockIdx.x * kBlockW, y0 = blockIdx.y * kBlockH;
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  const int w = a.width, h = a.height, nd = a.disparities;
  const int s = a.subwindow, half = s / 2, halo = s + half;
  const int tw = kBlockW + 2 * halo, th = kBlockH + 2 * halo;

  for (int i = tid; i < 256; i += kBlockW * kBlockH) ad_table[i] = a.tables.ad[i];
  for (int i = tid; i < 65; i += kBlockW * kBlockH) census_table[i] = a.tables.census[i];
  if (tid == 0) {
    tile_lo = 1 << 30;
    tile_hi = -1;
  }
  __syncthreads();

  // This pixel's search range.
  const bool inside = x < w && y < h;
  bool matched = inside && (!v.ref_fg || v.ref_fg[y * w + x] != 0);
  int lo = 0, hi = nd - 1;
  std::uint32_t* cells = nullptr;  // kVolume: this pixel's C
  std::uint32_t* sums = nullptr;   // and S
  if (kVolume) {
    const LevelBuffers& lv = args.level[level];
    if (*lv.sgm_cells[view] > args.sgm_capacity) return;  // the frame fails (sgm_layout_total)
    lo = inside ? lv.lo[view][y * w + x] : 0;
    hi = inside ? lv.hi[view][y * w + x] : -1;
    matched = hi >= lo;
    if (matched) {
      const std::size_t at = std::size_t{lv.sgm_row[view][y]} + lv.sgm_rel[view][y * w + x];
      cells = args.sgm_cost[view] + at;
      sums = args.sgm_sum[view] + at;
    }
  } else if (matched && v.parent_this) {
    checked_parent_range(a, v, x, y, lo, hi);
  }
  // Candidates beyond the image edge are never allowed: no need to visit them.
  const int reach = v.direction < 0 ? x : w - 1 - x;
  const int pad = a.subpixel && !kVolume ? 1 : 0;
  if (matched) {
    const int need_lo = max(0, lo - pad);
    const int need_hi = min(min(nd - 1, hi + pad), reach);
    if (need_lo <= need_hi) {
      atomicMin(&tile_lo, need_lo);
      atomicMax(&tile_hi, need_hi);
    }
  }
  __syncthreads();
  const int dlo = tile_lo, dhi = tile_hi;

  std::uint32_t best = kNone, prev = kNone, cm = kNone, cp = kNone;
  int best_d = kNoDisparity;
  bool pending_cp = false;
  std::uint32_t top_v[4] = {kNone, kNone, kNone, kNone};
  int top_d[4] = {0, 0, 0, 0};

  const std::uint8_t* ref = v.ref_ad;
  const std::uint8_t* tgt = v.tgt_ad;
  const bool census = v.ref_census != nullptr;
  const std::uint32_t outside = a.tables.outside;

  for (int d = dlo; d <= dhi; ++d) {
    // Pixel costs over the tile and halo; coordinates clamp to the image like the CPU's box sums.
    for (int i = tid; i < tw * th; i += kBlockW * kBlockH) {
      const int r = i / tw, c = i - r * tw;
      const int qx = clamp_int(x0 - halo + c, 0, w - 1);
      const int qy = clamp_int(y0 - halo + r, 0, h - 1);
      const int tx = qx + v.direction * d;
      std::uint32_t cost = outside;
      if (tx >= 0 && tx < w) {
        const int a_val = ref[qy * w + qx], b_val = tgt[qy * w + tx];
        cost = ad_table[a_val > b_val ? a_val - b_val : b_val - a_val];
        if (census)
          cost += census_table[popcount64(v.ref_census[qy * w + qx] ^ v.tgt_census[qy * w + tx])];
      }
      pc[r][c] = cost;
    }
    __syncthreads();
    for (int i = tid; i < tw * th; i += kBlockW * kBlockH) {
      const int r = i / tw, c = i - r * tw;
      if (c < half || c >= tw - half) continue;
      std::uint32_t sum = 0;
      for (int u = -half; u <= half; ++u) sum += pc[r][c + u];
      hs[r][c] = sum;
    }
    __syncthreads();
    for (int i = tid; i < tw * th; i += kBlockW * kBlockH) {
      const int r = i / tw, c = i - r * tw;
      if (r < half || r >= th - half || c < half || c >= tw - half) continue;
      std::uint32_t sum = 0;
      for (int u = -half; u <= half; ++u) sum += hs[r + u][c];
      sw[r][c] = sum;
    }
    __syncthreads();

    if (matched) {
      const bool in_range = d >= lo && d <= hi;
      const bool needed = in_range || (!kVolume && a.subpixel && d >= lo - 1 && d <= hi + 1);
      const int tx = x + v.direction * d;
      const bool allowed = tx >= 0 && tx < w && (!v.tgt_fg || v.tgt_fg[y * w + tx] != 0);
      std::uint32_t agg = kNone;
      if (needed && allowed) {
        const int r = halo + threadIdx.y, c = halo + threadIdx.x;
        std::uint32_t nb[8] = {sw[r - s][c - s], sw[r - s][c],    sw[r - s][c + s],
                               sw[r][c - s],     sw[r][c + s],    sw[r + s][c - s],
                               sw[r + s][c],     sw[r + s][c + s]};
        agg = sw[r][c] + sum_smallest_k_of_8(nb, a.best_k);
      }
      if (kVolume) {
        if (in_range) {
          cells[d - lo] = allowed ? agg : kNoCost;
          sums[d - lo] = 0;
        }
      } else if (pending_cp) {
        cp = agg;
        pending_cp = false;
      }
      if (!kVolume && in_range && allowed) {
        if (agg < best) {
          best = agg;
          best_d = d;
          cm = prev;
          cp = kNone;  // A(d + 1) arrives with the next d, if that one is allowed at all
          pending_cp = true;
        }
        if (a.uniqueness > 0 || v.out_confidence) top4_insert(top_v, top_d, agg, d);
      }
      prev = agg;
    }
    __syncthreads();  // the tile is rewritten for the next d
  }

  if (!inside) return;
  if (kVolume) {
    // Candidates past the image edge, which the tile's walk did not visit: never allowed.
    for (int d = max(lo, reach + 1); d <= hi; ++d) {
      cells[d - lo] = kNoCost;
      sums[d - lo] = 0;
    }
    return;
  }
  // The runner-up: the smallest cost at least 2 from the winner. The winner and its two
  // neighbours are at most three of the four lowest, so the four hold it when there is one.
  std::uint32_t second = kNone;
  if (best_d != kNoDisparity && (a.uniqueness > 0 || v.out_confidence)) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if (top_v[i] == kNone) break;
      const int dd = top_d[i] - best_d;
      if (dd <= 1 && dd >= -1) continue;
      second = top_v[i];
      break;
    }
  }
  if (best_d != kNoDisparity && a.uniqueness > 0 && second != kNone &&
      rival_makes_ambiguous(second, best, a.uniqueness)) {
    best_d = kNoDisparity;
  }
  const int i = y * w + x;
  v.out_disp[i] = static_cast<std::int16_t>(best_d);
  if (v.out_confidence) {
    v.out_confidence[i] =
        best_d == kNoDisparity ? std::uint8_t{0} : match_confidence(best, second, second != kNone);
  }
  if (v.out_q4) {
    const WinnerOutputs o = winner_outputs(best_d, nd, best, cm, cp, kNone, a.refine_subpixel);
    v.out_q4[i] = o.q4;
    // Read late from the batch record (a kernel parameter): nothing of it stays live in the loop.
    std::uint32_t* out_ratio =
        kRatio && view == 0 ? batch->member[blockIdx.z >> 1]->out_cost_ratio : nullptr;
    if (out_ratio) out_ratio[i] = o.ratio;
  }
}

}  // namespace

void launch_match_generic(const BatchShape& shape, const BatchRecord* batch, int level,
                          cudaStream_t stream, bool volume) {
  const dim3 grid =
      member_grid(shape.level_width[level], shape.level_height[level], 2 * shape.count);
  const auto kernel = volume                           ? match_generic_kernel<false, true>
                      : shape.cost_ratio && level == 0 ? match_generic_kernel<true, false>
                                                       : match_generic_kernel<false, false>;
  launch_stage("match_generic_kernel", shape.chained, kernel, grid, dim3(kBlockW, kBlockH), 0,
               stream, batch, level);
}

}  // namespace stereod::cuda
