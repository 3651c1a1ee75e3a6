// The access log (see access_log.hpp).
#include "serve/access_log.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

namespace chatwire::serve {

namespace {

// 2026-12-07T12:30:06.123Z
std::string utc_time(long long unix_millis) {
  const std::time_t seconds = static_cast<std::time_t>(unix_millis / 1000);
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  char text[96];  // room for any int the fields could hold (GCC checks it)
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(unix_millis % 1000));
  return text;
}

double rounded(double seconds) {  // to the microsecond: enough, and short lines
  return static_cast<double>(static_cast<long long>(seconds * 1e6 + 0.5)) / 1e6;
}

}  // namespace

AccessLog::~AccessLog() {
  if (owned_) std::fclose(file_);
}

Result<std::monostate> AccessLog::open(const std::string& where) {
  if (where.empty()) return std::monostate{};
  if (where == "-") {
    file_ = stderr;
    return std::monostate{};
  }
  file_ = std::fopen(where.c_str(), "a");
  if (file_ == nullptr)
    return Error{"ConfigError", "cannot open the access log: " + std::string(std::strerror(errno)),
                 0, 0, "access_log"};
  owned_ = true;
  return std::monostate{};
}

std::string AccessLog::line(const AccessRecord& r, long long unix_millis) {
  nlohmann::ordered_json j = {
      {"time", utc_time(unix_millis)},
      {"client", r.client},
      {"method", r.method},
      {"path", r.path},
      {"route", r.route.empty() ? nullptr : nlohmann::ordered_json(r.route)},
      {"status", r.status}};
  if (!r.model.empty()) {
    j["model"] = r.model;
    j["id"] = r.id.empty() ? nullptr : nlohmann::ordered_json(r.id);
    j["stream"] = r.stream;
    j["prompt_tokens"] = r.prompt_tokens;
    j["completion_tokens"] = r.completion_tokens;
    j["first_token_seconds"] = r.first_token_seconds
                                   ? nlohmann::ordered_json(rounded(*r.first_token_seconds))
                                   : nlohmann::ordered_json(nullptr);
  }
  if (!r.request_id.empty()) j["request_id"] = r.request_id;
  j["seconds"] = rounded(r.seconds);
  if (!r.error.empty()) j["error"] = r.error;
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void AccessLog::write(const AccessRecord& record) {
  if (file_ == nullptr) return;
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  const std::string text = line(record, now) + "\n";
  std::fwrite(text.data(), 1, text.size(), file_);
  std::fflush(file_);
}

}  // namespace chatwire::serve
