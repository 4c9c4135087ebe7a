// The loader refuses what the running daemon would refuse (issue 15: "anything --check accepts,
// the daemon runs"): names the protocol cannot carry, scene options the synthetic source refuses,
// and the policies of docs/CONFIG.md.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
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

// The loader reports a rule's reason after the key, never a piece of the value: an endpoint whose
// path holds ": " used to be cut there (the reason was parsed back out of the message text).
TEST(ConfigLimits, AValueHoldingAColonIsNotCutIntoTheReason) {
  const auto v = issues_of(two_cameras("a", "p") +
                           "publish: {endpoint: 'ipc:///nonexistent-stereod: folder/s.sock'}\n");
  ASSERT_EQ(v.size(), 1u) << all_issues(v);
  EXPECT_EQ(v[0].key, "publish.endpoint");
  EXPECT_EQ(v[0].message.rfind("no folder /nonexistent-stereod: folder", 0), 0u) << v[0].message;
}

TEST(ParameterError, ABadValueNamesKeyAndValueAndKeepsTheRuleApart) {
  const auto e = ParameterError::bad_value("stereo.levels", "9", "must be between 1 and 6");
  EXPECT_EQ(e.parameter(), "stereo.levels");
  EXPECT_STREQ(e.what(), "stereo.levels = 9: must be between 1 and 6");
  EXPECT_EQ(e.reason(), "must be between 1 and 6");
  const ParameterError plain("left", "left image is empty (0x0)");
  EXPECT_EQ(plain.reason(), "left image is empty (0x0)");
}

namespace {

// A file of its own in /tmp, removed afterwards.
class TempFile {
 public:
  explicit TempFile(const std::string& tag)
      : path_("/tmp/stereod-config-" + std::to_string(::getpid()) + "-" + tag) {
    std::filesystem::remove_all(path_);
  }
  ~TempFile() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  void write(const std::string& text) const { std::ofstream(path_, std::ios::binary) << text; }

 private:
  std::string path_;
};

std::vector<ConfigIssue> file_issues(const std::string& path) {
  try {
    load_daemon_config(path);
  } catch (const ConfigError& e) {
    return e.issues();
  }
  return {};
}

bool says(const std::vector<ConfigIssue>& v, const std::string& text) {
  for (const auto& i : v) {
    if (i.message.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

// Issue 15, defect 5: a 10 MB configuration was read and parsed whole (874k log lines, RSS from 50
// to 975 MB, frames stopped for 9 s on reload). Policy (docs/CONFIG.md): at most 1 MiB.
TEST(ConfigFile, AFileOverOneMebibyteIsRefusedUnread) {
  TempFile f("big");
  std::string text = two_cameras("a", "p");
  text += std::string(1024 * 1024 + 1 - text.size(), '#');
  f.write(text);
  const auto v = file_issues(f.path());
  ASSERT_EQ(v.size(), 1u) << all_issues(v);
  EXPECT_TRUE(says(v, "1048577 bytes")) << all_issues(v);
  EXPECT_TRUE(says(v, "at most 1 MiB")) << all_issues(v);
  text.resize(1024 * 1024);  // exactly the limit: read
  f.write(text);
  EXPECT_TRUE(file_issues(f.path()).empty()) << all_issues(file_issues(f.path()));
}

// /dev/zero as the configuration ended in bad_alloc (an abort); a FIFO made --check wait forever.
// Only regular files are read, and opening one never blocks.
TEST(ConfigFile, OnlyRegularFilesAreRead) {
  auto v = file_issues("/dev/zero");
  EXPECT_TRUE(says(v, "not a regular file")) << all_issues(v);
  TempFile fifo("fifo");
  ASSERT_EQ(::mkfifo(fifo.path().c_str(), 0600), 0);
  auto loading = std::async(std::launch::async, [&] { return file_issues(fifo.path()); });
  if (loading.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    ADD_FAILURE() << "reading a FIFO blocks";
    std::ofstream(fifo.path()) << "x";  // a writer, so that the reader can go on
  }
  v = loading.get();
  EXPECT_TRUE(says(v, "not a regular file")) << all_issues(v);
  TempFile folder("folder");
  std::filesystem::create_directories(folder.path());
  v = file_issues(folder.path());
  EXPECT_TRUE(says(v, "is a folder")) << all_issues(v);
}

// "cannot open the file" gave no reason.
TEST(ConfigFile, AFileThatCannotBeOpenedSaysWhy) {
  auto v = file_issues("/nonexistent-stereod/stereod.yaml");
  EXPECT_TRUE(says(v, "No such file or directory")) << all_issues(v);
  v = file_issues("");
  EXPECT_TRUE(says(v, "no file")) << all_issues(v);
}

// Issue 15, defect 10: a second YAML document in the file was ignored without a word.
TEST(ConfigFile, ASecondYamlDocumentIsRefused) {
  const std::string text = two_cameras("a", "p") + "---\nlogging: {level: debug}\n";
  const auto v = issues_of(text);
  ASSERT_FALSE(v.empty());
  EXPECT_TRUE(says(v, "a second YAML document")) << all_issues(v);
  EXPECT_EQ(v[0].line, 7) << all_issues(v);
  // A leading --- (one document) is fine.
  EXPECT_TRUE(issues_of("---\n" + two_cameras("a", "p")).empty());
}

// One bad file could produce hundreds of thousands of issues (and log lines): the first 100 are
// reported, then how many more there were.
TEST(ConfigFile, AtMostAHundredIssuesAreReported) {
  std::string text = two_cameras("a", "p") + "stereo:\n";
  for (int i = 0; i < 500; ++i) text += "  unknown_" + std::to_string(i) + ": 1\n";
  const auto v = issues_of(text);
  ASSERT_EQ(v.size(), 101u);
  EXPECT_TRUE(says({v.back()}, "and 400 more")) << v.back().to_string();
}

// A file that parses can still ask for more than a daemon should run: 20,000 pairs passed --check.
// Policy (docs/CONFIG.md): at most 128 cameras and 64 pairs (64 pairs of two cameras each; 48
// pairs, the capacity table's largest run, need 96 cameras).
TEST(ConfigLimits, AtMost128CamerasAnd64Pairs) {
  std::string text = "cameras:\n";
  for (int i = 0; i < 129; ++i) {
    text += "  - {name: c" + std::to_string(i) + ", source: 'test://', width: 64, height: 48}\n";
  }
  text += "pairs:\n";
  for (int i = 0; i < 65; ++i) {
    text += "  - {name: p" + std::to_string(i) +
            ", left: c0, right: c1, stereo: {max_disparity: 16}}\n";
  }
  const auto v = issues_of(text);
  EXPECT_TRUE(mentions(v, "cameras", "129 cameras; at most 128")) << all_issues(v);
  EXPECT_TRUE(mentions(v, "pairs", "at most 64")) << all_issues(v);
  // 128 cameras are accepted.
  std::string ok = "cameras:\n";
  for (int i = 0; i < 128; ++i) {
    ok += "  - {name: c" + std::to_string(i) + ", source: 'test://', width: 64, height: 48}\n";
  }
  ok += "pairs:\n  - {name: p, left: c0, right: c1, stereo: {max_disparity: 16}}\n";
  EXPECT_FALSE(mentions(issues_of(ok), "cameras", "at most")) << all_issues(issues_of(ok));
}

// One bad value gave follow-on errors built on defaults: a camera whose width was not a number
// kept 640 and was then "a different size" from its partner.
TEST(ConfigLimits, ABadValueCausesNoFollowOnErrors) {
  const std::string text =
      "cameras:\n"
      "  - {name: a, source: 'test://', width: 64, height: 48}\n"
      "  - {name: b, source: 'test://', width: sixty-four, height: 48}\n"
      "pairs:\n"
      "  - {name: p, left: a, right: b, stereo: {max_disparity: 16}}\n";
  const auto v = issues_of(text);
  ASSERT_EQ(v.size(), 1u) << all_issues(v);
  EXPECT_EQ(v[0].key, "cameras[1].width");
}

// Found by the fuzz test: yaml-cpp's LoadAll, used at first to find a second document, never
// returns on ",a" (its parser keeps returning empty documents until memory runs out).
TEST(ConfigFile, AMalformedFileCannotMakeTheLoaderLoop) {
  auto loading = std::async(std::launch::async, [] { return issues_of(",a\n"); });
  ASSERT_EQ(loading.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "the loader loops";
  EXPECT_FALSE(loading.get().empty());
}
