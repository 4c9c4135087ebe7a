// The CPU matcher against the naive oracle (tests/unit/naive_matcher.hpp) on random cases, without
// GoogleTest or any library: what tools/arm64/check-cpu-engine.sh cross-compiles for arm64 and
// runs under qemu, so the NEON build of the vector loops is checked bit for bit without a board.
#include <cstdio>
#include <cstdlib>

#include "cpu_cases.hpp"
#include "naive_matcher.hpp"
#include "stereo/matcher.hpp"

using namespace stereod;
using namespace stereod::testing;

int main(int argc, char** argv) {
  const int cases = argc > 1 ? std::atoi(argv[1]) : 100;
  int differ = 0;
  for (int i = 0; i < cases; ++i) {
    const MatcherCase c = random_matcher_case(5000 + static_cast<std::uint64_t>(i), 72, 56);
    const NaiveResult want =
        naive_match(c.params, c.left, c.right, c.left_foreground, c.right_foreground);
    CpuStereoMatcher matcher(c.params);
    StereoOutput got;
    matcher.compute(stereo_input(c), got);
    bool same = got.left == want.left && got.right == want.right &&
                got.levels_used == static_cast<int>(want.winners[0].size());
    for (int s = 0; same && s < got.levels_used; ++s) {
      for (int v = 0; v < 2; ++v)
        same = same && matcher.level_disparity(s, v) == want.winners[v][s];
    }
    if (!same) {
      ++differ;
      std::printf("%s: the CPU matcher differs from the naive one\n", c.name.c_str());
    }
  }
  std::printf("%d of %d random cases bit-exact\n", cases - differ, cases);
  return differ == 0 ? 0 : 1;
}
