#include "synthetic/sensor.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "synthetic/hash.hpp"

namespace stereod::synth {
namespace {

constexpr std::uint64_t kTagFlicker = 0xF1;
constexpr std::uint64_t kTagNoiseTable = 0x7A;
constexpr std::uint64_t kTagNoiseRow = 0x7B;
constexpr int kNoiseBits = 18;  // longer than three rows of the widest image (3 * 16384)
constexpr std::int64_t kQ16 = 65536;

// A value in [-65536, 65536] per second of the flicker curve.
std::int64_t knot(std::uint32_t seed, std::int64_t second) {
  return static_cast<std::int64_t>(hash_key(kTagFlicker, seed, static_cast<std::uint64_t>(second)) %
                                   (2 * kQ16 + 1)) -
         kQ16;
}

}  // namespace

Sensor::Sensor(const SyntheticOptions& o) : options_(o) {
  flicker_ = std::llround(o.flicker * kQ16);
  if (o.noise_sigma <= 0) return;
  // Four uniform bytes sum to a mean of 510 with a standard deviation of sqrt(4 (256^2 - 1) / 12).
  const double per_unit = o.noise_sigma / std::sqrt(4.0 * (256.0 * 256.0 - 1.0) / 12.0);
  const std::int64_t scale = std::llround(per_unit * kQ16);
  noise_.resize(std::size_t{1} << kNoiseBits);
  for (std::size_t i = 0; i < noise_.size(); ++i) {
    const std::uint64_t h = hash_key(kTagNoiseTable, o.seed, i);
    const std::int64_t sum = static_cast<std::int64_t>((h & 255) + ((h >> 8) & 255) +
                                                       ((h >> 16) & 255) + ((h >> 24) & 255)) -
                             510;
    noise_[i] = static_cast<std::int16_t>(
        std::clamp<std::int64_t>(floor_div(sum * scale + kQ16 / 2, kQ16), -255, 255));
  }
}

int Sensor::gain(std::int64_t index) const {
  if (flicker_ == 0) return static_cast<int>(kQ16);
  const int period = options_.frame_rate;
  const std::int64_t second = floor_div(index, period);
  // Smoothstep between this second's value and the next one's: no jumps, no kinks at the knots.
  const std::int64_t t = (index - second * period) * kQ16 / period;
  const std::int64_t s = t * t / kQ16 * (3 * kQ16 - 2 * t) / kQ16;
  const std::int64_t a = knot(options_.seed, second), b = knot(options_.seed, second + 1);
  const std::int64_t wave = a + floor_div((b - a) * s, kQ16);
  return static_cast<int>(kQ16 + floor_div(flicker_ * wave, kQ16));
}

void Sensor::expose(RgbImage& image, int gain, std::int64_t index, int view) const {
  const int w = image.width;
  // Plain arithmetic on contiguous rows, so that the compiler can vectorise it.
  auto level = [gain](int c) { return (c * gain + static_cast<int>(kQ16 / 2)) >> 16; };
  for (int y = 0; y < image.height; ++y) {
    std::uint8_t* p = image.row(y);
    if (noise_.empty()) {
      if (gain == kQ16) return;
      for (int i = 0; i < 3 * w; ++i) p[i] = static_cast<std::uint8_t>(std::min(level(p[i]), 255));
      continue;
    }
    // The table is far longer than a row: start anywhere that leaves room for the whole row.
    const std::uint64_t key =
        hash_key(kTagNoiseRow, options_.seed, static_cast<std::uint64_t>(index),
                 static_cast<std::uint64_t>(view) << 32 | static_cast<std::uint32_t>(y));
    const std::int16_t* n = noise_.data() + key % (noise_.size() - 3 * static_cast<std::size_t>(w));
    if (options_.color) {
      for (int i = 0; i < 3 * w; ++i) {
        p[i] = static_cast<std::uint8_t>(std::clamp(level(p[i]) + n[i], 0, 255));
      }
    } else {
      for (int x = 0; x < w; ++x) {
        const auto v = static_cast<std::uint8_t>(std::clamp(level(p[3 * x]) + n[x], 0, 255));
        p[3 * x] = p[3 * x + 1] = p[3 * x + 2] = v;
      }
    }
  }
}

}  // namespace stereod::synth
