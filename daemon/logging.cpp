#include "logging.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>

namespace stereod::daemon {
namespace {

// sd-daemon(3) priority prefixes: journald reads "<N>" at the start of a line.
class JournalSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    int priority = 6;
    switch (msg.level) {
      case spdlog::level::trace:
      case spdlog::level::debug:
        priority = 7;
        break;
      case spdlog::level::info:
        priority = 6;
        break;
      case spdlog::level::warn:
        priority = 4;
        break;
      case spdlog::level::err:
        priority = 3;
        break;
      case spdlog::level::critical:
        priority = 2;
        break;
      default:
        break;
    }
    std::fprintf(stderr, "<%d>%.*s\n", priority, static_cast<int>(msg.payload.size()),
                 msg.payload.data());
  }
  void flush_() override { std::fflush(stderr); }
};

spdlog::level::level_enum parse_level(const std::string& level) {
  const auto l = spdlog::level::from_str(level);
  if (l == spdlog::level::off && level != "off") {
    throw std::invalid_argument("log level \"" + level +
                                "\": expected trace, debug, info, warn, error, critical or off");
  }
  return l;
}

}  // namespace

bool under_journal() {
  return std::getenv("JOURNAL_STREAM") != nullptr;
}

void setup_logging(const std::string& level) {
  std::shared_ptr<spdlog::logger> logger;
  if (under_journal()) {
    logger = std::make_shared<spdlog::logger>("stereod", std::make_shared<JournalSink>());
  } else {
    logger = std::make_shared<spdlog::logger>(
        "stereod", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
  }
  logger->set_level(parse_level(level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

void set_log_level(const std::string& level) {
  spdlog::default_logger()->set_level(parse_level(level));
}

}  // namespace stereod::daemon
