// The Jinja2 lexer with the environment transformers uses: default delimiters,
// trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "chatwire/error.hpp"
#include "jinja/tokens.hpp"

namespace chatwire::jinja {

// Jinja2 normalises "\r\n" and "\r" to "\n" and drops one trailing newline before
// lexing; the lexer works on that text.
std::string normalize_source(std::string_view source);

class Lexer;

// The tokens of normalised source, ending with Tok::Eof, lexed on demand one text run and
// tag at a time, as Jinja2's parser pulls them from its lexer's generator. A parser that
// stops at an error early (a template nested past the depth limit in its first kilobytes)
// has not paid for lexing the megabytes after it, and a lexing error is reported only
// once the parser reaches it, as in Jinja2.
class TokenStream {
 public:
  explicit TokenStream(std::string_view source);  // `source` must outlive the stream
  ~TokenStream();
  TokenStream(const TokenStream&) = delete;
  TokenStream& operator=(const TokenStream&) = delete;

  // The token at `index`, or the final Eof token when the source has fewer; null when
  // lexing up to it fails, and then error() is the TemplateSyntaxError with the line (and
  // column) of the offending character. References stay valid for the stream's life.
  const Token* at(std::size_t index);
  const Error& error() const;

 private:
  std::unique_ptr<Lexer> lexer_;
};

}  // namespace chatwire::jinja
