// Value <-> nlohmann::ordered_json, for the components and users that do their I/O with
// nlohmann; chatwire/value.hpp itself does not include it.
#pragma once

#include <nlohmann/json.hpp>

#include "chatwire/value.hpp"

namespace chatwire {

// Undefined/Object values -> TypeError as in dump_json. Strings that are not valid UTF-8 (lone
// surrogates) are converted with U+FFFD replacement because nlohmann requires UTF-8.
Value from_json(const nlohmann::ordered_json& json);
Result<nlohmann::ordered_json> to_json(const Value& v);

}  // namespace chatwire
