#pragma once
// One writer per result file: an exclusive flock on a lock file beside it. The kernel drops the
// lock when the holder exits, however it exits, so a killed run never leaves a stale lock.
#include <stdexcept>
#include <string>

namespace sdtw::bench {

class LockHeld : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Creates the folders above `file`; an error names the folder, the file and the system's reason.
void create_parent_folder(const std::string& file);

class OutputLock {
 public:
  // Takes the lock on `lock_file` (created if missing, with its folder) without waiting and records the holder
  // (pid, host, start time) in it; throws LockHeld naming the holder and `what` when another
  // process has it.
  OutputLock(const std::string& lock_file, const std::string& what);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

 private:
  int fd_ = -1;
};

// "dir/x.csv" -> "dir/x.csv.lock".
std::string lock_path(const std::string& csv_path);

}  // namespace sdtw::bench
