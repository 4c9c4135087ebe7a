// The background model's kernels: each does what BackgroundModel::process does on the CPU, with
// the same per-pixel arithmetic (background_ops.hpp).
#include "background/background_ops.hpp"
#include "cuda_check.hpp"
#include "kernels/background_kernels.hpp"

namespace stereod::cuda {
namespace {

constexpr int kBlockW = 32;
constexpr int kBlockH = 8;
constexpr int kMaxClosing = 3;
constexpr int kHalo = 2 * kMaxClosing;

dim3 grid_for(int w, int h) {
  return dim3(static_cast<unsigned>((w + kBlockW - 1) / kBlockW),
              static_cast<unsigned>((h + kBlockH - 1) / kBlockH), 2);
}

__device__ __forceinline__ std::uint8_t mean2x2(const std::uint8_t* img, int w, int h, int stride,
                                                int step, int x, int y) {
  // The rounded 2x2 mean with edge repeat, over samples `step` bytes apart (interleaved RGB).
  const int x0 = 2 * x, y0 = 2 * y;
  const int x1 = x0 + 1 < w ? x0 + 1 : w - 1;
  const int y1 = y0 + 1 < h ? y0 + 1 : h - 1;
  const int sum = img[y0 * stride + x0 * step] + img[y0 * stride + x1 * step] +
                  img[y1 * stride + x0 * step] + img[y1 * stride + x1 * step];
  return static_cast<std::uint8_t>((sum + 2) >> 2);
}

__global__ void hsv_level_kernel(HsvLevelArgs a) {
  const int cam = blockIdx.z;
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  const bool interleaved = a.rgb_interleaved[cam] != nullptr;
  auto sample = [&](int c, int xx, int yy) -> int {
    return interleaved ? a.rgb_interleaved[cam][(yy * a.width + xx) * 3 + c]
                       : a.rgb_planar[cam][c][yy * a.width + xx];
  };
  if (x < a.width && y < a.height) {
    const int i = y * a.width + x;
    rgb_to_hsv(sample(0, x, y), sample(1, x, y), sample(2, x, y), a.hsv[cam][kHue][i],
               a.hsv[cam][kSaturation][i], a.hsv[cam][kValue][i]);
  }
  if (a.down[cam][0] && x < a.down_width && y < a.down_height) {
    for (int c = 0; c < 3; ++c) {
      a.down[cam][c][y * a.down_width + x] =
          interleaved ? mean2x2(a.rgb_interleaved[cam] + c, a.width, a.height, a.width * 3, 3, x, y)
                      : mean2x2(a.rgb_planar[cam][c], a.width, a.height, a.width, 1, x, y);
    }
  }
}

__global__ void classify_kernel(BackgroundLevelArgs a) {
  const BackgroundCameraLevel c = a.camera[blockIdx.z];
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  const bool inside = x < a.width && y < a.height;
  const long long n = *a.frames;
  bool tested = false;
  if (inside) {
    const int i = y * a.width + x;
    if (n == 0) {
      for (int ch = 0; ch < 3; ++ch) {
        if (a.channels == 1 && ch != kValue) continue;
        c.mean[ch][i] = static_cast<std::uint16_t>(c.planes[ch][i] << 8);
        c.var[ch][i] = a.initial_variance;
      }
      c.still[i] = 0;
      c.prev[i] = c.planes[kValue][i];
    }
    {
      std::uint8_t decision = 0;
      bool copy = false;
      if (a.hierarchy && c.parent_closed) {
        const int pw = a.parent_width, ph = a.parent_height;
        const int cx = min(x / 2, pw - 1), cy = min(y / 2, ph - 1);
        const std::uint8_t first = c.parent_closed[cy * pw + cx];
        copy = true;
        for (int v = max(0, cy - 1); v <= min(ph - 1, cy + 1) && copy; ++v) {
          for (int u = max(0, cx - 1); u <= min(pw - 1, cx + 1); ++u) {
            if (c.parent_closed[v * pw + u] != first) {
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
          if (a.channels == 1 && ch != kValue) continue;
          px[ch] = c.planes[ch][i];
          mean[ch] = c.mean[ch][i];
          var[ch] = c.var[ch][i];
        }
        decision = classify_pixel(px, mean, var, a.channels, a.fixed);
        tested = true;
      }
      c.raw[i] = decision;
    }
  }
  // One atomic per warp: the count of tested pixels, for the statistics.
  const unsigned ballot = __ballot_sync(0xFFFFFFFFu, tested);
  if ((threadIdx.x & 31) == 0 && ballot)
    atomicAdd(c.tested, static_cast<unsigned long long>(__popc(ballot)));
}

__global__ void close_learn_kernel(BackgroundLevelArgs a) {
  __shared__ std::uint8_t raw[kBlockH + 2 * kHalo][kBlockW + 2 * kHalo];
  __shared__ std::uint8_t dil[kBlockH + 2 * kHalo][kBlockW + 2 * kHalo];
  const BackgroundCameraLevel c = a.camera[blockIdx.z];
  const int x0 = blockIdx.x * kBlockW, y0 = blockIdx.y * kBlockH;
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  const int w = a.width, h = a.height;
  const long long n = *a.frames;
  const bool warming = n < a.warmup;
  const int r = a.closing_radius;
  const int tid = threadIdx.y * kBlockW + threadIdx.x;
  constexpr int kTw = kBlockW + 2 * kHalo, kTh = kBlockH + 2 * kHalo;

  if (r > 0) {
    for (int i = tid; i < kTw * kTh; i += kBlockW * kBlockH) {
      const int ty = i / kTw, tx = i - ty * kTw;
      const int gx = x0 - kHalo + tx, gy = y0 - kHalo + ty;
      raw[ty][tx] = (gx >= 0 && gx < w && gy >= 0 && gy < h) ? c.raw[gy * w + gx] : 0;
    }
    __syncthreads();
    // Dilate over in-image neighbours, for the tile and r pixels around it.
    for (int i = tid; i < kTw * kTh; i += kBlockW * kBlockH) {
      const int ty = i / kTw, tx = i - ty * kTw;
      const int gx = x0 - kHalo + tx, gy = y0 - kHalo + ty;
      if (tx < kHalo - r || tx >= kTw - kHalo + r || ty < kHalo - r || ty >= kTh - kHalo + r)
        continue;
      std::uint8_t m = 0;
      for (int v = -r; v <= r; ++v) {
        if (gy + v < 0 || gy + v >= h) continue;
        for (int u = -r; u <= r; ++u) {
          if (gx + u < 0 || gx + u >= w) continue;
          m = max(m, raw[ty + v][tx + u]);
        }
      }
      dil[ty][tx] = m;
    }
    __syncthreads();
  }
  if (x >= w || y >= h) return;
  const int i = y * w + x;
  std::uint8_t closed;
  if (r > 0) {
    const int tx = kHalo + threadIdx.x, ty = kHalo + threadIdx.y;
    std::uint8_t m = 1;
    for (int v = -r; v <= r; ++v) {
      if (y + v < 0 || y + v >= h) continue;
      for (int u = -r; u <= r; ++u) {
        if (x + u < 0 || x + u >= w) continue;
        m = min(m, dil[ty + v][tx + u]);
      }
    }
    closed = m;
  } else {
    closed = c.raw[i];
  }
  c.closed[i] = closed;
  const std::uint8_t mask = warming ? 1 : closed;
  c.mask[i] = mask;
  if (c.output) c.output[i] = mask ? 255 : 0;
  if (n == 0) return;  // the first frame only initialised the model
  std::uint8_t px[3] = {0, 0, 0};
  std::uint16_t* mean[3] = {nullptr, nullptr, nullptr};
  std::uint32_t* var[3] = {nullptr, nullptr, nullptr};
  for (int ch = 0; ch < 3; ++ch) {
    if (a.channels == 1 && ch != kValue) continue;
    px[ch] = c.planes[ch][i];
    mean[ch] = &c.mean[ch][i];
    var[ch] = &c.var[ch][i];
  }
  learn_pixel(px, mean, var, c.still[i], c.prev[i], a.channels, closed != 0, n, a.warmup,
              a.initial_variance, a.fixed);
}

__global__ void advance_kernel(long long* frames) {
  ++*frames;
}

}  // namespace

void launch_hsv_level(const HsvLevelArgs& a, cudaStream_t stream) {
  const int w = a.width > a.down_width ? a.width : a.down_width;
  const int h = a.height > a.down_height ? a.height : a.down_height;
  hsv_level_kernel<<<grid_for(w, h), dim3(kBlockW, kBlockH), 0, stream>>>(a);
  STEREOD_CUDA_LAUNCHED("hsv_level_kernel");
}

void launch_background_classify(const BackgroundLevelArgs& a, cudaStream_t stream) {
  classify_kernel<<<grid_for(a.width, a.height), dim3(kBlockW, kBlockH), 0, stream>>>(a);
  STEREOD_CUDA_LAUNCHED("classify_kernel");
}

void launch_background_close_learn(const BackgroundLevelArgs& a, cudaStream_t stream) {
  close_learn_kernel<<<grid_for(a.width, a.height), dim3(kBlockW, kBlockH), 0, stream>>>(a);
  STEREOD_CUDA_LAUNCHED("close_learn_kernel");
}

void launch_background_advance(long long* frames, cudaStream_t stream) {
  advance_kernel<<<1, 1, 0, stream>>>(frames);
  STEREOD_CUDA_LAUNCHED("advance_kernel");
}

}  // namespace stereod::cuda
