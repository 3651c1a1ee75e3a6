// OpenAI's response shapes (see openai_shapes.hpp).
#include "serve/openai_shapes.hpp"

#include "chatwire/endpoint_json.hpp"

namespace chatwire::serve {

namespace {

std::string dump(const json& j) {
  // Model output may hold bytes that are not UTF-8: replaced, never a thrown exception.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json head_json(const ResponseHead& h, const char* object) {
  return json{{"id", h.id}, {"object", object}, {"created", h.created}, {"model", h.model}};
}

void put_reasoning(json& out, const ResponseHead& h, const std::string& reasoning) {
  if (h.reasoning_fields == nullptr) return;
  for (const auto& field : *h.reasoning_fields) out[field] = reasoning;
}

// OpenAI's usage; completion_tokens_details as vLLM writes it where a reasoning parser counts,
// prompt_tokens_details only where the backend reported its cache.
json usage_json(const Usage& u) {
  json out{{"prompt_tokens", u.prompt_tokens},
           {"completion_tokens", u.completion_tokens},
           {"total_tokens", u.prompt_tokens + u.completion_tokens},
           {"completion_tokens_details", {{"reasoning_tokens", u.reasoning_tokens}}}};
  if (u.cached_tokens) out["prompt_tokens_details"] = {{"cached_tokens", *u.cached_tokens}};
  return out;
}

}  // namespace

std::string error_body(const HttpError& e) {
  json err{{"message", e.message},
           {"type", e.type},
           {"param", e.param.empty() ? json(nullptr) : json(e.param)},
           {"code", e.code.empty() ? json(nullptr) : json(e.code)}};
  return dump(json{{"error", std::move(err)}});
}

HttpError request_error(const Error& e) {
  HttpError h;
  h.status = 400;
  h.type = "invalid_request_error";
  h.message = e.to_string();
  h.param = e.path;
  h.code = e.type;
  return h;
}

json warnings_json(const std::vector<endpoint::Warning>& warnings) {
  if (warnings.empty()) return nullptr;
  return endpoint::to_json(warnings);  // the shape `chatwire parse` writes
}

std::string completion_body(const ResponseHead& head, const endpoint::Message& m,
                            std::string_view finish_reason, const Usage& usage,
                            const json& logprobs, const json& warnings) {
  json message{
      {"role", "assistant"},
      {"content", m.content.empty() && !m.tool_calls.empty() ? json(nullptr) : json(m.content)}};
  if (!m.reasoning_content.empty()) put_reasoning(message, head, m.reasoning_content);
  if (!m.tool_calls.empty()) {
    json calls = json::array();
    for (const auto& c : m.tool_calls)
      calls.push_back(
          {{"id", c.id},
           {"type", "function"},
           {"function",
            {{"name", c.name}, {"arguments", c.arguments.empty() ? "{}" : c.arguments}}}});
    message["tool_calls"] = std::move(calls);
  }
  json out = head_json(head, "chat.completion");
  out["choices"] = json::array({json{{"index", head.choice},
                                     {"message", std::move(message)},
                                     {"logprobs", logprobs},
                                     {"finish_reason", finish_reason}}});
  if (!warnings.is_null()) out["choices"][0]["warnings"] = warnings;
  out["usage"] = usage_json(usage);
  return dump(out);
}

std::string chunk_body(const ResponseHead& head, const endpoint::Delta& d, bool first,
                       const json& logprobs) {
  json delta = json::object();
  if (first) delta["role"] = "assistant";
  if (!d.content.empty() || (first && d.reasoning_content.empty() && d.tool_calls.empty()))
    delta["content"] = d.content;
  if (!d.reasoning_content.empty()) put_reasoning(delta, head, d.reasoning_content);
  if (!d.tool_calls.empty()) {
    json calls = json::array();
    for (const auto& c : d.tool_calls) {
      json call{{"index", c.index}};
      if (!c.id.empty()) {
        call["id"] = c.id;
        call["type"] = "function";
        call["function"] = {{"name", c.name}, {"arguments", c.arguments}};
      } else {
        call["function"] = {{"arguments", c.arguments}};
      }
      calls.push_back(std::move(call));
    }
    delta["tool_calls"] = std::move(calls);
  }
  if (delta.empty()) return {};
  json out = head_json(head, "chat.completion.chunk");
  out["choices"] = json::array({json{{"index", head.choice},
                                     {"delta", std::move(delta)},
                                     {"logprobs", logprobs},
                                     {"finish_reason", nullptr}}});
  return dump(out);
}

std::string finish_chunk_body(const ResponseHead& head, std::string_view finish_reason,
                              const json& logprobs, const json& warnings) {
  json out = head_json(head, "chat.completion.chunk");
  out["choices"] = json::array({json{{"index", head.choice},
                                     {"delta", json::object()},
                                     {"logprobs", logprobs},
                                     {"finish_reason", finish_reason}}});
  if (!warnings.is_null()) out["choices"][0]["warnings"] = warnings;
  return dump(out);
}

std::string usage_chunk_body(const ResponseHead& head, const Usage& usage) {
  json out = head_json(head, "chat.completion.chunk");
  out["choices"] = json::array();
  out["usage"] = usage_json(usage);
  return dump(out);
}

std::string sse(std::string_view body) {
  std::string s;
  s.reserve(body.size() + 8);
  s += "data: ";
  s += body;
  s += "\n\n";
  return s;
}

}  // namespace chatwire::serve
