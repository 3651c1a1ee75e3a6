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
