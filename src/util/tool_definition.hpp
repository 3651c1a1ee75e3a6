// One tool definition of a request, as untrusted JSON: its function object (`{"type":
// "function", "function": {..}}`, or the function object itself, the flat form some clients
// send), its name and its parameters object; nullptr where the tool has none of the right type.
// One header, inline, for the components that read the request's tools (the output parser types
// arguments by them; the endpoint builds tool_choice's constraint from them).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace chatwire::util {

inline const nlohmann::ordered_json* tool_function(const nlohmann::ordered_json& tool) {
  if (!tool.is_object()) return nullptr;
  if (auto it = tool.find("function"); it != tool.end() && it->is_object()) return &*it;
  return &tool;
}

inline const std::string* tool_function_name(const nlohmann::ordered_json& tool) {
  const auto* fn = tool_function(tool);
  if (!fn) return nullptr;
  auto name = fn->find("name");
  return name != fn->end() && name->is_string() ? &name->get_ref<const std::string&>() : nullptr;
}

inline const nlohmann::ordered_json* tool_parameters(const nlohmann::ordered_json& tool) {
  const auto* fn = tool_function(tool);
  if (!fn) return nullptr;
  auto params = fn->find("parameters");
  return params != fn->end() && params->is_object() ? &*params : nullptr;
}

}  // namespace chatwire::util
