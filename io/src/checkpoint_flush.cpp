#include "stratus/io/checkpoint_flush.hpp"

#include "stratus/core/error.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>
#include <utility>
#include <vector>

namespace stratus::io {
namespace {

constexpr std::size_t kChunk = std::size_t{4} << 20;

/// FNV-1a, 64 bits, continued over successive chunks.
std::uint64_t fnv1a(std::uint64_t h, const unsigned char* data, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}
constexpr std::uint64_t kFnvBasis = 0xcbf29ce484222325ULL;

/// An open file descriptor, closed on scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw RuntimeError(fmt::format("{}: {}: {}", path, what, std::strerror(errno)));
}

/// Reads `fd` to its end, hashing every byte; with `out` >= 0, writes each chunk there too.
std::uint64_t stream(int fd, const std::string& path, int out, const std::string& out_path,
                     std::uint64_t* bytes, double rate = 0) {
  std::vector<unsigned char> buf(rate > 0 ? std::min<std::size_t>(kChunk, 256 << 10) : kChunk);
  std::uint64_t h = kFnvBasis;
  const auto t0 = std::chrono::steady_clock::now();
  std::uint64_t sent = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(path, "reading");
    }
    if (n == 0) break;
    h = fnv1a(h, buf.data(), static_cast<std::size_t>(n));
    if (bytes != nullptr) *bytes += static_cast<std::uint64_t>(n);
    for (ssize_t done = 0; out >= 0 && done < n;) {
      const ssize_t w = ::write(out, buf.data() + done, static_cast<std::size_t>(n - done));
      if (w < 0) {
        if (errno == EINTR) continue;
        fail(out_path, "writing");
      }
      done += w;
    }
    sent += static_cast<std::uint64_t>(n);
    if (rate > 0)  // at most `rate` bytes per second since the start
      std::this_thread::sleep_until(
          t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(static_cast<double>(sent) / rate)));
  }
  return h;
}

}  // namespace

std::uint64_t copy_verified(const std::string& from, const std::string& to, double rate) {
  const std::string partial = to + ".partial";
  std::uint64_t bytes = 0;
  try {
    Fd in{::open(from.c_str(), O_RDONLY | O_CLOEXEC)};
    if (in.fd < 0) fail(from, "opening the local checkpoint");
    std::uint64_t source = 0;
    {
      Fd out{::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
      if (out.fd < 0) fail(partial, "creating the durable copy");
      source = stream(in.fd, from, out.fd, partial, &bytes, rate);
      if (::fsync(out.fd) != 0) fail(partial, "flushing the durable copy to disk");
    }
    // What the durable storage now holds, read back, must be the verified local file.
    Fd back{::open(partial.c_str(), O_RDONLY | O_CLOEXEC)};
    if (back.fd < 0) fail(partial, "reopening the durable copy");
#ifdef POSIX_FADV_DONTNEED
    ::posix_fadvise(back.fd, 0, 0, POSIX_FADV_DONTNEED);  // read from storage, not the cache
#endif
    std::uint64_t read_bytes = 0;
    const std::uint64_t copy = stream(back.fd, partial, -1, "", &read_bytes);
    if (copy != source || read_bytes != bytes)
      throw RuntimeError(fmt::format(
          "{}: the durable copy differs from {} ({} of {} bytes read back, hash {:016x} vs "
          "{:016x})",
          partial, from, read_bytes, bytes, copy, source));
    std::filesystem::rename(partial, to);
    const std::string dir = std::filesystem::path(to).parent_path().string();
    Fd d{::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (d.fd >= 0) ::fsync(d.fd);
  } catch (const std::filesystem::filesystem_error& e) {
    std::error_code ec;
    std::filesystem::remove(partial, ec);
    throw RuntimeError(fmt::format("{}: {}", to, e.what()));
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(partial, ec);
    throw;
  }
  return bytes;
}

CheckpointFlusher::~CheckpointFlusher() { (void)wait(); }

std::optional<CheckpointFlusher::Done> CheckpointFlusher::start(std::int64_t step, std::string from,
                                                                std::string to, double rate) {
  auto previous = wait();
  const std::lock_guard<std::mutex> lock(mutex_);
  running_ = true;
  thread_ = std::thread([this, step, rate, from = std::move(from), to = std::move(to)] {
    Done d;
    d.step = step;
    d.to = to;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      d.bytes = copy_verified(from, to, rate);
    } catch (const std::exception& e) {
      d.error = e.what();
    }
    d.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::lock_guard<std::mutex> guard(mutex_);
    done_ = std::move(d);
    running_ = false;
  });
  return previous;
}

std::optional<CheckpointFlusher::Done> CheckpointFlusher::take() {
  const std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(done_, std::nullopt);
}

std::optional<CheckpointFlusher::Done> CheckpointFlusher::poll() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (running_ || !done_) return std::nullopt;
  }
  if (thread_.joinable()) thread_.join();
  return take();
}

std::optional<CheckpointFlusher::Done> CheckpointFlusher::wait() {
  if (thread_.joinable()) thread_.join();
  return take();
}

bool CheckpointFlusher::busy() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return running_;
}

}  // namespace stratus::io
