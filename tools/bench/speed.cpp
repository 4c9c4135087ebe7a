// stereod-bench speed: frames per second per pair on generated textured pairs with a known
// disparity, with every pair's engine kept busy (so uploads, compute and downloads of successive
// frames overlap as they do in the daemon), or, with --latency, one frame at a time. Times are
// wall clock over the timed frames; the per-frame latency (submit to result) and the engine's own
// stage times are reported too. With --timeline the per-frame times go to a CSV file, to explain
// the gaps between the frame time and the GPU's busy time.
//
// The input frames sit in page-locked memory, as a capture driver with a pinned buffer pool (or
// libSGM's benchmark) would hold them: the engine uploads them straight from there (--pageable
// copies each frame into the engine's own slot first, as the daemon does today).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "foreground_score.hpp"
#include "frame.hpp"
#include "middlebury.hpp"
#include "plane_scenes.hpp"
#include "stereo/pixel_ops.hpp"
#include "synthetic/synthetic_scene.hpp"
#include "yuv_encode.hpp"
#if defined(STEREOD_HAVE_CUDA)
#include "cuda_engine.hpp"
#endif

namespace stereod::bench {
namespace {

// The nonzero bytes of n at p. Eight at a time: in ((w & 0x7F..) + 0x7F..) | w the top bit of each
// byte is set exactly where that byte of w is nonzero.
long long nonzero_bytes(const std::uint8_t* p, int n) {
  constexpr std::uint64_t kLow7 = 0x7F7F7F7F7F7F7F7FULL;
  long long count = 0;
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, sizeof w);
    count += popcount64((((w & kLow7) + kLow7) | w) & ~kLow7);
  }
  for (; i < n; ++i) count += p[i] != 0;
  return count;
}

using Clock = std::chrono::steady_clock;

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * (v.size() - 1) + 0.5))];
}

// Share of visible pixels whose disparity is within 1 of the truth: proves the timed work is real.
double percent_correct(ImageView<const std::uint16_t> d, const Image<float>& truth,
                       const Gray8& visible) {
  long long n = 0, good = 0;
  for (int y = 0; y < d.height; ++y) {
    for (int x = 0; x < d.width; ++x) {
      if (visible(x, y) == 0) continue;
      ++n;
      const std::uint16_t v = d(x, y);
      good += v != kInvalidDisparity &&
              std::fabs(v / double(kSubpixelScale) - static_cast<double>(truth(x, y))) <= 1.0;
    }
  }
  return n ? 100.0 * good / n : 0;
}

// The input frames, each gray pair (and color pair) packed in one block of (pinned) memory; with
// `yuv`, each color pair encoded in that camera format instead (what the engine then uploads).
class Clip {
 public:
  Clip(int width, int height, int frames, bool color, bool pinned,
       std::optional<YuvFormat> yuv = std::nullopt)
      : w_(width), h_(height), frames_(frames), color_(color), yuv_(yuv) {
    const std::size_t px = static_cast<std::size_t>(width) * height;
    frame_bytes_ = yuv ? 2 * yuv_packed_bytes(*yuv, width, height) : (color ? 8 : 2) * px;
    const std::size_t bytes = frame_bytes_ * static_cast<std::size_t>(frames);
    if (pinned) {
      storage_ = allocate_pinned(bytes);
    } else {
      storage_ = std::shared_ptr<std::uint8_t>(new std::uint8_t[bytes],
                                               std::default_delete<std::uint8_t[]>());
    }
    pinned_ = pinned;
  }
  int frames() const { return frames_; }
  std::uint8_t* gray(int frame, int cam) { return base(frame) + cam * px(); }
  std::uint8_t* rgb(int frame, int cam) { return base(frame) + 2 * px() + 3 * cam * px(); }
  std::uint8_t* yuv(int frame, int cam) {
    return base(frame) + cam * yuv_packed_bytes(*yuv_, w_, h_);
  }
  void set(int frame, const Gray8& l, const Gray8& r, const RgbImage* lc, const RgbImage* rc) {
    if (yuv_ && lc && rc) {
      for (int cam = 0; cam < 2; ++cam) {
        const YuvFrame e = encode_yuv(cam == 0 ? *lc : *rc, *yuv_);
        std::memcpy(yuv(frame, cam), e.bytes.data(), e.bytes.size());
      }
      return;
    }
    std::memcpy(gray(frame, 0), l.data(), px());
    std::memcpy(gray(frame, 1), r.data(), px());
    if (color_ && lc && rc) {
      std::memcpy(rgb(frame, 0), lc->pixels.data(), 3 * px());
      std::memcpy(rgb(frame, 1), rc->pixels.data(), 3 * px());
    }
  }
  // The frame as an engine takes it; color_only leaves the gray out (the engine derives it).
  FrameInput input(int frame, std::uint64_t sequence, bool color_only) {
    FrameInput f;
    f.sequence = sequence;
    f.pinned = pinned_;
    if (yuv_) {
      f.left_yuv = packed_yuv(*yuv_, yuv(frame, 0), w_, h_);
      f.right_yuv = packed_yuv(*yuv_, yuv(frame, 1), w_, h_);
      return f;
    }
    if (!color_only) {
      f.left = {gray(frame, 0), w_, h_, w_};
      f.right = {gray(frame, 1), w_, h_, w_};
    }
    if (color_) {
      f.left_color = {rgb(frame, 0), w_, h_, 3 * w_};
      f.right_color = {rgb(frame, 1), w_, h_, 3 * w_};
    }
    f.pinned = pinned_;
    return f;
  }

 private:
  std::size_t px() const { return static_cast<std::size_t>(w_) * h_; }
  std::uint8_t* base(int frame) { return storage_.get() + frame_bytes_ * frame; }
  int w_, h_, frames_;
  bool color_, pinned_ = false;
  std::optional<YuvFormat> yuv_;
  std::size_t frame_bytes_ = 0;
  std::shared_ptr<std::uint8_t> storage_;
};

struct Truth {
  int frame = -1;  // the clip frame scored (the last timed one)
  Image<float> disparity;
  Gray8 visible;
};

// With background modeling: 8 s of the synthetic video (--objects moving objects; the default 3
// cover about 15 % of the frame), played forward, then backward, and so on: objects reverse, they
// never jump, so the model sees the motion it would see from a camera. Without: three different
// generated pairs in rotation, so no cache holds the next frame's input.
struct Source {
  std::unique_ptr<Clip> clip;
  Truth truth;
  bool video = false;
  int clip_index(int i) const {
    const int n = clip->frames();
    if (!video || n < 2) return i % n;
    const int c = i % (2 * n - 2);
    return c < n ? c : 2 * n - 2 - c;
  }
};

Source make_source(const SpeedOptions& o, bool pinned, int scored, const Scene* real) {
  Source src;
  if (real) {  // one real pair, every frame; scored against its ground truth where it has one
    src.clip = std::make_unique<Clip>(o.width, o.height, 1, false, pinned);
    src.clip->set(0, real->left, real->right, nullptr, nullptr);
    src.truth.frame = 0;
    src.truth.disparity = real->ground_truth;
    src.truth.visible = ground_truth_mask(*real);
    return src;
  }
  if (!o.background) {
    src.clip = std::make_unique<Clip>(o.width, o.height, 3, false, pinned);
    for (std::uint32_t seed = 0; seed < 3; ++seed) {
      const SyntheticPair p =
          make_benchmark_pair(o.width, o.height, o.max_disparity, 11 + seed * 7);
      src.clip->set(static_cast<int>(seed), p.left, p.right, nullptr, nullptr);
      if (static_cast<int>(seed) == src.clip_index(scored)) {
        src.truth.frame = static_cast<int>(seed);
        src.truth.disparity = p.truth;
        src.truth.visible = p.visible;
      }
    }
    return src;
  }
  constexpr int kClipFrames = 240;
  src.video = true;
  std::optional<YuvFormat> yuv;
  if (o.yuv == "nv12") yuv = YuvFormat::kNv12;
  if (o.yuv == "uyvy") yuv = YuvFormat::kUyvy;
  src.clip = std::make_unique<Clip>(o.width, o.height, kClipFrames, true, pinned, yuv);
  SyntheticOptions so;
  so.width = o.width;
  so.height = o.height;
  so.max_disparity = o.max_disparity;
  so.objects = o.objects;
  const SyntheticScene scene(so);
  src.truth.frame = src.clip_index(scored);
  const unsigned workers = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      SyntheticFrame f;
      for (int i = static_cast<int>(w); i < kClipFrames; i += static_cast<int>(workers)) {
        scene.render(i, f);
        src.clip->set(i, f.left_gray, f.right_gray, &f.left, &f.right);
        if (i == src.truth.frame) {
          // The foreground the right view shows: an object entering at the left border or
          // hidden behind another has no partner, and no matcher can give it a disparity.
          src.truth.disparity = f.disparity;
          right_visibility(f.disparity, src.truth.visible);
          for (std::size_t k = 0; k < src.truth.visible.size(); ++k) {
            const bool fg = f.mask.data()[k] == kMaskForeground;
            src.truth.visible.data()[k] = fg && src.truth.visible.data()[k] ? 255 : 0;
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  return src;
}

struct FrameRecord {
  int pair = 0;
  std::uint64_t sequence = 0;
  double submit_ms = 0, result_ms = 0;  // since the start of the timed window
  StageTimings timings;
  double foreground = 0, tested = 0;
};

struct Run {
  double seconds = 0;
  int timed = 0;
  int levels = 0;
  double correct = 100;
  int scored_frame = -1;  // the clip frame `correct` was measured on
  std::vector<FrameRecord> records;
};

class Runner {
 public:
  Runner(const SpeedOptions& o, std::vector<std::unique_ptr<Engine>>& engines, Source& src)
      : o_(o), engines_(engines), src_(src), warmup_(o.warmup) {
    submitted_.assign(engines.size(), 0);
    completed_.assign(engines.size(), 0);
    submit_time_.assign(engines.size(), std::vector<double>());
  }
  void set_warmup(int w) { warmup_ = w; }
  int total() const { return warmup_ + o_.frames; }

  // Every pair's engine kept full: submit until busy, take what is ready. Stalled pairs
  // (SpeedOptions::stalled) stop after the warm-up.
  Run throughput() {
    const int pairs = static_cast<int>(engines_.size());
    const auto stalled = [&](int k) { return k >= pairs - o_.stalled; };
    const auto unfinished = [&] {
      for (int k = 0; k < pairs; ++k)
        if (completed_[k] < (stalled(k) ? warmup_ : total())) return true;
      return false;
    };
    bool timing = warmup_ == 0;
    if (timing) start_ = Clock::now();
    while (unfinished()) {
      bool progress = false;
      for (int k = 0; k < pairs; ++k) {
        // Warm-up frames first on every pair, so the timed window starts with all pairs warm.
        const int limit = timing && !stalled(k) ? total() : warmup_;
        while (submitted_[k] < limit) {
          if (!submit(k)) break;
          progress = true;
        }
        while (auto r = engines_[k]->poll(std::chrono::nanoseconds(0))) {
          progress = true;
          handle(k, *r);
        }
      }
      if (!timing &&
          std::all_of(completed_.begin(), completed_.end(), [&](int c) { return c >= warmup_; })) {
        timing = true;
        start_ = Clock::now();
        continue;
      }
      if (!progress) {
        // Nothing ready: wait on the oldest frame of some busy pair instead of spinning.
        for (int k = 0; k < pairs; ++k) {
          if (completed_[k] < submitted_[k]) {
            if (auto r = engines_[k]->poll(std::chrono::microseconds(200))) handle(k, *r);
            break;
          }
        }
      }
    }
    run_.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    return run_;
  }

  // One frame at a time (pair 0): submit, wait for its result, then the next.
  Run latency() {
    for (int i = 0; i < total(); ++i) {
      if (i == warmup_) start_ = Clock::now();
      if (!submit(0)) throw std::runtime_error("engine busy with nothing in flight");
      auto r = engines_[0]->poll(std::chrono::seconds(60));
      if (!r) throw std::runtime_error("no result within 60 s");
      handle(0, *r);
    }
    run_.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    return run_;
  }

 private:
  double now_ms() const {
    return std::chrono::duration<double, std::milli>(Clock::now() - start_).count();
  }

  bool submit(int k) {
    const int i = submitted_[k];
    const FrameInput f =
        src_.clip->input(src_.clip_index(i), static_cast<std::uint64_t>(i), o_.color_only);
    const double t = now_ms();
    if (engines_[k]->submit(f) == SubmitStatus::kBusy) return false;
    submit_time_[k].push_back(t);
    ++submitted_[k];
    return true;
  }

  void handle(int k, const EngineResult& r) {
    if (!r.ok) throw std::runtime_error("frame failed: " + r.error);
    if (r.sequence != static_cast<std::uint64_t>(completed_[k])) {
      throw std::runtime_error("results out of order: expected " + std::to_string(completed_[k]) +
                               ", got " + std::to_string(r.sequence));
    }
    run_.levels = r.levels_used;
    const int i = completed_[k];
    if (i >= warmup_) {
      ++run_.timed;
      FrameRecord rec;
      rec.pair = k;
      rec.sequence = r.sequence;
      rec.submit_ms = submit_time_[k][static_cast<std::size_t>(i)];
      rec.result_ms = now_ms();
      rec.timings = r.timings;
      rec.tested = r.tested_fraction;
      // The share of foreground, from every 16th frame, eight bytes at a time: this thread also
      // submits, and with frames in flight a slow count left the GPU idle (the byte loop took
      // 0.26-0.32 ms of a 1024x768 mask, about a tenth of the empty scene's time).
      rec.foreground = -1;
      if (o_.background && run_.timed % 16 == 1) {
        long long fg = 0;
        for (int y = 0; y < r.foreground.height; ++y) {
          fg += nonzero_bytes(r.foreground.row(y), r.foreground.width);
        }
        rec.foreground = double(fg) / (double(r.foreground.width) * r.foreground.height);
      }
      run_.records.push_back(rec);
    }
    if (i == total() - 1 && src_.clip_index(i) == src_.truth.frame) {
      run_.correct = std::min(
          run_.correct, percent_correct(r.disparity, src_.truth.disparity, src_.truth.visible));
      run_.scored_frame = src_.truth.frame;
    }
    ++completed_[k];
  }

  const SpeedOptions& o_;
  std::vector<std::unique_ptr<Engine>>& engines_;
  Source& src_;
  int warmup_;
  std::vector<int> submitted_, completed_;
  std::vector<std::vector<double>> submit_time_;
  Clock::time_point start_ = Clock::now();
  Run run_;
};

// The CPU engine's stages: a CpuPairProcessor with the engine's parameters runs the timed run's
// frames (so a background model is as warm), then 21 more, timed.
std::vector<std::pair<std::string, double>> cpu_stages(const CommonOptions& common,
                                                       const PairParams& params, Runner& runner,
                                                       Source& src, bool color_only) {
  Gray8 gray[2];
  FrameInput in;
  return cpu_profile(common, params, runner.total(), [&](int i) {
    in = src.clip->input(src.clip_index(i), static_cast<std::uint64_t>(i), color_only);
    PairFrame f;
    f.left = in.left;
    f.right = in.right;
    f.left_color = in.left_color;
    f.right_color = in.right_color;
    f.right_output = false;     // as the engine: the right view's map is not returned
    if (gray_from_color(in)) {  // what the engine's submit does with color-only frames
      const RgbView color[2] = {in.left_color, in.right_color};
      for (int v = 0; v < 2; ++v) rgb_to_gray(color[v], gray[v]);
      f.left = gray[0].view();
      f.right = gray[1].view();
    }
    return f;
  });
}

std::vector<std::pair<std::string, double>> profile_stages(const CommonOptions& common,
                                                           const PairParams& params, Engine& engine,
                                                           Runner& runner, Source& src,
                                                           bool color_only) {
  std::vector<std::pair<std::string, double>> stages;
  if (engine.name() == "cpu") return cpu_stages(common, params, runner, src, color_only);
#if defined(STEREOD_HAVE_CUDA)
  if (engine.name() != "cuda") return stages;
  // Median of several profiled frames per stage: the frames that follow the timed ones, so a
  // background model sees continuous motion.
  std::vector<std::vector<std::pair<std::string, double>>> runs;
  for (int i = 0; i < 21; ++i) {
    const int n = runner.total() + i;
    runs.push_back(cuda_engine_profile(
        engine, src.clip->input(src.clip_index(n), static_cast<std::uint64_t>(n), color_only)));
  }
  for (std::size_t s = 0; s < runs.front().size(); ++s) {
    std::vector<double> t;
    for (const auto& r : runs) t.push_back(r[s].second);
    stages.emplace_back(runs.front()[s].first, median(t));
  }
#endif
  return stages;
}

void write_timeline(const std::string& path, const Run& run) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << "pair,sequence,submit_ms,result_ms,upload_ms,wait_ms,compute_ms,download_ms,total_ms,"
         "enqueued_ms,seen_ms,gpu_start_ms,gpu_end_ms,foreground\n";
  for (const auto& r : run.records) {
    out << r.pair << "," << r.sequence << "," << r.submit_ms << "," << r.result_ms << ","
        << r.timings.upload_ms << "," << r.timings.wait_ms << "," << r.timings.compute_ms << ","
        << r.timings.download_ms << "," << r.timings.total_ms << "," << r.timings.enqueued_ms << ","
        << r.timings.seen_ms << "," << r.timings.gpu_start_ms << "," << r.timings.gpu_end_ms << ","
        << r.foreground << "\n";
  }
}

std::vector<double> field(const Run& run, double StageTimings::*member) {
  std::vector<double> v;
  for (const auto& r : run.records) v.push_back(r.timings.*member);
  return v;
}

// The parameters timed: background off unless asked for, so that every pixel is matched (the
// speed targets are stated so). Throws when the options do not fit together.
PairParams speed_params(const CommonOptions& common, const SpeedOptions& o) {
  PairParams params = o.background ? resolve_params(common) : resolve_stereo_only(common, false);
  StereoParams& p = params.stereo;
  p.max_disparity = o.max_disparity;
  if (o.levels > 0) p.levels = o.levels;
  validate_for_images(p, o.width, o.height, o.width, o.height);
  if (o.color_only && !o.background)
    throw std::invalid_argument("--color-only needs --background (the frames with color)");
  if (!o.yuv.empty() && !o.background)
    throw std::invalid_argument("--yuv needs --background (the frames with color)");
  if (o.yuv == "nv12" && (o.width % 2 || o.height % 2))
    throw std::invalid_argument("--yuv nv12 needs an even width and height");
  if (o.yuv == "uyvy" && o.width % 2) throw std::invalid_argument("--yuv uyvy needs an even width");
  if (o.stalled >= o.pairs)
    throw std::invalid_argument("--stalled must leave at least one of the --pairs sending");
  if (o.stalled > 0 && o.latency)
    throw std::invalid_argument("--stalled needs several pairs kept busy, not --latency");
  return params;
}

// What the report says, worked out from the timed run.
struct Summary {
  std::string engine_name;
  bool pinned = false;
  double fps_total = 0, fps_pair = 0, ms_per_frame = 0, mde = 0;
  std::vector<double> latency, compute;
  double gpu_busy_ms = 0;
  std::vector<double> foreground, tested;  // foreground: only the frames that counted it
  std::uint64_t batches = 0, batched_frames = 0;
  std::uint64_t gated_graphs = 0, plain_graphs = 0, gated_batches = 0, plain_batches = 0;
  std::uint64_t watched_ends = 0, shared_finest_batches = 0;
  double graph_build_ms = 0, graph_build_max_ms = 0;
  std::vector<std::pair<std::string, double>> stages;
};

Summary summarise(const SpeedOptions& o, const Run& run, Engine& engine) {
  Summary s;
  s.fps_total = run.timed / run.seconds;
  s.fps_pair = s.fps_total / (o.pairs - o.stalled);
  s.ms_per_frame = 1000.0 / s.fps_pair;
  s.mde = double(o.width) * o.height * o.max_disparity * s.fps_total / 1e6;
  s.engine_name = std::string(engine.name());
  s.latency = field(run, &StageTimings::total_ms);
  s.compute = field(run, &StageTimings::compute_ms);
  for (double c : s.compute) s.gpu_busy_ms += c;
  for (const auto& r : run.records) {
    if (r.foreground >= 0) s.foreground.push_back(r.foreground);
    s.tested.push_back(r.tested);
  }
#if defined(STEREOD_HAVE_CUDA)
  if (s.engine_name == "cuda") {
    const CudaBatchStats b = cuda_engine_batch_stats(engine);
    s.batches = b.batches;
    s.batched_frames = b.frames;
    s.gated_graphs = b.gated_graphs;
    s.gated_batches = b.gated_batches;
    s.plain_batches = b.plain_batches;
    s.plain_graphs = b.plain_graphs;
    s.watched_ends = b.watched_ends;
    s.shared_finest_batches = b.shared_finest_batches;
    s.graph_build_ms = b.graph_build_ms;
    s.graph_build_max_ms = b.graph_build_max_ms;
  }
#endif
  return s;
}

nlohmann::json speed_json(const SpeedOptions& o, const Run& run, const Summary& s) {
  nlohmann::json j = {{"engine", s.engine_name},
                      {"width", o.width},
                      {"height", o.height},
                      {"max_disparity", o.max_disparity},
                      {"levels", run.levels},
                      {"pairs", o.pairs},
                      {"stalled", o.stalled},
                      {"frames", o.frames},
                      {"inflight", o.latency ? 1 : o.inflight},
                      {"mode", o.latency ? "latency" : "throughput"},
                      {"pinned_input", s.pinned},
                      {"busy_poll", o.busy_poll},
                      {"watch_ends", o.watch_ends},
                      {"yuv", o.yuv},
                      {"batched", o.batch},
                      {"ms_per_frame", s.ms_per_frame},
                      {"fps_per_pair", s.fps_pair},
                      {"fps_total", s.fps_total},
                      {"mde_per_s", s.mde},
                      {"latency_ms_median", median(s.latency)},
                      {"latency_ms_p99", percentile(s.latency, 0.99)},
                      {"compute_ms_median", median(s.compute)},
                      {"enqueued_ms_median", median(field(run, &StageTimings::enqueued_ms))},
                      {"seen_ms_median", median(field(run, &StageTimings::seen_ms))},
                      {"gpu_busy_fraction", s.gpu_busy_ms / (1000 * run.seconds)},
                      {"percent_correct", run.correct},
                      {"scored_clip_frame", run.scored_frame}};
  for (const auto& [stage, ms] : s.stages) j["stages_ms"][stage] = ms;
  if (s.batches) {
    j["frames_per_batch"] = double(s.batched_frames) / double(s.batches);
    j["watched_ends"] = s.watched_ends;
    j["shared_finest_batches"] = s.shared_finest_batches;
  }
  if (o.background) {
    j["background"] = true;
    j["foreground_fraction_median"] = median(s.foreground);
    j["tested_fraction_median"] = median(s.tested);
  }
  return j;
}

void print_speed(const SpeedOptions& o, const Run& run, const Summary& s) {
  // Only the CUDA engine batches pairs (the CPU engine has no engine group).
  std::string pairs_note = o.batch && o.pairs > 1 && s.engine_name == "cuda" ? " batched" : "";
  if (o.stalled > 0) pairs_note += " (" + std::to_string(o.stalled) + " stalled after the warm-up)";
  std::printf(
      "engine %s  %dx%d  D=%d  L=%d  pairs=%d%s  inflight=%d  frames=%d  %s%s  input %s%s\n"
      "  %.3f ms/frame per pair   %.1f fps per pair   %.1f pair-frames/s total   %.0f MDE/s\n"
      "  latency (submit to result) median %.3f ms, p99 %.3f ms\n"
      "  per frame (medians): upload %.3f, waiting for the GPU %.3f, compute %.3f, download "
      "%.3f ms; GPU busy %.0f%% of the wall time\n"
      "  %.1f%% of %s within 1 of the truth (the last frame: clip frame %d)\n",
      s.engine_name.c_str(), o.width, o.height, o.max_disparity, run.levels, o.pairs,
      pairs_note.c_str(), o.latency ? 1 : o.inflight, o.frames,
      o.latency ? "one frame at a time" : "throughput",
      o.busy_poll     ? " (busy poll)"
      : !o.watch_ends ? " (no watch)"
                      : "",
      s.pinned ? "pinned" : "pageable",
      !o.yuv.empty() ? (o.yuv == "nv12" ? ", NV12" : ", UYVY")
      : o.color_only ? ", color only"
                     : "",
      s.ms_per_frame, s.fps_pair, s.fps_total, s.mde, median(s.latency),
      percentile(s.latency, 0.99), median(field(run, &StageTimings::upload_ms)),
      median(field(run, &StageTimings::wait_ms)), median(s.compute),
      median(field(run, &StageTimings::download_ms)), 100 * s.gpu_busy_ms / (1000 * run.seconds),
      run.correct,
      o.background       ? "the foreground the right view shows"
      : !o.scene.empty() ? "the pixels with ground truth"
                         : "the pixels both views show",
      run.scored_frame);
  const std::vector<double> enqueued = field(run, &StageTimings::enqueued_ms);
  if (median(enqueued) > 0) {
    std::printf(
        "  host clock from submit (medians): GPU work enqueued %.3f; GPU began %.3f, ended %.3f; "
        "seen finished %.3f, returned %.3f ms\n",
        median(enqueued), median(field(run, &StageTimings::gpu_start_ms)),
        median(field(run, &StageTimings::gpu_end_ms)), median(field(run, &StageTimings::seen_ms)),
        median(s.latency));
  }
  if (s.batches) {
    std::printf(
        "  %llu batches, %.2f pairs per batch (modeling: %llu gated, %llu plain); batch graphs: "
        "%llu gated, %llu plain, built in %.1f ms in all (longest %.1f ms); %llu ends seen "
        "while watched; %llu with the finest level shared\n",
        static_cast<unsigned long long>(s.batches), double(s.batched_frames) / double(s.batches),
        static_cast<unsigned long long>(s.gated_batches),
        static_cast<unsigned long long>(s.plain_batches),
        static_cast<unsigned long long>(s.gated_graphs),
        static_cast<unsigned long long>(s.plain_graphs), s.graph_build_ms, s.graph_build_max_ms,
        static_cast<unsigned long long>(s.watched_ends),
        static_cast<unsigned long long>(s.shared_finest_batches));
  }
  if (o.background) {
    std::printf(
        "  background modeling on: foreground %.1f%% of pixels, %.1f%% tested individually "
        "(medians)\n",
        100 * median(s.foreground), 100 * median(s.tested));
  }
  if (!s.stages.empty()) {
    print_stages(s.stages, s.engine_name == "cpu" ? "CpuPairProcessor beside the engine"
                                                  : "outside the graph");
  }
}

}  // namespace

int run_speed(const CommonOptions& common, const SpeedOptions& options) {
  // With --scene: its images, size and range.
  SpeedOptions o = options;
  std::optional<Scene> scene;
  if (!o.scene.empty()) {
    scene = load_scene_option("speed", o.scene);
    if (!scene) return 2;
    o.width = scene->left.width();
    o.height = scene->left.height();
    o.max_disparity = scene->files.max_disparity;
  }
  const PairParams params = speed_params(common, o);
  const bool cuda = common.engine != "cpu" && cuda_engine_available();
  const bool pinned = cuda && !o.pageable;
  int warmup = o.warmup;
  if (o.background)
    warmup = std::max(o.warmup, params.background.warmup + 10);  // the model at work
  Source src = make_source(o, pinned, warmup + o.frames - 1, scene ? &*scene : nullptr);

  std::shared_ptr<EngineGroup> group = o.batch ? make_engine_group() : nullptr;
  std::vector<std::unique_ptr<Engine>> engines;
  for (int k = 0; k < o.pairs; ++k) {
    engines.push_back(open_engine(common, o.width, o.height, params, o.latency ? 1 : o.inflight,
                                  group, false, o.busy_poll, o.watch_ends));
  }
  Runner runner(o, engines, src);
  runner.set_warmup(warmup);
  const Run run = o.latency ? runner.latency() : runner.throughput();
  auto stages = o.profile
                    ? profile_stages(common, params, *engines.front(), runner, src, o.color_only)
                    : std::vector<std::pair<std::string, double>>{};
  if (!o.timeline.empty()) write_timeline(o.timeline, run);

  Summary summary = summarise(o, run, *engines.front());
  summary.pinned = pinned;
  summary.stages = std::move(stages);
  if (common.json) {
    std::cout << speed_json(o, run, summary).dump() << "\n";
    return 0;
  }
  print_speed(o, run, summary);
  return 0;
}

}  // namespace stereod::bench
