// The commands' input and output: standard input and files read in large blocks with plain
// read(2), lines split in place in the block, and one buffered writer for standard output.
// Synchronised C++ streams (std::getline on std::cin, istreambuf_iterator) cost a call per
// character, which was half the time of `render --batch`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "util/file_bytes.hpp"

namespace chatwire::cli::io {

// Buffered writes to a file descriptor. Lines are written when the buffer fills, when the
// reader below is about to wait for input (so a request/response co-process never waits on
// an answer held in the buffer), on flush() and on destruction.
class Writer {
 public:
  explicit Writer(int fd, std::size_t capacity = std::size_t{1} << 16);
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer();

  void write(std::string_view bytes) {
    if (bytes.size() <= capacity_ - used_) {  // the common case, inline: escaped JSON is
      std::memcpy(buffer_.get() + used_, bytes.data(), bytes.size());  // many short pieces
      used_ += bytes.size();
      return;
    }
    write_long(bytes);
  }
  void put(char c) {
    if (used_ == capacity_) drain();
    buffer_[used_++] = c;
  }
  // Room for n bytes (n <= capacity()) written in place: the pointer, then commit(bytes used).
  char* reserve(std::size_t n) {
    if (n > capacity_ - used_) drain();
    return buffer_.get() + used_;
  }
  void commit(std::size_t n) { used_ += n; }
  std::size_t capacity() const { return capacity_; }
  // Writes out what is buffered, then buffers `capacity` bytes. The default 64 KB suits a
  // command that fills whole blocks (parse, tokenize): escaping 16 MB through a 1 MB buffer,
  // beyond the L2 cache, made `chatwire parse --dialect hermes` a quarter slower.
  void set_capacity(std::size_t capacity);
  // Bytes that fit before the buffer is written out.
  std::size_t room() const { return capacity_ - used_; }
  void flush();
  // False once a write to the descriptor failed (EPIPE, disk full); later writes are dropped.
  bool ok() const { return ok_; }
  // How many times buffered bytes were written out so far: a reader of our output can have
  // seen something new only when this changed.
  std::uint64_t write_outs() const { return write_outs_; }

 private:
  void write_long(std::string_view bytes);
  void drain();
  void write_through(const char* data, std::size_t size);

  int fd_;
  std::size_t capacity_;
  std::unique_ptr<char[]> buffer_;
  std::size_t used_ = 0;
  bool ok_ = true;
  std::uint64_t write_outs_ = 0;
};

// The process's standard output. Everything a command prints on stdout goes through it.
Writer& out();

// Lines of a file descriptor, read in blocks of `block_bytes` and returned as views into the
// block (valid until the next call). A regular file is read the same way, not mapped: on this
// project's machines reading a 512 MB request file through a mapping (page faults and TLB misses
// on 4 KB pages) cost 0.25 s against 0.045 s for read() into a 1 MB block that stays in cache,
// a sixth of `render --batch`'s CPU. A line longer than `max_line_bytes` is returned cut to
// max_line_bytes + 1 bytes, with `too_long` set, and the rest of it up to its newline skipped,
// so a caller that checks the size against the limit reports it and goes on with the next line.
class LineReader {
 public:
  struct Line {
    std::string_view text;   // without the '\n' (a '\r' before it is kept)
    std::size_t number = 0;  // 1-based
    bool too_long = false;
  };

  LineReader(int fd, std::size_t max_line_bytes, Writer* flush_before_wait = &out(),
             std::size_t block_bytes = std::size_t{1} << 20);
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;
  ~LineReader() = default;

  // The next line, or nullopt at the end of the input (or a read error, see error()).
  std::optional<Line> next();
  // Empty, or what went wrong reading (errno text).
  const std::string& error() const { return error_; }
  // How many reads brought new bytes so far: every line returned was written by its producer
  // before the read that brought it.
  std::uint64_t reads() const { return reads_; }

 private:
  bool fill();               // reads more bytes after end_; false at end of input
  void skip_rest_of_line();  // after a cut line: drops bytes up to and including its newline

  int fd_;
  std::size_t max_line_bytes_;
  Writer* flush_before_wait_;
  std::size_t capacity_;
  std::unique_ptr<char[]> buffer_;
  std::size_t begin_ = 0, end_ = 0, scanned_ = 0;
  std::size_t number_ = 0;
  std::uint64_t reads_ = 0;
  bool eof_ = false;
  bool pending_skip_ = false;
  std::string error_;
};

// The whole content of a descriptor or a file, read in blocks; nullopt with `error` set when
// it cannot be read or holds more than max_bytes.
std::optional<std::string> read_all(int fd, std::size_t max_bytes, std::string& error);
std::optional<std::string> read_file(const std::string& path, std::size_t max_bytes,
                                     std::string& error);

// A whole input as one view: a regular file (standard input redirected from a file, the
// common case for large inputs) is read at once into memory of its size on huge pages
// (util::FileBytes), not zero-filled and not grown; a pipe is read in blocks into a string.
class WholeInput {
 public:
  static std::optional<WholeInput> read(int fd, std::size_t max_bytes, std::string& error);
  std::string_view view() const { return text_.empty() ? file_.view() : std::string_view(text_); }

 private:
  WholeInput() = default;
  util::FileBytes file_;  // a regular file's bytes
  std::string text_;      // a pipe's
};

// The default limit of a whole input read by a command (--max-input-bytes).
inline constexpr std::size_t kDefaultMaxInputBytes = std::size_t{1} << 30;

}  // namespace chatwire::cli::io
