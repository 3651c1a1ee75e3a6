// Profile -> JSON, with the keys and order scripts/probe-oracle.py writes.
#include "chatwire/probe_json.hpp"

namespace chatwire::probe {

using json = nlohmann::ordered_json;

namespace {

json optional_string(const std::optional<std::string>& s) {
  return s ? json(*s) : json(nullptr);
}

}  // namespace

json to_json(const Profile& p) {
  json j;
  if (!p.name.empty()) j["template"] = p.name;
  j["profile_version"] = kProfileVersion;
  j["renders"] = p.renders;

  json b;
  b["conversation"] =
      p.baseline.conversation.empty() ? json(nullptr) : json(p.baseline.conversation);
  if (p.baseline.conventions.empty()) {
    b["conventions"] = nullptr;
  } else {
    b["conventions"] = json::object();
    for (const auto& [axis, value] : p.baseline.conventions) b["conventions"][axis] = value;
  }
  b["kept"] = p.baseline.kept;
  b["lost"] = p.baseline.lost;
  if (!p.renders) b["error"] = p.baseline.error.empty() ? json(nullptr) : json(p.baseline.error);
  if (p.renders && p.baseline.conversation != "full")
    b["full_conversation_error"] = p.baseline.full_conversation_error.empty()
                                       ? json(nullptr)
                                       : json(p.baseline.full_conversation_error);
  j["baseline"] = std::move(b);

  json c = json::object();
  for (const auto& conv : p.conventions) {
    json e{{"status", status_name(conv.status)}};
    if (conv.status == Status::error)
      e["error"] = conv.error.empty() ? json(nullptr) : json(conv.error);
    if (conv.status == Status::lossy) e["lost"] = conv.lost;
    c[conv.key] = std::move(e);
  }
  j["conventions"] = std::move(c);

  j["tools"] = {
      {"definitions_rendered", p.tools.definitions_rendered},
      {"definitions_location", p.tools.definitions_location},
      {"definitions_block", optional_string(p.tools.definitions_block)},
      {"parameter_description_required", optional_string(p.tools.parameter_description_required)}};
  j["tool_calls"] = {{"rendered", p.tool_calls.rendered},
                     {"example", optional_string(p.tool_calls.example)},
                     {"id_rendered", p.tool_calls.id_rendered}};
  j["tool_results"] = {{"rendered", p.tool_results.rendered},
                       {"role", optional_string(p.tool_results.role)},
                       {"header", optional_string(p.tool_results.header)}};
  j["reasoning"] = {
      {"history_kept", p.reasoning.history_kept},    {"style", p.reasoning.style},
      {"field", optional_string(p.reasoning.field)}, {"open", optional_string(p.reasoning.open)},
      {"close", optional_string(p.reasoning.close)}, {"prompt_opens", p.reasoning.prompt_opens}};
  j["system"] = {{"supported", p.system.supported}};
  if (!p.system.error.empty()) j["system"]["error"] = p.system.error;
  j["alternation"] = {{"required", p.alternation.required}};
  if (!p.alternation.error.empty()) j["alternation"]["error"] = p.alternation.error;
  j["frame"] = {{"generation_prompt", optional_string(p.frame.generation_prompt)},
                {"assistant_prefix", optional_string(p.frame.assistant_prefix)},
                {"assistant_suffix", optional_string(p.frame.assistant_suffix)},
                {"user_prefix", optional_string(p.frame.user_prefix)},
                {"user_suffix", optional_string(p.frame.user_suffix)},
                {"family", p.frame.family}};
  if (!p.frame.error.empty()) j["frame"]["error"] = p.frame.error;
  j["prefill"] = {{"supported", p.prefill.supported},
                  {"prefix", optional_string(p.prefill.prefix)},
                  {"matches_generation_prompt", p.prefill.matches_generation_prompt},
                  {"error", optional_string(p.prefill.error)}};
  auto optional_bool = [](const std::optional<bool>& b) { return b ? json(*b) : json(nullptr); };
  j["assistant_masks"] = {{"generation_blocks", p.assistant_masks.generation_blocks},
                          {"content_covered", optional_bool(p.assistant_masks.content_covered)},
                          {"only_assistant", optional_bool(p.assistant_masks.only_assistant)},
                          {"missed", p.assistant_masks.missed},
                          {"includes", p.assistant_masks.includes},
                          {"masked", p.assistant_masks.masked}};
  auto control_value = [](const ControlValue& v) {
    if (v.error) return json{{"error", *v.error}};
    return json{{"changed", v.changed}, {"prompt", v.prompt}, {"past_reasoning", v.past_reasoning}};
  };
  json controls = json::array();
  for (const auto& c : p.thinking_controls.controls)
    controls.push_back({{"name", c.name},
                        {"values",
                         {{"true", control_value(c.true_value)},
                          {"false", control_value(c.false_value)},
                          {"string", control_value(c.string_value)}}}});
  json others = json::array();
  for (const auto& [name, where] : p.thinking_controls.other_variables)
    others.push_back({{"name", name}, {"where", where}});
  j["thinking_controls"] = {{"candidates", p.thinking_controls.candidates},
                            {"prompt", optional_string(p.thinking_controls.prompt)},
                            {"past_reasoning", optional_bool(p.thinking_controls.past_reasoning)},
                            {"controls", std::move(controls)},
                            {"other_variables", std::move(others)}};
  j["documents"] = {{"rendered", p.documents.rendered},
                    {"title_rendered", p.documents.title_rendered},
                    {"location", p.documents.location},
                    {"block", optional_string(p.documents.block)},
                    {"error", optional_string(p.documents.error)}};
  json parts = json::object();
  for (const auto& part : p.multimodal.parts) {
    json e{{"status", part.status}};
    if (part.status == "error") e["error"] = optional_string(part.error);
    if (part.placeholder) {
      e["placeholder"] = *part.placeholder;
      e["in_place"] = part.in_place;
    }
    parts[part.type] = std::move(e);
  }
  j["multimodal"] = {{"text_parts", p.multimodal.text_parts},
                     {"error", optional_string(p.multimodal.error)},
                     {"parts", std::move(parts)}};
  j["date"] = {
      {"depends_on_clock", p.date.depends_on_clock},
      {"rendered", p.date.rendered ? json::array({p.date.rendered->first, p.date.rendered->second})
                                   : json(nullptr)},
      {"date_string", p.date.date_string}};
  j["bos_token"] = {{"writes_bos_token", p.bos_token.writes_bos_token},
                    {"at_start", p.bos_token.at_start},
                    {"count", p.bos_token.count}};
  j["silent_failures"] = p.silent_failures;
  json bugs = json::array();
  for (const auto& bug : p.template_bugs) {
    json e{{"kind", bug.kind}};
    if (bug.kind == "instruction_history_marker_mismatch") {
      e["rendered"] = bug.rendered;
      e["taught"] = bug.taught;
    } else if (bug.kind.starts_with("html_escaped_")) {
      e["rendered"] = bug.rendered;
      e["decoded"] = bug.decoded;
    } else if (bug.kind == "user_message_read_as_tool_result") {
      e["wrapped"] = bug.wrapped;
      e["as_text"] = bug.as_text;
      e["as_result"] = bug.as_result;
    } else if (bug.kind == "tool_result_under_assistant") {
      e["header"] = bug.header;
      e["rendered"] = bug.rendered;
    } else if (bug.kind == "tool_result_without_role") {
      e["rendered"] = bug.rendered;
    } else if (bug.kind == "duplicate_system_block") {
      e["header"] = bug.header;
      e["rendered"] = bug.rendered;
    } else {
      e["header"] = bug.header;
    }
    bugs.push_back(std::move(e));
  }
  j["template_bugs"] = std::move(bugs);
  j["renders_used"] = p.renders_used;
  return j;
}

std::string Profile::to_json_text(int indent) const {
  return to_json(*this).dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace chatwire::probe
