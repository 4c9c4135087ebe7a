// Stage: the multi-step refinement's region voting (refinement.cpp on the CPU, its integer rules in
// refine_ops.hpp and cross_ops.hpp, included here as they are; docs/ALGORITHM.md "Refinement"),
// on the finest map after the left-right check and the speckle removal, before the median.
//
// prepare: one thread per pixel removes the pixel from the checked map when its speckle component
// (speckle.cu) is too small (in place: the removal reads only the pixel's own value and labels),
// and computes its four cross arms on the finest gray (cross_arm_length).
//
// round: one warp per 32 pixels of a row. The warp finds its voters (a foreground hole, or a valid
// pixel at a depth edge: refine_at_edge on the map the round reads) with a ballot and takes them
// one at a time: its lanes walk the voter's support region (the horizontal arms of the pixels on
// its vertical arm; 32 rows' arms in one load, handed out by shuffles) two rows at a time, 32
// columns of each, and count each valid pixel's rounded disparity in the warp's histogram in
// shared memory (count_votes). The mode (most votes, ties to the smaller disparity, as the CPU's
// merge gives it) is one warp maximum of (count << 16 | ~d) over the bins the region touched,
// which are zeroed again on the way. Every pixel is written each round (the voters' accepted
// values, the rest copied), so the rounds alternate between two maps. A round that changes
// nothing is a fixed point (the CPU stops there): it says so in MemberArgs::refine_changed, the
// rounds after it return at once, and speckle_median reads the map it left; no host round trip.
//
// interpolate (refine_interpolate): one thread per pixel, Mei's 16-direction interpolation of the
// holes the rounds left, into MemberArgs::refine_interpolated, which speckle_median then reads.
#include "kernels/cross_arms.cuh"
#include "kernels/device_common.cuh"
#include "kernels/launch.cuh"
#include "kernels/stages.hpp"
#include "stereo/cross_ops.hpp"
#include "stereo/refine_ops.hpp"

namespace stereod::cuda {
namespace {

constexpr int kWarps = kBlockH;  // one warp per row of a 32 x 8 block

__global__ void __launch_bounds__(kBlockW* kBlockH)
    refine_prepare_kernel(const BatchRecord* __restrict__ batch, int views) {
  after_previous_stage();
  const PixelAt p(batch, views);
  if (!p.inside) return;
  const MemberArgs& a = p.a;
  const int view = p.view, w = p.w, h = p.h, x = p.x, y = p.y, i = p.i;
  const StereoParams& sp = a.stereo;
  if (i < kMaxRefineIterations) a.refine_changed[view][i] = 0;  // before the rounds set them
  std::uint16_t* q4 = a.q4[view];
  // A valid value lies in a tile that was checked and labelled (the others are "no disparity").
  if (sp.speckle_size > 0 && q4[i] != kInvalidDisparity &&
      a.size[view][find_root(a.label[view], i)] < sp.speckle_size) {
    q4[i] = kInvalidDisparity;
  }
  a.refine_arms[view][i] = pixel_cross_arms(p.lv.gray[view], w, h, x, y, sp);
}

// Counts one pixel value per lane (kInvalidDisparity: no vote) into the warp's histogram. Where
// every voting lane holds the same disparity (the usual case: a row segment of one surface) one
// lane adds them all; otherwise each adds its own.
__device__ __forceinline__ void count_votes(std::uint32_t* hist, std::uint16_t v, int& votes,
                                            int& lo, int& hi) {
  const bool valid = v != kInvalidDisparity;
  const unsigned voting = __ballot_sync(0xFFFFFFFFu, valid);
  if (voting == 0) return;  // the same for every lane
  const unsigned d = valid ? static_cast<unsigned>(refine_vote_bin(v)) : 0xFFFFFFFFu;
  const unsigned smallest = __reduce_min_sync(0xFFFFFFFFu, d);
  const unsigned largest = __reduce_max_sync(0xFFFFFFFFu, valid ? d : 0u);
  if (smallest == largest) {
    if (threadIdx.x == 0) atomicAdd(&hist[smallest], static_cast<unsigned>(__popc(voting)));
  } else if (valid) {
    atomicAdd(&hist[d], 1u);
  }
  if (valid) {
    ++votes;
    lo = min(lo, static_cast<int>(d));
    hi = max(hi, static_cast<int>(d));
  }
}

// At least one resident block: without the bound ptxas held the kernel to 48 registers for sm_87
// (Jetson Orin) and spilled 16 bytes; sm_90 keeps its 48 either way.
__global__ void __launch_bounds__(kBlockW* kBlockH, 1)
    refine_round_kernel(const BatchRecord* __restrict__ batch, int views, int round, int bins) {
  after_previous_stage();
  extern __shared__ std::uint32_t shared_hist[];
  const int m = blockIdx.z / views, view = blockIdx.z % views;
  const MemberArgs& a = *batch->member[m];
  std::uint32_t* changed = a.refine_changed[view];
  // The round before changed nothing: its map is the last one (speckle_median reads it) and this
  // round would only copy it.
  if (round > 0 && changed[round - 1] == 0) return;
  const LevelBuffers& lv = a.level[0];
  const StereoParams& sp = a.stereo;
  const int w = lv.width, h = lv.height;
  const int lane = threadIdx.x;
  const int x0 = blockIdx.x * kBlockW, x = x0 + lane, y = blockIdx.y * kBlockH + threadIdx.y;
  if (y >= h) return;  // a whole warp: no block-wide barrier below
  const std::uint16_t* src = round == 0 ? a.q4[view] : a.refined[view][(round - 1) & 1];
  std::uint16_t* dst = a.refined[view][round & 1];
  const std::uint32_t* arms = a.refine_arms[view];
  const std::uint8_t* fg = a.modeling ? lv.mask[view] : nullptr;
  std::uint32_t* hist = shared_hist + threadIdx.y * bins;
  for (int b = lane; b < bins; b += kBlockW) hist[b] = 0;
  __syncwarp();

  const std::uint16_t* row = src + y * w;
  const bool inside = x < w;
  const std::uint16_t own = inside ? row[x] : kInvalidDisparity;
  bool voter = false;
  if (inside) {
    voter = own == kInvalidDisparity ? (fg == nullptr || fg[y * w + x] != 0)
                                     : refine_at_edge(own, x > 0 ? row[x - 1] : kInvalidDisparity,
                                                      x + 1 < w ? row[x + 1] : kInvalidDisparity,
                                                      sp.refine_edges, sp.refine_edges_near);
  }
  std::uint16_t value = own;
  for (unsigned voters = __ballot_sync(0xFFFFFFFFu, voter); voters; voters &= voters - 1) {
    const int vx = x0 + __ffs(voters) - 1;
    const std::uint32_t vertical = arms[y * w + vx];
    const int top = y - static_cast<int>(vertical >> 16 & 0xFFu);
    const int bottom = y + static_cast<int>(vertical >> 24);
    int votes = 0, lo = bins, hi = -1;  // this lane's
    for (int r0 = top; r0 <= bottom; r0 += kBlockW) {
      // The horizontal arms of 32 rows at once, handed out by shuffles: the rows' loads below
      // then wait on nothing but each other.
      const int rows = min(kBlockW, bottom - r0 + 1);
      const std::uint32_t my_arms = lane < rows ? arms[(r0 + lane) * w + vx] : 0u;
      for (int r = 0; r < rows; r += 2) {
        // Two rows side by side: their loads are independent.
        const bool pair = r + 1 < rows;
        const std::uint32_t ha = __shfl_sync(0xFFFFFFFFu, my_arms, r);
        const std::uint32_t hb = __shfl_sync(0xFFFFFFFFu, my_arms, pair ? r + 1 : r);
        const int first_a = vx - static_cast<int>(ha & 0xFFu);
        const int last_a = vx + static_cast<int>(ha >> 8 & 0xFFu);
        const int first_b = vx - static_cast<int>(hb & 0xFFu);
        const int last_b = pair ? vx + static_cast<int>(hb >> 8 & 0xFFu) : first_b - 1;
        const std::uint16_t* qa = src + (r0 + r) * w;
        const std::uint16_t* qb = pair ? qa + w : qa;
        for (int c = 0; first_a + c <= last_a || first_b + c <= last_b; c += kBlockW) {
          const int xa = first_a + c + lane, xb = first_b + c + lane;
          const std::uint16_t va = xa <= last_a ? qa[xa] : kInvalidDisparity;
          const std::uint16_t vb = xb <= last_b ? qb[xb] : kInvalidDisparity;
          count_votes(hist, va, votes, lo, hi);
          count_votes(hist, vb, votes, lo, hi);
        }
      }
    }
    votes = static_cast<int>(__reduce_add_sync(0xFFFFFFFFu, static_cast<unsigned>(votes)));
    lo = __reduce_min_sync(0xFFFFFFFFu, lo);
    hi = __reduce_max_sync(0xFFFFFFFFu, hi);
    __syncwarp();           // every lane's counts are in
    std::uint32_t key = 0;  // count << 16 | (0xFFFF - d): the most votes, then the smaller d
    for (int d = lo + lane; d <= hi; d += kBlockW) {
      const std::uint32_t count = hist[d];
      if (count != 0) {
        key = max(key, count << 16 | (0xFFFFu - static_cast<std::uint32_t>(d)));
        hist[d] = 0;
      }
    }
    key = __reduce_max_sync(0xFFFFFFFFu, key);
    __syncwarp();  // zeroed before the next voter counts
    if (lane == vx - x0 && key != 0) {
      const int best = static_cast<int>(0xFFFFu - (key & 0xFFFFu));
      if (refine_vote_accepted(static_cast<int>(key >> 16), votes, sp.refine_votes,
                               sp.refine_share)) {
        value = static_cast<std::uint16_t>(best * kSubpixelScale);
      }
    }
  }
  if (!inside) return;
  dst[y * w + x] = value;
  if (value != own) changed[round] = 1;  // every writer writes the same word
}

// Mei's interpolation (refinement.cpp, Refiner::interpolate): one thread per pixel of the map
// the rounds left. A foreground hole is tested for occlusion against the partner view's raw
// winners (refine_occluded), then walks each of the 16 directions (refine_direction) through holes
// to the first valid pixel, stopping at the border or a background pixel; the candidate of
// smallest key (refine_candidate_key; ties to the earlier direction) gives its value. Candidates
// are read from the map before the interpolation, never from each other, so every pixel is
// independent. Every pixel is written (the rest copied).
__global__ void __launch_bounds__(kBlockW* kBlockH)
    refine_interpolate_kernel(const BatchRecord* __restrict__ batch, int views, int rounds) {
  after_previous_stage();
  const PixelAt p(batch, views);
  if (!p.inside) return;
  const MemberArgs& a = p.a;
  const LevelBuffers& lv = p.lv;
  const int view = p.view, w = p.w, h = p.h, x = p.x, y = p.y, i = p.i;
  const std::uint16_t* map = refined_map(a, view, rounds);
  const std::uint8_t* fg = a.modeling ? lv.mask[view] : nullptr;
  std::uint16_t value = map[i];
  if (value == kInvalidDisparity && (!fg || fg[i] != 0)) {
    const std::int16_t* partner = lv.disp[1 - view] + static_cast<std::size_t>(y) * w;
    const bool occluded =
        refine_occluded(x, w, view == 0 ? -1 : 1, lv.disparities, a.stereo.cross_check_tolerance,
                        [&](int xp) { return int{partner[xp]}; });
    const std::uint8_t* gray = lv.gray[view];
    const int own = gray[i];
    std::uint32_t best = 0xFFFFFFFFu;
    for (int dir = 0; dir < kRefineDirections; ++dir) {
      int dx, dy;
      refine_direction(dir, dx, dy);
      for (int qx = x + dx, qy = y + dy; qx >= 0 && qx < w && qy >= 0 && qy < h;
           qx += dx, qy += dy) {
        const int q = qy * w + qx;
        if (fg && fg[q] == 0) break;  // a background pixel ends the search
        const std::uint16_t v = map[q];
        if (v == kInvalidDisparity) continue;
        const int g = gray[q];
        const std::uint32_t key = refine_candidate_key(occluded, g > own ? g - own : own - g, v);
        if (key < best) {
          best = key;
          value = v;
        }
        break;
      }
    }
  }
  a.refine_interpolated[view][i] = value;
}

}  // namespace

void launch_refine_prepare(const BatchShape& shape, const BatchRecord* batch, cudaStream_t stream) {
  const int views = shape.views_out();
  launch_stage("refine_prepare_kernel", shape.chained, refine_prepare_kernel,
               member_grid(shape.width, shape.height, views * shape.count), dim3(kBlockW, kBlockH),
               0, stream, batch, views);
}

void launch_refine_round(const BatchShape& shape, const BatchRecord* batch, int round,
                         cudaStream_t stream) {
  const int views = shape.views_out();
  // One histogram per warp over the finest level's disparities (at most kMaxDisparity: 32 KiB a
  // block, within the 48 KiB any device gives without opting in).
  const int bins = shape.max_disparity;
  const std::size_t bytes = sizeof(std::uint32_t) * static_cast<std::size_t>(kWarps) * bins;
  launch_stage("refine_round_kernel", shape.chained, refine_round_kernel,
               member_grid(shape.width, shape.height, views * shape.count), dim3(kBlockW, kBlockH),
               bytes, stream, batch, views, round, bins);
}

void launch_refine_interpolate(const BatchShape& shape, const BatchRecord* batch,
                               cudaStream_t stream) {
  const int views = shape.views_out();
  launch_stage("refine_interpolate_kernel", shape.chained, refine_interpolate_kernel,
               member_grid(shape.width, shape.height, views * shape.count), dim3(kBlockW, kBlockH),
               0, stream, batch, views, shape.refine_rounds);
}

}  // namespace stereod::cuda
