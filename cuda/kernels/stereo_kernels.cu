// The stereo kernels. Each computes exactly what its CPU stage in pipeline/stereo/ computes (the
// per-pixel arithmetic is the same source: pixel_ops.hpp); gpu_tests compare them bit for bit.
#include "cuda_check.hpp"
#include "kernels/stereo_kernels.hpp"
#include "rectify/remap.hpp"
#include "stereo/pixel_ops.hpp"

namespace stereod::cuda {
namespace {

constexpr int kBlockW = 32;
constexpr int kBlockH = 8;
constexpr std::uint32_t kNone = 0xFFFFFFFFu;

dim3 grid_for(int w, int h, int z) {
  return dim3(static_cast<unsigned>((w + kBlockW - 1) / kBlockW),
              static_cast<unsigned>((h + kBlockH - 1) / kBlockH), static_cast<unsigned>(z));
}

// ---------------------------------------------------------------------------------------------
// Preprocessing: census, mean removal, and the next pyramid level.

__global__ void rectify_kernel(RectifyArgs a) {
  const int cam = blockIdx.z;
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  if (x >= a.width || y >= a.height) return;
  const int i = y * a.width + x;
  const std::int32_t sx = a.map[cam][2 * i], sy = a.map[cam][2 * i + 1];
  a.out_gray[cam][i] = remap_bilinear_at(a.gray[cam], a.width, a.height, a.width, sx, sy);
  if (a.rgb[cam]) {
    for (int c = 0; c < 3; ++c) {
      a.out_rgb[cam][3 * i + c] =
          remap_bilinear_at(a.rgb[cam] + c, a.width, a.height, 3 * a.width, sx, sy, 3);
    }
  }
}

// The block's pixels and a halo of kPreHalo, at clamped coordinates: exactly what census_at and
// mean_removed_at read (they clamp each coordinate), so the same functions run on the tile.
constexpr int kPreHalo = 4;  // census windows up to 9x9, mean radius up to 3
constexpr int kPreTw = kBlockW + 2 * kPreHalo;
constexpr int kPreTh = kBlockH + 2 * kPreHalo;

__global__ void preprocess_kernel(PreprocessArgs a) {
  __shared__ std::uint8_t tile[kPreTh][kPreTw];
  const int img = blockIdx.z;
  const int x0 = blockIdx.x * kBlockW, y0 = blockIdx.y * kBlockH;
  const int x = x0 + threadIdx.x;
  const int y = y0 + threadIdx.y;
  const std::uint8_t* g = a.gray[img];
  const bool tile_inside = x0 < a.width && y0 < a.height;
  if (tile_inside) {
    for (int i = threadIdx.y * kBlockW + threadIdx.x; i < kPreTw * kPreTh; i += kBlockW * kBlockH) {
      const int r = i / kPreTw, c = i - r * kPreTw;
      tile[r][c] = g[clamp_int(y0 - kPreHalo + r, 0, a.height - 1) * a.width +
                     clamp_int(x0 - kPreHalo + c, 0, a.width - 1)];
    }
  }
  __syncthreads();
  if (x < a.width && y < a.height) {
    const int i = y * a.width + x;
    // On the tile, "clamping" to the tile cannot bite: the windows stay inside its halo.
    const std::uint8_t* t = &tile[0][0];
    const int tx = kPreHalo + threadIdx.x, ty = kPreHalo + threadIdx.y;
    if (a.census[img]) {
      a.census[img][i] =
          a.census_width == 9 && a.census_height == 7  // the default
              ? census_fixed<9, 7>(t, kPreTw, tx, ty)
              : census_at(t, kPreTw, kPreTh, kPreTw, tx, ty, a.census_width, a.census_height);
    }
    if (a.ad[img]) {
      a.ad[img][i] = a.ad_radius == 1
                         ? mean_removed_fixed<1>(t, kPreTw, tx, ty)
                         : mean_removed_at(t, kPreTw, kPreTh, kPreTw, tx, ty, a.ad_radius);
    }
  }
  if (a.down[img] && x < a.down_width && y < a.down_height) {
    a.down[img][y * a.down_width + x] = downsample_at(g, a.width, a.height, a.width, x, y);
  }
}

// ---------------------------------------------------------------------------------------------
// Matching one level, both views (blockIdx.z). A block owns a 32x8 tile of reference pixels.
// Each pixel first finds its own search range (from the cross-checked coarser level), then the
// block walks the union of its pixels' ranges: for each d it computes the pixel costs of the tile
// and its halo once, the s x s sub-window sums from them, and every pixel whose range holds d
// aggregates its 9 sub-windows. The arithmetic is the CPU's: the same sums in the same integers.

constexpr int kMaxSub = 9;
constexpr int kMaxHalo = kMaxSub + kMaxSub / 2;  // sub-window centres at +-s, each +-s/2 wide
constexpr int kTileW = kBlockW + 2 * kMaxHalo;
constexpr int kTileH = kBlockH + 2 * kMaxHalo;

__device__ __forceinline__ std::int16_t checked_value(const std::int16_t* map,
                                                      const std::int16_t* other, int w, int x,
                                                      int y, int direction, bool check, int tol) {
  const std::int16_t d = map[y * w + x];
  if (!check || d == kNoDisparity) return d;
  const int ox = x + direction * d;
  if (ox < 0 || ox >= w) return kNoDisparity;
  const int od = other[y * w + ox];
  if (od == kNoDisparity || (od - d > tol) || (d - od > tol)) return kNoDisparity;
  return d;
}

// This pixel's search range from the coarser level (the rule in pixel_ops.hpp), reading the
// parent disparities through the cross-check.
__device__ __forceinline__ void checked_parent_range(const MatchArgs& a, const MatchViewArgs& v,
                                                     int x, int y, int& lo, int& hi) {
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

__global__ void __launch_bounds__(kBlockW* kBlockH) match_kernel(MatchArgs a) {
  __shared__ std::uint32_t pc[kTileH][kTileW];  // pixel costs of the tile and its halo
  __shared__ std::uint32_t hs[kTileH][kTileW];  // horizontal s-sums
  __shared__ std::uint32_t sw[kTileH][kTileW];  // s x s sub-window sums
  __shared__ std::uint8_t ad_table[256];
  __shared__ std::uint8_t census_table[65];
  __shared__ int tile_lo, tile_hi;

  const MatchViewArgs v = a.view[blockIdx.z];
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
  if (matched && v.parent_this) checked_parent_range(a, v, x, y, lo, hi);
  // Candidates beyond the image edge are never allowed: no need to visit them.
  const int reach = v.direction < 0 ? x : w - 1 - x;
  const int pad = a.subpixel ? 1 : 0;
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
      const bool needed = in_range || (a.subpixel && d >= lo - 1 && d <= hi + 1);
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
      if (pending_cp) {
        cp = agg;
        pending_cp = false;
      }
      if (in_range && allowed) {
        if (agg < best) {
          best = agg;
          best_d = d;
          cm = prev;
          cp = kNone;  // A(d + 1) arrives with the next d, if that one is allowed at all
          pending_cp = true;
        }
        if (a.uniqueness > 0) top4_insert(top_v, top_d, agg, d);
      }
      prev = agg;
    }
    __syncthreads();  // the tile is rewritten for the next d
  }

  if (!inside) return;
  if (best_d != kNoDisparity && a.uniqueness > 0) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if (top_v[i] == kNone) break;
      const int dd = top_d[i] - best_d;
      if (dd <= 1 && dd >= -1) continue;
      if (static_cast<unsigned long long>(top_v[i]) * (100 - a.uniqueness) <
          static_cast<unsigned long long>(best) * 100) {
        best_d = kNoDisparity;
      }
      break;  // the smallest candidate away from the winner decides
    }
  }
  const int i = y * w + x;
  v.out_disp[i] = static_cast<std::int16_t>(best_d);
  if (v.out_q4) {
    std::uint16_t q = kInvalidDisparity;
    if (best_d != kNoDisparity) {
      int offset = 0;
      if (best_d >= 1 && best_d + 1 < nd && cm != kNone && cp != kNone) {
        offset = subpixel_offset(cm, best, cp);
      }
      q = static_cast<std::uint16_t>(
          clamp_int(kSubpixelScale * best_d + offset, 0, kSubpixelScale * (nd - 1)));
    }
    v.out_q4[i] = q;
  }
}

// ---------------------------------------------------------------------------------------------
// The same matching, specialised for the default sub-window s = 3 without the uniqueness test
// (the generic kernel above serves every other case). Equal results, fewer instructions: a 32x16
// tile with two rows per thread (less halo per pixel), compile-time tile geometry (no division),
// the reference tile's intensities and census codes loaded once, two disparities per 32-bit word,
// and the k = 4 selection network when k is 4.

namespace s3 {

constexpr int kRows = 2;                    // output rows per thread
constexpr int kTileOutH = kBlockH * kRows;  // 16
constexpr int kHalo = 4;                    // centres at +-3, each sub-window +-1
constexpr int kTw = kBlockW + 2 * kHalo;    // 40
constexpr int kTh = kTileOutH + 2 * kHalo;  // 24
constexpr int kCells = kTw * kTh;
constexpr int kThreads = kBlockW * kBlockH;

// ---------------------------------------------------------------------------------------------
// The chunked s = 3 path. (1) ranges_kernel: each pixel's search range and each tile's union,
// and the list of (tile, view, chunk of kChunk disparities) items whose chunk meets the tile's
// union. (2) chunk_kernel: as many blocks as the GPU keeps resident take the items in turn, so a
// tile with a wide union (an occlusion hole that searches the whole range) is spread over many
// items, and chunks without work (most of them; all of them where the background model left
// nothing to match) cost nothing. Each pixel's best in the chunk goes out as
// atomicMin((cost << 16) | d): the smallest cost wins, ties the smaller d, exactly as in one
// sequential loop, whatever the order of the items. (3) finalize_kernel: keys to disparities, and
// at the finest level the subpixel step from the neighbours the winning chunk recorded.

constexpr int kChunk = 32;
static_assert((kMaxDisparity + kChunk - 1) / kChunk <= 32, "a work item has 5 bits for the chunk");
constexpr std::uint32_t kNoKey = 0xFFFFFFFFu;
constexpr std::uint32_t kNone16 = 0xFFFFu;  // costs stay below 2^16 with s = 3 (at most 9*2871)

__device__ __forceinline__ int tile_index(int view_tiles_x, int tx, int ty) {
  return ty * view_tiles_x + tx;
}

// Whether the block for (tile, chunk) has anything to do: the tile's union of needed disparities
// [tile_lo, tile_hi] meets the chunk (plus one on each side for the subpixel parabola).
__device__ __forceinline__ bool chunk_has_work(int tile_lo, int tile_hi, int chunk, int nd,
                                               int pad) {
  const int c0 = chunk * kChunk, c1 = min(nd - 1, c0 + kChunk - 1);
  const int dlo = max(tile_lo, c0 - pad), dhi = min(tile_hi, c1 + pad);
  return dlo <= dhi && tile_lo <= c1 && tile_hi >= c0;
}

// A work item: tile index, view (1 bit) and chunk (5 bits: D <= 1024 is 32 chunks at most).
__device__ __forceinline__ std::uint32_t pack_work(int tile, int view, int chunk) {
  return (static_cast<std::uint32_t>(tile) << 6) | (static_cast<std::uint32_t>(view) << 5) |
         static_cast<std::uint32_t>(chunk);
}

__global__ void ranges_kernel(MatchArgs a, MatchScratch m, int chunks) {
  __shared__ int tile_lo, tile_hi;
  const int view = blockIdx.z;
  const MatchViewArgs v = a.view[view];
  const int w = a.width, h = a.height, nd = a.disparities;
  const int x = blockIdx.x * kBlockW + threadIdx.x;
  const int tid = threadIdx.y * kBlockW + threadIdx.x;
  if (tid == 0) {
    tile_lo = 1 << 30;
    tile_hi = -1;
  }
  __syncthreads();
  const int pad = a.subpixel ? 1 : 0;
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const int y = blockIdx.y * kTileOutH + threadIdx.y + k * kBlockH;
    if (x >= w || y >= h) continue;
    const bool matched = !v.ref_fg || v.ref_fg[y * w + x] != 0;
    int lo = 0, hi = nd - 1;
    if (matched && v.parent_this) checked_parent_range(a, v, x, y, lo, hi);
    if (!matched) {
      lo = 0;
      hi = -1;
    }
    m.lo[view][y * w + x] = static_cast<std::int16_t>(lo);
    m.hi[view][y * w + x] = static_cast<std::int16_t>(hi);
    if (matched) {
      const int reach = v.direction < 0 ? x : w - 1 - x;
      const int need_lo = max(0, lo - pad), need_hi = min(min(nd - 1, hi + pad), reach);
      if (need_lo <= need_hi) {
        atomicMin(&tile_lo, need_lo);
        atomicMax(&tile_hi, need_hi);
      }
    }
  }
  __syncthreads();
  if (tid == 0) {
    const int t = tile_index(gridDim.x, blockIdx.x, blockIdx.y);
    m.tile_lo[view][t] = tile_lo;
    m.tile_hi[view][t] = tile_hi;
    // List the chunks of this tile that have work. An empty block still costs a launch slot and
    // its shared memory: at 1024x768, D = 256, three in four of the 24,576 would return at once.
    for (int chunk = 0; chunk < chunks; ++chunk) {
      if (chunk_has_work(tile_lo, tile_hi, chunk, a.disparities, pad)) {
        const std::uint32_t slot = atomicAdd(&m.counters[0], 1u);
        m.work[slot] = pack_work(t, view, chunk);
      }
    }
  }
}

// Two disparities per 32-bit word: u16 lanes never carry into each other (costs < 2^16).
__device__ __forceinline__ std::uint32_t sum_smallest_4_of_8_x2(std::uint32_t v[8]) {
#define STEREOD_VSWAP(i, j)                         \
  do {                                              \
    const std::uint32_t lo_ = __vminu2(v[i], v[j]); \
    const std::uint32_t hi_ = __vmaxu2(v[i], v[j]); \
    v[i] = lo_;                                     \
    v[j] = hi_;                                     \
  } while (0)
  STEREOD_VSWAP(0, 1);
  STEREOD_VSWAP(2, 3);
  STEREOD_VSWAP(0, 2);
  STEREOD_VSWAP(1, 3);
  STEREOD_VSWAP(1, 2);
  STEREOD_VSWAP(4, 5);
  STEREOD_VSWAP(6, 7);
  STEREOD_VSWAP(4, 6);
  STEREOD_VSWAP(5, 7);
  STEREOD_VSWAP(5, 6);
#undef STEREOD_VSWAP
  return __vminu2(v[0], v[7]) + __vminu2(v[1], v[6]) + __vminu2(v[2], v[5]) + __vminu2(v[3], v[4]);
}

struct ChunkPixel {
  bool matched = false;
  int lo = 0, hi = -1;
  std::uint32_t best = kNone, prev = kNone, cm = kNone, cp = kNone;
  int best_d = kNoDisparity;
  bool pending_cp = false;
};

// One (tile, view, chunk) item of chunk_kernel, by the whole block.
template <bool kK4>
__device__ __forceinline__ void chunk_item(
    const MatchArgs& a, const MatchScratch& m, int t, int view, int chunk, int tiles_x, int nd,
    int pad, int w, int h, int tid, std::uint32_t (*pc)[kTh][kTw], std::uint32_t (*hs)[kTh][kTw],
    std::uint32_t (*sw)[kTh][kTw], std::uint8_t (*ref_val)[kTw], std::uint64_t (*ref_code)[kTw],
    const std::uint8_t* ad_table, const std::uint8_t* census_table) {
  constexpr int kPairs = 2;  // disparity pairs per round: four disparities
  constexpr int kSteps = (kCells + kThreads - 1) / kThreads;
  const int c0 = chunk * kChunk, c1 = min(nd - 1, c0 + kChunk - 1);
  // This block visits the tile's union within the chunk, plus one on each side for the parabola.
  const int dlo = max(m.tile_lo[view][t], c0 - pad);
  const int dhi = min(m.tile_hi[view][t], c1 + pad);

  const MatchViewArgs v = a.view[view];
  const int x0 = (t % tiles_x) * kBlockW, y0 = (t / tiles_x) * kTileOutH;
  const bool census = v.ref_census != nullptr;
  const int dir = v.direction;

  // The cells this thread fills every round, worked out once.
  int cell_row[kSteps], cell_col[kSteps], cell_base[kSteps], cell_x[kSteps];
#pragma unroll
  for (int j = 0; j < kSteps; ++j) {
    const int i = tid + j * kThreads;
    const int r = i / kTw, c = i - r * kTw;
    const int qx = clamp_int(x0 - kHalo + c, 0, w - 1), qy = clamp_int(y0 - kHalo + r, 0, h - 1);
    cell_row[j] = r;
    cell_col[j] = c;
    cell_base[j] = qy * w;
    cell_x[j] = qx;
    if (i < kCells) {
      ref_val[r][c] = v.ref_ad[qy * w + qx];
      ref_code[r][c] = census ? v.ref_census[qy * w + qx] : 0;
    }
  }
  const int x = x0 + threadIdx.x;
  ChunkPixel px[kRows];
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const int y = y0 + threadIdx.y + k * kBlockH;
    if (x < w && y < h) {
      px[k].lo = m.lo[view][y * w + x];
      px[k].hi = m.hi[view][y * w + x];
      px[k].matched = px[k].hi >= px[k].lo;
    }
  }
  __syncthreads();
  const std::uint32_t outside = a.tables.outside;

  for (int d0 = dlo; d0 <= dhi; d0 += 2 * kPairs) {
    // Pixel costs for d0 .. d0+3, two disparities per word.
#pragma unroll
    for (int j = 0; j < kSteps; ++j) {
      if (tid + j * kThreads >= kCells) break;
      const int r = cell_row[j], c = cell_col[j];
      const int av = ref_val[r][c];
      const std::uint64_t ac = ref_code[r][c];
      std::uint32_t cost[2 * kPairs];
#pragma unroll
      for (int dd = 0; dd < 2 * kPairs; ++dd) {
        const int tx = cell_x[j] + dir * (d0 + dd);
        std::uint32_t cst = outside;
        if (tx >= 0 && tx < w) {
          const int bv = v.tgt_ad[cell_base[j] + tx];
          cst = ad_table[av > bv ? av - bv : bv - av];
          if (census) cst += census_table[popcount64(ac ^ v.tgt_census[cell_base[j] + tx])];
        }
        cost[dd] = cst;
      }
#pragma unroll
      for (int q = 0; q < kPairs; ++q) pc[q][r][c] = cost[2 * q] | (cost[2 * q + 1] << 16);
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kSteps; ++j) {
      if (tid + j * kThreads >= kCells) break;
      const int r = cell_row[j], c = cell_col[j];
      if (c < 1 || c >= kTw - 1) continue;
#pragma unroll
      for (int q = 0; q < kPairs; ++q)
        hs[q][r][c] = pc[q][r][c - 1] + pc[q][r][c] + pc[q][r][c + 1];
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kSteps; ++j) {
      if (tid + j * kThreads >= kCells) break;
      const int r = cell_row[j], c = cell_col[j];
      if (r < 1 || r >= kTh - 1 || c < 1 || c >= kTw - 1) continue;
#pragma unroll
      for (int q = 0; q < kPairs; ++q)
        sw[q][r][c] = hs[q][r - 1][c] + hs[q][r][c] + hs[q][r + 1][c];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      ChunkPixel& p = px[k];
      if (!p.matched) continue;
      const int y = y0 + threadIdx.y + k * kBlockH;
      const int R = kHalo + threadIdx.y + k * kBlockH, C = kHalo + threadIdx.x;
#pragma unroll
      for (int q = 0; q < kPairs; ++q) {
        std::uint32_t nb[8] = {sw[q][R - 3][C - 3], sw[q][R - 3][C],    sw[q][R - 3][C + 3],
                               sw[q][R][C - 3],     sw[q][R][C + 3],    sw[q][R + 3][C - 3],
                               sw[q][R + 3][C],     sw[q][R + 3][C + 3]};
        const std::uint32_t centre = sw[q][R][C];
        std::uint32_t agg2;
        if (kK4) {
          agg2 = centre + sum_smallest_4_of_8_x2(nb);
        } else {
          std::uint32_t lo8[8], hi8[8];
#pragma unroll
          for (int n = 0; n < 8; ++n) {
            lo8[n] = nb[n] & 0xFFFFu;
            hi8[n] = nb[n] >> 16;
          }
          agg2 = ((centre & 0xFFFFu) + sum_smallest_k_of_8(lo8, a.best_k)) |
                 (((centre >> 16) + sum_smallest_k_of_8(hi8, a.best_k)) << 16);
        }
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int d = d0 + 2 * q + half;
          if (d > dhi) break;
          const bool in_range = d >= p.lo && d <= p.hi;
          const bool needed = in_range || (a.subpixel && d >= p.lo - 1 && d <= p.hi + 1);
          const bool candidate = in_range && d >= c0 && d <= c1;
          const int tx = x + dir * d;
          const bool allowed = tx >= 0 && tx < w && (!v.tgt_fg || v.tgt_fg[y * w + tx] != 0);
          const std::uint32_t agg =
              (needed && allowed) ? (half ? agg2 >> 16 : agg2 & 0xFFFFu) : kNone;
          if (p.pending_cp) {
            p.cp = agg;
            p.pending_cp = false;
          }
          if (candidate && allowed && agg < p.best) {
            p.best = agg;
            p.best_d = d;
            p.cm = p.prev;
            p.cp = kNone;
            p.pending_cp = true;
          }
          p.prev = agg;
        }
      }
    }
  }

#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    ChunkPixel& p = px[k];
    const int y = y0 + threadIdx.y + k * kBlockH;
    if (x >= w || y >= h || p.best_d == kNoDisparity) continue;
    const int i = y * w + x;
    atomicMin(&m.key[view][i], (p.best << 16) | static_cast<std::uint32_t>(p.best_d));
    if (m.cmcp[view]) {
      const std::uint32_t cm = p.cm == kNone ? kNone16 : p.cm, cp = p.cp == kNone ? kNone16 : p.cp;
      m.cmcp[view][static_cast<std::size_t>(chunk) * w * h + i] = (cm << 16) | cp;
    }
  }
}

template <bool kK4>
__global__ void __launch_bounds__(kBlockW* kBlockH, 4)
    chunk_kernel(MatchArgs a, MatchScratch m, int tiles_x) {
  constexpr int kPairs = 2;  // disparity pairs per round: four disparities
  __shared__ std::uint32_t pc[kPairs][kTh][kTw];
  __shared__ std::uint32_t hs[kPairs][kTh][kTw];
  __shared__ std::uint32_t sw[kPairs][kTh][kTw];
  __shared__ std::uint8_t ref_val[kTh][kTw];
  __shared__ std::uint64_t ref_code[kTh][kTw];
  __shared__ std::uint8_t ad_table[256];
  __shared__ std::uint8_t census_table[65];
  __shared__ std::uint32_t item_s;

  const int tid = threadIdx.y * kBlockW + threadIdx.x;
  const int nd = a.disparities;
  const int pad = a.subpixel ? 1 : 0;
  const int w = a.width, h = a.height;
  for (int i = tid; i < 256; i += kThreads) ad_table[i] = a.tables.ad[i];
  for (int i = tid; i < 65; i += kThreads) census_table[i] = a.tables.census[i];

  // A fixed number of blocks takes the listed (tile, view, chunk) items in turn. Results go out
  // through atomicMin, so the order in which items are taken cannot change them.
  for (;;) {
    if (tid == 0) {
      const std::uint32_t k = atomicAdd(&m.counters[1], 1u);
      item_s = k < m.counters[0] ? m.work[k] : kNoKey;
    }
    __syncthreads();
    const std::uint32_t item = item_s;
    if (item == kNoKey) return;
    const int t = static_cast<int>(item >> 6);
    const int view = static_cast<int>((item >> 5) & 1u), chunk = static_cast<int>(item & 31u);
    chunk_item<kK4>(a, m, t, view, chunk, tiles_x, nd, pad, w, h, tid, pc, hs, sw, ref_val,
                    ref_code, ad_table, census_table);
    __syncthreads();  // the shared arrays and item_s are the next item's
  }
}

__global__ void finalize_kernel(MatchArgs a, MatchScratch m) {
  const int view = blockIdx.z;
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  const int w = a.width, h = a.height, nd = a.disparities;
  if (x >= w || y >= h) return;
  const int i = y * w + x;
  const std::uint32_t key = m.key[view][i];
  const MatchViewArgs& v = a.view[view];
  const int d = key == kNoKey ? kNoDisparity : static_cast<int>(key & 0xFFFFu);
  v.out_disp[i] = static_cast<std::int16_t>(d);
  if (!v.out_q4) return;
  std::uint16_t q = kInvalidDisparity;
  if (d != kNoDisparity) {
    const std::uint32_t both = m.cmcp[view][static_cast<std::size_t>(d / kChunk) * w * h + i];
    const std::uint32_t cm = both >> 16, cp = both & 0xFFFFu;
    int offset = 0;
    if (d >= 1 && d + 1 < nd && cm != kNone16 && cp != kNone16)
      offset = subpixel_offset(cm, key >> 16, cp);
    q = static_cast<std::uint16_t>(
        clamp_int(kSubpixelScale * d + offset, 0, kSubpixelScale * (nd - 1)));
  }
  v.out_q4[i] = q;
}

}  // namespace s3

// ---------------------------------------------------------------------------------------------
// Finest-level cross-check, median, filling.

__global__ void final_check_kernel(FinalCheckArgs a) {
  const int view = blockIdx.z;
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  if (x >= a.width || y >= a.height || !a.enabled) return;
  const int direction = view == 0 ? -1 : 1;
  const std::int16_t d =
      checked_value(a.disp[view], a.disp[1 - view], a.width, x, y, direction, true, a.tolerance);
  if (d == kNoDisparity) a.q4[view][y * a.width + x] = kInvalidDisparity;
}

__global__ void median_kernel(MedianArgs a) {
  const int view = blockIdx.z;
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  const int w = a.width, h = a.height;
  if (x >= w || y >= h) return;
  const std::uint16_t* in = a.in[view];
  a.out[view][y * w + x] = a.enabled ? median3x3_at(in, w, h, x, y) : in[y * w + x];
}

// One thread per row: the scan is inherently sequential along the row, rows are independent.
__global__ void fill_kernel(FillArgs a) {
  const int view = blockIdx.y;
  const int y = blockIdx.x * blockDim.x + threadIdx.x;
  if (y >= a.height) return;
  const int w = a.width;
  std::uint16_t* d = a.disp[view] + static_cast<std::size_t>(y) * w;
  const std::uint8_t* in = a.intensity[view] + static_cast<std::size_t>(y) * w;
  const std::uint8_t* fg = a.fg[view] ? a.fg[view] + static_cast<std::size_t>(y) * w : nullptr;
  fill_holes_row(d, w, in, fg, a.background_mode, a.interpolate_max * kSubpixelScale);
}

// ---------------------------------------------------------------------------------------------
// Speckles: connected components by union-find (the root of a set is its smallest index), then
// sizes, then removal. Which pixels share a component does not depend on the order the unions
// happen in, so the result equals the CPU's flood fill. Block-based, so chains stay short: each
// 32x16 tile first joins its own pixels in shared memory, then tiles are joined along their
// borders in global memory, then every pixel finds its root and counts itself.

constexpr int kSpeckleTileH = 16;

__device__ __forceinline__ bool linked(const std::uint16_t* q, int i, int j, int max_step) {
  const int a = q[i], b = q[j];
  return a != kInvalidDisparity && b != kInvalidDisparity && (a > b ? a - b : b - a) <= max_step;
}

template <typename Int>
__device__ __forceinline__ int find_root(Int* parent, int i) {
  while (parent[i] != i) i = parent[i];
  return i;
}

// Joins the sets of a and b; roots are hung under the smaller root with atomicMin, retrying when
// another thread changed the root meanwhile (the classic lock-free union).
template <typename Int>
__device__ void unite(Int* parent, int a, int b) {
  for (;;) {
    a = find_root(parent, a);
    b = find_root(parent, b);
    if (a == b) return;
    if (a < b) {
      const int t = a;
      a = b;
      b = t;
    }
    const int old = atomicMin(&parent[a], b);
    if (old == a) return;
    a = old;
  }
}

__global__ void speckle_local_kernel(SpeckleArgs a) {
  __shared__ int local[kSpeckleTileH][kBlockW];
  const int view = blockIdx.z;
  const std::uint16_t* q = a.q4[view];
  const int w = a.width, h = a.height;
  const int x0 = blockIdx.x * kBlockW, y0 = blockIdx.y * kSpeckleTileH;
  const int tx = threadIdx.x;
  int* flat = &local[0][0];
  for (int k = 0; k < 2; ++k) {
    const int ty = threadIdx.y + k * kBlockH;
    local[ty][tx] = ty * kBlockW + tx;
  }
  __syncthreads();
  for (int k = 0; k < 2; ++k) {
    const int ty = threadIdx.y + k * kBlockH;
    const int x = x0 + tx, y = y0 + ty;
    if (x >= w || y >= h) continue;
    const int i = y * w + x, li = ty * kBlockW + tx;
    if (tx + 1 < kBlockW && x + 1 < w && linked(q, i, i + 1, a.max_step)) unite(flat, li, li + 1);
    if (ty + 1 < kSpeckleTileH && y + 1 < h && linked(q, i, i + w, a.max_step)) {
      unite(flat, li, li + kBlockW);
    }
  }
  __syncthreads();
  for (int k = 0; k < 2; ++k) {
    const int ty = threadIdx.y + k * kBlockH;
    const int x = x0 + tx, y = y0 + ty;
    if (x >= w || y >= h) continue;
    const int root = find_root(flat, ty * kBlockW + tx);
    const int rx = x0 + root % kBlockW, ry = y0 + root / kBlockW;
    a.parent[view][y * w + x] = ry * w + rx;  // the tile root's global index, the tile's smallest
    a.count[view][y * w + x] = 0;
  }
}

__global__ void speckle_border_kernel(SpeckleArgs a) {
  const int view = blockIdx.z;
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  const int w = a.width, h = a.height;
  if (x >= w || y >= h) return;
  const int i = y * w + x;
  const std::uint16_t* q = a.q4[view];
  // Only links that cross a tile border are left to join.
  if ((x + 1) % kBlockW == 0 && x + 1 < w && linked(q, i, i + 1, a.max_step)) {
    unite(a.parent[view], i, i + 1);
  }
  if ((y + 1) % kSpeckleTileH == 0 && y + 1 < h && linked(q, i, i + w, a.max_step)) {
    unite(a.parent[view], i, i + w);
  }
}

__global__ void speckle_count_kernel(SpeckleArgs a) {
  const int view = blockIdx.z;
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  const bool inside = x < a.width && y < a.height;
  const int i = y * a.width + x;
  const bool valid = inside && a.q4[view][i] != kInvalidDisparity;
  const int root = valid ? find_root(a.parent[view], i) : -1 - static_cast<int>(threadIdx.x & 31);
  // One atomic per group of lanes with the same root, and none once the size is known to be
  // large enough: a big component would otherwise serialise hundreds of thousands of atomics.
  const unsigned group = __match_any_sync(0xFFFFFFFFu, root);
  if (valid && (threadIdx.x & 31) == __ffs(group) - 1) {
    if (a.count[view][root] < a.min_size) atomicAdd(&a.count[view][root], __popc(group));
  }
}

__global__ void speckle_remove_kernel(SpeckleArgs a) {
  const int view = blockIdx.z;
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  if (x >= a.width || y >= a.height) return;
  const int i = y * a.width + x;
  if (a.q4[view][i] == kInvalidDisparity) return;
  if (a.count[view][find_root(a.parent[view], i)] < a.min_size) a.q4[view][i] = kInvalidDisparity;
}

}  // namespace

void launch_rectify(const RectifyArgs& a, cudaStream_t stream) {
  rectify_kernel<<<grid_for(a.width, a.height, 2), dim3(kBlockW, kBlockH), 0, stream>>>(a);
  STEREOD_CUDA_LAUNCHED("rectify_kernel");
}

void launch_preprocess(const PreprocessArgs& a, cudaStream_t stream) {
  const int w = a.width > a.down_width ? a.width : a.down_width;
  const int h = a.height > a.down_height ? a.height : a.down_height;
  preprocess_kernel<<<grid_for(w, h, 2), dim3(kBlockW, kBlockH), 0, stream>>>(a);
  STEREOD_CUDA_LAUNCHED("preprocess_kernel");
}

MatchScratchSizes match_scratch_sizes(int width, int height, int disparities, int subwindow) {
  MatchScratchSizes z;
  if (subwindow != 3) return z;
  z.pixels = static_cast<std::size_t>(width) * height;
  z.tiles = static_cast<std::size_t>((width + kBlockW - 1) / kBlockW) *
            ((height + s3::kTileOutH - 1) / s3::kTileOutH);
  z.chunks = static_cast<std::size_t>((disparities + s3::kChunk - 1) / s3::kChunk);
  z.work_items = z.tiles * 2 * z.chunks;
  return z;
}

int match_workers() {
  int device = 0, sms = 0, per_sm = 0;
  STEREOD_CUDA(cudaGetDevice(&device));
  STEREOD_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  // Both instantiations have the same launch bounds and shared memory; ask for the default one.
  STEREOD_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, s3::chunk_kernel<true>,
                                                             kBlockW * kBlockH, 0));
  return std::max(1, sms * per_sm);
}

void launch_match(const MatchArgs& a, const MatchScratch& m, cudaStream_t stream) {
  const dim3 block(kBlockW, kBlockH);
  if (a.subwindow == 3 && a.uniqueness == 0 && m.key[0] != nullptr && m.work != nullptr) {
    const int chunks = (a.disparities + s3::kChunk - 1) / s3::kChunk;
    const dim3 tiles(static_cast<unsigned>((a.width + kBlockW - 1) / kBlockW),
                     static_cast<unsigned>((a.height + s3::kTileOutH - 1) / s3::kTileOutH), 2);
    STEREOD_CUDA(cudaMemsetAsync(m.counters, 0, 2 * sizeof(std::uint32_t), stream));
    s3::ranges_kernel<<<tiles, block, 0, stream>>>(a, m, chunks);
    STEREOD_CUDA_LAUNCHED("ranges_kernel");
    const std::size_t pixels = static_cast<std::size_t>(a.width) * a.height;
    for (int i = 0; i < 2; ++i) {
      STEREOD_CUDA(cudaMemsetAsync(m.key[i], 0xFF, pixels * sizeof(std::uint32_t), stream));
    }
    // Never more blocks than items could need.
    const std::size_t items = static_cast<std::size_t>(tiles.x) * tiles.y * 2 * chunks;
    const unsigned workers =
        static_cast<unsigned>(std::min<std::size_t>(items, std::max(m.workers, 1)));
    const int tiles_x = static_cast<int>(tiles.x);
    if (a.best_k == 4)
      s3::chunk_kernel<true><<<workers, block, 0, stream>>>(a, m, tiles_x);
    else
      s3::chunk_kernel<false><<<workers, block, 0, stream>>>(a, m, tiles_x);
    STEREOD_CUDA_LAUNCHED("chunk_kernel");
    s3::finalize_kernel<<<grid_for(a.width, a.height, 2), block, 0, stream>>>(a, m);
    STEREOD_CUDA_LAUNCHED("finalize_kernel");
    return;
  }
  match_kernel<<<grid_for(a.width, a.height, 2), block, 0, stream>>>(a);
  STEREOD_CUDA_LAUNCHED("match_kernel");
}

void launch_final_check(const FinalCheckArgs& a, cudaStream_t stream) {
  final_check_kernel<<<grid_for(a.width, a.height, 2), dim3(kBlockW, kBlockH), 0, stream>>>(a);
  STEREOD_CUDA_LAUNCHED("final_check_kernel");
}

void launch_speckle(const SpeckleArgs& a, cudaStream_t stream) {
  const dim3 grid = grid_for(a.width, a.height, 2), block(kBlockW, kBlockH);
  const dim3 tiles(static_cast<unsigned>((a.width + kBlockW - 1) / kBlockW),
                   static_cast<unsigned>((a.height + kSpeckleTileH - 1) / kSpeckleTileH), 2);
  speckle_local_kernel<<<tiles, block, 0, stream>>>(a);
  STEREOD_CUDA_LAUNCHED("speckle_local_kernel");
  speckle_border_kernel<<<grid, block, 0, stream>>>(a);
  STEREOD_CUDA_LAUNCHED("speckle_border_kernel");
  speckle_count_kernel<<<grid, block, 0, stream>>>(a);
  STEREOD_CUDA_LAUNCHED("speckle_count_kernel");
  speckle_remove_kernel<<<grid, block, 0, stream>>>(a);
  STEREOD_CUDA_LAUNCHED("speckle_remove_kernel");
}

void launch_median(const MedianArgs& a, cudaStream_t stream) {
  median_kernel<<<grid_for(a.width, a.height, 2), dim3(kBlockW, kBlockH), 0, stream>>>(a);
  STEREOD_CUDA_LAUNCHED("median_kernel");
}

void launch_fill(const FillArgs& a, cudaStream_t stream) {
  const int threads = 64;
  fill_kernel<<<dim3(static_cast<unsigned>((a.height + threads - 1) / threads), 2), threads, 0,
                stream>>>(a);
  STEREOD_CUDA_LAUNCHED("fill_kernel");
}

}  // namespace stereod::cuda
