// Semi-global aggregation over each pixel's own search range (docs/ALGORITHM.md "Semi-global
// aggregation"; Hirschmüller 2008, on per-pixel ranges as in Rothermel et al.'s tSGM).
//
// The cost C(p, d) is the window pass's A (adaptive_window.hpp; with stereo.sgm_cost pixel, a
// window of 1 pixel: the pixel cost) of every candidate d in pixel p's range [lo(p), hi(p)],
// kNoCost where d is not allowed (its target pixel is outside the
// image or background). Along each path direction r, in scan order,
//   L_r(p, d) = C(p, d) + min(L_r(q, d), L_r(q, d +- 1) + P1, m_q + P2(p, q)) - m_q,
// q = p - r, m_q = min_k L_r(q, k). Where q's range does not hold d (or d +- 1), that term is left
// out: a candidate the previous pixel did not try can only be reached by a jump (P2), or a step
// (P1) from a neighbour it did try. Where q is outside the image, is not matched, or has no
// allowed candidate, the path starts afresh: L_r(p, d) = C(p, d). A candidate that is not allowed
// has L = infinity on every path and is never chosen. S(p, d) = sum over the paths of L_r(p, d);
// the winner and everything after it (uniqueness, confidence, subpixel, cost ratio) follow the
// same rules as the window (confidence.hpp, pixel_ops.hpp), on S, with S(d +- 1) missing where
// d +- 1 is outside the range.
//
// P1 = sgm_p1 * n and P2 = sgm_p2 * n, n = (1 + best_k) * subwindow^2 pixel costs in A (1 for
// the pixel cost); with sgm_gradient g > 0,
// P2(p, q) = max(P1, P2 * g / (g + |I(p) - I(q)|)) on the reference view's raw intensities: a
// depth jump is cheaper across an intensity edge.
//
// Paths: 4 (left, right, up, down) or 8 (and the diagonals). The four whose predecessor lies above
// or to the left are one top-down scan, the other four one bottom-up scan; each keeps two rows of
// L per direction, so the memory is the volume's C and two S, whatever the paths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "image.hpp"
#include "stereo/adaptive_window.hpp"
#include "stereo/search_range.hpp"
#include "stereo/sgm_ops.hpp"  // the integer rules, shared with the CUDA engine

namespace stereod {

class ThreadPool;

// The most (pixel, candidate) cells one view's volume may hold. A view keeps the volume and two
// scans' sums, 12 bytes a cell: 2^25 cells are 384 MiB per view, 768 MiB for a pair. The cells
// follow the search ranges, so an ordinary frame needs a fraction of w * h * D (about 9 cells a
// pixel where the parent is known), but a pixel without a parent searches its level's whole
// range: a frame whose coarse levels failed (a covered lens, a blank wall at every level) could
// need w * h * D cells. Such a frame fails with an error (the engine publishes it as an error
// frame) instead of taking the host's memory.
constexpr std::size_t kSgmMaxCells = std::size_t{1} << 25;
// The error of a frame whose view needs `cells` cells (both engines report it in these words);
// `mode`: which aggregation's volume it is (sgm, or cross, whose region sums share the limit).
std::string sgm_volume_error(std::size_t cells, Aggregation mode = Aggregation::kSgm);

// One value per (pixel, candidate of its range), rows of pixels in order, each pixel's candidates
// lo .. hi in order.
class CostVolume {
 public:
  // Sizes the volume for these ranges (contents undefined). Throws std::runtime_error, saying how
  // many cells were needed (sgm_volume_error for `mode`), where they exceed kSgmMaxCells.
  void layout(const SearchRanges& ranges, Aggregation mode = Aggregation::kSgm);
  std::uint32_t* at(int x, int y) { return values_.data() + offset(x, y); }
  const std::uint32_t* at(int x, int y) const { return values_.data() + offset(x, y); }
  std::size_t offset(int x, int y) const {
    return offsets_[static_cast<std::size_t>(y) * static_cast<std::size_t>(width_) +
                    static_cast<std::size_t>(x)];
  }
  std::size_t size() const { return values_.size(); }
  int width() const { return width_; }
  int height() const { return height_; }

 private:
  int width_ = 0, height_ = 0;
  std::vector<std::size_t> offsets_;  // per pixel, and one past the end
  std::vector<std::uint32_t> values_;
};

// Winners of rows y0 .. y1 - 1 of one view, written to its outputs (disparity, and q4, cost ratio
// and confidence where asked for), from a cost per volume cell: `cell(at)` for the cell at offset
// `at`, read only where the volume's own value is allowed (not kNoCost). The window's rules
// (sgm_pick_winner), the candidates being each pixel's range.
template <typename Cell>
void pick_volume_winners(const ViewMatch& view, const CostVolume& volume, const Cell& cell,
                         int disparities, int uniqueness, bool refine_subpixel, int y0, int y1) {
  const int w = volume.width();
  for (int y = y0; y < y1; ++y) {
    std::int16_t* disparity = view.disparity->row(y);
    std::uint16_t* q4 = view.q4 ? view.q4->row(y) : nullptr;
    std::uint32_t* ratio = view.cost_ratio ? view.cost_ratio->row(y) : nullptr;
    std::uint8_t* confidence = view.confidence ? view.confidence->row(y) : nullptr;
    for (int x = 0; x < w; ++x) {
      const int lo = view.ranges->lo(x, y), hi = view.ranges->hi(x, y);
      const std::size_t at = volume.offset(x, y);
      const std::uint32_t* c = volume.at(x, y);
      // kNoCost where the candidate is not allowed or outside the range.
      auto cost_at = [&](int d) -> std::uint32_t {
        if (d < lo || d > hi || c[d - lo] == kNoCost) return kNoCost;
        return cell(at + static_cast<std::size_t>(d - lo));
      };
      const SgmWinner win =
          sgm_pick_winner(lo, hi, cost_at, disparities, uniqueness, q4 != nullptr, refine_subpixel,
                          confidence != nullptr, ratio != nullptr);
      disparity[x] = static_cast<std::int16_t>(win.d);
      if (confidence) confidence[x] = win.confidence;
      if (q4) q4[x] = win.q4;
      if (ratio) ratio[x] = win.cost_ratio;
    }
  }
}

// Sizes a view's outputs (those it asks for) for a w x h level.
void size_view_outputs(const ViewMatch& view, int w, int h);

struct SgmOptions {
  int disparities = 0;           // the level's range is 0 .. disparities - 1
  int paths = 8;                 // 4 or 8
  std::uint32_t p1 = 0, p2 = 0;  // already multiplied by the window's pixel count
  int gradient = 0;              // 0: P2 is not scaled by the intensity step
  int uniqueness = 0;
  bool subpixel = false;        // the finest level: q4 (and cost ratios where asked for)
  bool refine_subpixel = true;  // with `subpixel`: the parabola offset (false: exactly 16*d)
};

// Keeps its scratch between calls.
class SgmMatcher {
 public:
  // Both views of a level: views[v].volume holds C, views[v].ranges the ranges, gray[v] the
  // reference view's raw intensities; the outputs of ViewMatch (disparity, and optionally q4,
  // cost ratio, confidence) are written as the window matcher would.
  void match(const ViewMatch (&views)[2], const ImageView<const std::uint8_t> (&gray)[2],
             const SgmOptions& options, ThreadPool* pool);

 private:
  std::vector<std::uint32_t> sums_[2][2];  // per view: the top-down and the bottom-up scan's S
};

}  // namespace stereod
