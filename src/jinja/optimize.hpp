// The optimise pass (optimize.cpp) over a resolved tree, see parser.hpp.
#pragma once

#include "jinja/parser.hpp"

namespace chatwire::jinja {

// Folds constants and marks the evaluator's fast paths. Never fails and never changes what
// the template renders (or the error it raises): CompileOptions::optimize = false skips it.
void optimize_template(ParsedTemplate& parsed);

}  // namespace chatwire::jinja
