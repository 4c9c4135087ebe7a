// One camera pair's device-side state: the pyramid, matching and post-processing buffers and the
// background model of both cameras, allocated when the parameters are set (never per frame), and
// the MemberArgs through which the stage kernels find them (one per in-flight slot, in device
// memory). enqueue_batch() puts every stage of one batch of pairs on a stream without
// synchronising, so the sequence is captured once as a CUDA graph and replayed.
//
// A frame's own buffers (the rectified images, the pyramid, masks and block marks its model part
// writes, and everything its matching and post-processing write) are kept once per slot: the
// engine runs frame n + 1's model, and its matching, while frame n is still being matched
// (cuda_engine.cu). The model's own state is the pair's (models run one frame after the other),
// and so are the semi-global and cross-based volumes (those modes match one frame at a time).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "background/background_params.hpp"
#include "device_buffer.hpp"
#include "kernels/stages.hpp"
#include "rectify/remap.hpp"
#include "stereo/params.hpp"

namespace stereod::cuda {

// Where one slot's frame lives on the device: input (gray null: the frame is color only) and
// output (a slot's buffers, or mapped host memory).
struct SlotIo {
  const std::uint8_t* gray[2] = {nullptr, nullptr};
  const std::uint8_t* rgb[2] = {nullptr, nullptr};
  std::uint16_t* disparity[2] = {nullptr, nullptr};  // right: null unless asked for
  std::uint8_t* foreground = nullptr;                // null: modeling off
  unsigned long long* tested = nullptr;
  std::uint32_t* cost_ratio = nullptr;  // the left view's winners' cost ratios (null: not asked)
  unsigned long long* sgm_cells = nullptr;   // semi-global aggregation's error word (MemberArgs)
  std::uint32_t* foreground_word = nullptr;  // MemberArgs::out_foreground_word
  std::uint8_t* confidence = nullptr;        // the left view's confidence8 (filled when asked for)
};

// How a pair's frames arrive and what it returns (beyond the parameters).
struct PairLayout {
  bool color_input = false;        // frames carry color (kept for the background model)
  bool derive_gray = false;        // frames carry color only: gray is its luma
  bool right_output = false;       // return the right view's map too
  bool confidence = false;         // return the left view's matching confidence too
  bool cost_ratio_output = false;  // return the left view's winners' cost ratios too
};

// Marks the end of each stage with an event (profiling only; never inside a captured graph).
class StageMarks {
 public:
  virtual ~StageMarks() = default;
  virtual void mark(const std::string& stage, cudaStream_t stream) = 0;
};

class DevicePipeline {
 public:
  DevicePipeline(int width, int height, int slots);

  // Sizes the buffers for these parameters (validated by the caller) and rewrites every slot's
  // MemberArgs. Keeps the background model when the levels and color mode are unchanged, like the
  // CPU model (reports whether it restarted). Synchronous: call with nothing in flight.
  bool configure(const StereoParams& stereo, const BackgroundParams& background,
                 const PairLayout& layout);
  // Rectification maps (copied to the device once); both null: frames are already rectified.
  void set_rectification(const RectificationMap* left, const RectificationMap* right);
  // Where slot `slot`'s frames are read from and results written to.
  void set_slot_io(int slot, const SlotIo& io);
  // Ghosts seen in depth: the model frame from which the left camera's records exist (0 after a
  // restart; the next frame's number when the option is turned on). Call with nothing in flight.
  void set_depth_from(long long frame);

  // The shape of a batch of `count` pairs like this one, and a key that is equal for pairs that
  // can share a batch (same size, same kernels).
  BatchShape shape(int count) const;
  std::string batch_key() const;
  const MemberArgs* member_args(int slot) const { return args_.get() + slot; }

  int levels() const { return levels_; }
  bool color() const { return color_; }
  const PairLayout& layout() const { return layout_; }
  const StereoParams& stereo() const { return stereo_; }
  const BackgroundParams& background() const { return background_; }
  std::size_t scratch_items(int level) const;  // work-list entries one pair may need per level

  // For tests: the model's state and masks after the last frame (synchronous copies); `frames`:
  // the frames the model has seen (which of its two copies is the newest).
  std::vector<std::uint16_t> download_mean(int camera, int level, int channel,
                                           long long frames) const;
  std::vector<std::uint32_t> download_variance(int camera, int level, int channel,
                                               long long frames) const;
  std::vector<std::uint8_t> download_mask(int camera, int level) const;
  // Intermediate results of the last frame, for stage-by-stage comparison with the CPU.
  std::vector<std::uint8_t> download_gray(int level, int image) const;  // levels above 0
  std::vector<std::uint64_t> download_census(int level, int image) const;
  std::vector<std::int16_t> download_disparity(int level, int view) const;
  // After the check (with the refinement: and the speckle removal, done there in place).
  std::vector<std::uint16_t> download_q4(int view) const;
  // Fault injection for the error-reporting test: frees a buffer the next frame writes.
  void free_buffer_for_test();
  // The slot of the frame launched last: the per-slot buffers the downloads above read.
  void frame_launched(int slot) { last_slot_ = slot; }

 private:
  struct Level {
    int w = 0, h = 0;
    DeviceBuffer<std::uint8_t> hsv[2][3];
    DeviceBuffer<std::uint16_t> mean[2][2][3];  // [copy][camera][channel] (stage_args.hpp)
    DeviceBuffer<std::uint32_t> var[2][2][3];
    DeviceBuffer<std::uint16_t> still[2];
    DeviceBuffer<std::uint8_t> prev[2];
    DeviceBuffer<std::uint32_t> sgm_rel[2], sgm_row[2];  // semi-global volume layout
  };

  // One slot's frame buffers (see above).
  struct FrameLevel {
    DeviceBuffer<std::uint8_t> gray[2];  // levels above 0, and level 0 when derived from color
    DeviceBuffer<std::uint8_t> closed[2], mask[2], block_fg[2];
    DeviceBuffer<std::uint64_t> census[2];
    DeviceBuffer<std::uint8_t> ad[2];
    DeviceBuffer<std::int16_t> disp[2], lo[2], hi[2];
    DeviceBuffer<std::uint32_t> tile_done[2], key[2], cmcp[2];
    // Finest level, aggregations shared by both views (LevelBuffers; empty without).
    DeviceBuffer<std::uint32_t> shared_cands, shared_tiles;
    DeviceBuffer<std::uint16_t> right_slots;
  };
  struct Frame {
    std::vector<FrameLevel> level;
    DeviceBuffer<std::uint8_t> rect_gray[2], rect_rgb[2];  // rectified input (empty: none)
    DeviceBuffer<std::uint16_t> q4[2];
    DeviceBuffer<std::int32_t> label[2], local_size[2], size[2];
    DeviceBuffer<std::uint8_t> post_active[2];
    // The multi-step refinement (empty without it): arms and the rounds' two maps, per view.
    DeviceBuffer<std::uint32_t> refine_arms[2];
    DeviceBuffer<std::uint16_t> refined[2][2];
    DeviceBuffer<std::uint32_t> refine_changed[2];
    DeviceBuffer<std::uint16_t> refine_interpolated[2];
  };

  MemberArgs make_args(int slot) const;
  // Whether the pair runs the window matcher (BatchShape::window_path), and whether its finest
  // level shares the two views' aggregations (BatchShape::shared_finest).
  bool window_path() const;
  bool shares_finest() const;
  const Frame& last_frame() const { return frames_[static_cast<std::size_t>(last_slot_)]; }
  void write_args();

  int width_, height_;
  int workers_;               // resident blocks of the window matcher on this device
  std::vector<int> segment_;  // disparities per work item, per level
  StereoParams stereo_;
  BackgroundParams background_;
  PairLayout layout_;
  CostTables tables_;
  bool color_ = false;
  bool configured_ = false;
  bool share_finest_ = false;  // STEREOD_CUDA_SHARED_FINEST=1 at the last configure
  int levels_ = 0;
  std::vector<Level> level_;
  // Semi-global aggregation: each view's volume (C and S), reused by every level, and the cell
  // count of each (level, view).
  DeviceBuffer<std::uint32_t> sgm_cost_[2], sgm_sum_[2];
  DeviceBuffer<unsigned long long> sgm_cells_;
  std::size_t sgm_capacity_ = 0;
  // Cross-based aggregation's scratch (CrossBuffers in stage_args.hpp; empty without it): per
  // view, sized for the finest level and reused by each; the hull sums hold sgm_capacity_ cells.
  DeviceBuffer<std::uint32_t> cross_arms_[2], cross_hull_rel_[2], cross_hull_row_[2];
  DeviceBuffer<std::int16_t> cross_hull_lo_[2], cross_hull_hi_[2];
  DeviceBuffer<unsigned long long> cross_hull_cells_;
  DeviceBuffer<std::uint32_t> cross_partial_[2];
  DeviceBuffer<std::uint16_t> cross_counts_[2];
  DeviceBuffer<std::int32_t> map_[2];  // rectification maps (empty: none)
  // Ghosts seen in depth (MemberArgs::depth_records ...; empty without background.depth_ghosts).
  DeviceBuffer<std::uint16_t> depth_records_, depth_static_;
  DeviceBuffer<std::uint8_t> depth_tiles_;
  DeviceBuffer<std::uint32_t> depth_last_;
  long long depth_from_ = 0;
  std::vector<Frame> frames_;  // one per slot
  int last_slot_ = 0;
  std::vector<SlotIo> io_;
  DeviceBuffer<MemberArgs> args_;  // one per slot
};

// Scratch shared by the members of a batch: the work lists, sized for `max_count` pairs whose
// largest needs are `items` per level.
class BatchWorkspace {
 public:
  void ensure(const std::vector<std::size_t>& items_per_level);
  const Workspace& get() const { return ws_; }
  bool resized() const { return resized_; }
  void clear_resized() { resized_ = false; }

 private:
  DeviceBuffer<ListCounters> counters_;
  DeviceBuffer<std::uint64_t> heavy_[kMaxLevels], light_[kMaxLevels];
  std::vector<std::size_t> items_;
  Workspace ws_;
  bool resized_ = true;
};

// Every stage of one batch, in order (one launcher call per stage; kernels/<stage>.cu): the
// model's part (rectification, pyramid with the work lists' counters zeroed, background model),
// then the stereo part (census to post-processing). batch_graph.cu puts a gate between the two:
// `gate` holds its conditional handles, which the finest model kernel sets.
void enqueue_model(const BatchShape& shape, const BatchRecord* batch, const Workspace& ws,
                   cudaStream_t stream, StageMarks* marks = nullptr,
                   const ForegroundSignal* gate = nullptr);
// `after_model`: the model's kernels were enqueued just before, on the same stream.
void enqueue_stereo(const BatchShape& shape, const BatchRecord* batch, const Workspace& ws,
                    cudaStream_t stream, StageMarks* marks = nullptr, bool after_model = false);
void enqueue_batch(const BatchShape& shape, const BatchRecord* batch, const Workspace& ws,
                   cudaStream_t stream, StageMarks* marks = nullptr);

}  // namespace stereod::cuda
