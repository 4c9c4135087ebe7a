// Per-pixel arithmetic of the background model, shared as the very same source by the CPU
// reference and the CUDA kernels. Fixed point throughout:
//   mean     Q8 (value * 256) in a uint16; hue wraps around modulo 65536 (= 360 degrees)
//   variance Q8 (sigma^2 * 256) in a uint32
//   rates    Q16 (65536 = 1), threshold k Q4, ratios Q8
#pragma once

#include <cstdint>

#include "background/background_params.hpp"
#include "stereo/pixel_ops.hpp"

namespace stereod {

enum BackgroundChannel { kHue = 0, kSaturation = 1, kValue = 2 };

// floor(a / b) for b > 0, whatever the sign of a. 32 bits where the operands fit: a 64-bit division
// is a long software routine on the GPU.
STEREOD_HD std::int32_t floor_div(std::int32_t a, std::int32_t b) {
  const std::int32_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// floor(a / 65536), whatever the sign of a: an arithmetic shift (what every supported compiler
// does with >> on a negative value; checked below), not a division.
static_assert((-65537LL >> 16) == -2, "right shift of negative values must be arithmetic");
STEREOD_HD std::int64_t floor_q16(std::int64_t a) {
  return a >> 16;
}

// Integer HSV, every channel 0..255 (hue: 256 = 360 degrees).
STEREOD_HD void rgb_to_hsv(int r, int g, int b, std::uint8_t& h, std::uint8_t& s, std::uint8_t& v) {
  const int mx = r > g ? (r > b ? r : b) : (g > b ? g : b);
  const int mn = r < g ? (r < b ? r : b) : (g < b ? g : b);
  const int delta = mx - mn;
  v = static_cast<std::uint8_t>(mx);
  s = static_cast<std::uint8_t>(mx == 0 ? 0 : (255 * delta + mx / 2) / mx);
  if (delta == 0) {
    h = 0;
    return;
  }
  int num;  // position within the hue circle, in units of delta, times one sector
  if (mx == r) {
    num = g - b;
  } else if (mx == g) {
    num = b - r + 2 * delta;
  } else {
    num = r - g + 4 * delta;
  }
  // |num| <= 5 * 255: the numerator fits in 32 bits.
  const std::int32_t q = floor_div(num * 256 + 3 * delta, 6 * delta);
  h = static_cast<std::uint8_t>(q & 255);
}

// Difference of a sample from the model mean, Q8; hue differences wrap into [-128, 128) (half the
// circle each way).
STEREOD_HD std::int32_t channel_diff(int value, std::uint16_t mean_q8, bool circular) {
  std::int32_t d = value * 256 - static_cast<std::int32_t>(mean_q8);
  if (circular) d = ((d + 32768) & 0xFFFF) - 32768;
  return d;
}

// |diff| > k * max(sigma, min_sigma), compared in squares: no square roots, no rounding. In Q24,
// d^2 * 2^8 > k^2 * max(var * 2^8, min_sigma_q8^2); min_sigma_q8^2 is a multiple of 2^16, so both
// sides divide by 2^8 exactly: d^2 (Q16, < 2^32) against k^2 * max(var, min_sigma_q8^2 / 2^8)
// (< 2^49), one 32 x 32 -> 64-bit product.
STEREOD_HD bool channel_deviates(std::int32_t diff_q8, std::uint32_t var_q8,
                                 const BackgroundFixed& f) {
  const std::uint32_t ad = static_cast<std::uint32_t>(diff_q8 < 0 ? -diff_q8 : diff_q8);
  const std::uint64_t d2 = static_cast<std::uint64_t>(ad) * ad;  // Q16
  const std::uint32_t floor_q8 =
      static_cast<std::uint32_t>(f.min_sigma_q8) * static_cast<std::uint32_t>(f.min_sigma_q8) >> 8;
  const std::uint32_t spread = var_q8 > floor_q8 ? var_q8 : floor_q8;    // Q8
  const std::uint32_t k2 = static_cast<std::uint32_t>(f.k_q4 * f.k_q4);  // Q8
  return d2 > static_cast<std::uint64_t>(k2) * spread;                   // both Q16
}

// mean += alpha * diff, variance += alpha * (diff^2 - variance), each rounded to nearest. Without
// `with_variance` only the mean moves: foreground samples do not belong to the background's
// spread, and letting them inflate it would absorb any object that lingers within a few frames.
// alpha is at most 1 (65536: every rate is validated to [0, 1], the warm-up's 1/(n+1) too), which
// bounds both steps, so that only the products need 64 bits: the mean's step is within +-2^16,
// and the variance stays within [0, max(variance, diff^2)], below 2^32 (the GPU does 64-bit
// additions and comparisons in several instructions each).
STEREOD_HD void channel_learn(int value, std::uint16_t& mean_q8, std::uint32_t& var_q8,
                              std::int32_t alpha_q16, bool circular, bool with_variance = true) {
  const std::int32_t d = channel_diff(value, mean_q8, circular);
  const std::int32_t m =
      static_cast<std::int32_t>(mean_q8) +
      static_cast<std::int32_t>(floor_q16(static_cast<std::int64_t>(alpha_q16) * d + 32768));
  if (circular) {
    mean_q8 = static_cast<std::uint16_t>(m & 0xFFFF);
  } else {
    mean_q8 = static_cast<std::uint16_t>(m < 0 ? 0 : (m > 65280 ? 65280 : m));
  }
  if (!with_variance) return;
  // |d| < 2^16, so d^2 fits in 32 unsigned bits.
  const std::uint32_t ad = static_cast<std::uint32_t>(d < 0 ? -d : d);
  const std::uint32_t e = (ad * ad) >> 8;  // Q8
  // alpha * (e - var) as the difference of two 32 x 32 -> 64-bit products (alpha >= 0): exact,
  // and cheaper on the GPU than one 64 x 64-bit product.
  const std::uint64_t alpha = static_cast<std::uint32_t>(alpha_q16);
  const std::int64_t step =
      static_cast<std::int64_t>(alpha * e) - static_cast<std::int64_t>(alpha * var_q8);
  // The step is at least -var (alpha <= 1), so the sum, taken modulo 2^32, is exact.
  var_q8 += static_cast<std::uint32_t>(floor_q16(step + 32768));
}

// Hue is compared only where both the pixel and the model are saturated enough for it to mean
// something.
STEREOD_HD bool hue_used(const std::uint8_t x[3], const std::uint16_t mean[3],
                         const BackgroundFixed& f) {
  return x[kSaturation] * 256 >= f.hue_min_sat_q8 && mean[kSaturation] >= f.hue_min_sat_q8;
}

// Hue and saturation kept, within the shadow tolerances: the colour test of a shadow. A shadow
// that dims the light keeps both, but noise does not, and moves them more the less colour a pixel
// has. For an error of e gray levels in a channel (e = min_sigma, the noise the model allows):
// - the saturation S = 255 (max - min) / V moves by 255 e / V, so it may change by the larger of
//   shadow_saturation_tolerance and 255 min_sigma / V: |dS| V > 255 min_sigma, both in Q8;
// - the hue (256 units a turn, 43 = 256 / 6 a sextant of (mid - min) / (max - min)) moves by
//   43 e / (max - min), and max - min = S V / 255, so it may change by the larger of
//   shadow_hue_tolerance and 43 * 255 min_sigma / (S V): |dH| S V > 255 * 43 min_sigma (Q8, in 64
//   bits).
// No divisions. A fixed saturation tolerance either took plain objects paler than a bright wall of
// their hue for its shadow (40) or called shadows on dark surfaces foreground (docs/PERFORMANCE.md,
// "Plain objects taken for shadows").
STEREOD_HD bool color_kept(const std::uint8_t x[3], const std::uint16_t mean[3], int channels,
                           const BackgroundFixed& f) {
  if (channels != 3) return true;
  const std::int32_t ds = channel_diff(x[kSaturation], mean[kSaturation], false);
  const std::int32_t ads = ds < 0 ? -ds : ds;
  if (ads > f.shadow_sat_q8 && ads * x[kValue] > 255 * f.min_sigma_q8) return false;
  if (!hue_used(x, mean, f)) return true;
  const std::int32_t dh = channel_diff(x[kHue], mean[kHue], true);
  const std::int64_t adh = dh < 0 ? -dh : dh;
  return adh <= f.shadow_hue_q8 ||
         adh * x[kSaturation] * x[kValue] <= std::int64_t{255} * 43 * f.min_sigma_q8;
}

// The model is darker than the pixel by a shadow's ratio (mean / value within [lo, hi]) with the
// colour kept: most likely a shadow that stood there while the model learned, gone now.
// mean_q8 against ratio_q8 * value, both Q8 (< 2^16).
STEREOD_HD bool relit(const std::uint8_t x[3], const std::uint16_t mean[3], int channels,
                      const BackgroundFixed& f) {
  const std::int32_t m = mean[kValue], v = x[kValue];
  return f.shadow && m >= f.shadow_lo_q8 * v && m <= f.shadow_hi_q8 * v &&
         color_kept(x, mean, channels, f);
}

// The absorption counters of one pixel, packed in one 16-bit word (one plane in both engines):
//   low byte   run: frames in a row the pixel has been foreground and still
//   high byte  support: frames the pixel has been background since its model was last seeded
//              (the first frame, or an absorption)
// both saturating at 255 (BackgroundParams::absorb_frames is at most 255).
constexpr int kAbsorbCountMax = 255;
STEREOD_HD int still_run(std::uint16_t counters) {
  return counters & 0xFF;
}
STEREOD_HD int model_support(std::uint16_t counters) {
  return counters >> 8;
}
STEREOD_HD std::uint16_t pack_counters(int run, int support) {
  return static_cast<std::uint16_t>(support << 8 | run);
}

// How many still foreground frames in a row take a pixel into the background: absorb_frames once
// its model has been confirmed (seen as background) that often; while it has not, one frame more
// than it has, but never fewer than a quarter of absorb_frames. A model that only the first frame
// showed -- which may hold objects or a shadow -- is then replaced by a value that has stayed
// still for a quarter of the period, and the ghosts of whatever stood in the first frames go that
// much sooner; the quarter keeps the plain inside of an object that moves early on, still for a
// few frames, from being taken in. 0 = never.
STEREOD_HD int absorb_after(int support, int absorb_frames) {
  const int least = (absorb_frames + 3) / 4;  // rounded up
  const int wanted = support + 1 > least ? support + 1 : least;
  return wanted < absorb_frames ? wanted : absorb_frames;
}

// Ghosts seen in depth (BackgroundParams::depth_ghosts, docs/ALGORITHM.md). What one frame left of
// a left pixel for the frame BackgroundParams::depth_lag later: its disparity after matching (16 d,
// 15 bits; kDepthNone where it has none) and, in bit 15, whether the model called it foreground.
// A frame's model reads the record of the frame depth_lag before it (at most kMaxDepthLag).
constexpr std::uint16_t kDepthForeground = 0x8000;
constexpr std::uint16_t kDepthNone = 0x7FFF;  // above every 16 d (kMaxDisparity 1024)
STEREOD_HD std::uint16_t depth_record(std::uint16_t q4, bool foreground) {
  return static_cast<std::uint16_t>((foreground ? kDepthForeground : 0) |
                                    (q4 < kDepthNone ? q4 : kDepthNone));
}

// A record that holds the model's decision, with the frame's output disparity q4 added (after
// matching: DepthGhosts::record_disparity, and the CUDA engine's output kernels).
STEREOD_HD std::uint16_t with_disparity(std::uint16_t record, std::uint16_t q4) {
  return depth_record(q4, (record & kDepthForeground) != 0);
}

// What a pixel's record shows (DepthGhosts::flags' values too): the scene behind the model
// (depth_revealed), or an object in front of it (depth_in_front).
constexpr int kDepthRevealed = 1;
constexpr int kDepthInFront = 2;

// Two records in a row: what a record shows counts where the record of the frame before showed
// the same. One frame's mismatch is not enough -- e.g. at the image's left border, where the right
// view lacks the partner of an object (and of the scene behind it), a frame may give a far
// disparity that is none of them (measured: teddy with cones-textured objects, IoU 0.934 -> 0.903
// with one record), and a ghost's own pixel, whose partner the right model calls background, is
// matched to whatever foreground the range holds, nearer or farther. `shown` is kDepthRevealed,
// kDepthInFront or 0 for the record of model frame `frame` (the frame recorded, not the one
// reading it: so the rule holds when depth_lag changes); `last` holds, per pixel, the last frame
// (mod 2^30) whose record showed either and which (in its low two bits), kDepthShownNever before
// any. Returns `shown` where the record of the frame before showed the same, 0 otherwise, and
// keeps this frame where it shows one.
constexpr std::uint32_t kDepthShownNever = 0xFFFFFFFFu;  // low bits 3: neither kind
STEREOD_HD int shown_again(int shown, long long frame, std::uint32_t& last) {
  if (!shown) return 0;
  const std::uint32_t now =
      static_cast<std::uint32_t>(frame) << 2 | static_cast<std::uint32_t>(shown);
  const bool again = last == now - 4;  // frame - 1, the same kind (mod 2^30 frames)
  last = now;
  return again ? shown : 0;
}

// A pixel that depth_revealed flags is absorbed after `lag` still frames at most (the scene behind
// what the model learned, uncovered; lag is depth_lag, the age of the record). Applied to its
// counters before it learns, so that the CUDA engine can apply it outside the model kernel: once
// the pixel has been still for lag - 1 frames -- since the record, so that it shows what the
// record saw -- its run is set to the most, and a still frame now absorbs it whatever its model's
// support: the same as capping learn_pixel's wait at `lag` for this frame (a frame that is not
// still, or is background, resets the run either way).
STEREOD_HD bool still_since_record(std::uint16_t counters, int lag) {
  return still_run(counters) >= lag - 1;
}
STEREOD_HD std::uint16_t revealed_counters(std::uint16_t counters, int lag) {
  return still_since_record(counters, lag) ? pack_counters(kAbsorbCountMax, model_support(counters))
                                           : counters;
}

// Reads one pixel's record of frame n. While n was warming up (every pixel matched), a disparity
// the model called background lowers the static depth static_q4 to it: the farthest the pixel
// was seen at while the model agreed with it, which is the depth of what the model learned
// (kDepthNone: never seen). Returns whether a foreground pixel showed a disparity farther than
// that, by a pixel and by the share farther_q8 / 256 of the depth at least: the scene behind what
// the model learned, uncovered -- a ghost. (A ratio, not pixels alone: an object that stood there
// through the warm-up and another one a little farther that stops there later tell the same
// story, and what tells them apart is how much farther the surface is.)
STEREOD_HD bool depth_revealed(std::uint16_t record, bool warming, std::uint16_t& static_q4,
                               int farther_q8) {
  const std::int32_t q4 = record & kDepthNone;
  if (q4 == kDepthNone) return false;
  if (!(record & kDepthForeground)) {
    if (warming && q4 < static_q4) static_q4 = static_cast<std::uint16_t>(q4);
    return false;
  }
  // Depth is inverse to disparity: farther by the share f where q4 * (1 + f) <= static_q4.
  return static_q4 != kDepthNone && q4 + 16 <= static_q4 &&
         q4 * (256 + farther_q8) <= static_cast<std::int32_t>(static_q4) * 256;
}

// The opposite reading of the same record (BackgroundParams::depth_in_front): a foreground pixel
// whose disparity is nearer than the static depth, by a pixel and by the share farther_q8 / 256
// (q4 >= static_q4 * (1 + f)), shows an object in front of the scene the model holds: the model is
// the scene, however little it has been confirmed.
STEREOD_HD bool depth_in_front(std::uint16_t record, std::uint16_t static_q4, int farther_q8) {
  const std::int32_t q4 = record & kDepthNone;
  if (q4 == kDepthNone || !(record & kDepthForeground) || static_q4 == kDepthNone) return false;
  return q4 >= static_q4 + 16 &&
         q4 * 256 >= static_cast<std::int32_t>(static_q4) * (256 + farther_q8);
}

// A pixel that depth_in_front flags waits absorb_frames, as a model confirmed that often would:
// its support is set to the most -- but only where the pixel has been still since the record
// (lag - 1 frames; revealed_counters' test), so that what it shows now is the object the record
// saw in front. Without that test the flag, read `lag` frames late, also reached pixels the object
// had left in the meantime, whose model had taken the object in: their ghosts then waited
// absorb_frames too (teddy with cones-textured objects, lag 8: IoU 0.931 -> 0.900).
STEREOD_HD std::uint16_t in_front_counters(std::uint16_t counters, int lag) {
  return still_since_record(counters, lag) ? pack_counters(still_run(counters), kAbsorbCountMax)
                                           : counters;
}

// What one record shows of its pixel, before shown_again: kDepthRevealed (depth_revealed, which
// also teaches the static depth while `warming`), else kDepthInFront (depth_in_front, where
// `in_front`), else 0. Both engines classify with it (DepthGhosts::flags, pyramid.cu).
STEREOD_HD int depth_shows(std::uint16_t record, bool warming, std::uint16_t& static_q4,
                           int farther_q8, bool in_front) {
  if (depth_revealed(record, warming, static_q4, farther_q8)) return kDepthRevealed;
  return in_front && depth_in_front(record, static_q4, farther_q8) ? kDepthInFront : 0;
}

// A pixel's counters after what shown_again let through (`kind`; 0 leaves them): the one step
// both engines apply at every level (BackgroundModel::apply_depth_flags, pyramid.cu).
STEREOD_HD std::uint16_t depth_flagged_counters(std::uint16_t counters, int kind, int lag) {
  if (kind == kDepthRevealed) return revealed_counters(counters, lag);
  if (kind == kDepthInFront) return in_front_counters(counters, lag);
  return counters;
}

// One pixel's learning step, after its decision is known. Background: mean and variance learn at
// alpha_bg (at least 1/(n+1) while warming up: a cumulative average at first), and the model's
// support grows. Foreground, also while warming up: the mean alone learns at alpha_fg (samples of
// passing objects never inflate the variance), and a pixel that stays still (value within
// still_tolerance of the previous frame's) for absorb_frames frames -- with support_absorption,
// absorb_after(support), or absorb_after(0) where it is relit -- is taken into the background
// outright, its model seeded afresh (support 0).
STEREOD_HD void learn_pixel(const std::uint8_t x[3], std::uint16_t* mean[3], std::uint32_t* var[3],
                            std::uint16_t& counters, std::uint8_t& prev_value, int channels,
                            bool foreground, long long frame, int warmup,
                            std::uint32_t initial_variance, const BackgroundFixed& f) {
  const int change = x[kValue] > prev_value ? x[kValue] - prev_value : prev_value - x[kValue];
  prev_value = x[kValue];
  int run = still_run(counters);
  int support = model_support(counters);
  if (foreground) {
    run = change <= f.still_tolerance ? (run < kAbsorbCountMax ? run + 1 : run) : 0;
    int needed = f.absorb_frames;
    if (f.support_absorption) {
      // A relit pixel's model was confirmed under a shadow that has left: those confirmations do
      // not count for the lit background.
      std::uint16_t model[3] = {0, 0, *mean[kValue]};  // intensity: only kValue is kept
      if (channels == 3) model[kHue] = *mean[kHue], model[kSaturation] = *mean[kSaturation];
      needed = absorb_after(relit(x, model, channels, f) ? 0 : support, f.absorb_frames);
    }
    if (f.absorb_frames > 0 && run >= needed) {
      for (int c = 0; c < 3; ++c) {
        if (channels == 1 && c != kValue) continue;
        *mean[c] = static_cast<std::uint16_t>(x[c] << 8);
        *var[c] = initial_variance;
      }
      counters = 0;
      return;
    }
    counters = pack_counters(run, support);
    for (int c = 0; c < 3; ++c) {
      if (channels == 1 && c != kValue) continue;
      channel_learn(x[c], *mean[c], *var[c], f.alpha_fg, c == kHue, false);
    }
    return;
  }
  if (support < kAbsorbCountMax) ++support;
  counters = pack_counters(0, support);
  std::int32_t alpha = f.alpha_bg;
  if (frame < warmup) {
    const long long cumulative = 65536 / (frame + 1);
    if (cumulative > alpha) alpha = static_cast<std::int32_t>(cumulative);
  }
  for (int c = 0; c < 3; ++c) {
    if (channels == 1 && c != kValue) continue;
    channel_learn(x[c], *mean[c], *var[c], alpha, c == kHue, true);
  }
}

// The foreground test of one pixel against its model. `channels` is 1 (intensity in slot kValue)
// or 3 (HSV). A pixel that changed but is darker with hue and saturation kept is a shadow and
// stays background. Returns 1 for foreground.
STEREOD_HD std::uint8_t classify_pixel(const std::uint8_t x[3], const std::uint16_t mean[3],
                                       const std::uint32_t var[3], int channels,
                                       const BackgroundFixed& f) {
  bool changed = channel_deviates(channel_diff(x[kValue], mean[kValue], false), var[kValue], f);
  if (channels == 3) {
    changed = changed || channel_deviates(channel_diff(x[kSaturation], mean[kSaturation], false),
                                          var[kSaturation], f);
    if (hue_used(x, mean, f)) {
      changed = changed || channel_deviates(channel_diff(x[kHue], mean[kHue], true), var[kHue], f);
    }
  }
  if (!changed) return 0;
  if (f.shadow) {
    // value / mean within [lo, hi]: x * 2^16 against ratio_q8 * mean_q8 (ratios <= 1, so
    // both sides < 2^25).
    const std::int32_t xv = static_cast<std::int32_t>(x[kValue]) << 16;
    const bool darker = xv >= f.shadow_lo_q8 * static_cast<std::int32_t>(mean[kValue]) &&
                        xv <= f.shadow_hi_q8 * static_cast<std::int32_t>(mean[kValue]);
    if (darker && color_kept(x, mean, channels, f)) return 0;
  }
  return 1;
}

}  // namespace stereod
