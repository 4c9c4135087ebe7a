#include "cpu_engine.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <vector>

#include "cpu_pair_processor.hpp"
#include "thread_pool.hpp"

namespace stereod {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

enum class SlotState { kFree, kQueued, kDone, kHeld };

struct Slot {
  SlotState state = SlotState::kFree;
  Gray8 left, right;
  RgbImage left_color, right_color;
  bool has_color = false;
  bool confidence = false;  // FrameInput::confidence
  PairOutput out;
  std::uint64_t sequence = 0;
  std::int64_t capture_time_ns = 0;
  std::uint64_t generation = 0;
  StereoParams params;  // the parameters in force when the frame was submitted
  BackgroundParams background;
  bool ok = false;
  std::string error;
  StageTimings timings;
  Clock::time_point submitted;
};

// Everything a result's hold may touch after the engine is gone lives here, shared.
struct State {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<Slot> slots;
  std::deque<int> queued;    // slots waiting to be computed, in submission order
  std::deque<int> in_order;  // slots submitted and not yet polled, in submission order
  bool running = false;      // a frame task of this engine is on the pool (queued or running)
  StereoParams params;
  BackgroundParams background;
  std::uint64_t generation = 0;
  // EngineOptions::on_result, here so that a frame task may call it after the engine is gone.
  std::function<void()> on_result;
};

class CpuEngine final : public Engine {
 public:
  explicit CpuEngine(const EngineOptions& o) : options_(o), state_(std::make_shared<State>()) {
    validate_for_images(o.stereo, o.width, o.height, o.width, o.height);
    validate_background_params(o.background);
    check_engine_options(o);
    state_->on_result = o.on_result;
    state_->slots.resize(static_cast<std::size_t>(o.inflight));
    for (auto& s : state_->slots) {
      s.left.resize(o.width, o.height);
      s.right.resize(o.width, o.height);
    }
    state_->params = o.stereo;
    state_->background = o.background;
    processor_ = std::make_unique<CpuPairProcessor>(o.stereo, o.background, o.cpu_threads,
                                                    o.left_map, o.right_map);
  }

  // Finishes the frames already submitted (their tasks use this engine), as the daemon's stop
  // expects.
  ~CpuEngine() override {
    std::unique_lock<std::mutex> lock(state_->mutex);
    state_->changed.wait(lock, [&] { return !state_->running; });
  }

  std::string_view name() const override { return "cpu"; }

  SubmitStatus submit(const FrameInput& f) override {
    check_frame_size(f, options_.width, options_.height);
    const auto t0 = Clock::now();
    int index = -1;
    bool start = false;
    {
      std::lock_guard<std::mutex> lock(state_->mutex);
      for (std::size_t i = 0; i < state_->slots.size(); ++i) {
        if (state_->slots[i].state == SlotState::kFree) {
          index = static_cast<int>(i);
          break;
        }
      }
      if (index < 0) return SubmitStatus::kBusy;
      state_->slots[index].state = SlotState::kQueued;  // reserved; the worker waits for the queue
    }
    Slot& s = state_->slots[index];
    const bool yuv = yuv_input(f);
    s.has_color = yuv || (!f.left_color.empty() && !f.right_color.empty());
    s.confidence = f.confidence;
    if (yuv) {  // the CUDA engine converts the same way on the device
      yuv_to_rgb(f.left_yuv, s.left_color);
      yuv_to_rgb(f.right_yuv, s.right_color);
    } else if (s.has_color) {
      copy_into(f.left_color, s.left_color);
      copy_into(f.right_color, s.right_color);
    }
    if (yuv || gray_from_color(f)) {
      rgb_to_gray(s.left_color, s.left);  // what the CUDA engine computes on the device
      rgb_to_gray(s.right_color, s.right);
    } else {
      copy_into(f.left, s.left);
      copy_into(f.right, s.right);
    }
    s.sequence = f.sequence;
    s.capture_time_ns = f.capture_time_ns;
    s.submitted = t0;
    s.timings = {};
    s.timings.upload_ms = ms_between(t0, Clock::now());
    {
      std::lock_guard<std::mutex> lock(state_->mutex);
      s.generation = state_->generation;
      s.params = state_->params;
      s.background = state_->background;
      state_->queued.push_back(index);
      state_->in_order.push_back(index);
      start = !state_->running;
      state_->running = true;
    }
    state_->changed.notify_all();
    if (start) post_next_frame();
    return SubmitStatus::kAccepted;
  }

  std::optional<EngineResult> poll(std::chrono::nanoseconds wait) override {
    std::unique_lock<std::mutex> lock(state_->mutex);
    auto ready = [&] {
      return !state_->in_order.empty() &&
             state_->slots[state_->in_order.front()].state == SlotState::kDone;
    };
    if (!state_->changed.wait_for(lock, wait, ready)) return std::nullopt;
    const int index = state_->in_order.front();
    state_->in_order.pop_front();
    Slot& s = state_->slots[index];
    s.state = SlotState::kHeld;
    EngineResult r;
    r.sequence = s.sequence;
    r.capture_time_ns = s.capture_time_ns;
    r.ok = s.ok;
    r.error = s.error;
    if (s.ok) {
      r.disparity = s.out.stereo.left.view();
      if (options_.right_output) r.right_disparity = s.out.stereo.right.view();
      if (options_.cost_ratio_output) r.cost_ratio = s.out.stereo.cost_ratio.view();
      r.foreground = s.out.foreground.view();
      if (s.confidence) r.confidence = s.out.stereo.confidence.view();
      r.background_active = s.out.background_active;
      r.tested_fraction = s.out.tested_fraction;
    }
    r.levels_used = s.out.stereo.levels_used;
    r.params_generation = s.generation;
    r.timings = s.timings;
    std::shared_ptr<State> state = state_;
    r.hold = std::shared_ptr<const void>(&s, [state, index](const void*) {
      {
        std::lock_guard<std::mutex> guard(state->mutex);
        state->slots[index].state = SlotState::kFree;
      }
      state->changed.notify_all();
    });
    return r;
  }

  void set_params(const StereoParams& p, const BackgroundParams& b) override {
    validate_for_images(p, options_.width, options_.height, options_.width, options_.height);
    validate_background_params(b);
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->params = p;
    state_->background = b;
    ++state_->generation;
  }

  int in_flight() const override {
    std::lock_guard<std::mutex> lock(state_->mutex);
    return static_cast<int>(state_->in_order.size());
  }

 private:
  // Frames run as tasks on the pool, one at a time per engine (the background model carries state
  // from frame to frame): each task computes the oldest queued frame, then queues the next task if
  // more frames wait. Pairs take turns on the pool's threads; no thread belongs to one engine.
  void post_next_frame() {
    processor_->pool().post([this] { compute_next_frame(); });
  }

  void compute_next_frame() {
    const std::shared_ptr<State> state = state_;  // `this` may be gone once running is false
    int index;
    StereoParams params;
    BackgroundParams background;
    std::uint64_t generation;
    {
      std::lock_guard<std::mutex> lock(state->mutex);
      index = state->queued.front();
      state->queued.pop_front();
      params = state->slots[index].params;
      background = state->slots[index].background;
      generation = state->slots[index].generation;
    }
    Slot& s = state->slots[index];
    const auto t0 = Clock::now();
    try {
      // Frames carry the generation current at submit; a newer set_params applies only to
      // frames submitted after it. Parameters were validated by set_params.
      if (generation != applied_generation_) {
        processor_->set_params(params, background);
        applied_generation_ = generation;
      }
      PairFrame in;
      in.left = s.left.view();
      in.right = s.right.view();
      in.right_output = options_.right_output;
      in.cost_ratio_output = options_.cost_ratio_output;
      in.confidence = s.confidence;
      if (s.has_color) {
        in.left_color = view_of(s.left_color);
        in.right_color = view_of(s.right_color);
      }
      processor_->process(in, s.out);
      s.ok = true;
      s.error.clear();
    } catch (const std::exception& e) {
      s.ok = false;
      s.error = e.what();
    }
    const auto t1 = Clock::now();
    s.timings.compute_ms = ms_between(t0, t1);
    s.timings.total_ms = ms_between(s.submitted, t1);
    bool more;
    {
      std::lock_guard<std::mutex> lock(state->mutex);
      s.state = SlotState::kDone;
      more = !state->queued.empty();
      state->running = more;
    }
    state->changed.notify_all();
    if (state->on_result) state->on_result();
    if (more) post_next_frame();
  }

  EngineOptions options_;
  std::shared_ptr<State> state_;
  std::unique_ptr<CpuPairProcessor> processor_;
  std::uint64_t applied_generation_ = 0;  // touched by the frame tasks only, one at a time
};

}  // namespace

std::unique_ptr<Engine> make_cpu_engine(const EngineOptions& options) {
  return std::make_unique<CpuEngine>(options);
}

}  // namespace stereod
