// The gateway's routes (see gateway.hpp).
#include "serve/gateway.hpp"

#include <algorithm>
#include <array>
#include <chrono>

#include "chatwire/tokenize.hpp"
#include "serve/chat_relay.hpp"
#include "serve/http_errors.hpp"
#include "util/hex.hpp"
#include "util/json_text.hpp"
#include "util/token_ids.hpp"

namespace chatwire::serve {

namespace {

constexpr std::size_t kMaxJsonDepth = 512;

std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

HttpReply ok(const json& j) {
  return HttpReply{200, "application/json", dump(j), {}};
}

Result<json> read_object(std::string_view body) {
  auto parsed = util::parse_bounded_json(body, kMaxJsonDepth);
  if (!parsed)
    return gateway_error("RequestError", parsed.failure == util::BoundedJson::Failure::kTooDeep
                                             ? "the request is nested too deeply"
                                             : "the request body is not JSON: " + parsed.what);
  if (!parsed.value.is_object())
    return gateway_error("RequestError", "the request is not a JSON object");
  return std::move(parsed.value);
}

// The model a request names, or the only one served when it names none.
Result<const ServedModel*> model_of(const Gateway& g, const json& request) {
  auto name = request.find("model");
  if (name == request.end() || name->is_null()) {
    if (g.models().models.size() == 1) return g.models().models.front().get();
    return gateway_error("RequestError", "must name a served model (GET /v1/models)", "model");
  }
  if (!name->is_string()) return gateway_error("RequestError", "must be a string", "model");
  const ServedModel* m = g.models().find(name->get_ref<const std::string&>());
  if (m == nullptr)
    return gateway_error("ModelNotFound",
                         "the model '" + name->get<std::string>() + "' is not served here",
                         "model");
  return m;
}

HttpReply health(const Gateway& g, const RouteRequest&) {
  return ok(json{{"status", "ok"}, {"models", g.models().models.size()}});
}

json model_object(const ServedModel& m) {
  return {{"id", m.config.name},
          {"object", "model"},
          {"created", m.loaded_at},
          {"owned_by", "chatwire"},
          {"backend_api", backend_api_name(m.config.backend_api)},
          {"capabilities", json::parse(m.capabilities_json)}};
}

HttpReply list_models(const Gateway& g, const RouteRequest&) {
  json data = json::array();
  for (const auto& m : g.models().models) data.push_back(model_object(*m));
  return ok(json{{"object", "list"}, {"data", std::move(data)}});
}

// GET /v1/models/{id}: the SDKs' models.retrieve (an id with a slash arrives as %2F).
HttpReply model_info(const Gateway& g, const RouteRequest& request) {
  for (const auto& m : g.models().models)
    if (m->config.name == request.id) return ok(model_object(*m));
  return g.error_reply(
      gateway_error("ModelNotFound", "the model '" + request.id + "' is not served", "model"));
}

// GET and DELETE /v1/responses/{id}: nothing is stored, so no response can be fetched; the
// answer says so rather than a bare "no route".
HttpReply stored_response(const Gateway& g, const RouteRequest& request) {
  return g.error_reply(gateway_error(
      "RouteNotFound", "no stored response '" + request.id +
                           "': the gateway stores no responses (POST /v1/responses answers "
                           "each request whole; send the conversation as input)"));
}

HttpReply metrics_text(const Gateway& g, const RouteRequest&) {
  return HttpReply{200, "text/plain; version=0.0.4", g.metrics().prometheus_text(), {}};
}

// vLLM's /tokenize: {prompt, add_special_tokens (default true)} or a chat request's
// {messages, tools, chat_template_kwargs, ..., add_special_tokens (default false: the template
// writes its own)} -> {count, max_model_len, tokens, token_strs?}.
HttpReply tokenize(const Gateway& g, const RouteRequest& route_request) {
  const std::string_view body = route_request.body;
  auto request = read_object(body);
  if (!request) return g.error_reply(request.error());
  auto model = model_of(g, *request);
  if (!model) return g.error_reply(model.error());
  const tokenize::Tokenizer& tokenizer = *(*model)->endpoint.tokenizer();
  std::vector<std::uint32_t> ids;
  std::optional<bool> add_special_tokens;
  bool token_strs = false;
  for (const auto& [key, flag] :
       {std::pair<const char*, std::optional<bool>*>{"add_special_tokens", &add_special_tokens},
        {"return_token_strs", nullptr}}) {
    auto a = request->find(key);
    if (a == request->end() || a->is_null()) continue;
    if (!a->is_boolean())
      return g.error_reply(gateway_error("RequestError", "must be a boolean", key));
    if (flag != nullptr)
      *flag = a->get<bool>();
    else
      token_strs = a->get<bool>();
  }
  if (auto prompt = request->find("prompt"); prompt != request->end()) {
    if (!prompt->is_string())
      return g.error_reply(gateway_error("RequestError", "must be a string", "prompt"));
    const bool add_special = add_special_tokens.value_or(true);
    auto encoded = tokenizer.encode_ids(prompt->get_ref<const std::string&>(), add_special);
    if (!encoded) return g.error_reply(encoded.error());
    ids = std::move(*encoded);
  } else if (request->contains("messages")) {
    json chat = *request;
    for (const char* key : {"add_special_tokens", "return_token_strs", "tool_choice"})
      chat.erase(key);
    auto prepared = (*model)->endpoint.prepare(dump(chat));
    if (!prepared) return g.error_reply(prepared.error());
    ids = std::move(prepared->ids);
    if (add_special_tokens.value_or(false)) {  // as vLLM: the tokenizer's own on top of the render
      auto encoded = tokenizer.encode_ids(prepared->text, true);
      if (!encoded) return g.error_reply(encoded.error());
      ids = std::move(*encoded);
    }
  } else {
    return g.error_reply(gateway_error("RequestError", "needs `prompt` or `messages`", "prompt"));
  }
  const std::size_t max_model_len = (*model)->config.max_model_len != 0
                                        ? (*model)->config.max_model_len
                                        : (*model)->position_embeddings;
  json out{{"count", ids.size()},
           {"max_model_len", max_model_len != 0 ? json(max_model_len) : json(nullptr)},
           {"tokens", ids}};
  if (token_strs) {
    json strs = json::array();
    for (auto id : ids) strs.push_back(tokenizer.id_to_token(id).value_or(""));
    out["token_strs"] = std::move(strs);
  }
  return ok(out);
}

// vLLM's /detokenize: {tokens} -> {prompt}.
HttpReply detokenize(const Gateway& g, const RouteRequest& route_request) {
  const std::string_view body = route_request.body;
  auto request = read_object(body);
  if (!request) return g.error_reply(request.error());
  auto model = model_of(g, *request);
  if (!model) return g.error_reply(model.error());
  auto tokens = request->find("tokens");
  if (tokens == request->end() || !tokens->is_array())
    return g.error_reply(gateway_error("RequestError", "must be a list of token ids", "tokens"));
  std::size_t bad = 0;
  const auto ids = util::token_ids(*tokens, bad);
  if (!ids)
    return g.error_reply(
        gateway_error("RequestError", "must be a token id", "tokens[" + std::to_string(bad) + "]"));
  auto text = (*model)->endpoint.tokenizer()->decode(*ids);
  if (!text) {
    Error e = text.error();
    e.path = "tokens";
    return g.error_reply(e);
  }
  return ok(json{{"prompt", *text}});
}

// The prompt a chat request renders to, with its ids and the adaptations, without generating.
HttpReply render(const Gateway& g, const RouteRequest& route_request) {
  const std::string_view body = route_request.body;
  auto job = plan_chat(g.models(), body, kMaxJsonDepth, Limits{}.max_choices, false);
  if (!job) return g.error_reply(job.error());
  json adaptations = json::array();
  for (const auto& a : job->prompt.adaptations)
    adaptations.push_back({{"code", a.code}, {"finding", a.finding}, {"detail", a.detail}});
  return ok(json{{"model", job->model->config.name},
                 {"prompt", job->prompt.text},
                 {"prompt_token_ids", job->prompt.ids},
                 {"adaptations", std::move(adaptations)},
                 {"warnings", job->prompt.warnings},
                 {"stop_token_ids", job->prompt.stop_ids},
                 {"stop", job->prompt.stop_strings},
                 {"backend_request", json::parse(job->backend_body)}});
}

// method, path, item (the path is a prefix, an id follows), metrics label, limited, open (no
// API key), relayed, answer
constexpr std::array<Route, 11> kRoutes = {{
    {"POST", "/v1/chat/completions", false, "chat_completions", true, false,
     Relayed::chat_completions, nullptr},
    {"POST", "/v1/responses", false, "responses", true, false, Relayed::responses, nullptr},
    {"GET", "/v1/responses/", true, "responses_item", false, false, Relayed::none, stored_response},
    {"DELETE", "/v1/responses/", true, "responses_item", false, false, Relayed::none,
     stored_response},
    {"POST", "/v1/chat/render", false, "render", true, false, Relayed::none, render},
    {"POST", "/tokenize", false, "tokenize", true, false, Relayed::none, tokenize},
    // Limited too: a body of max_body_bytes of ids is as much work as a render.
    {"POST", "/detokenize", false, "detokenize", true, false, Relayed::none, detokenize},
    {"GET", "/v1/models", false, "models", false, false, Relayed::none, list_models},
    {"GET", "/v1/models/", true, "model", false, false, Relayed::none, model_info},
    {"GET", "/health", false, "health", false, true, Relayed::none, health},
    {"GET", "/metrics", false, "metrics", false, true, Relayed::none, metrics_text},
}};

// Whether `r` serves `path` (whatever the method): its path, or for an item route its path and
// an id after it.
bool serves(const Route& r, std::string_view path) {
  return r.item ? path.size() > r.path.size() && path.starts_with(r.path) : path == r.path;
}

// %XX decoded; a % not followed by two hex digits stays as it is.
std::string percent_decoded(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && util::hex_value(s[i + 1]) >= 0 &&
        util::hex_value(s[i + 2]) >= 0) {
      out += static_cast<char>(util::hex_value(s[i + 1]) * 16 + util::hex_value(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// Equal without an early exit, so the time a comparison takes does not tell how much of a
// guessed key was right (only its length).
bool same_key(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : ~a[i]));
  return diff == 0;
}

}  // namespace

Gateway::Gateway(Config config, LoadedModels models)
    : config_(std::move(config)), models_(std::move(models)) {}

Result<const Route*> Gateway::route(std::string_view method, std::string_view target) const {
  const std::string_view path = request_path(target);
  bool path_known = false;
  for (const auto& r : kRoutes) {
    if (!serves(r, path)) continue;
    if (r.method == method) return &r;
    path_known = true;
  }
  if (path_known)
    return gateway_error("MethodNotAllowed",
                         std::string(method) + " is not served on " + std::string(path));
  return gateway_error("RouteNotFound", "no route " + std::string(path));
}

std::string Gateway::methods_of(std::string_view target) const {
  const std::string_view path = request_path(target);
  std::string methods;
  for (const auto& r : kRoutes) {
    if (!serves(r, path)) continue;
    methods += (methods.empty() ? "" : ", ") + std::string(r.method);
    if (r.method == "GET") methods += ", HEAD";
  }
  return methods;
}

RouteRequest Gateway::route_request(const Route& route, std::string_view target,
                                    std::string_view body) {
  RouteRequest request{body, {}};
  if (route.item) {
    const std::string_view path = request_path(target);
    request.id = percent_decoded(path.substr(std::min(route.path.size(), path.size())));
  }
  return request;
}

Result<bool> Gateway::authorize(const Route& route, std::string_view authorization) const {
  if (config_.api_keys.empty() || route.open) return true;
  // RFC 7235: the scheme is case-insensitive; one space before the credentials.
  constexpr std::string_view kScheme = "bearer ";
  const bool bearer =
      authorization.size() > kScheme.size() &&
      std::equal(kScheme.begin(), kScheme.end(), authorization.begin(), [](char k, char c) {
        return k == (c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
      });
  if (!bearer)
    return gateway_error("Unauthorized",
                         "no API key: send it as an Authorization header "
                         "(Authorization: Bearer KEY)");
  const std::string_view key = authorization.substr(kScheme.size());
  bool known = false;
  for (const auto& k : config_.api_keys) known |= same_key(key, k);
  if (!known) return gateway_error("Unauthorized", "the API key is not valid");
  return true;
}

std::string Gateway::allowed_origin(std::string_view origin) const {
  if (origin.empty()) return "";
  for (const auto& o : config_.cors_origins) {
    if (o == "*") return "*";
    if (o == origin) return std::string(origin);
  }
  return "";
}

std::optional<HeaderList> Gateway::preflight(std::string_view target, std::string_view origin,
                                             std::string_view asked_headers) const {
  const std::string allowed = allowed_origin(origin);
  if (allowed.empty()) return std::nullopt;
  // The item routes too (`/v1/models/{id}`: the SDKs' models.retrieve sends its key).
  const std::string methods = methods_of(target);
  if (methods.empty()) return std::nullopt;
  // The headers asked for, when they are a header-name list (they go back in a header).
  std::string headers = "Authorization, Content-Type";
  const bool listed = !asked_headers.empty() && asked_headers.size() <= 2048 &&
                      std::all_of(asked_headers.begin(), asked_headers.end(), [](char c) {
                        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                               (c >= '0' && c <= '9') || c == '-' || c == '_' || c == ',' ||
                               c == ' ';
                      });
  if (listed) headers = std::string(asked_headers);
  return HeaderList{{"Access-Control-Allow-Methods", methods},
                    {"Access-Control-Allow-Headers", headers},
                    {"Access-Control-Max-Age", "600"}};
}

HttpReply Gateway::error_reply(const HttpError& e) const {
  metrics_.error(e.code.empty() ? e.type : e.code);
  return HttpReply{e.status, "application/json", error_body(e), e.code};
}

HttpReply Gateway::error_reply(const Error& e) const {
  return error_reply(http_error(e));
}

}  // namespace chatwire::serve
