// FrameSync: groups the frames of a rig's cameras into sets whose capture times lie within a
// tolerance (docs/ARCHITECTURE.md "Data flow"). Plain C++ on timestamps, no GStreamer, not
// thread-safe (the rig serialises calls).
//
// Rules, per pushed frame f of camera c at capture time t:
//  - A frame not newer than the camera's previous one is dropped (late).
//  - f joins camera c's pending frames (at most max_pending; the oldest is dropped beyond that).
//  - f is tried as the newest member of a set: every other camera contributes its pending frame
//    closest to t (the newer on a tie); when the spread (latest - earliest) of those times is at
//    most the tolerance, the set is emitted. A set can only be completed by its newest-arriving
//    frame, so the set emitted is always the newest complete one.
//  - After a set, every pending frame not newer than its camera's member is dropped (unmatched):
//    sets come out in capture order and never reuse or go back past a frame.
//  - A pending frame is dropped (unmatched) as soon as it can no longer be matched: some other
//    camera already delivered a frame later than t + tolerance (its later frames are later
//    still) and holds none within the tolerance of t.
// Nothing depends on wall-clock time, so the behaviour is exact and testable.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "frame.hpp"

namespace stereod {

struct FrameSyncOptions {
  int cameras = 2;
  std::int64_t tolerance_ns = 0;
  int max_pending = 4;  // per camera
};

struct FrameSyncStats {
  std::uint64_t sets = 0;                         // complete sets emitted
  std::uint64_t frames_in = 0;                    // frames pushed
  std::uint64_t matched = 0;                      // frames that went out in a set
  std::uint64_t dropped_unmatched = 0;            // no partner within the tolerance, or superseded
  std::uint64_t dropped_late = 0;                 // not newer than its camera's previous frame
  std::uint64_t dropped_overflow = 0;             // pending frames of a camera beyond max_pending
  std::uint64_t dropped_reset = 0;                // pending when the rig restarted
  std::vector<std::uint64_t> dropped_per_camera;  // every kind of drop, by camera
  std::int64_t last_spread_ns = 0;                // latest - earliest capture time of the last set

  std::uint64_t dropped() const {
    return dropped_unmatched + dropped_late + dropped_overflow + dropped_reset;
  }
};

class FrameSync {
 public:
  explicit FrameSync(const FrameSyncOptions& options);

  // Adds camera `camera`'s frame (index in the rig's camera order); returns the set it completes,
  // if any, stamped with `now_ns` as its completion time. Frames are taken by shared pointer so
  // that a set's frames are shared, never copied.
  std::optional<FrameSet> push(int camera, std::shared_ptr<const CameraFrame> frame,
                               std::int64_t now_ns);

  // Drops every pending frame (counted as dropped_reset) and forgets the cameras' last times:
  // after a restart the clock may have moved either way. Set numbering goes on.
  void reset();

  const FrameSyncStats& stats() const { return stats_; }
  const FrameSyncOptions& options() const { return options_; }
  int pending(int camera) const { return static_cast<int>(pending_[camera].size()); }

 private:
  struct Pending {
    std::int64_t time;
    std::shared_ptr<const CameraFrame> frame;
  };
  void drop(int camera, std::uint64_t& counter);
  std::optional<FrameSet> try_complete(int camera, std::int64_t t, std::int64_t now_ns);
  void drop_unmatchable();

  FrameSyncOptions options_;
  // Oldest first; reserved once, so pushing never allocates (a few entries: erasing at the front
  // is cheap).
  std::vector<std::vector<Pending>> pending_;
  std::vector<std::optional<std::int64_t>> last_time_;
  std::vector<int> chosen_;  // scratch: pending index per camera of the set being built
  std::uint64_t next_sequence_ = 0;
  FrameSyncStats stats_;
};

}  // namespace stereod
