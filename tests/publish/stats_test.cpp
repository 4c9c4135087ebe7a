// The statistics aggregator and the stats topic's JSON.
#include <gtest/gtest.h>

#include "publish/json_reader.hpp"
#include "stats/aggregator.hpp"
#include "stats/stats.hpp"

using namespace stereod;
using namespace stereod::stats;
using Clock = StatsAggregator::Clock;

namespace {

const PairStats& pair_of(const StatsSnapshot& s, const std::string& name) {
  for (const auto& p : s.pairs) {
    if (p.pair == name) return p;
  }
  throw std::runtime_error("no pair " + name);
}

const LatencySummary& stage_of(const PairStats& p, const std::string& stage) {
  for (const auto& s : p.latency) {
    if (s.stage == stage) return s.latency;
  }
  throw std::runtime_error("no stage " + stage);
}

}  // namespace

TEST(Percentiles, NearestRank) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // 1..100, unsorted
  const LatencySummary s = summarize(v);
  EXPECT_EQ(s.count, 100u);
  EXPECT_EQ(s.p50, 50);
  EXPECT_EQ(s.p90, 90);
  EXPECT_EQ(s.p99, 99);
  EXPECT_EQ(s.max, 100);
  std::vector<double> one{4.5};
  const LatencySummary o = summarize(one);
  EXPECT_EQ(o.p50, 4.5);
  EXPECT_EQ(o.p99, 4.5);
  std::vector<double> none;
  EXPECT_EQ(summarize(none).count, 0u);
}

TEST(Aggregator, CountsFramesDropsAndLatenciesPerPairAndInterval) {
  StatsAggregator agg;
  const auto t0 = Clock::now();
  agg.snapshot(t0, 1);  // starts a known interval
  agg.add_pair("idle");
  for (int i = 1; i <= 20; ++i) {
    agg.record_frame("front", {{"engine", static_cast<double>(i)}, {"publish", 0.5}});
  }
  agg.record_drop("front", DropReason::kSync, 2);
  agg.record_drop("front", DropReason::kEngineBusy);
  agg.record_drop("front", DropReason::kSend, 3);
  agg.record_error("front", "source went away");
  const StatsSnapshot s = agg.snapshot(t0 + std::chrono::seconds(2), 99);
  EXPECT_EQ(s.time_ns, 99);
  EXPECT_DOUBLE_EQ(s.interval_s, 2.0);
  ASSERT_EQ(s.pairs.size(), 2u);
  const PairStats& f = pair_of(s, "front");
  EXPECT_EQ(f.frames, 20u);
  EXPECT_DOUBLE_EQ(f.fps, 10.0);
  EXPECT_EQ(f.drops[static_cast<int>(DropReason::kSync)], 2u);
  EXPECT_EQ(f.drops[static_cast<int>(DropReason::kEngineBusy)], 1u);
  EXPECT_EQ(f.drops[static_cast<int>(DropReason::kSend)], 3u);
  EXPECT_EQ(f.errors_total, 1u);
  EXPECT_EQ(f.last_error, "source went away");
  const LatencySummary& e = stage_of(f, "engine");
  EXPECT_EQ(e.count, 20u);
  EXPECT_EQ(e.p50, 10);
  EXPECT_EQ(e.p90, 18);
  EXPECT_EQ(e.p99, 20);
  EXPECT_EQ(e.max, 20);
  EXPECT_EQ(stage_of(f, "publish").p50, 0.5);
  const PairStats& idle = pair_of(s, "idle");  // listed, with zeros
  EXPECT_EQ(idle.frames, 0u);
  EXPECT_EQ(idle.fps, 0.0);

  // The next interval starts from zero; totals carry on.
  agg.record_frame("front", {{"engine", 100.0}});
  const StatsSnapshot s2 = agg.snapshot(t0 + std::chrono::seconds(3), 100);
  const PairStats& f2 = pair_of(s2, "front");
  EXPECT_EQ(f2.frames, 1u);
  EXPECT_EQ(f2.frames_total, 21u);
  EXPECT_EQ(f2.drops[static_cast<int>(DropReason::kSend)], 0u);
  EXPECT_EQ(f2.drops_total[static_cast<int>(DropReason::kSend)], 3u);
  EXPECT_EQ(stage_of(f2, "engine").count, 1u);
  EXPECT_EQ(stage_of(f2, "engine").p50, 100);
  EXPECT_EQ(stage_of(f2, "publish").count, 0u);  // a quiet stage keeps its place
  ASSERT_TRUE(agg.last_snapshot());
  EXPECT_EQ(agg.last_snapshot()->time_ns, 100);

  agg.remove_pair("idle");
  EXPECT_EQ(agg.snapshot().pairs.size(), 1u);
}

TEST(Aggregator, ReservoirKeepsCountAndMaxExact) {
  StatsAggregator agg(64);
  for (int i = 0; i < 10000; ++i) {
    agg.record_frame("p", {{"s", i == 5000 ? 1000.0 : static_cast<double>(i % 10)}});
  }
  const StatsSnapshot s = agg.snapshot();
  const LatencySummary& l = stage_of(pair_of(s, "p"), "s");
  EXPECT_EQ(l.count, 10000u);
  EXPECT_EQ(l.max, 1000);
  EXPECT_GE(l.p50, 2);  // a uniform sample of 0..9: the median is near 4.5
  EXPECT_LE(l.p50, 7);
}

TEST(StatsJson, RoundTrip) {
  StatsSnapshot s;
  s.time_ns = 1700000000000000000;
  s.interval_s = 1.0005;
  PairStats p;
  p.pair = "front";
  p.frames = 30;
  p.fps = 29.98;
  p.drops = {1, 2, 3};
  p.frames_total = 3000;
  p.drops_total = {10, 20, 30};
  p.errors_total = 4;
  p.last_error = "camera cam0: EOS";
  p.latency.push_back({"engine", {30, 8.5, 9.25, 11.0, 12.5}});
  p.latency.push_back({"total", {30, 10.5, 11.25, 13.0, 14.5}});
  s.pairs.push_back(p);
  s.publisher = {1, 16, 3000, 5000, 12};
  const StatsSnapshot back = decode_stats(encode_stats(s));
  EXPECT_EQ(back.time_ns, s.time_ns);
  EXPECT_EQ(back.interval_s, s.interval_s);
  ASSERT_EQ(back.pairs.size(), 1u);
  const PairStats& b = back.pairs[0];
  EXPECT_EQ(b.pair, "front");
  EXPECT_EQ(b.frames, 30u);
  EXPECT_EQ(b.fps, 29.98);
  EXPECT_EQ(b.drops, p.drops);
  EXPECT_EQ(b.drops_total, p.drops_total);
  EXPECT_EQ(b.frames_total, 3000u);
  EXPECT_EQ(b.errors_total, 4u);
  EXPECT_EQ(b.last_error, p.last_error);
  ASSERT_EQ(b.latency.size(), 2u);
  EXPECT_EQ(b.latency[1].stage, "total");
  EXPECT_EQ(b.latency[1].latency.p99, 13.0);
  EXPECT_EQ(back.publisher.queue_capacity, 16u);
  EXPECT_EQ(back.publisher.copied_payloads_total, 12u);
  const auto j = publish::Json::parse(encode_stats(s));
  EXPECT_EQ(j["pairs"]["front"]["drops"]["engine_busy"], 2);
}

TEST(StatsJson, MalformedIsNamed) {
  auto expect_error = [](const std::string& text, const std::string& fragment) {
    try {
      decode_stats(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const publish::ProtocolError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  StatsSnapshot s;
  PairStats p;
  p.pair = "a";
  s.pairs.push_back(p);
  auto j = publish::Json::parse(encode_stats(s));
  j["pairs"]["a"]["drops"].erase("sync");
  expect_error(j.dump(), "stats.pairs.a.drops.sync: missing");
  j = publish::Json::parse(encode_stats(s));
  j["version"]["major"] = 3;
  expect_error(j.dump(),
               "protocol 3." + std::to_string(publish::kProtocolMinor) + " is not supported");
  j = publish::Json::parse(encode_stats(s));
  j["pairs"]["a"]["fps"] = -1;
  expect_error(j.dump(), "stats.pairs.a.fps: negative");
  expect_error("nope", "stats: not valid JSON");
}
