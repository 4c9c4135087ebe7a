// Stage: the pyramid. Level s+1 is the rounded 2x2 mean of level s (downsample_at in pixel_ops.hpp;
// the color pyramid of the background model likewise, channel by channel), so a block that owns a
// 64 x 32 region of the finest level owns the matching region of every coarser level too, odd
// sizes included (the clamped second child lies in the same region). One launch therefore builds
// every level of both cameras from shared memory; the CPU builds them level after level. The HSV
// planes of the color model are computed here as well, and a frame that arrives in color only
// gets its gray level 0 as the BT.601 luma.
#include "background/background_ops.hpp"
#include "kernels/device_common.cuh"
#include "kernels/stages.hpp"

namespace stereod::cuda {
namespace {

constexpr int kRegionW = 64;
constexpr int kRegionH = 32;
constexpr int kThreads = kBlockW * kBlockH;
static_assert(kRegionW * kRegionH % kThreads == 0 && kRegionW % 32 == 0,
              "whole rounds of whole warps");
static_assert(kRegionW % kTileW == 0 && kRegionH % kTileH == 0, "whole tiles in a region");
static_assert((kRegionH >> (kMaxLevels - 1)) >= 1, "every level keeps a row of the region");

__device__ __forceinline__ std::uint8_t mean4(const std::uint8_t* src, int stride, int x0, int y0,
                                              int x1, int y1) {
  const int sum =
      src[y0 * stride + x0] + src[y0 * stride + x1] + src[y1 * stride + x0] + src[y1 * stride + x1];
  return static_cast<std::uint8_t>((sum + 2) >> 2);
}

// kGhosts: background.depth_ghosts (the batch key holds it), an instantiation of its own so
// that the default one carries nothing of it.
template <bool kGhosts>
__global__ void __launch_bounds__(kThreads)
    pyramid_kernel(const BatchRecord* __restrict__ batch, ListCounters* counters, int lists) {
  // Ping-pong buffers: even levels in A, odd in B (a level's region is a quarter of the last's).
  __shared__ std::uint8_t gray_a[kRegionW * kRegionH];
  __shared__ std::uint8_t gray_b[kRegionW * kRegionH / 4];
  __shared__ std::uint8_t rgb_a[3][kRegionW * kRegionH];
  __shared__ std::uint8_t rgb_b[3][kRegionW * kRegionH / 4];
  // Depth ghosts, finest level, one bit a pixel: revealed (kDepthRevealed) and in front
  // (kDepthInFront).
  __shared__ std::uint32_t revealed_bits[kRegionW * kRegionH / 32];
  __shared__ std::uint32_t front_bits[kRegionW * kRegionH / 32];

  const MemberArgs& a = *batch->member[blockIdx.z >> 1];
  const int cam = blockIdx.z & 1;
  const int tid = threadIdx.y * kBlockW + threadIdx.x;
  const int levels = a.levels;
  if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && tid < lists) counters[tid] = {};
  if (blockIdx.x == 0 && blockIdx.y == 0 && cam == 0 && a.tested && tid < 2 * levels) {
    a.tested[tid] = 0;  // the background statistics of this frame start here
    if (tid == 0 && a.out_foreground_word) *a.out_foreground_word = 0;
  }
  const bool hsv = a.modeling && a.color;
  const std::uint8_t* src_gray = a.src_gray[cam];
  const std::uint8_t* src_rgb = a.src_rgb[cam];
  const bool load_rgb = hsv || src_gray == nullptr;
  const int x0 = blockIdx.x * kRegionW, y0 = blockIdx.y * kRegionH;
  // Ghosts seen in depth (background.depth_ghosts; DepthGhosts::flags and
  // BackgroundModel::apply_depth_flags on the CPU), left camera, before the model learns: the
  // record of the frame depth_lag before (its disparity written by that frame's stereo part,
  // which the engine's launch waits for: PairState::depth_written) teaches the static depth while
  // that frame warmed up; a pixel it reveals, as the record before did (shown_again), gets
  // revealed_counters, and one it shows in front as the record before did (depth_in_front,
  // background.depth_in_front) in_front_counters -- at the finest level and at every coarser pixel
  // whose top-left finest pixel it is, which lies in this block's region too. Here rather than in
  // the model kernel, whose registers are all taken. The model parts of a pair run one after the
  // other (one stream), so the static depth needs no atomics.
  const long long n = batch->frames[blockIdx.z >> 1];
  const long long seen = n - a.fixed.depth_lag;  // the frame whose record this one reads
  std::uint16_t* const ghost_records =
      kGhosts && cam == 0 && a.modeling && seen >= 0 ? depth_record_of(a, seen) : nullptr;
  const bool learns = seen < a.warmup;
  bool ghost_reads = ghost_records && seen >= a.depth_from;
  if (ghost_reads && !learns) {
    // After the warm-up only a foreground record can be revealed or in front: a region whose
    // finest tiles (2 x 2 of them, MemberArgs::depth_tiles) had none in that frame has nothing to
    // read.
    const LevelBuffers& lv = a.level[0];
    const std::uint8_t* tiles = depth_tiles_of(a, seen);
    const int tx = blockIdx.x * (kRegionW / kTileW), ty = blockIdx.y * (kRegionH / kTileH);
    bool any = false;
    for (int j = 0; j < kRegionH / kTileH; ++j) {
      for (int i = 0; i < kRegionW / kTileW; ++i) {
        if (tx + i < lv.tiles_x && ty + j < lv.tiles_y)
          any |= tiles[(ty + j) * lv.tiles_x + tx + i] != 0;
      }
    }
    ghost_reads = any;
  }

  {
    const LevelBuffers& lv = a.level[0];
    const int w = lv.width, h = lv.height;
    for (int i = tid; i < kRegionW * kRegionH; i += kThreads) {
      const int lx = i % kRegionW, ly = i / kRegionW;
      const int gx = x0 + lx, gy = y0 + ly;
      if (gx >= w || gy >= h) continue;
      const int idx = gy * w + gx;
      int r = 0, g = 0, b = 0;
      if (load_rgb) {
        const std::uint8_t* p = src_rgb + 3 * idx;
        r = p[0];
        g = p[1];
        b = p[2];
        rgb_a[0][i] = static_cast<std::uint8_t>(r);
        rgb_a[1][i] = static_cast<std::uint8_t>(g);
        rgb_a[2][i] = static_cast<std::uint8_t>(b);
      }
      std::uint8_t v;
      if (src_gray) {
        v = src_gray[idx];
      } else {
        v = luma_bt601(r, g, b);
        lv.gray_out[cam][idx] = v;
      }
      gray_a[i] = v;
      if (hsv) {
        rgb_to_hsv(r, g, b, lv.hsv[cam][kHue][idx], lv.hsv[cam][kSaturation][idx],
                   lv.hsv[cam][kValue][idx]);
      }
    }
  }
  if (ghost_reads || (kGhosts && cam == 0 && a.modeling && a.depth_records && n == a.depth_from)) {
    const LevelBuffers& lv = a.level[0];
    const int w = lv.width, h = lv.height;
    for (int i = tid; i < kRegionW * kRegionH; i += kThreads) {  // every thread every round
      const int gx = x0 + i % kRegionW, gy = y0 + i / kRegionW;
      bool shown = false, front = false;
      if (gx < w && gy < h) {
        const int idx = gy * w + gx;
        if (n == a.depth_from) {
          a.depth_static[idx] = kDepthNone;  // the records start here: learned afresh
          a.depth_last[idx] = kDepthShownNever;
        } else if (ghost_reads) {
          // Every load first, none waiting on another: an object's pixels in front of the scene
          // are a good share of the foreground, and a load issued only where a record shows
          // something put a second and a third memory latency in line (measured: 3.5 % of the
          // 16 % row). Where it shows nothing, "last" and the counters are read for nothing.
          const std::uint16_t record = ghost_records[idx];
          const std::uint16_t before = a.depth_static[idx];
          std::uint32_t last = a.depth_last[idx];
          const std::uint16_t counters = lv.still[0][idx];
          std::uint16_t st = before;
          int kind =
              depth_shows(record, learns, st, a.fixed.depth_farther_q8, a.fixed.depth_in_front);
          if (st != before) a.depth_static[idx] = st;
          if (kind) {
            kind = shown_again(kind, seen, last);
            a.depth_last[idx] = last;
          }
          if (kind) lv.still[0][idx] = depth_flagged_counters(counters, kind, a.fixed.depth_lag);
          shown = kind == kDepthRevealed;
          front = kind == kDepthInFront;
        }
      }
      // A warp holds 32 pixels of one region row: their flags are one word each.
      const unsigned bits = __ballot_sync(0xFFFFFFFFu, shown);
      const unsigned front_word = __ballot_sync(0xFFFFFFFFu, front);
      if (threadIdx.x == 0) {
        revealed_bits[i / 32] = bits;
        front_bits[i / 32] = front_word;
      }
    }
  }
  __syncthreads();

  for (int s = 1; s < levels; ++s) {
    const LevelBuffers& lv = a.level[s];
    const int ws = lv.width, hs = lv.height;
    const int wf = a.level[s - 1].width, hf = a.level[s - 1].height;
    const int ox = x0 >> s, oy = y0 >> s, rw = kRegionW >> s, rh = kRegionH >> s;
    const int fox = x0 >> (s - 1), foy = y0 >> (s - 1), frw = kRegionW >> (s - 1);
    const bool odd = (s & 1) != 0;
    const std::uint8_t* fine = odd ? gray_a : gray_b;
    std::uint8_t* coarse = odd ? gray_b : gray_a;
    for (int i = tid; i < rw * rh; i += kThreads) {
      const int lx = i % rw, ly = i / rw;
      const int gx = ox + lx, gy = oy + ly;
      if (gx >= ws || gy >= hs) continue;
      // The children in the finer level, clamped at its edge (odd sizes), in region coordinates.
      const int cx0 = 2 * gx - fox, cy0 = 2 * gy - foy;
      const int cx1 = min(2 * gx + 1, wf - 1) - fox, cy1 = min(2 * gy + 1, hf - 1) - foy;
      const std::uint8_t v = mean4(fine, frw, cx0, cy0, cx1, cy1);
      coarse[i] = v;
      const int idx = gy * ws + gx;
      lv.gray_out[cam][idx] = v;
      if (ghost_reads) {
        const int f = ((ly << s) * kRegionW) + (lx << s);  // its top-left finest pixel
        const int kind = (revealed_bits[f / 32] >> (f % 32)) & 1u ? kDepthRevealed
                         : (front_bits[f / 32] >> (f % 32)) & 1u  ? kDepthInFront
                                                                  : 0;
        if (kind)
          lv.still[0][idx] = depth_flagged_counters(lv.still[0][idx], kind, a.fixed.depth_lag);
      }
      if (hsv) {
        std::uint8_t c[3];
        for (int ch = 0; ch < 3; ++ch) {
          const std::uint8_t* f = odd ? rgb_a[ch] : rgb_b[ch];
          c[ch] = mean4(f, frw, cx0, cy0, cx1, cy1);
          (odd ? rgb_b[ch] : rgb_a[ch])[i] = c[ch];
        }
        rgb_to_hsv(c[0], c[1], c[2], lv.hsv[cam][kHue][idx], lv.hsv[cam][kSaturation][idx],
                   lv.hsv[cam][kValue][idx]);
      }
    }
    __syncthreads();
  }
}

}  // namespace

void launch_pyramid(const BatchShape& shape, const BatchRecord* batch, ListCounters* counters,
                    int levels, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((shape.width + kRegionW - 1) / kRegionW),
                  static_cast<unsigned>((shape.height + kRegionH - 1) / kRegionH),
                  static_cast<unsigned>(2 * shape.count));
  if (shape.depth_ghosts) {
    pyramid_kernel<true><<<grid, dim3(kBlockW, kBlockH), 0, stream>>>(batch, counters, levels);
  } else {
    pyramid_kernel<false><<<grid, dim3(kBlockW, kBlockH), 0, stream>>>(batch, counters, levels);
  }
  STEREOD_CUDA_LAUNCHED("pyramid_kernel");
}

}  // namespace stereod::cuda
