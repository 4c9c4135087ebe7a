// The CUDA engine against the CPU reference, bit for bit: stage by stage on one frame, on every
// Middlebury scene, on random images over sizes, ranges and levels, with background modeling on
// a synthetic sequence (model state included), several pairs at once, a long run through the slot
// ring, and errors that must be reported. Every test skips itself where there is no usable GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "background/background_ops.hpp"
#include "cpu_pair_processor.hpp"
#include "cuda_check.hpp"
#include "cuda_device.hpp"
#include "cuda_engine.hpp"
#include "disparity_io.hpp"
#include "engine.hpp"
#include "middlebury.hpp"
#include "plane_scenes.hpp"
#include "synthetic/synthetic_scene.hpp"
#include "trinocular/trinocular_engine.hpp"
#include "yuv_encode.hpp"

using namespace stereod;
using namespace std::chrono_literals;

namespace {

bool gpu_present() {
  static const bool present = [] {
    std::string why;
    const bool ok = cuda_engine_available(&why);
    if (!ok) std::printf("[ GPU      ] none usable: %s\n", why.c_str());
    return ok;
  }();
  return present;
}

#define REQUIRE_GPU()                        \
  if (!gpu_present()) {                      \
    GTEST_SKIP() << "no usable CUDA device"; \
  }

// The Middlebury scenes: STEREOD_DATA, else ../shared/data beside the checkout, else the scenes
// bundled in tests/data (always there, so the test never skips for want of data).
std::string data_dir() {
  const char* env = std::getenv("STEREOD_DATA");
  if (env && *env) return env;
  if (std::filesystem::is_directory(STEREOD_SHARED_DATA)) return STEREOD_SHARED_DATA;
  return STEREOD_TEST_DATA;
}

// First difference between two images of the same size, as "x,y: cpu A gpu B (N pixels differ)".
template <typename A, typename B>
std::string first_difference(const A* cpu, const B* gpu, int w, int h) {
  long long differ = 0;
  std::string first;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const std::size_t i = static_cast<std::size_t>(y) * w + x;
      if (static_cast<long long>(cpu[i]) == static_cast<long long>(gpu[i])) continue;
      if (differ++ == 0) {
        std::ostringstream o;
        o << x << "," << y << ": cpu " << static_cast<long long>(cpu[i]) << " gpu "
          << static_cast<long long>(gpu[i]);
        first = o.str();
      }
    }
  }
  return differ ? first + " (" + std::to_string(differ) + " pixels differ)" : "";
}

struct RunResult {
  Disparity16 left, right;
  Gray8 foreground;
  bool background_active = false;
  double tested_fraction = 0;
};

RunResult collect(const EngineResult& r) {
  RunResult out;
  out.left.resize(r.disparity.width, r.disparity.height);
  copy_into(r.disparity, out.left);
  out.right.resize(r.right_disparity.width, r.right_disparity.height);
  copy_into(r.right_disparity, out.right);
  out.foreground.resize(r.foreground.width, r.foreground.height);
  copy_into(r.foreground, out.foreground);
  out.background_active = r.background_active;
  out.tested_fraction = r.tested_fraction;
  return out;
}

RunResult run_gpu(Engine& engine, const FrameInput& in) {
  while (engine.submit(in) == SubmitStatus::kBusy) {
    ADD_FAILURE() << "engine busy with nothing in flight";
    return {};
  }
  auto r = engine.poll(60s);
  if (!r) {
    ADD_FAILURE() << "no result within 60 s";
    return {};
  }
  EXPECT_TRUE(r->ok) << r->error;
  EXPECT_EQ(r->sequence, in.sequence);
  return collect(*r);
}

// Both views' maps are returned, so both are compared.
EngineOptions options_for(int w, int h, const StereoParams& sp, const BackgroundParams& bp) {
  EngineOptions o;
  o.width = w;
  o.height = h;
  o.stereo = sp;
  o.background = bp;
  o.right_output = true;
  return o;
}

// STEREOD_CUDA_SHARED_FINEST set for the engines configured while it lives ("1": the finest level
// shared by both views, off by default; "0": each view on its own), unset again at its end.
class SharedFinest {
 public:
  explicit SharedFinest(const char* mode) { setenv("STEREOD_CUDA_SHARED_FINEST", mode, 1); }
  ~SharedFinest() { unsetenv("STEREOD_CUDA_SHARED_FINEST"); }
  SharedFinest(const SharedFinest&) = delete;
  SharedFinest& operator=(const SharedFinest&) = delete;
};

BackgroundParams background_off() {
  BackgroundParams b;
  b.enabled = false;
  return b;
}

// Runs one frame through both engines and compares everything the result carries.
void expect_same_frame(const std::string& what, CpuPairProcessor& cpu, Engine& gpu,
                       const FrameInput& in) {
  PairOutput ref;
  PairFrame pf{in.left, in.right, in.left_color, in.right_color};
  cpu.process(pf, ref);
  const RunResult got = run_gpu(gpu, in);
  const int w = in.left.width, h = in.left.height;
  ASSERT_EQ(got.left.width(), w) << what;
  EXPECT_EQ(first_difference(ref.stereo.left.data(), got.left.data(), w, h), "")
      << what << " (left)";
  EXPECT_EQ(first_difference(ref.stereo.right.data(), got.right.data(), w, h), "")
      << what << " (right)";
  EXPECT_EQ(first_difference(ref.foreground.data(), got.foreground.data(), w, h), "")
      << what << " (mask)";
  EXPECT_EQ(ref.background_active, got.background_active) << what;
  if (ref.background_active) {
    EXPECT_DOUBLE_EQ(ref.tested_fraction, got.tested_fraction) << what;
  }
}

// The background model's state (mean and variance of every level, camera and channel the model
// keeps) of the CUDA engine against the CPU pair processor's.
void expect_same_model(const std::string& what, CpuPairProcessor& cpu, Engine& gpu,
                       const StereoParams& sp, bool color) {
  for (int cam = 0; cam < 2; ++cam) {
    const BackgroundModel& model = cam == 0 ? cpu.left_model() : cpu.right_model();
    for (int s = 0; s < effective_levels(sp); ++s) {
      for (int ch = 0; ch < 3; ++ch) {
        if (!color && ch != kValue) continue;
        const CudaModelState st = cuda_engine_model_state(gpu, cam, s, ch);
        const std::string where = what + " camera " + std::to_string(cam) + " level " +
                                  std::to_string(s) + " channel " + std::to_string(ch);
        ASSERT_EQ(model.mean(s, ch), st.mean) << "mean, " << where;
        ASSERT_EQ(model.variance(s, ch), st.variance) << "variance, " << where;
      }
    }
  }
}

FrameInput frame_of(const Gray8& l, const Gray8& r, std::uint64_t seq = 0) {
  FrameInput in;
  in.sequence = seq;
  in.left = l.view();
  in.right = r.view();
  return in;
}

// The synthetic video's options for a w x h rig with disparities below d.
SyntheticOptions scene_options(int w, int h, int d, std::uint32_t seed) {
  SyntheticOptions so;
  so.width = w;
  so.height = h;
  so.max_disparity = d;
  so.seed = seed;
  return so;
}

// The sequence's frame i as a frame input, gray and color.
FrameInput color_frame(const SyntheticFrame& f, int i) {
  FrameInput in = frame_of(f.left_gray, f.right_gray, static_cast<std::uint64_t>(i));
  in.left_color = view_of(f.left);
  in.right_color = view_of(f.right);
  return in;
}

// A random stereo pair: random textured planes at random depths (a plausible scene), or, when
// `noise`, two unrelated noise images (the hardest case for the coarse-to-fine ranges).
SyntheticPair random_pair(int w, int h, int max_disparity, std::uint32_t seed, bool noise) {
  if (noise) {
    SyntheticPair p;
    p.left = random_image(w, h, seed);
    p.right = random_image(w, h, seed + 1);
    return p;
  }
  std::mt19937 rng(seed);
  std::vector<PlaneLayer> layers(1);
  layers[0].disparity =
      static_cast<int>(rng() % static_cast<unsigned>(std::max(1, max_disparity / 3)));
  layers[0].seed = rng();
  const int objects = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < objects; ++i) {
    PlaneLayer l;
    l.x0 = static_cast<int>(rng() % static_cast<unsigned>(w));
    l.y0 = static_cast<int>(rng() % static_cast<unsigned>(h));
    l.x1 = l.x0 + 1 + static_cast<int>(rng() % static_cast<unsigned>(std::max(2, w / 2)));
    l.y1 = l.y0 + 1 + static_cast<int>(rng() % static_cast<unsigned>(std::max(2, h / 2)));
    l.disparity = static_cast<int>(rng() % static_cast<unsigned>(std::max(1, max_disparity - 1)));
    l.rows_per_step = rng() % 3 == 0 ? 8 + static_cast<int>(rng() % 16) : 0;
    l.seed = rng();
    layers.push_back(l);
  }
  return render_planes(w, h, layers);
}

// One frame through both engines with every output asked for (both maps, the mask, the cost
// ratios, and the confidence when `confidence`), compared bit for bit. The CPU's error frame
// (r.ok false) must be the GPU's too, with the same message.
void expect_same_outputs(const std::string& what, CpuPairProcessor& cpu, Engine& gpu, FrameInput in,
                         bool confidence, int* foreground_pixels = nullptr) {
  in.confidence = confidence;
  const int w = in.left.width, h = in.left.height;
  PairOutput ref;
  PairFrame pf{in.left, in.right, in.left_color, in.right_color};
  pf.cost_ratio_output = true;
  pf.confidence = confidence;
  std::string cpu_error;
  try {
    cpu.process(pf, ref);
  } catch (const std::exception& e) {
    cpu_error = e.what();
  }
  if (foreground_pixels) {
    *foreground_pixels = static_cast<int>(std::count_if(ref.foreground.pixels().begin(),
                                                        ref.foreground.pixels().end(),
                                                        [](std::uint8_t v) { return v != 0; }));
  }
  ASSERT_EQ(gpu.submit(in), SubmitStatus::kAccepted) << what;
  auto r = gpu.poll(60s);
  ASSERT_TRUE(r) << what;
  EXPECT_EQ(cpu_error, r->ok ? std::string() : r->error) << what;
  if (!cpu_error.empty() || !r->ok) return;
  EXPECT_EQ(first_difference(ref.stereo.left.data(), r->disparity.data, w, h), "")
      << what << " (left)";
  EXPECT_EQ(first_difference(ref.stereo.right.data(), r->right_disparity.data, w, h), "")
      << what << " (right)";
  EXPECT_EQ(first_difference(ref.foreground.data(), r->foreground.data, w, h), "")
      << what << " (mask)";
  EXPECT_EQ(first_difference(ref.stereo.cost_ratio.data(), r->cost_ratio.data, w, h), "")
      << what << " (cost ratio)";
  if (confidence) {
    ASSERT_EQ(r->confidence.width, w) << what;
    EXPECT_EQ(first_difference(ref.stereo.confidence.data(), r->confidence.data, w, h), "")
        << what << " (confidence)";
  }
}

EngineOptions sgm_options(int w, int h, const StereoParams& sp, const BackgroundParams& bp) {
  EngineOptions o = options_for(w, h, sp, bp);
  o.cost_ratio_output = true;
  return o;
}

// A random case's background parameters: the model on with a short warm-up (`modeling`), else
// off.
BackgroundParams case_background(bool modeling, bool color) {
  if (!modeling) return background_off();
  BackgroundParams bp;
  bp.warmup = 2;
  bp.color = color;
  return bp;
}

// Whether both engines take a random case (the others are skipped: too many levels for the size,
// say, which both refuse, is tested elsewhere).
bool case_runs(const StereoParams& sp, int w, int h) {
  if (!check_params(sp).empty()) return false;
  try {
    validate_for_images(sp, w, h, w, h);
  } catch (const ParameterError&) {
    return false;
  }
  return true;
}

// One random case through both engines, every output compared: with `modeling` five frames of a
// synthetic sequence (frames past the warm-up match only the foreground: masks on both sides),
// else one random pair. `seed` seeds the sequence or the pair.
void expect_same_random_case(const std::string& what, const StereoParams& sp,
                             const BackgroundParams& bp, int w, int h, bool noise, bool confidence,
                             std::uint32_t seed) {
  CpuPairProcessor cpu(sp, bp);
  auto gpu = make_engine("cuda", sgm_options(w, h, sp, bp));
  if (bp.enabled) {
    SyntheticScene scene(scene_options(w, h, sp.max_disparity, seed));
    SyntheticFrame f;
    for (int i = 0; i < 5; ++i) {
      scene.render(i, f);
      expect_same_outputs(what + " frame " + std::to_string(i), cpu, *gpu, color_frame(f, i),
                          confidence);
      if (::testing::Test::HasFailure()) return;
    }
  } else {
    const auto p = random_pair(w, h, sp.max_disparity, seed, noise);
    expect_same_outputs(what, cpu, *gpu, frame_of(p.left, p.right), confidence);
  }
}

// The draws of a random-case test, one generator in the order the test makes them: which cases
// a test covers depends on that order, so each test keeps its own and shares only what follows.
struct CaseDraws {
  std::mt19937 rng;
  int pick(int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); }
};

// One random case as drawn: size, parameters, the background model's, noise and confidence, and
// its description after "case N: WxH D=.. L=.. ".
struct RandomCase {
  int w = 0, h = 0;
  StereoParams sp;
  BackgroundParams bp = background_off();
  bool modeling = false, confidence = false, noise = false;
  std::ostringstream detail;
};

// The case's size, drawn from `sizes` ({w, h} each).
template <std::size_t N>
void draw_size(CaseDraws& d, RandomCase& rc, const int (&sizes)[N][2]) {
  const int* size = sizes[d.pick(static_cast<int>(N))];
  rc.w = size[0], rc.h = size[1];
}

// The case's search range: one of the random-case tests' ranges, below the width.
void draw_range(CaseDraws& d, RandomCase& rc) {
  static const int kRanges[] = {8, 15, 16, 32, 48, 64, 128};
  rc.sp.max_disparity = std::min(kRanges[d.pick(7)], rc.w - 1);
}

// The cross arms' thresholds and lengths over their ranges; with `short_or_long`, a first draw
// picks arms of at most 40 or up to kMaxCrossArm.
void draw_arms(CaseDraws& d, StereoParams& sp, bool short_or_long) {
  sp.cross_tau1 = 1 + d.pick(60);
  sp.cross_tau2 = d.pick(sp.cross_tau1 + 1);
  sp.cross_l1 = 1 + d.pick(short_or_long && d.pick(2) ? 40 : kMaxCrossArm);
  sp.cross_l2 = d.pick(sp.cross_l1 + 1);
}

// The last draws of every case: the background model's masks on a third of the cases that can
// have them (a short synthetic video needs a width of 160, a few disparities beyond its
// background's and, with `half_width`, fewer than half the width), confidence on half, and where
// `noise_drawn` noise on a quarter of the rest; the model in colour on half of its cases.
void draw_case_end(CaseDraws& d, RandomCase& rc, bool half_width, bool noise_drawn) {
  rc.modeling = d.pick(3) == 0 && rc.w >= 160 && rc.sp.max_disparity >= 32 &&
                (!half_width || 2 * rc.sp.max_disparity < rc.w);
  rc.confidence = d.pick(2) != 0;
  rc.noise = noise_drawn && !rc.modeling && d.pick(4) == 0;
  rc.bp = case_background(rc.modeling, rc.modeling && d.pick(2) != 0);
}

// `cases` random cases (generator seeded with `seed`) against the CPU engine, every output:
// draw(c, draws, rc) draws case c; those both engines take (case_runs) are compared. Returns how
// many were, or -1 after the first that differed.
template <typename Draw>
int compare_random_cases(std::uint32_t seed, int cases, const Draw& draw) {
  CaseDraws d{std::mt19937(seed)};
  int compared = 0;
  for (int c = 0; c < cases; ++c) {
    RandomCase rc;
    draw(c, d, rc);
    if (!case_runs(rc.sp, rc.w, rc.h)) continue;
    const std::string what = "case " + std::to_string(c) + ": " + std::to_string(rc.w) + "x" +
                             std::to_string(rc.h) + " D=" + std::to_string(rc.sp.max_disparity) +
                             " L=" + std::to_string(rc.sp.levels) + " " + rc.detail.str() +
                             (rc.modeling ? " masks" : "") + (rc.noise ? " noise" : "");
    expect_same_random_case(what, rc.sp, rc.bp, rc.w, rc.h, rc.noise, rc.confidence, d.rng());
    if (::testing::Test::HasFailure()) return -1;
    ++compared;
  }
  return compared;
}

// Calls fn(files, scene) for each of the four v2 scenes found under data_dir() (the slower modes'
// scene tests keep to them for the CPU side's time); returns how many there were.
template <typename Fn>
int for_each_v2_scene(const Fn& fn) {
  int found = 0;
  for (const auto& files : find_scenes(data_dir())) {
    const std::string& n = files.name;
    if (n != "tsukuba" && n != "venus" && n != "teddy" && n != "cones") continue;
    ++found;
    fn(files, load_scene(files));
  }
  return found;
}

}  // namespace

TEST(Gpu, DeviceSummaryNamesTheDevice) {
  REQUIRE_GPU();
  const std::string summary = cuda_device_summary(0);
  std::printf("[ GPU      ] %s\n", summary.c_str());
  EXPECT_NE(summary.find("sm_"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("no device"), std::string::npos) << summary;
}

// One frame, compared stage by stage, so a mismatch names the first stage that differs.
TEST(Gpu, StagesMatchCpu) {
  REQUIRE_GPU();
  for (MatchingCost cost :
       {MatchingCost::kAdCensus, MatchingCost::kCensus, MatchingCost::kAbsDiff}) {
    StereoParams sp;
    sp.max_disparity = 64;
    sp.cost = cost;
    const auto pair = random_pair(333, 257, 64, 5, false);
    CpuStereoMatcher cpu(sp);
    StereoInput in;
    in.left = pair.left.view();
    in.right = pair.right.view();
    StereoOutput out;
    cpu.compute(in, out);
    auto gpu = make_engine("cuda", options_for(333, 257, sp, background_off()));
    run_gpu(*gpu, frame_of(pair.left, pair.right));
    const CudaStages st = cuda_engine_stages(*gpu);
    const std::string c(to_string(cost));
    for (int s = 0; s < out.levels_used; ++s) {
      for (int i = 0; i < 2; ++i) {
        const int w = level_side(333, s), h = level_side(257, s);
        if (s > 0) {
          ASSERT_EQ(first_difference(cpu.level_gray(s, i).data(), st.gray[i][s].data(), w, h), "")
              << c << " gray level " << s << " image " << i;
        }
        if (!st.census[i][s].empty()) {
          ASSERT_EQ(first_difference(cpu.level_census(s, i).data(), st.census[i][s].data(), w, h),
                    "")
              << c << " census level " << s << " image " << i;
        }
      }
    }
    for (int s = out.levels_used - 1; s >= 0; --s) {
      for (int i = 0; i < 2; ++i) {
        const int w = level_side(333, s), h = level_side(257, s);
        ASSERT_EQ(
            first_difference(cpu.level_disparity(s, i).data(), st.disparity[i][s].data(), w, h), "")
            << c << " winners at level " << s << " view " << i;
      }
    }
    EXPECT_EQ(
        first_difference(out.left.data(),
                         run_gpu(*gpu, frame_of(pair.left, pair.right)).left.data(), 333, 257),
        "")
        << c << " output";
  }
}

// The bundled scenes, each view on its own (the default) and with the finest level shared.
TEST(Gpu, MiddleburyScenesBitExact) {
  REQUIRE_GPU();
  const auto scenes = find_scenes(data_dir());
  ASSERT_FALSE(scenes.empty());
  for (const auto& files : scenes) {
    const Scene scene = load_scene(files);
    StereoParams sp;
    sp.max_disparity = files.max_disparity;
    sp.fill = true;
    CpuPairProcessor cpu(sp, background_off());
    for (const char* shared : {"0", "1"}) {
      const SharedFinest mode(shared);
      auto gpu = make_engine(
          "cuda", options_for(scene.left.width(), scene.left.height(), sp, background_off()));
      expect_same_frame(files.name + " shared finest " + shared, cpu, *gpu,
                        frame_of(scene.left, scene.right));
    }
  }
}

// The bundled scenes (tests/data) in the semi-global modes: the default (pixel cost, 4 paths) and
// the window cost over 8 paths, every output.
TEST(Gpu, MiddleburyScenesSemiGlobalBitExact) {
  REQUIRE_GPU();
  const auto scenes = find_scenes(data_dir());
  ASSERT_FALSE(scenes.empty());
  for (const auto& files : scenes) {
    const Scene scene = load_scene(files);
    for (int mode = 0; mode < 2; ++mode) {
      StereoParams sp;
      sp.max_disparity = files.max_disparity;
      sp.fill = true;
      sp.aggregation = Aggregation::kSgm;
      if (mode == 1) {
        sp.sgm_cost = SgmCost::kWindow;
        sp.sgm_paths = 8;
        sp.sgm_p1 = 4;
        sp.sgm_p2 = 32;
      }
      CpuPairProcessor cpu(sp, background_off());
      auto gpu = make_engine(
          "cuda", sgm_options(scene.left.width(), scene.left.height(), sp, background_off()));
      expect_same_outputs(files.name + (mode ? " sgm window cost" : " sgm"), cpu, *gpu,
                          frame_of(scene.left, scene.right), true);
    }
  }
}

TEST(Gpu, RandomImagesOverSizesRangesAndLevels) {
  REQUIRE_GPU();
  struct Case {
    int w, h;
    std::vector<int> ranges;
  };
  // Every size with D = 64 (where it fits), every range at the middle sizes, the largest ranges
  // at the largest sizes; each with L = 1..5.
  const Case cases[] = {
      {16, 16, {1, 8, 15}},
      {17, 31, {1, 16}},
      {333, 257, {16, 64, 128, 256}},
      {640, 480, {16, 64, 128, 256}},
      {1024, 768, {16, 64, 128, 256, 512}},
      {1920, 1080, {64, 128, 256, 512}},
      {4096, 2160, {64, 256, 512}},
  };
  struct Job {
    int w = 0, h = 0;
    StereoParams sp;
    bool noise = false;
    std::uint32_t seed = 0;
    std::string what;
  };
  std::vector<Job> jobs;
  std::uint32_t seed = 100;
  for (const auto& c : cases) {
    for (int d : c.ranges) {
      for (int levels = 1; levels <= 5; ++levels) {
        for (bool noise : {false, true}) {
          if (noise && c.w * c.h > 640 * 480)
            continue;  // CPU time; noise is covered at the smaller sizes
          Job j;
          j.w = c.w;
          j.h = c.h;
          j.sp.max_disparity = d;
          j.sp.levels = levels;
          j.noise = noise;
          j.seed = ++seed;
          j.what = std::to_string(c.w) + "x" + std::to_string(c.h) + " D=" + std::to_string(d) +
                   " L=" + std::to_string(levels) + (noise ? " noise" : " planes");
          jobs.push_back(j);
        }
      }
    }
  }
  // The CPU side is the slow one. Small jobs run in parallel, one thread each, a chunk at a time;
  // the big ones (full-resolution searches of large images) one after the other on every core.
  struct Reference {
    std::string error;
    SyntheticPair pair;
    PairOutput out;
  };
  auto reference = [](const Job& job, unsigned threads) {
    Reference r;
    try {
      validate_for_images(job.sp, job.w, job.h, job.w, job.h);
    } catch (const ParameterError& e) {
      r.error = e.what();
      return r;
    }
    r.pair = random_pair(job.w, job.h, job.sp.max_disparity, job.seed, job.noise);
    CpuPairProcessor cpu(job.sp, background_off(), threads);
    cpu.process(PairFrame{r.pair.left.view(), r.pair.right.view(), {}, {}}, r.out);
    return r;
  };
  auto cost = [](const Job& j) {
    return double(j.w) * j.h * j.sp.max_disparity / std::pow(4.0, j.sp.levels - 1);
  };
  std::vector<const Job*> small, big;
  for (const Job& j : jobs) (cost(j) > 2e8 ? big : small).push_back(&j);
  // Each job through the default engine and, with more than one level, again with the finest
  // level shared by both views (off by default): the CPU side, the slow one, is taken once.
  int compared = 0, rejected = 0;
  auto compare_one = [&](const Job& job, const Reference& ref, const char* shared) {
    const SharedFinest mode(shared);
    const std::string what = job.what + " shared finest " + shared;
    std::unique_ptr<Engine> gpu;
    std::string gpu_error;
    try {
      gpu = make_engine("cuda", options_for(job.w, job.h, job.sp, background_off()));
    } catch (const ParameterError& e) {
      gpu_error = e.what();
    }
    EXPECT_EQ(ref.error, gpu_error) << what;
    if (!ref.error.empty()) {
      ++rejected;
      return;
    }
    ASSERT_TRUE(gpu) << what;
    const RunResult got = run_gpu(*gpu, frame_of(ref.pair.left, ref.pair.right));
    EXPECT_EQ(first_difference(ref.out.stereo.left.data(), got.left.data(), job.w, job.h), "")
        << what << " (left)";
    EXPECT_EQ(first_difference(ref.out.stereo.right.data(), got.right.data(), job.w, job.h), "")
        << what << " (right)";
    ++compared;
  };
  auto compare = [&](const Job& job, const Reference& ref) {
    compare_one(job, ref, "0");
    if (job.sp.levels >= 2) compare_one(job, ref, "1");
  };
  const std::size_t workers = std::max(2u, std::thread::hardware_concurrency());
  for (std::size_t first = 0; first < small.size(); first += workers) {
    const std::size_t last = std::min(small.size(), first + workers);
    std::vector<std::future<Reference>> refs;
    for (std::size_t k = first; k < last; ++k)
      refs.push_back(std::async(std::launch::async, reference, std::cref(*small[k]), 1u));
    for (std::size_t k = first; k < last; ++k) {
      compare(*small[k], refs[k - first].get());
      if (HasFailure()) return;
    }
  }
  for (const Job* job : big) {
    compare(*job, reference(*job, 0));
    if (HasFailure()) return;
  }
  std::printf("[ GPU      ] %d configurations bit-exact, %d rejected by both engines\n", compared,
              rejected);
}

// Background modeling on a synthetic video: frame by frame for 100 frames, model state included.
class GpuBackground : public ::testing::TestWithParam<int> {};  // 0: color, 1: intensity, 2: off

TEST_P(GpuBackground, SyntheticSequenceFrameByFrame) {
  REQUIRE_GPU();
  SyntheticScene scene(scene_options(320, 240, 48, 3));
  StereoParams sp;
  sp.max_disparity = 48;
  BackgroundParams bp;
  bp.warmup = 10;
  bp.color = GetParam() == 0;
  bp.enabled = GetParam() != 2;
  CpuPairProcessor cpu(sp, bp);
  auto gpu = make_engine("cuda", options_for(320, 240, sp, bp));
  SyntheticFrame f;
  for (int i = 0; i < 100; ++i) {
    scene.render(i, f);
    expect_same_frame("frame " + std::to_string(i), cpu, *gpu, color_frame(f, i));
    if (HasFailure()) return;
    if (bp.enabled && (i % 10 == 9)) {
      expect_same_model("frame " + std::to_string(i), cpu, *gpu, sp, bp.color);
      if (HasFailure()) return;
    }
  }
}

// The right camera's matching mask widened by background.target_margin (widen_kernel against
// dilate_mask): none, a small margin, and the largest (the kernel's whole halo), frame by frame.
TEST(Gpu, TargetMarginEqualsCpu) {
  REQUIRE_GPU();
  SyntheticScene scene(scene_options(320, 240, 48, 3));
  StereoParams sp;
  sp.max_disparity = 48;
  for (const int margin : {0, 3, kMaxTargetMargin}) {
    BackgroundParams bp;
    bp.warmup = 10;
    bp.target_margin = margin;
    CpuPairProcessor cpu(sp, bp);
    auto gpu = make_engine("cuda", options_for(320, 240, sp, bp));
    SyntheticFrame f;
    for (int i = 0; i < 40; ++i) {
      scene.render(i, f);
      expect_same_frame("margin " + std::to_string(margin) + " frame " + std::to_string(i), cpu,
                        *gpu, color_frame(f, i));
      if (HasFailure()) return;
    }
  }
}

// The finest level's aggregations shared by both views (cuda/kernels/shared_finest.cuh; off by
// default) and the per-view finest level, with and without the background model's masks (a
// candidate whose partner the left mask calls background is refused), with and without a target
// margin (STEREOD_CUDA_SHARED_FINEST, read when a pair is configured), frame by frame.
TEST(Gpu, SharedAndPerViewFinestLevelEqualCpu) {
  REQUIRE_GPU();
  SyntheticScene scene(scene_options(320, 240, 48, 3));
  StereoParams sp;
  sp.max_disparity = 48;
  for (const char* mode : {"1", "0"}) {
    const SharedFinest shared(mode);
    for (const int margin : {-1, 0, 2}) {  // -1: the model off
      BackgroundParams bp;
      bp.warmup = 10;
      bp.enabled = margin >= 0;
      bp.target_margin = std::max(margin, 0);
      CpuPairProcessor cpu(sp, bp);
      auto gpu = make_engine("cuda", options_for(320, 240, sp, bp));
      SyntheticFrame f;
      for (int i = 0; i < 30; ++i) {
        scene.render(i, f);
        expect_same_frame(std::string("STEREOD_CUDA_SHARED_FINEST=") + mode + " margin " +
                              std::to_string(margin) + " frame " + std::to_string(i),
                          cpu, *gpu, color_frame(f, i));
        if (HasFailure()) return;
      }
      // The path asked for is the one that ran: every batch shared, or none did.
      const CudaBatchStats st = cuda_engine_batch_stats(*gpu);
      EXPECT_GT(st.batches, 0u);
      EXPECT_EQ(st.shared_finest_batches, std::string(mode) == "1" ? st.batches : 0u)
          << "STEREOD_CUDA_SHARED_FINEST=" << mode << " margin " << margin;
    }
  }
}

// The fused model kernel (classification, closing and learning of a tile and its halo) away from
// the defaults: every closing radius, the hierarchy off, no shadow test, quick absorption, the
// intensity model, a low threshold (much foreground, so many halo pixels are tested), on an odd
// size whose levels end in partial tiles; masks frame by frame, the model state at the end.
TEST(Gpu, BackgroundVariantsEqualCpu) {
  REQUIRE_GPU();
  constexpr int kW = 333, kH = 257;
  SyntheticScene scene(scene_options(kW, kH, 64, 11));
  StereoParams sp;
  sp.max_disparity = 64;
  std::vector<BackgroundParams> variants(6);
  for (auto& bp : variants) bp.warmup = 5;
  variants[0].closing_radius = 0;
  variants[1].closing_radius = 2, variants[1].hierarchy = false;
  variants[2].closing_radius = 3, variants[2].shadow = false, variants[2].absorb_frames = 5;
  variants[3].color = false, variants[3].closing_radius = 3, variants[3].target_margin = 2;
  variants[4].closing_radius = 2, variants[4].threshold = 1.5, variants[4].min_sigma = 3;
  // Issue 13's support-based absorption (absorbs often: the halo race showed with it).
  variants[5].support_absorption = true, variants[5].absorb_frames = 8;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const BackgroundParams& bp = variants[v];
    CpuPairProcessor cpu(sp, bp);
    auto gpu = make_engine("cuda", options_for(kW, kH, sp, bp));
    SyntheticFrame f;
    for (int i = 0; i < 25; ++i) {
      scene.render(i, f);
      expect_same_frame("variant " + std::to_string(v) + " frame " + std::to_string(i), cpu, *gpu,
                        color_frame(f, i));
      if (HasFailure()) return;
    }
    expect_same_model("variant " + std::to_string(v), cpu, *gpu, sp, bp.color);
    if (HasFailure()) return;
  }
}

// A tile classifies its halo from the neighbouring tiles' models, which those tiles' blocks
// update in the same kernel. The CPU classifies every pixel before any learns; the GPU must read
// the models as they were before the frame, whichever tile runs first. Small images run every
// tile at once, so the tests above could not see it: here a 1280x720 frame has ten times more
// tiles than the GPU holds at a time, the warm-up's fast learning (and noise, flicker, a low
// threshold) moves many models across the threshold within one frame, and quick absorption does
// it after the warm-up (also with issue 13's support-based absorption, which absorbs more
// often). The model state is compared after the warm-up and at the end, the masks frame by
// frame.
TEST(Gpu, HaloClassifiedFromTheModelBeforeLearning) {
  REQUIRE_GPU();
  constexpr int kW = 1280, kH = 720;
  SyntheticOptions so = scene_options(kW, kH, 64, 29);
  so.objects = 6;
  so.noise_sigma = 6.0;
  so.flicker = 0.05;
  so.stop_frames = 6;
  so.speed = 4.0;
  SyntheticScene scene(so);
  StereoParams sp;
  sp.max_disparity = 64;
  for (const int mode_index : {0, 1, 2}) {
    const bool color = mode_index != 1;
    BackgroundParams bp;
    bp.color = color;
    bp.support_absorption = mode_index == 2;
    bp.warmup = 6;
    bp.threshold = 1.5;
    bp.min_sigma = 2;
    bp.closing_radius = 2;
    bp.absorb_frames = 3;
    CpuPairProcessor cpu(sp, bp);
    auto gpu = make_engine("cuda", options_for(kW, kH, sp, bp));
    SyntheticFrame f;
    const std::string mode = mode_index == 2 ? "support absorption" : color ? "color" : "intensity";
    for (int i = 0; i < 16; ++i) {
      scene.render(i, f);
      expect_same_frame(mode + " frame " + std::to_string(i), cpu, *gpu, color_frame(f, i));
      if (HasFailure()) return;
      if (i != bp.warmup && i != 15) continue;
      expect_same_model(mode + " frame " + std::to_string(i), cpu, *gpu, sp, color);
      if (HasFailure()) return;
    }
  }
}

// Frames without foreground skip matching behind the batch graph's gate (batch_graph.hpp) and
// get the outputs those stages would give. A static scene (no objects, no noise) with a textured
// box painted in on some frames: after warm-up the empty frames have no foreground at all, and
// the same slot carries a frame with disparities just before, so outputs the skip failed to
// write would show the earlier frame's. Every output is compared with the CPU, for the window
// and the semi-global matchers, with and without filling and the confidence.
TEST(Gpu, FramesWithoutForegroundEqualCpu) {
  REQUIRE_GPU();
  constexpr int kW = 320, kH = 240, kD = 48;
  SyntheticOptions so = scene_options(kW, kH, kD, 7);
  so.objects = 0;
  so.noise_sigma = 0;
  so.flicker = 0;
  so.shadow = false;
  SyntheticScene scene(so);
  SyntheticFrame still;
  scene.render(0, still);
  // The box at (x, y), disparity d: the same texture in both views, d apart.
  auto with_box = [&](int x, int y, int d) {
    SyntheticFrame f = still;
    for (int r = 0; r < 48; ++r) {
      for (int c = 0; c < 64; ++c) {
        const std::uint8_t v = static_cast<std::uint8_t>((c * 37 + r * 91 + (c * r) % 53) * 7);
        for (int view = 0; view < 2; ++view) {
          const int px = x + c - (view == 1 ? d : 0);
          RgbImage& rgb = view == 0 ? f.left : f.right;
          Gray8& gray = view == 0 ? f.left_gray : f.right_gray;
          std::uint8_t* p = rgb.row(y + r) + 3 * px;
          p[0] = v;
          p[1] = static_cast<std::uint8_t>(255 - v);
          p[2] = static_cast<std::uint8_t>(v / 2);
          gray(px, y + r) = static_cast<std::uint8_t>((p[0] * 77 + p[1] * 150 + p[2] * 29) >> 8);
        }
      }
    }
    return f;
  };
  const std::vector<int> boxes = {5, 6, 10, 14};  // frames with the box; the others are empty
  for (int variant = 0; variant < 3; ++variant) {
    StereoParams sp;
    sp.max_disparity = kD;
    sp.fill = variant == 1;
    if (variant == 2) sp.aggregation = Aggregation::kSgm;
    BackgroundParams bp;
    bp.warmup = 3;
    bp.absorb_frames = kMaxAbsorbFrames;  // the box must stay foreground when it comes back
    CpuPairProcessor cpu(sp, bp);
    auto gpu = make_engine("cuda", sgm_options(kW, kH, sp, bp));
    int empty = 0;
    for (int i = 0; i < 18; ++i) {
      const bool box = std::find(boxes.begin(), boxes.end(), i) != boxes.end();
      const SyntheticFrame f = box ? with_box(60 + 9 * i, 90, 20 + i) : still;
      int foreground = 0;
      expect_same_outputs("variant " + std::to_string(variant) + " frame " + std::to_string(i), cpu,
                          *gpu, color_frame(f, i), variant != 1, &foreground);
      if (HasFailure()) return;
      if (box) {
        EXPECT_GT(foreground, 0) << "frame " << i << ": the box is not foreground";
      }
      empty += foreground == 0;
    }
    EXPECT_GE(empty, 8) << "variant " << variant << ": too few frames without foreground";
    const CudaBatchStats st = cuda_engine_batch_stats(*gpu);
    std::printf("[ GPU      ] variant %d: %llu gated, %llu plain batches\n", variant,
                static_cast<unsigned long long>(st.gated_batches),
                static_cast<unsigned long long>(st.plain_batches));
#if CUDART_VERSION >= 12040
    // Gated after empty frames (a box frame right after one runs the gate's stereo branch),
    // plain after frames with foreground.
    EXPECT_GT(st.gated_batches, 0u) << "variant " << variant << ": no gated batch ran";
    EXPECT_GT(st.plain_batches, 0u) << "variant " << variant << ": no plain batch ran";
#endif
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, GpuBackground, ::testing::Values(0, 1, 2), [](const auto& tp) {
  return std::string(tp.param == 0 ? "color" : tp.param == 1 ? "intensity" : "off");
});

TEST(Gpu, SeveralPairsAtOnce) {
  REQUIRE_GPU();
  struct PairSetup {
    int w, h, d;
  };
  const PairSetup setups[] = {{640, 480, 64}, {320, 240, 32}, {1024, 768, 128}, {333, 257, 64}};
  std::vector<std::unique_ptr<Engine>> gpus;
  std::vector<std::unique_ptr<CpuPairProcessor>> cpus;
  std::vector<std::vector<SyntheticPair>> inputs;
  for (const auto& s : setups) {
    StereoParams sp;
    sp.max_disparity = s.d;
    gpus.push_back(make_engine("cuda", options_for(s.w, s.h, sp, background_off())));
    cpus.push_back(std::make_unique<CpuPairProcessor>(sp, background_off()));
    inputs.emplace_back();
    for (int f = 0; f < 3; ++f)
      inputs.back().push_back(random_pair(s.w, s.h, s.d, 700 + f + s.w, false));
  }
  // Submit a frame to every pair before collecting any, so the pairs run at once.
  for (int frame = 0; frame < 3; ++frame) {
    for (std::size_t k = 0; k < gpus.size(); ++k) {
      const auto& p = inputs[k][frame];
      ASSERT_EQ(gpus[k]->submit(frame_of(p.left, p.right, frame)), SubmitStatus::kAccepted);
    }
    for (std::size_t k = 0; k < gpus.size(); ++k) {
      auto r = gpus[k]->poll(60s);
      ASSERT_TRUE(r && r->ok);
      const auto& p = inputs[k][frame];
      PairOutput ref;
      cpus[k]->process(PairFrame{p.left.view(), p.right.view(), {}, {}}, ref);
      const RunResult got = collect(*r);
      EXPECT_EQ(first_difference(ref.stereo.left.data(), got.left.data(), p.left.width(),
                                 p.left.height()),
                "")
          << "pair " << k << " frame " << frame;
    }
  }
}

TEST(Gpu, ThousandFramesThroughTheSlotRing) {
  REQUIRE_GPU();
  StereoParams sp;
  sp.max_disparity = 64;
  EngineOptions o = options_for(640, 480, sp, background_off());
  o.inflight = 3;
  auto gpu = make_engine("cuda", o);
  std::vector<SyntheticPair> inputs;
  for (int i = 0; i < 4; ++i) inputs.push_back(random_pair(640, 480, 64, 900 + i, false));
  // The first frame of each input through the CPU, to check results come back for the right frame.
  std::vector<Disparity16> expected;
  CpuPairProcessor cpu(sp, background_off());
  for (const auto& p : inputs) {
    PairOutput out;
    cpu.process(PairFrame{p.left.view(), p.right.view(), {}, {}}, out);
    expected.push_back(out.stereo.left);
  }
  std::uint64_t submitted = 0, received = 0;
  std::size_t memory_after_first = 0;
  int busy = 0;
  while (received < 1000) {
    // Fill the ring until the engine says busy, then take one result: every slot stays in use.
    while (submitted < 1000) {
      const auto& p = inputs[submitted % inputs.size()];
      if (gpu->submit(frame_of(p.left, p.right, submitted)) != SubmitStatus::kAccepted) {
        ++busy;
        break;
      }
      ++submitted;
    }
    if (auto r = gpu->poll(10ms)) {
      ASSERT_TRUE(r->ok) << r->error;
      ASSERT_EQ(r->sequence, received) << "out of order, lost or duplicated";
      if (received % 97 == 0) {
        const RunResult got = collect(*r);
        ASSERT_EQ(got.left, expected[received % inputs.size()]) << "frame " << received;
      }
      ++received;
      if (received == 1) memory_after_first = cuda_device_memory_used();
    }
  }
  EXPECT_GT(busy, 0) << "the ring never filled: submit never had to report busy";
  EXPECT_EQ(cuda_device_memory_used(), memory_after_first)
      << "device memory changed after the first frame";
  EXPECT_EQ(gpu->in_flight(), 0);
}

// Several pairs of one size, each keeping its frames in flight: once a few batches are on their
// way, a batch waits for the pairs that can join it (batch_policy.hpp). Every pair still gets
// every frame back, in order and right, and the frames went out in shared batches.
TEST(Gpu, PairsKeepingFramesInFlightShareBatches) {
  REQUIRE_GPU();
  constexpr int kPairs = 6, kFrames = 40;
  StereoParams sp;
  sp.max_disparity = 32;
  auto group = make_engine_group();
  std::vector<std::unique_ptr<Engine>> gpus;
  std::vector<std::vector<SyntheticPair>> inputs(kPairs);
  std::vector<std::vector<Disparity16>> expected(kPairs);
  CpuPairProcessor cpu(sp, background_off());
  for (int k = 0; k < kPairs; ++k) {
    EngineOptions o = options_for(320, 240, sp, background_off());
    o.inflight = 4;
    o.group = group;
    gpus.push_back(make_engine("cuda", o));
    for (int i = 0; i < 2; ++i) {
      inputs[k].push_back(random_pair(320, 240, 32, 1300 + 10 * k + i, false));
      PairOutput out;
      cpu.process(PairFrame{inputs[k][i].left.view(), inputs[k][i].right.view(), {}, {}}, out);
      expected[k].push_back(out.stereo.left);
    }
  }
  std::vector<std::uint64_t> submitted(kPairs, 0), received(kPairs, 0);
  // A result of pair k: the next in its order, and right.
  const auto take = [&](int k, const EngineResult& r) -> ::testing::AssertionResult {
    if (!r.ok) return ::testing::AssertionFailure() << "pair " << k << ": " << r.error;
    if (r.sequence != received[k]) {
      return ::testing::AssertionFailure()
             << "pair " << k << ": frame " << r.sequence << " came as " << received[k]
             << " (out of order, lost or duplicated)";
    }
    if (collect(r).left != expected[k][received[k] % 2])
      return ::testing::AssertionFailure() << "pair " << k << " frame " << received[k];
    ++received[k];
    return ::testing::AssertionSuccess();
  };
  const auto start = std::chrono::steady_clock::now();
  auto all_received = [&] {
    for (int k = 0; k < kPairs; ++k)
      if (received[k] < kFrames) return false;
    return true;
  };
  while (!all_received()) {
    ASSERT_LT(std::chrono::steady_clock::now() - start, 60s) << "frames stopped coming back";
    bool progress = false;
    for (int k = 0; k < kPairs; ++k) {
      while (submitted[k] < kFrames) {
        const auto& p = inputs[k][submitted[k] % 2];
        if (gpus[k]->submit(frame_of(p.left, p.right, submitted[k])) != SubmitStatus::kAccepted)
          break;
        ++submitted[k];
        progress = true;
      }
      while (auto r = gpus[k]->poll(std::chrono::nanoseconds(0))) {
        ASSERT_TRUE(take(k, *r));
        progress = true;
      }
    }
    if (!progress) {
      for (int k = 0; k < kPairs; ++k) {
        if (received[k] < submitted[k]) {
          if (auto r = gpus[k]->poll(2ms)) {
            ASSERT_TRUE(take(k, *r));
          }
          break;
        }
      }
    }
  }
  const CudaBatchStats stats = cuda_engine_batch_stats(*gpus.front());
  std::printf("[ GPU      ] %d pairs x %d frames in %llu batches\n", kPairs, kFrames,
              static_cast<unsigned long long>(stats.batches));
  EXPECT_EQ(stats.frames, static_cast<std::uint64_t>(kPairs) * kFrames);
  EXPECT_LT(stats.batches, stats.frames) << "no batch held more than one pair";
  for (const auto& g : gpus) EXPECT_EQ(g->in_flight(), 0);
}

TEST(Gpu, ParameterChangeMidStream) {
  REQUIRE_GPU();
  StereoParams sp;
  sp.max_disparity = 64;
  const auto p = random_pair(320, 240, 64, 55, false);
  auto gpu = make_engine("cuda", options_for(320, 240, sp, background_off()));
  CpuPairProcessor cpu(sp, background_off());
  expect_same_frame("before", cpu, *gpu, frame_of(p.left, p.right, 0));
  sp.levels = 2;
  sp.cost = MatchingCost::kCensus;
  sp.fill = true;
  sp.uniqueness = 10;
  gpu->set_params(sp, background_off());
  cpu.set_params(sp, background_off());
  expect_same_frame("after", cpu, *gpu, frame_of(p.left, p.right, 1));
}

// Cross-based aggregation (cuda/kernels/cross.cu) switched on by set_params on an engine that ran
// the window (its buffers and launches come with the new parameters), then over the cell limit:
// a frame whose volume would pass kSgmMaxCells fails on both engines with the same error (which
// names cross-based aggregation's volume), and the engine goes on with frames equal to the CPU's.
TEST(Gpu, CrossAggregationBySetParamsAndOverTheCellLimit) {
  REQUIRE_GPU();
  StereoParams sp;
  sp.max_disparity = 64;
  const auto p = random_pair(1024, 768, 64, 56, false);
  auto gpu = make_engine("cuda", sgm_options(1024, 768, sp, background_off()));
  CpuPairProcessor cpu(sp, background_off());
  expect_same_outputs("window", cpu, *gpu, frame_of(p.left, p.right, 0), true);
  sp.aggregation = Aggregation::kCross;
  cpu.set_params(sp, background_off());
  gpu->set_params(sp, background_off());
  expect_same_outputs("cross", cpu, *gpu, frame_of(p.left, p.right, 1), true);
  sp.levels = 1;  // every pixel of 1024 x 768 searches 64 disparities: 50 M cells > 2^25
  for (const bool semi_global : {false, true}) {
    sp.aggregation = semi_global ? Aggregation::kSgm : Aggregation::kCross;
    sp.sgm_cost = SgmCost::kCross;
    cpu.set_params(sp, background_off());
    gpu->set_params(sp, background_off());
    const std::string what = semi_global ? "sgm_cost cross" : "cross";
    PairFrame pf{p.left.view(), p.right.view(), {}, {}};
    PairOutput ref;
    std::string cpu_error;
    try {
      cpu.process(pf, ref);
    } catch (const std::runtime_error& e) {
      cpu_error = e.what();
    }
    EXPECT_NE(cpu_error.find("stereo.aggregation cross"), std::string::npos) << cpu_error;
    ASSERT_EQ(gpu->submit(frame_of(p.left, p.right, 2)), SubmitStatus::kAccepted);
    auto r = gpu->poll(60s);
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->ok) << what;
    EXPECT_EQ(r->error, cpu_error) << what;
  }
  sp.levels = 4;
  sp.aggregation = Aggregation::kCross;
  sp.cross_iterations = 2;
  cpu.set_params(sp, background_off());
  gpu->set_params(sp, background_off());
  expect_same_outputs("cross, 2 iterations", cpu, *gpu, frame_of(p.left, p.right, 3), true);
}

// Cross-based aggregation on random cases against the CPU engine, bit for bit: alone (its winners
// from the region averages) and as the semi-global pass's cost (sgm_cost cross, 4 and 8 paths,
// penalties and gradients); sizes, ranges and levels; the arms' thresholds and lengths; 1 to 4
// iterations (both orders); uniqueness, subpixel on and off, the matching cost; the background
// model's masks (a short synthetic sequence); the refinement after it; confidence on and off.
TEST(Gpu, CrossRandomCasesBitExact) {
  REQUIRE_GPU();
  const int compared = compare_random_cases(18, 40, [](int, CaseDraws& d, RandomCase& rc) {
    static const int kSizes[][2] = {{16, 16},   {17, 31},   {64, 48},
                                    {160, 120}, {203, 157}, {320, 240}};
    draw_size(d, rc, kSizes);
    StereoParams& sp = rc.sp;
    sp.aggregation = d.pick(3) == 0 ? Aggregation::kSgm : Aggregation::kCross;
    sp.sgm_cost = SgmCost::kCross;
    draw_range(d, rc);
    sp.levels = 1 + d.pick(4);
    sp.cross_iterations = 1 + d.pick(kMaxCrossIterations);
    if (d.pick(3) != 0) draw_arms(d, sp, true);
    if (sp.aggregation == Aggregation::kSgm) {
      sp.sgm_paths = d.pick(2) ? 8 : 4;
      sp.sgm_p1 = d.pick(4) == 0 ? 0 : d.pick(200);
      sp.sgm_p2 = d.pick(5) == 0 ? sp.sgm_p1 : sp.sgm_p1 + d.pick(kMaxSgmPenalty - sp.sgm_p1 + 1);
      sp.sgm_gradient = d.pick(3) == 0 ? 0 : d.pick(256);
    }
    sp.uniqueness = d.pick(3) == 0 ? 1 + d.pick(30) : 0;
    sp.subpixel = d.pick(4) != 0;
    sp.cost = static_cast<MatchingCost>(d.pick(3));
    sp.fill = d.pick(2) != 0;
    sp.refine = d.pick(4) == 0;
    draw_case_end(d, rc, true, true);
    rc.detail << to_string(sp.aggregation) << " iterations " << sp.cross_iterations << " arms "
              << sp.cross_tau1 << "/" << sp.cross_tau2 << "/" << sp.cross_l1 << "/" << sp.cross_l2
              << " uniqueness " << sp.uniqueness << " subpixel " << sp.subpixel << " cost "
              << static_cast<int>(sp.cost) << (sp.refine ? " refine" : "");
    if (sp.aggregation == Aggregation::kSgm) {
      rc.detail << " paths " << sp.sgm_paths << " P1 " << sp.sgm_p1 << " P2 " << sp.sgm_p2 << " g "
                << sp.sgm_gradient;
    }
  });
  if (compared < 0) return;
  std::printf("[ GPU      ] %d cross-based cases bit-exact\n", compared);
}

// Cross-based aggregation on the v2 scenes (the CPU side's time keeps it to them), every output:
// its defaults, two iterations with the refinement, and as the semi-global pass's cost.
TEST(Gpu, MiddleburyScenesCrossBitExact) {
  REQUIRE_GPU();
  const int compared = for_each_v2_scene([](const auto& files, const Scene& scene) {
    for (int mode = 0; mode < 3; ++mode) {
      StereoParams sp;
      sp.max_disparity = files.max_disparity;
      sp.fill = true;
      sp.aggregation = Aggregation::kCross;
      if (mode == 1) {
        sp.cross_iterations = 2;
        sp.refine = true;
      }
      if (mode == 2) {
        sp.aggregation = Aggregation::kSgm;
        sp.sgm_cost = SgmCost::kCross;
      }
      static const char* const kModes[] = {" cross", " cross 2 iterations + refine",
                                           " sgm_cost cross"};
      CpuPairProcessor cpu(sp, background_off());
      auto gpu = make_engine(
          "cuda", sgm_options(scene.left.width(), scene.left.height(), sp, background_off()));
      expect_same_outputs(files.name + kModes[mode], cpu, *gpu, frame_of(scene.left, scene.right),
                          true);
    }
  });
  EXPECT_EQ(compared, 4);
}

// Semi-global aggregation on random cases against the CPU engine, bit for bit: sizes, ranges and
// levels, both costs (and the window's s and k under the window cost), 4 and 8 paths, penalties
// and gradients over their ranges, uniqueness, subpixel on and off, the matching cost, with and
// without the background model's masks (a short synthetic sequence), confidence on and off.
TEST(Gpu, SemiGlobalRandomCasesBitExact) {
  REQUIRE_GPU();
  const int compared = compare_random_cases(16, 48, [](int, CaseDraws& d, RandomCase& rc) {
    static const int kSizes[][2] = {{16, 16},   {17, 31},   {64, 48},  {160, 120},
                                    {333, 257}, {320, 240}, {640, 480}};
    draw_size(d, rc, kSizes);
    StereoParams& sp = rc.sp;
    sp.aggregation = Aggregation::kSgm;
    draw_range(d, rc);
    sp.levels = 1 + d.pick(4);
    sp.sgm_cost = d.pick(2) ? SgmCost::kWindow : SgmCost::kPixel;
    sp.sgm_paths = d.pick(2) ? 8 : 4;
    sp.sgm_p1 = d.pick(4) == 0 ? 0 : d.pick(200);
    sp.sgm_p2 = d.pick(5) == 0 ? sp.sgm_p1 : sp.sgm_p1 + d.pick(kMaxSgmPenalty - sp.sgm_p1 + 1);
    sp.sgm_gradient = d.pick(3) == 0 ? 0 : d.pick(256);
    if (d.pick(2)) {
      sp.subwindow = 1 + 2 * d.pick(4);
      sp.best_k = d.pick(9);
    }
    sp.uniqueness = d.pick(3) == 0 ? 1 + d.pick(30) : 0;
    sp.subpixel = d.pick(4) != 0;
    sp.cost = static_cast<MatchingCost>(d.pick(3));
    sp.fill = d.pick(2) != 0;
    draw_case_end(d, rc, false, true);
    rc.detail << "cost " << to_string(sp.sgm_cost) << " paths " << sp.sgm_paths << " P1 "
              << sp.sgm_p1 << " P2 " << sp.sgm_p2 << " g " << sp.sgm_gradient << " s "
              << sp.subwindow << " k " << sp.best_k << " uniqueness " << sp.uniqueness
              << " subpixel " << sp.subpixel;
  });
  if (compared < 0) return;
  std::printf("[ GPU      ] %d semi-global cases bit-exact\n", compared);
}

// Three pairs' parameters for the batched tests: D 48 and the given aggregation.
static std::vector<StereoParams> three_pairs_of(Aggregation aggregation) {
  std::vector<StereoParams> params(3);
  for (auto& sp : params) {
    sp.max_disparity = 48;
    sp.aggregation = aggregation;
  }
  return params;
}

// Pairs of one size with per-pair parameters of a volume mode, submitted together, against the
// CPU engine frame by frame (left, right, cost ratio, mask); the first two must share a batch.
static void expect_batched_volume_pairs_equal_cpu(const std::vector<StereoParams>& params) {
  BackgroundParams bp;
  bp.warmup = 2;
  auto group = make_engine_group();
  std::vector<std::unique_ptr<Engine>> gpus;
  std::vector<std::unique_ptr<CpuPairProcessor>> cpus;
  std::vector<std::unique_ptr<SyntheticScene>> scenes;
  for (const auto& sp : params) {
    EngineOptions o = sgm_options(320, 240, sp, bp);
    o.group = group;
    gpus.push_back(make_engine("cuda", o));
    cpus.push_back(std::make_unique<CpuPairProcessor>(sp, bp));
    scenes.push_back(std::make_unique<SyntheticScene>(
        scene_options(320, 240, 48, 21 + static_cast<std::uint32_t>(scenes.size()))));
  }
  for (int frame = 0; frame < 5; ++frame) {
    std::vector<SyntheticFrame> frames(gpus.size());
    cuda_engine_hold_launches(*gpus.front(), true);
    for (std::size_t k = 0; k < gpus.size(); ++k) {
      scenes[k]->render(frame, frames[k]);
      ASSERT_EQ(gpus[k]->submit(color_frame(frames[k], frame)), SubmitStatus::kAccepted);
    }
    cuda_engine_hold_launches(*gpus.front(), false);
    for (std::size_t k = 0; k < gpus.size(); ++k) {
      auto r = gpus[k]->poll(60s);
      ASSERT_TRUE(r && r->ok) << "pair " << k << " frame " << frame;
      PairOutput ref;
      const SyntheticFrame& sf = frames[k];
      PairFrame pf{sf.left_gray.view(), sf.right_gray.view(), view_of(sf.left), view_of(sf.right)};
      pf.cost_ratio_output = true;
      cpus[k]->process(pf, ref);
      const std::string what = "pair " + std::to_string(k) + " frame " + std::to_string(frame);
      EXPECT_EQ(first_difference(ref.stereo.left.data(), r->disparity.data, 320, 240), "")
          << what << " (left)";
      EXPECT_EQ(first_difference(ref.stereo.right.data(), r->right_disparity.data, 320, 240), "")
          << what << " (right)";
      EXPECT_EQ(first_difference(ref.stereo.cost_ratio.data(), r->cost_ratio.data, 320, 240), "")
          << what << " (cost ratio)";
      EXPECT_EQ(first_difference(ref.foreground.data(), r->foreground.data, 320, 240), "")
          << what << " (mask)";
    }
    if (::testing::Test::HasFailure()) return;
  }
  const CudaBatchStats stats = cuda_engine_batch_stats(*gpus.front());
  EXPECT_LT(stats.batches, stats.frames) << "the first two pairs never shared a batch";
}

// Semi-global pairs batched together (one launch covers several pairs' volumes and paths), each
// equal to its own CPU engine: two with different penalties share batches, 8 paths go apart.
TEST(Gpu, SemiGlobalBatchedPairsEqualCpu) {
  REQUIRE_GPU();
  std::vector<StereoParams> params = three_pairs_of(Aggregation::kSgm);
  params[1].sgm_p1 = 20, params[1].sgm_p2 = 100, params[1].sgm_gradient = 0;
  params[1].uniqueness = 10;
  params[2].sgm_paths = 8;
  expect_batched_volume_pairs_equal_cpu(params);
}

// The same for cross-based aggregation: alone with its defaults and with other arms (those two
// share batches), and with two iterations as the cost under SGM.
TEST(Gpu, CrossBatchedPairsEqualCpu) {
  REQUIRE_GPU();
  std::vector<StereoParams> params = three_pairs_of(Aggregation::kCross);
  params[1].cross_l1 = 12, params[1].cross_l2 = 6, params[1].cross_tau1 = 20;
  params[2].aggregation = Aggregation::kSgm;
  params[2].sgm_cost = SgmCost::kCross;
  params[2].cross_iterations = 2;
  expect_batched_volume_pairs_equal_cpu(params);
}

// A frame whose volume would pass kSgmMaxCells fails on both engines with the same error, and the
// engine goes on: parameters that fit give bit-exact frames again, with no new device memory
// between frames (the volume is allocated with the parameters, at its largest).
TEST(Gpu, SemiGlobalOverTheCellLimitIsAnErrorFrame) {
  REQUIRE_GPU();
  StereoParams sp;
  sp.aggregation = Aggregation::kSgm;
  sp.max_disparity = 64;
  sp.levels = 1;  // every pixel of 1024 x 768 searches 64 disparities: 50 M cells > 2^25
  const auto p = random_pair(1024, 768, 64, 1600, false);
  CpuPairProcessor cpu(sp, background_off());
  auto gpu = make_engine("cuda", sgm_options(1024, 768, sp, background_off()));
  PairFrame pf{p.left.view(), p.right.view(), {}, {}};
  PairOutput ref;
  EXPECT_THROW(cpu.process(pf, ref), std::runtime_error);
  ASSERT_EQ(gpu->submit(frame_of(p.left, p.right, 0)), SubmitStatus::kAccepted);
  auto r = gpu->poll(60s);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->ok);
  EXPECT_NE(r->error.find("cost cells"), std::string::npos) << r->error;
  r.reset();
  expect_same_outputs("the same frame again", cpu, *gpu, frame_of(p.left, p.right, 1), false);
  sp.levels = 4;
  cpu.set_params(sp, background_off());
  gpu->set_params(sp, background_off());
  expect_same_outputs("4 levels", cpu, *gpu, frame_of(p.left, p.right, 2), true);
  const std::size_t memory = cuda_device_memory_used();
  expect_same_outputs("4 levels again", cpu, *gpu, frame_of(p.left, p.right, 3), true);
  EXPECT_EQ(cuda_device_memory_used(), memory) << "device memory changed between frames";
}

// The multi-step refinement (refine: true, cuda/kernels/refine.cu) on random cases against the CPU
// engine, bit for bit: sizes, ranges and levels, the window (its fast path and the generic
// matcher) and semi-global aggregation, the voting's rounds, thresholds and arms, depth edges 0, 1
// and 2 on the near side or both, the interpolation on a third of the cases, speckles and median
// on and off, the background model's masks (a short synthetic sequence), confidence on and off.
TEST(Gpu, RefinementRandomCasesBitExact) {
  REQUIRE_GPU();
  const int compared = compare_random_cases(17, 48, [](int c, CaseDraws& d, RandomCase& rc) {
    static const int kSizes[][2] = {{16, 16},   {17, 31},   {64, 48},
                                    {160, 120}, {333, 257}, {320, 240}};
    draw_size(d, rc, kSizes);
    StereoParams& sp = rc.sp;
    draw_range(d, rc);
    sp.levels = 1 + d.pick(4);
    const int aggregation = d.pick(3);  // the window's fast path, its generic matcher, semi-global
    if (aggregation == 1) sp.uniqueness = 1 + d.pick(30);
    if (aggregation == 2) sp.aggregation = Aggregation::kSgm;
    sp.refine = true;
    sp.refine_iterations = d.pick(7);
    sp.refine_votes = d.pick(2) ? 1 + d.pick(8) : 1 + d.pick(40);
    sp.refine_share = d.pick(100);
    sp.refine_edges = d.pick(3);
    sp.refine_edges_near = d.pick(2) != 0;
    sp.refine_interpolate = c % 3 == 1;  // by the case's number: the draws stay those of before
    if (d.pick(2)) draw_arms(d, sp, false);
    sp.subpixel = d.pick(4) != 0;
    sp.median = d.pick(4) != 0;
    sp.speckle_size = d.pick(4) == 0 ? 0 : sp.speckle_size;
    sp.fill = d.pick(2) != 0;
    draw_case_end(d, rc, true, false);
    rc.detail << to_string(sp.aggregation) << (sp.uniqueness ? " uniqueness" : "") << " rounds "
              << sp.refine_iterations << " votes " << sp.refine_votes << " share "
              << sp.refine_share << " edges " << sp.refine_edges
              << (sp.refine_edges_near ? " near" : " both")
              << (sp.refine_interpolate ? " interpolation" : "") << " arms " << sp.cross_tau1 << "/"
              << sp.cross_tau2 << "/" << sp.cross_l1 << "/" << sp.cross_l2 << " speckles "
              << sp.speckle_size << " median " << sp.median;
  });
  if (compared < 0) return;
  std::printf("[ GPU      ] %d refinement cases bit-exact\n", compared);
}

// The v2 scenes (those the refinement's defaults were chosen on; the CPU side's time keeps it to
// them) with the refinement's defaults after the window and after semi-global aggregation, then
// with its interpolation too, every output; the refinement and then the interpolation switched on
// by set_params on an engine that ran without them (their buffers and launches come with the new
// parameters).
TEST(Gpu, MiddleburyScenesRefinedBitExact) {
  REQUIRE_GPU();
  const int compared = for_each_v2_scene([](const auto& files, const Scene& scene) {
    for (const Aggregation aggregation : {Aggregation::kWindow, Aggregation::kSgm}) {
      StereoParams sp;
      sp.max_disparity = files.max_disparity;
      sp.fill = true;
      sp.aggregation = aggregation;
      const std::string what = files.name + " " + std::string(to_string(aggregation)) + " + refine";
      CpuPairProcessor cpu(sp, background_off());
      auto gpu = make_engine(
          "cuda", sgm_options(scene.left.width(), scene.left.height(), sp, background_off()));
      expect_same_outputs(what + " (off)", cpu, *gpu, frame_of(scene.left, scene.right), true);
      sp.refine = true;
      cpu.set_params(sp, background_off());
      gpu->set_params(sp, background_off());
      expect_same_outputs(what, cpu, *gpu, frame_of(scene.left, scene.right, 1), true);
      sp.refine_interpolate = true;
      cpu.set_params(sp, background_off());
      gpu->set_params(sp, background_off());
      expect_same_outputs(what + " + interpolation", cpu, *gpu,
                          frame_of(scene.left, scene.right, 2), true);
    }
  });
  EXPECT_EQ(compared, 4);
}

// Settings away from the defaults: the generic matching kernel (s != 3), k != 4, uniqueness, the
// paper's own-parent rule, no cross-check, AD only, the intensity fill, no median or speckles.
TEST(Gpu, NonDefaultParametersBitExact) {
  REQUIRE_GPU();
  std::vector<StereoParams> variants(12);
  variants[0].subwindow = 5;
  variants[1].subwindow = 1, variants[1].best_k = 0;
  variants[2].subwindow = 7, variants[2].best_k = 8, variants[2].cost = MatchingCost::kAbsDiff;
  variants[3].uniqueness = 15;
  variants[4].best_k = 2, variants[4].uniqueness = 5;
  variants[5].parent_radius = 0;
  variants[6].cross_check = false;
  variants[7].median = false, variants[7].speckle_size = 0, variants[7].fill = true,
  variants[7].fill_mode = FillMode::kIntensity;
  variants[8].census_width = 5, variants[8].census_height = 5, variants[8].ad_mean_radius = 0;
  variants[9].cost = MatchingCost::kCensus, variants[9].cross_check_tolerance = 0,
  variants[9].speckle_range = 2, variants[9].speckle_size = 300;
  // `subpixel: false` through both matchers (the window path, and the generic one by uniqueness).
  variants[10].subpixel = false;
  variants[11].subpixel = false, variants[11].uniqueness = 10;
  int index = 0;
  for (StereoParams sp : variants) {
    sp.max_disparity = 64;
    const auto p = random_pair(333, 257, 64, 300 + index, false);
    CpuPairProcessor cpu(sp, background_off());
    auto gpu = make_engine("cuda", options_for(333, 257, sp, background_off()));
    expect_same_frame("variant " + std::to_string(index++), cpu, *gpu, frame_of(p.left, p.right));
  }
}

// A rectification map of a w x h camera turned by `angle` about the centre and shifted by `dx`.
std::shared_ptr<const RectificationMap> rotated_map(int w, int h, double angle, double dx) {
  auto m = std::make_shared<RectificationMap>();
  m->resize(w, h);
  const double c = std::cos(angle), s = std::sin(angle), cx = w / 2.0, cy = h / 2.0;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      m->at(x, y)[0] = quantize_map_coord(cx + c * (x - cx) - s * (y - cy) + dx, w);
      m->at(x, y)[1] = quantize_map_coord(cy + s * (x - cx) + c * (y - cy), h);
    }
  }
  return m;
}

TEST(Gpu, RectificationEqualsCpu) {
  REQUIRE_GPU();
  SyntheticOptions so;
  so.width = 320;
  so.height = 240;
  so.max_disparity = 48;
  SyntheticScene scene(so);
  const auto map = [](double angle, double dx) { return rotated_map(320, 240, angle, dx); };
  StereoParams sp;
  sp.max_disparity = 48;
  BackgroundParams bp;
  bp.warmup = 5;
  EngineOptions o = options_for(320, 240, sp, bp);
  o.left_map = map(0.015, 1.25);
  o.right_map = map(-0.01, -0.5);
  CpuPairProcessor cpu(sp, bp, 0, o.left_map, o.right_map);
  auto gpu = make_engine("cuda", o);
  SyntheticFrame f;
  for (int i = 0; i < 12; ++i) {
    scene.render(i, f);
    expect_same_frame("rectified frame " + std::to_string(i), cpu, *gpu, color_frame(f, i));
    if (HasFailure()) return;
  }
}

TEST(Gpu, ZeroCopyModeEqualsCpu) {
  REQUIRE_GPU();
  StereoParams sp;
  sp.max_disparity = 64;
  EngineOptions o = options_for(333, 257, sp, background_off());
  o.zero_copy = true;
  auto gpu = make_engine("cuda", o);
  CpuPairProcessor cpu(sp, background_off());
  const auto p = random_pair(333, 257, 64, 77, false);
  expect_same_frame("zero-copy", cpu, *gpu, frame_of(p.left, p.right));
}

TEST(Gpu, ImpossibleSizeIsReported) {
  REQUIRE_GPU();
  StereoParams sp;
  try {
    auto gpu = make_engine("cuda", options_for(60000, 60000, sp, background_off()));
    FAIL() << "a 60000x60000 engine was created";
  } catch (const CudaError& e) {
    std::printf("[ GPU      ] reported: %s\n", e.what());
    EXPECT_NE(std::string(e.what()).find("failed"), std::string::npos);
  }
}

// A freed buffer is reported through the result, not swallowed. Run in a child process: an
// illegal address poisons the CUDA context of the process it happens in.
TEST(GpuDeathTest, FreedBufferIsReported) {
  REQUIRE_GPU();
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  auto child = [] {
    StereoParams sp;
    sp.max_disparity = 32;
    const auto p = random_pair(128, 96, 32, 9, false);
    auto gpu = make_engine("cuda", options_for(128, 96, sp, background_off()));
    bool first_ok = false, reported = false;
    {
      gpu->submit(frame_of(p.left, p.right, 0));
      auto r = gpu->poll(60s);
      first_ok = r && r->ok;
    }
    cuda_engine_free_buffer_for_test(*gpu);
    try {
      gpu->submit(frame_of(p.left, p.right, 1));
      auto r = gpu->poll(60s);
      reported = r && !r->ok && !r->error.empty();
      if (reported) std::fprintf(stderr, "reported: %s\n", r->error.c_str());
    } catch (const std::exception& e) {
      reported = true;  // reported by a throw
      std::fprintf(stderr, "reported: %s\n", e.what());
    }
    std::_Exit(first_ok && reported ? 0 : 1);
  };
  EXPECT_EXIT(child(), ::testing::ExitedWithCode(0), "reported: .*");
}

// on_result (the daemon sleeps until it): one call per finished frame of each pair of a group,
// and the frame can be polled at once after it. With the launcher watching the batches' forecast
// ends (EngineOptions::watch_ends, the default) and with the completion callback alone.
void expect_result_calls(bool watch_ends) {
  SCOPED_TRACE(watch_ends ? "watching ends" : "callback alone");
  auto group = make_engine_group();
  std::mutex mutex;
  std::condition_variable cv;
  int calls[2] = {0, 0};
  std::vector<std::unique_ptr<Engine>> engines;
  for (int i = 0; i < 2; ++i) {
    StereoParams sp;
    sp.max_disparity = 32;
    EngineOptions o = options_for(160, 120, sp, background_off());
    o.group = group;
    o.inflight = 3;
    o.watch_ends = watch_ends;
    o.on_result = [&, i] {
      {
        std::lock_guard<std::mutex> lock(mutex);
        ++calls[i];
      }
      cv.notify_all();
    };
    engines.push_back(make_engine("cuda", o));
  }
  const SyntheticPair pair = random_pair(160, 120, 32, 3, false);
  for (std::uint64_t k = 0; k < 3; ++k) {
    for (auto& e : engines)
      ASSERT_EQ(e->submit(frame_of(pair.left, pair.right, k)), SubmitStatus::kAccepted);
  }
  for (int done = 1; done <= 3; ++done) {
    for (int i = 0; i < 2; ++i) {
      {
        std::unique_lock<std::mutex> lock(mutex);
        ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return calls[i] >= done; }));
      }
      const auto r = engines[static_cast<std::size_t>(i)]->poll(std::chrono::nanoseconds(0));
      ASSERT_TRUE(r) << "pair " << i << ", frame " << done - 1;
      EXPECT_EQ(r->sequence, static_cast<std::uint64_t>(done - 1));
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::lock_guard<std::mutex> lock(mutex);
  EXPECT_EQ(calls[0], 3);
  EXPECT_EQ(calls[1], 3);
}

TEST(Gpu, SaysWhenAResultIsReady) {
  REQUIRE_GPU();
  expect_result_calls(true);
  expect_result_calls(false);
}

// Pairs that share an EngineGroup: frames submitted together go out as one batch (one graph over
// every pair). Pairs with the same kernels and levels batch even with other parameters (ranges,
// costs' curves); others (another matching cost, no background model, another size) go their own
// way. Every pair, every frame, bit for bit against its own CPU processor, model state included.
// Refined pairs (refine: true) batch with each other, whatever their thresholds, apart from the
// others.
namespace {

// BatchedPairsEqualCpu's pairs and frames, with the engines configured as the caller set them.
void expect_batched_pairs_equal_cpu() {
  struct Setup {
    int w, h, d;
    bool modeling;
    MatchingCost cost;
    int lambda_census;
    int refine = 0;  // 0: off, 1: its defaults, 2: other thresholds, both sides of edges of 2
  };
  const Setup setups[] = {
      {320, 240, 48, true, MatchingCost::kAdCensus, 30},
      {320, 240, 40, true, MatchingCost::kAdCensus, 20},  // batches with the first (L = 3)
      {320, 240, 32, true, MatchingCost::kAdCensus, 30},  // and this one
      {320, 240, 48, true, MatchingCost::kCensus, 30},    // other kernels: its own batch
      {320, 240, 48, false, MatchingCost::kAdCensus, 30},
      {320, 240, 48, true, MatchingCost::kAdCensus, 30, 1},  // refined: a batch of two
      {320, 240, 48, true, MatchingCost::kAdCensus, 20, 2},
      {256, 192, 48, true, MatchingCost::kAdCensus, 30},  // another size: another group
  };
  auto group = make_engine_group();
  std::vector<std::unique_ptr<Engine>> gpus;
  std::vector<std::unique_ptr<CpuPairProcessor>> cpus;
  std::vector<std::unique_ptr<SyntheticScene>> scenes;
  for (const auto& s : setups) {
    StereoParams sp;
    sp.max_disparity = s.d;
    sp.cost = s.cost;
    sp.lambda_census = s.lambda_census;
    sp.refine = s.refine != 0;
    if (s.refine == 2) {
      sp.refine_votes = 8;
      sp.refine_share = 30;
      sp.refine_edges = 2;
      sp.refine_edges_near = false;
    }
    BackgroundParams bp;
    bp.enabled = s.modeling;
    bp.warmup = 6;
    EngineOptions o = options_for(s.w, s.h, sp, bp);
    o.group = group;
    gpus.push_back(make_engine("cuda", o));
    cpus.push_back(std::make_unique<CpuPairProcessor>(sp, bp));
    SyntheticOptions so;
    so.width = s.w;
    so.height = s.h;
    so.max_disparity = s.d;
    so.seed = 11 + static_cast<std::uint32_t>(scenes.size());
    scenes.push_back(std::make_unique<SyntheticScene>(so));
  }
  SyntheticFrame f;
  for (int frame = 0; frame < 16; ++frame) {
    std::vector<SyntheticFrame> frames(gpus.size());
    // Held, so that this frame of every pair goes out in as few batches as the kernels allow.
    cuda_engine_hold_launches(*gpus.front(), true);
    for (std::size_t k = 0; k < gpus.size(); ++k) {
      scenes[k]->render(frame, frames[k]);
      FrameInput in = frame_of(frames[k].left_gray, frames[k].right_gray, frame);
      in.left_color = view_of(frames[k].left);
      in.right_color = view_of(frames[k].right);
      ASSERT_EQ(gpus[k]->submit(in), SubmitStatus::kAccepted);
    }
    cuda_engine_hold_launches(*gpus.front(), false);
    for (std::size_t k = 0; k < gpus.size(); ++k) {
      auto r = gpus[k]->poll(60s);
      ASSERT_TRUE(r && r->ok) << "pair " << k << " frame " << frame;
      ASSERT_EQ(r->sequence, static_cast<std::uint64_t>(frame));
      PairOutput ref;
      const SyntheticFrame& sf = frames[k];
      cpus[k]->process(
          PairFrame{sf.left_gray.view(), sf.right_gray.view(), view_of(sf.left), view_of(sf.right)},
          ref);
      const RunResult got = collect(*r);
      const int w = sf.left_gray.width(), h = sf.left_gray.height();
      EXPECT_EQ(first_difference(ref.stereo.left.data(), got.left.data(), w, h), "")
          << "pair " << k << " frame " << frame << " (left)";
      EXPECT_EQ(first_difference(ref.stereo.right.data(), got.right.data(), w, h), "")
          << "pair " << k << " frame " << frame << " (right)";
      EXPECT_EQ(first_difference(ref.foreground.data(), got.foreground.data(), w, h), "")
          << "pair " << k << " frame " << frame << " (mask)";
      EXPECT_EQ(ref.background_active, got.background_active) << "pair " << k;
      if (::testing::Test::HasFailure()) return;
    }
  }
  // The model state of every pair that models, after the last frame.
  for (std::size_t k = 0; k < gpus.size(); ++k) {
    if (!setups[k].modeling) continue;
    StereoParams sp;
    sp.max_disparity = setups[k].d;
    const int levels = effective_levels(sp);
    for (int s = 0; s < levels; ++s) {
      const CudaModelState st = cuda_engine_model_state(*gpus[k], 1, s, kValue);
      ASSERT_EQ(cpus[k]->right_model().mean(s, kValue), st.mean) << "pair " << k << " level " << s;
      ASSERT_EQ(cpus[k]->right_model().variance(s, kValue), st.variance)
          << "pair " << k << " level " << s;
    }
  }
  const CudaBatchStats stats = cuda_engine_batch_stats(*gpus.front());
  std::printf("[ GPU      ] 320x240 group: %llu frames in %llu batches\n",
              static_cast<unsigned long long>(stats.frames),
              static_cast<unsigned long long>(stats.batches));
  // Seven pairs of 320x240 in four kinds of batch per frame: 16 x 4 batches at most.
  EXPECT_EQ(stats.frames, 16u * 7u);
  EXPECT_LE(stats.batches, 16u * 4u);
}

}  // namespace

// Pairs submitted together, batched where their kernels allow, each equal to the CPU frame by
// frame: each view on its own (the default), and with the finest level shared by both views.
TEST(Gpu, BatchedPairsEqualCpu) {
  REQUIRE_GPU();
  for (const char* shared : {"0", "1"}) {
    SCOPED_TRACE(std::string("STEREOD_CUDA_SHARED_FINEST=") + shared);
    const SharedFinest mode(shared);
    expect_batched_pairs_equal_cpu();
    if (HasFailure()) return;
  }
}

// Frames that arrive in color only: both engines match the luma (with and without
// rectification, with the color and the intensity model); and frames uploaded straight from the
// caller's page-locked memory, strided.
TEST(Gpu, ColorOnlyAndPinnedInputEqualCpu) {
  REQUIRE_GPU();
  SyntheticScene scene(scene_options(320, 240, 48, 21));
  StereoParams sp;
  sp.max_disparity = 48;
  auto shift = [](double dx) {
    auto m = std::make_shared<RectificationMap>();
    m->resize(320, 240);
    for (int y = 0; y < 240; ++y) {
      for (int x = 0; x < 320; ++x) {
        m->at(x, y)[0] = quantize_map_coord(x + dx, 320);
        m->at(x, y)[1] = quantize_map_coord(y + 0.3 * dx, 240);
      }
    }
    return std::shared_ptr<const RectificationMap>(m);
  };
  for (int variant = 0; variant < 4; ++variant) {
    BackgroundParams bp;
    bp.warmup = 3;
    bp.color = variant != 1;
    EngineOptions o = options_for(320, 240, sp, bp);
    if (variant == 2) {
      o.left_map = shift(0.75);
      o.right_map = shift(-0.4);
    }
    auto gpu = make_engine("cuda", o);
    CpuPairProcessor cpu(sp, bp, 0, o.left_map, o.right_map);
    // Pinned, strided copies of the frames (variant 3).
    const int stride = 3 * 320 + 64;
    std::shared_ptr<std::uint8_t> pinned =
        allocate_pinned(2 * static_cast<std::size_t>(stride) * 240);
    SyntheticFrame f;
    for (int i = 0; i < 8; ++i) {
      scene.render(i, f);
      FrameInput in;
      in.sequence = static_cast<std::uint64_t>(i);
      in.left_color = view_of(f.left);
      in.right_color = view_of(f.right);
      if (variant == 3) {
        for (int cam = 0; cam < 2; ++cam) {
          const RgbImage& img = cam == 0 ? f.left : f.right;
          std::uint8_t* base = pinned.get() + cam * static_cast<std::size_t>(stride) * 240;
          for (int y = 0; y < 240; ++y) std::memcpy(base + y * stride, img.row(y), 3 * 320);
          (cam == 0 ? in.left_color : in.right_color) = RgbView{base, 320, 240, stride};
        }
        in.pinned = true;
      }
      // The CPU reference is given the luma explicitly: what "color only" promises.
      Gray8 lg, rg;
      rgb_to_gray(f.left, lg);
      rgb_to_gray(f.right, rg);
      PairOutput ref;
      cpu.process(PairFrame{lg.view(), rg.view(), view_of(f.left), view_of(f.right)}, ref);
      const RunResult got = run_gpu(*gpu, in);
      const std::string what = "variant " + std::to_string(variant) + " frame " + std::to_string(i);
      EXPECT_EQ(first_difference(ref.stereo.left.data(), got.left.data(), 320, 240), "") << what;
      EXPECT_EQ(first_difference(ref.foreground.data(), got.foreground.data(), 320, 240), "")
          << what;
      if (HasFailure()) return;
    }
  }
}

// Frames as YUV cameras deliver them (UYVY, NV12), converted on the device: the CUDA engine's
// disparity and mask equal the CPU engine's from the same frames, bit for bit; copied into the
// slot, uploaded straight from strided page-locked memory, and with rectification.
TEST(Gpu, YuvFramesEqualCpuEngine) {
  REQUIRE_GPU();
  SyntheticScene scene(scene_options(320, 240, 48, 23));
  StereoParams sp;
  sp.max_disparity = 48;
  BackgroundParams bp;
  bp.warmup = 3;
  bp.color = true;
  for (YuvFormat format : {YuvFormat::kUyvy, YuvFormat::kNv12}) {
    for (int variant = 0; variant < 3; ++variant) {  // 0: copied, 1: pinned, 2: rectified
      EngineOptions o = options_for(320, 240, sp, bp);
      if (variant == 2) {
        auto m = std::make_shared<RectificationMap>();
        m->resize(320, 240);
        for (int y = 0; y < 240; ++y) {
          for (int x = 0; x < 320; ++x) {
            m->at(x, y)[0] = quantize_map_coord(x + 0.6, 320);
            m->at(x, y)[1] = quantize_map_coord(y + 0.2, 240);
          }
        }
        o.left_map = m;
        o.right_map = m;
      }
      auto gpu = make_engine("cuda", o);
      auto cpu = make_engine("cpu", o);
      const std::size_t row = 2 * 320 + 96;  // strided: room for UYVY's rows and NV12's
      std::shared_ptr<std::uint8_t> pinned = allocate_pinned(2 * row * 240 * 2);
      SyntheticFrame f;
      for (int i = 0; i < 6; ++i) {
        scene.render(i, f);
        const YuvFrame yl = encode_yuv(f.left, format);
        const YuvFrame yr = encode_yuv(f.right, format);
        FrameInput in;
        in.sequence = static_cast<std::uint64_t>(i);
        in.left_yuv = yl.view();
        in.right_yuv = yr.view();
        if (variant == 1) {
          for (int cam = 0; cam < 2; ++cam) {
            const YuvView packed = (cam == 0 ? yl : yr).view();
            std::uint8_t* base = pinned.get() + cam * row * 240 * 2;
            YuvView v = packed;
            v.data = base;
            v.stride = static_cast<std::ptrdiff_t>(row);
            const int bytes = format == YuvFormat::kUyvy ? 640 : 320;
            for (int y = 0; y < 240; ++y) {
              std::memcpy(base + y * row, packed.data + y * packed.stride, bytes);
            }
            if (format == YuvFormat::kNv12) {
              v.chroma = base + row * 240;
              v.chroma_stride = static_cast<std::ptrdiff_t>(row);
              for (int y = 0; y < 120; ++y) {
                std::memcpy(base + row * 240 + y * row, packed.chroma + y * packed.chroma_stride,
                            320);
              }
            }
            (cam == 0 ? in.left_yuv : in.right_yuv) = v;
          }
          in.pinned = true;
        }
        const RunResult want = run_gpu(*cpu, in);
        const RunResult got = run_gpu(*gpu, in);
        const std::string what = std::string(yuv_format_name(format)) + " variant " +
                                 std::to_string(variant) + " frame " + std::to_string(i);
        EXPECT_EQ(first_difference(want.left.data(), got.left.data(), 320, 240), "") << what;
        EXPECT_EQ(first_difference(want.foreground.data(), got.foreground.data(), 320, 240), "")
            << what;
        EXPECT_EQ(want.background_active, got.background_active) << what;
        if (HasFailure()) return;
      }
    }
  }
}

// Without right_output the right view is matched only for the check: the left map is the same,
// the right one is not returned.
TEST(Gpu, RightOutputOffKeepsTheLeftMap) {
  REQUIRE_GPU();
  StereoParams sp;
  sp.max_disparity = 64;
  sp.fill = true;
  const auto p = random_pair(333, 257, 64, 81, false);
  EngineOptions o = options_for(333, 257, sp, background_off());
  o.right_output = false;
  auto gpu = make_engine("cuda", o);
  CpuPairProcessor cpu(sp, background_off());
  PairOutput ref;
  cpu.process(PairFrame{p.left.view(), p.right.view(), {}, {}}, ref);
  ASSERT_EQ(gpu->submit(frame_of(p.left, p.right)), SubmitStatus::kAccepted);
  auto r = gpu->poll(60s);
  ASSERT_TRUE(r && r->ok);
  EXPECT_TRUE(r->right_disparity.data == nullptr);
  const RunResult got = collect(*r);
  EXPECT_EQ(first_difference(ref.stereo.left.data(), got.left.data(), 333, 257), "");
}

// Frame i of a synthetic sequence as the GPU engine returned it, against the CPU pair processor
// (which has seen frames 0 .. i - 1): the left map, the right map where the engine returns it, the
// mask and the model's statistics.
void expect_synthetic_frame_equals_cpu(CpuPairProcessor& cpu, const SyntheticFrame& f,
                                       const EngineResult& r, int i) {
  PairOutput ref;
  cpu.process(PairFrame{f.left_gray.view(), f.right_gray.view(), view_of(f.left), view_of(f.right)},
              ref);
  const RunResult got = collect(r);
  const int w = got.left.width(), h = got.left.height();
  EXPECT_EQ(first_difference(ref.stereo.left.data(), got.left.data(), w, h), "")
      << "frame " << i << " (left)";
  if (r.right_disparity.data) {
    EXPECT_EQ(first_difference(ref.stereo.right.data(), got.right.data(), w, h), "")
        << "frame " << i << " (right)";
  }
  EXPECT_EQ(first_difference(ref.foreground.data(), got.foreground.data(), w, h), "")
      << "frame " << i << " (mask)";
  EXPECT_EQ(ref.background_active, got.background_active) << "frame " << i;
  if (ref.background_active) {
    EXPECT_DOUBLE_EQ(ref.tested_fraction, got.tested_fraction) << "frame " << i;
  }
}

// Background modeling with two frames in flight (the next frame uploads while this one computes)
// at a size and range where tiles split into several segments: frame by frame against the CPU.
// With `busy_poll` (EngineOptions::busy_poll) the caller watches the GPU instead of sleeping until
// the completion callback, and first asks with a deadline too short to wait: every frame must
// still come back, in order, with the same outputs (the watched batch slot is reused meanwhile).
// Without `watch_ends` (EngineOptions::watch_ends) only the completion callback wakes the caller.
void expect_pipelined_frames_equal_cpu(bool busy_poll, bool watch_ends = true) {
  SyntheticScene scene(scene_options(640, 480, 128, 5));
  StereoParams sp;
  sp.max_disparity = 128;
  BackgroundParams bp;
  bp.warmup = 8;
  EngineOptions o = options_for(640, 480, sp, bp);
  o.inflight = 2;
  o.busy_poll = busy_poll;
  o.watch_ends = watch_ends;
  auto gpu = make_engine("cuda", o);
  CpuPairProcessor cpu(sp, bp);
  constexpr int kFrames = 24;
  std::vector<SyntheticFrame> frames(kFrames);
  for (int i = 0; i < kFrames; ++i) scene.render(i, frames[i]);
  ASSERT_EQ(gpu->submit(color_frame(frames[0], 0)), SubmitStatus::kAccepted);
  for (int i = 0; i < kFrames; ++i) {
    if (i + 1 < kFrames) {
      ASSERT_EQ(gpu->submit(color_frame(frames[i + 1], i + 1)), SubmitStatus::kAccepted);
    }
    std::optional<EngineResult> r;
    if (busy_poll) r = gpu->poll(std::chrono::nanoseconds(1));
    if (!r) r = gpu->poll(60s);
    ASSERT_TRUE(r && r->ok) << "frame " << i;
    ASSERT_EQ(r->sequence, static_cast<std::uint64_t>(i));
    expect_synthetic_frame_equals_cpu(cpu, frames[i], *r, i);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(Gpu, PipelinedBackgroundFramesEqualCpu) {
  REQUIRE_GPU();
  expect_pipelined_frames_equal_cpu(false);
}

TEST(Gpu, BusyPollReturnsEveryFrameInOrder) {
  REQUIRE_GPU();
  expect_pipelined_frames_equal_cpu(true);
}

TEST(Gpu, CompletionCallbackAloneReturnsEveryFrameInOrder) {
  REQUIRE_GPU();
  expect_pipelined_frames_equal_cpu(false, false);
}

// The model part of later frames runs while a frame is still being matched (batch_graph.hpp):
// with several frames in flight, rectification and a target margin, each frame's rectified images,
// pyramid, masks and widened masks (kept per slot) must be the ones its own matching reads. Every
// frame's left and right maps and mask against the CPU's, warm-up, then moving objects. Four in
// flight, eight (every one of the engine's batch slots busy at once), and twelve (frames beyond the
// slots wait on the host for one to be freed).
namespace {
void expect_frames_in_flight_equal_cpu(int in_flight) {
  SCOPED_TRACE("in flight: " + std::to_string(in_flight));
  constexpr int kW = 320, kH = 240, kFrames = 30;
  SyntheticScene scene(scene_options(kW, kH, 48, 7));
  StereoParams sp;
  sp.max_disparity = 48;
  BackgroundParams bp;
  bp.warmup = 6;
  bp.target_margin = 2;
  EngineOptions o = options_for(kW, kH, sp, bp);
  o.inflight = in_flight;
  o.right_output = true;
  o.left_map = rotated_map(kW, kH, 0.012, 0.75);
  o.right_map = rotated_map(kW, kH, -0.008, -0.5);
  auto gpu = make_engine("cuda", o);
  CpuPairProcessor cpu(sp, bp, 0, o.left_map, o.right_map);
  std::vector<SyntheticFrame> frames(kFrames);
  for (int i = 0; i < kFrames; ++i) scene.render(i, frames[i]);
  // Frames i .. i + in_flight - 1 are in flight when frame i is polled (the result of i - 1 was
  // released).
  for (int i = 0; i + 1 < in_flight; ++i) {
    ASSERT_EQ(gpu->submit(color_frame(frames[i], i)), SubmitStatus::kAccepted);
  }
  for (int i = 0; i < kFrames; ++i) {
    const int next = i + in_flight - 1;
    if (next < kFrames) {
      ASSERT_EQ(gpu->submit(color_frame(frames[next], next)), SubmitStatus::kAccepted) << next;
    }
    const std::optional<EngineResult> r = gpu->poll(60s);
    ASSERT_TRUE(r && r->ok) << "frame " << i;
    ASSERT_EQ(r->sequence, static_cast<std::uint64_t>(i));
    expect_synthetic_frame_equals_cpu(cpu, frames[i], *r, i);
    if (::testing::Test::HasFailure()) return;
  }
}
}  // namespace

TEST(Gpu, ModelsOfLaterFramesOverlapMatchingEqualCpu) {
  REQUIRE_GPU();
  for (const int in_flight : {4, 8, 12}) {
    expect_frames_in_flight_equal_cpu(in_flight);
    if (HasFailure()) return;
  }
}

// Ghosts seen in depth (background.depth_ghosts): the left model reads each frame's record (its
// decision, then its output disparity) depth_lag frames later, and a revealed pixel is absorbed
// sooner, an object in front waits longer (depth_in_front). Objects 1.3 times larger that stand
// still halfway along their tracks, some through the warm-up, on a 320x240 synthetic scene; frame
// by frame against the CPU: one frame at a time, eight and twelve in flight (frame n's model may
// start while frame n - depth_lag's stereo part, which writes the record, still runs: the engine
// waits for it; the default lag 3, 8 and 1), with filling (the record holds the filled output), the
// intensity model, and the option turned on after the warm-up (records from that frame on, the
// static depth learned afresh: nothing learned, nothing revealed). The rule must act on this scene:
// the CPU's masks with it differ from those without.
namespace {
struct DepthGhostCase {
  const char* what;
  int in_flight;
  bool fill, color;
  int on_from;                             // the frame the option is turned on (0: from the start)
  bool in_front = true;                    // background.depth_in_front
  int lag = BackgroundParams{}.depth_lag;  // background.depth_lag (the default, 3)
  int lag_from = 0;                        // a frame from which depth_lag is lag_after (0: never)
  int lag_after = kMaxDepthLag;
};

void expect_depth_ghosts_equal_cpu(const std::vector<SyntheticFrame>& frames,
                                   const DepthGhostCase& c) {
  SCOPED_TRACE(c.what);
  const int w = frames[0].left_gray.width(), h = frames[0].left_gray.height();
  const int n = static_cast<int>(frames.size());
  StereoParams sp;
  sp.max_disparity = 48;
  sp.fill = c.fill;
  BackgroundParams bp;
  bp.warmup = 20;
  bp.color = c.color;
  bp.depth_ghosts = c.on_from == 0;
  bp.depth_in_front = c.in_front;
  bp.depth_lag = c.lag;
  EngineOptions o = options_for(w, h, sp, bp);
  o.inflight = c.in_flight;
  auto gpu = make_engine("cuda", o);
  CpuPairProcessor cpu(sp, bp);
  // The parameters from frame i on, as a reload would change them.
  const auto params_at = [&](int i) {
    BackgroundParams b = bp;
    if (c.on_from > 0 && i >= c.on_from) b.depth_ghosts = true;
    if (c.lag_from > 0 && i >= c.lag_from) b.depth_lag = c.lag_after;
    return b;
  };
  const auto changes_at = [&](int i) { return i > 0 && params_at(i) != params_at(i - 1); };
  int next = 0;
  const auto submit_until = [&](int last) {
    for (; next <= last && next < n; ++next) {
      if (changes_at(next)) gpu->set_params(sp, params_at(next));
      ASSERT_EQ(gpu->submit(color_frame(frames[next], next)), SubmitStatus::kAccepted) << next;
    }
  };
  for (int i = 0; i < n; ++i) {
    submit_until(i + c.in_flight - 1);
    if (changes_at(i)) cpu.set_params(sp, params_at(i));
    const std::optional<EngineResult> r = gpu->poll(60s);
    ASSERT_TRUE(r && r->ok) << "frame " << i;
    ASSERT_EQ(r->sequence, static_cast<std::uint64_t>(i));
    expect_synthetic_frame_equals_cpu(cpu, frames[i], *r, i);
    if (::testing::Test::HasFailure()) return;
  }
  expect_same_model("end", cpu, *gpu, sp, params_at(n - 1).color);
}
}  // namespace

TEST(Gpu, DepthGhostsEqualCpu) {
  constexpr int kW = 320, kH = 240, kFrames = 60;
  SyntheticOptions so = scene_options(kW, kH, 48, 12);
  so.stop_frames = 15;
  so.object_size = 1.3;
  const SyntheticScene scene(so);
  std::vector<SyntheticFrame> frames(kFrames);
  for (int i = 0; i < kFrames; ++i) scene.render(i, frames[i]);
  {
    // The scene exercises the rule (on the CPU alone, so this part runs without a GPU too).
    StereoParams sp;
    sp.max_disparity = 48;
    BackgroundParams off;
    off.warmup = 20;
    off.depth_ghosts = false;
    BackgroundParams on = off;
    on.depth_ghosts = true;
    BackgroundParams behind_only = on;  // no depth_in_front
    behind_only.depth_in_front = false;
    CpuPairProcessor a(sp, off), b(sp, on), c(sp, behind_only);
    long long differ = 0, in_front = 0;
    for (const SyntheticFrame& f : frames) {
      const PairFrame pf{f.left_gray.view(), f.right_gray.view(), view_of(f.left),
                         view_of(f.right)};
      PairOutput ra, rb, rc;
      a.process(pf, ra);
      b.process(pf, rb);
      c.process(pf, rc);
      for (std::size_t k = 0; k < ra.foreground.size(); ++k) {
        differ += ra.foreground.data()[k] != rb.foreground.data()[k];
        in_front += rc.foreground.data()[k] != rb.foreground.data()[k];
      }
    }
    std::printf(
        "[ GPU      ] depth_ghosts changes %lld mask pixels over the sequence, depth_in_front "
        "%lld\n",
        differ, in_front);
    ASSERT_GT(differ, 1000);
    ASSERT_GT(in_front, 1000);
  }
  REQUIRE_GPU();
  const DepthGhostCase cases[] = {
      {"one at a time", 1, false, true, 0},
      {"eight in flight", 8, false, true, 0},
      {"twelve in flight, intensity", 12, false, false, 0},
      {"filling, four in flight", 4, true, true, 0},
      {"turned on at frame 14", 1, false, true, 14},
      {"behind only, eight in flight", 8, false, true, 0, false},
      {"lag 8, eight in flight", 8, false, true, 0, true, 8},
      {"lag 1, four in flight, intensity", 4, false, false, 0, true, 1},
      {"lag 3, then 8 from frame 30, six in flight", 6, false, true, 0, true, 3, 30, 8},
      {"lag 8, then 1 from frame 30, six in flight", 6, false, true, 0, true, 8, 30, 1}};
  for (const DepthGhostCase& c : cases) {
    expect_depth_ghosts_equal_cpu(frames, c);
    if (HasFailure()) return;
  }
}

// The winners' cost ratios (EngineOptions::cost_ratio_output, what the trinocular fusion
// compares) equal the CPU's, pixel for pixel, on both matching kernels (the window path for the
// defaults, the generic one for uniqueness and other k), with background modeling (tiles without
// foreground) and without; asking for them leaves the disparities unchanged.
TEST(Gpu, WinnerCostRatiosEqualCpu) {
  REQUIRE_GPU();
  struct Case {
    int w, h, d, best_k, uniqueness;
    bool modeling;
  };
  const Case cases[] = {{333, 257, 64, 4, 0, false},
                        {640, 480, 128, 4, 0, true},
                        {320, 240, 64, 3, 0, false},
                        {320, 240, 48, 4, 10, false}};
  for (const Case& c : cases) {
    StereoParams sp;
    sp.max_disparity = c.d;
    sp.best_k = c.best_k;
    sp.uniqueness = c.uniqueness;
    BackgroundParams bp = background_off();
    if (c.modeling) {
      bp = BackgroundParams{};
      bp.warmup = 3;
    }
    EngineOptions o = options_for(c.w, c.h, sp, bp);
    o.cost_ratio_output = true;
    auto gpu = make_engine("cuda", o);
    CpuPairProcessor cpu(sp, bp);
    SyntheticScene scene(scene_options(c.w, c.h, c.d, 7));
    SyntheticFrame f;
    for (int i = 0; i < (c.modeling ? 6 : 1); ++i) {
      scene.render(i, f);
      const FrameInput in = color_frame(f, i);
      PairOutput ref;
      PairFrame pf{in.left, in.right, in.left_color, in.right_color};
      pf.cost_ratio_output = true;
      cpu.process(pf, ref);
      ASSERT_EQ(gpu->submit(in), SubmitStatus::kAccepted);
      auto r = gpu->poll(60s);
      ASSERT_TRUE(r && r->ok);
      ASSERT_EQ(r->cost_ratio.width, c.w);
      ASSERT_EQ(r->cost_ratio.height, c.h);
      const std::string what = std::to_string(c.w) + "x" + std::to_string(c.h) + " k " +
                               std::to_string(c.best_k) + " uniqueness " +
                               std::to_string(c.uniqueness) + " frame " + std::to_string(i);
      EXPECT_EQ(first_difference(ref.stereo.cost_ratio.data(), r->cost_ratio.data, c.w, c.h), "")
          << what << " (cost ratio)";
      EXPECT_EQ(first_difference(ref.stereo.left.data(), r->disparity.data, c.w, c.h), "")
          << what << " (left)";
      if (HasFailure()) return;
    }
  }
}

namespace {

// The trinocular GPU tests' rig: 320x240, 48 disparities, background modeling warming up over
// `warmup` frames, the fused map only.
EngineOptions trinocular_rig_options(int warmup) {
  StereoParams sp;
  sp.max_disparity = 48;
  BackgroundParams bp;
  bp.warmup = warmup;
  EngineOptions o = options_for(320, 240, sp, bp);
  o.right_output = false;
  return o;
}

}  // namespace

// A trinocular rig on the CUDA engine equals the same rig on the CPU engine: fused map, direction
// and both pairs' maps, frame by frame, cameras below and above, background modeling on.
TEST(Gpu, TrinocularRigEqualsCpu) {
  REQUIRE_GPU();
  for (auto position : {SyntheticVertical::kBelow, SyntheticVertical::kAbove}) {
    SyntheticOptions so = scene_options(320, 240, 48, 11);
    so.vertical = position;
    SyntheticScene scene(so);
    EngineOptions o = trinocular_rig_options(3);
    TrinocularOptions t;
    t.model.position =
        position == SyntheticVertical::kAbove ? VerticalPosition::kAbove : VerticalPosition::kBelow;
    auto gpu = make_trinocular_engine("cuda", o, t);
    o.cpu_threads = 2;
    auto cpu = make_trinocular_engine("cpu", o, t);
    SyntheticFrame f;
    for (int i = 0; i < 6; ++i) {
      scene.render(i, f);
      FrameInput in = color_frame(f, i);
      in.vertical = f.vertical_gray.view();
      in.vertical_color = view_of(f.vertical);
      ASSERT_EQ(cpu->submit(in), SubmitStatus::kAccepted);
      ASSERT_EQ(gpu->submit(in), SubmitStatus::kAccepted);
      auto a = cpu->poll(60s);
      auto b = gpu->poll(60s);
      ASSERT_TRUE(a && a->ok && b && b->ok);
      const std::string what = std::string(to_string(position)) + " frame " + std::to_string(i);
      EXPECT_EQ(first_difference(a->disparity.data, b->disparity.data, 320, 240), "") << what;
      EXPECT_EQ(first_difference(a->direction.data, b->direction.data, 320, 240), "") << what;
      EXPECT_EQ(first_difference(a->vertical_disparity.data, b->vertical_disparity.data, 320, 240),
                "")
          << what;
      if (HasFailure()) return;
    }
  }
}

// Several frames in flight at once: each slot's transposed vertical input (page-locked, uploaded
// in place) and fusion output are its own, so every result equals the CPU's for its frame, over
// more frames than slots (slots reused), in gray and color with background modeling on.
TEST(Gpu, TrinocularFramesInFlightEqualCpu) {
  REQUIRE_GPU();
  SyntheticOptions so = scene_options(320, 240, 48, 12);
  so.vertical = SyntheticVertical::kAbove;
  SyntheticScene scene(so);
  EngineOptions o = trinocular_rig_options(2);
  o.inflight = 3;
  TrinocularOptions t;
  t.model.position = VerticalPosition::kAbove;
  auto gpu = make_trinocular_engine("cuda", o, t);
  o.inflight = 1;
  o.cpu_threads = 2;
  auto cpu = make_trinocular_engine("cpu", o, t);
  constexpr int kFrames = 8;
  std::vector<SyntheticFrame> frames(kFrames);
  std::vector<FrameInput> inputs;
  for (int i = 0; i < kFrames; ++i) {
    scene.render(5 * i, frames[static_cast<std::size_t>(i)]);
    const SyntheticFrame& f = frames[static_cast<std::size_t>(i)];
    FrameInput in = color_frame(f, i);
    in.vertical = f.vertical_gray.view();
    in.vertical_color = view_of(f.vertical);
    inputs.push_back(in);
  }
  std::vector<Disparity16> fused(kFrames), vertical(kFrames);
  std::vector<Gray8> direction(kFrames);
  for (int i = 0; i < kFrames; ++i) {
    ASSERT_EQ(cpu->submit(inputs[static_cast<std::size_t>(i)]), SubmitStatus::kAccepted);
    auto r = cpu->poll(60s);
    ASSERT_TRUE(r && r->ok);
    copy_into(r->disparity, fused[static_cast<std::size_t>(i)]);
    copy_into(r->vertical_disparity, vertical[static_cast<std::size_t>(i)]);
    copy_into(r->direction, direction[static_cast<std::size_t>(i)]);
  }
  int next = 0;
  int most_in_flight = 0;
  for (int done = 0; done < kFrames; ++done) {
    while (next < kFrames &&
           gpu->submit(inputs[static_cast<std::size_t>(next)]) == SubmitStatus::kAccepted) {
      ++next;
    }
    most_in_flight = std::max(most_in_flight, gpu->in_flight());
    auto r = gpu->poll(60s);
    ASSERT_TRUE(r && r->ok) << (r ? r->error : "no result");
    ASSERT_EQ(r->sequence, static_cast<std::uint64_t>(done));
    const auto i = static_cast<std::size_t>(done);
    const std::string what = "frame " + std::to_string(done);
    EXPECT_EQ(first_difference(fused[i].data(), r->disparity.data, 320, 240), "") << what;
    EXPECT_EQ(first_difference(direction[i].data(), r->direction.data, 320, 240), "") << what;
    EXPECT_EQ(first_difference(vertical[i].data(), r->vertical_disparity.data, 320, 240), "")
        << what;
    if (HasFailure()) return;
  }
  EXPECT_EQ(most_in_flight, 3);
}

// One random 333 x 257 pair (D 64, `seed`) through a fresh CUDA engine and the CPU pair processor
// with the confidence asked for, and the winners' cost ratios too with `cost_ratio`: the maps and
// the disparity equal the CPU's, and a second frame without the confidence carries no map.
void expect_confidence_equals_cpu(StereoParams sp, std::uint32_t seed, bool cost_ratio,
                                  const std::string& what) {
  sp.max_disparity = 64;
  const auto p = random_pair(333, 257, 64, seed, false);
  CpuPairProcessor cpu(sp, background_off());
  EngineOptions o = options_for(333, 257, sp, background_off());
  o.cost_ratio_output = cost_ratio;
  auto gpu = make_engine("cuda", o);
  FrameInput in = frame_of(p.left, p.right);
  in.confidence = true;
  ASSERT_EQ(gpu->submit(in), SubmitStatus::kAccepted) << what;
  auto r = gpu->poll(60s);
  ASSERT_TRUE(r && r->ok) << what;
  PairOutput ref;
  PairFrame pf;
  pf.left = p.left.view();
  pf.right = p.right.view();
  pf.confidence = true;
  pf.cost_ratio_output = cost_ratio;
  cpu.process(pf, ref);
  ASSERT_EQ(r->confidence.width, 333) << what;
  ASSERT_EQ(r->confidence.height, 257) << what;
  Gray8 got(333, 257);
  copy_into(r->confidence, got);
  EXPECT_EQ(first_difference(ref.stereo.confidence.data(), got.data(), 333, 257), "")
      << what << " (confidence)";
  if (cost_ratio) {
    ASSERT_EQ(r->cost_ratio.width, 333) << what;
    EXPECT_EQ(first_difference(ref.stereo.cost_ratio.data(), r->cost_ratio.data, 333, 257), "")
        << what << " (cost ratio)";
  }
  EXPECT_EQ(first_difference(ref.stereo.left.data(), r->disparity.data, 333, 257), "")
      << what << " (disparity)";
  r.reset();
  in.confidence = false;  // off again: no map
  ASSERT_EQ(gpu->submit(in), SubmitStatus::kAccepted) << what;
  r = gpu->poll(60s);
  ASSERT_TRUE(r && r->ok) << what;
  EXPECT_TRUE(r->confidence.empty()) << what;
}

// The confidence and the winners' cost ratios asked for together from one engine: both equal the
// CPU's, on the generic kernel that the confidence selects.
TEST(Gpu, ConfidenceWithCostRatiosEqualsCpu) {
  REQUIRE_GPU();
  std::vector<StereoParams> variants(2);
  variants[1].uniqueness = 15;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    expect_confidence_equals_cpu(variants[i], 950 + static_cast<std::uint32_t>(i), true,
                                 "variant " + std::to_string(i));
  }
}

// The confidence map (FrameInput::confidence) from both engines, bit for bit: default and
// non-default parameters (the uniqueness test, no median, hole filling), with the background model
// over a synthetic sequence, and switched off and on between frames.
TEST(Gpu, ConfidenceEqualsCpu) {
  REQUIRE_GPU();
  std::vector<StereoParams> variants(4);
  variants[1].uniqueness = 15;
  variants[2].median = false, variants[2].fill = true;
  variants[3].subwindow = 5, variants[3].best_k = 2;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    expect_confidence_equals_cpu(variants[i], 900 + static_cast<std::uint32_t>(i), false,
                                 "variant " + std::to_string(i));
  }
  SyntheticScene scene(scene_options(640, 480, 128, 7));
  StereoParams sp;
  sp.max_disparity = 128;
  BackgroundParams bp;
  bp.warmup = 4;
  auto gpu = make_engine("cuda", options_for(640, 480, sp, bp));
  CpuPairProcessor cpu(sp, bp);
  SyntheticFrame f;
  for (int i = 0; i < 10; ++i) {
    scene.render(i, f);
    FrameInput in = frame_of(f.left_gray, f.right_gray, static_cast<std::uint64_t>(i));
    in.left_color = view_of(f.left);
    in.right_color = view_of(f.right);
    in.confidence = i % 3 != 1;  // on and off between frames
    ASSERT_EQ(gpu->submit(in), SubmitStatus::kAccepted);
    auto r = gpu->poll(60s);
    ASSERT_TRUE(r && r->ok) << "frame " << i;
    PairOutput ref;
    PairFrame pf;
    pf.left = f.left_gray.view();
    pf.right = f.right_gray.view();
    pf.left_color = view_of(f.left);
    pf.right_color = view_of(f.right);
    pf.confidence = in.confidence;
    cpu.process(pf, ref);
    if (!in.confidence) {
      EXPECT_TRUE(r->confidence.empty()) << "frame " << i;
      continue;
    }
    ASSERT_FALSE(r->confidence.empty()) << "frame " << i;
    Gray8 got(640, 480);
    copy_into(r->confidence, got);
    EXPECT_EQ(first_difference(ref.stereo.confidence.data(), got.data(), 640, 480), "")
        << "frame " << i;
    if (HasFailure()) return;
  }
}
