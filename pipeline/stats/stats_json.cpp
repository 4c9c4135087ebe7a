// The stats topic's JSON (docs/PROTOCOL.md "Stats topic").
#include <limits>

#include "publish/json_reader.hpp"
#include "publish/protocol.hpp"
#include "stats/stats.hpp"

namespace stereod::stats {

using publish::Json;
using publish::JsonReader;
using publish::ProtocolError;

namespace {

constexpr std::size_t kMaxStatsBytes = 1 << 20;
constexpr std::size_t kMaxPairs = 1024;
constexpr std::size_t kMaxStages = 64;

Json drops_json(const DropCounts& d) {
  Json j = Json::object();
  for (std::size_t i = 0; i < kDropReasons; ++i) {
    j[std::string(drop_reason_name(static_cast<DropReason>(i)))] = d[i];
  }
  return j;
}

DropCounts read_drops(const JsonReader& r, std::string_view key) {
  const JsonReader d = r.object(key);
  DropCounts out{};
  for (std::size_t i = 0; i < kDropReasons; ++i) {
    out[i] = d.unsigned_integer(drop_reason_name(static_cast<DropReason>(i)));
  }
  return out;
}

double non_negative(const JsonReader& r, std::string_view key) {
  const double v = r.number(key);
  if (v < 0) throw ProtocolError(r.path_of(key) + ": negative");
  return v;
}

PairStats read_pair(const JsonReader& r, std::string name) {
  PairStats p;
  p.pair = std::move(name);
  p.frames = r.unsigned_integer("frames");
  p.fps = non_negative(r, "fps");
  p.frames_total = r.unsigned_integer("frames_total");
  p.drops = read_drops(r, "drops");
  p.drops_total = read_drops(r, "drops_total");
  p.errors_total = r.unsigned_integer("errors_total");
  p.last_error = r.string("last_error");
  const JsonReader latency = r.object("latency_ms", kMaxStages);
  for (auto it = latency.json().begin(); it != latency.json().end(); ++it) {
    const JsonReader s = latency.object(it.key());
    StageSummary summary{it.key(), {}};
    summary.latency.count = s.unsigned_integer("count");
    summary.latency.p50 = non_negative(s, "p50");
    summary.latency.p90 = non_negative(s, "p90");
    summary.latency.p99 = non_negative(s, "p99");
    summary.latency.max = non_negative(s, "max");
    p.latency.push_back(std::move(summary));
  }
  return p;
}

}  // namespace

std::string_view drop_reason_name(DropReason reason) {
  switch (reason) {
    case DropReason::kSync:
      return "sync";
    case DropReason::kEngineBusy:
      return "engine_busy";
    case DropReason::kSend:
      return "send";
  }
  return "unknown";
}

std::string encode_stats(const StatsSnapshot& s) {
  Json j;
  j["version"] = publish::protocol_version_json();
  j["time_ns"] = s.time_ns;
  j["interval_s"] = s.interval_s;
  Json pairs = Json::object();
  for (const PairStats& p : s.pairs) {
    Json latency = Json::object();
    for (const StageSummary& st : p.latency) {
      latency[st.stage] = {{"count", st.latency.count},
                           {"p50", st.latency.p50},
                           {"p90", st.latency.p90},
                           {"p99", st.latency.p99},
                           {"max", st.latency.max}};
    }
    pairs[p.pair] = {{"frames", p.frames},
                     {"fps", p.fps},
                     {"frames_total", p.frames_total},
                     {"drops", drops_json(p.drops)},
                     {"drops_total", drops_json(p.drops_total)},
                     {"errors_total", p.errors_total},
                     {"last_error", p.last_error},
                     {"latency_ms", std::move(latency)}};
  }
  j["pairs"] = std::move(pairs);
  const PublisherStats& q = s.publisher;
  j["publisher"] = {{"queued", q.queued},
                    {"queue_capacity", q.queue_capacity},
                    {"frames_sent_total", q.frames_sent_total},
                    {"zero_copy_payloads_total", q.zero_copy_payloads_total},
                    {"copied_payloads_total", q.copied_payloads_total}};
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

StatsSnapshot decode_stats(std::string_view json) {
  const Json j = publish::parse_json_object(json, "stats", kMaxStatsBytes);
  const JsonReader r(j, "stats");
  publish::read_protocol_version(r);
  StatsSnapshot s;
  s.time_ns = r.integer("time_ns", 0, std::numeric_limits<std::int64_t>::max());
  s.interval_s = non_negative(r, "interval_s");
  const JsonReader pairs = r.object("pairs", kMaxPairs);
  for (auto it = pairs.json().begin(); it != pairs.json().end(); ++it) {
    s.pairs.push_back(read_pair(pairs.object(it.key()), it.key()));
  }
  const JsonReader q = r.object("publisher");
  s.publisher.queued = q.unsigned_integer("queued");
  s.publisher.queue_capacity = q.unsigned_integer("queue_capacity");
  s.publisher.frames_sent_total = q.unsigned_integer("frames_sent_total");
  s.publisher.zero_copy_payloads_total = q.unsigned_integer("zero_copy_payloads_total");
  s.publisher.copied_payloads_total = q.unsigned_integer("copied_payloads_total");
  return s;
}

}  // namespace stereod::stats
