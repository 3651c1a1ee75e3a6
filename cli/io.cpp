#include "io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace chatwire::cli::io {

Writer::Writer(int fd, std::size_t capacity)
    : fd_(fd), capacity_(capacity), buffer_(new char[capacity]) {}

Writer::~Writer() {
  flush();
}

void Writer::write_long(std::string_view bytes) {
  drain();
  if (bytes.size() >= capacity_) {  // larger than the buffer: no copy
    write_through(bytes.data(), bytes.size());
    return;
  }
  std::memcpy(buffer_.get(), bytes.data(), bytes.size());
  used_ = bytes.size();
}

void Writer::flush() {
  drain();
}

void Writer::set_capacity(std::size_t capacity) {
  drain();
  buffer_.reset(new char[capacity]);
  capacity_ = capacity;
}

void Writer::drain() {
  if (used_ == 0) return;
  write_through(buffer_.get(), used_);
  used_ = 0;
}

void Writer::write_through(const char* data, std::size_t size) {
  if (size > 0) ++write_outs_;
  while (ok_ && size > 0) {
    ssize_t n = ::write(fd_, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      ok_ = false;
      return;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

Writer& out() {
  static Writer writer(STDOUT_FILENO);
  return writer;
}

LineReader::LineReader(int fd, std::size_t max_line_bytes, Writer* flush_before_wait,
                       std::size_t block_bytes)
    : fd_(fd),
      max_line_bytes_(max_line_bytes),
      flush_before_wait_(flush_before_wait),
      // No larger than a cut line (max_line_bytes + 1 bytes) and its newline need.
      capacity_(std::max<std::size_t>(std::min(block_bytes - 2, max_line_bytes) + 2, 64)),
      buffer_(new char[capacity_]) {}

bool LineReader::fill() {
  if (eof_) return false;
  if (begin_ == end_) {
    begin_ = end_ = scanned_ = 0;
  } else if (end_ == capacity_) {
    if (begin_ > 0) {  // move the partial line to the front of the block
      std::memmove(buffer_.get(), buffer_.get() + begin_, end_ - begin_);
      end_ -= begin_;
      scanned_ -= begin_;
      begin_ = 0;
    } else {  // one line fills the block: grow it (the caller cuts lines past the limit)
      // (Saturating: a limit near SIZE_MAX, `--max-line-bytes 18446744073709551615`, is no limit.)
      const std::size_t wanted = max_line_bytes_ > SIZE_MAX - 2 ? SIZE_MAX : max_line_bytes_ + 2;
      std::size_t grown = std::min(capacity_ * 2, std::max(capacity_ + 1, wanted));
      std::unique_ptr<char[]> bigger(new char[grown]);
      std::memcpy(bigger.get(), buffer_.get(), end_);
      buffer_ = std::move(bigger);
      capacity_ = grown;
    }
  }
  // The input may be a co-process waiting for our answers before it sends more.
  if (flush_before_wait_ != nullptr) flush_before_wait_->flush();
  while (true) {
    ssize_t n = ::read(fd_, buffer_.get() + end_, capacity_ - end_);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error_ = std::strerror(errno);
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    end_ += static_cast<std::size_t>(n);
    ++reads_;
    return true;
  }
}

void LineReader::skip_rest_of_line() {
  while (true) {
    if (const void* nl = std::memchr(buffer_.get() + begin_, '\n', end_ - begin_)) {
      begin_ = scanned_ =
          static_cast<std::size_t>(static_cast<const char*>(nl) - buffer_.get()) + 1;
      return;
    }
    begin_ = scanned_ = end_;
    if (!fill()) return;
  }
}

std::optional<LineReader::Line> LineReader::next() {
  if (pending_skip_) {
    pending_skip_ = false;
    skip_rest_of_line();
  }
  while (true) {
    const char* base = buffer_.get();
    if (scanned_ < end_) {
      if (const void* nl = std::memchr(base + scanned_, '\n', end_ - scanned_)) {
        auto at = static_cast<std::size_t>(static_cast<const char*>(nl) - base);
        Line line{std::string_view(base + begin_, at - begin_), ++number_, false};
        begin_ = scanned_ = at + 1;
        if (line.text.size() > max_line_bytes_) {
          line.text = line.text.substr(0, max_line_bytes_ + 1);
          line.too_long = true;
        }
        return line;
      }
      scanned_ = end_;
    }
    if (end_ - begin_ > max_line_bytes_) {
      // Cut here; the rest of the line is skipped before the next one is read. The view stays
      // valid: skipping only starts on the next call.
      Line line{std::string_view(base + begin_, max_line_bytes_ + 1), ++number_, true};
      begin_ += max_line_bytes_ + 1;
      scanned_ = begin_;
      pending_skip_ = true;
      return line;
    }
    if (eof_ || !fill()) {  // the last line has no newline
      if (begin_ == end_) return std::nullopt;
      Line line{std::string_view(buffer_.get() + begin_, end_ - begin_), ++number_, false};
      begin_ = scanned_ = end_;
      return line;
    }
  }
}

std::optional<std::string> read_all(int fd, std::size_t max_bytes, std::string& error) {
  std::string text;
  struct stat st {};
  // A regular file is read into a buffer of its size (one byte more to see the end, or growth):
  // no doubling copies for the common `< file` case. Otherwise (a pipe, an empty file) the
  // buffer starts at 64 KB, a pipe's usual capacity, and doubles: a first block of 1 MB was
  // zero-filled by resize(), 256 page faults (0.3 ms of a 2 ms process) on an empty input.
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
    text.resize(std::min<std::size_t>(static_cast<std::size_t>(st.st_size), max_bytes) + 1);
  std::size_t used = 0;
  while (true) {
    if (used == text.size())
      text.resize(std::max<std::size_t>(text.size() * 2, std::size_t{1} << 16));
    // Room for one byte past the limit, to see an input longer than it (saturating at SIZE_MAX).
    const std::size_t cap = max_bytes == SIZE_MAX ? SIZE_MAX : max_bytes + 1;
    std::size_t room = std::min(text.size() - used, cap - used);
    ssize_t n = ::read(fd, text.data() + used, room);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = std::strerror(errno);
      return std::nullopt;
    }
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
    if (used > max_bytes) {
      error = "input longer than max_input_bytes=" + std::to_string(max_bytes);
      return std::nullopt;
    }
  }
  text.resize(used);
  return text;
}

std::optional<std::string> read_file(const std::string& path, std::size_t max_bytes,
                                     std::string& error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = "cannot read " + path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  auto text = read_all(fd, max_bytes, error);
  ::close(fd);
  if (!text) error = path + ": " + error;
  return text;
}

std::optional<WholeInput> WholeInput::read(int fd, std::size_t max_bytes, std::string& error) {
  WholeInput input;
  struct stat st {};
  const off_t at = ::lseek(fd, 0, SEEK_CUR);
  if (at >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > at) {
    const auto size = static_cast<std::size_t>(st.st_size) - static_cast<std::size_t>(at);
    if (size > max_bytes) {
      error = "input longer than max_input_bytes=" + std::to_string(max_bytes);
      return std::nullopt;
    }
    if (!input.file_.read(fd, size, error)) return std::nullopt;
    return input;
  }
  auto text = read_all(fd, max_bytes, error);
  if (!text) return std::nullopt;
  input.text_ = std::move(*text);
  return input;
}

}  // namespace chatwire::cli::io
