// The resolve pass (resolve.cpp): binds the names of a parsed tree, see parser.hpp.
#pragma once

#include <optional>

#include "chatwire/error.hpp"
#include "jinja/parser.hpp"

namespace chatwire::jinja {

// Fills parsed.symbols and every node's resolved fields. An unknown filter or test is a
// TemplateAssertionError unless it sits inside an `if` or a conditional expression (then it
// fails only when run), as is a store to `loop` inside a for loop; the first one in template
// order is returned.
std::optional<Error> resolve_template(ParsedTemplate& parsed);

}  // namespace chatwire::jinja
