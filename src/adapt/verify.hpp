// After adapting, the adapted context is rendered and every piece of the original request
// is looked for in the output: "it rendered without an exception" proves nothing.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "chatwire/value.hpp"

namespace chatwire::adapt {

// True when `text` survives in `rendered`: verbatim after stripping, JSON-escaped (templates
// that tojson a message), or line by line (templates that re-indent or trim lines).
bool survives(std::string_view text, std::string_view rendered);

// Every piece of `request` (message texts, call names and argument values, tool descriptions)
// must survive in `rendered`; the first one lost gives CannotRepresent with its field path.
Status verify_survivors(const nlohmann::ordered_json& request, std::string_view rendered,
                        bool check_tool_descriptions);

}  // namespace chatwire::adapt
