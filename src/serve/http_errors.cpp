// The error table (see http_errors.hpp).
#include "serve/http_errors.hpp"

#include <string_view>

namespace chatwire::serve {

namespace {

struct ErrorRow {
  std::string_view error_type;  // chatwire Error::type
  int status;
  std::string_view openai_type;
  std::string_view code;
};

constexpr ErrorRow kErrorRows[] = {
    {"Unauthorized", 401, "invalid_request_error", "invalid_api_key"},
    {"ModelNotFound", 404, "invalid_request_error", "model_not_found"},
    {"RouteNotFound", 404, "invalid_request_error", "not_found"},
    {"MethodNotAllowed", 405, "invalid_request_error", "method_not_allowed"},
    {"BodyTooLarge", 413, "invalid_request_error", "request_too_large"},
    {"HeaderTooLarge", 431, "invalid_request_error", "request_header_too_large"},
    {"BackendRefused", 400, "invalid_request_error", "backend_refused"},
    {"Overloaded", 429, "rate_limit_error", "too_many_requests"},
    {"InternalError", 500, "server_error", "internal_error"},
    {"BackendError", 502, "server_error", "backend_error"},
    {"ShuttingDown", 503, "server_error", "shutting_down"},
    {"BackendTimeout", 504, "server_error", "backend_timeout"},
};

}  // namespace

HttpError http_error(const Error& e) {
  for (const auto& row : kErrorRows) {
    if (row.error_type != e.type) continue;
    HttpError h;
    h.status = row.status;
    h.type = row.openai_type;
    h.code = row.code;
    h.message = e.message;
    h.param = e.path;
    return h;
  }
  return request_error(e);  // the request's fault: 400 naming the field path
}

Error gateway_error(std::string type, std::string message, std::string param) {
  return Error{std::move(type), std::move(message), 0, 0, std::move(param)};
}

}  // namespace chatwire::serve
