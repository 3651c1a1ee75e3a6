// Recursive-descent parser following jinja2/parser.py (same precedence, same
// statement grammar, same error types), with an explicit depth counter so that
// hostile nesting is an error and never a stack overflow.
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
  std::vector<std::string> symbols;  // SymbolId -> name
  bool uses_generation = false;      // a {% generation %} tag was parsed
};

// Parses normalised source (see normalize_source). Also resolves filter and test
// names against their tables: an unknown one is a TemplateAssertionError unless it
// sits inside an `if` or a conditional expression (then it fails only when run).
Result<ParsedTemplate> parse_template(std::string_view source, const Limits& limits);

}  // namespace chatwire::jinja
