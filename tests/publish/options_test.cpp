// Publisher options: defaults, endpoint rules, and errors that name the key and the value.
#include <gtest/gtest.h>

#include <cstdlib>

#include "publish/publisher.hpp"
#include "publish/publisher_options.hpp"
#include "stereo/params.hpp"

using namespace stereod;
using namespace stereod::publish;

namespace {

void expect_rejected(const PublisherOptions& o, const std::string& key,
                     const std::string& fragment) {
  try {
    validate_publisher_options(o);
    ADD_FAILURE() << "accepted; expected " << key << " to be refused";
  } catch (const ParameterError& e) {
    EXPECT_EQ(e.parameter(), key);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

PublisherOptions with_endpoint(const std::string& e) {
  PublisherOptions o;
  o.endpoint = e;
  return o;
}

// Sets an environment variable for the scope, restoring the old value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_.empty()) {
      unsetenv(name_);
    } else {
      setenv(name_, old_.c_str(), 1);
    }
  }

 private:
  const char* name_;
  std::string old_;
};

}  // namespace

TEST(PublisherOptions, DefaultEndpointIsUnderTheRuntimeDirectory) {
  {
    ScopedEnv a("RUNTIME_DIRECTORY", "/run/stereod:/run/other");
    ScopedEnv b("XDG_RUNTIME_DIR", "/run/user/1000");
    EXPECT_EQ(default_endpoint(), "ipc:///run/stereod/stereod.sock");
    EXPECT_EQ(resolve_endpoint(PublisherOptions{}), "ipc:///run/stereod/stereod.sock");
  }
  {
    ScopedEnv a("RUNTIME_DIRECTORY", nullptr);
    ScopedEnv b("XDG_RUNTIME_DIR", "/run/user/1000");
    EXPECT_EQ(default_endpoint(), "ipc:///run/user/1000/stereod.sock");
  }
  {
    ScopedEnv a("RUNTIME_DIRECTORY", nullptr);
    ScopedEnv b("XDG_RUNTIME_DIR", nullptr);
    EXPECT_EQ(default_endpoint(), "ipc:///tmp/stereod.sock");
  }
}

TEST(PublisherOptions, TcpDefaultsToLoopbackAndRefusesEveryInterfaceUnlessAsked) {
  EXPECT_EQ(resolve_endpoint(with_endpoint("tcp://:5555")), "tcp://127.0.0.1:5555");
  EXPECT_EQ(resolve_endpoint(with_endpoint("tcp://192.168.1.20:0")), "tcp://192.168.1.20:0");
  EXPECT_EQ(resolve_endpoint(with_endpoint("tcp://[::1]:*")), "tcp://[::1]:*");
  for (const char* e : {"tcp://*:5555", "tcp://0.0.0.0:5555", "tcp://[::]:5555"}) {
    expect_rejected(with_endpoint(e), "publish.endpoint", "publish.bind_all");
    PublisherOptions o = with_endpoint(e);
    o.bind_all = true;
    EXPECT_NO_THROW(validate_publisher_options(o)) << e;
    ASSERT_EQ(publisher_warnings(o).size(), 1u) << e;  // and no CURVE: said so
    EXPECT_NE(publisher_warnings(o)[0].find("without CURVE"), std::string::npos);
    o.curve_server_key = "/etc/stereod/server.key_secret";
    EXPECT_TRUE(publisher_warnings(o).empty());
  }
  EXPECT_TRUE(publisher_warnings(with_endpoint("tcp://127.0.0.1:5555")).empty());
}

TEST(PublisherOptions, BadValuesNameTheKeyAndValue) {
  expect_rejected(with_endpoint("udp://x:1"), "publish.endpoint",
                  "publish.endpoint = udp://x:1: expected ipc://PATH or tcp://HOST:PORT");
  expect_rejected(with_endpoint("ipc://"), "publish.endpoint", "the path is empty");
  expect_rejected(with_endpoint("ipc:///tmp/" + std::string(200, 'a')), "publish.endpoint",
                  "at most 107 fit");
  expect_rejected(with_endpoint("tcp://127.0.0.1"), "publish.endpoint", "expected tcp://HOST:PORT");
  expect_rejected(with_endpoint("tcp://127.0.0.1:99999"), "publish.endpoint",
                  "port \"99999\" is not a number in 0..65535");
  expect_rejected(with_endpoint("tcp://127.0.0.1:http"), "publish.endpoint", "port \"http\"");
  PublisherOptions o;
  o.hwm = 0;
  expect_rejected(o, "publish.hwm", "publish.hwm = 0: must be between 1 and 1000");
  o = {};
  o.queue = -2;
  expect_rejected(o, "publish.queue", "publish.queue = -2");
  o = {};
  o.stats_interval_ms = -1;
  expect_rejected(o, "publish.stats_interval_ms", "= -1");
  o = {};
  o.curve_clients = "/etc/stereod/clients";
  expect_rejected(o, "publish.curve.clients", "needs publish.curve.server_key");
}

TEST(PublisherOptions, PublisherRefusesBadOptionsAndReportsBindFailures) {
  PublisherOptions o;
  o.endpoint = "tcp://*:0";
  EXPECT_THROW(Publisher p(o), ParameterError);
  o.endpoint = "ipc:///nonexistent-stereod-dir/x.sock";
  try {
    Publisher p(o);
    ADD_FAILURE() << "bound to a folder that does not exist";
  } catch (const ParameterError& e) {
    EXPECT_EQ(e.parameter(), "publish.endpoint");
    EXPECT_NE(
        std::string(e.what()).find("publish.endpoint = ipc:///nonexistent-stereod-dir/x.sock: "
                                   "no folder /nonexistent-stereod-dir"),
        std::string::npos)
        << e.what();
  }
  // A port already taken.
  PublisherOptions first;
  first.endpoint = "tcp://127.0.0.1:0";
  Publisher a(first);
  PublisherOptions second;
  second.endpoint = a.endpoint();
  try {
    Publisher b(second);
    ADD_FAILURE() << "bound a port that is taken";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("is taken by another process"), std::string::npos)
        << e.what();
  }
}
