// JSON forms of the Endpoint's types: the parser's printers, so the wire shapes are the ones
// `chatwire parse` writes.
#include "chatwire/endpoint_json.hpp"

#include "chatwire/parse_json.hpp"
#include "chatwire/value_json.hpp"
#include "endpoint/internal.hpp"

namespace chatwire::endpoint {

using json = nlohmann::ordered_json;

json to_json(const Message& message) {
  parse::Message m{message.content, message.reasoning_content, {}};
  for (const auto& c : message.tool_calls) m.tool_calls.push_back({c.id, c.name, c.arguments});
  return parse::message_to_json(m);
}

json to_json(const Delta& delta) {
  parse::Delta d{delta.content, delta.reasoning_content, {}};
  for (const auto& c : delta.tool_calls)
    d.tool_calls.push_back({c.index, c.id, c.name, c.arguments});
  return parse::delta_to_json(d);
}

json to_json(const std::vector<Warning>& warnings) {
  std::vector<parse::Warning> w;
  w.reserve(warnings.size());
  for (const auto& x : warnings) w.push_back({x.code, x.message, x.offset});
  return parse::warnings_to_json(w);
}

json to_json(const Prompt& prompt) {
  json j;
  j["text"] = prompt.text;
  j["ids"] = prompt.ids;
  if (!prompt.assistant_masks.empty()) j["assistant_masks"] = prompt.assistant_masks;
  json adaptations = json::array();
  for (const auto& a : prompt.adaptations)
    adaptations.push_back({{"code", a.code}, {"finding", a.finding}, {"detail", a.detail}});
  j["adaptations"] = std::move(adaptations);
  j["warnings"] = prompt.warnings;
  j["stop_ids"] = prompt.stop_ids;
  j["stop_strings"] = prompt.stop_strings;
  j["engine_stop_strings"] = prompt.engine_stop_strings;
  j["parser"] = {
      {"dialect", prompt.dialect.empty() ? json(nullptr) : json(prompt.dialect)},
      {"taught_dialect",
       prompt.taught_dialect.empty() ? json(nullptr) : json(prompt.taught_dialect)},
      {"tool_calls_read_back", prompt.tool_calls_read_back},
      {"reasoning_prefilled", prompt.reasoning_prefilled},
      {"enable_thinking", prompt.enable_thinking ? json(*prompt.enable_thinking) : json(nullptr)},
      {"call_ids", prompt.call_ids == CallIdStyle::short9 ? "short9" : "openai"},
      {"forced_calls", prompt.forced_calls == ForcedCalls::named      ? json("named")
                       : prompt.forced_calls == ForcedCalls::required ? json("required")
                                                                      : json(nullptr)},
      {"forced_name", prompt.forced_name.empty() ? json(nullptr) : json(prompt.forced_name)},
      {"max_tool_calls", prompt.max_tool_calls},
      {"tool_calls_allowed", prompt.tool_calls_allowed}};
  // The schema the engine must constrain the generation to (it came from the request's tools,
  // already parsed once: it is valid JSON).
  j["constraint_schema"] = prompt.constraint_schema.empty()
                               ? json(nullptr)
                               : json::parse(prompt.constraint_schema, nullptr, false);
  return j;
}

Result<Prompt> prepare(const Endpoint& endpoint, const json& request,
                       const PrepareOptions& options) {
  // The request is already parsed (its depth bounded by the caller's parse): no second parse.
  try {
    return prepare_json(EndpointAccess::impl(endpoint), request, options);
  } catch (const std::exception& e) {  // a shape the checks missed: an error, never a crash
    return Error{
        "RequestError", std::string("the request could not be read: ") + e.what(), 0, 0, {}};
  }
}

}  // namespace chatwire::endpoint
