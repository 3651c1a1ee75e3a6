// Token kinds of the Jinja2 lexer (jinja2/lexer.py), with the same names.
#pragma once

#include <cstdint>
#include <string>

namespace chatwire::jinja {

enum class Tok : std::uint8_t {
  Data,
  VariableBegin,
  VariableEnd,
  BlockBegin,
  BlockEnd,
  Name,
  String,
  Integer,
  Float,
  // operators
  Add,
  Sub,
  Div,
  FloorDiv,
  Mul,
  Mod,
  Pow,
  Tilde,
  LBracket,
  RBracket,
  LParen,
  RParen,
  LBrace,
  RBrace,
  Eq,
  Ne,
  Gt,
  GtEq,
  Lt,
  LtEq,
  Assign,
  Dot,
  Colon,
  Pipe,
  Comma,
  Semicolon,
  Eof,
};

struct Token {
  Tok type = Tok::Eof;
  std::uint32_t line = 1;
  std::uint32_t column = 1;
  std::string text;  // data text, name, decoded string literal, or operator spelling
  std::int64_t int_value = 0;
  double float_value = 0;

  bool is_name(const char* name) const { return type == Tok::Name && text == name; }
};

// How Jinja2 describes a token in error messages ("end of print statement", "'x'").
std::string describe_token(const Token& token);

}  // namespace chatwire::jinja
