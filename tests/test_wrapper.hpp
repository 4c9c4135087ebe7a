// The project's programs that the tests start (stereod, stereod-sub, stereod-synth). Under
// emulation (tools/check-arm64.sh runs the arm64 build under qemu-user) a started program must go
// through the emulator too: $STEREOD_TEST_WRAPPER names it ("qemu-aarch64 -L ROOT"), and these
// put it in front. Without it they change nothing.
#pragma once

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace stereod::test {

inline std::vector<std::string> wrapper_words() {
  std::vector<std::string> words;
  const char* w = std::getenv("STEREOD_TEST_WRAPPER");
  std::istringstream in(w ? w : "");
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// argv for execv/posix_spawn (argv[0] a path): the wrapper's words first.
inline std::vector<std::string> wrapped(std::vector<std::string> argv) {
  std::vector<std::string> out = wrapper_words();
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

// A shell command line: the wrapper's words first.
inline std::string wrapped_command(const std::string& command) {
  std::string out;
  for (const auto& w : wrapper_words()) out += w + " ";
  return out + command;
}

}  // namespace stereod::test
