// Inputs for the tests that hold the CPU engine to its own outputs: random stereo parameters over
// every key, random pairs (textured planes or noise), random foreground masks per level, and the
// cases of the golden table. Everything is a pure function of a seed, with no
// implementation-defined distributions, so the same seed gives the same case on every machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "background/background_params.hpp"
#include "image.hpp"
#include "stereo/matcher.hpp"
#include "stereo/params.hpp"

namespace stereod::testing {

// xorshift64*: small, fast and the same everywhere.
class CaseRng {
 public:
  explicit CaseRng(std::uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  std::uint64_t next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 0x2545F4914F6CDD1Dull;
  }
  // Uniform enough in [lo, hi] for picking test cases.
  int range(int lo, int hi) {
    return lo + static_cast<int>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  bool chance(int percent) { return range(0, 99) < percent; }

 private:
  std::uint64_t state_;
};

struct MatcherCase {
  std::string name;
  int width = 0, height = 0;
  StereoParams params;
  Gray8 left, right;
  // Per level (index 0 = full resolution), 1 = foreground; empty: every pixel.
  std::vector<Gray8> left_foreground, right_foreground;
};

// The matcher's input for a case (views into it).
StereoInput stereo_input(const MatcherCase& c);

// A random case: size within [16, max_side], any usable parameters (the generator retries until
// validate_for_images accepts them), planes or noise, with masks about a third of the time.
MatcherCase random_matcher_case(std::uint64_t seed, int max_width, int max_height);

// Foreground masks for every level of a w x h image: random rectangles moved `shift` pixels to the
// left (the right view's masks: the same boxes a disparity away), a sprinkle of flipped pixels,
// coarser levels the OR of their 2x2 blocks (as a background model's closed masks roughly are), so
// matching sees both matched and unmatched neighbours.
std::vector<Gray8> random_masks(CaseRng& rng, int width, int height, int levels, int shift);

// Random cross arms (cross_tau1, cross_tau2, cross_l1 up to max_arm, cross_l2), in that order of
// draws.
void random_cross_arms(CaseRng& rng, StereoParams& p, int max_arm);

// The refinement on (refine: true) with random rounds, thresholds, edge steps and interpolation.
void random_refinement(CaseRng& rng, StereoParams& p);

// Where two images first differ ("x,y: naive A, engine B"), "sizes differ", or "" when equal.
template <typename T>
std::string first_difference(const Image<T>& want, const Image<T>& got) {
  if (want.width() != got.width() || want.height() != got.height()) return "sizes differ";
  for (int y = 0; y < want.height(); ++y) {
    for (int x = 0; x < want.width(); ++x) {
      if (want(x, y) != got(x, y)) {
        return std::to_string(x) + "," + std::to_string(y) + ": naive " +
               std::to_string(want(x, y)) + ", engine " + std::to_string(got(x, y));
      }
    }
  }
  return "";
}

// 64-bit FNV-1a over an image's size and pixels.
template <typename T>
std::uint64_t image_hash(const T* data, int width, int height) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&](const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) {
      h ^= b[i];
      h *= 0x100000001b3ull;
    }
  };
  mix(&width, sizeof width);
  mix(&height, sizeof height);
  mix(data, sizeof(T) * static_cast<std::size_t>(width) * static_cast<std::size_t>(height));
  return h;
}
template <typename T>
std::uint64_t image_hash(const Image<T>& img) {
  return image_hash(img.data(), img.width(), img.height());
}
template <typename T>
std::uint64_t vector_hash(const std::vector<T>& v) {
  return image_hash(v.data(), static_cast<int>(v.size()), 1);
}

}  // namespace stereod::testing
