// Internal pieces of readback: text helpers shared by the round trip and the derivation.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/probe_json.hpp"
#include "chatwire/readback_json.hpp"
#include "parse/internal.hpp"

namespace chatwire::readback {

using Json = parse::Json;

inline std::string_view trim(std::string_view s) {
  constexpr std::string_view ws = " \t\n\r\f\v";
  auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  auto e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

// The messages' texts of the round-trip conversation (system, question, reasoning, answer).
const std::vector<std::string_view>& conversation_texts();

// The end-of-turn markers the round trip cuts at: the literal markers of the measured
// assistant suffix (the whole suffix when it has none), then `extra`.
std::vector<std::string> turn_end_markers(const probe::Profile& p,
                                          const std::vector<std::string>& extra);

// The literal marker at the start of s (after whitespace: `<tag>`, `[TAG]`), or "".
std::string_view leading_marker(std::string_view s);

// The text after an empty reasoning block that starts `s` (`<think></think>`, or only the closer
// where the prompt opened it: `prefilled`); `s` itself when there is none. A closer after other
// text is that text's (vLLM's DeepSeek V3.1 example starts its turn `<｜Assistant｜></think>`).
std::string_view after_empty_block(std::string_view s, std::string_view open,
                                   std::string_view close, bool prefilled);

// Whether a prompt ending in `prompt` leaves the reasoning block open (not when it writes an
// empty closed block): the probe's prompt_opens, read with the measured or known markers.
bool leaves_reasoning_open(const probe::Profile& p, std::string_view prompt);

}  // namespace chatwire::readback
