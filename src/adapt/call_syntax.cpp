#include "adapt/call_syntax.hpp"

#include <iterator>
#include <vector>

#include "chatwire/adapt_json.hpp"
#include "chatwire/value_json.hpp"

namespace chatwire::adapt {

namespace {

// json.dumps(x, ensure_ascii=False): the spacing models saw in training data produced by
// Python, unlike nlohmann's compact dump.
std::string python_dumps(const json& j) {
  JsonDumpOptions options;
  options.ensure_ascii = false;
  auto text = to_json_string(from_json(j), options);
  return text ? std::move(text).value() : j.dump();
}

std::string call_name(const json& call) {
  const json& fn = call.contains("function") ? call["function"] : call;
  return fn.value("name", std::string());
}

const json& call_arguments(const json& call) {
  static const json kEmpty = json::object();
  const json& fn = call.contains("function") ? call["function"] : call;
  auto it = fn.find("arguments");
  return it == fn.end() ? kEmpty : *it;
}

std::string result_text(const json& message) {
  auto it = message.find("content");
  if (it == message.end() || it->is_null()) return {};
  if (it->is_string()) return it->get<std::string>();
  std::string out;
  if (it->is_array())
    for (const auto& part : *it)
      if (part.is_object() && part.value("type", "") == "text") {
        if (!out.empty()) out += "\n";
        out += part.value("text", "");
      }
  return out;
}

// {"name": ..., "arguments": {...}} with arguments as an object.
json call_object(const json& call) {
  json obj = json::object();
  obj["name"] = call_name(call);
  const json& args = call_arguments(call);
  if (args.is_string()) {
    json parsed = json::parse(args.get<std::string>(), nullptr, false);
    obj["arguments"] = parsed.is_discarded() ? args : parsed;
  } else {
    obj["arguments"] = args;
  }
  return obj;
}

std::string hermes_calls(const json& calls) {
  std::string out;
  for (const auto& call : calls) {
    if (!out.empty()) out += "\n";
    out += "<tool_call>\n" + python_dumps(call_object(call)) + "\n</tool_call>";
  }
  return out;
}
std::string hermes_result(const json& message) {
  return "<tool_response>\n" + result_text(message) + "\n</tool_response>";
}

std::string granite_calls(const json& calls) {
  json list = json::array();
  for (const auto& call : calls) list.push_back(call_object(call));
  return "<|tool_call|>" + python_dumps(list);
}

std::string mistral_calls(const json& calls) {
  json list = json::array();
  for (const auto& call : calls) {
    json obj = call_object(call);
    if (call.contains("id") && call["id"].is_string()) obj["id"] = call["id"];
    list.push_back(std::move(obj));
  }
  return "[TOOL_CALLS]" + python_dumps(list);
}
std::string mistral_result(const json& message) {
  json obj = json::object();
  obj["content"] = result_text(message);
  if (message.contains("tool_call_id")) obj["call_id"] = message["tool_call_id"];
  return "[TOOL_RESULTS]" + python_dumps(obj) + "[/TOOL_RESULTS]";
}

std::string plain_json_calls(const json& calls) {
  std::string out;
  for (const auto& call : calls) {
    if (!out.empty()) out += "\n";
    out += python_dumps(call_object(call));
  }
  return out;
}
std::string plain_result(const json& message) {
  std::string head = "Tool result";
  if (message.contains("name") && message["name"].is_string())
    head += " of " + message["name"].get<std::string>();
  if (message.contains("tool_call_id") && message["tool_call_id"].is_string())
    head += " (call " + message["tool_call_id"].get<std::string>() + ")";
  return head + ":\n" + result_text(message);
}

// Detection runs in table order, so a marker that contains another comes first.
constexpr CallSyntax kCallSyntaxes[] = {
    {"granite", "<|tool_call|>", granite_calls, hermes_result, "granite"},
    {"mistral", "[TOOL_CALLS]", mistral_calls, mistral_result, "mistral_v03"},
    {"hermes", "<tool_call>", hermes_calls, hermes_result, "hermes"},
    // One bare {"name", "arguments"} object per line: llama3_json reads bare call objects.
    {"json", "", plain_json_calls, plain_result, "llama3_json"},
};

}  // namespace

const CallSyntax& default_syntax() {
  return kCallSyntaxes[2];
}

const CallSyntax& taught_syntax(std::string_view instructions) {
  for (const auto& syntax : kCallSyntaxes)
    if (!syntax.taught_marker.empty() &&
        instructions.find(syntax.taught_marker) != std::string_view::npos)
      return syntax;
  return default_syntax();
}

const CallSyntax* find_syntax(std::string_view name) {
  for (const auto& syntax : kCallSyntaxes)
    if (syntax.name == name) return &syntax;
  return nullptr;
}

std::string call_syntax_dialect(std::string_view name) {
  const CallSyntax* syntax = find_syntax(name);
  return syntax ? std::string(syntax->parse_dialect) : std::string();
}

std::vector<std::string> call_syntax_names() {
  std::vector<std::string> names;
  for (const auto& syntax : kCallSyntaxes) names.emplace_back(syntax.name);
  return names;
}

std::string arguments_text(const json& arguments) {
  if (arguments.is_string()) return arguments.get<std::string>();
  return python_dumps(arguments);
}

}  // namespace chatwire::adapt
