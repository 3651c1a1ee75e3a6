// OpenAI's response shapes as the gateway writes them: error bodies, the non-streaming
// chat.completion, and the chat.completion.chunk events of a stream (first chunk with the
// role; a tool call's first delta with index, id, type and name, later ones with index and an
// arguments fragment; a final chunk with an empty delta and finish_reason; a usage chunk with
// no choices).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/endpoint.hpp"
#include "serve/backend_api.hpp"

namespace chatwire::serve {

struct HttpError {
  int status = 400;
  std::string type = "invalid_request_error";  // OpenAI's error types
  std::string message;
  std::string param;  // the request field path, "" = none
  std::string code;   // e.g. "model_not_found", "RequestError"
};

// {"error": {"message", "type", "param", "code"}} (param and code null when empty).
std::string error_body(const HttpError& e);
// A chatwire Error from preparing a request, as a 400 naming the field path.
HttpError request_error(const Error& e);

struct ResponseHead {
  std::string id;  // chatcmpl-...
  long long created = 0;
  std::string model;
  const std::vector<std::string>* reasoning_fields = nullptr;
  std::size_t choice = 0;  // the choice's index (n > 1)
};

struct Usage {
  std::size_t prompt_tokens = 0, completion_tokens = 0;
  // Of the completion tokens, those inside the reasoning block (Generation::reasoning_tokens);
  // of the prompt tokens, those the backend reported served from its cache (unknown: not said).
  std::size_t reasoning_tokens = 0;
  std::optional<std::size_t> cached_tokens;
  // n > 1: another choice's generated tokens (its prompt is the same one).
  void add_completion(const Usage& other) {
    completion_tokens += other.completion_tokens;
    reasoning_tokens += other.reasoning_tokens;
  }
};

// What the output parser reported about a choice (a call cut off, text that looked like a call,
// a marker with no block open, ...), as [{"code", "message", "offset"}]; null when nothing. The
// choice carries it as "warnings", a field OpenAI does not define (clients ignore it), so a
// client can see why text it expected as a call arrived as content: nothing is dropped silently.
json warnings_json(const std::vector<endpoint::Warning>& warnings);

// The non-streaming response.
// `logprobs`: the choice's {"content": [...]} (null: none asked for); `warnings`: warnings_json.
std::string completion_body(const ResponseHead& head, const endpoint::Message& message,
                            std::string_view finish_reason, const Usage& usage,
                            const json& logprobs = nullptr, const json& warnings = nullptr);
// One chunk: `first` adds role "assistant". Empty deltas are not written (returns "").
std::string chunk_body(const ResponseHead& head, const endpoint::Delta& delta, bool first,
                       const json& logprobs = nullptr);
// The chunk with the finish reason, and the choice's warnings (warnings_json) when there are any.
std::string finish_chunk_body(const ResponseHead& head, std::string_view finish_reason,
                              const json& logprobs = nullptr, const json& warnings = nullptr);
std::string usage_chunk_body(const ResponseHead& head, const Usage& usage);

// "data: <body>\n\n"
std::string sse(std::string_view body);

}  // namespace chatwire::serve
