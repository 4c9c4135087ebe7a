// The decoders on many randomly corrupted messages (fixed seed, so a failure reproduces): each
// either decodes into views that lie inside the message, or throws ProtocolError; nothing else,
// no crash, and no sanitizer finding when built with -DSTEREOD_SANITIZE=ON.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "publish/frame_decode.hpp"
#include "publish_fixtures.hpp"
#include "stats/stats.hpp"
#include "touch.hpp"

using namespace stereod;
using test::touch;
using namespace stereod::publish;

namespace {

struct Message {
  std::vector<std::string> parts;
};

// A valid message of random size and content.
Message random_message(std::mt19937& rng) {
  std::uniform_int_distribution<int> side(1, 24);
  FrameHeader h;
  h.info = test::full_info("pair" + std::to_string(rng() % 3), rng());
  h.publish_ns = 5;
  const int w = side(rng), ht = side(rng);
  if (rng() % 8 == 0) {
    h.info.error = "failed";
  } else {
    const std::uint64_t pad = 2 * (rng() % 3);
    h.payloads.push_back({"disparity", "disp16q4", w, ht, 2ull * w + pad, kDisparityInvalid});
    if (rng() % 2) h.payloads.push_back({"mask", "mask8", w, ht, std::uint64_t(w), std::nullopt});
    if (rng() % 2) {
      h.payloads.push_back({"depth", "depth16mm", w, ht, 2ull * w, kDepthInvalid});
    }
  }
  Message m;
  m.parts.push_back(frame_topic(h.info.pair));
  m.parts.push_back(encode_header(h));
  for (const auto& p : h.payloads) {
    std::string bytes(p.bytes(), '\0');
    for (auto& c : bytes) c = static_cast<char>(rng());
    m.parts.push_back(bytes);
  }
  return m;
}

// JSON-ish text to splice into a header: numbers, types and structures a bad writer might send.
const char* const kSplices[] = {"-1",
                                "0",
                                "1e308",
                                "-1e308",
                                "18446744073709551616",
                                "9223372036854775808",
                                "null",
                                "true",
                                "\"\"",
                                "[]",
                                "{}",
                                "[[[[",
                                "\"\\u0000\"",
                                "\"\\ud800\"",
                                "1.5",
                                "NaN",
                                "\xff",
                                "}",
                                ",",
                                ":",
                                "\"payloads\":[{}]",
                                "\"width\":65536",
                                "\"stride\":0",
                                "\"height\":-5"};

void corrupt(std::mt19937& rng, Message& m) {
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    const std::size_t part = rng() % m.parts.size();
    std::string& s = m.parts[part];
    switch (rng() % 9) {
      case 0:  // flip a byte
        if (!s.empty()) s[rng() % s.size()] = static_cast<char>(rng());
        break;
      case 1:  // truncate
        s.resize(s.empty() ? 0 : rng() % s.size());
        break;
      case 2:  // grow
        s.append(rng() % 9, static_cast<char>(rng()));
        break;
      case 3:  // drop a part
        if (m.parts.size() > 1) m.parts.erase(m.parts.begin() + static_cast<long>(part));
        break;
      case 4:  // duplicate a part
        m.parts.insert(m.parts.begin() + static_cast<long>(part), s);
        break;
      case 5:  // splice a token into the header
      case 6: {
        std::string& header = m.parts.size() > 1 ? m.parts[1] : m.parts[0];
        const char* token = kSplices[rng() % (sizeof(kSplices) / sizeof(kSplices[0]))];
        const std::size_t at = header.empty() ? 0 : rng() % header.size();
        const std::size_t cut = rng() % 4;
        header.replace(at, std::min(cut, header.size() - at), token);
        break;
      }
      case 7:  // a digit changed inside a number of the header
        if (m.parts.size() > 1) {
          std::string& header = m.parts[1];
          for (int tries = 0; tries < 20 && !header.empty(); ++tries) {
            const std::size_t at = rng() % header.size();
            if (header[at] >= '0' && header[at] <= '9') {
              header[at] = static_cast<char>('0' + rng() % 10);
              break;
            }
          }
        }
        break;
      default:  // empty the part
        s.clear();
        break;
    }
  }
}

bool inside(const void* p, std::size_t n, const std::vector<std::string_view>& parts) {
  const auto* b = static_cast<const char*>(p);
  for (const auto& part : parts) {
    if (b >= part.data() && b + n <= part.data() + part.size()) return true;
  }
  return false;
}

template <typename T>
void expect_inside(ImageView<const T> v, const std::vector<std::string_view>& parts) {
  if (v.empty()) return;
  const std::size_t bytes =
      (static_cast<std::size_t>(v.height - 1) * v.stride + v.width) * sizeof(T);
  EXPECT_TRUE(inside(v.data, bytes, parts));
}

}  // namespace

TEST(Corruption, RandomlyCorruptedFramesDecodeOrFailCleanly) {
  std::mt19937 rng(20240611);
  int decoded = 0, refused = 0;
  for (int i = 0; i < 6000; ++i) {
    Message m = random_message(rng);
    corrupt(rng, m);
    // Parts in 8-byte-aligned storage, as ZeroMQ hands out large messages.
    std::vector<std::vector<std::uint64_t>> storage;
    std::vector<std::string_view> views;
    for (const auto& p : m.parts) {
      auto& buf = storage.emplace_back(p.size() / 8 + 1);
      std::memcpy(buf.data(), p.data(), p.size());
    }
    for (std::size_t k = 0; k < m.parts.size(); ++k) {
      views.emplace_back(reinterpret_cast<const char*>(storage[k].data()), m.parts[k].size());
    }
    try {
      const DecodedFrame f = decode_frame(views);
      ++decoded;
      expect_inside(f.disparity, views);
      expect_inside(f.mask, views);
      expect_inside(f.depth, views);
      touch(f.disparity);
      touch(f.mask);
      touch(f.depth);
    } catch (const ProtocolError& e) {
      ++refused;
      EXPECT_GT(std::strlen(e.what()), 10u);
    }
  }
  // Both outcomes occur: the corruption is neither always fatal nor always harmless.
  EXPECT_GT(decoded, 100);
  EXPECT_GT(refused, 1000);
}

TEST(Corruption, RandomlyCorruptedStatsDecodeOrFailCleanly) {
  std::mt19937 rng(77);
  stats::StatsSnapshot s;
  s.time_ns = 1;
  s.interval_s = 1.0;
  stats::PairStats p;
  p.pair = "front";
  p.frames = 30;
  p.fps = 30;
  p.latency.push_back({"engine", {30, 1, 2, 3, 4}});
  s.pairs.push_back(p);
  const std::string valid = stats::encode_stats(s);
  int refused = 0;
  for (int i = 0; i < 3000; ++i) {
    Message m{{valid}};
    corrupt(rng, m);
    try {
      stats::decode_stats(m.parts.empty() ? std::string() : m.parts[0]);
    } catch (const ProtocolError&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 1000);
}
