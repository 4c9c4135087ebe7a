#include "cuda_engine.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>

#include "background/background_ops.hpp"
#include "batch_forecast.hpp"
#include "batch_graph.hpp"
#include "batch_policy.hpp"
#include "cuda_check.hpp"
#include "cuda_device.hpp"
#include "device_buffer.hpp"
#include "device_pipeline.hpp"
#include "kernels/yuv_to_rgb.hpp"
#include "stereo/sgm.hpp"

namespace stereod {
namespace {

using Clock = std::chrono::steady_clock;
using cuda::BatchRecord;
using cuda::PairLayout;

constexpr std::size_t kAlign = 256;
// How long a waiting thread sleeps at most before it looks at the GPU itself (a host callback
// normally wakes it at once).
constexpr auto kWakeSlice = std::chrono::milliseconds(5);

double ms_since(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

std::size_t align_up(std::size_t n) {
  return (n + kAlign - 1) / kAlign * kAlign;
}

// Byte offsets of one slot's input and output. Sized for the largest layout, so that a change of
// layout never reallocates a slot whose result may still be held.
struct SlotLayout {
  std::size_t px = 0;
  std::size_t gray[2] = {0, 0}, rgb[2] = {0, 0}, in_bytes = 0;
  std::size_t disp0 = 0, fg = 0, tested = 0, sgm_cells = 0, fg_word = 0, disp1 = 0, confidence = 0,
              ratio = 0, out_bytes = 0;
  SlotLayout(std::size_t pixels, bool with_ratio) : px(pixels) {
    std::size_t o = 0;
    for (int i = 0; i < 2; ++i) {
      gray[i] = o;
      o = align_up(o + px);
    }
    for (int i = 0; i < 2; ++i) {
      rgb[i] = o;
      o = align_up(o + 3 * px);
    }
    in_bytes = o;
    // Output: what every frame returns first, so that one copy brings it back.
    disp0 = 0;
    fg = align_up(2 * px);
    tested = align_up(fg + px);
    sgm_cells = align_up(tested + sizeof(unsigned long long) * 2 * kMaxLevels);
    fg_word = align_up(sgm_cells + sizeof(unsigned long long));
    disp1 = align_up(fg_word + sizeof(std::uint32_t));
    confidence = align_up(disp1 + 2 * px);
    // The winners' cost ratios (EngineOptions::cost_ratio_output) only where asked for.
    ratio = align_up(confidence + px);
    out_bytes = with_ratio ? align_up(ratio + 4 * px) : ratio;
  }
};

enum class SlotState { kFree, kReserved, kPending, kInFlight, kDone, kHeld };

struct BatchSlot;

struct PairSlot {
  int index = 0;
  SlotState state = SlotState::kFree;
  PinnedBuffer<std::uint8_t> in, out;
  DeviceBuffer<std::uint8_t> dev_in, dev_out;
  // The frame in the slot.
  std::uint64_t sequence = 0;
  std::int64_t capture_time_ns = 0;
  std::uint64_t generation = 0;
  FrameInput borrowed;  // input uploaded straight from the caller's page-locked memory
  bool is_borrowed = false;
  // A YUV frame (FrameInput::left_yuv): its bytes go up as they are (from `borrowed`, or packed in
  // `yuv_in`) into `dev_yuv` and a kernel makes the RGB of the color-only path from them. Both
  // buffers are taken at the slot's first YUV frame: pairs of RGB or gray cameras never need them.
  bool yuv = false;
  YuvView yuv_host[2];    // where the bytes come from (the caller's views, or packed in yuv_in)
  YuvView yuv_device[2];  // where they go (packed in dev_yuv)
  PinnedBuffer<std::uint8_t> yuv_in;
  DeviceBuffer<std::uint8_t> dev_yuv;
  PairLayout layout;
  bool modeling = false;
  bool sgm = false;           // semi-global aggregation: the frame's error word comes back too
  bool cross = false;         // ... cross-based aggregation (its volume's error words)
  long long model_frame = 0;  // frames the pair's model had seen before this one
  bool background_active = false;
  int levels = 0;
  Clock::time_point submitted;
  BatchSlot* batch = nullptr;
  bool ok = true;
  std::string error;
  StageTimings timings;
};

struct PairState {
  explicit PairState(const EngineOptions& o)
      : options(o), layout(static_cast<std::size_t>(o.width) * o.height, o.cost_ratio_output) {}

  // Pinned host and device memory of every slot (after the device state, which fails faster
  // when the size is impossible).
  void allocate_slots(int slots) {
    const EngineOptions& o = options;
    all_foreground.assign(layout.px, 255);
    for (int k = 0; k < slots; ++k) {
      auto s = std::make_unique<PairSlot>();
      s->index = k;
      s->in.allocate(layout.in_bytes, o.zero_copy);
      s->out.allocate(layout.out_bytes, o.zero_copy);
      if (!o.zero_copy) {
        s->dev_in.allocate(layout.in_bytes);
        s->dev_out.allocate(layout.out_bytes);
      }
      this->slots.push_back(std::move(s));
    }
  }

  cuda::SlotIo io_of(const PairSlot& s) const {
    std::uint8_t* in = options.zero_copy ? s.in.device() : s.dev_in.get();
    std::uint8_t* out = options.zero_copy ? s.out.device() : s.dev_out.get();
    cuda::SlotIo io;
    for (int i = 0; i < 2; ++i) {
      io.gray[i] = in + layout.gray[i];
      io.rgb[i] = in + layout.rgb[i];
    }
    io.disparity[0] = reinterpret_cast<std::uint16_t*>(out + layout.disp0);
    io.disparity[1] = reinterpret_cast<std::uint16_t*>(out + layout.disp1);
    io.foreground = out + layout.fg;
    io.tested = reinterpret_cast<unsigned long long*>(out + layout.tested);
    io.sgm_cells = reinterpret_cast<unsigned long long*>(out + layout.sgm_cells);
    io.foreground_word = reinterpret_cast<std::uint32_t*>(out + layout.fg_word);
    if (options.cost_ratio_output) {
      io.cost_ratio = reinterpret_cast<std::uint32_t*>(out + layout.ratio);
    }
    io.confidence = out + layout.confidence;
    return io;
  }

  EngineOptions options;
  SlotLayout layout;
  std::unique_ptr<cuda::DevicePipeline> device;
  std::vector<std::unique_ptr<PairSlot>> slots;
  std::deque<PairSlot*> pending;             // submitted, not yet sent to the GPU, in order
  std::deque<PairSlot*> in_order;            // submitted and not yet polled, in order
  std::vector<std::uint8_t> all_foreground;  // the mask of frames without background modeling
  StereoParams stereo, pending_stereo;
  BackgroundParams background, pending_background;
  std::uint64_t generation = 0, applied_generation = 0;
  long long model_frames = 0;  // frames submitted to the background model since it (re)started
  bool configured = false;
  // Ghosts seen in depth: per model frame n % kMaxDepthLag, recorded on the compute stream once
  // frame n's stereo part (which writes the disparity into its record) is queued; the model part
  // of frame n + depth_lag, which reads that record, waits for it. Created when first used.
  std::unique_ptr<Event> depth_written[kMaxDepthLag];
  // When it last sent a frame or had one back (submit, harvest), if it has: a pair that keeps
  // sending frames sends the next one soon after one comes back.
  Clock::time_point last_activity;
  bool active_any = false;

  // Whether a batch could have this pair's next frame now (cuda::pair_could_join): one is ready,
  // or a slot is off the GPU and the pair keeps sending frames (it sent one or had one back within
  // `horizon_ms`).
  bool could_join_batch(Clock::time_point now, double horizon_ms) const {
    bool off_gpu = false;
    for (const auto& s : slots)
      off_gpu = off_gpu || (s->state != SlotState::kPending && s->state != SlotState::kInFlight);
    const double since =
        active_any ? std::chrono::duration<double, std::milli>(now - last_activity).count()
                   : std::numeric_limits<double>::infinity();
    return cuda::pair_could_join(!pending.empty(), off_gpu, since, horizon_ms);
  }

  bool busy_on_gpu() const {
    for (const auto& s : slots) {
      if (s->state == SlotState::kPending || s->state == SlotState::kInFlight) return true;
    }
    return false;
  }
};

struct BatchSlot {
  std::unique_ptr<Stream> stream;
  // computing: the batch's first kernel may start (its model part's, where it has one); modeled:
  // its model part is done and its stereo part may start.
  std::unique_ptr<Event> started, uploaded, computing, modeled, computed, done;
  PinnedBuffer<BatchRecord> record;
  DeviceBuffer<BatchRecord> device_record;
  // The work lists of its batches: the next batch's model part runs while this one's stereo part
  // may still read them, so each batch slot has its own.
  cuda::BatchWorkspace workspace;
  std::string key;        // the batch key of its last batch
  bool modeling = false;  // whether that batch modeled the background
  // Executable graphs by batch key, size and gate.
  std::map<std::tuple<std::string, int, bool>, cuda::BatchGraph> graphs;
  bool gated = false;  // this batch ran the gated graph
  bool busy = false;
  // Its end, forecast (cuda::BatchForecast): batches of one kind (key and member count) take
  // about as long; `watch` whether a member asked for it (EngineOptions::watch_ends).
  std::string kind;
  Clock::time_point launched;
  bool watch = false;
  std::vector<std::pair<std::shared_ptr<PairState>, PairSlot*>> members;
  class Group* group = nullptr;
};

double elapsed_ms(const Event& a, const Event& b) {
  float ms = 0;
  return cudaEventElapsedTime(&ms, a.get(), b.get()) == cudaSuccess ? static_cast<double>(ms) : 0.0;
}

void copy_rows(std::uint8_t* dst, const std::uint8_t* src, int row_bytes, int rows,
               std::ptrdiff_t src_stride) {
  if (src_stride == row_bytes) {
    std::memcpy(dst, src, static_cast<std::size_t>(row_bytes) * rows);
    return;
  }
  for (int y = 0; y < rows; ++y)
    std::memcpy(dst + static_cast<std::size_t>(y) * row_bytes, src + y * src_stride, row_bytes);
}

// One device and one image size: the pairs, the batch slots, the work lists and the launcher.
class Group {
 public:
  Group(int device, int width, int height)
      : device_(device), width_(width), height_(height), mutex_(std::make_shared<std::mutex>()) {
    STEREOD_CUDA(cudaSetDevice(device_));
    capture_stream_ = std::make_unique<Stream>();
    callback_stream_ = std::make_unique<Stream>();
    compute_stream_ = std::make_unique<Stream>();
    model_stream_ = std::make_unique<Stream>();
    anchor_clocks();
    for (int k = 0; k < kBatchSlots; ++k) {
      auto b = std::make_unique<BatchSlot>();
      b->stream = std::make_unique<Stream>();
      b->started = std::make_unique<Event>(true);
      b->uploaded = std::make_unique<Event>(true);
      b->computing = std::make_unique<Event>(true);
      b->modeled = std::make_unique<Event>(false);
      b->computed = std::make_unique<Event>(true);
      b->done = std::make_unique<Event>(true);
      b->record.allocate(1, false);
      b->device_record.allocate(1);
      b->group = this;
      batches_.push_back(std::move(b));
    }
    launcher_ = std::thread([this] { run_launcher(); });
  }

  ~Group() {
    {
      std::lock_guard<std::mutex> lock(signal_mutex_);
      stopping_ = true;
    }
    signal_cv_.notify_all();
    launcher_.join();
    cudaSetDevice(device_);
    cudaStreamSynchronize(model_stream_->get());
    cudaStreamSynchronize(compute_stream_->get());
    for (auto& b : batches_) {
      cudaStreamSynchronize(b->stream->get());
      for (auto& g : b->graphs) cuda::destroy_batch_graph(g.second);
    }
    cudaStreamSynchronize(callback_stream_->get());  // its callbacks use this group
  }

  void add(const std::shared_ptr<PairState>& pair) {
    std::unique_lock<std::mutex> lk(*mutex_);
    pairs_.push_back(pair);
    ensure_workspace(lk);
  }

  void remove(PairState* pair) {
    std::unique_lock<std::mutex> lk(*mutex_);
    wait_until(lk, [&] { return !pair->busy_on_gpu(); });
    pairs_.erase(std::remove_if(pairs_.begin(), pairs_.end(),
                                [&](const auto& p) { return p.get() == pair; }),
                 pairs_.end());
  }

  SubmitStatus submit(const std::shared_ptr<PairState>& pair, const FrameInput& f) {
    const auto t0 = Clock::now();
    std::unique_lock<std::mutex> lk(*mutex_);
    PairSlot* slot = nullptr;
    for (auto& s : pair->slots) {
      if (s->state == SlotState::kFree) {
        slot = s.get();
        break;
      }
    }
    if (!slot) return SubmitStatus::kBusy;
    slot->state = SlotState::kReserved;
    try {
      STEREOD_CUDA(cudaSetDevice(device_));
      const bool derive = gray_from_color(f) || yuv_input(f);
      const bool has_color = !f.left_color.empty() && !f.right_color.empty();
      const BackgroundParams& bg = pair->applied_generation != pair->generation
                                       ? pair->pending_background
                                       : pair->background;
      PairLayout layout;
      layout.derive_gray = derive;
      layout.color_input = derive || (bg.enabled && bg.color && has_color);
      layout.right_output = pair->options.right_output;
      layout.cost_ratio_output = pair->options.cost_ratio_output;
      layout.confidence = f.confidence;
      const PairLayout& now = pair->device->layout();
      if (!pair->configured || pair->applied_generation != pair->generation ||
          now.derive_gray != layout.derive_gray || now.color_input != layout.color_input ||
          now.confidence != layout.confidence) {
        reconfigure(*pair, layout, lk);
      }
      fill_slot(*pair, *slot, f, layout);
    } catch (...) {
      slot->state = SlotState::kFree;
      throw;
    }
    slot->submitted = t0;
    pair->last_activity = t0;
    pair->active_any = true;
    slot->state = SlotState::kPending;
    pair->pending.push_back(slot);
    pair->in_order.push_back(slot);
    launch_ready();
    return SubmitStatus::kAccepted;
  }

  std::optional<EngineResult> poll(const std::shared_ptr<PairState>& pair,
                                   std::chrono::nanoseconds wait) {
    const auto deadline = Clock::now() + wait;
    std::unique_lock<std::mutex> lk(*mutex_);
    PairSlot* slot = nullptr;
    for (;;) {
      if (pair->in_order.empty()) return std::nullopt;
      slot = pair->in_order.front();
      harvest();
      if (slot->state == SlotState::kDone) break;
      if (Clock::now() >= deadline) return std::nullopt;
      if (pair->options.busy_poll && slot->batch) {
        watch_once(lk, slot->batch->done->get(), deadline);
      } else {
        wait_once(lk, deadline);
      }
    }
    pair->in_order.pop_front();
    slot->state = SlotState::kHeld;
    return result_of(pair, *slot);
  }

  void set_params(PairState& pair, const StereoParams& stereo, const BackgroundParams& bg) {
    std::lock_guard<std::mutex> lk(*mutex_);
    pair.pending_stereo = stereo;
    pair.pending_background = bg;
    ++pair.generation;
  }

  int in_flight(const PairState& pair) const {
    std::lock_guard<std::mutex> lk(*mutex_);
    return static_cast<int>(pair.in_order.size());
  }

  // Waits until the pair has nothing on the GPU (test hooks and profiling).
  void drain(PairState& pair) {
    std::unique_lock<std::mutex> lk(*mutex_);
    wait_until(lk, [&] { return !pair.busy_on_gpu(); });
    STEREOD_CUDA(cudaSetDevice(device_));
  }

  CudaBatchStats stats() const {
    std::lock_guard<std::mutex> lk(*mutex_);
    return stats_;
  }

  // Test hook: while held, submitted frames wait; on release they go out together.
  void hold_launches(bool hold) {
    std::lock_guard<std::mutex> lk(*mutex_);
    held_ = hold;
    if (!hold) launch_ready();
  }

  std::vector<std::pair<std::string, double>> profile(const std::shared_ptr<PairState>& pair,
                                                      const FrameInput& f);

 private:
  // Batches on their way (uploading, waiting for the one before, computing, downloading). Two
  // made every batch slot's whole round trip (upload, compute, download, the host noticing it)
  // the pace: with little foreground the GPU sat idle a third of the time. With four, frames of
  // pairs that keep three or more in flight reach the GPU while the last batch computes. With
  // eight, a pair that keeps six or eight in flight has them all on the GPU: a batch slot is free
  // again only once the host has noticed its batch finish (the completion callback wakes the
  // launcher tens of microseconds later), and with four those frames waited on the host (16 %
  // foreground at 1024x768 D=256, six in flight: 0.207-0.208 -> 0.199 ms a frame; H200,
  // docs/PERFORMANCE.md). A slot costs a stream, six events and its work lists.
  static constexpr int kBatchSlots = 8;

  // While it lives, nothing is sent to the GPU and nothing is on it (what may not overlap a batch,
  // such as moving the work lists or profiling one frame, happens meanwhile).
  class Quiesce {
   public:
    Quiesce(Group& g, std::unique_lock<std::mutex>& lk) : g_(g) {
      g_.draining_ = true;
      g_.wait_until(lk, [&] {
        for (auto& b : g_.batches_) {
          if (b->busy) return false;
        }
        return true;
      });
    }
    ~Quiesce() { g_.draining_ = false; }
    Quiesce(const Quiesce&) = delete;
    Quiesce& operator=(const Quiesce&) = delete;

   private:
    Group& g_;
  };

  template <typename Pred>
  void wait_until(std::unique_lock<std::mutex>& lk, Pred done) {
    for (;;) {
      harvest();
      launch_ready();
      if (done()) return;
      wait_once(lk, Clock::now() + kWakeSlice);
    }
  }

  // Releases the group's lock until a batch finishes (a host callback), or until `until`.
  void wait_once(std::unique_lock<std::mutex>& lk, Clock::time_point until) {
    const std::uint64_t seen = completions_.load();
    lk.unlock();
    {
      std::unique_lock<std::mutex> s(signal_mutex_);
      signal_cv_.wait_until(s, std::min(until, Clock::now() + kWakeSlice),
                            [&] { return completions_.load() != seen || stopping_; });
    }
    lk.lock();
  }

  // Releases the group's lock and watches `done` until it fires, another batch completes (the
  // event may belong to a reused batch slot by then), or `until` (EngineOptions::busy_poll).
  void watch_once(std::unique_lock<std::mutex>& lk, cudaEvent_t done, Clock::time_point until) {
    const std::uint64_t seen = completions_.load();
    lk.unlock();
    watch_event(done, seen, until);
    lk.lock();
  }

  // Queries `done` until it fires, the completion count moves from `seen` (a batch slot may be
  // reused then, its event recorded again) or `until`; returns the event's last status. The
  // caller's core spins meanwhile: for watch_once, and for the launcher's watch of a forecast end.
  cudaError_t watch_event(cudaEvent_t done, std::uint64_t seen, Clock::time_point until) const {
    cudaError_t status = cudaErrorNotReady;
    while ((status = cudaEventQuery(done)) == cudaErrorNotReady && completions_.load() == seen &&
           Clock::now() < until) {
    }
    return status;
  }

  // The GPU's clock against the host's (StageTimings::gpu_start_ms): events the host watched
  // complete, each put on the host clock when the watch saw it. Each sample lags its event by the
  // watch's delay, so the earliest estimate of the anchor's host time is kept (the smallest lag:
  // a microsecond or two on an idle GPU).
  void anchor_clocks() {
    anchor_ = std::make_unique<Event>(true);
    Event probe(true);
    const cudaStream_t st = capture_stream_->get();
    for (int k = 0; k < 8; ++k) {
      Event& e = k == 0 ? *anchor_ : probe;
      STEREOD_CUDA(cudaEventRecord(e.get(), st));
      while (cudaEventQuery(e.get()) == cudaErrorNotReady) {
      }
      const auto seen = Clock::now();
      // The host time of the anchor by this sample: seen, less the GPU time since the anchor.
      const auto origin = seen - std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double, std::milli>(
                                         k == 0 ? 0.0 : elapsed_ms(*anchor_, probe)));
      if (k == 0 || origin < anchor_host_) anchor_host_ = origin;
    }
  }

  static void CUDART_CB on_batch_done(void* user) {
    static_cast<BatchSlot*>(user)->group->signal_completion();
  }

  // A batch's end to watch (BatchForecast::Window) and its event.
  struct Watch {
    cudaEvent_t done = nullptr;
    Clock::time_point from, until;
  };

  // Of the batches on the GPU that asked for it, the one whose watch starts first; none whose
  // window has closed (the callback wakes the launcher for those) or that has no forecast yet.
  std::optional<Watch> next_watch() const {
    std::optional<Watch> next;
    const auto now = Clock::now();
    for (const auto& b : batches_) {
      if (!b->busy || !b->watch) continue;
      const auto w = forecast_.window(b->kind, b->launched);
      if (!w || now >= w->until) continue;
      if (!next || w->from < next->from) next = Watch{b->done->get(), w->from, w->until};
    }
    return next;
  }

  // The launcher: harvests what has finished (which calls on_result), sends what is pending, then
  // sleeps until a completion wakes it. Where the next batch's end can be forecast, it sleeps only
  // until shortly before it and then watches that batch's event (a core busy for at most the
  // window, about half the batch's span), so that the result reaches on_result and poll()
  // microseconds after the GPU's last byte instead of when the driver's callback thread gets to
  // it (about 90 us on an H200; docs/PERFORMANCE.md "Watching a batch's end").
  void run_launcher() {
    cudaSetDevice(device_);
    bool caught = false;  // the last watch saw its batch end
    for (;;) {
      // Taken before looking: a batch that ends (and whose callback comes) after the harvest below
      // wakes the wait at once, instead of being found only by the next wake-up. The launcher's
      // own harvest raises the count too: that raise alone is not news.
      std::uint64_t seen = completions_.load();
      std::optional<Watch> watch;
      {
        std::unique_lock<std::mutex> lk(*mutex_);
        if (caught) ++stats_.watched_ends;
        caught = false;
        const std::optional<std::uint64_t> raised_from = harvest();
        if (raised_from && *raised_from == seen) seen = *raised_from + 1;
        launch_ready();
        watch = next_watch();
      }
      {
        std::unique_lock<std::mutex> s(signal_mutex_);
        if (stopping_) return;
        auto until = Clock::now() + std::chrono::milliseconds(10);
        if (watch) until = std::min(until, watch->from);
        signal_cv_.wait_until(s, until, [&] { return completions_.load() != seen || stopping_; });
        if (stopping_) return;
        if (completions_.load() != seen) continue;
      }
      if (!watch || Clock::now() < watch->from) continue;
      // Until the event fires, another thread harvests something, or the window closes.
      const cudaError_t status = watch_event(watch->done, seen, watch->until);
      caught = status != cudaErrorNotReady && completions_.load() == seen;
    }
  }

  // Marks the frames of finished batches done and frees their batch slots. Whether a batch has
  // finished is the event's word alone: the host callback only wakes the waiters (it may run
  // late, after the batch slot was already harvested through the event and reused). Returns the
  // completion count before it raised it, if it harvested anything.
  std::optional<std::uint64_t> harvest() {
    bool harvested = false;
    for (auto& b : batches_) {
      if (!b->busy) continue;
      const cudaError_t status = cudaEventQuery(b->done->get());
      if (status == cudaErrorNotReady) continue;
      harvested = true;
      const double up = elapsed_ms(*b->started, *b->uploaded);
      const double wait = elapsed_ms(*b->uploaded, *b->computing);
      const double compute = elapsed_ms(*b->computing, *b->computed);
      const double down = elapsed_ms(*b->computed, *b->done);
      const auto seen = Clock::now();
      // The span from the first event to the last: the four parts of its chain.
      if (status == cudaSuccess) {
        forecast_.record(b->kind, up + wait + compute + down);
        const auto span = forecast_.expected_ms(b->kind);
        key_horizon_ms_[b->key] = span ? cuda::horizon_for_span(*span) : cuda::kNoHorizon;
      }
      if (b->modeling && status == cudaSuccess) {
        // Each member's word came back with its frame (SlotLayout::fg_word).
        bool busy = false;
        for (auto& m : b->members) {
          busy = busy || *reinterpret_cast<const std::uint32_t*>(m.second->out.get() +
                                                                 m.first->layout.fg_word) != 0;
        }
        scene_busy_[b->key] = busy;
        ++(b->gated ? stats_.gated_batches : stats_.plain_batches);
      }
      const double gpu_start = elapsed_ms(*anchor_, *b->started);
      const double gpu_end = elapsed_ms(*anchor_, *b->done);
      for (auto& m : b->members) {
        PairSlot* s = m.second;
        s->ok = status == cudaSuccess;
        if (!s->ok) {
          s->error = std::string("CUDA error while computing frame ") +
                     std::to_string(s->sequence) + ": " + cudaGetErrorName(status) + " (" +
                     cudaGetErrorString(status) + ")";
        }
        s->timings.upload_ms = up;
        s->timings.wait_ms = wait;
        s->timings.compute_ms = compute;
        s->timings.download_ms = down;
        s->timings.seen_ms = ms_since(s->submitted, seen);
        const double submitted = ms_since(anchor_host_, s->submitted);
        s->timings.gpu_start_ms = gpu_start - submitted;
        s->timings.gpu_end_ms = gpu_end - submitted;
        s->state = SlotState::kDone;
        s->batch = nullptr;
        m.first->last_activity = seen;
        if (m.first->options.on_result) m.first->options.on_result();
      }
      b->members.clear();
      b->busy = false;
    }
    // Whoever harvested, the threads waiting for a result (poll, the launcher) look again: the
    // batch's callback, which would wake them too, may come tens of microseconds later.
    if (!harvested) return std::nullopt;
    return signal_completion();
  }

  // Raises the completion count and wakes its waiters; returns the count before.
  std::uint64_t signal_completion() {
    std::uint64_t before = 0;
    {
      std::lock_guard<std::mutex> s(signal_mutex_);
      before = completions_.fetch_add(1);
    }
    signal_cv_.notify_all();
    return before;
  }

  // Sends what is pending while a batch slot is free: the oldest waiting pair (round robin) and
  // every other pair with a frame waiting that can share its batch; once a few batches are on
  // their way, only a batch that every pair able to share it has joined (batch_policy.hpp). A
  // batch that must wait does not hold up one of another kind (other parameters) that may go.
  void launch_ready() {
    if (draining_ || held_) return;
    for (;;) {
      BatchSlot* slot = nullptr;
      int in_flight = 0;
      for (auto& b : batches_) {
        if (b->busy)
          ++in_flight;
        else if (!slot)
          slot = b.get();
      }
      if (!slot) return;
      const std::size_t n = pairs_.size();
      const auto now = Clock::now();
      // Each pair's outlook; keys as small numbers, equal for equal batch keys, each key's
      // horizon looked up once.
      std::vector<std::string> keys;
      std::vector<double> horizons;
      std::vector<cuda::PairOutlook> outlook(n);
      for (std::size_t i = 0; i < n; ++i) {
        const std::string key = pairs_[i]->device->batch_key();
        const auto at = std::find(keys.begin(), keys.end(), key);
        const std::size_t k = static_cast<std::size_t>(at - keys.begin());
        if (at == keys.end()) {
          const auto known = key_horizon_ms_.find(key);
          keys.push_back(key);
          horizons.push_back(known == key_horizon_ms_.end() ? cuda::kNoHorizon : known->second);
        }
        outlook[i].key = static_cast<int>(k);
        outlook[i].ready = !pairs_[i]->pending.empty();
        outlook[i].could_join = pairs_[i]->could_join_batch(now, horizons[k]);
      }
      const auto choice = cuda::choose_batch(outlook, next_pair_, in_flight, cuda::kMaxBatch);
      if (!choice) return;
      std::vector<std::shared_ptr<PairState>> members;
      for (std::size_t j : choice->members) members.push_back(pairs_[j]);
      next_pair_ = (choice->lead + 1) % n;  // the next batch starts after this one's lead
      launch(*slot, members, keys[outlook[choice->lead].key]);
    }
  }

  void launch(BatchSlot& b, const std::vector<std::shared_ptr<PairState>>& members,
              const std::string& key) {
    BatchRecord* rec = b.record.get();
    rec->count = static_cast<int>(members.size());
    b.members.clear();
    for (std::size_t i = 0; i < members.size(); ++i) {
      PairState& p = *members[i];
      PairSlot* s = p.pending.front();
      p.pending.pop_front();
      rec->member[i] = p.device->member_args(s->index);
      rec->frames[i] = s->model_frame;
      s->state = SlotState::kInFlight;
      s->batch = &b;
      b.members.emplace_back(members[i], s);
    }
    b.busy = true;
    b.launched = Clock::now();
    b.kind = key + '#' + std::to_string(members.size());
    b.watch = false;
    // A member whose caller watches the GPU itself (busy_poll) needs no second watcher.
    for (const auto& m : members)
      b.watch = b.watch || (m->options.watch_ends && !m->options.busy_poll);
    ++stats_.batches;
    stats_.frames += members.size();
    try {
      STEREOD_CUDA(cudaSetDevice(device_));
      const cudaStream_t st = b.stream->get();
      STEREOD_CUDA(cudaEventRecord(b.started->get(), st));
      for (auto& m : b.members) {
        upload(*m.first, *m.second, st);
        clear_cost_ratios(*m.first, *m.second, st);
      }
      STEREOD_CUDA(cudaMemcpyAsync(b.device_record.get(), rec, sizeof(BatchRecord),
                                   cudaMemcpyHostToDevice, st));
      STEREOD_CUDA(cudaEventRecord(b.uploaded->get(), st));
      // Each frame has its own buffers (device_pipeline.hpp), so batches run side by side, each
      // on its own stream, except for what the pairs share: their background models, whose
      // parts (rectification, pyramid, model) go one after the other on the model stream, each
      // batch's stereo part waiting for its own; and the semi-global and cross-based volumes,
      // whose stereo parts go one after the other on the compute stream. On an H200 with four
      // frames in flight this took 1024x768 D256 from 0.420 to 0.347 ms a frame, and 16 %
      // foreground from 0.289 to 0.214 (docs/PERFORMANCE.md). STEREOD_CUDA_OVERLAP=0 puts
      // everything on the compute stream, one batch after the other, as before.
      const cuda::BatchShape shape = members.front()->device->shape(rec->count);
      if (shape.shared_finest) ++stats_.shared_finest_batches;
      // The gate while the scene was empty: the last batch of this key whose word came back
      // found no foreground (a key not seen yet starts gated; while warming up every pixel is
      // foreground, so the first word back switches to the plain graph). Either graph computes
      // the same; the word only picks the cheaper one for what comes next.
      b.gated = shape.modeling && gate_ && !scene_busy_[key];
      const cuda::BatchGraph& g = graph_for(b, key, shape, b.gated);
      // With two slots a pair has one frame computing and the next arriving: the next frame's
      // matching beside the first's only slows the one its caller waits for (H200, 16 %
      // foreground: 0.301 -> 0.313-0.323 ms a frame), so side by side needs three.
      std::size_t slots = SIZE_MAX;
      for (auto& m : b.members) {
        m.first->device->frame_launched(m.second->index);
        slots = std::min(slots, m.first->slots.size());
      }
      const bool own_stream = overlap_ && !shape.sgm && !shape.cross && slots >= 3;
      const cudaStream_t cs = own_stream ? st : compute_stream_->get();
      // Ghosts seen in depth: each member's model reads the record its frame depth_lag before
      // wrote at the end of its stereo part, which may still run on another stream. (The slot
      // of that frame is the last one recorded there: later frames up to this one, fewer than
      // kMaxDepthLag, use the others.) This frame's model also writes its own slot, n %
      // kMaxDepthLag, whose last writer, frame n - kMaxDepthLag, may still be adding its
      // disparity: that is safe only because a pair's model parts run in order on one stream and
      // the model of frame n - (kMaxDepthLag - depth_lag), before this one, waited for it. A
      // change of depth_lag goes through reconfigure(), which lets the pair's frames drain first.
      const auto wait_for_records = [&](cudaStream_t model_stream) {
        if (!shape.depth_ghosts) return;
        for (auto& m : b.members) {
          const long long seen = m.second->model_frame - m.first->background.depth_lag;
          if (seen < 0) continue;
          const auto& e = m.first->depth_written[seen % kMaxDepthLag];
          if (e) STEREOD_CUDA(cudaStreamWaitEvent(model_stream, e->get(), 0));
        }
      };
      if (g.model && overlap_) {
        const cudaStream_t ms = model_stream_->get();
        wait_for_records(ms);
        STEREOD_CUDA(cudaStreamWaitEvent(ms, b.uploaded->get(), 0));
        STEREOD_CUDA(cudaEventRecord(b.computing->get(), ms));
        STEREOD_CUDA(cudaGraphLaunch(g.model, ms));
        STEREOD_CUDA(cudaEventRecord(b.modeled->get(), ms));
        STEREOD_CUDA(cudaStreamWaitEvent(cs, b.modeled->get(), 0));
      } else {
        if (cs != st) STEREOD_CUDA(cudaStreamWaitEvent(cs, b.uploaded->get(), 0));
        wait_for_records(cs);
        STEREOD_CUDA(cudaEventRecord(b.computing->get(), cs));
        if (g.model) STEREOD_CUDA(cudaGraphLaunch(g.model, cs));
      }
      STEREOD_CUDA(cudaGraphLaunch(g.exec, cs));
      if (shape.depth_ghosts) {
        for (auto& m : b.members) {
          auto& e = m.first->depth_written[m.second->model_frame % kMaxDepthLag];
          if (!e) e = std::make_unique<Event>();
          STEREOD_CUDA(cudaEventRecord(e->get(), cs));
        }
      }
      b.key = key;
      b.modeling = shape.modeling;
      STEREOD_CUDA(cudaEventRecord(b.computed->get(), cs));
      STEREOD_CUDA(cudaStreamWaitEvent(st, b.computed->get(), 0));
      for (auto& m : b.members) download(*m.first, *m.second, st);
      STEREOD_CUDA(cudaEventRecord(b.done->get(), st));
      // The wake-up call goes on a stream of its own: a host function holds back the work queued
      // behind it until the driver's thread has run it (tens of microseconds), and on the batch's
      // stream that held back the next frame's upload (measured: its GPU start came ~60 us later).
      STEREOD_CUDA(cudaStreamWaitEvent(callback_stream_->get(), b.done->get(), 0));
      STEREOD_CUDA(cudaLaunchHostFunc(callback_stream_->get(), on_batch_done, &b));
      const auto enqueued = Clock::now();
      for (auto& m : b.members)
        m.second->timings.enqueued_ms = ms_since(m.second->submitted, enqueued);
    } catch (const std::exception& e) {
      // The frames of this batch fail; the pairs go on.
      for (auto& m : b.members) {
        m.second->ok = false;
        m.second->error = e.what();
        m.second->state = SlotState::kDone;
        m.second->batch = nullptr;
        if (m.first->options.on_result) m.first->options.on_result();
      }
      b.members.clear();
      b.busy = false;
    }
  }

  // The cost-ratio plane starts as kNoCost (all ones) everywhere: the matching kernels write the
  // pixels they match, tiles without foreground keep it.
  void clear_cost_ratios(const PairState& p, PairSlot& s, cudaStream_t st) {
    if (!s.layout.cost_ratio_output) return;
    std::uint8_t* out = p.options.zero_copy ? s.out.device() : s.dev_out.get();
    STEREOD_CUDA(cudaMemsetAsync(out + p.layout.ratio, 0xFF, 4 * p.layout.px, st));
  }

  void upload(const PairState& p, PairSlot& s, cudaStream_t st) {
    if (p.options.zero_copy) return;
    const SlotLayout& l = p.layout;
    const int w = width_, h = height_;
    if (s.yuv) {
      upload_yuv(p, s, st);
      return;
    }
    if (s.is_borrowed) {
      const FrameInput& f = s.borrowed;
      if (!s.layout.derive_gray) {
        const ImageView<const std::uint8_t> g[2] = {f.left, f.right};
        for (int i = 0; i < 2; ++i) {
          STEREOD_CUDA(cudaMemcpy2DAsync(s.dev_in.get() + l.gray[i], w, g[i].data, g[i].stride, w,
                                         h, cudaMemcpyHostToDevice, st));
        }
      }
      if (s.layout.color_input) {
        const RgbView c[2] = {f.left_color, f.right_color};
        for (int i = 0; i < 2; ++i) {
          STEREOD_CUDA(cudaMemcpy2DAsync(s.dev_in.get() + l.rgb[i], 3 * w, c[i].data, c[i].stride,
                                         3 * w, h, cudaMemcpyHostToDevice, st));
        }
      }
      return;
    }
    // One copy from the first region in use to the end of the last.
    const std::size_t begin = s.layout.derive_gray ? l.rgb[0] : l.gray[0];
    const std::size_t end = s.layout.color_input ? l.rgb[1] + 3 * l.px : l.gray[1] + l.px;
    STEREOD_CUDA(cudaMemcpyAsync(s.dev_in.get() + begin, s.in.get() + begin, end - begin,
                                 cudaMemcpyHostToDevice, st));
  }

  // Each camera's YUV bytes (planes row by row from the caller's memory, or packed from the slot)
  // and their conversion to the slot's RGB, in stream order before the batch reads it.
  void upload_yuv(const PairState& p, const PairSlot& s, cudaStream_t st) {
    for (int i = 0; i < 2; ++i) {
      const YuvView& from = s.yuv_host[i];
      const YuvView& to = s.yuv_device[i];
      const bool nv12 = from.format == YuvFormat::kNv12;
      const int row = nv12 ? from.width : 2 * from.width;
      STEREOD_CUDA(cudaMemcpy2DAsync(const_cast<std::uint8_t*>(to.data), to.stride, from.data,
                                     from.stride, row, from.height, cudaMemcpyHostToDevice, st));
      if (nv12) {
        STEREOD_CUDA(cudaMemcpy2DAsync(const_cast<std::uint8_t*>(to.chroma), to.chroma_stride,
                                       from.chroma, from.chroma_stride, row, from.height / 2,
                                       cudaMemcpyHostToDevice, st));
      }
      cuda::launch_yuv_to_rgb(to, s.dev_in.get() + p.layout.rgb[i], st);
    }
  }

  // The slot's YUV frame: its source views and device views (buffers taken at the first one).
  void fill_yuv(PairState& p, PairSlot& s, const FrameInput& f) {
    const std::size_t per_camera = align_up(2 * p.layout.px);  // UYVY's size, NV12's is less
    if (!s.dev_yuv.get()) s.dev_yuv.allocate(2 * per_camera);
    const YuvView in[2] = {f.left_yuv, f.right_yuv};
    for (int i = 0; i < 2; ++i) {
      s.yuv_device[i] = packed_yuv(in[i].format, s.dev_yuv.get() + i * per_camera, width_, height_);
      if (s.is_borrowed) {
        s.yuv_host[i] = in[i];
        continue;
      }
      if (!s.yuv_in.get()) s.yuv_in.allocate(2 * per_camera, false);
      std::uint8_t* packed = s.yuv_in.get() + i * per_camera;
      copy_packed(in[i], packed);
      s.yuv_host[i] = packed_yuv(in[i].format, packed, width_, height_);
    }
  }

  void download(const PairState& p, PairSlot& s, cudaStream_t st) {
    if (p.options.zero_copy) return;
    const SlotLayout& l = p.layout;
    const std::size_t end = s.modeling ? l.disp1 : 2 * l.px;
    STEREOD_CUDA(cudaMemcpyAsync(s.out.get(), s.dev_out.get(), end, cudaMemcpyDeviceToHost, st));
    if (s.layout.right_output) {
      STEREOD_CUDA(cudaMemcpyAsync(s.out.get() + l.disp1, s.dev_out.get() + l.disp1, 2 * l.px,
                                   cudaMemcpyDeviceToHost, st));
    }
    if (s.layout.cost_ratio_output) {
      STEREOD_CUDA(cudaMemcpyAsync(s.out.get() + l.ratio, s.dev_out.get() + l.ratio, 4 * l.px,
                                   cudaMemcpyDeviceToHost, st));
    }
    if (s.layout.confidence) {
      STEREOD_CUDA(cudaMemcpyAsync(s.out.get() + l.confidence, s.dev_out.get() + l.confidence, l.px,
                                   cudaMemcpyDeviceToHost, st));
    }
    if (s.sgm) {
      STEREOD_CUDA(cudaMemcpyAsync(s.out.get() + l.sgm_cells, s.dev_out.get() + l.sgm_cells,
                                   sizeof(unsigned long long), cudaMemcpyDeviceToHost, st));
    }
  }

  const cuda::BatchGraph& graph_for(BatchSlot& b, const std::string& key,
                                    const cuda::BatchShape& shape, bool gated) {
    const auto id = std::make_tuple(key, shape.count, gated);
    auto it = b.graphs.find(id);
    if (it != b.graphs.end()) return it->second;
    const auto t0 = Clock::now();
    const cuda::BatchGraph g = cuda::instantiate_batch_graph(
        shape, b.device_record.get(), b.workspace.get(), capture_stream_->get(), gated);
    ++(g.gated ? stats_.gated_graphs : stats_.plain_graphs);
    const double ms = ms_since(t0, Clock::now());
    stats_.graph_build_ms += ms;
    stats_.graph_build_max_ms = std::max(stats_.graph_build_max_ms, ms);
    return b.graphs.emplace(id, g).first->second;
  }

  void fill_slot(PairState& p, PairSlot& s, const FrameInput& f, const PairLayout& layout) {
    const int w = width_, h = height_;
    const SlotLayout& l = p.layout;
    s.layout = layout;
    s.is_borrowed = f.pinned && !p.options.zero_copy;
    s.yuv = yuv_input(f) && !p.options.zero_copy;
    if (s.yuv) fill_yuv(p, s, f);
    if (s.is_borrowed) {
      s.borrowed = f;
    } else if (yuv_input(f)) {
      if (p.options.zero_copy) {  // the kernels read the slot's mapped memory: converted here
        yuv_to_rgb(f.left_yuv, s.in.get() + l.rgb[0], 3 * w);
        yuv_to_rgb(f.right_yuv, s.in.get() + l.rgb[1], 3 * w);
      }
    } else {
      std::uint8_t* in = s.in.get();
      if (!layout.derive_gray) {
        copy_rows(in + l.gray[0], f.left.data, w, h, f.left.stride);
        copy_rows(in + l.gray[1], f.right.data, w, h, f.right.stride);
      }
      if (layout.color_input) {
        copy_rows(in + l.rgb[0], f.left_color.data, 3 * w, h, f.left_color.stride);
        copy_rows(in + l.rgb[1], f.right_color.data, 3 * w, h, f.right_color.stride);
      }
    }
    s.sequence = f.sequence;
    s.capture_time_ns = f.capture_time_ns;
    s.generation = p.applied_generation;
    s.modeling = p.background.enabled;
    s.sgm = p.stereo.aggregation == Aggregation::kSgm || uses_cross_aggregation(p.stereo);
    s.cross = uses_cross_aggregation(p.stereo);
    s.levels = p.device->levels();
    s.model_frame = p.model_frames;
    s.background_active = s.modeling && p.model_frames >= p.background.warmup;
    if (s.modeling) ++p.model_frames;
    s.ok = true;
    s.error.clear();
    s.timings = {};
  }

  // Applies pending parameters or a new input layout; waits for the pair's frames on the GPU.
  void reconfigure(PairState& p, const PairLayout& layout, std::unique_lock<std::mutex>& lk) {
    wait_until(lk, [&] { return !p.busy_on_gpu(); });
    if (p.applied_generation != p.generation) {
      p.stereo = p.pending_stereo;
      p.background = p.pending_background;
      p.applied_generation = p.generation;
    }
    const bool ghosts_were = p.configured && p.device->background().depth_ghosts;
    const bool restart = p.device->configure(p.stereo, p.background, layout);
    if (restart) p.model_frames = 0;
    // As the CPU model: records from the model's start, or from the frame the option came on.
    if (restart) {
      p.device->set_depth_from(0);
    } else if (p.background.depth_ghosts && !ghosts_were) {
      p.device->set_depth_from(p.model_frames);
    }
    for (auto& s : p.slots) p.device->set_slot_io(s->index, p.io_of(*s));
    p.configured = true;
    ensure_workspace(lk);
  }

  // The work lists hold every item that a batch of all the group's pairs may produce.
  void ensure_workspace(std::unique_lock<std::mutex>& lk) {
    std::vector<std::size_t> items(kMaxLevels, 0);
    for (const auto& p : pairs_) {
      if (!p->configured) continue;
      for (int l = 0; l < kMaxLevels; ++l) items[l] += p->device->scratch_items(l);
    }
    bool grow = false;
    for (int l = 0; l < kMaxLevels; ++l) grow = grow || items[l] > item_capacity_[l];
    if (!grow) return;
    // Nothing may run while the lists move: wait for the batches in flight.
    { const Quiesce quiet(*this, lk); }
    STEREOD_CUDA(cudaSetDevice(device_));
    for (int l = 0; l < kMaxLevels; ++l) item_capacity_[l] = std::max(item_capacity_[l], items[l]);
    for (auto& b : batches_) {
      b->workspace.ensure(items);
      for (auto& g : b->graphs) cuda::destroy_batch_graph(g.second);
      b->graphs.clear();
    }
  }

  EngineResult result_of(const std::shared_ptr<PairState>& pair, PairSlot& s) {
    EngineResult r;
    r.sequence = s.sequence;
    r.capture_time_ns = s.capture_time_ns;
    r.params_generation = s.generation;
    r.levels_used = s.levels;
    r.timings = s.timings;
    r.timings.total_ms = ms_since(s.submitted, Clock::now());
    r.ok = s.ok;
    r.error = s.error;
    if (s.ok && s.sgm) {
      // A view whose volume would pass kSgmMaxCells: the frame fails, as on the CPU.
      const auto cells =
          *reinterpret_cast<const unsigned long long*>(s.out.get() + pair->layout.sgm_cells);
      if (cells != 0) {
        r.ok = false;
        // Cross-based aggregation names its own volume, as the CPU matcher's layout does (also
        // under sgm with sgm_cost cross, where the CPU's region averages fail first).
        r.error = sgm_volume_error(static_cast<std::size_t>(cells),
                                   s.cross ? Aggregation::kCross : Aggregation::kSgm);
      }
    }
    if (r.ok) {
      const int w = width_, h = height_;
      const SlotLayout& l = pair->layout;
      const std::uint8_t* out = s.out.get();
      r.disparity = {reinterpret_cast<const std::uint16_t*>(out + l.disp0), w, h, w};
      if (s.layout.right_output)
        r.right_disparity = {reinterpret_cast<const std::uint16_t*>(out + l.disp1), w, h, w};
      if (s.layout.cost_ratio_output)
        r.cost_ratio = {reinterpret_cast<const std::uint32_t*>(out + l.ratio), w, h, w};
      r.foreground = s.modeling
                         ? ImageView<const std::uint8_t>{out + l.fg, w, h, w}
                         : ImageView<const std::uint8_t>{pair->all_foreground.data(), w, h, w};
      if (s.layout.confidence) r.confidence = {out + l.confidence, w, h, w};
      r.background_active = s.background_active;
      if (s.background_active) {
        const auto* t = reinterpret_cast<const unsigned long long*>(out + l.tested);
        r.tested_fraction = double(t[0] + t[s.levels]) / (2.0 * w * h);
      }
    }
    std::shared_ptr<std::mutex> mutex = mutex_;
    std::shared_ptr<PairState> keep = pair;
    PairSlot* slot = &s;
    r.hold = std::shared_ptr<const void>(slot, [mutex, keep, slot](const void*) {
      std::lock_guard<std::mutex> g(*mutex);
      slot->state = SlotState::kFree;
    });
    return r;
  }

  const int device_, width_, height_;
  std::shared_ptr<std::mutex> mutex_;  // guards everything below; shared with result holds
  std::vector<std::unique_ptr<BatchSlot>> batches_;
  std::vector<std::shared_ptr<PairState>> pairs_;
  std::size_t next_pair_ = 0;
  std::size_t item_capacity_[kMaxLevels] = {};
  bool draining_ = false;
  bool held_ = false;
  std::unique_ptr<Stream> capture_stream_;
  std::unique_ptr<Stream> callback_stream_;  // the batches' host callbacks (launch())
  std::unique_ptr<Stream> compute_stream_;   // batches that go one after the other (launch())
  std::unique_ptr<Stream> model_stream_;     // the model parts of modeling batches, in order
  // Whether batches run side by side (launch()); STEREOD_CUDA_OVERLAP=0 in the environment puts
  // every batch on the compute stream, one after the other (for comparisons).
  const bool overlap_ = cuda_switch_on("STEREOD_CUDA_OVERLAP");
  const bool gate_ = cuda::batch_gate_available();
  // By batch key: whether the last modeling batch that came back had foreground somewhere.
  std::map<std::string, bool> scene_busy_;
  std::unique_ptr<Event> anchor_;  // the GPU clock's origin, at host time anchor_host_
  Clock::time_point anchor_host_;
  CudaBatchStats stats_;
  cuda::BatchForecast forecast_;  // the batches' spans by kind (run_launcher())
  // From the expected span of the last batch of each key that came back: how recently a pair must
  // have sent or received a frame for a batch of its key to wait for it (cuda::pair_could_join).
  std::map<std::string, double> key_horizon_ms_;
  // Completion signalling, apart from the main lock: the host callback takes only this one, so a
  // thread that holds the main lock while it waits on the GPU can never block the callback.
  std::mutex signal_mutex_;
  std::condition_variable signal_cv_;
  std::atomic<std::uint64_t> completions_{0};
  bool stopping_ = false;
  std::thread launcher_;
};

class StageEvents : public cuda::StageMarks {
 public:
  void mark(const std::string& stage, cudaStream_t s) override {
    events.emplace_back(stage, std::make_unique<Event>(true));
    STEREOD_CUDA(cudaEventRecord(events.back().second->get(), s));
  }
  std::vector<std::pair<std::string, std::unique_ptr<Event>>> events;
};

std::vector<std::pair<std::string, double>> Group::profile(const std::shared_ptr<PairState>& pair,
                                                           const FrameInput& f) {
  if (pair->options.zero_copy)
    throw std::logic_error("profiling needs the copying mode (zero_copy off)");
  std::unique_lock<std::mutex> lk(*mutex_);
  const Quiesce quiet(*this, lk);
  PairSlot* slot = nullptr;
  for (auto& s : pair->slots) {
    if (s->state == SlotState::kFree) {
      slot = s.get();
      break;
    }
  }
  if (!slot) throw std::logic_error("profiling needs a free slot");
  STEREOD_CUDA(cudaSetDevice(device_));
  PairLayout layout = pair->device->layout();
  fill_slot(*pair, *slot, f, layout);
  BatchSlot& b = *batches_.front();
  BatchRecord* rec = b.record.get();
  rec->count = 1;
  rec->member[0] = pair->device->member_args(slot->index);
  rec->frames[0] = slot->model_frame;
  const cudaStream_t st = b.stream->get();
  StageEvents marks;
  marks.mark("start", st);
  upload(*pair, *slot, st);
  clear_cost_ratios(*pair, *slot, st);
  STEREOD_CUDA(
      cudaMemcpyAsync(b.device_record.get(), rec, sizeof(BatchRecord), cudaMemcpyHostToDevice, st));
  marks.mark("upload", st);
  pair->device->frame_launched(slot->index);
  cuda::enqueue_batch(pair->device->shape(1), b.device_record.get(), b.workspace.get(), st, &marks);
  slot->modeling = pair->background.enabled;
  download(*pair, *slot, st);
  marks.mark("download", st);
  STEREOD_CUDA(cudaStreamSynchronize(st));
  std::vector<std::pair<std::string, double>> out;
  for (std::size_t i = 1; i < marks.events.size(); ++i) {
    out.emplace_back(marks.events[i].first,
                     elapsed_ms(*marks.events[i - 1].second, *marks.events[i].second));
  }
  return out;
}

// Groups by device and image size, for the engines made with one EngineGroup.
class CudaEngineGroup final : public EngineGroup {
 public:
  std::shared_ptr<Group> group_for(int device, int width, int height) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto key = std::make_tuple(device, width, height);
    if (auto g = groups_[key].lock()) return g;
    auto g = std::make_shared<Group>(device, width, height);
    groups_[key] = g;
    return g;
  }

 private:
  std::mutex mutex_;
  std::map<std::tuple<int, int, int>, std::weak_ptr<Group>> groups_;
};

class CudaEngine final : public Engine {
 public:
  explicit CudaEngine(const EngineOptions& o) {
    if (auto e = cuda_engine_unsupported(o.stereo, o.background)) throw *e;
    validate_for_images(o.stereo, o.width, o.height, o.width, o.height);
    validate_background_params(o.background);
    check_engine_options(o);
    STEREOD_CUDA(cudaSetDevice(o.gpu_device));
    auto hub = std::dynamic_pointer_cast<CudaEngineGroup>(o.group);
    group_ = hub ? hub->group_for(o.gpu_device, o.width, o.height)
                 : std::make_shared<Group>(o.gpu_device, o.width, o.height);
    pair_ = std::make_shared<PairState>(o);
    pair_->stereo = pair_->pending_stereo = o.stereo;
    pair_->background = pair_->pending_background = o.background;
    pair_->device = std::make_unique<cuda::DevicePipeline>(o.width, o.height, o.inflight);
    pair_->device->set_rectification(o.left_map.get(), o.right_map.get());
    // Configured for gray frames now (so errors surface here); a frame in color reconfigures.
    PairLayout layout;
    layout.right_output = o.right_output;
    layout.cost_ratio_output = o.cost_ratio_output;
    pair_->device->configure(o.stereo, o.background, layout);
    pair_->allocate_slots(o.inflight);
    for (auto& s : pair_->slots) pair_->device->set_slot_io(s->index, pair_->io_of(*s));
    pair_->configured = true;
    group_->add(pair_);
  }

  ~CudaEngine() override {
    try {
      group_->remove(pair_.get());
    } catch (...) {
      // The device is gone: nothing left to wait for.
    }
  }

  std::string_view name() const override { return "cuda"; }

  SubmitStatus submit(const FrameInput& f) override {
    check_frame_size(f, pair_->options.width, pair_->options.height);
    return group_->submit(pair_, f);
  }

  std::optional<EngineResult> poll(std::chrono::nanoseconds wait) override {
    return group_->poll(pair_, wait);
  }

  void set_params(const StereoParams& stereo, const BackgroundParams& background) override {
    if (auto e = cuda_engine_unsupported(stereo, background)) throw *e;
    validate_for_images(stereo, pair_->options.width, pair_->options.height, pair_->options.width,
                        pair_->options.height);
    validate_background_params(background);
    group_->set_params(*pair_, stereo, background);
  }

  int in_flight() const override { return group_->in_flight(*pair_); }

  cuda::DevicePipeline& drained_pipeline() {
    group_->drain(*pair_);
    return *pair_->device;
  }
  // Frames the pair's background model has seen (read after drained_pipeline, with nothing in
  // flight).
  long long model_frames() const { return pair_->model_frames; }
  std::vector<std::pair<std::string, double>> profile(const FrameInput& f) {
    while (submit(f) == SubmitStatus::kBusy) poll(std::chrono::milliseconds(10));
    while (in_flight() > 0) poll(std::chrono::seconds(10));
    return group_->profile(pair_, f);
  }
  CudaBatchStats batch_stats() const { return group_->stats(); }
  void hold_launches(bool hold) { group_->hold_launches(hold); }

 private:
  std::shared_ptr<Group> group_;
  std::shared_ptr<PairState> pair_;
};

}  // namespace

std::unique_ptr<Engine> make_cuda_engine(const EngineOptions& options) {
  return std::make_unique<CudaEngine>(options);
}

std::shared_ptr<EngineGroup> make_cuda_engine_group() {
  return std::make_shared<CudaEngineGroup>();
}

std::shared_ptr<std::uint8_t> allocate_cuda_pinned(std::size_t bytes) {
  void* p = nullptr;
  // Portable: pinned for every device's context (the daemon's frames go to the pairs' GPUs).
  STEREOD_CUDA(cudaHostAlloc(&p, bytes, cudaHostAllocPortable));
  return std::shared_ptr<std::uint8_t>(static_cast<std::uint8_t*>(p),
                                       [](std::uint8_t* q) { cudaFreeHost(q); });
}

CudaModelState cuda_engine_model_state(Engine& engine, int camera, int level, int channel) {
  auto& e = dynamic_cast<CudaEngine&>(engine);
  auto& p = e.drained_pipeline();
  CudaModelState s;
  s.mean = p.download_mean(camera, level, channel, e.model_frames());
  s.variance = p.download_variance(camera, level, channel, e.model_frames());
  s.mask = p.download_mask(camera, level);
  return s;
}

CudaStages cuda_engine_stages(Engine& engine) {
  auto& p = dynamic_cast<CudaEngine&>(engine).drained_pipeline();
  CudaStages st;
  for (int i = 0; i < 2; ++i) {
    for (int s = 0; s < p.levels(); ++s) {
      st.gray[i].push_back(s == 0 ? std::vector<std::uint8_t>{} : p.download_gray(s, i));
      st.census[i].push_back(p.download_census(s, i));
      st.disparity[i].push_back(p.download_disparity(s, i));
    }
    st.q4[i] = p.download_q4(i);
  }
  return st;
}

std::vector<std::pair<std::string, double>> cuda_engine_profile(Engine& engine,
                                                                const FrameInput& frame) {
  return dynamic_cast<CudaEngine&>(engine).profile(frame);
}

void cuda_engine_free_buffer_for_test(Engine& engine) {
  dynamic_cast<CudaEngine&>(engine).drained_pipeline().free_buffer_for_test();
}

CudaBatchStats cuda_engine_batch_stats(Engine& engine) {
  return dynamic_cast<CudaEngine&>(engine).batch_stats();
}

void cuda_engine_hold_launches(Engine& engine, bool hold) {
  dynamic_cast<CudaEngine&>(engine).hold_launches(hold);
}

std::size_t cuda_device_memory_used() {
  std::size_t free_bytes = 0, total = 0;
  STEREOD_CUDA(cudaMemGetInfo(&free_bytes, &total));
  return total - free_bytes;
}

}  // namespace stereod
