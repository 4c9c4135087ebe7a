// A pixel's four cross arms on the GPU (cross_arm_length in cross_ops.hpp, the CPU's rule), for
// the refinement's voting regions (refine.cu) and cross-based aggregation (cross.cu).
#pragma once

#include <cstdint>

#include "stereo/cross_ops.hpp"
#include "stereo/params.hpp"

namespace stereod::cuda {

// Where each arm sits in the packed word.
constexpr int kArmLeft = 0, kArmRight = 8, kArmUp = 16, kArmDown = 24;

__device__ __forceinline__ int arm_of(std::uint32_t packed, int shift) {
  return static_cast<int>((packed >> shift) & 0xFFu);
}

// The arms of (x, y) on the w x h image `gray`: left | right << 8 | up << 16 | down << 24.
__device__ __forceinline__ std::uint32_t pixel_cross_arms(const std::uint8_t* gray, int w, int h,
                                                          int x, int y, const StereoParams& sp) {
  const int anchor = gray[y * w + x];
  auto arm = [&](int dx, int dy, int room) {
    return static_cast<std::uint32_t>(cross_arm_length(
        anchor, [&](int k) { return int{gray[(y + k * dy) * w + x + k * dx]}; }, room,
        sp.cross_tau1, sp.cross_tau2, sp.cross_l1, sp.cross_l2));
  };
  return arm(-1, 0, x) << kArmLeft | arm(1, 0, w - 1 - x) << kArmRight | arm(0, -1, y) << kArmUp |
         arm(0, 1, h - 1 - y) << kArmDown;
}

}  // namespace stereod::cuda
