#include "lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "metadata.hpp"

namespace sdtw::bench {

namespace {
std::string read_all(int fd) {
  std::string text;
  char buf[512];
  ssize_t got = 0;
  if (::lseek(fd, 0, SEEK_SET) < 0) return text;
  while ((got = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(got));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}
}  // namespace

std::string lock_path(const std::string& csv_path) { return csv_path + ".lock"; }

void create_parent_folder(const std::string& file) {
  const auto parent = std::filesystem::path(file).parent_path();
  std::error_code error;
  if (parent.empty() || std::filesystem::is_directory(parent)) return;
  std::filesystem::create_directories(parent, error);
  if (error) throw std::runtime_error("cannot create folder " + parent.string() + " for " + file + ": " + error.message());
}

OutputLock::OutputLock(const std::string& lock_file, const std::string& what) {
  create_parent_folder(lock_file);
  fd_ = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::runtime_error("cannot open the lock file " + lock_file + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    std::string holder = err == EWOULDBLOCK ? read_all(fd_) : std::string();
    ::close(fd_);
    fd_ = -1;
    if (err != EWOULDBLOCK) throw std::runtime_error("cannot lock " + lock_file + ": " + std::strerror(err));
    if (holder.empty()) holder = "a process that has not written its details yet";
    throw LockHeld(what + " is in use by another sdtw-bench (" + holder + "; lock " + lock_file +
                   "): wait for it to finish, or write elsewhere with --out");
  }
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  const std::string me =
      "pid " + std::to_string(::getpid()) + " on host " + host + ", started " + utc_now_iso8601() + "\n";
  if (::ftruncate(fd_, 0) == 0 && ::lseek(fd_, 0, SEEK_SET) == 0) {
    const ssize_t wrote = ::write(fd_, me.data(), me.size());
    (void)wrote;  // the details are a courtesy; the flock is the lock
  }
}

OutputLock::~OutputLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace sdtw::bench
