#include "stereo/subwindow_sums.hpp"

#include <algorithm>
#include <stdexcept>

#include "cpu_features.hpp"
#include "stereo/pixel_ops.hpp"

namespace stereod {
namespace {

// The s x s box sums of x in [x0, x1): in[v] point at x = 0 of each of the s rows (with margins
// of s/2 pixels around [x0, x1)). Vertical sums first, each column once, then horizontal ones.
template <int kS>
[[gnu::always_inline]] inline void box_sums(const std::uint8_t* const* in, int x0, int x1,
                                            std::uint16_t* __restrict column,
                                            std::uint16_t* __restrict out) {
  constexpr int kHalf = kS / 2;
  const int c0 = x0 - kHalf, c1 = x1 + kHalf;
  const std::uint8_t* __restrict rows[kS];
  for (int r = 0; r < kS; ++r) rows[r] = in[r] + c0;
  for (int i = 0; i < c1 - c0; ++i) {
    std::uint16_t v = 0;
    for (int r = 0; r < kS; ++r) v = static_cast<std::uint16_t>(v + rows[r][i]);
    column[i] = v;
  }
  out += x0;
  for (int i = 0; i < x1 - x0; ++i) {
    std::uint16_t v = 0;
    for (int u = 0; u < kS; ++u) v = static_cast<std::uint16_t>(v + column[i + u]);
    out[i] = v;
  }
}

// Box sums for each sub-window side, compiled for the baseline and, on x86-64, for AVX2
// (cpu_features.hpp).
using BoxSums = void (*)(const std::uint8_t* const*, int, int, std::uint16_t*, std::uint16_t*);

template <int kS>
void box_sums_baseline(const std::uint8_t* const* in, int x0, int x1, std::uint16_t* column,
                       std::uint16_t* out) {
  box_sums<kS>(in, x0, x1, column, out);
}

#if STEREOD_X86_AVX2_PATHS
template <int kS>
STEREOD_TARGET_AVX2 void box_sums_avx2(const std::uint8_t* const* in, int x0, int x1,
                                       std::uint16_t* column, std::uint16_t* out) {
  box_sums<kS>(in, x0, x1, column, out);
}
#endif

BoxSums box_sums_for(int s) {
  if (s < 1 || s > 9 || s % 2 == 0) throw std::logic_error("subwindow must be odd, 1 to 9");
#if STEREOD_X86_AVX2_PATHS
  constexpr BoxSums kWide[5] = {box_sums_avx2<1>, box_sums_avx2<3>, box_sums_avx2<5>,
                                box_sums_avx2<7>, box_sums_avx2<9>};
  if (wide_vectors()) return kWide[s / 2];
#endif
  constexpr BoxSums kBaseline[5] = {box_sums_baseline<1>, box_sums_baseline<3>,
                                    box_sums_baseline<5>, box_sums_baseline<7>,
                                    box_sums_baseline<9>};
  return kBaseline[s / 2];
}

}  // namespace

void SubwindowSums::start(const WindowPlan& plan, int disparities) {
  plan_ = &plan;
  disparities_ = disparities;
  s_ = plan.subwindow();
  half_ = s_ / 2;
  width_ = plan.width();
  height_ = plan.height();
  cost_rows_ = s_;
  sum_rows_ = 2 * s_ + 1;
  cost_margin_ = s_ + half_;
  const std::size_t lanes = static_cast<std::size_t>(plan.chunks()) * kWindowLanes;
  cost_stride_ = lanes + 2 * static_cast<std::size_t>(cost_margin_);
  sum_stride_ = lanes + 2 * static_cast<std::size_t>(s_);
  const std::size_t cost_size = static_cast<std::size_t>(cost_rows_) * disparities_ * cost_stride_;
  const std::size_t sum_size = static_cast<std::size_t>(sum_rows_) * disparities_ * sum_stride_;
  // Grown, never shrunk or cleared: stale entries are only read by lanes nobody uses.
  if (costs_.size() < cost_size) costs_.resize(cost_size);
  if (sums_.size() < sum_size) sums_.resize(sum_size);
  column_.resize(lanes + 2 * static_cast<std::size_t>(s_) + 2 * static_cast<std::size_t>(half_));
}

void SubwindowSums::compute_sums(int cy) {
  const BoxSums box = box_sums_for(s_);  // its loops unrolled for this side
  const int chunks = plan_->chunks();
  std::uint8_t* cost_rows[9];  // plane 0 of each row the sub-windows span
  for (int v = 0; v < s_; ++v) cost_rows[v] = cost_row(clamp_int(cy - half_ + v, 0, height_ - 1));
  std::uint16_t* out = const_cast<std::uint16_t*>(row(cy));
  for_each_run(plan_->sums_row(cy), chunks, [&](int d, int k0, int k1) {
    const std::uint8_t* rows[9];
    for (int v = 0; v < s_; ++v) rows[v] = cost_rows[v] + d * cost_stride_;
    // A run at either end also sums the sub-windows centred in the margins.
    const int x0 = k0 == 0 ? -s_ : k0 * kWindowLanes;
    const int x1 = k1 == chunks ? width_ + s_ : k1 * kWindowLanes;
    box(rows, x0, x1, column_.data(), out + d * sum_stride_);
  });
}

}  // namespace stereod
