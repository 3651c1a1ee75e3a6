// tool_choice "required" / a named function and parallel_tool_calls false (see ForcedCalls in
// chatwire/endpoint.hpp). A template has no way to say "you must call": vLLM serves these by
// constraining the generation to a JSON schema and reading the JSON as the calls; chatwire does
// the same, so a client's tool_choice is honoured by any engine that constrains output instead
// of being ignored with HTTP 200 (the complaint the gateway notes record).
#include <string>

#include "endpoint/internal.hpp"
#include "util/tool_definition.hpp"

namespace chatwire::endpoint {

namespace {

using json = nlohmann::ordered_json;

Error request_error(std::string path, std::string message) {
  return Error{"RequestError", std::move(message), 0, 0, std::move(path)};
}

// The function objects of the request's tools that have a name.
std::vector<const json*> functions_of(const json& request) {
  std::vector<const json*> out;
  auto tools = request.find("tools");
  if (tools == request.end() || !tools->is_array()) return out;
  for (const auto& tool : *tools)
    if (util::tool_function_name(tool)) out.push_back(util::tool_function(tool));
  return out;
}

// A function's parameters schema; a function without one takes no arguments.
json parameters_of(const json& function) {
  if (const json* p = util::tool_parameters(function)) return *p;
  return json{{"type", "object"}, {"properties", json::object()}};
}

}  // namespace

Status read_tool_choice(const json& request, Prompt& prompt) {
  if (auto ptc = request.find("parallel_tool_calls"); ptc != request.end() && !ptc->is_null()) {
    if (!ptc->is_boolean()) return request_error("parallel_tool_calls", "must be a boolean");
    prompt.max_tool_calls = ptc->get<bool>() ? 0 : 1;
  }
  auto choice = request.find("tool_choice");
  if (choice == request.end() || choice->is_null()) return std::monostate{};
  const std::vector<const json*> functions = functions_of(request);
  if (choice->is_string()) {
    const std::string& c = choice->get_ref<const std::string&>();
    if (c == "none") prompt.tool_calls_allowed = false;
    if (c == "none" || c == "auto") return std::monostate{};
    if (c != "required")
      return request_error("tool_choice",
                           "must be \"none\", \"auto\", \"required\" or "
                           "{\"type\": \"function\", \"function\": {\"name\": ...}}");
    if (functions.empty())
      return request_error("tool_choice", "\"required\" needs at least one tool in `tools`");
    json variants = json::array();
    for (const json* f : functions)
      variants.push_back({{"properties",
                           {{"name", {{"type", "string"}, {"enum", json::array({(*f)["name"]})}}},
                            {"parameters", parameters_of(*f)}}},
                          {"required", json::array({"name", "parameters"})}});
    json schema{{"type", "array"},
                {"minItems", 1},
                {"items", {{"type", "object"}, {"anyOf", std::move(variants)}}}};
    if (prompt.max_tool_calls == 1) schema["maxItems"] = 1;
    prompt.forced_calls = ForcedCalls::required;
    prompt.constraint_schema = schema.dump();
    return std::monostate{};
  }
  if (!choice->is_object()) return request_error("tool_choice", "must be a string or an object");
  auto type = choice->find("type");
  if (type == choice->end() || !type->is_string() || *type != "function")
    return request_error("tool_choice.type", "must be \"function\"");
  auto function = choice->find("function");
  if (function == choice->end() || !function->is_object())
    return request_error("tool_choice.function", "must be an object with a `name`");
  auto name = function->find("name");
  if (name == function->end() || !name->is_string())
    return request_error("tool_choice.function.name", "must be a string");
  for (const json* f : functions) {
    if ((*f)["name"] != *name) continue;
    prompt.forced_calls = ForcedCalls::named;
    prompt.forced_name = name->get<std::string>();
    prompt.constraint_schema = parameters_of(*f).dump();
    return std::monostate{};
  }
  return request_error("tool_choice.function.name",
                       "'" + name->get<std::string>() + "' is not among the request's tools");
}

}  // namespace chatwire::endpoint
