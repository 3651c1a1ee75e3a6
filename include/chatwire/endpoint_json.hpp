// JSON forms of the Endpoint's types (OpenAI wire shapes), kept out of chatwire/endpoint.hpp so
// that header does not pull in nlohmann/json.
#pragma once

#include <nlohmann/json.hpp>

#include "chatwire/endpoint.hpp"

namespace chatwire::endpoint {

// {"role": "assistant", "content", "reasoning_content"?, "tool_calls"?: [{id, type, function}]}
nlohmann::ordered_json to_json(const Message& message);
// {"content"?, "reasoning_content"?, "tool_calls"?: [{index, id?, type?, function}]}
nlohmann::ordered_json to_json(const Delta& delta);
// {"text", "ids", "assistant_masks"?, "adaptations", "warnings", "stop_ids", "stop_strings",
//  "engine_stop_strings",
//  "parser": {"dialect", "taught_dialect", "tool_calls_read_back", "reasoning_prefilled",
//             "enable_thinking", "call_ids", "forced_calls", "forced_name", "max_tool_calls"},
//  "constraint_schema": the JSON schema or null}
nlohmann::ordered_json to_json(const Prompt& prompt);
nlohmann::ordered_json to_json(const std::vector<Warning>& warnings);

// prepare() with a parsed request.
Result<Prompt> prepare(const Endpoint& endpoint, const nlohmann::ordered_json& request,
                       const PrepareOptions& options = {});

}  // namespace chatwire::endpoint
