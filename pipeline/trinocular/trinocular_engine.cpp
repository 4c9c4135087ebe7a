#include "trinocular/trinocular_engine.hpp"

#include <chrono>
#include <cmath>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "stereo/params.hpp"
#include "stereo/pixel_ops.hpp"
#include "thread_pool.hpp"

namespace stereod {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

bool positive(double v) {
  return std::isfinite(v) && v > 0;
}

// The vertical pair's input of one slot: the reference and the vertical partner, transposed.
// Page-locked for the CUDA engine, which uploads straight from it (FrameInput::pinned), so the
// host writes each transposed pixel once; it stays untouched until the slot is free again.
struct VerticalInput {
  std::shared_ptr<std::uint8_t> gray, color;  // two images each, one after the other
};

// What a result's hold may touch after the engine is gone, and what the vertical engine may still
// read while it finishes (the engines go first: this outlives them).
struct State {
  std::mutex mutex;
  std::vector<FusionOutput> outputs;
  std::vector<VerticalInput> inputs;
  // Slots: a frame takes one at submit (its vertical input and its fusion output) and gives it
  // back when its result is released.
  std::vector<bool> used;
};

// A frame submitted to the horizontal engine, and whether its vertical half went through too.
struct Expected {
  std::uint64_t sequence = 0;
  int slot = -1;
  bool vertical = false;
  Clock::time_point submitted;
  double transpose_ms = 0;
};

class TrinocularEngine final : public Engine {
 public:
  TrinocularEngine(std::string_view kind, const EngineOptions& o, const TrinocularOptions& t)
      : options_(o), trinocular_(t), state_(std::make_shared<State>()) {
    check_trinocular_options(o, t);
    layout_ = vertical_layout(o.width, o.height, t.model.position);
    EngineOptions ho = o;
    ho.stereo = direction_stereo_params(o.stereo);
    ho.cost_ratio_output = true;
    ho.right_output = false;
    if (!ho.group) ho.group = make_engine_group();
    horizontal_ = make_engine(kind, ho);
    EngineOptions vo = vertical_engine_options(o, t);
    vo.group = ho.group;
    vertical_ = make_engine(kind, vo);
    name_ = std::string(horizontal_->name());
    pinned_ = name_ == "cuda";
    pool_ = ThreadPool::for_threads(o.cpu_threads);
    state_->outputs.resize(static_cast<std::size_t>(o.inflight));
    state_->inputs.resize(static_cast<std::size_t>(o.inflight));
    state_->used.assign(static_cast<std::size_t>(o.inflight), false);
    set_fusion(o.stereo);
  }

  std::string_view name() const override { return name_; }

  SubmitStatus submit(const FrameInput& f) override {
    // The transpositions work on gray and RGB; the daemon's loader refuses YUV cameras here.
    if (yuv_input(f)) throw ParameterError("frame", "a trinocular pair takes no YUV frames");
    check_frame_size(f, options_.width, options_.height);
    const bool from_color = gray_from_color(f);
    const bool vertical_ok =
        from_color ? f.vertical_color.width == options_.width &&
                         f.vertical_color.height == options_.height && f.vertical.empty()
                   : f.vertical.width == options_.width && f.vertical.height == options_.height;
    if (!vertical_ok) {
      throw ParameterError("frame", "frame " + std::to_string(f.sequence) +
                                        ": the vertical partner's image is missing or is not " +
                                        std::to_string(options_.width) + "x" +
                                        std::to_string(options_.height));
    }
    const int slot = reserve();
    if (slot < 0) return SubmitStatus::kBusy;
    const auto t0 = Clock::now();
    FrameInput h = f;
    h.vertical = {};
    h.vertical_color = {};
    // The fused map has no confidence of its own yet (EngineResult::confidence stays empty).
    h.confidence = false;
    SubmitStatus s = SubmitStatus::kBusy;
    try {
      s = horizontal_->submit(h);
    } catch (...) {
      release(slot);
      throw;
    }
    if (s == SubmitStatus::kBusy) {
      release(slot);
      return s;
    }
    Expected e;
    e.sequence = f.sequence;
    e.slot = slot;
    e.submitted = t0;
    try {
      const FrameInput v = vertical_frame(f, from_color, slot);
      e.transpose_ms = ms_between(t0, Clock::now());
      e.vertical = vertical_->submit(v) == SubmitStatus::kAccepted;
    } catch (const std::exception&) {
      e.vertical = false;  // reported with the frame's result
    }
    std::lock_guard<std::mutex> lock(expected_mutex_);
    expected_.push_back(e);
    return SubmitStatus::kAccepted;
  }

  std::optional<EngineResult> poll(std::chrono::nanoseconds wait) override {
    const auto deadline = Clock::now() + wait;
    auto left = [&] {
      const auto now = Clock::now();
      return now >= deadline ? std::chrono::nanoseconds(0) : deadline - now;
    };
    if (!pending_h_) {
      pending_h_ = horizontal_->poll(wait);
      if (!pending_h_) return std::nullopt;
    }
    Expected e;
    {
      std::lock_guard<std::mutex> lock(expected_mutex_);
      // submit() queues the frame's entry just after the horizontal engine took it: a result
      // can come first. It waits in pending_h_ for the next call.
      if (expected_.empty()) return std::nullopt;
      e = expected_.front();
    }
    if (e.vertical && !pending_v_) {
      pending_v_ = vertical_->poll(left());
      if (!pending_v_) return std::nullopt;
    }
    {
      std::lock_guard<std::mutex> lock(expected_mutex_);
      expected_.pop_front();
    }
    EngineResult h = std::move(*pending_h_);
    pending_h_.reset();
    std::optional<EngineResult> v = std::move(pending_v_);
    pending_v_.reset();
    return combine(std::move(h), std::move(v), e);
  }

  void set_params(const StereoParams& stereo, const BackgroundParams& background) override {
    const StereoParams vs = vertical_stereo_params(stereo, trinocular_);
    // Both checked before either engine takes them, so the two pairs never disagree.
    validate_for_images(stereo, options_.width, options_.height, options_.width, options_.height);
    validate_for_images(vs, options_.height, options_.width, options_.height, options_.width);
    validate_background_params(background);
    horizontal_->set_params(direction_stereo_params(stereo), background);
    vertical_->set_params(vs, background);
    std::lock_guard<std::mutex> lock(fusion_mutex_);
    set_fusion(stereo);
  }

  int in_flight() const override {
    std::lock_guard<std::mutex> lock(expected_mutex_);
    return static_cast<int>(expected_.size());
  }

 private:
  // A free slot, or -1.
  int reserve() {
    std::lock_guard<std::mutex> lock(state_->mutex);
    for (std::size_t i = 0; i < state_->used.size(); ++i) {
      if (!state_->used[i]) {
        state_->used[i] = true;
        return static_cast<int>(i);
      }
    }
    return -1;
  }

  void release(int slot) {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->used[static_cast<std::size_t>(slot)] = false;
  }

  // The vertical pair's frame: the reference and the vertical partner, transposed (and flipped
  // for a partner above) into the slot's buffers on the pool's threads.
  FrameInput vertical_frame(const FrameInput& f, bool from_color, int slot) {
    VerticalInput& buffers = state_->inputs[static_cast<std::size_t>(slot)];
    const int w = options_.height, h = options_.width;  // the vertical pair's size
    const std::size_t px = static_cast<std::size_t>(w) * h;
    auto allocate = [&](std::size_t bytes) {
      return pinned_ ? allocate_pinned(bytes)
                     : std::shared_ptr<std::uint8_t>(new std::uint8_t[bytes],
                                                     std::default_delete<std::uint8_t[]>());
    };
    FrameInput v;
    v.sequence = f.sequence;
    v.capture_time_ns = f.capture_time_ns;
    v.pinned = pinned_;
    const bool color = !f.left_color.empty() && !f.vertical_color.empty();
    if (color) {
      if (!buffers.color) buffers.color = allocate(2 * 3 * px);
      const ImageView<std::uint8_t> out[2] = {{buffers.color.get(), 3 * w, h},
                                              {buffers.color.get() + 3 * px, 3 * w, h}};
      to_vertical_frame(f.left_color, layout_, out[0], pool_.get());
      to_vertical_frame(f.vertical_color, layout_, out[1], pool_.get());
      v.left_color = {out[0].data, w, h, 3 * w};
      v.right_color = {out[1].data, w, h, 3 * w};
    }
    if (!from_color) {
      if (!buffers.gray) buffers.gray = allocate(2 * px);
      const ImageView<std::uint8_t> out[2] = {{buffers.gray.get(), w, h},
                                              {buffers.gray.get() + px, w, h}};
      to_vertical_frame(f.left, layout_, out[0], pool_.get());
      to_vertical_frame(f.vertical, layout_, out[1], pool_.get());
      v.left = out[0];
      v.right = out[1];
    }
    return v;
  }

  void set_fusion(const StereoParams& stereo) {
    fusion_.cost_ratio = trinocular_.cost_ratio;
    fusion_.scale = trinocular_.model.scale();
    fusion_.max_disparity_q4 = kSubpixelScale * (stereo.max_disparity - 1) + kSubpixelScale / 2;
  }

  EngineResult combine(EngineResult h, std::optional<EngineResult> v, const Expected& e) {
    EngineResult r;
    r.sequence = h.sequence;
    r.capture_time_ns = h.capture_time_ns;
    r.levels_used = h.levels_used;
    r.params_generation = h.params_generation;
    r.background_active = h.background_active;
    r.tested_fraction = h.tested_fraction;
    r.timings = h.timings;
    r.timings.upload_ms += e.transpose_ms;
    if (v) {
      r.timings.upload_ms += v->timings.upload_ms;
      r.timings.compute_ms += v->timings.compute_ms;
      r.timings.download_ms += v->timings.download_ms;
      r.timings.wait_ms = std::max(r.timings.wait_ms, v->timings.wait_ms);
    }
    const int index = e.slot;
    if (!h.ok) {
      r.error = h.error;
    } else if (!v) {
      r.error = "vertical pair: engine busy or frame refused";
    } else if (!v->ok) {
      r.error = "vertical pair: " + v->error;
    } else if (v->sequence != h.sequence) {
      r.error = "vertical pair: results out of step";
    } else {
      const auto t0 = Clock::now();
      FusionOutput& out = state_->outputs[static_cast<std::size_t>(index)];
      FusionInput in{h.disparity, h.cost_ratio, v->disparity, v->cost_ratio, layout_, {}};
      // The reference camera's background model decides: background carries no disparity.
      in.foreground = h.foreground;
      try {
        FusionParams fp;
        {
          std::lock_guard<std::mutex> lock(fusion_mutex_);
          fp = fusion_;
        }
        fuse_trinocular(in, fp, out, pool_.get());
        r.ok = true;
        r.disparity = out.fused.view();
        r.direction = out.direction.view();
        r.vertical_disparity = out.vertical.view();
        r.horizontal_disparity = h.disparity;
        r.foreground = h.foreground;
      } catch (const std::exception& ex) {
        r.error = std::string("fusion: ") + ex.what();
      }
      r.timings.compute_ms += ms_between(t0, Clock::now());
    }
    r.timings.total_ms = ms_between(e.submitted, Clock::now());
    std::shared_ptr<const void> h_hold = std::move(h.hold);
    std::shared_ptr<const void> v_hold = v ? std::move(v->hold) : nullptr;
    std::shared_ptr<State> state = state_;
    // The vertical pair's slot goes back before the horizontal one's: submit asks the horizontal
    // engine first, so whenever it finds a slot there the vertical engine has one too.
    r.hold = std::shared_ptr<const void>(state.get(),
                                         [state, index, h_hold, v_hold](const void*) mutable {
                                           v_hold.reset();
                                           h_hold.reset();
                                           std::lock_guard<std::mutex> lock(state->mutex);
                                           state->used[static_cast<std::size_t>(index)] = false;
                                         });
    return r;
  }

  EngineOptions options_;
  TrinocularOptions trinocular_;
  VerticalLayout layout_;
  std::shared_ptr<State> state_;
  std::unique_ptr<Engine> horizontal_, vertical_;
  std::string name_;
  bool pinned_ = false;               // the vertical input goes page-locked (CUDA engine)
  std::shared_ptr<ThreadPool> pool_;  // the transpositions and the fusion
  mutable std::mutex expected_mutex_;
  std::deque<Expected> expected_;
  std::optional<EngineResult> pending_h_, pending_v_;  // poll only
  std::mutex fusion_mutex_;
  FusionParams fusion_;
};

}  // namespace

StereoParams direction_stereo_params(const StereoParams& stereo) {
  StereoParams p = stereo;
  p.refine = false;
  return p;
}

StereoParams vertical_stereo_params(const StereoParams& stereo, const TrinocularOptions& t) {
  StereoParams p = direction_stereo_params(stereo);
  p.max_disparity = vertical_max_disparity(stereo.max_disparity, t.model.scale());
  return p;
}

EngineOptions vertical_engine_options(const EngineOptions& o, const TrinocularOptions& t) {
  EngineOptions v = o;
  v.width = o.height;
  v.height = o.width;
  v.stereo = vertical_stereo_params(o.stereo, t);
  v.cost_ratio_output = true;
  v.right_output = false;
  return v;
}

void check_trinocular_options(const EngineOptions& o, const TrinocularOptions& t) {
  const TrinocularModel& m = t.model;
  if (!positive(m.horizontal_focal_px) || !positive(m.vertical_focal_px)) {
    throw ParameterError("trinocular.focal_px", "trinocular: focal lengths must be positive");
  }
  if (!positive(m.horizontal_baseline_m) || !positive(m.vertical_baseline_m)) {
    throw ParameterError("trinocular.baseline_m", "trinocular: baselines must be positive");
  }
  if (!(t.cost_ratio >= 0.01 && t.cost_ratio <= 100)) {
    throw ParameterError("trinocular.cost_ratio",
                         "trinocular.cost_ratio = " + std::to_string(t.cost_ratio) +
                             ": must be between 0.01 and 100");
  }
  if (o.left_map || o.right_map) {
    throw ParameterError("calibration",
                         "trinocular pairs take rectified images (calibration: none)");
  }
  check_engine_options(o);
  validate_for_images(o.stereo, o.width, o.height, o.width, o.height);
  const EngineOptions v = vertical_engine_options(o, t);
  try {
    validate_for_images(v.stereo, v.width, v.height, v.width, v.height);
  } catch (const ParameterError& e) {
    throw ParameterError(
        e.parameter(), std::string("vertical pair (transposed, ") + std::to_string(v.width) + "x" +
                           std::to_string(v.height) + ", " +
                           std::to_string(v.stereo.max_disparity) + " disparities): " + e.what());
  }
}

std::unique_ptr<Engine> make_trinocular_engine(std::string_view kind, const EngineOptions& options,
                                               const TrinocularOptions& trinocular) {
  return std::make_unique<TrinocularEngine>(kind, options, trinocular);
}

}  // namespace stereod
