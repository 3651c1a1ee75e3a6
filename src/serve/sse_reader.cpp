// Reading a backend's server-sent events (see sse_reader.hpp).
#include "serve/sse_reader.hpp"

#include <nlohmann/json.hpp>

namespace chatwire::serve {

using json = nlohmann::ordered_json;

void SseReader::line(std::string_view text, std::vector<std::string>& events) {
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  if (text.empty()) {  // the blank line that ends an event
    if (has_data_) events.push_back(std::move(data_));
    data_.clear();
    has_data_ = false;
    return;
  }
  if (text.starts_with("error:")) {
    // llama.cpp's server writes a failure mid-stream as an `error:` line, not as an SSE field:
    // read as the event {"error": payload}, which every backend reader reports.
    text.remove_prefix(6);
    if (text.starts_with(' ')) text.remove_prefix(1);
    json payload = json::parse(text.begin(), text.end(), nullptr, false);
    if (payload.is_discarded()) payload = std::string(text);
    if (has_data_) events.push_back(std::move(data_));
    events.push_back(
        json{{"error", std::move(payload)}}.dump(-1, ' ', false, json::error_handler_t::replace));
    data_.clear();
    has_data_ = false;
    return;
  }
  if (!text.starts_with("data:")) return;  // comments (":"), event:, id:, retry:
  text.remove_prefix(5);
  if (text.starts_with(' ')) text.remove_prefix(1);
  if (has_data_) data_ += '\n';
  data_ += text;
  has_data_ = true;
}

Result<bool> SseReader::feed(std::string_view bytes, std::vector<std::string>& events) {
  while (!bytes.empty()) {
    const auto nl = bytes.find('\n');
    if (nl == std::string_view::npos) {
      partial_line_ += bytes;
      break;
    }
    if (partial_line_.empty()) {
      line(bytes.substr(0, nl), events);
    } else {
      partial_line_ += bytes.substr(0, nl);
      line(partial_line_, events);
      partial_line_.clear();
    }
    bytes.remove_prefix(nl + 1);
  }
  if (partial_line_.size() + data_.size() > max_event_bytes_)
    return Error{"BackendError",
                 "the backend sent an event longer than limits.max_backend_event_bytes (" +
                     std::to_string(max_event_bytes_) + ")",
                 0,
                 0,
                 {}};
  return true;
}

void SseReader::finish(std::vector<std::string>& events) {
  if (!partial_line_.empty()) {
    std::string last = std::move(partial_line_);
    partial_line_.clear();
    line(last, events);
  }
  line({}, events);
}

}  // namespace chatwire::serve
