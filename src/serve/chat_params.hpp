// The fields of a chat-completions request that the gateway handles itself rather than the
// template: streaming, sampling, stop, limits, tool_choice, response_format, n, logprobs.
// Each is checked (errors name the field path, for a 400) and either passed to the backend,
// applied to the request (tool_choice "none" drops the tools), or refused; none is ignored.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "chatwire/error.hpp"
#include "chatwire/serve.hpp"
#include "serve/backend_api.hpp"

namespace chatwire::serve {

struct ChatParams {
  std::string model;
  bool stream = false;
  std::size_t n = 1;  // choices: one backend request each
  bool include_usage = false;
  std::optional<std::size_t> max_tokens;
  std::string max_tokens_field;  // the request's field that set it ("" = the model's default)
  std::vector<std::string> stop;
  json sampling = json::object();
  json response_format;  // null = none
  // logprobs true: the sampled tokens' log probabilities with this many alternatives each.
  std::optional<std::size_t> top_logprobs;
  // tool_choice "none": the tools are not offered, and the reply is read without tool calls.
  bool tool_choice_none = false;
};

// tool_choice "none" removes `tool_choice` and the `tools`; nothing else is changed (the
// Endpoint reads "required", a named function and parallel_tool_calls). Errors are
// RequestError with the field path.
Result<ChatParams> read_chat_params(json& request, const ModelConfig& model,
                                    std::size_t max_choices = Limits{}.max_choices);

// The request's fields that are neither OpenAI parameters (adapt::is_openai_parameter, and
// reasoning_effort, which reasoning templates read and clients send to any model) nor names the
// template mentions (`template_names`, sorted): a 400 naming the first, as OpenAI refuses an
// unrecognised argument, rather than a typo (`max_tokenz`) or an unserved API (the legacy
// `functions`) quietly passed to a template that never reads it. chat_template_kwargs is not
// checked: it is addressed to the template.
std::optional<Error> check_request_fields(const json& request,
                                          const std::vector<std::string>& template_names);

// A content part that is no text (an image, audio): the gateway sends its backend a text prompt
// (/v1/completions, /generate), which carries no media, so the model would get the template's
// placeholder without the image (or nothing). A 400 naming `messages[i].content[k]`.
std::optional<Error> check_media_parts(const json& request);

// A model's default_sampling (configuration): an object of the sampling fields a request may set,
// each checked as in a request (type and range); an error names `path` and the key.
std::optional<Error> check_default_sampling(const json& sampling, const std::string& path);

}  // namespace chatwire::serve
