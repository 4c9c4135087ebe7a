// Logging for the daemon (spdlog): to stderr; under systemd (JOURNAL_STREAM set) each line starts
// with its syslog priority, "<3>" for errors, which journald turns into the entry's priority.
#pragma once

#include <string>

namespace stereod::daemon {

// Installs the default logger (ingest and the daemon log through spdlog's default logger).
void setup_logging(const std::string& level);
// Throws std::invalid_argument for an unknown level name.
void set_log_level(const std::string& level);
bool under_journal();

}  // namespace stereod::daemon
