// The reload diff through the parameter structs' field lists (StereoParams::tie_fields,
// BackgroundParams::tie_fields): every field, changed on its own, retunes the pair, and each list
// holds every field of its struct. A field added to a struct but not to its list would be a
// setting that a reload silently does not apply.
#include <gtest/gtest.h>

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "background/background_params.hpp"
#include "daemon_config.hpp"
#include "stereo/params.hpp"

using namespace stereod;

namespace {

// The size a struct holding exactly these members in this order has (C++ layout rules: each
// member at the next multiple of its alignment, the whole rounded up to the largest alignment).
template <typename... Ts>
constexpr std::size_t layout_size() {
  std::size_t offset = 0, align = 1;
  ((offset = (offset + alignof(Ts) - 1) / alignof(Ts) * alignof(Ts) + sizeof(Ts),
    align = alignof(Ts) > align ? alignof(Ts) : align),
   ...);
  return (offset + align - 1) / align * align;
}

template <typename Tuple>
struct TupleLayout;
template <typename... Refs>
struct TupleLayout<std::tuple<Refs...>> {
  static constexpr std::size_t size = layout_size<std::remove_reference_t<Refs>...>();
};

template <typename Params>
constexpr std::size_t listed_layout_size() {
  using Tuple = decltype(Params::tie_fields(std::declval<Params&>()));
  return TupleLayout<Tuple>::size;
}

// A different valid-looking value of the same type.
template <typename T>
void change(T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    v = !v;
  } else if constexpr (std::is_enum_v<T>) {
    v = static_cast<T>(static_cast<std::underlying_type_t<T>>(v) ^ 1);
  } else if constexpr (std::is_floating_point_v<T>) {
    const T was = v;
    v = v * 0.5 + 0.125;
    if (v == was) v = was * 0.5;  // 0.25 (depth_ghost_farther's default) is the map's fixed point
  } else {
    v = v + 1;
  }
}

const char* kConfig =
    "cameras:\n"
    "  - {name: a, source: 'test://', width: 64, height: 48}\n"
    "  - {name: b, source: 'test://', width: 64, height: 48}\n"
    "pairs:\n"
    "  - {name: p, left: a, right: b, stereo: {max_disparity: 16}}\n";

// Changes field I of the pair's `Params` alone and checks that the diff retunes the pair (and
// does nothing else), then goes on to field I + 1.
template <std::size_t I, typename Params, typename Get>
void each_field_retunes(const DaemonConfig& base, Get get) {
  using Tuple = decltype(Params::tie_fields(std::declval<Params&>()));
  if constexpr (I < std::tuple_size_v<Tuple>) {
    DaemonConfig changed = base;
    Params& p = get(changed);
    change(std::get<I>(Params::tie_fields(p)));
    DaemonConfig copy = base;
    EXPECT_FALSE(p == get(copy)) << "field " << I;
    const ConfigDiff d = diff_configs(base, changed);
    EXPECT_EQ(d.pairs_retuned, std::vector<std::string>{"p"}) << "field " << I;
    EXPECT_TRUE(d.pairs_rebuilt.empty()) << "field " << I;
    each_field_retunes<I + 1, Params>(base, get);
  }
}

}  // namespace

TEST(ParamsFields, EachListHoldsEveryFieldOfItsStruct) {
  static_assert(listed_layout_size<StereoParams>() == sizeof(StereoParams),
                "StereoParams has a field that tie_fields does not list");
  static_assert(listed_layout_size<BackgroundParams>() == sizeof(BackgroundParams),
                "BackgroundParams has a field that tie_fields does not list");
  EXPECT_EQ(std::tuple_size_v<decltype(StereoParams::tie_fields(std::declval<StereoParams&>()))>,
            41u);
  EXPECT_EQ(
      std::tuple_size_v<decltype(BackgroundParams::tie_fields(std::declval<BackgroundParams&>()))>,
      22u);
}

TEST(ParamsFields, ChangingAnyStereoOrBackgroundFieldRetunesThePair) {
  const DaemonConfig base = parse_daemon_config(kConfig, "t.yaml");
  ASSERT_EQ(base.pairs.size(), 1u);
  EXPECT_TRUE(diff_configs(base, base).empty());
  each_field_retunes<0, StereoParams>(
      base, [](DaemonConfig& c) -> StereoParams& { return c.pairs[0].stereo; });
  each_field_retunes<0, BackgroundParams>(
      base, [](DaemonConfig& c) -> BackgroundParams& { return c.pairs[0].background; });
}
