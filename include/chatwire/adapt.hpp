// chatwire's adapter: turns one OpenAI chat-completions request into the template variables
// that make a given template render every piece of the conversation, driven only by the
// probe's measurements of that template (probe::Profile), never by its name.
//
//   auto target = chatwire::adapt::load_template_file("template.jinja");
//   auto adapted = chatwire::adapt::adapt_request(request_json_text, target->profile,
//                                                 *target->tmpl);
//   // adapted->request: the chat::ChatRequest to render (chat::render)
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
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/chat.hpp"
#include "chatwire/error.hpp"
#include "chatwire/jinja.hpp"
#include "chatwire/probe.hpp"
#include "chatwire/value.hpp"

// The request as nlohmann JSON (adapt, adapt_request) and the acceptance check (check,
// CheckReport): chatwire/adapt_json.hpp.

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
  // adapt_request(request_json): the size and nesting of the request's JSON text.
  chat::InputLimits input;
  std::string now = "2026-01-15T10:00:00";  // strftime_now's clock during verification
  // The verification render goes through chat::render with these (see adapt_request).
  std::optional<chat::Mode> mode;  // overrides add_generation_prompt/continue_final_message
  bool assistant_mask = false;     // warn when the template has no {% generation %} blocks
};

// The adapted request as the chat layer takes it: one request path, so modes,
// continue_final_message, assistant masks and chat_template_kwargs work with adaptation too.
// `request.kwargs` holds the request's template variables (chat_template_kwargs and the
// non-OpenAI fields); the special tokens are Options::special_tokens, passed to chat::render.
struct AdaptedRequest {
  chat::ChatRequest request;
  std::vector<Adaptation> adaptations;
  std::vector<std::string> warnings;
  // The call syntax the prompt teaches the model ("" = the template's own): set when the
  // template writes no calls and the adapter wrote the tool instructions (with its example) or
  // past calls as text in this syntax; the model's calls are read with call_syntax_dialect().
  std::string taught_call_syntax;
  // The verification render (chat::render with Options::mode/assistant_mask/now/limits);
  // nullopt when Options::verify is false.
  std::optional<chat::ChatResult> rendered;
};
// `request_json` is the OpenAI request as JSON text (see adapt() in chatwire/adapt_json.hpp for
// the fields read). The request's add_generation_prompt defaults to true unless
// continue_final_message is set. Errors: RequestError (not JSON, or malformed, with the field
// path), CannotRepresent (the template cannot carry a piece of the request, with the field
// path and the reason).
Result<AdaptedRequest> adapt_request(std::string_view request_json, const probe::Profile& profile,
                                     const jinja::Template& tmpl, const Options& options = {});

// Whether a request field is an OpenAI parameter the adapter does not pass to the template
// (model, messages, tools, sampling and transport fields, ...): every other field, and
// chat_template_kwargs, are template variables, as apply_chat_template(**kwargs) takes them.
bool is_openai_parameter(std::string_view key);

// The names of the call-syntax table.
std::vector<std::string> call_syntax_names();
// The output parser's dialect that reads calls in the named call syntax ("" = unknown name).
std::string call_syntax_dialect(std::string_view name);

// ---------------------------------------------------------------------------------------
// The acceptance check's sentinels (the check itself, check/CheckReport, is in
// chatwire/adapt_json.hpp).
// ---------------------------------------------------------------------------------------

struct SentinelResult {
  std::string name;      // "system", "question", "tool_description", "call_name", ...
  std::string text;      // the sentinel string
  bool expected = true;  // false for past reasoning, which must NOT survive
  bool present = false;
  bool ok() const { return present == expected; }
};

// Looks for each sentinel of sentinel_request() in `rendered`.
std::vector<SentinelResult> find_sentinels(std::string_view rendered);

// ---------------------------------------------------------------------------------------
// Loading what the adapter needs: the template, its special tokens and its probe profile.
// ---------------------------------------------------------------------------------------
struct Target {
  std::shared_ptr<const jinja::Template> tmpl;
  // The tokens a request is rendered with: a model's; none for a file, whose model is unknown
  // (`render --template` passes none either). A caller with a tokenizer puts its tokens here.
  Value special_tokens = Value::empty_dict();
  // The tokens the profile was measured with: a model's; for a file the stand-ins {bos "<s>",
  // eos "</s>"}, which are no model's and so never reach a request's context.
  Value measured_tokens = Value::empty_dict();
  probe::Profile profile;
};
// A .jinja file, probed as probe::probe_file does.
Result<Target> load_template_file(const std::filesystem::path& file);
// A checkpoint directory: the template transformers chooses when tools are given, probed
// with the directory's own special tokens.
Result<Target> load_model_dir(const std::filesystem::path& dir);

}  // namespace chatwire::adapt
