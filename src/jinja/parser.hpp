// Compiling a template is three passes over one tree, each in its own file:
//   parse    (parser.cpp)   tokens -> syntax tree, with Jinja2's grammar and syntax errors;
//   resolve  (resolve.cpp)  names to symbols, filters and tests to their table rows, what
//                           scopes use (`loop`, `caller`, ...): what the tree means;
//   optimise (optimize.cpp) constant folding as Jinja2's optimizer does, and the evaluator's
//                           fast paths: what makes it fast. CompileOptions::optimize = false
//                           skips it, and renders the same bytes and the same errors.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chatwire/error.hpp"
#include "chatwire/jinja.hpp"
#include "jinja/ast.hpp"

namespace chatwire::jinja {

struct ParsedTemplate {
  Body body;
  std::vector<std::string> symbols;  // SymbolId -> name (filled by the resolve pass)
  bool uses_generation = false;      // a {% generation %} tag was parsed
};

// The parse pass over normalised source (see normalize_source): recursive descent following
// jinja2/parser.py (same precedence, same statement grammar, same error types), with an
// explicit depth counter and bounded chain heights (Limits::max_parse_depth) so that hostile
// nesting is an error and never a stack overflow in this or a later pass.
Result<ParsedTemplate> parse_template(std::string_view source, const Limits& limits);

}  // namespace chatwire::jinja
