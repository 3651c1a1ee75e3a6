// Profile -> JSON, with the keys and order scripts/probe-oracle.py writes.
#include "chatwire/probe.hpp"

namespace chatwire::probe {

using json = nlohmann::ordered_json;

namespace {

json optional_string(const std::optional<std::string>& s) {
  return s ? json(*s) : json(nullptr);
}

}  // namespace

json Profile::to_json() const {
  json j;
  if (!name.empty()) j["template"] = name;
  j["profile_version"] = kProfileVersion;
  j["renders"] = renders;

  json b;
  b["conversation"] = baseline.conversation.empty() ? json(nullptr) : json(baseline.conversation);
  if (baseline.conventions.empty()) {
    b["conventions"] = nullptr;
  } else {
    b["conventions"] = json::object();
    for (const auto& [axis, value] : baseline.conventions) b["conventions"][axis] = value;
  }
  b["kept"] = baseline.kept;
  b["lost"] = baseline.lost;
  if (!renders) b["error"] = baseline.error.empty() ? json(nullptr) : json(baseline.error);
  if (renders && baseline.conversation != "full")
    b["full_conversation_error"] = baseline.full_conversation_error.empty()
                                       ? json(nullptr)
                                       : json(baseline.full_conversation_error);
  j["baseline"] = std::move(b);

  json c = json::object();
  for (const auto& conv : conventions) {
    json e{{"status", status_name(conv.status)}};
    if (conv.status == Status::error)
      e["error"] = conv.error.empty() ? json(nullptr) : json(conv.error);
    if (conv.status == Status::lossy) e["lost"] = conv.lost;
    c[conv.key] = std::move(e);
  }
  j["conventions"] = std::move(c);

  j["tools"] = {
      {"definitions_rendered", tools.definitions_rendered},
      {"definitions_location", tools.definitions_location},
      {"definitions_block", optional_string(tools.definitions_block)},
      {"parameter_description_required", optional_string(tools.parameter_description_required)}};
  j["tool_calls"] = {{"rendered", tool_calls.rendered},
                     {"example", optional_string(tool_calls.example)},
                     {"id_rendered", tool_calls.id_rendered}};
  j["tool_results"] = {{"rendered", tool_results.rendered},
                       {"role", optional_string(tool_results.role)},
                       {"header", optional_string(tool_results.header)}};
  j["reasoning"] = {
      {"history_kept", reasoning.history_kept},    {"style", reasoning.style},
      {"field", optional_string(reasoning.field)}, {"open", optional_string(reasoning.open)},
      {"close", optional_string(reasoning.close)}, {"prompt_opens", reasoning.prompt_opens}};
  j["system"] = {{"supported", system.supported}};
  if (!system.error.empty()) j["system"]["error"] = system.error;
  j["alternation"] = {{"required", alternation.required}};
  if (!alternation.error.empty()) j["alternation"]["error"] = alternation.error;
  j["frame"] = {{"generation_prompt", optional_string(frame.generation_prompt)},
                {"assistant_prefix", optional_string(frame.assistant_prefix)},
                {"assistant_suffix", optional_string(frame.assistant_suffix)},
                {"user_prefix", optional_string(frame.user_prefix)},
                {"user_suffix", optional_string(frame.user_suffix)},
                {"family", frame.family}};
  if (!frame.error.empty()) j["frame"]["error"] = frame.error;
  j["prefill"] = {{"supported", prefill.supported},
                  {"prefix", optional_string(prefill.prefix)},
                  {"matches_generation_prompt", prefill.matches_generation_prompt},
                  {"error", optional_string(prefill.error)}};
  auto optional_bool = [](const std::optional<bool>& b) { return b ? json(*b) : json(nullptr); };
  j["assistant_masks"] = {{"generation_blocks", assistant_masks.generation_blocks},
                          {"content_covered", optional_bool(assistant_masks.content_covered)},
                          {"only_assistant", optional_bool(assistant_masks.only_assistant)},
                          {"missed", assistant_masks.missed},
                          {"includes", assistant_masks.includes},
                          {"masked", assistant_masks.masked}};
  auto control_value = [](const ControlValue& v) {
    if (v.error) return json{{"error", *v.error}};
    return json{{"changed", v.changed}, {"prompt", v.prompt}, {"past_reasoning", v.past_reasoning}};
  };
  json controls = json::array();
  for (const auto& c : thinking_controls.controls)
    controls.push_back({{"name", c.name},
                        {"values",
                         {{"true", control_value(c.true_value)},
                          {"false", control_value(c.false_value)},
                          {"string", control_value(c.string_value)}}}});
  json others = json::array();
  for (const auto& [name, where] : thinking_controls.other_variables)
    others.push_back({{"name", name}, {"where", where}});
  j["thinking_controls"] = {{"candidates", thinking_controls.candidates},
                            {"prompt", optional_string(thinking_controls.prompt)},
                            {"past_reasoning", optional_bool(thinking_controls.past_reasoning)},
                            {"controls", std::move(controls)},
                            {"other_variables", std::move(others)}};
  j["documents"] = {{"rendered", documents.rendered},
                    {"title_rendered", documents.title_rendered},
                    {"location", documents.location},
                    {"block", optional_string(documents.block)},
                    {"error", optional_string(documents.error)}};
  json parts = json::object();
  for (const auto& part : multimodal.parts) {
    json e{{"status", part.status}};
    if (part.status == "error") e["error"] = optional_string(part.error);
    if (part.placeholder) {
      e["placeholder"] = *part.placeholder;
      e["in_place"] = part.in_place;
    }
    parts[part.type] = std::move(e);
  }
  j["multimodal"] = {{"text_parts", multimodal.text_parts},
                     {"error", optional_string(multimodal.error)},
                     {"parts", std::move(parts)}};
  j["date"] = {
      {"depends_on_clock", date.depends_on_clock},
      {"rendered",
       date.rendered ? json::array({date.rendered->first, date.rendered->second}) : json(nullptr)},
      {"date_string", date.date_string}};
  j["bos_token"] = {{"writes_bos_token", bos_token.writes_bos_token},
                    {"at_start", bos_token.at_start},
                    {"count", bos_token.count}};
  j["silent_failures"] = silent_failures;
  json bugs = json::array();
  for (const auto& bug : template_bugs) {
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
  j["renders_used"] = renders_used;
  return j;
}

}  // namespace chatwire::probe
