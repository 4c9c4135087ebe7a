// The engine interface (docs/ARCHITECTURE.md "The engine interface"). One engine serves one camera
// pair. The ingest thread submits frames without ever blocking; the consumer polls finished results
// in submission order. Each engine owns `inflight` slots; a slot holds a frame's input copy and its
// result buffers, and returns to the pool when the consumer drops the last reference to the result
// (so a publisher can send the result buffers without copying and give the slot back from its send
// completion callback).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "background/background_params.hpp"
#include "frame.hpp"
#include "image.hpp"
#include "rectify/remap.hpp"
#include "stereo/params.hpp"

namespace stereod {

// Engines made with one group share what can be shared: on the GPU, pairs of one image size whose
// frames are ready together run as one batch (one set of launches) instead of one set each. The
// CPU engine ignores it. Make one per process (or per daemon configuration) and hand it to every
// engine; engines made without one run on their own.
class EngineGroup {
 public:
  virtual ~EngineGroup() = default;
};
std::shared_ptr<EngineGroup> make_engine_group();

struct EngineOptions {
  int width = 0;  // every frame of this pair has this size
  int height = 0;
  StereoParams stereo;
  BackgroundParams background;
  int inflight = 2;  // slots: frames submitted and not yet released
  // CPU engine: 0 runs on the process's one shared pool (a thread per core, shared by every
  // pair); n > 0 on a pool of n threads of its own.
  unsigned cpu_threads = 0;
  // Rectification (pipeline/rectify/remap.hpp): maps for the left and right camera, applied to
  // every frame (gray and color) before anything else; null: the frames are already rectified.
  std::shared_ptr<const RectificationMap> left_map, right_map;
  int gpu_device = 0;      // CUDA engine: which device
  bool zero_copy = false;  // CUDA engine: mapped pinned memory (integrated-memory boards)
  // CUDA engine: poll() with a wait watches the GPU for the frame's completion on the calling
  // thread (a CPU core busy meanwhile) instead of sleeping until the engine's completion callback
  // wakes it, which costs tens of microseconds per frame. For callers that wait on each frame
  // and count latency; on_result consumers (the daemon) are woken by the callback either way.
  bool busy_poll = false;
  // CUDA engine: the engine's launcher thread watches each batch's event from shortly before its
  // forecast end (from the spans of the last batches of its kind) until it fires, instead of
  // waiting for the driver's completion callback, which comes about 90 us after the GPU's last
  // byte. Results reach on_result and poll() that much sooner; a core is busy for at most about
  // half a batch's span per batch (docs/ARCHITECTURE.md "Threads"). Off: the callback alone.
  // With busy_poll the caller's own watch replaces it.
  bool watch_ends = true;
  // Post-process and return the right view's map as well (result.right_disparity). Off, the right
  // view is matched only as far as the left-right check needs it.
  bool right_output = false;
  // Return the finest level's winners' cost ratios per left pixel too (result.cost_ratio): what
  // the trinocular fusion compares. Off, nothing is computed or copied for it.
  bool cost_ratio_output = false;
  std::shared_ptr<EngineGroup> group;  // null: this engine runs on its own
  // Called on an engine thread each time a frame's result becomes ready to poll, so that a
  // consumer can wait for results instead of polling on a timer. It must return at once (set a
  // flag, notify a condition variable) and must not call the engine. Empty: not called.
  std::function<void()> on_result;
};

struct FrameInput {
  std::uint64_t sequence = 0;
  std::int64_t capture_time_ns = 0;    // carried through to the result untouched
  ImageView<const std::uint8_t> left;  // 8-bit gray, may be strided; empty: the luma of the color
  ImageView<const std::uint8_t> right;
  // Optional color of the same pixels, for the background model's HSV test (ignored unless
  // background.color is on). Without it the model compares intensities. A frame may come in color
  // only (left and right empty): the engine then matches its BT.601 luma (luma_bt601), as if the
  // caller had converted it.
  RgbView left_color;
  RgbView right_color;
  // Frames as a YUV camera delivers them (yuv.hpp), in place of everything above (left, right and
  // their color empty): the engine converts them to RGB (yuv_pixel_rgb: on the GPU with the CUDA
  // engine) and goes on as with a color-only frame of that RGB. Not for trinocular engines.
  YuvView left_yuv;
  YuvView right_yuv;
  // Trinocular engines only (trinocular/trinocular_engine.hpp): the vertical partner's frame, of
  // the reference's size; left is the reference, right the horizontal partner.
  ImageView<const std::uint8_t> vertical;
  RgbView vertical_color;
  // The views point into page-locked memory (e.g. from allocate_pinned) that stays unchanged until
  // this frame's result has been polled: the CUDA engine uploads straight from it instead of
  // copying it into its own slot first. Ignored by the CPU engine.
  bool pinned = false;
  // Compute the matching confidence of this frame's left disparity (EngineResult::confidence,
  // stereo/confidence.hpp). Off, the result's confidence is empty.
  bool confidence = false;
};

// True when the frame carries no gray and must be matched on the luma of its color.
inline bool gray_from_color(const FrameInput& f) {
  return f.left.data == nullptr && f.right.data == nullptr && !f.left_color.empty() &&
         !f.right_color.empty();
}

// True when the frame comes as YUV only (left_yuv, right_yuv) and is matched on the luma of its
// RGB.
inline bool yuv_input(const FrameInput& f) {
  return f.left.data == nullptr && f.right.data == nullptr && f.left_color.empty() &&
         f.right_color.empty() && !f.left_yuv.empty() && !f.right_yuv.empty();
}

// Page-locked host memory for FrameInput::pinned (ordinary memory where no CUDA is available).
std::shared_ptr<std::uint8_t> allocate_pinned(std::size_t bytes);

struct StageTimings {
  double upload_ms = 0;    // host -> engine input (copy into the slot, or H2D)
  double compute_ms = 0;   // every stage of the algorithm
  double download_ms = 0;  // engine -> host result (D2H); 0 for the CPU engine
  double total_ms = 0;     // submit to result ready
  double wait_ms = 0;      // CUDA: uploaded, waiting for the GPU (the batch before this one)
  // CUDA, host clock from submit: when the frame's GPU work was all enqueued, and when the engine
  // saw it finished (total_ms is then when the caller got it). With the event times above they
  // say where a frame's time outside the GPU goes.
  double enqueued_ms = 0;
  double seen_ms = 0;
  // CUDA: when the GPU began the frame (its first event) and finished it (the download's end),
  // on the host clock from submit, within the few microseconds of the engine's clock anchor.
  double gpu_start_ms = 0;
  double gpu_end_ms = 0;
};

struct EngineResult {
  std::uint64_t sequence = 0;
  std::int64_t capture_time_ns = 0;
  bool ok = false;
  std::string error;  // why the frame failed when !ok (e.g. a parameter the frame cannot meet)
  ImageView<const std::uint16_t> disparity;        // left reference, 16*d, kInvalidDisparity
  ImageView<const std::uint16_t> right_disparity;  // right reference
  // With EngineOptions::cost_ratio_output: winner_cost_ratio (stereo/pixel_ops.hpp) of the left
  // view's finest-level integer winner, before the cross-check and post-processing (kNoCost where
  // that level chose nothing).
  ImageView<const std::uint32_t> cost_ratio;
  // Trinocular engines only: `disparity` is the fused map; which pair gave each pixel its value
  // (kFusedNone, kFusedHorizontal, kFusedVertical), and the two pairs' own maps on the
  // reference's grid in the horizontal pair's scale.
  ImageView<const std::uint8_t> direction;
  ImageView<const std::uint16_t> horizontal_disparity;
  ImageView<const std::uint16_t> vertical_disparity;
  // Left camera's foreground mask at full resolution (255 = foreground, 0 = background); every
  // pixel is foreground while the model warms up or when background modeling is off.
  ImageView<const std::uint8_t> foreground;
  bool background_active = false;  // the model decided this frame (enabled and warmed up)
  // Matching confidence of the left-reference disparity at full resolution, from the best and the
  // second-best matching cost (docs/PROTOCOL.md "confidence8": 0 where there is no disparity,
  // 255 = the most certain); empty when the engine does not compute it. Lives in the slot, like
  // the disparity.
  ImageView<const std::uint8_t> confidence;
  // Share of full-resolution pixels (both cameras) that the hierarchy tested individually.
  double tested_fraction = 1.0;
  int levels_used = 0;
  std::uint64_t params_generation = 0;  // which set_params call the frame was computed with
  StageTimings timings;
  // Keeps the slot (and so the buffers the views point into) reserved; the slot is free again when
  // the last copy of this handle is gone.
  std::shared_ptr<const void> hold;
};

enum class SubmitStatus { kAccepted, kBusy };

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string_view name() const = 0;

  // Copies the frame into a free slot and starts it; kBusy (nothing copied) when no slot is free.
  // Throws ParameterError when the frame does not have the engine's size.
  virtual SubmitStatus submit(const FrameInput& frame) = 0;

  // The oldest submitted frame's result once it is finished, waiting at most `wait` for it;
  // nothing when it is not ready or nothing is in flight.
  virtual std::optional<EngineResult> poll(std::chrono::nanoseconds wait) = 0;

  // Frames submitted from now on use these parameters. Throws ParameterError (and keeps the old
  // parameters) when they are unusable for this engine's image size. The background model keeps
  // what it learned unless the number of levels or the color mode changes.
  virtual void set_params(const StereoParams& stereo, const BackgroundParams& background) = 0;

  // Frames submitted and not yet returned by poll.
  virtual int in_flight() const = 0;
};

// What both engines' submit() check first: left and right (and their color, when both views
// carry it) have the engine's size. Throws ParameterError naming the frame and the sizes.
void check_frame_size(const FrameInput& frame, int width, int height);

// The checks of EngineOptions that do not depend on the engine (slots, maps); throws
// ParameterError naming the configuration key.
void check_engine_options(const EngineOptions& options);

// What the CUDA engine cannot run (yet): nothing today. Every aggregation (window, sgm, cross, and
// sgm_cost cross), the refinement (voting and interpolation) and every background option run on
// both; the check stays for the day an option is built in one engine first. A ParameterError
// naming the key and saying why, or nothing. The CUDA engine throws it (construction
// and set_params), and the daemon's loader reports it wherever the CUDA engine may run the pair
// (engine: cuda or auto), so that a configuration `stereod --check` accepts is one the daemon runs.
std::optional<ParameterError> cuda_engine_unsupported(const StereoParams& p,
                                                      const BackgroundParams& b = {});

// kind: "cpu", "cuda", or "auto" (CUDA when a usable device is present, else CPU). Throws
// std::runtime_error naming the problem (e.g. "cuda engine: not built", CUDA's error message).
std::unique_ptr<Engine> make_engine(std::string_view kind, const EngineOptions& options);
// True when this build has the CUDA engine and a CUDA device is usable; `why` says why not.
bool cuda_engine_available(std::string* why = nullptr);

}  // namespace stereod
