// Text syntaxes for tool traffic that a template cannot carry structurally: when a template
// drops `tool_calls` (or rejects tool messages), calls are written into the assistant's
// content, and results into a user turn, as text. ONE table (kCallSyntaxes in
// call_syntax.cpp); adding a syntax is one row.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace chatwire::adapt {

using json = nlohmann::ordered_json;

struct CallSyntax {
  std::string_view name;
  // A marker that, found in the template's own tool instructions (the measured definitions
  // block), says the template teaches this syntax. Empty: never detected, only named.
  std::string_view taught_marker;
  // The assistant content for a list of OpenAI tool calls (arguments already dicts or strings).
  std::string (*write_calls)(const json& tool_calls);
  // The text of one tool result (an OpenAI tool message) inside a user turn.
  std::string (*write_result)(const json& tool_message);
  // The output parser's dialect (parse::dialects()) that reads calls written this way: a model
  // taught this syntax by the prompt answers in it.
  std::string_view parse_dialect;
};

// The syntax the template's instructions teach (first table row whose marker occurs in
// `instructions`), else the default (hermes: the most common syntax in the survey).
const CallSyntax& taught_syntax(std::string_view instructions);
// nullptr when the name is unknown.
const CallSyntax* find_syntax(std::string_view name);
const CallSyntax& default_syntax();

// The arguments of a call as a JSON object text the way json.dumps writes it.
std::string arguments_text(const json& arguments);

}  // namespace chatwire::adapt
