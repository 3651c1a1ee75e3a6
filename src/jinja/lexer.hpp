// The Jinja2 lexer with the environment transformers uses: default delimiters,
// trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chatwire/error.hpp"
#include "jinja/tokens.hpp"

namespace chatwire::jinja {

// Jinja2 normalises "\r\n" and "\r" to "\n" and drops one trailing newline before
// lexing; the lexer works on that text.
std::string normalize_source(std::string_view source);

// Splits normalised source into tokens, ending with Tok::Eof. Errors are
// TemplateSyntaxError with the line (and column) of the offending character.
Result<std::vector<Token>> tokenize(std::string_view source);

}  // namespace chatwire::jinja
