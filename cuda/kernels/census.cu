// Stage: census codes and mean-removed intensities (census.cpp and mean_removal.cpp on the CPU),
// every level of both cameras in one launch: block x runs over the tiles of all levels, finest
// first. Each block stages its 32 x 32 tile and a clamped halo in shared memory: exactly what
// census_at and mean_removed_at read (they clamp each coordinate), so the same functions run on
// it; a thread computes four pixels of a row, whose census comparisons run four at a time
// (census_9x7_row4: each byte of a word is one pixel's), and whose mean-removed values share their
// windows' column sums (mean_removed_3x3_row4).
//
// With background modeling this runs after the model, and only where matching will read: around
// the blocks that hold foreground (as reference pixels), and within the search range of the other
// camera's foreground (as their partners). An empty scene computes none.
#include "kernels/device_common.cuh"
#include "kernels/launch.cuh"
#include "kernels/stages.hpp"

namespace stereod::cuda {
namespace {

constexpr int kHalo = 4;  // census windows up to 9x9, mean radius up to 3
constexpr int kRows = 4;  // a block's tile is 32 x 32: four rows per warp, four pixels a thread
constexpr int kTileH = kBlockH * kRows;
constexpr int kTw = kBlockW + 2 * kHalo;
constexpr int kTh = kTileH + 2 * kHalo;
constexpr int kMarkRows = kTileH / kBlockH;  // the model's 32 x 8 block marks per tile column

__host__ __device__ inline int tiles_of(int w, int h) {
  return ((w + kBlockW - 1) / kBlockW) * ((h + kTileH - 1) / kTileH);
}

// Whether matching at this level can read tile (tx, ty) of camera `img`: some foreground block
// (the model's 32 x 8 marks) of the same camera within 1 block across and 2 down or up of the
// tile's blocks (a matching tile is two blocks tall and reads 4 pixels around itself; the generic
// matcher up to 13), or of the other camera within the search range plus those margins on the
// side its partners lie. The threads look at those marks side by side (a loop of one thread over
// them would wait on one load after the other).
__device__ bool census_needed(const LevelBuffers& lv, int img, int tx, int ty) {
  const int nbx = (lv.width + kBlockW - 1) / kBlockW, nby = (lv.height + kBlockH - 1) / kBlockH;
  const int reach = (lv.disparities + 2 * kBlockW) / kBlockW + 1;  // blocks of partners' columns
  // Left camera (img 0) pixels are the partners of right pixels to their left, and vice versa.
  const int o_lo = img == 0 ? tx - reach : tx - 1, o_hi = img == 0 ? tx + 1 : tx + reach;
  const int o_cols = o_hi - o_lo + 1;
  const int rows = kMarkRows + 4, v0 = ty * kMarkRows - 2;  // the tile's block rows and 2 around
  const int own = 3 * rows, all = own + o_cols * rows;
  bool mine = false;
  for (int t = threadIdx.y * kBlockW + threadIdx.x; t < all && !mine; t += kBlockW * kBlockH) {
    const bool same = t < own;
    const int k = same ? t : t - own, cols = same ? 3 : o_cols;
    const int v = v0 + k / cols, u = (same ? tx - 1 : o_lo) + k % cols;
    if (u >= 0 && u < nbx && v >= 0 && v < nby)
      mine = lv.block_fg[same ? img : 1 - img][v * nbx + u] != 0;
  }
  return __syncthreads_or(mine) != 0;
}

// As many blocks per SM as its threads allow (kFullSmBlocks): a block is a short chain of loads,
// a barrier and the codes.
__global__ void __launch_bounds__(kBlockW* kBlockH, kFullSmBlocks)
    census_kernel(const BatchRecord* __restrict__ batch) {
  after_previous_stage();
  // Rows start on 4-byte boundaries (kTw is a multiple of 4): census_9x7_row4 reads words.
  __shared__ __align__(16) std::uint8_t tile[kTh][kTw];
  static_assert(kTw % 4 == 0, "tile rows must be word aligned");
  const MemberArgs& a = *batch->member[blockIdx.z >> 1];
  const int img = blockIdx.z & 1;
  // Which level this block is in.
  int b = static_cast<int>(blockIdx.x), s = 0;
  for (; s < a.levels - 1; ++s) {
    const int n = tiles_of(a.level[s].width, a.level[s].height);
    if (b < n) break;
    b -= n;
  }
  const LevelBuffers& lv = a.level[s];
  const int w = lv.width, h = lv.height;
  const int tiles_x = (w + kBlockW - 1) / kBlockW;
  const int x0 = (b % tiles_x) * kBlockW, y0 = (b / tiles_x) * kTileH;
  if (y0 >= h) return;  // past the last level's tiles (the grid counts the largest member)
  if (a.modeling && !census_needed(lv, img, b % tiles_x, b / tiles_x)) return;
  const std::uint8_t* g = lv.gray[img];
  const int tid = threadIdx.y * kBlockW + threadIdx.x;
  // Rows of the halo past the top or bottom repeat the edge row; so do columns past the sides,
  // which only the first and last tile columns reach. Every other tile copies whole words (a
  // quarter of the loads and index arithmetic of copying bytes) where the rows are word aligned.
  const bool inside_x = x0 - kHalo >= 0 && x0 - kHalo + kTw <= w;
  if (inside_x &&
      ((reinterpret_cast<std::uintptr_t>(g) | static_cast<std::uintptr_t>(w)) & 3) == 0) {
    constexpr int kWords = kTw / 4;
    const std::uint8_t* g0 = g + (x0 - kHalo);
    for (int i = tid; i < kWords * kTh; i += kBlockW * kBlockH) {
      const int r = i / kWords, c = i - r * kWords;
      reinterpret_cast<std::uint32_t*>(tile[r])[c] =
          reinterpret_cast<const std::uint32_t*>(g0 + clamp_int(y0 - kHalo + r, 0, h - 1) * w)[c];
    }
  } else {
    for (int i = tid; i < kTw * kTh; i += kBlockW * kBlockH) {
      const int r = i / kTw, c = i - r * kTw;
      tile[r][c] = g[clamp_int(y0 - kHalo + r, 0, h - 1) * w + clamp_int(x0 - kHalo + c, 0, w - 1)];
    }
  }
  __syncthreads();
  // A thread's pixels: four of a row, (x .. x + 3, y); a warp covers four rows of the tile.
  const int group = threadIdx.x & 7, row = static_cast<int>(threadIdx.y) * 4 + (threadIdx.x >> 3);
  const int x = x0 + 4 * group, y = y0 + row;
  if (x >= w || y >= h) return;
  const int n = min(4, w - x);  // pixels of the four inside the image
  // On the tile, "clamping" to the tile cannot bite: the windows stay inside its halo.
  const std::uint8_t* t = &tile[0][0];
  const int tx = kHalo + 4 * group, ty = kHalo + row;
  const StereoParams& p = a.stereo;
  const int i0 = y * w + x;
  if (std::uint64_t* census = lv.census[img]) {
    if (p.census_width == 9 && p.census_height == 7) {  // the default
      std::uint64_t codes[4];
      census_9x7_row4(t, kTw, tx, ty, codes);
      if (n == 4 && (reinterpret_cast<std::uintptr_t>(census + i0) & 15) == 0) {
        // Two 16-byte stores: a warp writes whole sectors instead of a quarter of each per store.
        reinterpret_cast<ulonglong2*>(census + i0)[0] = make_ulonglong2(codes[0], codes[1]);
        reinterpret_cast<ulonglong2*>(census + i0)[1] = make_ulonglong2(codes[2], codes[3]);
      } else {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          if (k < n) census[i0 + k] = codes[k];
        }
      }
    } else {
      for (int k = 0; k < n; ++k)
        census[i0 + k] = census_at(t, kTw, kTh, kTw, tx + k, ty, p.census_width, p.census_height);
    }
  }
  if (std::uint8_t* ad = lv.ad[img]) {
    if (p.ad_mean_radius == 1) {  // the default
      const std::uint32_t packed = mean_removed_3x3_row4(t, kTw, tx, ty);
      if (n == 4 && (reinterpret_cast<std::uintptr_t>(ad + i0) & 3) == 0) {
        *reinterpret_cast<std::uint32_t*>(ad + i0) = packed;
      } else {
        for (int k = 0; k < n; ++k) ad[i0 + k] = static_cast<std::uint8_t>(packed >> (8 * k));
      }
    } else {
      for (int k = 0; k < n; ++k)
        ad[i0 + k] = mean_removed_at(t, kTw, kTh, kTw, tx + k, ty, p.ad_mean_radius);
    }
  }
}

}  // namespace

void launch_census(const BatchShape& shape, const BatchRecord* batch, cudaStream_t stream) {
  if (!shape.census && !shape.mean_removal) return;
  int blocks = 0;
  for (int s = 0; s < shape.levels; ++s)
    blocks += tiles_of(shape.level_width[s], shape.level_height[s]);
  launch_stage("census_kernel", shape.chained, census_kernel,
               dim3(static_cast<unsigned>(blocks), 1, static_cast<unsigned>(2 * shape.count)),
               dim3(kBlockW, kBlockH), 0, stream, batch);
}

}  // namespace stereod::cuda
