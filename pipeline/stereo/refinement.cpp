#include "stereo/refinement.hpp"

#include <algorithm>
#include <atomic>
#include <vector>

#include "stereo/refine_ops.hpp"
#include "thread_pool.hpp"
#include "transpose.hpp"

namespace stereod {
namespace {

bool foreground_at(ImageView<const std::uint8_t> fg, int x, int y) {
  return fg.empty() || fg(x, y) != 0;
}

// dst = the w x h row-major bytes at src, column by column (column x at dst + x * h).
void transpose_bytes(const std::uint8_t* src, int w, int h, std::vector<std::uint8_t>& dst,
                     ThreadPool* pool) {
  dst.resize(static_cast<std::size_t>(w) * h);
  transpose_pixels(src, w, w, h, 1, false, ImageView<std::uint8_t>(dst.data(), h, w, h), pool);
}

}  // namespace

void Refiner::refine(Disparity16& map, const RefineInput& in, const StereoParams& p,
                     ThreadPool* pool) {
  if (p.refine_iterations > 0) {
    const int w = map.width(), h = map.height();
    const CrossArms& arms = *in.arms;
    transpose_bytes(arms.up.data(), w, h, up_, pool);
    transpose_bytes(arms.down.data(), w, h, down_, pool);
    transpose_bytes(arms.left.data(), w, h, left_, pool);
    transpose_bytes(arms.right.data(), w, h, right_, pool);
  }
  for (int i = 0; i < p.refine_iterations; ++i) {
    // A round that changes nothing leaves the map as it found it, and so would every later one.
    if (!vote(map, in, p, i > 0, pool)) break;
  }
  if (p.refine_interpolate) interpolate(map, in, pool);
}

void Refiner::mark_rows(const Disparity16& map, const RefineInput& in, const StereoParams& p,
                        bool again, ThreadPool* pool) {
  const int w = map.width(), h = map.height();
  const CrossArms& arms = *in.arms;
  flags_.ensure_size(w, h);
  runs_.ensure_size(w, h);
  const int step = p.refine_edges;
  const bool near_only = p.refine_edges_near;
  // The loops below are written without data-dependent branches: on real maps holes, edges and
  // changes are scattered, and mispredicted branches cost more than the arithmetic.
  for_rows(pool, h, [&](int y0, int y1) {
    // Local copies: the byte stores below may alias anything the closure refers to, and the
    // compiler would reload every captured value in every iteration.
    const int width = w, edge_step = step;
    const bool near = near_only, later = again;
    // Per pixel of a row: its vote key (padded with -1 on both sides), the foreground (all 1
    // without a mask), and (later) the distance to the nearest pixel at or left of it, and at or
    // right of it, whose key the last round changed (more than width: none).
    std::vector<int> padded_key(static_cast<std::size_t>(width) + 2, -1);
    int* key = padded_key.data() + 1;
    std::vector<int> left_distances(static_cast<std::size_t>(width)),
        right_distances(static_cast<std::size_t>(width));
    int* to_left = left_distances.data();
    int* to_right = right_distances.data();
    std::vector<std::uint8_t> everywhere(
        in.foreground.empty() ? static_cast<std::size_t>(width) : 0, 1);
    for (int y = y0; y < y1; ++y) {
      const std::uint16_t* row = map.row(y);
      for (int x = 0; x < width; ++x) key[x] = refine_vote_key(row[x]);
      if (later) {
        const std::uint16_t* before = previous_.row(y);
        int distance = width + 1;
        for (int x = 0; x < width; ++x) {
          distance = key[x] != refine_vote_key(before[x]) ? 0 : std::min(distance + 1, width + 1);
          to_left[x] = distance;
        }
        distance = width + 1;
        for (int x = width - 1; x >= 0; --x) {
          distance = to_left[x] == 0 ? 0 : std::min(distance + 1, width + 1);
          to_right[x] = distance;
        }
      }
      // The runs of the row (pixels of one key), for the round's segment counts: run[x] = the
      // pixels from x to its run's end (at most 65535: a longer run is walked in several steps).
      std::uint16_t* run = runs_.row(y);
      int length = 0;
      for (int x = width - 1; x >= 0; --x) {
        length = key[x] == key[x + 1] && length < 0xFFFF ? length + 1 : 1;
        run[x] = static_cast<std::uint16_t>(length);
      }
      const std::uint8_t* fg = in.foreground.empty() ? everywhere.data() : in.foreground.row(y);
      const std::uint8_t* left = arms.left.row(y);
      const std::uint8_t* right = arms.right.row(y);
      std::uint8_t* f = flags_.row(y);
      for (int x = 0; x < width; ++x) {
        const int k = key[x];
        const bool voter =
            k < 0 ? fg[x] != 0 : refine_edge_keys(k, key[x - 1], key[x + 1], edge_step, near);
        f[x] = static_cast<std::uint8_t>(voter ? kVoter : 0);
      }
      if (later) {
        for (int x = 0; x < width; ++x) {
          const int l = to_left[x];
          const int r = to_right[x];
          const bool stale = (l <= left[x]) | (r <= right[x]);
          const bool beside = (l <= 1) | (r <= 1);
          f[x] = static_cast<std::uint8_t>(f[x] | (stale ? kStaleSegment : 0) |
                                           (beside ? kChangedBeside : 0));
        }
      }
    }
  });
  transpose_bytes(flags_.data(), w, h, flags_by_column_, pool);
}

bool Refiner::vote(Disparity16& map, const RefineInput& in, const StereoParams& p, bool again,
                   ThreadPool* pool) {
  // previous_ still holds the map before the last round, map the map after it.
  mark_rows(map, in, p, again, pool);
  previous_ = map;
  const int w = map.width(), h = map.height();
  std::atomic<bool> changed{false};
  // Column by column: every pixel of column x sums, over the rows of its vertical arm, the votes
  // of the horizontal arm of the pixel (x, row), the same whichever pixel of the column asks. So
  // each of those row segments is counted once per column, into a short list of (disparity,
  // votes) (a segment holds few distinct disparities), and each voter merges the lists of its
  // rows instead of reading every pixel of its region.
  for_rows(pool, w, [&](int x0, int x1) {
    // Local copies: the stores below may alias what the closure refers to, and the compiler
    // would reload those values in every iteration.
    const int width = w, height = h, min_votes = p.refine_votes, share = p.refine_share;
    const bool later = again;
    const std::uint16_t* const before = previous_.data();
    const std::uint16_t* const runs = runs_.data();
    std::uint16_t* const out = map.data();
    const std::uint8_t* const flags = flags_by_column_.data();
    const std::uint8_t *const ups = up_.data(), *const downs = down_.data();
    const std::uint8_t *const lefts = left_.data(), *const rights = right_.data();
    std::vector<int> histogram(static_cast<std::size_t>(in.disparities), 0);
    std::vector<int> touched;
    std::vector<std::uint32_t> entries;  // (votes << 16) | disparity, the segments' lists
    std::vector<std::uint32_t> start(static_cast<std::size_t>(height) + 1);
    std::vector<int> voters;
    std::vector<int> needed(static_cast<std::size_t>(height) +
                            1);  // +1 / -1 where arms start / end
    // Again: rows qy of this column whose segment (the horizontal arm of (x, qy)) holds a pixel
    // that the last round changed, counted from the top.
    std::vector<int> stale(static_cast<std::size_t>(height) + 1);
    bool any = false;
    for (int x = x0; x < x1; ++x) {
      // Column x of the transposed planes: walked down, they are read in order.
      const std::size_t column = static_cast<std::size_t>(x) * height;
      const std::uint8_t* flag = flags + column;
      const std::uint8_t* up = ups + column;
      const std::uint8_t* down = downs + column;
      const std::uint8_t* left = lefts + column;
      const std::uint8_t* right = rights + column;
      voters.clear();
      std::fill(needed.begin(), needed.end(), 0);
      if (later) {
        for (int qy = 0; qy < height; ++qy) {
          stale[static_cast<std::size_t>(qy) + 1] =
              stale[static_cast<std::size_t>(qy)] + ((flag[qy] & kStaleSegment) ? 1 : 0);
        }
      }
      // After the first round a pixel is voted on later only if a pixel that the last round
      // changed is in its region (its vote may differ) or next to it in the row (whether it is
      // voted on may differ): otherwise this round would give it the same value the last round
      // did, and that value is already in the map.
      auto may_change = [&](int y) {
        return stale[static_cast<std::size_t>(y + down[y] + 1)] >
                   stale[static_cast<std::size_t>(y - up[y])] ||
               (flag[y] & kChangedBeside) != 0;
      };
      for (int y = 0; y < height; ++y) {
        if (!(flag[y] & kVoter) || (later && !may_change(y))) continue;
        voters.push_back(y);
        ++needed[static_cast<std::size_t>(y - up[y])];
        --needed[static_cast<std::size_t>(y + down[y] + 1)];
      }
      if (voters.empty()) continue;
      entries.clear();
      int covering = 0;  // voters whose vertical arm covers row qy
      for (int qy = 0; qy < height; ++qy) {
        start[static_cast<std::size_t>(qy)] = static_cast<std::uint32_t>(entries.size());
        covering += needed[static_cast<std::size_t>(qy)];
        if (covering == 0) continue;  // an empty list nobody reads
        const std::uint16_t* row = before + static_cast<std::size_t>(qy) * width;
        const std::uint16_t* run = runs + static_cast<std::size_t>(qy) * width;
        // Run by run: a segment of a piecewise constant map is a few runs.
        const int end = x + right[qy] + 1;
        for (int qx = x - left[qy]; qx < end;) {
          const int next = std::min(end, qx + run[qx]);
          if (row[qx] != kInvalidDisparity) {
            const int d = refine_vote_bin(row[qx]);
            int& count = histogram[static_cast<std::size_t>(d)];
            if (count == 0) touched.push_back(d);
            count += next - qx;
          }
          qx = next;
        }
        for (int d : touched) {
          entries.push_back(static_cast<std::uint32_t>(histogram[static_cast<std::size_t>(d)])
                                << 16 |
                            static_cast<std::uint32_t>(d));
          histogram[static_cast<std::size_t>(d)] = 0;
        }
        touched.clear();
      }
      start[static_cast<std::size_t>(height)] = static_cast<std::uint32_t>(entries.size());
      for (const int y : voters) {
        int votes = 0, best = -1, best_count = 0;
        const std::uint32_t* e = entries.data();
        for (std::uint32_t k = start[static_cast<std::size_t>(y - up[y])];
             k < start[static_cast<std::size_t>(y + down[y] + 1)]; ++k) {
          const int d = static_cast<int>(e[k] & 0xFFFFu), n = static_cast<int>(e[k] >> 16);
          int& count = histogram[static_cast<std::size_t>(d)];
          if (count == 0) touched.push_back(d);
          count += n;
          votes += n;
          // The most votes, ties to the smaller disparity, whatever the order of the lists.
          if (count > best_count || (count == best_count && d < best)) {
            best = d;
            best_count = count;
          }
        }
        for (int d : touched) histogram[static_cast<std::size_t>(d)] = 0;
        touched.clear();
        if (best >= 0 && refine_vote_accepted(best_count, votes, min_votes, share)) {
          const auto value = static_cast<std::uint16_t>(best * kSubpixelScale);
          any = any || value != before[static_cast<std::size_t>(y) * width + x];
          out[static_cast<std::size_t>(y) * width + x] = value;
        }
      }
    }
    if (any) changed.store(true, std::memory_order_relaxed);
  });
  return changed.load();
}

void Refiner::interpolate(Disparity16& map, const RefineInput& in, ThreadPool* pool) {
  const int w = map.width(), h = map.height();
  const std::size_t n = map.size();
  previous_ = map;
  const std::uint16_t* prev = previous_.data();
  auto hole = [&](int x, int y) {
    return prev[static_cast<std::size_t>(y) * w + x] == kInvalidDisparity &&
           foreground_at(in.foreground, x, y);
  };
  key_.assign(n, 0xFFFFFFFFu);
  occluded_.assign(n, 0);
  nearest_.resize(n);
  const Image<std::int16_t>& partner = *in.partner;
  for_rows(pool, h, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      const std::int16_t* prow = partner.row(y);
      for (int x = 0; x < w; ++x) {
        if (!hole(x, y)) continue;
        occluded_[static_cast<std::size_t>(y) * w + x] = refine_occluded(
            x, w, in.sign, in.disparities, in.tolerance, [prow](int xp) { return int{prow[xp]}; });
      }
    }
  });
  for (int dir = 0; dir < kRefineDirections; ++dir) {
    int dx, dy;
    refine_direction(dir, dx, dy);
    // nearest(p) = p + step when that pixel is valid, else nearest(p + step); none past the
    // border or at a background pixel. Each row reads only rows already done (dy != 0), or its
    // own pixels farther along (dy == 0).
    auto nearest_of = [&](int x, int y) -> std::int32_t {
      const int qx = x + dx, qy = y + dy;
      if (qx < 0 || qx >= w || qy < 0 || qy >= h || !foreground_at(in.foreground, qx, qy)) {
        return -1;
      }
      const std::size_t q = static_cast<std::size_t>(qy) * w + qx;
      return prev[q] != kInvalidDisparity ? static_cast<std::int32_t>(q) : nearest_[q];
    };
    for (int i = 0; i < h; ++i) {
      const int y = dy > 0 ? h - 1 - i : i;
      std::int32_t* row = nearest_.data() + static_cast<std::size_t>(y) * w;
      if (dx > 0 && dy == 0) {
        for (int x = w - 1; x >= 0; --x) row[x] = nearest_of(x, y);
      } else {
        for (int x = 0; x < w; ++x) row[x] = nearest_of(x, y);
      }
    }
    for_rows(pool, h, [&](int y0, int y1) {
      for (int y = y0; y < y1; ++y) {
        const std::uint8_t* g = in.gray.row(y);
        for (int x = 0; x < w; ++x) {
          const std::size_t p = static_cast<std::size_t>(y) * w + x;
          if (!hole(x, y) || nearest_[p] < 0) continue;
          const std::size_t q = static_cast<std::size_t>(nearest_[p]);
          const int gq = in.gray.row(static_cast<int>(q / w))[q % w];
          const int contrast = gq > g[x] ? gq - g[x] : g[x] - gq;
          const std::uint32_t key = refine_candidate_key(occluded_[p] != 0, contrast, prev[q]);
          if (key < key_[p]) {
            key_[p] = key;
            map.data()[p] = prev[q];
          }
        }
      }
    });
  }
}

}  // namespace stereod
