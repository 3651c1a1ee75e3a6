// The raw-completion APIs chatwire serve speaks to backends, one row each: how a prompt of
// token ids and the sampling parameters become a request body, and how one streamed event of
// the reply becomes generated ids or text. Adding a backend API is one row in backend_api.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/error.hpp"
#include "chatwire/serve.hpp"

namespace chatwire::serve {

using json = nlohmann::ordered_json;

struct BackendRequest {
  std::string model;               // openai backends' `model`
  std::vector<std::uint32_t> ids;  // the prompt's ids (empty: the text is sent)
  std::string text;                // the prompt's text
  std::optional<std::size_t> max_tokens;
  std::vector<std::string> stop;  // the request's stop strings and the template's
  std::vector<std::uint32_t> stop_ids;
  json sampling = json::object();  // OpenAI names: temperature, top_p, seed, top_k, ...
  json response_format;            // null = none; else OpenAI's response_format
  // logprobs: the sampled token's log probability and this many alternatives (0-20).
  std::optional<std::size_t> top_logprobs;
};

// One generated token's log probability as a backend reports it: by id where the API gives
// ids, else by its text.
struct TokenLogprob {
  std::optional<std::uint32_t> id;
  std::string text;  // when there is no id
  double logprob = 0;
  std::vector<TokenLogprob> top;  // the most likely alternatives
};

// One event of a streamed reply, as increments (cumulative APIs are differenced).
struct BackendChunk {
  bool has_ids = false;  // the event carried token ids (preferred over text)
  std::vector<std::uint32_t> ids;
  std::string text;
  bool done = false;   // the last event of the reply
  std::string finish;  // "stop", "length" or "" (not said)
  std::optional<std::size_t> prompt_tokens, completion_tokens;
  std::optional<std::size_t> cached_tokens;  // of the prompt, served from the backend's cache
  std::vector<TokenLogprob> logprobs;        // of the tokens this event generated
};

// What a cumulative API (SGLang's /generate) has sent so far.
struct StreamState {
  std::size_t text_seen = 0;
  std::size_t ids_seen = 0;
  std::size_t logprobs_seen = 0;
};

struct BackendApiRow {
  BackendApi api;
  std::string_view name;  // as --backend-api and the config spell it
  std::string_view path;  // appended to the backend URL's path prefix
  json (*build)(const BackendRequest& request);
  // One SSE `data:` payload (not "[DONE]"). Errors: malformed JSON or an error event (the
  // message is the backend's), reported to the client as 502.
  Result<BackendChunk> (*read)(std::string_view data, StreamState& state);
};

const BackendApiRow& backend_api_row(BackendApi api) noexcept;

}  // namespace chatwire::serve
