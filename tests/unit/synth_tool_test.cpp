// stereod-synth as a user runs it, and the Middlebury background loader it uses.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "disparity_io.hpp"
#include "middlebury_background.hpp"
#include "synthetic/synthetic_scene.hpp"
#include "test_wrapper.hpp"

using namespace stereod;
namespace fs = std::filesystem;

namespace {

// Runs stereod-synth with `args` (output discarded); returns its exit code.
int run_synth(const std::string& args) {
  const std::string command =
      test::wrapped_command(std::string(STEREOD_SYNTH_EXE) + " " + args + " >/dev/null 2>&1");
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A fresh folder per test: CTest may run tests in parallel.
fs::path scratch(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("stereod_synth_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

// A tiny sequence: the same options on the command line and for the scene.
const char* const kTinyArgs = " --size 64x48 --min-disparity 2 --max-disparity 20";
SyntheticOptions tiny_options() {
  SyntheticOptions o;
  o.width = 64;
  o.height = 48;
  o.min_disparity = 2;
  o.max_disparity = 20;
  return o;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST(MiddleburyBackground, LoadsTheColourPairAndScaledGroundTruth) {
  const std::string dir = std::string(STEREOD_TEST_DATA) + "/middlebury_v2/cones";
  const SyntheticBackground bg = load_middlebury_background(dir);
  ASSERT_EQ(bg.left.width, 450);
  ASSERT_EQ(bg.left.height, 375);
  EXPECT_EQ(bg.right.width, 450);
  EXPECT_EQ(bg.left_disparity.width(), 450);
  // 2003 ground truth: stored value / 4, 0 = unknown.
  const Gray8 raw = load_mask(dir + "/disp2.png");
  for (std::size_t k = 0; k < raw.size(); ++k) {
    const float d = bg.left_disparity.data()[k];
    if (raw.data()[k] == 0) {
      ASSERT_TRUE(std::isinf(d));
    } else {
      ASSERT_EQ(d, raw.data()[k] / 4.0f);
    }
  }
  // Colour, not grey: the channels differ somewhere.
  bool coloured = false;
  for (std::size_t k = 0; k + 2 < bg.left.pixels.size() && !coloured; k += 3) {
    coloured = bg.left.pixels[k] != bg.left.pixels[k + 1];
  }
  EXPECT_TRUE(coloured);
  EXPECT_THROW(load_middlebury_background(STEREOD_TEST_DATA), std::runtime_error);
}

TEST(StereodSynth, WritesFramesTruthMasksAndDescription) {
  const fs::path out = scratch("write");
  ASSERT_EQ(run_synth("--out " + out.string() + kTinyArgs + " --frames 3 --start 5 --seed 9"), 0);
  SyntheticOptions o = tiny_options();
  o.seed = 9;
  const SyntheticScene scene(o);
  SyntheticFrame f;
  for (int i = 5; i < 8; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "%06d", i);
    const std::string n = name;
    scene.render(i, f);
    EXPECT_EQ(load_rgb((out / ("left_" + n + ".png")).string()).pixels, f.left.pixels);
    EXPECT_EQ(load_rgb((out / ("right_" + n + ".png")).string()).pixels, f.right.pixels);
    EXPECT_EQ(read_pfm((out / ("disparity_" + n + ".pfm")).string()), f.disparity);
    EXPECT_EQ(load_mask((out / ("mask_" + n + ".png")).string()), f.mask);
  }
  EXPECT_FALSE(fs::exists(out / "left_000004.png"));
  EXPECT_FALSE(fs::exists(out / "left_000008.png"));
  const std::string yaml = read_text(out / "sequence.yaml");
  EXPECT_NE(yaml.find("width: 64"), std::string::npos);
  EXPECT_NE(yaml.find("frames: 3"), std::string::npos);
  EXPECT_NE(yaml.find("first_frame: 5"), std::string::npos);
  EXPECT_NE(yaml.find("max_disparity: 20"), std::string::npos);
  EXPECT_NE(yaml.find("seed: 9"), std::string::npos);
  EXPECT_NE(yaml.find("left: left_%06d.png"), std::string::npos);
  fs::remove_all(out);
}

TEST(StereodSynth, GreyOutputIsOneChannel) {
  const fs::path out = scratch("grey");
  ASSERT_EQ(run_synth("--out " + out.string() + kTinyArgs + " --frames 1 --gray"), 0);
  SyntheticOptions o = tiny_options();
  o.color = false;
  SyntheticFrame f;
  SyntheticScene(o).render(0, f);
  EXPECT_EQ(load_mask((out / "left_000000.png").string()), f.left_gray);
  EXPECT_EQ(load_mask((out / "right_000000.png").string()), f.right_gray);
  fs::remove_all(out);
}

TEST(StereodSynth, BadOptionsExitWithTwo) {
  const std::string out = "--out " + scratch("bad").string();
  EXPECT_EQ(run_synth(out + " --objects -1"), 2);
  EXPECT_EQ(run_synth(out + " --size 10x"), 2);
  EXPECT_EQ(run_synth(out + " --size 8x8"), 2);
  EXPECT_EQ(run_synth(out + " --noise abc"), 2);
  EXPECT_EQ(run_synth(out + " --flicker 0.7"), 2);
  EXPECT_EQ(run_synth(out + " --frames 0"), 2);
  EXPECT_EQ(run_synth(out + " --max-disparity 400"), 2);
  EXPECT_EQ(run_synth(out + " --seed -3"), 2);
  EXPECT_EQ(run_synth(out + " --background /nonexistent"), 2);
  EXPECT_EQ(run_synth(out + " --background " + STEREOD_TEST_DATA), 2);  // not one scene
  EXPECT_EQ(run_synth(out + " --unknown"), 2);
  EXPECT_EQ(run_synth("--frames 3"), 2);  // no --out
  EXPECT_EQ(run_synth("--help"), 0);
}

// --vertical writes the third view, the same pixels the scene renders; --texture and --vertical
// refuse names they do not know.
TEST(SynthTool, WritesTheThirdView) {
  const fs::path dir = scratch("vertical");
  ASSERT_EQ(run_synth("--out " + dir.string() + kTinyArgs +
                      " --frames 2 --vertical above --texture vbars"),
            0);
  EXPECT_TRUE(fs::exists(dir / "vertical_000001.png"));
  const std::string yaml = read_text(dir / "sequence.yaml");
  EXPECT_NE(yaml.find("vertical: vertical_%06d.png"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("texture: vbars"), std::string::npos) << yaml;
  SyntheticOptions o = tiny_options();
  o.vertical = SyntheticVertical::kAbove;
  o.texture = SyntheticTexture::kVerticalBars;
  SyntheticFrame f;
  SyntheticScene(o).render(1, f);
  const RgbImage written = load_rgb((dir / "vertical_000001.png").string());
  EXPECT_EQ(written.pixels, f.vertical.pixels);
  EXPECT_NE(run_synth("--out " + dir.string() + kTinyArgs + " --vertical sideways"), 0);
  EXPECT_NE(run_synth("--out " + dir.string() + kTinyArgs + " --texture plaid"), 0);
  fs::remove_all(dir);
}
