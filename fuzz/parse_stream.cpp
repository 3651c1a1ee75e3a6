// libFuzzer target: random bytes through every dialect (and parsers with the features only
// derived parsers use), one-shot and at a random chunking (both derived from the input); the deltas
// must assemble to the one-shot message with the same warnings, and every delta must have OpenAI's
// streaming shape. Any difference aborts.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/parse_json.hpp"

namespace {

namespace parse = chatwire::parse;

const parse::Json& fuzz_tools() {
  static const parse::Json tools = parse::Json::parse(R"([
    {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
      "s": {"type": "string"}, "i": {"type": "integer"}, "n": {"type": "number"},
      "b": {"type": "boolean"}, "o": {"type": "object"}, "a": {"type": ["array", "null"]}}}}}])");
  return tools;
}

// Engine features no table row has, as readback derives them from templates.
const std::vector<parse::Syntax>& derived_syntaxes() {
  static const std::vector<parse::Syntax> all = [] {
    std::vector<parse::Syntax> out;
    for (
        const char* text : {
            R"({"family": "json", "name_as_key": true, "sections": [["<|calls|>", "<|/calls|>"]]})",
            R"({"family": "xml", "think_close": "<|eom|>", "dropped": ["<|eom|>", "<|eot|>"],
                 "recipient_open": "to=", "recipient_close": "<|message|>",
                 "recipient_header": "<|start|>assistant to=", "reasoning_recipient": "self",
                 "call_open": "<x:calls>\n<x:call", "call_close": "</x:call>\n</x:calls>",
                 "param_open": "<x:arg", "value_close": "</x:arg>"})",
            R"({"family": "json", "sections": [["Action:\n```json", "```"]],
                 "name_keys": ["tool_name"], "args_keys": ["parameters"]})",
        }) {
      auto syntax = parse::Syntax::from_json_text(text);
      if (!syntax.ok()) std::abort();  // the fuzz target's own data
      out.push_back(*syntax);
    }
    return out;
  }();
  return all;
}

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const auto& dialects = parse::dialects();
  const auto& derived = derived_syntaxes();
  const std::size_t pick = data[0] % (dialects.size() + derived.size());
  auto named = parse::Syntax::named(dialects[pick % dialects.size()].name);
  check(named.ok());
  const parse::Syntax& dialect = pick < dialects.size() ? *named : derived[pick - dialects.size()];
  parse::Options options;
  options.reasoning_prefilled = data[1] & 1;
  if (data[1] & 2) options.enable_thinking = (data[1] & 4) != 0;
  if (data[1] & 8) options.forward_unknown_tools = (data[1] & 16) != 0;
  options.separate_reasoning = (data[1] & 32) == 0;
  std::uint32_t seed = data[2];
  std::string_view text(reinterpret_cast<const char*>(data) + 3, size - 3);

  auto one = parse::parse(text, dialect, fuzz_tools(), options);
  check(one.ok());
  auto stream = parse::stream_parser(dialect, fuzz_tools(), options);
  check(stream.ok());
  parse::Message assembled;
  auto apply = [&assembled](const std::vector<parse::Delta>& deltas) {
    for (const auto& d : deltas) {
      check(!d.content.empty() || !d.reasoning_content.empty() || !d.tool_calls.empty());
      assembled.content += d.content;
      assembled.reasoning_content += d.reasoning_content;
      for (const auto& t : d.tool_calls) {
        if (t.index == assembled.tool_calls.size()) {
          check(!t.id.empty() && !t.name.empty());
          assembled.tool_calls.push_back({t.id, t.name, t.arguments});
        } else {
          check(t.index + 1 == assembled.tool_calls.size() && t.id.empty() && t.name.empty());
          assembled.tool_calls.back().arguments += t.arguments;
        }
      }
    }
  };
  std::size_t at = 0;
  while (at < text.size()) {
    seed = seed * 1103515245u + 12345u;
    std::size_t n = 1 + (seed >> 16) % 17;
    apply(stream->feed(text.substr(at, n)));
    at += n;
  }
  apply(stream->finish());
  const parse::Message& want = one->message;
  check(assembled.content == want.content);
  check(assembled.reasoning_content == want.reasoning_content);
  check(assembled.tool_calls.size() == want.tool_calls.size());
  for (std::size_t i = 0; i < want.tool_calls.size(); ++i) {
    check(assembled.tool_calls[i].id == want.tool_calls[i].id);
    check(assembled.tool_calls[i].name == want.tool_calls[i].name);
    check(assembled.tool_calls[i].arguments == want.tool_calls[i].arguments);
  }
  check(stream->warnings().size() == one->warnings.size());
  for (std::size_t i = 0; i < one->warnings.size(); ++i) {
    check(stream->warnings()[i].code == one->warnings[i].code);
    check(stream->warnings()[i].offset == one->warnings[i].offset);
  }
  // The JSON forms never throw, whatever bytes the model produced.
  std::string out =
      parse::message_to_json(want).dump(-1, ' ', false, nlohmann::detail::error_handler_t::replace);
  check(!out.empty());
  return 0;
}
