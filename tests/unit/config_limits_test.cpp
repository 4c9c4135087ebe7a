// The loader refuses what the running daemon would refuse (issue 15: "anything --check accepts,
// the daemon runs"): names the protocol cannot carry, scene options the synthetic source refuses,
// and the policies of docs/CONFIG.md.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config_issues.hpp"
#include "daemon_config.hpp"
#include "ingest/camera_config.hpp"
#include "publish/curve_keys.hpp"

using namespace stereod;

namespace {

using test::all_issues;
using test::mentions;

std::vector<ConfigIssue> issues_of(const std::string& text) {
  return test::config_issues(text);
}

std::string two_cameras(const std::string& left_name, const std::string& pair_name) {
  return "cameras:\n"
         "  - {name: " +
         left_name +
         ", source: 'test://', width: 64, height: 48}\n"
         "  - {name: b, source: 'test://', width: 64, height: 48}\n"
         "pairs:\n"
         "  - {name: " +
         pair_name + ", left: " + left_name + ", right: b, stereo: {max_disparity: 16}}\n";
}

}  // namespace

// Issue 15, defect 2: a pair or camera name of 257 characters passed --check, and the daemon
// aborted at its first frame (the protocol carries names of up to 256 bytes).
TEST(ConfigLimits, NamesLongerThanTheProtocolCarriesAreRefused) {
  const std::string longest(256, 'n');
  EXPECT_TRUE(issues_of(two_cameras(longest, longest)).empty());
  const std::string too_long(257, 'n');
  auto v = issues_of(two_cameras("a", too_long));
  EXPECT_TRUE(mentions(v, "pairs[0].name", "1 to 256")) << all_issues(v);
  EXPECT_TRUE(mentions(v, "pairs[0].name", "got 257 characters")) << all_issues(v);
  v = issues_of(two_cameras(too_long, "p"));
  EXPECT_TRUE(mentions(v, "cameras[0].name", "1 to 256")) << all_issues(v);
}

// Pair names become topics and file names of stereod-sub --save: the same rule as cameras.
TEST(ConfigLimits, PairNamesFollowTheCameraNameRule) {
  auto v = issues_of(two_cameras("a", "'front left'"));
  EXPECT_TRUE(mentions(v, "pairs[0].name", "letters, digits")) << all_issues(v);
  v = issues_of(two_cameras("a", "'../../x'"));
  EXPECT_TRUE(mentions(v, "pairs[0].name", "letters, digits")) << all_issues(v);
  EXPECT_TRUE(issues_of(two_cameras("a", "front_1.left-2")).empty());
}

// Found while reproducing defect 1: synthetic://...?max_disparity=16 passed --check, and the daemon
// then refused to start ("must exceed synthetic.min_disparity + 8").
TEST(ConfigLimits, SyntheticOptionsTheSceneRefusesAreRefused) {
  const std::string text =
      "cameras:\n"
      "  - {name: l, source: 'synthetic://left?max_disparity=16', width: 320, height: 240}\n"
      "  - {name: r, source: 'synthetic://right?max_disparity=16', width: 320, height: 240}\n"
      "pairs: [{name: p, left: l, right: r, stereo: {max_disparity: 16}}]\n";
  const auto v = issues_of(text);
  EXPECT_TRUE(mentions(v, "cameras[0].source", "synthetic.max_disparity = 16")) << all_issues(v);
}

namespace {

// A folder with a CURVE key pair (server.key, server.key_secret) and a clients folder.
class KeyFolder {
 public:
  KeyFolder() {
    dir_ = std::filesystem::temp_directory_path() /
           ("stereod-keys-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "clients");
    paths_ = publish::write_new_certificate(dir_.string(), "server");
  }
  ~KeyFolder() { std::filesystem::remove_all(dir_); }
  const publish::CertificatePaths& server() const { return paths_; }
  std::filesystem::path dir() const { return dir_; }

  // The base configuration publishing with CURVE.
  std::string config(const std::string& server_key, const std::string& clients = "") const {
    return two_cameras("a", "p") +
           "publish: {endpoint: 'tcp://127.0.0.1:0', curve: {server_key: '" + server_key + "'" +
           (clients.empty() ? "" : ", clients: '" + clients + "'") + "}}\n";
  }

 private:
  std::filesystem::path dir_;
  publish::CertificatePaths paths_;
};

}  // namespace

// Issue 15, defect 3: publish.curve.server_key naming the public certificate passed --check; a
// reload to it then left nothing listening. The loader reads the certificate as the publisher
// does.
TEST(ConfigLimits, APublicCertificateIsRefusedAsTheServerKey) {
  if (!publish::curve_available()) GTEST_SKIP() << "libzmq without CURVE";
  KeyFolder keys;
  EXPECT_TRUE(issues_of(keys.config(keys.server().secret_file)).empty());
  const auto v = issues_of(keys.config(keys.server().public_file));
  EXPECT_TRUE(mentions(v, "publish.curve.server_key", "a public certificate")) << all_issues(v);
}

// Issue 15, defect 10: a secret key file that every user may read was accepted without a word.
// Policy (docs/CONFIG.md): others may not read it, nobody but its owner may write it.
TEST(ConfigLimits, ASecretKeyOthersMayReadIsRefused) {
  if (!publish::curve_available()) GTEST_SKIP() << "libzmq without CURVE";
  KeyFolder keys;
  const std::string secret = keys.server().secret_file;
  for (const mode_t mode : {0600, 0400, 0640, 0440}) {
    ASSERT_EQ(::chmod(secret.c_str(), mode), 0);
    EXPECT_TRUE(issues_of(keys.config(secret)).empty()) << std::oct << mode;
  }
  for (const mode_t mode : {0666, 0644, 0604, 0620}) {
    ASSERT_EQ(::chmod(secret.c_str(), mode), 0);
    const auto v = issues_of(keys.config(secret));
    EXPECT_TRUE(mentions(v, "publish.curve.server_key", "chmod 600")) << std::oct << mode << "\n"
                                                                      << all_issues(v);
  }
}

// The clients' folder is read as the publisher reads it: an empty one is refused by --check too.
TEST(ConfigLimits, AClientsFolderWithoutCertificatesIsRefused) {
  if (!publish::curve_available()) GTEST_SKIP() << "libzmq without CURVE";
  KeyFolder keys;
  const std::string clients = (keys.dir() / "clients").string();
  auto v = issues_of(keys.config(keys.server().secret_file, clients));
  EXPECT_TRUE(mentions(v, "publish.curve.clients", "no client certificates")) << all_issues(v);
  publish::write_new_certificate(clients, "viewer");
  v = issues_of(keys.config(keys.server().secret_file, clients));
  EXPECT_TRUE(v.empty()) << all_issues(v);
}

// Issue 15, defect 7: tcp://localhost:5593 passed --check and the daemon then failed with "cannot
// bind (No such device)": ZeroMQ binds addresses and interface names, not host names. localhost
// now means 127.0.0.1, and the loader refuses what this host cannot bind.
TEST(ConfigLimits, EndpointsThisHostCannotBindAreRefused) {
  const auto with = [](const std::string& endpoint) {
    return two_cameras("a", "p") + "publish: {endpoint: '" + endpoint + "'}\n";
  };
  EXPECT_TRUE(issues_of(with("tcp://localhost:0")).empty())
      << all_issues(issues_of(with("tcp://localhost:0")));
  EXPECT_TRUE(issues_of(with("tcp://127.0.0.1:0")).empty());
  EXPECT_TRUE(issues_of(with("tcp://lo:0")).empty());  // an interface name
  auto v = issues_of(with("tcp://no-such-host-or-if:5593"));
  EXPECT_TRUE(mentions(v, "publish.endpoint", "neither an IP address of this host"))
      << all_issues(v);
  v = issues_of(with("tcp://192.0.2.1:5593"));  // TEST-NET-1: on no interface here
  EXPECT_TRUE(mentions(v, "publish.endpoint", "192.0.2.1")) << all_issues(v);
  v = issues_of(with("ipc:///nonexistent-stereod-folder/s.sock"));
  EXPECT_TRUE(mentions(v, "publish.endpoint", "no folder /nonexistent-stereod-folder"))
      << all_issues(v);
  // A file that is not a socket at the path: ZeroMQ would delete it to bind.
  const std::string file = "/tmp/stereod-not-a-socket-" + std::to_string(::getpid());
  std::ofstream(file) << "data\n";
  v = issues_of(with("ipc://" + file));
  EXPECT_TRUE(mentions(v, "publish.endpoint", "is not a socket")) << all_issues(v);
  std::filesystem::remove(file);
}
