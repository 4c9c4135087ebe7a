#include "ingest/frame_sync.hpp"

#include <stdexcept>
#include <string>

namespace stereod {
namespace {

std::int64_t distance(std::int64_t a, std::int64_t b) {
  return a > b ? a - b : b - a;
}

}  // namespace

FrameSync::FrameSync(const FrameSyncOptions& options) : options_(options) {
  if (options.cameras < 1) throw std::invalid_argument("FrameSync: needs at least one camera");
  if (options.tolerance_ns < 0) throw std::invalid_argument("FrameSync: negative tolerance");
  if (options.max_pending < 1) throw std::invalid_argument("FrameSync: max_pending must be >= 1");
  const auto n = static_cast<std::size_t>(options.cameras);
  pending_.resize(n);
  for (auto& q : pending_) q.reserve(static_cast<std::size_t>(options.max_pending) + 1);
  last_time_.resize(n);
  chosen_.resize(n);
  stats_.dropped_per_camera.assign(n, 0);
}

void FrameSync::drop(int camera, std::uint64_t& counter) {
  ++counter;
  ++stats_.dropped_per_camera[static_cast<std::size_t>(camera)];
}

std::optional<FrameSet> FrameSync::push(int camera, std::shared_ptr<const CameraFrame> frame,
                                        std::int64_t now_ns) {
  if (camera < 0 || camera >= options_.cameras || !frame) {
    throw std::out_of_range("FrameSync::push: no camera " + std::to_string(camera));
  }
  ++stats_.frames_in;
  const std::int64_t t = frame->capture_time_ns;
  auto& last = last_time_[static_cast<std::size_t>(camera)];
  if (last && t <= *last) {
    drop(camera, stats_.dropped_late);
    return std::nullopt;
  }
  last = t;
  auto& q = pending_[static_cast<std::size_t>(camera)];
  q.push_back({t, std::move(frame)});
  if (q.size() > static_cast<std::size_t>(options_.max_pending)) {
    q.erase(q.begin());
    drop(camera, stats_.dropped_overflow);
  }
  std::optional<FrameSet> set = try_complete(camera, t, now_ns);
  drop_unmatchable();
  return set;
}

std::optional<FrameSet> FrameSync::try_complete(int camera, std::int64_t t, std::int64_t now_ns) {
  std::int64_t earliest = t, latest = t;
  for (int c = 0; c < options_.cameras; ++c) {
    const auto& q = pending_[static_cast<std::size_t>(c)];
    if (c == camera) {
      chosen_[static_cast<std::size_t>(c)] = static_cast<int>(q.size()) - 1;
      continue;
    }
    int best = -1;
    for (int i = 0; i < static_cast<int>(q.size()); ++i) {
      // Oldest first, so "<=" keeps the newer of two equally close frames.
      if (best < 0 || distance(q[static_cast<std::size_t>(i)].time, t) <=
                          distance(q[static_cast<std::size_t>(best)].time, t)) {
        best = i;
      }
    }
    if (best < 0) return std::nullopt;
    const std::int64_t bt = q[static_cast<std::size_t>(best)].time;
    earliest = bt < earliest ? bt : earliest;
    latest = bt > latest ? bt : latest;
    chosen_[static_cast<std::size_t>(c)] = best;
  }
  if (latest - earliest > options_.tolerance_ns) return std::nullopt;

  FrameSet set;
  set.sequence = next_sequence_++;
  set.complete_time_ns = now_ns;
  set.frames.reserve(static_cast<std::size_t>(options_.cameras));
  for (int c = 0; c < options_.cameras; ++c) {
    auto& q = pending_[static_cast<std::size_t>(c)];
    const int chosen = chosen_[static_cast<std::size_t>(c)];
    set.frames.push_back(std::move(q[static_cast<std::size_t>(chosen)].frame));
    for (int i = 0; i < chosen; ++i) drop(c, stats_.dropped_unmatched);  // superseded
    q.erase(q.begin(), q.begin() + chosen + 1);
  }
  ++stats_.sets;
  stats_.matched += static_cast<std::uint64_t>(options_.cameras);
  stats_.last_spread_ns = latest - earliest;
  return set;
}

void FrameSync::drop_unmatchable() {
  const std::int64_t tol = options_.tolerance_ns;
  // Dropping a frame can leave another camera's frame without its only candidate: repeat until
  // nothing changes (a handful of frames at most).
  bool changed = true;
  while (changed) {
    changed = false;
    for (int c = 0; c < options_.cameras; ++c) {
      auto& q = pending_[static_cast<std::size_t>(c)];
      for (std::size_t i = 0; i < q.size();) {
        const std::int64_t t = q[i].time;
        bool hopeless = false;
        for (int o = 0; o < options_.cameras && !hopeless; ++o) {
          const auto& last = last_time_[static_cast<std::size_t>(o)];
          if (o == c || !last || *last <= t + tol) continue;
          bool candidate = false;
          for (const auto& p : pending_[static_cast<std::size_t>(o)]) {
            candidate = candidate || distance(p.time, t) <= tol;
          }
          hopeless = !candidate;
        }
        if (hopeless) {
          q.erase(q.begin() + static_cast<std::ptrdiff_t>(i));
          drop(c, stats_.dropped_unmatched);
          changed = true;
        } else {
          ++i;
        }
      }
    }
  }
}

void FrameSync::reset() {
  for (int c = 0; c < options_.cameras; ++c) {
    auto& q = pending_[static_cast<std::size_t>(c)];
    for (std::size_t i = 0; i < q.size(); ++i) drop(c, stats_.dropped_reset);
    q.clear();
    last_time_[static_cast<std::size_t>(c)].reset();
  }
}

}  // namespace stereod
