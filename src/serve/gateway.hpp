// The gateway's routes without the sockets: which route a request goes to (404, 405), and the
// answers of the routes that do not generate (models, tokenize, detokenize, render, health,
// metrics). Chat completions are planned and relayed by chat_relay.hpp; the server runs them.
// Everything here is safe to call from the worker threads at once.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chatwire/serve.hpp"
#include "serve/metrics.hpp"
#include "serve/models.hpp"
#include "serve/openai_shapes.hpp"

namespace chatwire::serve {

struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::string error_code;  // an error reply's OpenAI code (its body's error.code), for the log
};

// A request target's path: without the query.
inline std::string_view request_path(std::string_view target) {
  return target.substr(0, target.find('?'));
}

// The headers of the answer to a CORS preflight (204, no body).
using HeaderList = std::vector<std::pair<std::string, std::string>>;

class Gateway;

// Routes whose answer comes from a backend, relayed by the server (chat_relay.hpp).
enum class Relayed : unsigned char {
  none,              // answered here (Route::answer)
  chat_completions,  // POST /v1/chat/completions
  responses,         // POST /v1/responses: the chat path in the Responses shapes (responses.hpp)
};

// What a route's answer is given: the body, and for an item route the item's id.
struct RouteRequest {
  std::string_view body;
  std::string id;  // the path after an item route's prefix, percent-decoded ("" otherwise)
};

struct Route {
  std::string_view method;
  std::string_view path;  // an item route: the prefix ("/v1/models/"), the id follows
  bool item;
  std::string_view name;  // the metrics label
  // Counted against limits.max_concurrent_requests (renders and generations).
  bool limited;
  // Answered without an API key when Config::api_keys are set (health probes, scrapers).
  bool open;
  Relayed relayed;
  // The answer of a route that is not relayed (nullptr for those that are).
  HttpReply (*answer)(const Gateway& gateway, const RouteRequest& request);
};

class Gateway {
 public:
  Gateway(Config config, LoadedModels models);

  // The route of a request target (the query is ignored). Errors: RouteNotFound,
  // MethodNotAllowed.
  Result<const Route*> route(std::string_view method, std::string_view target) const;
  // The methods served on the target's path, as an Allow header lists them ("GET, HEAD"; HEAD
  // wherever GET is); "" for a path no route serves.
  std::string methods_of(std::string_view target) const;
  // The request a route's answer gets: the body, and an item route's id from the target.
  static RouteRequest route_request(const Route& route, std::string_view target,
                                    std::string_view body);

  const Config& config() const noexcept { return config_; }
  const LoadedModels& models() const noexcept { return models_; }
  Metrics& metrics() const noexcept { return metrics_; }

  // Whether a request to `route` with this Authorization header value may be answered: an
  // Unauthorized error (401) when Config::api_keys are set and it carries none of them.
  Result<bool> authorize(const Route& route, std::string_view authorization) const;

  // CORS: the Access-Control-Allow-Origin value for a request from `origin` ("" = none: no
  // Config::cors_origins match it, or it sent no Origin).
  std::string allowed_origin(std::string_view origin) const;
  // The headers of the answer (204) to an OPTIONS preflight for `target`: the methods and the
  // headers allowed (those the browser asks for, `asked_headers`: the OpenAI clients send their
  // own X-Stainless-* headers); nullopt when it is not one the gateway answers (CORS off, no
  // such path, origin not allowed): the request is then routed as any other (405).
  std::optional<HeaderList> preflight(std::string_view target, std::string_view origin,
                                      std::string_view asked_headers = {}) const;

  // The error reply, counted in the metrics.
  HttpReply error_reply(const HttpError& e) const;
  HttpReply error_reply(const Error& e) const;

 private:
  Config config_;
  LoadedModels models_;
  mutable Metrics metrics_;
};

}  // namespace chatwire::serve
