// The stereo kernels. Each computes exactly what its CPU stage in pipeline/stereo/ computes (the
// per-pixel arithmetic is the same source: pixel_ops.hpp); gpu_tests compare them bit for bit.
#include "cuda_check.hpp"
#include "kernels/stereo_kernels.hpp"
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

__global__ void preprocess_kernel(PreprocessArgs a) {
  const int img = blockIdx.z;
  const int x = blockIdx.x * kBlockW + threadIdx.x;
  const int y = blockIdx.y * kBlockH + threadIdx.y;
  const std::uint8_t* g = a.gray[img];
  if (x < a.width && y < a.height) {
    const int i = y * a.width + x;
    if (a.census[img]) {
      a.census[img][i] = census_at(g, a.width, a.height, a.width, x, y, a.census_width, a.census_height);
    }
    if (a.ad[img]) a.ad[img][i] = mean_removed_at(g, a.width, a.height, a.width, x, y, a.ad_radius);
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
  if (matched && v.parent_this) {
    const int pw = a.parent_width, ph = a.parent_height;
    const int px = min(x / 2, pw - 1), py = min(y / 2, ph - 1);
    int mn = 1 << 30, mx = -1;
    for (int yy = max(0, py - a.parent_radius); yy <= min(ph - 1, py + a.parent_radius); ++yy) {
      for (int xx = max(0, px - a.parent_radius); xx <= min(pw - 1, px + a.parent_radius); ++xx) {
        const int d = checked_value(v.parent_this, v.parent_other, pw, xx, yy, v.direction,
                                    a.cross_check, a.tolerance);
        if (d == kNoDisparity) continue;
        mn = min(mn, d);
        mx = max(mx, d);
      }
    }
    if (mx >= 0) {
      lo = clamp_int(2 * mn - 2, 0, nd - 1);
      hi = clamp_int(2 * mx + 2, 0, nd - 1);
    }
  }
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
        if (census) cost += census_table[popcount64(v.ref_census[qy * w + qx] ^ v.tgt_census[qy * w + tx])];
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
        std::uint32_t nb[8] = {sw[r - s][c - s], sw[r - s][c], sw[r - s][c + s], sw[r][c - s],
                               sw[r][c + s],     sw[r + s][c - s], sw[r + s][c], sw[r + s][c + s]};
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
      q = static_cast<std::uint16_t>(clamp_int(kSubpixelScale * best_d + offset, 0, kSubpixelScale * (nd - 1)));
    }
    v.out_q4[i] = q;
  }
}

// ---------------------------------------------------------------------------------------------
// Finest-level cross-check, median, filling.

__global__ void final_check_kernel(FinalCheckArgs a) {
  const int view = blockIdx.z;
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  if (x >= a.width || y >= a.height || !a.enabled) return;
  const int direction = view == 0 ? -1 : 1;
  const std::int16_t d = checked_value(a.disp[view], a.disp[1 - view], a.width, x, y, direction,
                                       true, a.tolerance);
  if (d == kNoDisparity) a.q4[view][y * a.width + x] = kInvalidDisparity;
}

__global__ void median_kernel(MedianArgs a) {
  const int view = blockIdx.z;
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  const int w = a.width, h = a.height;
  if (x >= w || y >= h) return;
  const std::uint16_t* in = a.in[view];
  const std::uint16_t c = in[y * w + x];
  if (!a.enabled || c == kInvalidDisparity) {
    a.out[view][y * w + x] = c;
    return;
  }
  std::uint16_t vals[9];
  int n = 0;
  for (int dy = -1; dy <= 1; ++dy) {
    const int yy = y + dy;
    if (yy < 0 || yy >= h) continue;
    for (int dx = -1; dx <= 1; ++dx) {
      const int xx = x + dx;
      if (xx < 0 || xx >= w) continue;
      const std::uint16_t d = in[yy * w + xx];
      if (d != kInvalidDisparity) vals[n++] = d;
    }
  }
  a.out[view][y * w + x] = lower_median(vals, n);
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
  const int max_step = a.interpolate_max * kSubpixelScale;
  int x = 0;
  while (x < w) {
    if (d[x] != kInvalidDisparity || (fg && !fg[x])) {
      ++x;
      continue;
    }
    const int start = x;
    while (x < w && d[x] == kInvalidDisparity && !(fg && !fg[x])) ++x;
    const int end = x;
    const int xl = start - 1, xr = end;
    const bool has_l = xl >= 0 && d[xl] != kInvalidDisparity;
    const bool has_r = xr < w && d[xr] != kInvalidDisparity;
    if (!has_l && !has_r) continue;
    for (int i = start; i < end; ++i) {
      int val;
      if (has_l && has_r) {
        const int dl = d[xl], dr = d[xr];
        if ((dl > dr ? dl - dr : dr - dl) <= max_step) {
          val = interpolate_disparity(xl, dl, xr, dr, i);
        } else if (a.background_mode) {
          val = dl < dr ? dl : dr;
        } else {
          const int c = in[i];
          const int el = c > in[xl] ? c - in[xl] : in[xl] - c;
          const int er = c > in[xr] ? c - in[xr] : in[xr] - c;
          val = el < er ? dl : (er < el ? dr : (dl < dr ? dl : dr));
        }
      } else {
        val = has_l ? d[xl] : d[xr];
      }
      d[i] = static_cast<std::uint16_t>(val);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Speckles: connected components by lock-free union-find (the root of a set is its smallest
// index), then sizes, then removal. Which pixels share a component does not depend on the order
// the unions happen in, so the result equals the CPU's flood fill.

__device__ __forceinline__ int find_root(const std::int32_t* parent, int i) {
  while (parent[i] != i) i = parent[i];
  return i;
}

__device__ void unite(std::int32_t* parent, int a, int b) {
  for (;;) {
    a = find_root(parent, a);
    b = find_root(parent, b);
    if (a == b) return;
    if (a < b) {
      const int t = a;
      a = b;
      b = t;
    }
    // Hang the larger root under the smaller one, unless someone changed it meanwhile.
    const int old = atomicMin(&parent[a], b);
    if (old == a) return;
    a = old;
  }
}

__device__ __forceinline__ bool linked(const std::uint16_t* q, int i, int j, int max_step) {
  const int a = q[i], b = q[j];
  return a != kInvalidDisparity && b != kInvalidDisparity && (a > b ? a - b : b - a) <= max_step;
}

__global__ void speckle_init_kernel(SpeckleArgs a) {
  const int view = blockIdx.z;
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  if (x >= a.width || y >= a.height) return;
  const int i = y * a.width + x;
  a.parent[view][i] = i;
  a.count[view][i] = 0;
}

__global__ void speckle_union_kernel(SpeckleArgs a) {
  const int view = blockIdx.z;
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  if (x >= a.width || y >= a.height) return;
  const int i = y * a.width + x;
  const std::uint16_t* q = a.q4[view];
  if (x + 1 < a.width && linked(q, i, i + 1, a.max_step)) unite(a.parent[view], i, i + 1);
  if (y + 1 < a.height && linked(q, i, i + a.width, a.max_step)) unite(a.parent[view], i, i + a.width);
}

__global__ void speckle_count_kernel(SpeckleArgs a) {
  const int view = blockIdx.z;
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  if (x >= a.width || y >= a.height) return;
  const int i = y * a.width + x;
  if (a.q4[view][i] == kInvalidDisparity) return;
  const int root = find_root(a.parent[view], i);
  a.parent[view][i] = root;  // flatten: later reads are one step
  atomicAdd(&a.count[view][root], 1);
}

__global__ void speckle_remove_kernel(SpeckleArgs a) {
  const int view = blockIdx.z;
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  if (x >= a.width || y >= a.height) return;
  const int i = y * a.width + x;
  if (a.q4[view][i] == kInvalidDisparity) return;
  const int root = find_root(a.parent[view], i);
  if (a.count[view][root] < a.min_size) a.q4[view][i] = kInvalidDisparity;
}

}  // namespace

void launch_preprocess(const PreprocessArgs& a, cudaStream_t stream) {
  const int w = a.width > a.down_width ? a.width : a.down_width;
  const int h = a.height > a.down_height ? a.height : a.down_height;
  preprocess_kernel<<<grid_for(w, h, 2), dim3(kBlockW, kBlockH), 0, stream>>>(a);
  STEREOD_CUDA_LAUNCHED("preprocess_kernel");
}

void launch_match(const MatchArgs& a, cudaStream_t stream) {
  match_kernel<<<grid_for(a.width, a.height, 2), dim3(kBlockW, kBlockH), 0, stream>>>(a);
  STEREOD_CUDA_LAUNCHED("match_kernel");
}

void launch_final_check(const FinalCheckArgs& a, cudaStream_t stream) {
  final_check_kernel<<<grid_for(a.width, a.height, 2), dim3(kBlockW, kBlockH), 0, stream>>>(a);
  STEREOD_CUDA_LAUNCHED("final_check_kernel");
}

void launch_speckle(const SpeckleArgs& a, cudaStream_t stream) {
  const dim3 grid = grid_for(a.width, a.height, 2), block(kBlockW, kBlockH);
  speckle_init_kernel<<<grid, block, 0, stream>>>(a);
  STEREOD_CUDA_LAUNCHED("speckle_init_kernel");
  speckle_union_kernel<<<grid, block, 0, stream>>>(a);
  STEREOD_CUDA_LAUNCHED("speckle_union_kernel");
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
  fill_kernel<<<dim3(static_cast<unsigned>((a.height + threads - 1) / threads), 2), threads, 0, stream>>>(a);
  STEREOD_CUDA_LAUNCHED("fill_kernel");
}

}  // namespace stereod::cuda
