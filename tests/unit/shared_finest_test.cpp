// The finest level's sharing of aggregations between the views (cuda/kernels/shared_finest.cuh):
// which right pixels are shared, their needs, their slots, and the override's values. Host-side
// arithmetic, no GPU.
#include <gtest/gtest.h>

#include <set>

#include "kernels/shared_finest.cuh"

namespace stereod::cuda {
namespace {

TEST(SharedFinest, NeedsAreTheCandidatesAndOneOnEachSideWithinTheImage) {
  // Width 100, 64 disparities; pixel 20: partners up to x + d <= 99.
  EXPECT_EQ(shared_needs_of(10, 14, 20, 100, 64), pack_range(9, 15));
  EXPECT_EQ(shared_needs_of(0, 4, 20, 100, 64), pack_range(0, 5));      // nothing below 0
  EXPECT_EQ(shared_needs_of(60, 63, 20, 100, 64), pack_range(59, 63));  // nor past nd - 1
  EXPECT_EQ(shared_needs_of(70, 79, 20, 100, 99), pack_range(69, 79));  // nor past the partner
}

TEST(SharedFinest, PixelsWhoseWindowsReachASideOrWhoseNeedsAreWideAreNotShared) {
  const int w = 100, nd = 64;
  EXPECT_EQ(shared_cands_of(5, 1, 20, w, nd), kSharedNone);  // no candidates
  EXPECT_EQ(shared_cands_of(10, 14, 20, w, nd), pack_range(10, 14));
  // Its windows reach 4 columns to the left: x = 3 reads past the left side.
  EXPECT_EQ(shared_cands_of(10, 14, 3, w, nd), kNotShared);
  EXPECT_EQ(shared_cands_of(10, 14, 4, w, nd), pack_range(10, 14));
  // The partner's windows reach 4 columns to the right of x + need_hi (15 here).
  EXPECT_EQ(shared_cands_of(10, 14, w - 1 - 4 - 15, w, nd), pack_range(10, 14));
  EXPECT_EQ(shared_cands_of(10, 14, w - 4 - 15, w, nd), kNotShared);
  // Needs of kRightSlots fit; one more does not.
  EXPECT_NE(shared_cands_of(11, 11 + kRightSlots - 3, 20, w, nd), kNotShared);
  EXPECT_EQ(shared_cands_of(11, 11 + kRightSlots - 2, 20, w, nd), kNotShared);
}

TEST(SharedFinest, EveryNeedOfASharedPixelHasASlotOfItsOwn) {
  for (int lo = 0; lo < 40; ++lo) {
    for (int hi = lo; hi < lo + kRightSlots; ++hi) {
      const std::uint32_t cands = shared_cands_of(lo, hi, 10, 200, 64);
      if (cands == kNotShared) continue;
      const std::uint32_t needs = shared_needs_of(lo, hi, 10, 200, 64);
      std::set<int> slots;
      for (int d = range_lo_of(needs); d <= range_hi_of(needs); ++d) {
        ASSERT_GE(right_slot(d), 0);
        ASSERT_LT(right_slot(d), kRightSlots);
        slots.insert(right_slot(d));
      }
      EXPECT_EQ(static_cast<int>(slots.size()), range_hi_of(needs) - range_lo_of(needs) + 1)
          << lo << ".." << hi;
    }
  }
}

// The override takes 0 or 1 only: before, any value but "0" (such as "off") turned sharing on.
TEST(SharedFinest, TheOverrideTakesZeroOrOneAndRefusesAnythingElse) {
  bool refused = true;
  EXPECT_EQ(shared_finest_override(nullptr, &refused), -1);
  EXPECT_FALSE(refused);
  EXPECT_EQ(shared_finest_override("0", &refused), 0);
  EXPECT_FALSE(refused);
  EXPECT_EQ(shared_finest_override("1", &refused), 1);
  EXPECT_FALSE(refused);
  for (const char* bad : {"off", "on", "", "2", "1 ", "true", "00"}) {
    EXPECT_EQ(shared_finest_override(bad, &refused), -1) << '"' << bad << '"';
    EXPECT_TRUE(refused) << '"' << bad << '"';
  }
}

}  // namespace
}  // namespace stereod::cuda
