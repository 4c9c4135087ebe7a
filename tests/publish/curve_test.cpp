// CURVE: certificate files, and who gets frames from a CURVE publisher.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "publish/curve_keys.hpp"
#include "publish_fixtures.hpp"
#include "stereo/params.hpp"

using namespace stereod;
using namespace stereod::publish;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

class CurveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!curve_available()) GTEST_SKIP() << "libzmq without CURVE";
    dir_ = fs::temp_directory_path() /
           ("stereod-curve-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "clients");
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Publishes until `sub` gets a frame or `timeout` passes.
  static bool gets_frames(Publisher& pub, client::Subscriber& sub,
                          std::chrono::milliseconds timeout) {
    std::uint64_t seq = 0;
    return test::publish_until_received(pub, sub, "front", seq, timeout).has_value();
  }

  fs::path dir_;
};

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

void expect_read_error(const std::string& path, const std::string& fragment) {
  try {
    read_certificate(path);
    ADD_FAILURE() << path << " was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

}  // namespace

TEST_F(CurveTest, GeneratedCertificatesReadBackAndNeverOverwrite) {
  const CertificatePaths p = write_new_certificate(dir_.string(), "server");
  EXPECT_EQ(p.public_file, path("server.key"));
  const CurveCertificate pub = read_certificate(p.public_file);
  const CurveCertificate sec = read_certificate(p.secret_file);
  EXPECT_EQ(pub.public_key.size(), 32u);
  EXPECT_TRUE(pub.secret_key.empty());
  EXPECT_EQ(sec.public_key, pub.public_key);
  EXPECT_EQ(sec.secret_key.size(), 32u);
  struct stat st {};
  ASSERT_EQ(::stat(p.secret_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_THROW(write_new_certificate(dir_.string(), "server"), std::runtime_error);
  // Z85 both ways.
  EXPECT_EQ(z85_decode_key(z85_encode_key(sec.secret_key)), sec.secret_key);
}

TEST_F(CurveTest, MalformedCertificatesAreNamedWithFileAndLine) {
  expect_read_error(path("missing.key"), "missing.key: cannot open");
  write_text(path("empty.key"), "# nothing here\n");
  expect_read_error(path("empty.key"), "no public-key");
  write_text(path("short.key"), "curve\n    public-key = \"abc\"\n");
  expect_read_error(path("short.key"),
                    "short.key:2: public-key: expected 40 Z85 characters, got 3");
  write_text(path("bad.key"), "curve\n    public-key = \"" + std::string(40, '~') + "\"\n");
  expect_read_error(path("bad.key"), "bad.key:2: public-key");
  // A public key that does not belong to the secret one.
  const auto a = write_new_certificate(dir_.string(), "a");
  const auto b = write_new_certificate(dir_.string(), "b");
  const CurveCertificate ka = read_certificate(a.secret_file);
  const CurveCertificate kb = read_certificate(b.secret_file);
  write_text(path("mixed.key_secret"),
             "curve\n    public-key = \"" + z85_encode_key(kb.public_key) +
                 "\"\n    secret-key = \"" + z85_encode_key(ka.secret_key) + "\"\n");
  expect_read_error(path("mixed.key_secret"), "mixed.key_secret:2: public-key does not belong");
  EXPECT_THROW(read_public_keys(path("clients")), std::runtime_error);  // holds no *.key
}

TEST_F(CurveTest, PublisherOptionsNameTheKeyFileProblem) {
  const auto server = write_new_certificate(dir_.string(), "server");
  PublisherOptions o;
  o.endpoint = "tcp://127.0.0.1:0";
  o.curve_server_key = server.public_file;  // the public one: not enough for a server
  try {
    Publisher p(o);
    ADD_FAILURE() << "a public certificate was accepted as the server key";
  } catch (const ParameterError& e) {
    EXPECT_EQ(e.parameter(), "publish.curve.server_key");
    EXPECT_NE(std::string(e.what()).find("needs its secret one"), std::string::npos) << e.what();
  }
  o.curve_server_key = path("nope.key_secret");
  EXPECT_THROW(Publisher p(o), ParameterError);
  o.curve_server_key = server.secret_file;
  o.curve_clients = path("clients");  // empty folder
  try {
    Publisher p(o);
    ADD_FAILURE() << "an empty client folder was accepted";
  } catch (const ParameterError& e) {
    EXPECT_EQ(e.parameter(), "publish.curve.clients");
  }
}

TEST_F(CurveTest, OnlySubscribersWithTheServerKeyGetFrames) {
  const auto server = write_new_certificate(dir_.string(), "server");
  const auto other = write_new_certificate(dir_.string(), "other");
  PublisherOptions o;
  o.endpoint = "tcp://127.0.0.1:0";
  o.stats_interval_ms = 0;
  o.curve_server_key = server.secret_file;
  Publisher pub(o);

  client::SubscriberOptions plain;
  plain.endpoint = pub.endpoint();
  client::Subscriber no_key(plain);
  EXPECT_FALSE(gets_frames(pub, no_key, 1500ms)) << "a subscriber without CURVE got frames";

  client::SubscriberOptions wrong = plain;
  wrong.server_key = other.public_file;
  client::Subscriber wrong_key(wrong);
  EXPECT_FALSE(gets_frames(pub, wrong_key, 1500ms)) << "a subscriber with another key got frames";

  client::SubscriberOptions right = plain;
  right.server_key = server.public_file;
  client::Subscriber with_key(right);
  EXPECT_TRUE(gets_frames(pub, with_key, 10s));
}

TEST_F(CurveTest, AListOfClientsAdmitsOnlyThoseClients) {
  const auto server = write_new_certificate(dir_.string(), "server");
  const auto listed = write_new_certificate(path("clients"), "camera-viewer");
  fs::rename(listed.secret_file, path("camera-viewer.key_secret"));  // the folder holds public keys
  const auto stranger = write_new_certificate(dir_.string(), "stranger");
  PublisherOptions o;
  o.endpoint = "tcp://127.0.0.1:0";
  o.stats_interval_ms = 0;
  o.curve_server_key = server.secret_file;
  o.curve_clients = path("clients");
  Publisher pub(o);

  client::SubscriberOptions so;
  so.endpoint = pub.endpoint();
  so.server_key = server.public_file;
  so.client_key = stranger.secret_file;
  client::Subscriber not_listed(so);
  EXPECT_FALSE(gets_frames(pub, not_listed, 1500ms)) << "an unlisted client got frames";
  so.client_key = "";  // a fresh key: not listed either
  client::Subscriber fresh(so);
  EXPECT_FALSE(gets_frames(pub, fresh, 1000ms));
  so.client_key = path("camera-viewer.key_secret");
  client::Subscriber allowed(so);
  EXPECT_TRUE(gets_frames(pub, allowed, 10s));
}
