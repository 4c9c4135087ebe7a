#include "stereo/refinement.hpp"

#include <algorithm>
#include <atomic>
#include <vector>

#include "stereo/refine_ops.hpp"
#include "thread_pool.hpp"

namespace stereod {
namespace {

bool foreground_at(ImageView<const std::uint8_t> fg, int x, int y) {
  return fg.empty() || fg(x, y) != 0;
}

}  // namespace

void Refiner::refine(Disparity16& map, const RefineInput& in, const StereoParams& p,
                     ThreadPool* pool) {
  for (int i = 0; i < p.refine_iterations; ++i) {
    // A round that changes nothing leaves the map as it found it, and so would every later one.
    if (!vote(map, in, p, pool)) break;
  }
  if (p.refine_interpolate) interpolate(map, in, pool);
}

bool Refiner::vote(Disparity16& map, const RefineInput& in, const StereoParams& p,
                   ThreadPool* pool) {
  previous_ = map;
  const int w = map.width(), h = map.height();
  const CrossArms& arms = *in.arms;
  auto voter = [&](int x, int y) {
    const std::uint16_t* row = previous_.row(y);
    const std::uint16_t own = row[x];
    if (own == kInvalidDisparity) return foreground_at(in.foreground, x, y);
    return refine_at_edge(own, x > 0 ? row[x - 1] : kInvalidDisparity,
                          x + 1 < w ? row[x + 1] : kInvalidDisparity, p.refine_edges,
                          p.refine_edges_near);
  };
  std::atomic<bool> changed{false};
  // Column by column: every pixel of column x sums, over the rows of its vertical arm, the votes
  // of the horizontal arm of the pixel (x, row), the same whichever pixel of the column asks. So
  // each of those row segments is counted once per column, into a short list of (disparity,
  // votes) (a segment holds few distinct disparities), and each voter merges the lists of its
  // rows instead of reading every pixel of its region.
  for_rows(pool, w, [&](int x0, int x1) {
    std::vector<int> histogram(static_cast<std::size_t>(in.disparities), 0);
    std::vector<int> touched;
    std::vector<std::uint32_t> entries;  // (votes << 16) | disparity, the segments' lists
    std::vector<std::uint32_t> start(static_cast<std::size_t>(h) + 1);
    std::vector<int> voters;
    std::vector<int> needed(static_cast<std::size_t>(h) + 1);  // +1 / -1 where arms start / end
    bool any = false;
    for (int x = x0; x < x1; ++x) {
      voters.clear();
      std::fill(needed.begin(), needed.end(), 0);
      for (int y = 0; y < h; ++y) {
        if (!voter(x, y)) continue;
        voters.push_back(y);
        ++needed[static_cast<std::size_t>(y - arms.up(x, y))];
        --needed[static_cast<std::size_t>(y + arms.down(x, y) + 1)];
      }
      if (voters.empty()) continue;
      entries.clear();
      int covering = 0;  // voters whose vertical arm covers row qy
      for (int qy = 0; qy < h; ++qy) {
        start[static_cast<std::size_t>(qy)] = static_cast<std::uint32_t>(entries.size());
        covering += needed[static_cast<std::size_t>(qy)];
        if (covering == 0) continue;  // an empty list nobody reads
        const std::uint16_t* row = previous_.row(qy);
        for (int qx = x - arms.left(x, qy); qx <= x + arms.right(x, qy); ++qx) {
          if (row[qx] == kInvalidDisparity) continue;
          const int d = refine_vote_bin(row[qx]);
          if (histogram[static_cast<std::size_t>(d)]++ == 0) touched.push_back(d);
        }
        for (int d : touched) {
          entries.push_back(static_cast<std::uint32_t>(histogram[static_cast<std::size_t>(d)])
                                << 16 |
                            static_cast<std::uint32_t>(d));
          histogram[static_cast<std::size_t>(d)] = 0;
        }
        touched.clear();
      }
      start[static_cast<std::size_t>(h)] = static_cast<std::uint32_t>(entries.size());
      for (const int y : voters) {
        int votes = 0, best = -1, best_count = 0;
        const std::uint32_t* e = entries.data();
        for (std::uint32_t k = start[static_cast<std::size_t>(y - arms.up(x, y))];
             k < start[static_cast<std::size_t>(y + arms.down(x, y) + 1)]; ++k) {
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
        if (best >= 0 && refine_vote_accepted(best_count, votes, p.refine_votes, p.refine_share)) {
          const auto value = static_cast<std::uint16_t>(best * kSubpixelScale);
          any = any || value != previous_(x, y);
          map(x, y) = value;
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
