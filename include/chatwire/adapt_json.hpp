// The adapter's nlohmann forms: the request as JSON in, the adapted template context as JSON
// out (adapt), and the acceptance check with its JSON report. chatwire/adapt.hpp itself does
// not pull in nlohmann.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chatwire/adapt.hpp"

namespace chatwire::adapt {

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
// What adapt() does, returning the chat request instead of its JSON context.
Result<AdaptedRequest> adapt_request(const nlohmann::ordered_json& request,
                                     const probe::Profile& profile, const jinja::Template& tmpl,
                                     const Options& options = {});

// ---------------------------------------------------------------------------------------
// The acceptance check: a sentinel tool conversation in OpenAI wire shape, adapted and
// rendered; each sentinel must survive, and past reasoning must not.
// ---------------------------------------------------------------------------------------

// The sentinel request (JSON string arguments, an OpenAI-style call id, nested tools,
// reasoning on a past assistant turn).
nlohmann::ordered_json sentinel_request();

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

// Adapts sentinel_request() for the template and renders it with chatwire's engine.
CheckReport check(const probe::Profile& profile, const jinja::Template& tmpl,
                  const Options& options = {});

// The raw request (no adaptation, OpenAI wire shape passed as transformers takes it)
// rendered and checked the same way: the "before" column of the survey.
CheckReport check_raw(const jinja::Template& tmpl, const Options& options = {});

}  // namespace chatwire::adapt
