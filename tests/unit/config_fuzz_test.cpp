// The daemon's configuration loader on a thousand randomly mutated versions of real configuration
// files (fixed seed): each one loads or is refused with issues, none crashes. The same source is
// also built with AddressSanitizer and UndefinedBehaviorSanitizer (config_fuzz_asan).
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "daemon_config.hpp"

using namespace stereod;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// One random edit: the kinds of damage hand-edited YAML suffers, and worse.
std::string mutate(std::string text, std::mt19937& rng) {
  static const std::vector<std::string> tokens = {":",
                                                  "-",
                                                  "[",
                                                  "]",
                                                  "{",
                                                  "}",
                                                  "'",
                                                  "\"",
                                                  "#",
                                                  "\n",
                                                  "  ",
                                                  "\t",
                                                  "0",
                                                  "-1",
                                                  "1e308",
                                                  "nan",
                                                  "true",
                                                  "null",
                                                  "~",
                                                  "&a",
                                                  "*a",
                                                  "!!str",
                                                  "99999999999999999999",
                                                  "levels",
                                                  "cameras",
                                                  "pairs",
                                                  "synthetic://",
                                                  "test://?num_buffers=",
                                                  "%",
                                                  "\\",
                                                  "\xff",
                                                  "max_disparity: 0"};
  std::uniform_int_distribution<std::size_t> pos(0, text.empty() ? 0 : text.size() - 1);
  switch (rng() % 7) {
    case 0:  // delete a span
      if (!text.empty()) text.erase(pos(rng), 1 + rng() % 12);
      break;
    case 1:  // insert a token
      text.insert(pos(rng), tokens[rng() % tokens.size()]);
      break;
    case 2:  // flip a byte
      if (!text.empty()) text[pos(rng)] = static_cast<char>(rng() & 0xFF);
      break;
    case 3: {  // duplicate a line
      const std::size_t a = text.rfind('\n', pos(rng));
      const std::size_t b = text.find('\n', a == std::string::npos ? 0 : a + 1);
      if (a != std::string::npos && b != std::string::npos) text.insert(b, text.substr(a, b - a));
      break;
    }
    case 4: {  // swap two characters far apart
      if (text.size() > 2) std::swap(text[pos(rng)], text[pos(rng)]);
      break;
    }
    case 5:  // truncate
      text.resize(pos(rng));
      break;
    default: {  // replace a number with another
      const std::size_t p = text.find_first_of("0123456789", pos(rng));
      if (p != std::string::npos)
        text.replace(p, 1, std::to_string(static_cast<int>(rng() % 200000) - 1000));
      break;
    }
  }
  return text;
}

}  // namespace

TEST(ConfigFuzz, ThousandMutatedFilesLoadOrAreRefused) {
  const std::vector<std::string> seeds = {
      read_file(STEREOD_CONFIG_DIR "/stereod.yaml"),
      read_file(STEREOD_CONFIG_DIR "/examples/usb-pair.yaml"),
      read_file(STEREOD_CONFIG_DIR "/examples/replay-images.yaml")};
  for (const auto& s : seeds) ASSERT_FALSE(s.empty());
  std::mt19937 rng(20261121);
  int loaded = 0, refused = 0;
  for (int i = 0; i < 1000; ++i) {
    std::string text = seeds[static_cast<std::size_t>(i) % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 6);
    for (int e = 0; e < edits; ++e) text = mutate(text, rng);
    try {
      const DaemonConfig c = parse_daemon_config(text, "mutant" + std::to_string(i) + ".yaml",
                                                 STEREOD_CONFIG_DIR "/examples");
      ++loaded;
      EXPECT_FALSE(c.pairs.empty());
    } catch (const ConfigError& e) {
      ++refused;
      ASSERT_FALSE(e.issues().empty());
      for (const auto& issue : e.issues()) {
        ASSERT_FALSE(issue.message.empty()) << "mutant " << i;
        ASSERT_EQ(issue.file, "mutant" + std::to_string(i) + ".yaml");
      }
    }
  }
  std::printf("%d mutants loaded, %d refused with issues\n", loaded, refused);
  EXPECT_GT(refused, 300);
  EXPECT_GT(loaded, 10);
}
