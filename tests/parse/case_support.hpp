// What the two case-file tests of the parsers share (parse_cases_test.cpp: the dialects' own
// cases; reference_cases_test.cpp: vLLM's and SGLang's): a case's parse options, its expected
// text, a message printed for comparison, and streamed deltas assembled with OpenAI's shape
// checked.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chatwire/parse_json.hpp"

namespace chatwire::parse::testing {

// The case's "options" as the library reads a batch line's (a case with bad options fails).
inline Options options_of(const Json& data) {
  auto options = options_from_json(data.value("options", Json()));
  EXPECT_TRUE(options.ok()) << options.error().to_string();
  return options.ok() ? *options : Options{};
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
