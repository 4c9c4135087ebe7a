// Integer hashing and a small PRNG for the synthetic scene. Everything the scene draws at random
// comes from these, never from std:: distributions (their output differs between standard
// libraries) or libm, so a frame is byte-identical on every machine.
#pragma once

#include <cstdint>

namespace stereod::synth {

// A 64-bit finaliser (the splitmix64 mixing steps): every input bit affects every output bit.
inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Hash of a key made of up to four integers; the keys of different purposes differ in `a` (a
// purpose tag), so streams never collide by accident.
inline std::uint64_t hash_key(std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0,
                              std::uint64_t d = 0) {
  std::uint64_t h = mix64(a + 0x9E3779B97F4A7C15ull);
  h = mix64(h ^ (b + 0x632BE59BD9B4E019ull));
  h = mix64(h ^ (c + 0x85157AF5ull));
  return mix64(h ^ (d + 0x2545F4914F6CDD1Dull));
}

// Sequential draws from one key (splitmix64 stepping).
class Rng {
 public:
  explicit Rng(std::uint64_t key) : state_(key) {}
  std::uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ull;
    return mix64(state_);
  }
  // Uniform integer in [lo, hi] (hi >= lo); the modulo bias is far below anything visible.
  int range(int lo, int hi) {
    const auto span = static_cast<std::uint64_t>(static_cast<std::int64_t>(hi) - lo + 1);
    return lo + static_cast<int>(next() % span);
  }
  // True with probability num/den.
  bool chance(int num, int den) { return range(0, den - 1) < num; }

 private:
  std::uint64_t state_;
};

// Floor division for possibly negative numerators (C++ division truncates towards zero).
inline std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// a * num / den rounded to the nearest integer (halves up), den > 0.
inline std::int64_t scale_round(std::int64_t a, std::int64_t num, std::int64_t den) {
  return floor_div(2 * a * num + den, 2 * den);
}

}  // namespace stereod::synth
