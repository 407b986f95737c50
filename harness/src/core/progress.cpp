#include "progress.hpp"

namespace sdtw::bench {

Progress::Progress(size_t total, double total_weight, bool tty, std::FILE* out)
    : total_(total), total_weight_(total_weight), tty_(tty), out_(out), t0_(std::chrono::steady_clock::now()) {}

double Progress::point_weight(const Point& p) {
  // A fixed cost per point (launches, warm-up, verification set-up) plus a per-cell cost.
  const double cells = static_cast<double>(p.cells());
  return 1.0 + cells * (p.device == "cpu" ? 2e-5 : 2e-8);
}

std::string Progress::format_seconds(double s) {
  if (s < 0) s = 0;
  const long t = static_cast<long>(s + 0.5);
  char buf[32];
  if (t >= 3600)
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t / 60) % 60);
  else
    std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  return buf;
}

std::string Progress::eta() const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  if (done_weight_ <= 0) return "elapsed " + format_seconds(elapsed) + ", ETA ?";
  const double rest = elapsed / done_weight_ * (total_weight_ - done_weight_);
  return "elapsed " + format_seconds(elapsed) + ", ETA " + format_seconds(rest);
}

void Progress::start(const Point& p) {
  if (!tty_) return;
  const int width = 24;
  const int filled = total_ ? static_cast<int>(width * done_ / total_) : width;
  std::string bar(static_cast<size_t>(filled), '#');
  bar.resize(width, '.');
  std::fprintf(out_, "\r\033[K[%s] %zu/%zu %s | %s", bar.c_str(), done_ + 1, total_, describe(p).c_str(), eta().c_str());
  std::fflush(out_);
}

void Progress::finish(const Result& r) {
  ++done_;
  done_weight_ += point_weight(r.point);
  std::string what = r.disposition;
  if (r.time_ms_median) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " %.3f ms", *r.time_ms_median);
    what += buf;
  }
  if (!r.message.empty() && r.disposition != disposition::passed) what += " (" + r.message.substr(0, 120) + ")";
  if (tty_) std::fprintf(out_, "\r\033[K");
  std::fprintf(out_, "[%zu/%zu] %s: %s | %s\n", done_, total_, describe(r.point).c_str(), what.c_str(), eta().c_str());
  std::fflush(out_);
}

void Progress::done() {
  if (tty_) std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
}

}  // namespace sdtw::bench
