// Notices when the configuration file changes on disk: written in place, or replaced by renaming
// a new file over it (what most editors and configuration tools do). Watches the directory with
// inotify, since a rename replaces the file's inode and a watch on the file itself would go stale.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace stereod::daemon {

class ConfigWatcher {
 public:
  // `changed` runs on the watcher's thread; it should only hand the news on.
  ConfigWatcher(const std::string& file, std::function<void()> changed);
  ~ConfigWatcher();
  ConfigWatcher(const ConfigWatcher&) = delete;
  ConfigWatcher& operator=(const ConfigWatcher&) = delete;
  bool active() const { return inotify_ >= 0; }

 private:
  void run();

  std::string name_;
  std::function<void()> changed_;
  int inotify_ = -1;
  int stop_pipe_[2] = {-1, -1};
  std::thread thread_;
};

}  // namespace stereod::daemon
