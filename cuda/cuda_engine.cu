#include "cuda_engine.hpp"

#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "device_pipeline.hpp"

namespace stereod {
namespace {

using Clock = std::chrono::steady_clock;

enum class SlotState { kFree, kInFlight, kHeld };

struct Slot {
  SlotState state = SlotState::kFree;
  // Host side (pinned; mapped in zero-copy mode).
  PinnedBuffer<std::uint8_t> in_gray[2], in_rgb[2];
  PinnedBuffer<std::uint16_t> out_disp[2];
  PinnedBuffer<std::uint8_t> out_fg;
  PinnedBuffer<unsigned long long> out_tested;
  // Device side (unused in zero-copy mode).
  DeviceBuffer<std::uint8_t> dev_gray[2], dev_rgb[2];
  DeviceBuffer<std::uint16_t> dev_disp[2];
  DeviceBuffer<std::uint8_t> dev_fg;
  DeviceBuffer<unsigned long long> dev_tested;
  std::unique_ptr<Stream> stream;
  std::unique_ptr<Event> started, uploaded, computed, done;
  cudaGraphExec_t graph = nullptr;
  std::uint64_t graph_config = 0;  // the configuration the graph was captured for
  bool graph_color = false;
  // The frame in the slot.
  std::uint64_t sequence = 0;
  std::int64_t capture_time_ns = 0;
  std::uint64_t generation = 0;
  bool has_color = false;
  bool background_active = false;
  int levels = 0;
  Clock::time_point submitted;
};

// What a result's hold touches after the engine may be gone.
struct SharedState {
  std::mutex mutex;
  std::vector<std::unique_ptr<Slot>> slots;
};

double elapsed_ms(const Event& a, const Event& b) {
  float ms = 0;
  return cudaEventElapsedTime(&ms, a.get(), b.get()) == cudaSuccess ? static_cast<double>(ms) : 0.0;
}

void copy_rows(std::uint8_t* dst, const std::uint8_t* src, int row_bytes, int rows,
               std::ptrdiff_t src_stride) {
  for (int y = 0; y < rows; ++y)
    std::memcpy(dst + static_cast<std::size_t>(y) * row_bytes, src + y * src_stride, row_bytes);
}

class CudaEngine final : public Engine {
 public:
  explicit CudaEngine(const EngineOptions& o)
      : options_(o), shared_(std::make_shared<SharedState>()) {
    validate_for_images(o.stereo, o.width, o.height, o.width, o.height);
    validate_background_params(o.background);
    if (o.inflight < 1 || o.inflight > 64) {
      throw ParameterError("gpu.inflight", "gpu.inflight = " + std::to_string(o.inflight) +
                                               ": must be between 1 and 64");
    }
    STEREOD_CUDA(cudaSetDevice(o.gpu_device));
    stereo_ = o.stereo;
    background_ = o.background;
    pipeline_ = std::make_unique<cuda::DevicePipeline>(o.width, o.height);
    if (!o.left_map != !o.right_map) {
      throw ParameterError("calibration", "rectification needs maps for both cameras or neither");
    }
    if (o.left_map && (o.left_map->width != o.width || o.left_map->height != o.height ||
                       o.right_map->width != o.width || o.right_map->height != o.height)) {
      throw ParameterError("calibration",
                           "the rectification maps are for " + std::to_string(o.left_map->width) +
                               "x" + std::to_string(o.left_map->height) +
                               " images, the engine's are " + std::to_string(o.width) + "x" +
                               std::to_string(o.height));
    }
    pipeline_->set_rectification(o.left_map.get(), o.right_map.get());
    control_ = std::make_unique<Stream>();
    const std::size_t px = static_cast<std::size_t>(o.width) * o.height;
    const bool mapped = o.zero_copy;
    for (int k = 0; k < o.inflight; ++k) {
      auto s = std::make_unique<Slot>();
      for (int i = 0; i < 2; ++i) {
        s->in_gray[i].allocate(px, mapped);
        s->in_rgb[i].allocate(px * 3, mapped);
        s->out_disp[i].allocate(px, mapped);
        if (!mapped) {
          s->dev_gray[i].allocate(px);
          s->dev_rgb[i].allocate(px * 3);
          s->dev_disp[i].allocate(px);
        }
      }
      s->out_fg.allocate(px, mapped);
      s->out_tested.allocate(2 * kMaxLevels, mapped);
      if (!mapped) {
        s->dev_fg.allocate(px);
        s->dev_tested.allocate(2 * kMaxLevels);
      }
      s->stream = std::make_unique<Stream>();
      s->started = std::make_unique<Event>(true);
      s->uploaded = std::make_unique<Event>(true);
      s->computed = std::make_unique<Event>(true);
      s->done = std::make_unique<Event>(true);
      shared_->slots.push_back(std::move(s));
    }
    reconfigure(false);
  }

  ~CudaEngine() override {
    // Finish what is in flight so no kernel outlives its buffers; a result's hold may outlive us
    // (it then only flips a flag in SharedState).
    std::lock_guard<std::mutex> lock(shared_->mutex);
    for (auto& s : shared_->slots) {
      cudaStreamSynchronize(s->stream->get());
      if (s->graph) cudaGraphExecDestroy(s->graph);
      s->graph = nullptr;
    }
  }

  std::string_view name() const override { return "cuda"; }

  SubmitStatus submit(const FrameInput& f) override {
    check_frame_size(f, options_.width, options_.height);
    const auto t0 = Clock::now();
    std::lock_guard<std::mutex> lock(shared_->mutex);
    Slot* slot = nullptr;
    for (auto& s : shared_->slots) {
      if (s->state == SlotState::kFree) {
        slot = s.get();
        break;
      }
    }
    if (!slot) return SubmitStatus::kBusy;

    // Parameters changed, or the frames started/stopped carrying color: reconfigure first.
    const bool has_color = !f.left_color.empty() && !f.right_color.empty();
    const bool want_color = background_.enabled && background_.color && has_color;
    if (applied_generation_ != generation_ || want_color != pipeline_->color()) {
      reconfigure(want_color);
    }

    const int w = options_.width, h = options_.height;
    copy_rows(slot->in_gray[0].get(), f.left.data, w, h, f.left.stride);
    copy_rows(slot->in_gray[1].get(), f.right.data, w, h, f.right.stride);
    if (want_color) {
      copy_rows(slot->in_rgb[0].get(), f.left_color.data, 3 * w, h, f.left_color.stride);
      copy_rows(slot->in_rgb[1].get(), f.right_color.data, 3 * w, h, f.right_color.stride);
    }
    if (slot->graph == nullptr || slot->graph_config != config_version_) capture(*slot);

    const cudaStream_t st = slot->stream->get();
    const std::size_t px = static_cast<std::size_t>(w) * h;
    STEREOD_CUDA(cudaEventRecord(slot->started->get(), st));
    if (!options_.zero_copy) {
      for (int i = 0; i < 2; ++i) {
        STEREOD_CUDA(cudaMemcpyAsync(slot->dev_gray[i].get(), slot->in_gray[i].get(), px,
                                     cudaMemcpyHostToDevice, st));
        if (want_color) {
          STEREOD_CUDA(cudaMemcpyAsync(slot->dev_rgb[i].get(), slot->in_rgb[i].get(), 3 * px,
                                       cudaMemcpyHostToDevice, st));
        }
      }
    }
    STEREOD_CUDA(cudaEventRecord(slot->uploaded->get(), st));
    // Kernels of consecutive frames share the pyramid and the background model: keep them in order.
    if (last_computed_) STEREOD_CUDA(cudaStreamWaitEvent(st, last_computed_, 0));
    STEREOD_CUDA(cudaGraphLaunch(slot->graph, st));
    STEREOD_CUDA(cudaEventRecord(slot->computed->get(), st));
    last_computed_ = slot->computed->get();
    if (!options_.zero_copy) {
      for (int i = 0; i < 2; ++i) {
        STEREOD_CUDA(cudaMemcpyAsync(slot->out_disp[i].get(), slot->dev_disp[i].get(), 2 * px,
                                     cudaMemcpyDeviceToHost, st));
      }
      STEREOD_CUDA(
          cudaMemcpyAsync(slot->out_fg.get(), slot->dev_fg.get(), px, cudaMemcpyDeviceToHost, st));
      STEREOD_CUDA(cudaMemcpyAsync(slot->out_tested.get(), slot->dev_tested.get(),
                                   sizeof(unsigned long long) * 2 * pipeline_->levels(),
                                   cudaMemcpyDeviceToHost, st));
    }
    STEREOD_CUDA(cudaEventRecord(slot->done->get(), st));

    slot->state = SlotState::kInFlight;
    slot->sequence = f.sequence;
    slot->capture_time_ns = f.capture_time_ns;
    slot->generation = applied_generation_;
    slot->has_color = want_color;
    slot->levels = pipeline_->levels();
    slot->background_active = background_.enabled && frames_seen_ >= background_.warmup;
    if (background_.enabled) ++frames_seen_;
    slot->submitted = t0;
    in_order_.push_back(slot);
    return SubmitStatus::kAccepted;
  }

  std::optional<EngineResult> poll(std::chrono::nanoseconds wait) override {
    Slot* slot;
    {
      std::lock_guard<std::mutex> lock(shared_->mutex);
      if (in_order_.empty()) return std::nullopt;
      slot = in_order_.front();
    }
    const auto deadline = Clock::now() + wait;
    cudaError_t status;
    for (;;) {
      status = cudaEventQuery(slot->done->get());
      if (status != cudaErrorNotReady) break;
      if (Clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    std::lock_guard<std::mutex> lock(shared_->mutex);
    in_order_.pop_front();
    slot->state = SlotState::kHeld;
    EngineResult r;
    r.sequence = slot->sequence;
    r.capture_time_ns = slot->capture_time_ns;
    r.params_generation = slot->generation;
    r.levels_used = slot->levels;
    const auto now = Clock::now();
    r.timings.total_ms = std::chrono::duration<double, std::milli>(now - slot->submitted).count();
    if (status != cudaSuccess) {
      r.ok = false;
      r.error = std::string("CUDA error while computing frame ") + std::to_string(slot->sequence) +
                ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")";
    } else {
      r.ok = true;
      const int w = options_.width, h = options_.height;
      r.disparity = {slot->out_disp[0].get(), w, h, w};
      r.right_disparity = {slot->out_disp[1].get(), w, h, w};
      r.foreground = {slot->out_fg.get(), w, h, w};
      r.background_active = slot->background_active;
      if (slot->background_active) {
        const unsigned long long* t = slot->out_tested.get();
        r.tested_fraction = double(t[0] + t[slot->levels]) / (2.0 * w * h);
      }
      r.timings.upload_ms = elapsed_ms(*slot->started, *slot->uploaded);
      r.timings.compute_ms = elapsed_ms(*slot->uploaded, *slot->computed);
      r.timings.download_ms = elapsed_ms(*slot->computed, *slot->done);
    }
    std::shared_ptr<SharedState> shared = shared_;
    r.hold = std::shared_ptr<const void>(slot, [shared, slot](const void*) {
      std::lock_guard<std::mutex> guard(shared->mutex);
      slot->state = SlotState::kFree;
    });
    return r;
  }

  void set_params(const StereoParams& stereo, const BackgroundParams& background) override {
    validate_for_images(stereo, options_.width, options_.height, options_.width, options_.height);
    validate_background_params(background);
    std::lock_guard<std::mutex> lock(shared_->mutex);
    pending_stereo_ = stereo;
    pending_background_ = background;
    ++generation_;
  }

  int in_flight() const override {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    return static_cast<int>(in_order_.size());
  }

  cuda::DevicePipeline& pipeline() { return *pipeline_; }

  // Waits for everything in flight (test hooks and reconfiguration only).
  void drain() {
    for (auto& s : shared_->slots) STEREOD_CUDA(cudaStreamSynchronize(s->stream->get()));
    STEREOD_CUDA(cudaStreamSynchronize(control_->get()));
  }

  std::vector<std::pair<std::string, double>> profile(const FrameInput& f) {
    // Through the normal path once, so the configuration and graph are settled.
    while (submit(f) == SubmitStatus::kBusy) poll(std::chrono::milliseconds(10));
    while (in_flight() > 0) poll(std::chrono::seconds(10));
    if (options_.zero_copy)
      throw std::logic_error("profiling needs the copying mode (zero_copy off)");
    std::lock_guard<std::mutex> lock(shared_->mutex);
    drain();
    Slot& slot = *shared_->slots.front();
    copy_rows(slot.in_gray[0].get(), f.left.data, options_.width, options_.height, f.left.stride);
    copy_rows(slot.in_gray[1].get(), f.right.data, options_.width, options_.height, f.right.stride);
    const cudaStream_t st = slot.stream->get();
    struct Marks : cuda::StageMarks {
      std::vector<std::pair<std::string, std::unique_ptr<Event>>> events;
      void mark(const std::string& stage, cudaStream_t s) override {
        events.emplace_back(stage, std::make_unique<Event>(true));
        STEREOD_CUDA(cudaEventRecord(events.back().second->get(), s));
      }
    } marks;
    const std::size_t px = static_cast<std::size_t>(options_.width) * options_.height;
    cuda::FrameBuffers io;
    for (int i = 0; i < 2; ++i) {
      io.gray[i] = slot.dev_gray[i].get();
      io.rgb[i] = slot.dev_rgb[i].get();
      io.disparity[i] = slot.dev_disp[i].get();
    }
    io.foreground = slot.dev_fg.get();
    io.tested = slot.dev_tested.get();
    marks.mark("start", st);
    for (int i = 0; i < 2; ++i) {
      STEREOD_CUDA(cudaMemcpyAsync(slot.dev_gray[i].get(), slot.in_gray[i].get(), px,
                                   cudaMemcpyHostToDevice, st));
    }
    marks.mark("upload (2 x 8-bit gray)", st);
    pipeline_->enqueue(io, st, &marks);
    for (int i = 0; i < 2; ++i) {
      STEREOD_CUDA(cudaMemcpyAsync(slot.out_disp[i].get(), slot.dev_disp[i].get(), 2 * px,
                                   cudaMemcpyDeviceToHost, st));
    }
    marks.mark("download (2 x 16-bit disparity)", st);
    STEREOD_CUDA(cudaStreamSynchronize(st));
    std::vector<std::pair<std::string, double>> out;
    for (std::size_t i = 1; i < marks.events.size(); ++i) {
      out.emplace_back(marks.events[i].first,
                       elapsed_ms(*marks.events[i - 1].second, *marks.events[i].second));
    }
    return out;
  }

  void free_buffer_for_test() {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    drain();
    pipeline_->free_buffer_for_test();
    ++config_version_;  // recapture: the next frame's graph sees the freed buffer
  }

 private:
  // Applies pending parameters and the color mode; not per frame (only when they change).
  void reconfigure(bool color) {
    drain();
    if (applied_generation_ != generation_) {
      stereo_ = pending_stereo_;
      background_ = pending_background_;
      applied_generation_ = generation_;
    }
    const int old_levels = pipeline_->levels();
    const bool old_color = pipeline_->color();
    const bool was_enabled = configured_background_enabled_;
    pipeline_->configure(stereo_, background_, color, control_->get());
    // Mirror of the device model's frame counter (for the warm-up flag of results).
    if (!configured_ || pipeline_->levels() != old_levels || color != old_color ||
        (background_.enabled && !was_enabled)) {
      frames_seen_ = 0;
    }
    configured_ = true;
    configured_background_enabled_ = background_.enabled;
    STEREOD_CUDA(cudaStreamSynchronize(control_->get()));
    ++config_version_;
  }

  void capture(Slot& slot) {
    if (slot.graph) {
      STEREOD_CUDA(cudaGraphExecDestroy(slot.graph));
      slot.graph = nullptr;
    }
    cuda::FrameBuffers io;
    for (int i = 0; i < 2; ++i) {
      io.gray[i] = options_.zero_copy ? slot.in_gray[i].device() : slot.dev_gray[i].get();
      io.rgb[i] = options_.zero_copy ? slot.in_rgb[i].device() : slot.dev_rgb[i].get();
      io.disparity[i] = options_.zero_copy ? slot.out_disp[i].device() : slot.dev_disp[i].get();
    }
    io.foreground = options_.zero_copy ? slot.out_fg.device() : slot.dev_fg.get();
    io.tested = options_.zero_copy ? slot.out_tested.device() : slot.dev_tested.get();
    const cudaStream_t st = slot.stream->get();
    cudaGraph_t graph = nullptr;
    STEREOD_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    try {
      pipeline_->enqueue(io, st);
    } catch (...) {
      cudaStreamEndCapture(st, &graph);
      if (graph) cudaGraphDestroy(graph);
      throw;
    }
    STEREOD_CUDA(cudaStreamEndCapture(st, &graph));
    const cudaError_t err = cudaGraphInstantiate(&slot.graph, graph, 0);
    cudaGraphDestroy(graph);
    if (err != cudaSuccess) throw CudaError("cudaGraphInstantiate", err, __FILE__, __LINE__);
    slot.graph_config = config_version_;
  }

  EngineOptions options_;
  std::shared_ptr<SharedState> shared_;
  std::unique_ptr<cuda::DevicePipeline> pipeline_;
  std::unique_ptr<Stream> control_;
  StereoParams stereo_, pending_stereo_;
  BackgroundParams background_, pending_background_;
  std::uint64_t generation_ = 0, applied_generation_ = 0;
  std::uint64_t config_version_ = 0;
  bool configured_ = false;
  bool configured_background_enabled_ = false;
  long long frames_seen_ = 0;
  cudaEvent_t last_computed_ = nullptr;
  std::deque<Slot*> in_order_;
};

}  // namespace

std::unique_ptr<Engine> make_cuda_engine(const EngineOptions& options) {
  return std::make_unique<CudaEngine>(options);
}

CudaModelState cuda_engine_model_state(Engine& engine, int camera, int level, int channel) {
  auto& e = dynamic_cast<CudaEngine&>(engine);
  e.drain();
  CudaModelState s;
  s.mean = e.pipeline().download_mean(camera, level, channel);
  s.variance = e.pipeline().download_variance(camera, level, channel);
  s.mask = e.pipeline().download_mask(camera, level);
  return s;
}

CudaStages cuda_engine_stages(Engine& engine) {
  auto& e = dynamic_cast<CudaEngine&>(engine);
  e.drain();
  CudaStages st;
  for (int i = 0; i < 2; ++i) {
    for (int s = 0; s < e.pipeline().levels(); ++s) {
      st.gray[i].push_back(s == 0 ? std::vector<std::uint8_t>{} : e.pipeline().download_gray(s, i));
      st.census[i].push_back(e.pipeline().download_census(s, i));
      st.disparity[i].push_back(e.pipeline().download_disparity(s, i));
    }
    st.q4[i] = e.pipeline().download_q4(i);
  }
  return st;
}

std::vector<std::pair<std::string, double>> cuda_engine_profile(Engine& engine,
                                                                const FrameInput& frame) {
  return dynamic_cast<CudaEngine&>(engine).profile(frame);
}

void cuda_engine_free_buffer_for_test(Engine& engine) {
  dynamic_cast<CudaEngine&>(engine).free_buffer_for_test();
}

std::size_t cuda_device_memory_used() {
  std::size_t free_bytes = 0, total = 0;
  STEREOD_CUDA(cudaMemGetInfo(&free_bytes, &total));
  return total - free_bytes;
}

}  // namespace stereod
