// Stage: the background model of both cameras at one level (BackgroundModel::process on the CPU,
// with the same per-pixel arithmetic from background_ops.hpp), coarsest level first, ONE kernel per
// level: classification, closing, learning and the block marks of a 32 x 16 tile.
//
// Why one kernel: the closing (dilate, then erode, radius r) of a pixel needs the raw decisions 2r
// around it. The block therefore classifies its tile and a 2r halo; the halo's decisions are
// recomputed by the neighbouring tiles too, but with the hierarchy most of them copy the parent
// (a bit test), and the tile's own pixels read their model once for both the test and the
// learning instead of once in each of two kernels. Decisions are binary, so the closing runs on
// bit rows in one warp: a row of the tile and its halo (at most 32 + 4 * 3 columns) is a 64-bit
// word, the horizontal max/min are shifts, the vertical ones shuffles between lanes.
#include <string>

#include "background/background_ops.hpp"
#include "kernels/device_common.cuh"
#include "kernels/launch.cuh"
#include "kernels/stages.hpp"

namespace stereod::cuda {
namespace {

constexpr int kMaxClosing = 3;            // BackgroundParams::closing_radius is validated to 0..3
constexpr int kModelTileW = kBlockW;      // one pixel per lane
constexpr int kModelTileH = 2 * kBlockH;  // two rows per thread
constexpr int kExtRows = kModelTileH + 4 * kMaxClosing;
static_assert(kExtRows <= 32, "the closing warp holds one extended row per lane");
static_assert(kModelTileW + 4 * kMaxClosing <= 64, "an extended row fits in 64 bits");
static_assert(kModelTileH == 2 * kBlockH && kModelTileW == kBlockW,
              "a tile is two of the kBlockW x kBlockH blocks that block_fg marks");
// The parent level's closed decision around the tile, as bits: 32 columns from x0 / 2 - 4 and 16
// rows from y0 / 2 - 4 cover the parents of the tile and its largest halo (x0 / 2 - 3 ..
// x0 / 2 + 18, y0 / 2 - 3 .. y0 / 2 + 10) with the 3 x 3 neighbourhood of each.
constexpr int kParentRows = 16;
constexpr int kParentMargin = 4;
static_assert(kParentMargin - kMaxClosing - 1 >= 0, "the parents of the halo's first row");
static_assert((kModelTileH + 2 * kMaxClosing - 1) / 2 + kParentMargin + 1 < kParentRows,
              "the parents of the halo's last row");
static_assert((kModelTileW + 2 * kMaxClosing - 1) / 2 + kParentMargin + 1 < 32,
              "the parents of the halo's last column");

// Sets bits of a shared 64-bit row with 32-bit atomics. A 64-bit atomicOr on shared memory is a
// compare-and-swap loop on sm_87 and sm_90 (ATOMS.CAST.SPIN.64), and the halo's pixels of one row,
// all ORing into the same word, kept retrying it (ncu on an H200 at 1280x720, level 0: 162,000
// tries for 9,400 ORs); a 32-bit OR is one native instruction. GPUs are little-endian: word 0 holds
// bits 0-31.
__device__ __forceinline__ void or_row_bits(unsigned long long* row, unsigned long long bits) {
  unsigned* const words = reinterpret_cast<unsigned*>(row);
  const unsigned lo = static_cast<unsigned>(bits), hi = static_cast<unsigned>(bits >> 32);
  if (lo) atomicOr(words, lo);
  if (hi) atomicOr(words + 1, hi);
}

// One pixel's sample and model. On the model's first frame the model is what initialising it
// writes (the sample itself, the initial variance): the neighbours' state may not be written yet.
struct PixelModel {
  std::uint8_t px[3] = {0, 0, 0};
  std::uint16_t mean[3] = {0, 0, 0};
  std::uint32_t var[3] = {0, 0, 0};
};

// A camera's planes at one level: the samples (H, S, V, or the gray level alone in kValue) and
// the copy of the model that frame n reads, looked up where a phase needs them: held through the
// kernel, the nine pointers would cost registers that the tile's own models need. The copy read
// is never written during the frame (the learning goes to the other copy), so a tile reads its
// halo's models as they were before any tile learned, as the CPU classifies every pixel before
// learning: __ldg is safe, and which tile runs first changes nothing.
template <int kChannels>
struct ModelPlanes {
  static constexpr int kFirst = kChannels == 1 ? kValue : 0;
  const std::uint8_t* sample[3] = {nullptr, nullptr, nullptr};
  const std::uint16_t* mean[3] = {nullptr, nullptr, nullptr};
  const std::uint32_t* var[3] = {nullptr, nullptr, nullptr};

  __device__ ModelPlanes(const LevelBuffers& lv, int cam, long long n) {
    const int copy = model_copy_read(n);
    for (int ch = kFirst; ch < 3; ++ch) {
      sample[ch] = kChannels == 3 ? lv.hsv[cam][ch] : lv.gray[cam];
      mean[ch] = lv.mean[copy][cam][ch];
      var[ch] = lv.var[copy][cam][ch];
    }
  }
  __device__ void load(int i, bool first, std::uint32_t var0, PixelModel& p) const {
    for (int ch = kFirst; ch < 3; ++ch) {
      p.px[ch] = __ldg(sample[ch] + i);
      p.mean[ch] = first ? static_cast<std::uint16_t>(p.px[ch] << 8) : __ldg(mean[ch] + i);
      p.var[ch] = first ? var0 : __ldg(var[ch] + i);
    }
  }
};

// In a gated graph, what a frame without foreground outputs (ForegroundSignal), at the tile's
// pixels (rows y and y + kBlockH of column x): this camera's view (the right one only where it is
// returned) and the left view's confidence, and `first` zeroes the semi-global error word.
__device__ void write_empty_outputs(const MemberArgs& a, int cam, int x, int y, int w, int h,
                                    bool first) {
  std::uint16_t* const disp = a.out_disp[cam];
  std::uint8_t* const confidence = cam == 0 ? a.out_confidence : nullptr;
  if (first && cam == 0 && a.out_sgm_cells) *a.out_sgm_cells = 0;
#pragma unroll
  for (int k = 0; k < 2; ++k, y += kBlockH) {
    if (x >= w || y >= h) continue;
    if (disp) disp[y * w + x] = kInvalidDisparity;
    if (confidence) confidence[y * w + x] = 0;
  }
}

// Programmatic dependent launch (launch.cuh; launch_background_model below): the levels are a chain
// of launches, the coarse ones short (ncu on an H100: 7.6, 7.5 and 13 us for 48, 192 and 768
// blocks), each drained before the next one started. A level's blocks now start while the coarser
// level's last ones run, load their own pixels' model (which no earlier kernel of the frame
// writes), then wait in after_previous_stage() until that kernel has finished and its writes are
// visible.

// Four blocks per SM (64 registers): the kernel waits on memory, and occupancy hides it.
template <int kChannels>
__global__ void __launch_bounds__(kBlockW* kBlockH, 4)
    model_level_kernel(const BatchRecord* __restrict__ batch, int level, ForegroundSignal signal) {
  constexpr int kFirst = ModelPlanes<kChannels>::kFirst;
  __shared__ unsigned long long raw_bits[kExtRows];  // bit c of row e: raw decision at (c, e)
  __shared__ std::uint32_t parent_bits[kParentRows];
  __shared__ std::uint32_t parent_uniform[kParentRows];  // 3 x 3 neighbourhood of one value
  __shared__ std::uint32_t closed_bits[kModelTileH];
  __shared__ unsigned tested_sum;

  const int m = blockIdx.z >> 1, cam = blockIdx.z & 1;
  const MemberArgs& a = *batch->member[m];
  const LevelBuffers& lv = a.level[level];
  const BackgroundFixed& f = a.fixed;
  const int w = lv.width, h = lv.height;
  const int x0 = blockIdx.x * kModelTileW, y0 = blockIdx.y * kModelTileH;
  const int lane = threadIdx.x, warp = threadIdx.y;
  const int tid = warp * kBlockW + lane;
  const long long n = batch->frames[m];
  const bool first = n == 0;  // the first frame only initialises the model
  const int r = a.closing_radius;
  const int halo = 2 * r;  // raw decisions needed around the tile
  const std::uint32_t var0 = a.initial_variance;
  const bool use_parent = a.hierarchy && level + 1 < a.levels;

  // The tile's own pixels, rows warp and warp + kBlockH, one column per lane: their model is
  // loaded first, so that its latency passes while the parent is staged, and stays in registers
  // for the learning below.
  const int x = x0 + lane;
  // First: the stores hold no registers while the model's loads below are waited on.
  if (signal.gated) write_empty_outputs(a, cam, x, y0 + warp, w, h, tid == 0 && x0 == 0 && y0 == 0);
  PixelModel own[2];
  std::uint16_t still[2] = {0, 0};
  std::uint8_t prev[2] = {0, 0};
  {
    const ModelPlanes<kChannels> planes(lv, cam, n);
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const int y = y0 + warp + k * kBlockH;
      if (x >= w || y >= h) continue;
      const int i = y * w + x;
      planes.load(i, first, var0, own[k]);
      if (!first) {
        still[k] = lv.still[cam][i];
        prev[k] = lv.prev[cam][i];
      }
    }
  }

  // Everything above reads only this level's state, which no kernel of this frame has written
  // yet. From here on the coarser level's decisions are needed: a kernel launched to overlap the
  // last one's tail (launch_background_model) waits for it here, and lets the next level's blocks
  // start.
  after_previous_stage();
  if (tid < kExtRows) raw_bits[tid] = 0;
  if (tid == 0) tested_sum = 0;
  // Hierarchy: a pixel whose parent's 3 x 3 block (clipped to the parent image) holds one value
  // copies it. Parent coordinates are clamped to the image while staging, which leaves every
  // clipped block's minimum and maximum as they are.
  const int px0 = (x0 >> 1) - kParentMargin, py0 = (y0 >> 1) - kParentMargin;
  int pw = 0, ph = 0;
  if (use_parent) {
    const LevelBuffers& pl = a.level[level + 1];
    pw = pl.width;
    ph = pl.height;
    const std::uint8_t* pc = pl.closed[cam];
    for (int row = warp; row < kParentRows; row += kBlockH) {
      const int gu = min(max(px0 + lane, 0), pw - 1), gv = min(max(py0 + row, 0), ph - 1);
      const unsigned bits = __ballot_sync(0xFFFFFFFFu, pc[gv * pw + gu] != 0);
      if (lane == 0) parent_bits[row] = bits;
    }
    __syncthreads();
    if (warp == 0 && lane < kParentRows) {
      std::uint32_t any = 0, all = 0xFFFFFFFFu;  // over the 3 x 3 block at each bit
      for (int v = max(lane - 1, 0); v <= min(lane + 1, kParentRows - 1); ++v) {
        const std::uint32_t b = parent_bits[v];
        any |= b | (b << 1) | (b >> 1);
        all &= b & (b << 1) & (b >> 1);
      }
      parent_uniform[lane] = ~(any ^ all);
    }
  }
  __syncthreads();

  // The parent's decision where (x, y) lies under a uniform parent block: 0 or 1; else -1.
  auto parent_decision = [&](int px, int py) -> int {
    if (!use_parent) return -1;
    const int lx = min(px >> 1, pw - 1) - px0, ly = min(py >> 1, ph - 1) - py0;
    return (parent_uniform[ly] >> lx) & 1u ? static_cast<int>((parent_bits[ly] >> lx) & 1u) : -1;
  };

  int tested = 0;
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const int t = warp + k * kBlockH, y = y0 + t;
    bool d = false;
    if (x < w && y < h) {
      const int copied = parent_decision(x, y);
      if (copied >= 0) {
        d = copied != 0;
      } else {
        d = classify_pixel(own[k].px, own[k].mean, own[k].var, kChannels, f) != 0;
        ++tested;
      }
    }
    const unsigned bits = __ballot_sync(0xFFFFFFFFu, d);
    if (lane == 0 && bits) {
      or_row_bits(&raw_bits[halo + t], static_cast<unsigned long long>(bits) << halo);
    }
  }
  tested = __reduce_add_sync(0xFFFFFFFFu, tested);
  if (lane == 0 && tested) atomicAdd(&tested_sum, static_cast<unsigned>(tested));

  // The halo, for the closing only: 2 * halo rows above and below (64 slots per row, those past
  // the extended width idle), then halo columns left and right of the tile's 16 rows.
  const int ext_w = kModelTileW + 2 * halo;
  const int slots = 2 * halo * 64 + kModelTileH * 2 * halo;
  if (tid < slots) {
    for (int k = tid; k < slots; k += kBlockW * kBlockH) {
      int e, col;
      if (k < 2 * halo * 64) {
        const int row = k >> 6;
        col = k & 63;
        if (col >= ext_w) continue;
        e = row < halo ? row : row + kModelTileH;
      } else {
        const int j = k - 2 * halo * 64;
        const int side = j / kModelTileH;  // 0 .. 2 * halo - 1
        e = halo + (j % kModelTileH);
        col = side < halo ? side : side + kModelTileW;
      }
      const int gx = x0 - halo + col, gy = y0 - halo + e;
      if (gx < 0 || gx >= w || gy < 0 || gy >= h) continue;  // outside: 0, as on the CPU
      int d = parent_decision(gx, gy);
      if (d < 0) {
        // The planes looked up here, for the few halo pixels tested: held through the loop,
        // their pointers would cost registers that the tile's own models need.
        PixelModel p;
        ModelPlanes<kChannels>(lv, cam, n).load(gy * w + gx, first, var0, p);
        d = classify_pixel(p.px, p.mean, p.var, kChannels, f);
      }
      if (d) or_row_bits(&raw_bits[e], 1ull << col);
    }
  }
  __syncthreads();

  // The closing, in warp 0: lane e holds extended row e. Outside the image a raw decision is 0
  // (neutral for the dilation) and a dilated one 1 (neutral for the erosion), so every in-image
  // window is the CPU's clipped one (morphology.cpp). Rows and columns past what each step needs
  // hold garbage that no kept bit reads.
  const bool warming = n < a.warmup;
  if (warp == 0) {
    const int e = lane;
    const unsigned long long row = e < kModelTileH + 2 * halo ? raw_bits[e] : 0ull;
    unsigned long long hd = row;
    for (int u = 1; u <= r; ++u) hd |= (row << u) | (row >> u);
    unsigned long long vd = hd;
    for (int u = 1; u <= r; ++u) {
      vd |= __shfl_up_sync(0xFFFFFFFFu, hd, u) | __shfl_down_sync(0xFFFFFFFFu, hd, u);
    }
    const int gy = y0 - halo + e;
    const int lo = max(0, halo - x0), hi = min(ext_w, w - x0 + halo);  // in-image columns
    const unsigned long long in_cols =
        ((hi >= 64 ? 0ull : (1ull << hi)) - 1ull) & ~((1ull << lo) - 1ull);
    const unsigned long long dil = gy >= 0 && gy < h ? (vd | ~in_cols) : ~0ull;
    unsigned long long he = dil;
    for (int u = 1; u <= r; ++u) he &= (dil << u) & (dil >> u);
    unsigned long long ve = he;
    for (int u = 1; u <= r; ++u) {
      ve &= __shfl_up_sync(0xFFFFFFFFu, he, u) & __shfl_down_sync(0xFFFFFFFFu, he, u);
    }
    const std::uint32_t closed = static_cast<std::uint32_t>(ve >> halo);
    const int t = e - halo;  // tile row
    const bool own_row = t >= 0 && t < kModelTileH;
    if (own_row) closed_bits[t] = closed;
    // The marks of the tile's two kBlockW x kBlockH blocks: any mask bit on an in-image pixel
    // (every in-image pixel while warming up).
    const std::uint32_t in32 = w - x0 >= 32 ? 0xFFFFFFFFu : (1u << (w - x0)) - 1u;
    const bool fg_row = own_row && y0 + t < h && ((warming ? in32 : closed & in32) != 0);
    const unsigned rows = __ballot_sync(0xFFFFFFFFu, fg_row) >> halo;
    if (lane < 2 && y0 + lane * kBlockH < h) {
      const bool any = ((rows >> (lane * kBlockH)) & ((1u << kBlockH) - 1u)) != 0;
      lv.block_fg[cam][(2 * blockIdx.y + lane) * gridDim.x + blockIdx.x] = any ? 1 : 0;
      // Read first: once set, the other blocks with foreground need not queue on the word.
      if (any && signal.word && !*reinterpret_cast<volatile std::uint32_t*>(signal.word))
        atomicOr(signal.word, 1u);
      std::uint32_t* const own = level == 0 ? a.out_foreground_word : nullptr;
      if (any && own && !*reinterpret_cast<volatile std::uint32_t*>(own)) atomicOr(own, 1u);
    }
  }
  __syncthreads();
  if (tid == 0 && tested_sum) {
    atomicAdd(a.tested + cam * a.levels + level, static_cast<unsigned long long>(tested_sum));
  }

  // Output and learning of the tile's own pixels. The model goes to the copy this frame does not
  // read, every pixel of it (the copy holds the state of two frames ago); the rest of the state
  // (still, prev) is the pixel's own and is stored in place, only where it changed.
  std::uint16_t* const still_plane = lv.still[cam];
  std::uint8_t* const prev_plane = lv.prev[cam];
  std::uint8_t* const mask_plane = lv.mask[cam];
  // The closed decision is read by the next finer level's hierarchy and by the right camera's
  // widening only; the left camera's finest mask is also the frame's foreground output.
  std::uint8_t* const closed_plane =
      level > 0 || (cam == 1 && a.target_margin > 0) ? lv.closed[cam] : nullptr;
  std::uint8_t* const out_fg = level == 0 && cam == 0 ? a.out_fg : nullptr;
  const int warmup = a.warmup;
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const int t = warp + k * kBlockH, y = y0 + t;
    if (x >= w || y >= h) continue;
    const int i = y * w + x;
    const std::uint8_t closed = static_cast<std::uint8_t>((closed_bits[t] >> lane) & 1u);
    if (closed_plane) closed_plane[i] = closed;
    const std::uint8_t mask = warming ? 1 : closed;
    mask_plane[i] = mask;
    if (out_fg) out_fg[i] = mask ? 255 : 0;
    const PixelModel& p = own[k];
    const int copy = model_copy_written(n);
    // Stores the pixel's model into the written copy. Its planes are all looked up before the
    // first store: after a store the compiler must assume that the member's pointers may have
    // changed, so it looked each one up again after the previous store, a chain of six dependent
    // loads (ncu: a stall before each store). Called after the learning, whose registers are
    // free again by then.
    auto store_model = [&](const std::uint16_t mean[3], const std::uint32_t var[3]) {
      std::uint16_t* mean_out[3] = {nullptr, nullptr, nullptr};
      std::uint32_t* var_out[3] = {nullptr, nullptr, nullptr};
      for (int ch = kFirst; ch < 3; ++ch) {
        mean_out[ch] = lv.mean[copy][cam][ch];
        var_out[ch] = lv.var[copy][cam][ch];
      }
      for (int ch = kFirst; ch < 3; ++ch) {
        mean_out[ch][i] = mean[ch];
        var_out[ch][i] = var[ch];
      }
    };
    if (first) {
      store_model(p.mean, p.var);
      still_plane[i] = 0;
      prev_plane[i] = p.px[kValue];
      continue;
    }
    std::uint16_t mean[3] = {p.mean[0], p.mean[1], p.mean[2]};
    std::uint32_t var[3] = {p.var[0], p.var[1], p.var[2]};
    std::uint16_t* mp[3] = {&mean[0], &mean[1], &mean[2]};
    std::uint32_t* vp[3] = {&var[0], &var[1], &var[2]};
    std::uint16_t st = still[k];
    std::uint8_t pv = prev[k];
    learn_pixel(p.px, mp, vp, st, pv, kChannels, closed != 0, n, warmup, var0, f);
    store_model(mean, var);
    if (st != still[k]) still_plane[i] = st;
    if (pv != prev[k]) prev_plane[i] = pv;
  }

  // Ghosts seen in depth (DepthGhosts::record_decision on the CPU): the left camera's finest
  // decision goes into this frame's record, whose disparity its stereo part adds (what the record
  // of the frame depth_lag before revealed, the pyramid kernel applied). After the learning,
  // from the closed bits: the colour model has no register to spare while its pixels are held.
  // The tile's flag too (MemberArgs::depth_tiles: a model tile is a kTileW x kTileH tile).
  static_assert(kModelTileW == kTileW && kModelTileH == kTileH, "one flag per model tile");
  std::uint16_t* const records = level == 0 && cam == 0 ? depth_record_of(a, n) : nullptr;
  if (!records) return;
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const int t = warp + k * kBlockH, y = y0 + t;
    if (x < w && y < h)
      records[y * w + x] = depth_record(kDepthNone, (closed_bits[t] >> lane) & 1u);
  }
  if (tid == 0) {
    std::uint32_t any = 0;
    for (int t = 0; t < kModelTileH; ++t) any |= closed_bits[t];
    depth_tiles_of(a, n)[blockIdx.y * gridDim.x + blockIdx.x] = any != 0 ? 1 : 0;
  }
}

// The right camera's matching mask (cpu_pair_processor.cpp: dilate_mask of its decision by
// target_margin, clipped to the image): the block and m pixels around it staged, then the maximum
// over rows, then over columns. While warming up every pixel is foreground, as the model kernel
// wrote.
__global__ void widen_kernel(const BatchRecord* __restrict__ batch, int level) {
  constexpr int kM = kMaxTargetMargin;
  __shared__ std::uint8_t src[kBlockH + 2 * kM][kBlockW + 2 * kM];
  __shared__ std::uint8_t rows[kBlockH + 2 * kM][kBlockW];
  constexpr int kCam = 1;
  const int m = blockIdx.z;
  const MemberArgs& a = *batch->member[m];
  const LevelBuffers& lv = a.level[level];
  const int w = lv.width, h = lv.height;
  const int x0 = blockIdx.x * kBlockW, y0 = blockIdx.y * kBlockH;
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  const int tid = threadIdx.y * kBlockW + threadIdx.x;
  const bool warming = batch->frames[m] < a.warmup;
  const int r = a.target_margin;
  const std::uint8_t* closed = lv.closed[kCam];
  // Local (i, j) is image (x0 - r + j, y0 - r + i); outside the image: 0 (no foreground).
  const int rw = kBlockW + 2 * r, rh = kBlockH + 2 * r;
  for (int k = tid; k < rw * rh; k += kBlockW * kBlockH) {
    const int i = k / rw, j = k - i * rw;
    const int gx = x0 - r + j, gy = y0 - r + i;
    src[i][j] = (gx >= 0 && gx < w && gy >= 0 && gy < h) ? closed[gy * w + gx] : 0;
  }
  __syncthreads();
  for (int k = tid; k < kBlockW * rh; k += kBlockW * kBlockH) {
    const int i = k / kBlockW, j = k - i * kBlockW;
    std::uint8_t v = 0;
    for (int u = 0; u <= 2 * r; ++u) v |= src[i][j + u];
    rows[i][j] = v;
  }
  __syncthreads();
  std::uint8_t mask = 0;
  if (x < w && y < h) {
    std::uint8_t v = 0;
    for (int u = 0; u <= 2 * r; ++u) v |= rows[threadIdx.y + u][threadIdx.x];
    mask = warming ? 1 : v;
    lv.mask[kCam][y * w + x] = mask;
  }
  const int any = __syncthreads_or(mask != 0);
  if (tid == 0) lv.block_fg[kCam][blockIdx.y * gridDim.x + blockIdx.x] = any ? 1 : 0;
}

}  // namespace

void launch_background_widen(const BatchShape& shape, const BatchRecord* batch, int level,
                             cudaStream_t stream) {
  widen_kernel<<<member_grid(shape.level_width[level], shape.level_height[level], shape.count),
                 dim3(kBlockW, kBlockH), 0, stream>>>(batch, level);
  STEREOD_CUDA_LAUNCHED("widen_kernel");
}

void launch_background_model(const BatchShape& shape, const BatchRecord* batch, int level,
                             const ForegroundSignal& signal, cudaStream_t stream) {
  const dim3 grid(
      static_cast<unsigned>((shape.level_width[level] + kModelTileW - 1) / kModelTileW),
      static_cast<unsigned>((shape.level_height[level] + kModelTileH - 1) / kModelTileH),
      static_cast<unsigned>(2 * shape.count));
  const dim3 block(kBlockW, kBlockH);
  // Every level but the coarsest overlaps the one before it; the coarsest follows the pyramid,
  // whose output it reads from its first load on.
  const bool chained = level + 1 < shape.levels;
  // The model's channels are the batch's (the batch key holds the color mode).
  const auto kernel = shape.color ? model_level_kernel<3> : model_level_kernel<1>;
  launch_stage("model_level_kernel", chained, kernel, grid, block, 0, stream, batch, level, signal);
}

}  // namespace stereod::cuda
