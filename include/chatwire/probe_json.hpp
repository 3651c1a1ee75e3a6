// The probe's nlohmann forms: a profile as JSON and back, the probe over any renderer (which
// takes the chat request as JSON), and the survey as JSON. chatwire/probe.hpp itself does not
// pull in nlohmann.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "chatwire/probe.hpp"

namespace chatwire::probe {

// The profile as JSON, the same keys as scripts/probe-oracle.py writes, and its inverse (see
// Profile::from_json_text for the errors).
nlohmann::ordered_json to_json(const Profile& profile);
Result<Profile> profile_from_json(const nlohmann::ordered_json& json);

// The probe over any renderer: `render` gets a transformers-style chat request
// {"messages": [...], "tools": [...] | null, "add_generation_prompt": bool} and returns the
// prompt or the template's error. probe_template uses chatwire's engine; a test can plug in
// another renderer (e.g. the reference renderer) to check the probe's own logic.
// The chat may also carry "documents", "kwargs" (extra template variables, which win over the
// special tokens) and "now" (strftime_now's clock, ISO 8601).
using RenderFunction = std::function<Result<std::string>(const nlohmann::ordered_json& chat)>;
// The same, with the {% generation %} spans of the render: the assistant-mask axis needs them.
struct Rendering {
  std::string text;
  // The {% generation %} spans as [begin, end) byte offsets into text (empty when none).
  std::vector<std::pair<std::size_t, std::size_t>> generation;
};
using SpanRenderFunction = std::function<Result<Rendering>(const nlohmann::ordered_json& chat)>;
// `names` are the template's variable names (jinja::Template::names()), the candidates of the
// thinking controls; with none, no thinking control is found. A RenderFunction without spans
// finds no generation blocks.
Profile probe_with(const SpanRenderFunction& render, const std::vector<std::string>& names = {});
Profile probe_with(const RenderFunction& render, const std::vector<std::string>& names = {});
// chatwire's engine as a RenderFunction (`tmpl` must outlive it), as probe_template uses it.
RenderFunction template_renderer(const jinja::Template& tmpl, const Value& special_tokens,
                                 const Options& options = {});
SpanRenderFunction template_span_renderer(const jinja::Template& tmpl, const Value& special_tokens,
                                          const Options& options = {});
// {"templates": N, "profiles": {name: profile|{"error": ...}}, "summary": {...}}
nlohmann::ordered_json survey_json(const std::vector<SurveyEntry>& entries);

}  // namespace chatwire::probe
