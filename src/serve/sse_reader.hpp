// Server-sent events from a backend, read incrementally: bytes in (as they arrive, split
// anywhere), the `data` payloads of complete events out. Comments and other fields are
// skipped; CRLF and LF line ends are both read. llama.cpp's `error: {..}` line is the event
// {"error": {..}}.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/error.hpp"

namespace chatwire::serve {

class SseReader {
 public:
  explicit SseReader(std::size_t max_event_bytes) : max_event_bytes_(max_event_bytes) {}

  // Appends the payloads of the events `bytes` completes to `events`. Error (BackendError)
  // when one event grows beyond max_event_bytes.
  Result<bool> feed(std::string_view bytes, std::vector<std::string>& events);
  // The end of the body: an event not closed by a blank line still counts.
  void finish(std::vector<std::string>& events);

 private:
  void line(std::string_view text, std::vector<std::string>& events);
  std::size_t max_event_bytes_;
  std::string partial_line_;
  std::string data_;
  bool has_data_ = false;
};

}  // namespace chatwire::serve
