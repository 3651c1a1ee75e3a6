// Where a render writes: the top-level text and a stack of capture buffers (macro calls,
// set/filter blocks, caller(), recursive loops), each an OutputBuffer.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/value.hpp"

namespace chatwire::jinja {

// A growable byte buffer for rendered text. Templates write many short pieces (markers
// such as `<|im_start|>`, a role, a newline); std::string::append copies each through two
// out-of-line calls (the library's append, then memcpy), which cost more than the copy.
// Here a piece of up to 32 bytes is copied inline with two overlapping moves. The
// top-level buffer is kept per thread from one render to the next (see render_template):
// its text is copied into the result once.
class OutputBuffer {
 public:
  OutputBuffer() = default;
  OutputBuffer(OutputBuffer&& o) noexcept : data_(o.data_), size_(o.size_), capacity_(o.capacity_) {
    o.data_ = nullptr;
    o.size_ = o.capacity_ = 0;
  }
  OutputBuffer& operator=(OutputBuffer&& o) noexcept {
    if (this != &o) {
      std::free(data_);
      data_ = o.data_;
      size_ = o.size_;
      capacity_ = o.capacity_;
      o.data_ = nullptr;
      o.size_ = o.capacity_ = 0;
    }
    return *this;
  }
  OutputBuffer(const OutputBuffer&) = delete;
  OutputBuffer& operator=(const OutputBuffer&) = delete;
  ~OutputBuffer() { std::free(data_); }

  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  std::string_view view() const { return {data_, size_}; }
  void clear() { size_ = 0; }
  void reserve(std::size_t n) {
    if (n > capacity_) reallocate(n);
  }

  void append(std::string_view s) {
    if (s.size() > capacity_ - size_) grow(s.size());
    copy(data_ + size_, s.data(), s.size());
    size_ += s.size();
  }
  // Room for the bytes is known to be there (see reserve_more).
  void append_unchecked(std::string_view s) {
    copy(data_ + size_, s.data(), s.size());
    size_ += s.size();
  }
  void reserve_more(std::size_t n) {
    if (n > capacity_ - size_) grow(n);
  }

 private:
  // memcpy of a short, variable length without a call: overlapping fixed-size moves that
  // read and write only [s, s + n) and [d, d + n).
  static void copy(char* d, const char* s, std::size_t n) {
    if (n >= 16) {
      if (n > 32) {
        std::memcpy(d, s, n);
        return;
      }
      std::memcpy(d, s, 16);
      std::memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 8) {
      std::memcpy(d, s, 8);
      std::memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
      std::memcpy(d, s, 4);
      std::memcpy(d + n - 4, s + n - 4, 4);
    } else if (n) {
      d[0] = s[0];
      d[n / 2] = s[n / 2];
      d[n - 1] = s[n - 1];
    }
  }
  void grow(std::size_t more) {
    std::size_t want = size_ + more, doubled = 2 * capacity_;
    if (want < size_) throw std::bad_alloc();  // wrapped around
    reallocate(want > doubled ? want : (doubled < 64 ? 64 : doubled));
  }
  void reallocate(std::size_t n) {
    char* p = static_cast<char*>(std::realloc(data_, n));
    if (!p) throw std::bad_alloc();
    data_ = p;
    capacity_ = n;
  }

  char* data_ = nullptr;
  std::size_t size_ = 0, capacity_ = 0;
};

[[noreturn]] void output_overflow(std::size_t max_bytes);

// Output of one render: the top-level text plus a stack of capture buffers. Python yields
// only the top-level chunks, which is what transformers' generation tracker counts.
class Output {
 public:
  std::vector<OutputBuffer> captures;
  std::size_t max_bytes = 0;
  std::size_t total_bytes = 0;
  // Any chunk (even empty) reached the top level.
  bool yielded() const { return main_writes_ != 0; }

  Output() = default;
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  // The current target and whether it is the top level are kept in pointers, updated when
  // a capture begins or ends: a write is a size check and an append, without branches.
  void write(std::string_view s) {
    total_bytes += s.size();
    if (total_bytes > max_bytes) output_overflow(max_bytes);
    target_->append(s);
    ++*write_count_;
  }
  // Several pieces of `total` bytes at once (one size check, one growth of the target).
  void write_all(const std::string_view* pieces, std::size_t count, std::size_t total) {
    total_bytes += total;
    if (total_bytes > max_bytes) output_overflow(max_bytes);
    OutputBuffer& t = *target_;
    t.reserve_more(total);
    for (std::size_t k = 0; k < count; ++k) t.append_unchecked(pieces[k]);
    ++*write_count_;
  }
  // Writes a string Value's text. When it is the first write into the innermost capture,
  // the Value is remembered: a capture that ends with no other write (a macro that prints
  // its argument, `{{ content }}`) gives back the Value itself, not a copy. That is also
  // Python's answer: the capture is "".join of a one-item list, which is that str object.
  void write_string(const Value& v) {
    // (Not a Markup: "".join returns its one item only when that is an exact str.)
    const bool first =
        !captures.empty() && capture_writes_ == capture_begin_writes_.back() && !v.is_markup();
    write(v.as_string());
    if (first) {
      sole_ = v;
      sole_level_ = captures.size();
      sole_writes_ = capture_writes_;
    }
  }
  bool capturing() const { return !captures.empty(); }
  // The top-level text. Its buffer may be one the caller lends (see use_main).
  OutputBuffer& main() { return *main_; }
  // Writes the top-level text to `buffer` (empty) instead of the Output's own.
  void use_main(OutputBuffer* buffer) {
    main_ = buffer;
    retarget();
  }
  void begin_capture() {
    forget_sole();
    capture_begin_writes_.push_back(capture_writes_);
    if (!spare_.empty()) {
      captures.push_back(std::move(spare_.back()));
      spare_.pop_back();
      captures.back().clear();
    } else {
      captures.emplace_back();
    }
    retarget();
  }
  // Ends the innermost capture and returns its text.
  std::string end_capture() {
    std::string s(captures.back().view());
    drop_capture();
    return s;
  }
  // Same, as a string Value: one block holding the bytes, copied from the buffer.
  Value end_capture_value() {
    const OutputBuffer& b = captures.back();
    Value v = sole_level_ == captures.size() && capture_writes_ == sole_writes_ ? std::move(sole_)
                                                                                : Value(b.view());
    drop_capture();
    return v;
  }
  // Ends the innermost capture, discarding its text (a failed block).
  void drop_capture() {
    forget_sole();
    capture_begin_writes_.pop_back();
    total_bytes -= captures.back().size();
    spare_.push_back(std::move(captures.back()));  // keeps its room for the next capture
    captures.pop_back();
    retarget();
  }
  // Code points of the top-level output so far (counted incrementally); that count
  // ends at byte main().size().
  std::size_t main_code_points();

 private:
  void forget_sole() {
    if (sole_level_ != 0) {
      sole_level_ = 0;
      sole_ = Value();
    }
  }
  void retarget() {
    target_ = captures.empty() ? main_ : &captures.back();
    write_count_ = captures.empty() ? &main_writes_ : &capture_writes_;
  }
  OutputBuffer own_main_;
  OutputBuffer* main_ = &own_main_;
  OutputBuffer* target_ = &own_main_;
  // Writes so far, counted through write_count_: to the top level, and to any capture.
  std::size_t main_writes_ = 0, capture_writes_ = 0;
  std::size_t* write_count_ = &main_writes_;
  std::vector<std::size_t> capture_begin_writes_;  // capture_writes_ when each capture began
  std::vector<OutputBuffer> spare_;
  Value sole_;                   // see write_string; a string when sole_level_ != 0
  std::size_t sole_level_ = 0;   // the capture (captures.size()) it was written to; 0: none
  std::size_t sole_writes_ = 0;  // capture_writes_ right after it
  std::size_t counted_bytes_ = 0, counted_points_ = 0;
};

}  // namespace chatwire::jinja
