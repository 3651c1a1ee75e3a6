// What the two case-file tests of the parsers share (parse_cases_test.cpp: the dialects' own
// cases; reference_cases_test.cpp: vLLM's and SGLang's): a case's parse options, its expected
// text, a message printed for comparison, and streamed deltas assembled with OpenAI's shape
// checked.
#pragma once

#include <string>
#include <vector>

#include "chatwire/parse_json.hpp"

namespace chatwire::parse::testing {

inline Options options_of(const Json& data) {
  Options o;
  if (auto it = data.find("options"); it != data.end() && it->is_object()) {
    o.reasoning_prefilled = it->value("reasoning_prefilled", false);
    if (it->contains("enable_thinking") && (*it)["enable_thinking"].is_boolean())
      o.enable_thinking = (*it)["enable_thinking"].get<bool>();
    if (it->contains("separate_reasoning") && (*it)["separate_reasoning"].is_boolean())
      o.separate_reasoning = (*it)["separate_reasoning"].get<bool>();
    if (it->contains("forward_unknown_tools") && (*it)["forward_unknown_tools"].is_boolean())
      o.forward_unknown_tools = (*it)["forward_unknown_tools"].get<bool>();
  }
  return o;
}

inline std::string text_of(const Json& j) {
  return j.is_string() ? j.get<std::string>() : "";
}

inline std::string describe(const Message& m) {
  return message_to_json(m).dump();
}

// The message the deltas add up to; `shape_error` names the first break of OpenAI's streaming
// shape (an empty delta, a call's id or name missing or repeated, an index out of order).
inline Message assemble(const std::vector<Delta>& deltas, std::string& shape_error) {
  Message m;
  for (const auto& d : deltas) {
    if (d.content.empty() && d.reasoning_content.empty() && d.tool_calls.empty())
      shape_error = "empty delta";
    m.content += d.content;
    m.reasoning_content += d.reasoning_content;
    for (const auto& t : d.tool_calls) {
      if (t.index == m.tool_calls.size()) {
        if (t.id.empty() || t.name.empty()) shape_error = "first delta of a call lacks id or name";
        m.tool_calls.push_back({t.id, t.name, t.arguments});
      } else if (t.index + 1 == m.tool_calls.size()) {
        if (!t.id.empty() || !t.name.empty()) shape_error = "id or name repeated";
        m.tool_calls.back().arguments += t.arguments;
      } else {
        shape_error = "call index out of order";
      }
    }
  }
  return m;
}

}  // namespace chatwire::parse::testing
