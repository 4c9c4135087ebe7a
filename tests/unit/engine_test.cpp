// The CPU engine behind the Engine interface: ordering, back-pressure, slot release, parameter
// changes, errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "engine.hpp"
#include "plane_scenes.hpp"
#include "stereo/matcher.hpp"

using namespace stereod;
using namespace std::chrono_literals;

namespace {

EngineOptions small_options(int inflight = 2) {
  EngineOptions o;
  o.width = 96;
  o.height = 64;
  o.stereo.max_disparity = 32;
  o.inflight = inflight;
  o.cpu_threads = 2;
  return o;
}

FrameInput frame_of(const SyntheticPair& s, std::uint64_t seq) {
  FrameInput f;
  f.sequence = seq;
  f.capture_time_ns = static_cast<std::int64_t>(seq) * 1000;
  f.left = s.left.view();
  f.right = s.right.view();
  return f;
}

// What the reference matcher gives for the pair with small_options()' parameters.
StereoOutput reference_output(const SyntheticPair& s) {
  CpuStereoMatcher reference(small_options().stereo, 1);
  StereoInput in;
  in.left = s.left.view();
  in.right = s.right.view();
  StereoOutput out;
  reference.compute(in, out);
  return out;
}

}  // namespace

TEST(CpuEngine, ResultsComeInOrderAndEqualTheMatcher) {
  const auto s = make_benchmark_pair(96, 64, 32);
  auto engine = make_engine("cpu", small_options(3));
  EXPECT_EQ(engine->name(), "cpu");
  const StereoOutput expected = reference_output(s);

  std::uint64_t next_submit = 0, next_result = 0;
  while (next_result < 20) {
    if (next_submit < 20 && engine->submit(frame_of(s, next_submit)) == SubmitStatus::kAccepted) {
      ++next_submit;
    }
    if (auto r = engine->poll(1ms)) {
      ASSERT_TRUE(r->ok) << r->error;
      EXPECT_EQ(r->sequence, next_result);
      EXPECT_EQ(r->capture_time_ns, static_cast<std::int64_t>(next_result) * 1000);
      Disparity16 got(r->disparity.width, r->disparity.height);
      copy_into(r->disparity, got);
      EXPECT_EQ(got, expected.left);
      ++next_result;
    }
  }
  EXPECT_EQ(engine->in_flight(), 0);
}

TEST(CpuEngine, BusyWhenEverySlotIsTakenAndFreeAgainWhenReleased) {
  const auto s = make_benchmark_pair(96, 64, 32);
  auto engine = make_engine("cpu", small_options(2));
  ASSERT_EQ(engine->submit(frame_of(s, 0)), SubmitStatus::kAccepted);
  ASSERT_EQ(engine->submit(frame_of(s, 1)), SubmitStatus::kAccepted);
  EXPECT_EQ(engine->submit(frame_of(s, 2)), SubmitStatus::kBusy);
  auto r0 = engine->poll(10s);
  ASSERT_TRUE(r0);
  // Still held by r0: the slot is not free yet.
  EXPECT_EQ(engine->submit(frame_of(s, 2)), SubmitStatus::kBusy);
  const auto view = r0->disparity;
  auto hold = r0->hold;
  r0.reset();
  // The buffer stays valid while a copy of the hold lives (a zero-copy send in progress).
  EXPECT_NE(view(40, 30), 0xFFFF + 1);
  EXPECT_EQ(engine->submit(frame_of(s, 2)), SubmitStatus::kBusy);
  hold.reset();
  EXPECT_EQ(engine->submit(frame_of(s, 2)), SubmitStatus::kAccepted);
  auto r1 = engine->poll(10s);
  ASSERT_TRUE(r1);
  EXPECT_EQ(r1->sequence, 1u);
  auto r2 = engine->poll(10s);
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->sequence, 2u);
  EXPECT_FALSE(engine->poll(1ms));
}

TEST(CpuEngine, SaysWhenAResultIsReady) {
  // on_result: one call per finished frame, each once that frame can be polled, so a consumer
  // can sleep until then instead of polling on a timer.
  const auto s = make_benchmark_pair(96, 64, 32);
  EngineOptions o = small_options(3);
  std::mutex mutex;
  std::condition_variable cv;
  int calls = 0;
  o.on_result = [&] {
    {
      std::lock_guard<std::mutex> lock(mutex);
      ++calls;
    }
    cv.notify_all();
  };
  auto engine = make_engine("cpu", o);
  for (std::uint64_t i = 0; i < 3; ++i) {
    ASSERT_EQ(engine->submit(frame_of(s, i)), SubmitStatus::kAccepted);
  }
  for (int done = 1; done <= 3; ++done) {
    {
      std::unique_lock<std::mutex> lock(mutex);
      ASSERT_TRUE(cv.wait_for(lock, 30s, [&] { return calls >= done; }));
    }
    // Announced: there without waiting.
    const auto r = engine->poll(0ns);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->sequence, static_cast<std::uint64_t>(done - 1));
  }
  std::this_thread::sleep_for(50ms);
  std::lock_guard<std::mutex> lock(mutex);
  EXPECT_EQ(calls, 3);
}

TEST(CpuEngine, ParameterChangesApplyToLaterFrames) {
  const auto s = make_benchmark_pair(96, 64, 32);
  auto engine = make_engine("cpu", small_options(2));
  ASSERT_EQ(engine->submit(frame_of(s, 0)), SubmitStatus::kAccepted);
  StereoParams p = small_options().stereo;
  p.levels = 1;
  engine->set_params(p, BackgroundParams{});
  ASSERT_EQ(engine->submit(frame_of(s, 1)), SubmitStatus::kAccepted);
  auto a = engine->poll(10s);
  ASSERT_TRUE(a);
  auto b = engine->poll(10s);
  ASSERT_TRUE(b);
  EXPECT_EQ(a->levels_used, 3);
  EXPECT_EQ(a->params_generation, 0u);
  EXPECT_EQ(b->levels_used, 1);
  EXPECT_EQ(b->params_generation, 1u);
  // Unusable parameters are refused and the engine keeps working with the old ones.
  p.max_disparity = 500;
  EXPECT_THROW(engine->set_params(p, BackgroundParams{}), ParameterError);
  a.reset();
  b.reset();
  ASSERT_EQ(engine->submit(frame_of(s, 2)), SubmitStatus::kAccepted);
  auto c = engine->poll(10s);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->ok);
  EXPECT_EQ(c->levels_used, 1);
}

TEST(CpuEngine, RejectsWrongSizesAndBadOptions) {
  auto engine = make_engine("cpu", small_options());
  const auto s = make_benchmark_pair(80, 64, 32);
  EXPECT_THROW(engine->submit(frame_of(s, 0)), ParameterError);
  // Color of another size than the gray frame: refused before anything is copied (the CUDA engine
  // always did; the CPU engine copied it and left the mismatch to the background model).
  const auto good = make_benchmark_pair(96, 64, 32);
  RgbImage small_color;
  small_color.resize(48, 32);
  FrameInput f = frame_of(good, 1);
  f.left_color = view_of(small_color);
  f.right_color = view_of(small_color);
  try {
    engine->submit(f);
    ADD_FAILURE() << "color of the wrong size was accepted";
  } catch (const ParameterError& e) {
    EXPECT_NE(std::string(e.what()).find("color"), std::string::npos) << e.what();
  }
  EXPECT_EQ(engine->in_flight(), 0);
  EngineOptions o = small_options();
  o.inflight = 0;
  try {
    make_engine("cpu", o);
    ADD_FAILURE() << "inflight 0 was accepted";
  } catch (const ParameterError& e) {
    EXPECT_EQ(e.parameter(), "inflight");  // the engine's option, not a GPU key
  }
  o = small_options();
  o.width = 20;  // max_disparity 32 does not fit
  EXPECT_THROW(make_engine("cpu", o), ParameterError);
  EXPECT_THROW(make_engine("gpu", small_options()), std::invalid_argument);
}

// Cross-based aggregation, alone or as SGM's cost, runs on the CUDA engine too (cuda/kernels/
// cross.cu; gpu_tests: Gpu.CrossRandomCasesBitExact): nothing about it is refused.
TEST(CudaEngineUnsupported, CrossAggregationRunsOnBoth) {
  StereoParams p;
  EXPECT_FALSE(cuda_engine_unsupported(p));
  p.aggregation = Aggregation::kSgm;
  EXPECT_FALSE(cuda_engine_unsupported(p));
  p.sgm_cost = SgmCost::kCross;
  EXPECT_FALSE(cuda_engine_unsupported(p));
  p.aggregation = Aggregation::kCross;
  for (int n = 1; n <= kMaxCrossIterations; ++n) {
    p.cross_iterations = n;
    EXPECT_FALSE(cuda_engine_unsupported(p));
    p.refine = true;
    EXPECT_FALSE(cuda_engine_unsupported(p));
    p.refine = false;
  }
}

// The multi-step refinement, its region voting and its interpolation, runs on the CUDA engine
// after either aggregation it has.
TEST(CudaEngineUnsupported, RefinementRunsOnBoth) {
  StereoParams p;
  p.refine = true;
  for (const Aggregation a : {Aggregation::kWindow, Aggregation::kSgm}) {
    p.aggregation = a;
    p.refine_interpolate = false;
    EXPECT_FALSE(cuda_engine_unsupported(p));
    p.refine_interpolate = true;
    EXPECT_FALSE(cuda_engine_unsupported(p));
  }
}

// The support-based absorption of the background model (issue 13) runs on the CUDA engine too
// (gpu_tests: Gpu.HaloClassifiedFromTheModelBeforeLearning, Gpu.BackgroundVariantsEqualCpu).
TEST(CudaEngineUnsupported, SupportAbsorptionRunsOnBoth) {
  BackgroundParams b;
  EXPECT_FALSE(cuda_engine_unsupported(StereoParams{}, b));
  b.support_absorption = true;
  EXPECT_FALSE(cuda_engine_unsupported(StereoParams{}, b));
}

// Ghosts seen in depth (background.depth_ghosts) run on the CUDA engine too (gpu_tests:
// Gpu.DepthGhostsEqualCpu).
TEST(CudaEngineUnsupported, DepthGhostsRunOnBoth) {
  BackgroundParams b;
  b.depth_ghosts = true;
  EXPECT_FALSE(cuda_engine_unsupported(StereoParams{}, b));
}

// The CPU engine runs aggregation: cross and the refinement (refine: true), from the start and
// after a retune, with the matcher's result (which is not the window's).
TEST(CpuEngine, RunsCrossAggregationAndRefinementAsTheMatcherDoes) {
  const auto s = make_benchmark_pair(96, 64, 32);
  auto first = [&](Engine& engine, std::uint64_t seq) {
    while (engine.submit(frame_of(s, seq)) != SubmitStatus::kAccepted)
      std::this_thread::sleep_for(1ms);
    std::optional<EngineResult> r;
    while (!(r = engine.poll(10ms))) {
    }
    EXPECT_TRUE(r->ok) << r->error;
    Disparity16 got(r->disparity.width, r->disparity.height);
    copy_into(r->disparity, got);
    return got;
  };
  for (const bool refine : {false, true}) {
    EngineOptions o = small_options();
    if (refine) {
      o.stereo.refine = true;
      // The pair is noise: arms of the default thresholds would hold too few votes.
      o.stereo.cross_tau1 = o.stereo.cross_tau2 = 255;
    } else {
      o.stereo.aggregation = Aggregation::kCross;
    }
    CpuStereoMatcher reference(o.stereo, 1);
    StereoInput in;
    in.left = s.left.view();
    in.right = s.right.view();
    StereoOutput expected;
    reference.compute(in, expected);
    ASSERT_NE(expected.left, reference_output(s).left) << refine << ": the window's result";
    auto engine = make_engine("cpu", o);
    EXPECT_EQ(first(*engine, 0), expected.left) << refine;
    auto window = make_engine("cpu", small_options());
    window->set_params(o.stereo, o.background);
    EXPECT_EQ(first(*window, 1), expected.left) << refine;
  }
}

TEST(CpuEngine, AutoFallsBackToTheCpuWhenThereIsNoGpu) {
  std::string why;
  if (cuda_engine_available(&why)) GTEST_SKIP() << "a GPU is present";
  EXPECT_FALSE(why.empty());
  auto engine = make_engine("auto", small_options());
  EXPECT_EQ(engine->name(), "cpu");
  EXPECT_THROW(make_engine("cuda", small_options()), std::runtime_error);
}

TEST(CpuEngine, DestroyedWhileFramesAreInFlight) {
  // A result the consumer still holds outlives its engine (its buffers stay valid and unchanged),
  // and destroying an engine with frames in flight neither hangs nor crashes.
  const auto s = make_benchmark_pair(96, 64, 32);
  const StereoOutput expected = reference_output(s);

  std::optional<EngineResult> survivor;
  {
    auto engine = make_engine("cpu", small_options(3));
    ASSERT_EQ(engine->submit(frame_of(s, 0)), SubmitStatus::kAccepted);
    ASSERT_EQ(engine->submit(frame_of(s, 1)), SubmitStatus::kAccepted);
    survivor = engine->poll(10s);
    ASSERT_TRUE(survivor);
    ASSERT_TRUE(survivor->ok) << survivor->error;
    ASSERT_EQ(survivor->sequence, 0u);
    ASSERT_EQ(engine->submit(frame_of(s, 2)), SubmitStatus::kAccepted);
    EXPECT_EQ(engine->in_flight(), 2);  // frames 1 and 2 are still in flight when it goes
  }
  Disparity16 got(survivor->disparity.width, survivor->disparity.height);
  copy_into(survivor->disparity, got);
  EXPECT_EQ(got, expected.left);
  survivor.reset();  // releasing after the engine is gone is safe
}

TEST(CpuEngine, StridedInputEqualsContiguousInput) {
  // Frames from GStreamer and from pinned buffers have row padding: the engine must honour the
  // stride of each view, and may not read the padding.
  const auto s = make_benchmark_pair(96, 64, 32);
  const int stride = 96 + 37;
  std::vector<std::uint8_t> left(static_cast<std::size_t>(stride) * 64, 0xAA);
  std::vector<std::uint8_t> right(left.size(), 0x55);
  for (int y = 0; y < 64; ++y) {
    std::copy_n(s.left.row(y), 96, left.data() + y * stride);
    std::copy_n(s.right.row(y), 96, right.data() + y * stride);
  }
  auto run = [&](ImageView<const std::uint8_t> l, ImageView<const std::uint8_t> r) {
    auto engine = make_engine("cpu", small_options());
    FrameInput f = frame_of(s, 0);
    f.left = l;
    f.right = r;
    EXPECT_EQ(engine->submit(f), SubmitStatus::kAccepted);
    auto result = engine->poll(10s);
    EXPECT_TRUE(result && result->ok);
    Disparity16 got(96, 64);
    if (result && result->ok) copy_into(result->disparity, got);
    return got;
  };
  const Disparity16 contiguous = run(s.left.view(), s.right.view());
  const Disparity16 strided = run({left.data(), 96, 64, stride}, {right.data(), 96, 64, stride});
  EXPECT_EQ(strided, contiguous);
  int valid = 0;
  for (int y = 0; y < 64; ++y) {
    for (int x = 0; x < 96; ++x) valid += contiguous(x, y) != kInvalidDisparity;
  }
  EXPECT_GT(valid, 96 * 64 / 2);  // the comparison is between real disparity maps
}

// A map that shifts and rotates slightly: enough that rectified and raw images differ everywhere.
std::shared_ptr<RectificationMap> tilted_map(int w, int h, double angle, double dx) {
  auto m = std::make_shared<RectificationMap>();
  m->resize(w, h);
  const double c = std::cos(angle), s = std::sin(angle);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const double u = w / 2.0 + c * (x - w / 2.0) - s * (y - h / 2.0) + dx;
      const double v = h / 2.0 + s * (x - w / 2.0) + c * (y - h / 2.0);
      m->at(x, y)[0] = quantize_map_coord(u, w);
      m->at(x, y)[1] = quantize_map_coord(v, h);
    }
  }
  return m;
}

TEST(CpuEngine, RectifiesEachFrameBeforeMatching) {
  const auto s = make_benchmark_pair(96, 64, 32);
  EngineOptions o = small_options(2);
  o.left_map = tilted_map(96, 64, 0.02, 1.5);
  o.right_map = tilted_map(96, 64, -0.01, -0.75);
  auto engine = make_engine("cpu", o);
  ASSERT_EQ(engine->submit(frame_of(s, 0)), SubmitStatus::kAccepted);
  auto r = engine->poll(10s);
  ASSERT_TRUE(r && r->ok) << (r ? r->error : "no result");
  Gray8 left, right;
  remap(s.left.view(), *o.left_map, left);
  remap(s.right.view(), *o.right_map, right);
  CpuStereoMatcher reference(o.stereo, 1);
  StereoInput in;
  in.left = left.view();
  in.right = right.view();
  StereoOutput expected;
  reference.compute(in, expected);
  Disparity16 got(r->disparity.width, r->disparity.height);
  copy_into(r->disparity, got);
  EXPECT_EQ(got, expected.left);
  // Maps for one camera only, or of another size, are refused.
  EngineOptions bad = small_options();
  bad.left_map = o.left_map;
  EXPECT_THROW(make_engine("cpu", bad), ParameterError);
  bad.right_map = tilted_map(80, 64, 0, 0);
  bad.left_map = tilted_map(80, 64, 0, 0);
  EXPECT_THROW(make_engine("cpu", bad), ParameterError);
}

// A frame that comes in color only is matched on its BT.601 luma, exactly as if the caller had
// converted it; the right view's map is returned only when asked for.
TEST(CpuEngine, ColorOnlyFramesAreMatchedOnTheirLuma) {
  const auto s = make_benchmark_pair(96, 64, 32);
  // Color whose luma is the pair's gray: the same gray on all three channels.
  RgbImage lc, rc;
  lc.resize(96, 64);
  rc.resize(96, 64);
  for (int y = 0; y < 64; ++y) {
    for (int x = 0; x < 96; ++x) {
      for (int c = 0; c < 3; ++c) {
        lc.row(y)[3 * x + c] = s.left(x, y);
        rc.row(y)[3 * x + c] = s.right(x, y);
      }
    }
  }
  Gray8 luma_left;
  rgb_to_gray(lc, luma_left);
  ASSERT_EQ(luma_left, s.left) << "gray on every channel has itself as luma";
  EngineOptions o = small_options();
  o.background.enabled = false;
  for (bool right_output : {false, true}) {
    o.right_output = right_output;
    auto engine = make_engine("cpu", o);
    FrameInput color_only;
    color_only.left_color = view_of(lc);
    color_only.right_color = view_of(rc);
    ASSERT_TRUE(gray_from_color(color_only));
    ASSERT_EQ(engine->submit(color_only), SubmitStatus::kAccepted);
    auto a = engine->poll(10s);
    ASSERT_TRUE(a && a->ok) << (a ? a->error : "no result");
    ASSERT_EQ(engine->submit(frame_of(s, 1)), SubmitStatus::kAccepted);
    auto b = engine->poll(10s);
    ASSERT_TRUE(b && b->ok);
    Disparity16 da(96, 64), db(96, 64);
    copy_into(a->disparity, da);
    copy_into(b->disparity, db);
    EXPECT_EQ(da, db);
    EXPECT_EQ(a->right_disparity.data != nullptr, right_output);
  }
}

TEST(CpuEngine, AFrameWithoutGrayOrColorIsRefused) {
  auto engine = make_engine("cpu", small_options());
  FrameInput empty;
  EXPECT_THROW(engine->submit(empty), ParameterError);
}
