// The gateway's access log: one JSON line per answered request (when, who, which route and
// model, the status, token counts, time to first token, the whole time, the response's id), so
// an operator can follow each request and match it with what its client got. Request and
// response bodies are never written: prompts and answers may be private.
#pragma once

#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <variant>

#include "chatwire/error.hpp"

namespace chatwire::serve {

struct AccessRecord {
  std::string client;  // "address:port"
  std::string method, path;
  std::string route;       // the metrics label; "" = no route
  int status = 0;          // 499: the client went away first
  std::string model;       // relayed routes
  std::string id;          // the response's id (chatcmpl-..., resp_...)
  std::string request_id;  // the client's X-Request-Id ("" = none)
  bool stream = false;
  std::size_t prompt_tokens = 0, completion_tokens = 0;
  std::optional<double> first_token_seconds;
  double seconds = 0;
  std::string error;  // the error's code, when the answer is one
};

class AccessLog {
 public:
  AccessLog() = default;
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;
  ~AccessLog();

  // "" = no log, "-" = standard error, else a file appended to (created when missing).
  Result<std::monostate> open(const std::string& where);
  bool enabled() const noexcept { return file_ != nullptr; }
  // The record as one JSON line, flushed at once (a crash or a kill loses no answered request).
  void write(const AccessRecord& record);
  // The line write() writes, without the newline (for tests).
  static std::string line(const AccessRecord& record, long long unix_millis);

 private:
  std::FILE* file_ = nullptr;
  bool owned_ = false;
};

}  // namespace chatwire::serve
