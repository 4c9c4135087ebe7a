// The frame header and frame message decoding: exact round trips, and a clear ProtocolError for
// every kind of malformed input.
#include <gtest/gtest.h>

#include <cstring>

#include "publish/frame_decode.hpp"
#include "publish/protocol.hpp"
#include "publish_fixtures.hpp"

using namespace stereod;
using namespace stereod::publish;

namespace {

FrameHeader full_header() {
  FrameHeader h;
  h.info = test::full_info("front", 12345678901234ull);
  h.publish_ns = h.info.ready_ns + 42;
  h.info.foreground_without_disparity = 4321;
  h.payloads.push_back({"disparity", "disp16q4", 16, 8, 40, kDisparityInvalid});
  h.payloads.push_back({"mask", "mask8", 16, 8, 16, std::nullopt});
  h.payloads.push_back({"depth", "depth16mm", 16, 8, 32, kDepthInvalid});
  h.payloads.push_back({"confidence", "conf8", 16, 8, 16, std::nullopt});  // a later addition
  return h;
}

// The header as JSON, with `edit` applied, back to text.
template <typename Edit>
std::string edited(const FrameHeader& h, Edit edit) {
  Json j = Json::parse(encode_header(h));
  edit(j);
  return j.dump();
}

void expect_error(const std::string& text, const std::string& fragment) {
  try {
    decode_header(text);
    ADD_FAILURE() << "no error; expected one mentioning " << fragment;
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "error \"" << e.what() << "\" does not mention \"" << fragment << "\"";
  }
}

// A frame message as byte strings: topic, header, payloads.
struct Message {
  std::vector<std::string> parts;
  std::vector<std::string_view> views() const {
    return std::vector<std::string_view>(parts.begin(), parts.end());
  }
};

Message message_for(const FrameHeader& h) {
  Message m;
  m.parts.push_back(frame_topic(h.info.pair));
  m.parts.push_back(encode_header(h));
  for (const auto& p : h.payloads) {
    std::string bytes(p.bytes(), '\0');
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7);
    m.parts.push_back(bytes);
  }
  return m;
}

void expect_frame_error(const Message& m, const std::string& fragment) {
  try {
    decode_frame(m.views());
    ADD_FAILURE() << "no error; expected one mentioning " << fragment;
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "error \"" << e.what() << "\" does not mention \"" << fragment << "\"";
  }
}

}  // namespace

TEST(Header, RoundTripKeepsEveryField) {
  const FrameHeader h = full_header();
  const FrameHeader back = decode_header(encode_header(h));
  EXPECT_TRUE(back == h);
  // Field by field too, so a failure says which.
  EXPECT_EQ(back.version_major, kProtocolMajor);
  EXPECT_EQ(back.version_minor, kProtocolMinor);
  EXPECT_EQ(back.info.pair, "front");
  EXPECT_EQ(back.info.sequence, 12345678901234ull);
  EXPECT_EQ(back.info.capture_ns, h.info.capture_ns);
  EXPECT_EQ(back.info.cameras, h.info.cameras);
  EXPECT_EQ(back.info.complete_ns, h.info.complete_ns);
  EXPECT_EQ(back.info.ready_ns, h.info.ready_ns);
  EXPECT_EQ(back.publish_ns, h.publish_ns);
  EXPECT_EQ(back.info.latency, h.info.latency);
  EXPECT_EQ(back.info.calibration, h.info.calibration);
  EXPECT_EQ(back.info.min_disparity, 0);
  EXPECT_EQ(back.info.max_disparity, 64);
  EXPECT_TRUE(back.info.background);
  EXPECT_EQ(back.info.config_generation, 7u);
  EXPECT_EQ(back.info.engine, "cpu");
  EXPECT_EQ(back.info.levels, 3);
  EXPECT_EQ(back.info.foreground_without_disparity, 4321);
  ASSERT_EQ(back.payloads.size(), 4u);
  EXPECT_EQ(back.payloads[0].stride, 40u);  // padded rows survive
  EXPECT_EQ(back.payloads[3].encoding, "conf8");
  EXPECT_TRUE(back.ok());
}

TEST(Header, RoundTripOfAFailedFrame) {
  FrameHeader h;
  h.info = test::full_info("rear", 3);
  h.info.error = "stereo.max_disparity = 512: larger than the image is wide";
  const FrameHeader back = decode_header(encode_header(h));
  EXPECT_TRUE(back == h);
  EXPECT_FALSE(back.ok());
  EXPECT_TRUE(back.payloads.empty());
}

TEST(Header, JsonNamesTheDocumentedFields) {
  const Json j = Json::parse(encode_header(full_header()));
  for (const char* key : {"version",       "pair",
                          "sequence",      "status",
                          "width",         "height",
                          "stride",        "encoding",
                          "invalid",       "capture_ns",
                          "cameras",       "complete_ns",
                          "ready_ns",      "publish_ns",
                          "latency_ms",    "focal_px",
                          "baseline_m",    "doffs_px",
                          "min_disparity", "max_disparity",
                          "background",    "config_generation",
                          "engine",        "levels",
                          "payloads"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["encoding"], "disp16q4");
  EXPECT_EQ(j["invalid"], 65535);
  EXPECT_EQ(j["stride"], 40);
  EXPECT_EQ(j["payloads"].size(), 3u);  // the disparity is described at the top level
  EXPECT_EQ(j["payloads"][1]["invalid"], 0);
}

TEST(Header, NewerMinorVersionAndUnknownFieldsAreAccepted) {
  const std::string text = edited(full_header(), [](Json& j) {
    j["version"]["minor"] = 9;
    j["shiny_new_field"] = {{"a", 1}};
  });
  const FrameHeader h = decode_header(text);
  EXPECT_EQ(h.version_minor, 9);
  EXPECT_EQ(h.info.pair, "front");
}

TEST(Header, OtherMajorVersionIsRefused) {
  expect_error(edited(full_header(),
                      [](Json& j) {
                        j["version"]["major"] = 2;
                        j["version"]["minor"] = 0;
                      }),
               "protocol 2.0 is not supported");
  // Checked before anything else: a version 2 header may lack every other field.
  expect_error(R"({"version":{"major":0,"minor":1}})", "protocol 0.1 is not supported");
  expect_error(R"({"pair":"x"})", "header.version: missing");
}

TEST(Header, BadJsonIsReported) {
  expect_error("{\"version\": ", "not valid JSON");
  expect_error("", "not valid JSON");
  expect_error("[1,2]", "expected a JSON object");
  expect_error(std::string(100, '[') + std::string(100, ']'), "nested deeper");
  expect_error(std::string(kMaxHeaderBytes + 1, ' '), "more than the");
  expect_error("{\"a\":\"\xff\xfe\"}", "not valid JSON");  // not UTF-8
}

TEST(Header, EveryRequiredFieldIsNamedWhenMissing) {
  for (const char* key : {"pair",          "sequence",    "status",
                          "width",         "height",      "stride",
                          "encoding",      "invalid",     "capture_ns",
                          "cameras",       "complete_ns", "ready_ns",
                          "publish_ns",    "latency_ms",  "focal_px",
                          "baseline_m",    "doffs_px",    "min_disparity",
                          "max_disparity", "background",  "config_generation",
                          "engine",        "levels",      "payloads"}) {
    expect_error(edited(full_header(), [&](Json& j) { j.erase(key); }),
                 "header." + std::string(key) + ": missing");
  }
}

TEST(Header, WrongTypesAndRangesAreNamed) {
  const FrameHeader h = full_header();
  expect_error(edited(h, [](Json& j) { j["width"] = "16"; }), "header.width: expected an integer");
  expect_error(edited(h, [](Json& j) { j["width"] = 0; }), "header.width");
  expect_error(edited(h, [](Json& j) { j["height"] = 1 << 20; }), "header.height");
  expect_error(edited(h, [](Json& j) { j["sequence"] = -1; }), "header.sequence");
  expect_error(edited(h, [](Json& j) { j["sequence"] = 1.5; }), "header.sequence");
  expect_error(edited(h, [](Json& j) { j["stride"] = 30; }), "header.stride: 30 bytes");
  expect_error(edited(h, [](Json& j) { j["stride"] = 41; }), "whole number of 2-byte");
  expect_error(edited(h, [](Json& j) { j["encoding"] = "disp32f"; }), "header.encoding");
  expect_error(edited(h, [](Json& j) { j["invalid"] = 0; }), "header.invalid");
  expect_error(edited(h, [](Json& j) { j["status"] = "maybe"; }), "header.status");
  expect_error(edited(h, [](Json& j) { j["pair"] = ""; }), "header.pair");
  expect_error(edited(h, [](Json& j) { j["background"] = 1; }), "header.background");
  expect_error(edited(h, [](Json& j) { j["focal_px"] = -3.0; }), "header.focal_px: negative");
  expect_error(edited(h, [](Json& j) { j["max_disparity"] = -1; }), "header.max_disparity");
  expect_error(edited(h, [](Json& j) { j["min_disparity"] = 100; }), "below min_disparity");
  expect_error(edited(h, [](Json& j) { j["latency_ms"]["engine"] = "fast"; }),
               "header.latency_ms.engine: expected a number");
  expect_error(edited(h, [](Json& j) { j["cameras"][1]["capture_ns"] = nullptr; }),
               "header.cameras[1].capture_ns");
  expect_error(edited(h, [](Json& j) { j["cameras"][0] = 5; }), "header.cameras[0]");
  expect_error(edited(h, [](Json& j) { j["payloads"][0]["stride"] = 0; }),
               "header.payloads[0].stride");
  expect_error(edited(h, [](Json& j) { j["payloads"][1]["name"] = "mask"; }), "appears twice");
  expect_error(edited(h, [](Json& j) { j["payloads"][0]["name"] = "disparity"; }), "appears twice");
  expect_error(edited(h, [](Json& j) { j["payloads"][1]["invalid"] = 7; }),
               "header.payloads[1].invalid");
  expect_error(edited(h,
                      [](Json& j) {
                        j["status"] = "error";
                        j["error"] = "boom";
                      }),
               "a failed frame carries no payloads");
  expect_error(edited(h,
                      [](Json& j) {
                        j["status"] = "error";
                        j["error"] = "";
                      }),
               "header.error: empty");
}

TEST(Header, CheckFrameInfoRefusesWhatTheDecoderWould) {
  auto expect_refused = [](publish::FrameInfo f, const std::string& fragment) {
    try {
      check_frame_info(f);
      ADD_FAILURE() << "accepted; expected an error mentioning " << fragment;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  const auto good = test::full_info("front", 1);
  EXPECT_NO_THROW(check_frame_info(good));
  auto f = good;
  f.pair.clear();
  expect_refused(f, "pair must have");
  f = good;
  f.latency.push_back({"sync", 2.0});
  expect_refused(f, "\"sync\" appears twice");
  f = good;
  f.latency[0].ms = std::nan("");
  expect_refused(f, "not finite");
  f = good;
  f.calibration.baseline_m = -0.1;
  expect_refused(f, "calibration");
  f = good;
  f.max_disparity = 5000;
  expect_refused(f, "disparity range");
  f = good;
  f.ready_ns = -1;
  expect_refused(f, "negative");
}

TEST(FrameDecode, ViewsPointIntoThePartsWithTheirStride) {
  const FrameHeader h = full_header();
  const Message m = message_for(h);
  const DecodedFrame f = decode_frame(m.views());
  EXPECT_EQ(f.topic, "disparity.front");
  ASSERT_FALSE(f.disparity.empty());
  EXPECT_EQ(reinterpret_cast<const char*>(f.disparity.data), m.parts[2].data());
  EXPECT_EQ(f.disparity.stride, 20);  // 40 bytes of 16-bit pixels
  EXPECT_EQ(f.disparity.width, 16);
  EXPECT_EQ(reinterpret_cast<const char*>(f.mask.data), m.parts[3].data());
  EXPECT_EQ(reinterpret_cast<const char*>(f.depth.data), m.parts[4].data());
  ASSERT_EQ(f.payload_bytes.size(), 4u);
  EXPECT_EQ(f.payload_bytes[3].size(), 128u);  // the unknown payload, as bytes
}

TEST(FrameDecode, MissingAndExtraPartsAreReported) {
  const FrameHeader h = full_header();
  Message m = message_for(h);
  expect_frame_error(Message{{m.parts[0]}}, "1 part(s), a frame has at least");
  Message fewer = m;
  fewer.parts.pop_back();
  expect_frame_error(fewer, "5 parts, the header names 4 payload(s) so 6 were expected");
  Message more = m;
  more.parts.push_back("x");
  expect_frame_error(more, "7 parts");
}

TEST(FrameDecode, TruncatedOrOversizedPayloadsAreReported) {
  Message m = message_for(full_header());
  Message truncated = m;
  truncated.parts[2].pop_back();
  expect_frame_error(truncated,
                     "part 3 (disparity): 319 bytes, the header says 8 rows of 40 = 320");
  Message longer = m;
  longer.parts[3] += "zz";
  expect_frame_error(longer, "part 4 (mask): 130 bytes");
}

TEST(FrameDecode, TopicMustMatchThePair) {
  Message m = message_for(full_header());
  m.parts[0] = "disparity.rear";
  expect_frame_error(m, "does not match the header's pair");
  m.parts[0] = std::string("\x01\x02garbage", 9);
  expect_frame_error(m, "??garbage");
}

TEST(FrameDecode, MisalignedSixteenBitPayloadIsRefusedNotRead) {
  const Message m = message_for(full_header());
  // The disparity bytes copied to an odd address.
  std::string storage(m.parts[2].size() + 1, '\0');
  char* odd = storage.data() + (reinterpret_cast<std::uintptr_t>(storage.data()) % 2 == 0 ? 1 : 0);
  std::memcpy(odd, m.parts[2].data(), m.parts[2].size());
  std::vector<std::string_view> parts = m.views();
  parts[2] = std::string_view(odd, m.parts[2].size());
  EXPECT_TRUE(needs_realignment(odd));
  try {
    decode_frame(parts);
    ADD_FAILURE() << "a misaligned payload was accepted";
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("part 3 (disparity): data is not aligned"),
              std::string::npos)
        << e.what();
  }
}

// 1.3's foreground_without_disparity is optional: omitted when not known (a frame without the
// background model, or a 1.2 sender), and read back as -1 then.
TEST(Header, ForegroundWithoutDisparityIsOptional) {
  FrameHeader h = full_header();
  h.info.foreground_without_disparity = -1;
  const std::string text = encode_header(h);
  EXPECT_EQ(text.find("foreground_without_disparity"), std::string::npos);
  EXPECT_EQ(decode_header(text).info.foreground_without_disparity, -1);
}
