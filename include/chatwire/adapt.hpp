// chatwire's adapter: turns one OpenAI chat-completions request into the template variables
// that make a given template render every piece of the conversation, driven only by the
// probe's measurements of that template (probe::Profile), never by its name.
//
//   auto profile = chatwire::probe::probe_file("template.jinja");
//   auto adapted = chatwire::adapt::adapt(request_json, *profile);
//   // adapted->context: messages/tools/documents/add_generation_prompt/... to render with
//   // adapted->adaptations: what was changed, and the probe finding behind each change
//
// After adapting, the context is rendered once and every piece of the request (system text,
// user and assistant text, tool descriptions, call names and arguments, tool results) is
// looked for in the output; what the template still loses is refused with a reason
// (CannotRepresent, naming the request field) instead of being silently dropped.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/chat.hpp"
#include "chatwire/error.hpp"
#include "chatwire/jinja.hpp"
#include "chatwire/probe.hpp"
#include "chatwire/value.hpp"

namespace chatwire::adapt {

// One change made to the request. `code` is short and stable (see kAdaptations in
// src/adapt/adapt.cpp); `finding` is the probe measurement that called for it.
struct Adaptation {
  std::string code;     // e.g. "arguments_to_dict", "short_call_ids", "system_into_user"
  std::string finding;  // e.g. "conventions.arguments_string: error (TypeError: ...)"
  std::string detail;   // what exactly was changed, with request field paths
};

struct Options {
  // Text syntax for tool calls written into assistant content when the template drops
  // structured calls: "" = the syntax the template's own instructions teach (found in the
  // measured definitions block), else a name from the call-syntax table ("hermes",
  // "granite", "mistral", "json"); see call_syntax_names().
  std::string call_syntax;
  // The template variables a model directory would add (bos_token, eos_token, ...).
  Value special_tokens = Value::empty_dict();
  // Render the adapted context and refuse (CannotRepresent) when a piece is still lost.
  bool verify = true;
  jinja::Limits limits;
  std::string now = "2026-01-15T10:00:00";  // strftime_now's clock during verification
  // The verification render goes through chat::render with these (see adapt_request).
  std::optional<chat::Mode> mode;  // overrides add_generation_prompt/continue_final_message
  bool assistant_mask = false;     // warn when the template has no {% generation %} blocks
};

struct Adapted {
  // The template variables to render with: chat::template_variables of the adapted request.
  nlohmann::ordered_json context;
  std::vector<Adaptation> adaptations;
  std::vector<std::string> warnings;
  std::string rendered;  // the verification render (empty when Options::verify is false)
};

// `request` is the OpenAI request object: messages (system/developer/user/assistant/tool;
// assistant tool_calls with function.arguments a JSON string; reasoning_content; content a
// string, a list of text parts or null), tools (nested {"type":"function","function":{..}}),
// add_generation_prompt (default true), chat_template_kwargs and any other field that is not
// an OpenAI sampling parameter (e.g. enable_thinking, reasoning_effort) as template
// variables. `tmpl` is the template the profile measured; it is used for verification.
// Errors: RequestError (malformed request, with the field path), CannotRepresent (the
// template cannot carry a piece of the request, with the field path and the reason).
Result<Adapted> adapt(const nlohmann::ordered_json& request, const probe::Profile& profile,
                      const jinja::Template& tmpl, const Options& options = {});

// The adapted request as the chat layer takes it: one request path, so modes,
// continue_final_message, assistant masks and chat_template_kwargs work with adaptation too.
// `request.kwargs` holds the request's template variables (chat_template_kwargs and the
// non-OpenAI fields); the special tokens are Options::special_tokens, passed to chat::render.
struct AdaptedRequest {
  chat::ChatRequest request;
  std::vector<Adaptation> adaptations;
  std::vector<std::string> warnings;
  // The verification render (chat::render with Options::mode/assistant_mask/now/limits);
  // nullopt when Options::verify is false.
  std::optional<chat::ChatResult> rendered;
};
// What adapt() does, returning the chat request instead of its JSON context. The request's
// add_generation_prompt defaults to true unless continue_final_message is set.
Result<AdaptedRequest> adapt_request(const nlohmann::ordered_json& request,
                                     const probe::Profile& profile, const jinja::Template& tmpl,
                                     const Options& options = {});

// The names of the call-syntax table.
std::vector<std::string> call_syntax_names();

// ---------------------------------------------------------------------------------------
// The acceptance check: a sentinel tool conversation in OpenAI wire shape, adapted and
// rendered; each sentinel must survive, and past reasoning must not.
// ---------------------------------------------------------------------------------------

// The sentinel request (JSON string arguments, an OpenAI-style call id, nested tools,
// reasoning on a past assistant turn).
nlohmann::ordered_json sentinel_request();

struct SentinelResult {
  std::string name;      // "system", "question", "tool_description", "call_name", ...
  std::string text;      // the sentinel string
  bool expected = true;  // false for past reasoning, which must NOT survive
  bool present = false;
  bool ok() const { return present == expected; }
};

struct CheckReport {
  bool passed = false;   // every sentinel as expected
  bool refused = false;  // adapt refused (the reason is in `error`)
  std::string error;     // adapt's error, or the render error
  std::vector<SentinelResult> sentinels;
  std::vector<Adaptation> adaptations;
  std::vector<std::string> warnings;
  nlohmann::ordered_json context;  // the adapted context (null when refused)
  nlohmann::ordered_json to_json() const;
};

// Looks for each sentinel of sentinel_request() in `rendered`.
std::vector<SentinelResult> find_sentinels(std::string_view rendered);

// Adapts sentinel_request() for the template and renders it with chatwire's engine.
CheckReport check(const probe::Profile& profile, const jinja::Template& tmpl,
                  const Options& options = {});

// The raw request (no adaptation, OpenAI wire shape passed as transformers takes it)
// rendered and checked the same way: the "before" column of the survey.
CheckReport check_raw(const jinja::Template& tmpl, const Options& options = {});

// ---------------------------------------------------------------------------------------
// Loading what the adapter needs: the template, its special tokens and its probe profile.
// ---------------------------------------------------------------------------------------
struct Target {
  std::shared_ptr<const jinja::Template> tmpl;
  Value special_tokens =
      Value::empty_dict();  // a model's tokens; {bos "<s>", eos "</s>"} for a file
  probe::Profile profile;
};
// A .jinja file, probed as probe::probe_file does.
Result<Target> load_template_file(const std::filesystem::path& file);
// A checkpoint directory: the template transformers chooses when tools are given, probed
// with the directory's own special tokens.
Result<Target> load_model_dir(const std::filesystem::path& dir);

}  // namespace chatwire::adapt
