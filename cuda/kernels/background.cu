// Stage: the background model of both cameras at one level (BackgroundModel::process on the CPU,
// with the same per-pixel arithmetic from background_ops.hpp), coarsest level first.
// classify: initialise on the first frame, then test each pixel, or copy the decision of a parent
// block that is uniformly foreground or background (the hierarchy).
// close_learn: close the decision (dilate, then erode), learn from the frame, and mark which
// 32 x 8 blocks hold foreground: the matcher skips the tiles that hold none.
#include "background/background_ops.hpp"
#include "kernels/device_common.cuh"
#include "kernels/stages.hpp"

namespace stereod::cuda {
namespace {

constexpr int kMaxClosing = 3;
constexpr int kHalo = 2 * kMaxClosing;

struct CameraLevel {
  const std::uint8_t* planes[3];
  std::uint16_t* mean[3];
  std::uint32_t* var[3];
};

__device__ __forceinline__ CameraLevel camera_level(const MemberArgs& a, const LevelBuffers& lv,
                                                    int cam) {
  CameraLevel c;
  for (int ch = 0; ch < 3; ++ch) {
    c.planes[ch] = a.color ? lv.hsv[cam][ch] : (ch == kValue ? lv.gray[cam] : nullptr);
    c.mean[ch] = lv.mean[cam][ch];
    c.var[ch] = lv.var[cam][ch];
  }
  return c;
}

__global__ void classify_kernel(const BatchRecord* __restrict__ batch, int level) {
  __shared__ unsigned tested_sum;
  const int m = blockIdx.z >> 1, cam = blockIdx.z & 1;
  const MemberArgs& a = *batch->member[m];
  const LevelBuffers& lv = a.level[level];
  const CameraLevel c = camera_level(a, lv, cam);
  const int channels = a.color ? 3 : 1;
  const int w = lv.width, h = lv.height;
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  const long long n = batch->frames[m];
  bool tested = false;
  if (x < w && y < h) {
    const int i = y * w + x;
    if (n == 0) {
      for (int ch = 0; ch < 3; ++ch) {
        if (channels == 1 && ch != kValue) continue;
        c.mean[ch][i] = static_cast<std::uint16_t>(c.planes[ch][i] << 8);
        c.var[ch][i] = a.initial_variance;
      }
      lv.still[cam][i] = 0;
      lv.prev[cam][i] = c.planes[kValue][i];
    }
    std::uint8_t decision = 0;
    bool copy = false;
    const std::uint8_t* parent_closed =
        level + 1 < a.levels ? a.level[level + 1].closed[cam] : nullptr;
    if (a.hierarchy && parent_closed) {
      const int pw = a.level[level + 1].width, ph = a.level[level + 1].height;
      const int cx = min(x / 2, pw - 1), cy = min(y / 2, ph - 1);
      const std::uint8_t first = parent_closed[cy * pw + cx];
      copy = true;
      for (int v = max(0, cy - 1); v <= min(ph - 1, cy + 1) && copy; ++v) {
        for (int u = max(0, cx - 1); u <= min(pw - 1, cx + 1); ++u) {
          if (parent_closed[v * pw + u] != first) {
            copy = false;
            break;
          }
        }
      }
      decision = first;
    }
    if (!copy) {
      std::uint8_t px[3] = {0, 0, 0};
      std::uint16_t mean[3] = {0, 0, 0};
      std::uint32_t var[3] = {0, 0, 0};
      for (int ch = 0; ch < 3; ++ch) {
        if (channels == 1 && ch != kValue) continue;
        px[ch] = c.planes[ch][i];
        mean[ch] = c.mean[ch][i];
        var[ch] = c.var[ch][i];
      }
      decision = classify_pixel(px, mean, var, channels, a.fixed);
      tested = true;
    }
    lv.raw[cam][i] = decision;
  }
  // The count of pixels tested individually, for the statistics: one atomic per block.
  block_add(a.tested + cam * a.levels + level, tested ? 1u : 0u, &tested_sum);
}

__global__ void close_learn_kernel(const BatchRecord* __restrict__ batch, int level) {
  // The closing as morphology.cpp does it, separably: a row pass, then a column pass, for the
  // dilation and then the erosion, each over in-image pixels only (outside the image a pixel is 0
  // for the maximum and 1 for the minimum, which leaves each window as the CPU's).
  constexpr int kTw = kBlockW + 2 * kHalo, kTh = kBlockH + 2 * kHalo;
  __shared__ std::uint8_t raw[kTh][kTw];
  __shared__ std::uint8_t tmp[kTh][kTw];
  __shared__ std::uint8_t dil[kTh][kTw];
  const int m = blockIdx.z >> 1, cam = blockIdx.z & 1;
  const MemberArgs& a = *batch->member[m];
  const LevelBuffers& lv = a.level[level];
  const CameraLevel c = camera_level(a, lv, cam);
  const int channels = a.color ? 3 : 1;
  const int x0 = blockIdx.x * kBlockW, y0 = blockIdx.y * kBlockH;
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  const int w = lv.width, h = lv.height;
  const long long n = batch->frames[m];
  const bool warming = n < a.warmup;
  const int r = a.closing_radius;
  const int tid = threadIdx.y * kBlockW + threadIdx.x;
  const std::uint8_t* raw_in = lv.raw[cam];

  if (r > 0) {
    // Local (i, j) is image (x0 - 2r + j, y0 - 2r + i): the raw decisions 2r around the block.
    const int rw = kBlockW + 4 * r, rh = kBlockH + 4 * r;
    for (int k = tid; k < rw * rh; k += kBlockW * kBlockH) {
      const int i = k / rw, j = k - i * rw;
      const int gx = x0 - 2 * r + j, gy = y0 - 2 * r + i;
      raw[i][j] = (gx >= 0 && gx < w && gy >= 0 && gy < h) ? raw_in[gy * w + gx] : 0;
    }
    __syncthreads();
    // Dilation of the block and r around it: rows, then columns.
    for (int k = tid; k < (rw - 2 * r) * rh; k += kBlockW * kBlockH) {
      const int i = k / (rw - 2 * r), j = r + k - i * (rw - 2 * r);
      std::uint8_t v = 0;
      for (int u = -r; u <= r; ++u) v |= raw[i][j + u];
      tmp[i][j] = v;
    }
    __syncthreads();
    for (int k = tid; k < (rw - 2 * r) * (rh - 2 * r); k += kBlockW * kBlockH) {
      const int i = r + k / (rw - 2 * r), j = r + k % (rw - 2 * r);
      const int gx = x0 - 2 * r + j, gy = y0 - 2 * r + i;
      std::uint8_t v = 0;
      for (int u = -r; u <= r; ++u) v |= tmp[i + u][j];
      dil[i][j] = (gx >= 0 && gx < w && gy >= 0 && gy < h) ? v : 1;
    }
    __syncthreads();
    // Erosion of the block: rows, then columns.
    for (int k = tid; k < kBlockW * (rh - 2 * r); k += kBlockW * kBlockH) {
      const int i = r + k / kBlockW, j = 2 * r + k % kBlockW;
      std::uint8_t v = 1;
      for (int u = -r; u <= r; ++u) v &= dil[i][j + u];
      tmp[i][j] = v;
    }
    __syncthreads();
  }
  const bool inside = x < w && y < h;
  std::uint8_t mask = 0;
  if (inside) {
    const int i = y * w + x;
    std::uint8_t closed;
    if (r > 0) {
      const int ti = 2 * r + threadIdx.y, tj = 2 * r + threadIdx.x;
      std::uint8_t v = 1;
      for (int u = -r; u <= r; ++u) v &= tmp[ti + u][tj];
      closed = v;
    } else {
      closed = raw_in[i];
    }
    lv.closed[cam][i] = closed;
    mask = warming ? 1 : closed;
    lv.mask[cam][i] = mask;
    if (level == 0 && cam == 0 && a.out_fg) a.out_fg[i] = mask ? 255 : 0;
    if (n > 0) {  // the first frame only initialised the model
      std::uint8_t px[3] = {0, 0, 0};
      std::uint16_t* mean[3] = {nullptr, nullptr, nullptr};
      std::uint32_t* var[3] = {nullptr, nullptr, nullptr};
      for (int ch = 0; ch < 3; ++ch) {
        if (channels == 1 && ch != kValue) continue;
        px[ch] = c.planes[ch][i];
        mean[ch] = &c.mean[ch][i];
        var[ch] = &c.var[ch][i];
      }
      learn_pixel(px, mean, var, lv.still[cam][i], lv.prev[cam][i], channels, closed != 0, n,
                  a.warmup, a.initial_variance, a.fixed);
    }
  }
  // Whether this block holds foreground: the work lists of the matcher are built from this.
  const int any = __syncthreads_or(mask != 0);
  if (tid == 0) lv.block_fg[cam][blockIdx.y * gridDim.x + blockIdx.x] = any ? 1 : 0;
}

// The right camera's matching mask (cpu_pair_processor.cpp: dilate_mask of its decision by
// target_margin, clipped to the image): the block and m pixels around it staged, then the maximum
// over rows, then over columns. While warming up every pixel is foreground, as close_learn wrote.
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

void launch_background_classify(const BatchShape& shape, const BatchRecord* batch, int level,
                                cudaStream_t stream) {
  classify_kernel<<<member_grid(shape.level_width[level], shape.level_height[level],
                                2 * shape.count),
                    dim3(kBlockW, kBlockH), 0, stream>>>(batch, level);
  STEREOD_CUDA_LAUNCHED("classify_kernel");
}

void launch_background_close_learn(const BatchShape& shape, const BatchRecord* batch, int level,
                                   cudaStream_t stream) {
  close_learn_kernel<<<member_grid(shape.level_width[level], shape.level_height[level],
                                   2 * shape.count),
                       dim3(kBlockW, kBlockH), 0, stream>>>(batch, level);
  STEREOD_CUDA_LAUNCHED("close_learn_kernel");
}

}  // namespace stereod::cuda
