// The output parser's nlohmann forms: messages, deltas, warnings and parser descriptions as
// JSON, and tools given as a JSON array. chatwire/parse.hpp itself does not pull in nlohmann.
#pragma once

#include <nlohmann/json.hpp>

#include "chatwire/parse.hpp"

namespace chatwire::parse {

using Json = nlohmann::ordered_json;

// `tools` is a JSON array of tool definitions, or null = none; else ValueError (field "tools").
Result<Tools> tools_from_json(const Json& tools);
// The array the tools were read from (null when there are none).
const Json& tools_json(const Tools& tools);

// Every field of a parser description that differs from an empty dialect, and its inverse
// (errors name the field).
Json to_json(const Syntax& syntax);
Result<Syntax> syntax_from_json(const Json& json);

// Options as a JSON object, as a batch line or a test case gives them: the booleans
// reasoning_prefilled, strict, separate_reasoning, and enable_thinking / forward_unknown_tools
// (null = the dialect decides); id_prefix; the limits by their member names. A key not listed,
// or a value of the wrong type, is a ValueError naming "options.<key>". null = the defaults.
Result<Options> options_from_json(const Json& options);

Json message_to_json(const Message& message);  // {role, content, reasoning_content?, tool_calls?}
Json delta_to_json(const Delta& delta);        // {content?, reasoning_content?, tool_calls?}
Json warnings_to_json(const std::vector<Warning>& warnings);

// parse() and StreamParser::create() with the tools as a JSON array (tools_from_json's errors).
Result<ParseResult> parse(std::string_view text, std::string_view dialect, const Json& tools,
                          const Options& options = {});
Result<ParseResult> parse(std::string_view text, const Syntax& syntax, const Json& tools,
                          const Options& options = {});
Result<StreamParser> stream_parser(std::string_view dialect, const Json& tools,
                                   const Options& options = {});
Result<StreamParser> stream_parser(const Syntax& syntax, const Json& tools,
                                   const Options& options = {});

}  // namespace chatwire::parse
