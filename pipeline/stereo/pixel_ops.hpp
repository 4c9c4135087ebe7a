// Per-pixel arithmetic shared, as the very same source, by the CPU reference and the CUDA kernels:
// what is defined once here cannot drift between the two engines. Everything is integer so the
// engines agree bit for bit.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define STEREOD_HD __host__ __device__ __forceinline__
#else
#define STEREOD_HD inline
#endif
// Unrolled in device code; the host compilers take the loops as they are.
#if defined(__CUDA_ARCH__)
#define STEREOD_UNROLL _Pragma("unroll")
#else
#define STEREOD_UNROLL
#endif

namespace stereod {

// Disparity output: uint16, 16 * d, this value where there is none.
constexpr std::uint16_t kInvalidDisparity = 0xFFFF;
constexpr int kSubpixelBits = 4;
constexpr int kSubpixelScale = 1 << kSubpixelBits;
// Integer disparity maps between levels use this for "none".
constexpr std::int16_t kNoDisparity = -1;
// The optional cost-ratio output (trinocular fusion) where a pixel has no winner.
constexpr std::uint32_t kNoCost = 0xFFFFFFFFu;

STEREOD_HD int clamp_int(int v, int lo, int hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

STEREOD_HD int popcount64(std::uint64_t v) {
#if defined(__CUDA_ARCH__)
  return __popcll(v);
#else
  return __builtin_popcountll(v);
#endif
}

// BT.601 luma, integer: (77 R + 150 G + 29 B + 128) >> 8. What the daemon turns color into, and
// what both engines compute when a frame arrives in color only.
STEREOD_HD std::uint8_t luma_bt601(int r, int g, int b) {
  return static_cast<std::uint8_t>((77 * r + 150 * g + 29 * b + 128) >> 8);
}

// Census code of pixel (x, y): one bit per window pixel other than the centre, in row-major window
// order, set when that pixel is darker than the centre. Pixels beyond the border repeat the edge.
STEREOD_HD std::uint64_t census_at(const std::uint8_t* img, int width, int height, int stride,
                                   int x, int y, int window_w, int window_h) {
  const int hw = window_w / 2;
  const int hh = window_h / 2;
  const std::uint8_t centre = img[y * stride + x];
  std::uint64_t code = 0;
  for (int v = -hh; v <= hh; ++v) {
    const std::uint8_t* row = img + clamp_int(y + v, 0, height - 1) * stride;
    for (int u = -hw; u <= hw; ++u) {
      if (u == 0 && v == 0) continue;
      code = (code << 1) | (row[clamp_int(x + u, 0, width - 1)] < centre ? 1u : 0u);
    }
  }
  return code;
}

// Intensity minus its (2r+1)^2 local mean (rounded down), offset to 128 and clamped to 0..255; the
// window repeats the edge. Used for the AD term so that a brightness offset between cameras
// cancels.
STEREOD_HD std::uint8_t mean_removed_at(const std::uint8_t* img, int width, int height, int stride,
                                        int x, int y, int radius) {
  int sum = 0;
  for (int v = -radius; v <= radius; ++v) {
    const std::uint8_t* row = img + clamp_int(y + v, 0, height - 1) * stride;
    for (int u = -radius; u <= radius; ++u) sum += row[clamp_int(x + u, 0, width - 1)];
  }
  const int n = (2 * radius + 1) * (2 * radius + 1);
  return static_cast<std::uint8_t>(clamp_int(img[y * stride + x] - sum / n + 128, 0, 255));
}

// The parent-neighbourhood rule (ALGORITHM.md step 5): pixel (x, y) searches twice the span of the
// valid disparities in the (2r+1)^2 block of the coarser level around its parent, widened by 2 on
// each side and clamped to 0..disparities-1; with no valid disparity there, the whole range.
// `parent(u, v)` is the coarser level's disparity at (u, v), kNoDisparity where there is none
// (the CPU passes its cross-checked map, the GPU checks on the fly).
template <typename Parent>
STEREOD_HD void parent_range(const Parent& parent, int parent_width, int parent_height, int x,
                             int y, int radius, int disparities, int& lo, int& hi) {
  const int px = x / 2 < parent_width - 1 ? x / 2 : parent_width - 1;
  const int py = y / 2 < parent_height - 1 ? y / 2 : parent_height - 1;
  const int u0 = px - radius > 0 ? px - radius : 0;
  const int u1 = px + radius < parent_width - 1 ? px + radius : parent_width - 1;
  const int v0 = py - radius > 0 ? py - radius : 0;
  const int v1 = py + radius < parent_height - 1 ? py + radius : parent_height - 1;
  int mn = 1 << 30, mx = -1;
  for (int v = v0; v <= v1; ++v) {
    for (int u = u0; u <= u1; ++u) {
      const int d = parent(u, v);
      if (d == kNoDisparity) continue;
      mn = d < mn ? d : mn;
      mx = d > mx ? d : mx;
    }
  }
  lo = 0;
  hi = disparities - 1;
  if (mx >= 0) {
    lo = clamp_int(2 * mn - 2, 0, disparities - 1);
    hi = clamp_int(2 * mx + 2, 0, disparities - 1);
  }
}

// census_at and mean_removed_at for window sizes known at compile time, where every window lies
// inside the image (no clamping): the same bits and bytes without the runtime loops, clamps and
// 64-bit shifts. The CUDA census kernel no longer calls them: it runs the row-of-four versions
// below (census_9x7_row4, mean_removed_3x3_row4), which the unit tests hold to these, one pixel
// at a time, and these to the general ones.
template <int kW, int kH>
STEREOD_HD std::uint64_t census_fixed(const std::uint8_t* t, int stride, int x, int y) {
  constexpr int kBits = kW * kH - 1;
  static_assert(kBits <= 64, "census code is 64 bits");
  const std::uint8_t centre = t[y * stride + x];
  std::uint32_t hi = 0, lo = 0;  // bits 63..32 and 31..0 of the code
  int k = 0;                     // bit k of the sequence lands at position kBits - 1 - k
  STEREOD_UNROLL
  for (int v = -(kH / 2); v <= kH / 2; ++v) {
    STEREOD_UNROLL
    for (int u = -(kW / 2); u <= kW / 2; ++u) {
      if (u == 0 && v == 0) continue;
      const std::uint32_t bit = t[(y + v) * stride + x + u] < centre ? 1u : 0u;
      const int pos = kBits - 1 - k;
      if (pos >= 32)
        hi |= bit << (pos - 32);
      else
        lo |= bit << pos;
      ++k;
    }
  }
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}

// Bytes of a (0..3) and b (4..7) picked by the four selector nibbles of `sel` (0..7 each), byte 0
// of the result by the lowest nibble: the GPU's __byte_perm.
STEREOD_HD std::uint32_t byte_perm(std::uint32_t a, std::uint32_t b, unsigned sel) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(a, b, sel);
#else
  const std::uint64_t ab = (static_cast<std::uint64_t>(b) << 32) | a;
  std::uint32_t r = 0;
  for (int i = 0; i < 4; ++i) {
    const unsigned byte = (sel >> (4 * i)) & 7u;
    r |= static_cast<std::uint32_t>((ab >> (8 * byte)) & 0xFFu) << (8 * i);
  }
  return r;
#endif
}

// Per byte, whether n's byte is below c's (unsigned), as bit 7 of that byte (c_low: c's low 7
// bits). Carry-free byte arithmetic: bit 7 of t says n's low 7 bits >= c's (no borrow crosses a
// byte); n < c <=> (n's top bit clear and c's set) or (top bits equal and the low bits smaller).
STEREOD_HD std::uint32_t below_bytes(std::uint32_t n, std::uint32_t c, std::uint32_t c_low) {
  const std::uint32_t t = (n | 0x80808080u) - c_low;
  return ((~n & c) | (~(n ^ c) & ~t)) & 0x80808080u;
}

// census_fixed<9, 7> (the CUDA engine's default census) of four pixels of a row at once,
// (x, y) .. (x + 3, y): each comparison of a window offset is one byte-wise compare of the four
// neighbours against the four centres. The bits are gathered per byte (byte p: pixel p) in the
// order of their positions in the code: the window is walked backwards, from bit 0 (the last
// neighbour of census_fixed's order) up, eight comparisons to an accumulator, each shifting right
// as the next comes in at bit 7 (within eight steps no bit crosses into the next byte), so that
// accumulator g holds bits 8g .. 8g + 7 of the four codes; a byte transpose then makes the codes.
// `t + x - 4` and the rows (stride bytes apart) must be 4-byte aligned on the GPU, which reads
// words: each row of the windows is three words, bytes x - 4 .. x + 7.
STEREOD_HD void census_9x7_row4(const std::uint8_t* t, int stride, int x, int y,
                                std::uint64_t codes[4]) {
  const auto row_words = [&](int r, std::uint32_t w[3]) {
    const std::uint8_t* p = t + r * stride + x - 4;
#if defined(__CUDA_ARCH__)
    for (int i = 0; i < 3; ++i) w[i] = reinterpret_cast<const std::uint32_t*>(p)[i];
#else
    std::memcpy(w, p, 3 * sizeof(std::uint32_t));
#endif
  };
  std::uint32_t w[3];
  row_words(y, w);
  const std::uint32_t c = w[1], c_low = c & 0x7F7F7F7Fu;
  std::uint32_t acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int step = 0;  // the bit position in the code
  STEREOD_UNROLL
  for (int v = 3; v >= -3; --v) {
    row_words(y + v, w);
    STEREOD_UNROLL
    for (int u = 4; u >= -4; --u) {
      if (u == 0 && v == 0) continue;
      // Bytes x + u .. x + u + 3 of the row.
      const std::uint32_t n = u == -4  ? w[0]
                              : u < 0  ? byte_perm(w[0], w[1], 0x3210u + 0x1111u * (4 + u))
                              : u == 0 ? w[1]
                              : u < 4  ? byte_perm(w[1], w[2], 0x3210u + 0x1111u * u)
                                       : w[2];
      std::uint32_t& a = acc[step >> 3];
      a = (a >> 1) | below_bytes(n, c, c_low);
      ++step;
    }
  }
  acc[7] >>= 2;  // its six bits came in at 2 .. 7 (bits 62 and 63 of the codes are 0)
  // Byte p of acc[g] is byte g of code p: transpose each four words' bytes.
  std::uint32_t half[2][4];
  STEREOD_UNROLL
  for (int k = 0; k < 2; ++k) {
    const std::uint32_t* q = acc + 4 * k;
    const std::uint32_t a = byte_perm(q[0], q[1], 0x5140u), b = byte_perm(q[0], q[1], 0x7362u);
    const std::uint32_t e = byte_perm(q[2], q[3], 0x5140u), f = byte_perm(q[2], q[3], 0x7362u);
    half[k][0] = byte_perm(a, e, 0x5410u);
    half[k][1] = byte_perm(a, e, 0x7632u);
    half[k][2] = byte_perm(b, f, 0x5410u);
    half[k][3] = byte_perm(b, f, 0x7632u);
  }
  STEREOD_UNROLL
  for (int p = 0; p < 4; ++p)
    codes[p] = (static_cast<std::uint64_t>(half[1][p]) << 32) | half[0][p];
}

template <int kR>
STEREOD_HD std::uint8_t mean_removed_fixed(const std::uint8_t* t, int stride, int x, int y) {
  int sum = 0;
  STEREOD_UNROLL
  for (int v = -kR; v <= kR; ++v) {
    STEREOD_UNROLL
    for (int u = -kR; u <= kR; ++u) sum += t[(y + v) * stride + x + u];
  }
  constexpr int kN = (2 * kR + 1) * (2 * kR + 1);
  return static_cast<std::uint8_t>(clamp_int(t[y * stride + x] - sum / kN + 128, 0, 255));
}

// mean_removed_fixed<1> (the CUDA engine's default) of four pixels of a row at once, (x, y) ..
// (x + 3, y), packed as bytes 0..3 of a word (byte k: pixel x + k). The four 3x3 windows span six
// columns; each column's 3-sum is taken once and shared (18 reads instead of 36), and the sum is
// divided by a constant (the generic version's runtime divisor cost the census kernel a fifth of
// its instructions). The sums are never negative, so unsigned division gives the same quotient.
STEREOD_HD std::uint32_t mean_removed_3x3_row4(const std::uint8_t* t, int stride, int x, int y) {
  const std::uint8_t* mid = t + y * stride + x - 1;  // column x - 1 of the centre row
  unsigned col[6];
  STEREOD_UNROLL
  for (int k = 0; k < 6; ++k) col[k] = mid[k - stride] + mid[k] + mid[k + stride];
  std::uint32_t packed = 0;
  STEREOD_UNROLL
  for (int k = 0; k < 4; ++k) {
    const unsigned sum = col[k] + col[k + 1] + col[k + 2];
    const int v =
        clamp_int(static_cast<int>(mid[k + 1]) - static_cast<int>(sum / 9u) + 128, 0, 255);
    packed |= static_cast<std::uint32_t>(v) << (8 * k);
  }
  return packed;
}

// 2x2 mean, rounded, of the finer level; coordinates past the edge repeat it (odd sizes).
STEREOD_HD std::uint8_t downsample_at(const std::uint8_t* fine, int fw, int fh, int stride, int x,
                                      int y) {
  const int x0 = 2 * x, y0 = 2 * y;
  const int x1 = x0 + 1 < fw ? x0 + 1 : fw - 1;
  const int y1 = y0 + 1 < fh ? y0 + 1 : fh - 1;
  const int sum = fine[y0 * stride + x0] + fine[y0 * stride + x1] + fine[y1 * stride + x0] +
                  fine[y1 * stride + x1];
  return static_cast<std::uint8_t>((sum + 2) >> 2);
}

// Compare-exchange of v[a] and v[b] (ascending), for the selection networks below.
#define STEREOD_CSWAP(a, b)                  \
  do {                                       \
    const T lo_ = v[a] < v[b] ? v[a] : v[b]; \
    const T hi_ = v[a] < v[b] ? v[b] : v[a]; \
    v[a] = lo_;                              \
    v[b] = hi_;                              \
  } while (0)

// Sorts eight values in place: Batcher's odd-even merge sort (19 compare-exchanges), branch-free
// on the GPU and vectorisable on the CPU, for any unsigned lane type.
template <typename T>
STEREOD_HD void sort8_t(T v[8]) {
  STEREOD_CSWAP(0, 1);
  STEREOD_CSWAP(2, 3);
  STEREOD_CSWAP(4, 5);
  STEREOD_CSWAP(6, 7);
  STEREOD_CSWAP(0, 2);
  STEREOD_CSWAP(1, 3);
  STEREOD_CSWAP(4, 6);
  STEREOD_CSWAP(5, 7);
  STEREOD_CSWAP(1, 2);
  STEREOD_CSWAP(5, 6);
  STEREOD_CSWAP(0, 4);
  STEREOD_CSWAP(1, 5);
  STEREOD_CSWAP(2, 6);
  STEREOD_CSWAP(3, 7);
  STEREOD_CSWAP(2, 4);
  STEREOD_CSWAP(3, 5);
  STEREOD_CSWAP(1, 2);
  STEREOD_CSWAP(3, 4);
  STEREOD_CSWAP(5, 6);
}

// The sum of the 4 smallest of eight values (the default k) with fewer comparisons: sort each half
// (5 compare-exchanges each), then the 4 smallest of two sorted quadruples are min(a[i], b[3-i])
// (a bitonic split). T: any unsigned lane type wide enough for the sum (the CPU engine runs it on
// 16-bit lanes where the sums fit).
template <typename T>
STEREOD_HD T sum_smallest_4_of_8_t(T v[8]) {
  STEREOD_CSWAP(0, 1);
  STEREOD_CSWAP(2, 3);
  STEREOD_CSWAP(0, 2);
  STEREOD_CSWAP(1, 3);
  STEREOD_CSWAP(1, 2);
  STEREOD_CSWAP(4, 5);
  STEREOD_CSWAP(6, 7);
  STEREOD_CSWAP(4, 6);
  STEREOD_CSWAP(5, 7);
  STEREOD_CSWAP(5, 6);
  T sum = 0;
  for (int i = 0; i < 4; ++i) sum += v[i] < v[7 - i] ? v[i] : v[7 - i];
  return sum;
}
#undef STEREOD_CSWAP

// Sum of the k smallest of eight values (k in 0..8); the sum of the k smallest does not depend on
// how they were found.
STEREOD_HD std::uint32_t sum_smallest_k_of_8(std::uint32_t v[8], int k) {
  sort8_t(v);
  std::uint32_t sum = 0;
  for (int i = 0; i < 8; ++i) sum += i < k ? v[i] : 0u;
  return sum;
}

STEREOD_HD std::uint32_t sum_smallest_4_of_8(std::uint32_t v[8]) {
  return sum_smallest_4_of_8_t(v);
}

// subpixel_offset's arithmetic in the unsigned type U, wide enough for 2 (8 |cm - cp|) + den.
template <typename U>
STEREOD_HD int parabola_offset(U cm, U c, U cp) {
  if (cm + cp <= U{2} * c) return 0;  // does not open upwards
  const U den = cm + cp - U{2} * c;
  const U mag = U{8} * (cm > cp ? cm - cp : cp - cm);  // |16 (cm - cp) / 2|
  const U q = (U{2} * mag + den) / (U{2} * den);       // rounded half away from zero
  const int clamped = q > U{8} ? 8 : static_cast<int>(q);
  return cm < cp ? -clamped : clamped;
}

// Parabola through (d-1, cm), (d, c), (d+1, cp): the vertex offset in 1/16 pixel, rounded half away
// from zero and clamped to +-8. A parabola that does not open upwards gives 0.
STEREOD_HD int subpixel_offset(std::uint32_t cm, std::uint32_t c, std::uint32_t cp) {
  // Costs below 2^24 (the window's are below 2^18) in 32 bits, the same arithmetic without
  // overflow: den < 2^25 and 2 |num| + den < 2^28 + 2^25. A 64-bit division costs the GPU three
  // times a 32-bit one (1.5 % of the finest level's matcher instructions went to it).
  if ((cm | c | cp) < (1u << 24)) return parabola_offset<std::uint32_t>(cm, c, cp);
  return parabola_offset<std::uint64_t>(cm, c, cp);
}

// How sharply the winner d stands out of its neighbours' costs (the trinocular fusion's "cost
// ratio"): 2^12 * (2 c + 1) / (cm + cp + 1), c = A(d), cm = A(d - 1), cp = A(d + 1), rounded
// down; small for a distinct minimum, about 2^12 for a flat cost curve (a direction that cannot
// see the texture); 2^12 when a neighbour is missing (`neighbours` false). 32-bit arithmetic:
// A < 2^18 (at most 9 sub-windows of 81 pixel costs of at most 255: the matcher refuses larger
// pixel costs), so (2 c + 1) << 12 < 2^31.
constexpr std::uint32_t kCostRatioOne = 1u << 12;
STEREOD_HD std::uint32_t winner_cost_ratio(std::uint32_t cm, std::uint32_t c, std::uint32_t cp,
                                           bool neighbours) {
  if (!neighbours) return kCostRatioOne;
  return ((2u * c + 1u) << 12) / (cm + cp + 1u);
}

// The published 16 * d of an integer winner d whose aggregated cost is `best` (ALGORITHM.md step
// 7): with `refine` (the `subpixel` parameter), refined by the parabola through its neighbours'
// costs where d is not at either end of the range and both neighbours are candidates
// (`cost_at(d - 1)`, `cost_at(d + 1)` not `none`; they are read only then), clamped to the range;
// without it exactly 16 * d.
template <typename CostAt>
STEREOD_HD std::uint16_t subpixel_disparity(int d, int disparities, std::uint32_t best,
                                            const CostAt& cost_at, std::uint32_t none,
                                            bool refine) {
  int offset = 0;
  if (refine && d >= 1 && d + 1 < disparities) {
    const std::uint32_t cm = cost_at(d - 1);
    const std::uint32_t cp = cost_at(d + 1);
    if (cm != none && cp != none) offset = subpixel_offset(cm, best, cp);
  }
  return static_cast<std::uint16_t>(
      clamp_int(kSubpixelScale * d + offset, 0, kSubpixelScale * (disparities - 1)));
}

// The cost ratio of the winner d (winner_cost_ratio) from `cost_at`, the aggregated cost of a
// candidate (`none` where it is not one): 1.0 where d is at either end of the range or a neighbour
// is not a candidate.
template <typename CostAt>
STEREOD_HD std::uint32_t winner_cost_ratio_at(int d, int disparities, std::uint32_t best,
                                              const CostAt& cost_at, std::uint32_t none) {
  const bool neighbours =
      d >= 1 && d + 1 < disparities && cost_at(d - 1) != none && cost_at(d + 1) != none;
  return winner_cost_ratio(neighbours ? cost_at(d - 1) : 0, best, neighbours ? cost_at(d + 1) : 0,
                           neighbours);
}

// The uniqueness test (ALGORITHM.md "Parameters"): a rival candidate more than 1 away from the
// winner, whose aggregated cost is within `uniqueness` percent of the winner's, makes the match
// ambiguous.
STEREOD_HD bool rival_makes_ambiguous(std::uint64_t rival, std::uint64_t best, int uniqueness) {
  return rival * static_cast<std::uint64_t>(100 - uniqueness) < best * 100;
}

// The left-right check (ALGORITHM.md step 6): the disparity at x of `row` (one row of a view's
// integer map) if the other view's map (`other_row`) agrees within `tolerance` at x + direction *
// d (direction -1: `row` is the left view's), else kNoDisparity.
STEREOD_HD std::int16_t cross_checked(const std::int16_t* row, const std::int16_t* other_row,
                                      int width, int x, int direction, int tolerance) {
  const int d = row[x];
  if (d == kNoDisparity) return kNoDisparity;
  const int ox = x + direction * d;
  if (ox < 0 || ox >= width) return kNoDisparity;
  const int od = other_row[ox];
  if (od == kNoDisparity || od - d > tolerance || d - od > tolerance) return kNoDisparity;
  return static_cast<std::int16_t>(d);
}

// Median of n (1..9) values: sorts in place and takes the lower middle one.
STEREOD_HD std::uint16_t lower_median(std::uint16_t* v, int n) {
  for (int i = 1; i < n; ++i) {
    const std::uint16_t key = v[i];
    int j = i - 1;
    while (j >= 0 && v[j] > key) {
      v[j + 1] = v[j];
      --j;
    }
    v[j + 1] = key;
  }
  return v[(n - 1) / 2];
}

// The 3x3 median around a centre value `c` over the neighbours that `at(dx, dy)` returns
// (kInvalidDisparity for a neighbour that is missing or outside the image); a pixel without
// disparity stays without.
template <typename At>
STEREOD_HD std::uint16_t median3x3_sampled(std::uint16_t c, const At& at) {
  if (c == kInvalidDisparity) return c;
  std::uint16_t v[9];
  int n = 0;
  for (int dy = -1; dy <= 1; ++dy) {
    for (int dx = -1; dx <= 1; ++dx) {
      const std::uint16_t d = at(dx, dy);
      if (d != kInvalidDisparity) v[n++] = d;
    }
  }
  return lower_median(v, n);
}

// median3x3_sampled without the insertion sort, whose data-dependent indices keep the values in
// local memory on the GPU: a missing neighbour is kInvalidDisparity, larger than any disparity, so
// it sorts last and the lower middle of the n valid values is sorted[(n - 1) / 2].
template <typename At>
STEREOD_HD std::uint16_t median3x3_network(std::uint16_t c, const At& at) {
  if (c == kInvalidDisparity) return c;
  std::uint32_t v[9];
  int n = 0;
  STEREOD_UNROLL
  for (int k = 0; k < 9; ++k) {
    v[k] = at(k % 3 - 1, k / 3 - 1);
    n += v[k] != kInvalidDisparity;
  }
  sort8_t(v);
  STEREOD_UNROLL
  for (int i = 7; i >= 0; --i) {  // the ninth value into its place
    const std::uint32_t lo = v[i] < v[i + 1] ? v[i] : v[i + 1];
    const std::uint32_t hi = v[i] < v[i + 1] ? v[i + 1] : v[i];
    v[i] = lo;
    v[i + 1] = hi;
  }
  const int k = (n - 1) / 2;  // 0 .. 4: the centre is valid
  return static_cast<std::uint16_t>(k == 0   ? v[0]
                                    : k == 1 ? v[1]
                                    : k == 2 ? v[2]
                                    : k == 3 ? v[3]
                                             : v[4]);
}

// The 3x3 median at (x, y) of a w x h map of 16-bit disparities (row-major, no padding) over its
// valid in-image neighbours.
STEREOD_HD std::uint16_t median3x3_at(const std::uint16_t* in, int w, int h, int x, int y) {
  return median3x3_sampled(in[y * w + x], [&](int dx, int dy) -> std::uint16_t {
    const int xx = x + dx, yy = y + dy;
    return (xx < 0 || xx >= w || yy < 0 || yy >= h) ? kInvalidDisparity : in[yy * w + xx];
  });
}

// Linear interpolation across a hole, rounded to nearest: the value at x between (xl, dl), (xr,
// dr).
STEREOD_HD int interpolate_disparity(int xl, int dl, int xr, int dr, int x) {
  const int span = xr - xl;
  return (dl * (xr - x) + dr * (x - xl) + span / 2) / span;
}

// Scanline hole filling of one row (ALGORITHM.md step 8): each run of foreground pixels without
// disparity takes its neighbours' values. Both neighbours within max_step (16ths) of each other:
// linear interpolation; farther apart: the smaller (the background side), or with
// background_mode off the side whose intensity is closer to the pixel's (ties: the smaller);
// one neighbour: its value; none: the run stays. `fg` null means every pixel is foreground;
// `intensity` is read only with background_mode off.
STEREOD_HD void fill_holes_row(std::uint16_t* d, int w, const std::uint8_t* intensity,
                               const std::uint8_t* fg, bool background_mode, int max_step) {
  int x = 0;
  while (x < w) {
    if (d[x] != kInvalidDisparity || (fg && !fg[x])) {
      ++x;
      continue;
    }
    const int start = x;  // a run of foreground holes: [start, end)
    while (x < w && d[x] == kInvalidDisparity && !(fg && !fg[x])) ++x;
    const int end = x;
    const int xl = start - 1, xr = end;
    const bool has_l = xl >= 0 && d[xl] != kInvalidDisparity;
    const bool has_r = xr < w && d[xr] != kInvalidDisparity;
    if (!has_l && !has_r) continue;
    for (int i = start; i < end; ++i) {
      int val;
      if (has_l && has_r) {
        const int dl = d[xl], dr = d[xr];
        if ((dl > dr ? dl - dr : dr - dl) <= max_step) {
          val = interpolate_disparity(xl, dl, xr, dr, i);
        } else if (background_mode) {
          val = dl < dr ? dl : dr;
        } else {
          const int c = intensity[i];
          const int el = c > intensity[xl] ? c - intensity[xl] : intensity[xl] - c;
          const int er = c > intensity[xr] ? c - intensity[xr] : intensity[xr] - c;
          val = el < er ? dl : (er < el ? dr : (dl < dr ? dl : dr));
        }
      } else {
        val = has_l ? d[xl] : d[xr];
      }
      d[i] = static_cast<std::uint16_t>(val);
    }
  }
}

}  // namespace stereod
