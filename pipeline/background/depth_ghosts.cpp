#include "background/depth_ghosts.hpp"

#include "thread_pool.hpp"

namespace stereod {

void DepthGhosts::reset() {
  for (Record& r : ring_) r.frame = -1;
  static_q4_.clear();
  last_shown_.clear();
}

void DepthGhosts::record_decision(long long frame, const Gray8& decision) {
  Record& r = ring_[static_cast<std::size_t>(frame % kMaxDepthLag)];
  r.frame = frame;
  r.matched = false;
  r.width = decision.width();
  r.height = decision.height();
  r.pixels.resize(decision.size());
  for (std::size_t i = 0; i < decision.size(); ++i)
    r.pixels[i] = depth_record(kDepthNone, decision.data()[i] != 0);
}

void DepthGhosts::record_disparity(long long frame, const std::uint16_t* q4, std::size_t pixels) {
  Record& r = ring_[static_cast<std::size_t>(frame % kMaxDepthLag)];
  if (r.frame != frame || r.pixels.size() != pixels) return;
  for (std::size_t i = 0; i < pixels; ++i) r.pixels[i] = with_disparity(r.pixels[i], q4[i]);
  r.matched = true;
}

const Gray8* DepthGhosts::flags(long long frame, int lag, int warmup, int farther_q8, bool in_front,
                                ThreadPool* pool) {
  const long long seen = frame - lag;
  if (seen < 0) return nullptr;
  Record& r = ring_[static_cast<std::size_t>(seen % kMaxDepthLag)];
  if (r.frame != seen || !r.matched) return nullptr;
  if (static_q4_.size() != r.pixels.size()) {
    static_q4_.assign(r.pixels.size(), kDepthNone);
    last_shown_.assign(r.pixels.size(), kDepthShownNever);
  }
  flags_.ensure_size(r.width, r.height);
  const bool warming = seen < warmup;
  for_rows(pool, r.height, [&](int y0, int y1) {
    for (std::size_t i = static_cast<std::size_t>(y0) * r.width;
         i < static_cast<std::size_t>(y1) * r.width; ++i) {
      const int shown = depth_shows(r.pixels[i], warming, static_q4_[i], farther_q8, in_front);
      flags_.data()[i] = static_cast<std::uint8_t>(shown_again(shown, seen, last_shown_[i]));
    }
  });
  return &flags_;
}

}  // namespace stereod
