// Mirrors jinja2/lexer.py's state machine (root, block, variable, comment, raw) and
// its whitespace rules: `-` strips all whitespace on that side, `+` disables
// lstrip/trim, lstrip_blocks strips spaces before `{%`/`{#` only when the tag starts
// its line, trim_blocks eats one newline after `%}`/`#}`.
#include "jinja/lexer.hpp"
// GCC 12 reports a false -Wrestrict inside std::string concatenation at -O3
// (GCC bug 105329); it is not a property of this code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <string>
#include <vector>

#include "jinja/unicode.hpp"
#include "util/hex.hpp"

namespace chatwire::jinja {

std::string normalize_source(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    char c = source[i];
    if (c == '\r') {
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
      out += '\n';
    } else {
      out += c;
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string describe_token(const Token& token) {
  switch (token.type) {
    case Tok::Eof:
      return "end of template";
    case Tok::BlockBegin:
      return "begin of statement block";
    case Tok::BlockEnd:
      return "end of statement block";
    case Tok::VariableBegin:
      return "begin of print statement";
    case Tok::VariableEnd:
      return "end of print statement";
    case Tok::Data:
      return "template data / text";
    case Tok::String:
      return "string";
    case Tok::Integer:
      return "integer";
    case Tok::Float:
      return "float";
    default:
      return token.text;
  }
}

namespace {

struct OperatorSpelling {
  const char* text;
  Tok type;
};
// Longest first, as jinja2's operator regex is sorted.
constexpr OperatorSpelling kOperators[] = {
    {"//", Tok::FloorDiv}, {"**", Tok::Pow},     {"==", Tok::Eq},    {"!=", Tok::Ne},
    {">=", Tok::GtEq},     {"<=", Tok::LtEq},    {"+", Tok::Add},    {"-", Tok::Sub},
    {"/", Tok::Div},       {"*", Tok::Mul},      {"%", Tok::Mod},    {"~", Tok::Tilde},
    {"[", Tok::LBracket},  {"]", Tok::RBracket}, {"(", Tok::LParen}, {")", Tok::RParen},
    {"{", Tok::LBrace},    {"}", Tok::RBrace},   {">", Tok::Gt},     {"<", Tok::Lt},
    {"=", Tok::Assign},    {".", Tok::Dot},      {":", Tok::Colon},  {"|", Tok::Pipe},
    {",", Tok::Comma},     {";", Tok::Semicolon}};

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_ascii_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
// Python identifiers (XID_Start / XID_Continue), approximated by Unicode categories.
bool is_unicode_name_char(char32_t cp, bool start) {
  // Python's Other_ID_Start / Other_ID_Continue code points.
  if (cp == 0x1885 || cp == 0x1886 || cp == 0x2118 || cp == 0x212E || cp == 0x309B || cp == 0x309C)
    return true;
  if (cp == 0x00B7 || cp == 0x0387 || (cp >= 0x1369 && cp <= 0x1371) || cp == 0x19DA) return !start;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_NL:
      return true;
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_PC:
      return !start;
    default:
      return false;
  }
}
// Byte length of the name at the start of `s` (0 when none).
std::size_t name_length(std::string_view s) {
  std::size_t pos = 0;
  while (pos < s.size()) {
    char c = s[pos];
    if (is_ascii_name_start(c) || (pos > 0 && is_digit(c))) {
      ++pos;
      continue;
    }
    if (static_cast<unsigned char>(c) < 0x80) break;
    std::size_t next = pos;
    char32_t cp = utf8::decode(s, next);
    if (!is_unicode_name_char(cp, pos == 0)) break;
    pos = next;
  }
  return pos;
}
using util::hex_value;

}  // namespace

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {
    line_starts_.push_back(0);
    for (std::size_t i = 0; i < src.size(); ++i)
      if (src[i] == '\n') line_starts_.push_back(i + 1);
  }

  // Lexes until `index` is a token or the Eof token is out; false on a lexing error.
  bool lex_until(std::size_t index) {
    while (!failed_ && !finished_ && tokens_.size() <= index) {
      if (pos_ < src_.size()) {
        failed_ = !lex_root();
      } else {
        Token eof;
        eof.type = Tok::Eof;
        locate(eof, src_.size());
        tokens_.push_back(std::move(eof));
        finished_ = true;
      }
    }
    return !failed_;
  }
  const Token& token(std::size_t index) const {
    return tokens_[std::min(index, tokens_.size() - 1)];
  }
  const Error& error() const { return error_; }

 private:
  std::string_view src_;
  std::size_t pos_ = 0;
  bool line_starting_ = true;
  std::vector<std::size_t> line_starts_;
  std::deque<Token> tokens_;  // a deque: the parser holds references while more are lexed
  bool failed_ = false;
  bool finished_ = false;
  Error error_;

  // Line and column (in code points) of `offset`. Tokens arrive in increasing order,
  // so the column is counted incrementally from the previous token on the same line
  // (a template on one huge line must not cost O(n^2)).
  void locate(Token& t, std::size_t offset) {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    std::size_t line = static_cast<std::size_t>(it - line_starts_.begin());
    std::size_t line_start = line_starts_[line - 1];
    if (line != cursor_line_ || offset < cursor_offset_) {
      cursor_line_ = line;
      cursor_offset_ = line_start;
      cursor_column_ = 0;
    }
    cursor_column_ += utf8::code_points(src_.substr(cursor_offset_, offset - cursor_offset_));
    cursor_offset_ = offset;
    t.line = static_cast<std::uint32_t>(line);
    t.column = static_cast<std::uint32_t>(cursor_column_ + 1);
  }
  std::size_t cursor_line_ = 0, cursor_offset_ = 0, cursor_column_ = 0;

  bool fail(std::string message, std::size_t offset) {
    Token t;
    locate(t, offset);
    error_ = Error{"TemplateSyntaxError", std::move(message), t.line, t.column, {}};
    return false;
  }

  void push(Tok type, std::size_t offset, std::string text = {}) {
    Token t;
    t.type = type;
    locate(t, offset);
    t.text = std::move(text);
    tokens_.push_back(std::move(t));
  }

  // Emits the text before a tag after applying `-` / lstrip_blocks rules.
  void emit_text(std::size_t begin, std::size_t end, char strip_sign, bool lstrip_allowed) {
    std::string_view text = src_.substr(begin, end - begin);
    if (strip_sign == '-') {
      text = text.substr(0, utf8::rstrip_length(text));
    } else if (strip_sign != '+' && lstrip_allowed) {
      std::size_t nl = text.rfind('\n');
      std::size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
      if ((l_pos > 0 || line_starting_) && utf8::all_space(text.substr(l_pos)))
        text = text.substr(0, l_pos);
    }
    if (!text.empty()) push(Tok::Data, begin, std::string(text));
  }

  static char sign_at(std::string_view s, std::size_t i) {
    return i < s.size() && (s[i] == '-' || s[i] == '+') ? s[i] : 0;
  }

  // Matches `(\-|\+|)\s*NAME\s*(?:\-%}\s*|%})` at `p` (after "{%"); returns the end or npos.
  std::size_t match_raw_tag(std::size_t p, std::string_view name, bool trim_newline,
                            char* sign) const {
    *sign = sign_at(src_, p);
    if (*sign) ++p;
    p += utf8::space_prefix(src_.substr(p));
    if (src_.substr(p, name.size()) != name) return std::string_view::npos;
    p += name.size();
    p += utf8::space_prefix(src_.substr(p));
    if (src_.substr(p, 3) == "-%}") {
      p += 3;
      return p + utf8::space_prefix(src_.substr(p));
    }
    if (trim_newline && src_.substr(p, 3) == "+%}") return p + 3;
    if (src_.substr(p, 2) == "%}") {
      p += 2;
      if (trim_newline && p < src_.size() && src_[p] == '\n') ++p;
      return p;
    }
    return std::string_view::npos;
  }

  bool lex_root() {
    // Find the first tag start.
    std::size_t p = pos_;
    while (true) {
      p = src_.find('{', p);
      if (p == std::string_view::npos || p + 1 >= src_.size()) {
        push(Tok::Data, pos_, std::string(src_.substr(pos_)));
        pos_ = src_.size();
        return true;
      }
      char c = src_[p + 1];
      if (c == '%' || c == '{' || c == '#') break;
      ++p;
    }
    char kind = src_[p + 1];
    char sign = sign_at(src_, p + 2);
    if (kind == '%') {
      char raw_sign = 0;
      std::size_t raw_end = match_raw_tag(p + 2, "raw", false, &raw_sign);
      if (raw_end != std::string_view::npos) {
        emit_text(pos_, p, raw_sign, true);
        line_starting_ = src_[raw_end - 1] == '\n';
        return lex_raw(raw_end);
      }
    }
    emit_text(pos_, p, sign, kind != '{');
    std::size_t after = p + 2 + (sign ? 1 : 0);
    line_starting_ = false;
    if (kind == '#') return lex_comment(p, after);
    push(kind == '%' ? Tok::BlockBegin : Tok::VariableBegin, p, kind == '%' ? "{%" : "{{");
    pos_ = after;
    return lex_tag(kind == '%');
  }

  bool lex_raw(std::size_t begin) {
    for (std::size_t p = src_.find("{%", begin); p != std::string_view::npos;
         p = src_.find("{%", p + 1)) {
      char sign = 0;
      std::size_t end = match_raw_tag(p + 2, "endraw", true, &sign);
      if (end == std::string_view::npos) continue;
      emit_text(begin, p, sign, true);
      pos_ = end;
      line_starting_ = src_[end - 1] == '\n';
      return true;
    }
    return fail("Missing end of raw directive", begin);
  }

  bool lex_comment(std::size_t begin, std::size_t p) {
    for (; p < src_.size(); ++p) {
      std::string_view rest = src_.substr(p);
      if (rest.substr(0, 3) == "+#}") {
        pos_ = p + 3;
      } else if (rest.substr(0, 3) == "-#}") {
        pos_ = p + 3 + utf8::space_prefix(src_.substr(p + 3));
      } else if (rest.substr(0, 2) == "#}") {
        pos_ = p + 2;
        if (pos_ < src_.size() && src_[pos_] == '\n') ++pos_;
      } else {
        continue;
      }
      line_starting_ = src_[pos_ - 1] == '\n';
      return true;
    }
    return fail("Missing end of comment tag", begin);
  }

  // Inside {% ... %} or {{ ... }} until the matching end delimiter.
  bool lex_tag(bool block) {
    std::vector<char> balancing;
    while (pos_ < src_.size()) {
      std::string_view rest = src_.substr(pos_);
      if (balancing.empty()) {
        std::size_t end = std::string_view::npos;
        if (block) {
          if (rest.substr(0, 3) == "+%}") {
            end = pos_ + 3;
          } else if (rest.substr(0, 3) == "-%}") {
            end = pos_ + 3 + utf8::space_prefix(src_.substr(pos_ + 3));
          } else if (rest.substr(0, 2) == "%}") {
            end = pos_ + 2;
            if (end < src_.size() && src_[end] == '\n') ++end;
          }
        } else {
          if (rest.substr(0, 3) == "-}}") {
            end = pos_ + 3 + utf8::space_prefix(src_.substr(pos_ + 3));
          } else if (rest.substr(0, 2) == "}}") {
            end = pos_ + 2;
          }
        }
        if (end != std::string_view::npos) {
          push(block ? Tok::BlockEnd : Tok::VariableEnd, pos_, block ? "%}" : "}}");
          line_starting_ = src_[end - 1] == '\n';
          pos_ = end;
          return true;
        }
      }
      std::size_t space = utf8::space_prefix(rest);
      if (space) {
        pos_ += space;
        continue;
      }
      char c = rest[0];
      if (is_digit(c)) {
        if (!lex_number()) return false;
        continue;
      }
      if (std::size_t n = name_length(rest)) {
        push(Tok::Name, pos_, std::string(rest.substr(0, n)));
        pos_ += n;
        continue;
      }
      if (c == '\'' || c == '"') {
        std::size_t n = 1;
        while (n < rest.size() && rest[n] != c) n += rest[n] == '\\' ? 2 : 1;
        if (n < rest.size()) {
          if (!lex_string(rest.substr(1, n - 1))) return false;
          pos_ += n + 1;
          continue;
        }
      }
      bool matched = false;
      for (const auto& op : kOperators) {
        std::string_view spelling(op.text);
        if (rest.substr(0, spelling.size()) != spelling) continue;
        if (op.type == Tok::LBrace || op.type == Tok::LParen || op.type == Tok::LBracket) {
          balancing.push_back(op.type == Tok::LBrace ? '}' : op.type == Tok::LParen ? ')' : ']');
        } else if (op.type == Tok::RBrace || op.type == Tok::RParen || op.type == Tok::RBracket) {
          if (balancing.empty()) return fail("unexpected '" + std::string(spelling) + "'", pos_);
          char expected = balancing.back();
          balancing.pop_back();
          if (expected != spelling[0])
            return fail("unexpected '" + std::string(spelling) + "', expected '" +
                            std::string(1, expected) + "'",
                        pos_);
        }
        push(op.type, pos_, std::string(spelling));
        pos_ += spelling.size();
        matched = true;
        break;
      }
      if (matched) continue;
      std::size_t cp_end = pos_;
      utf8::decode(src_, cp_end);
      std::string ch(src_.substr(pos_, cp_end - pos_));
      return fail("unexpected char " + (ch == "'" ? "\"'\"" : "'" + ch + "'") + " at " +
                      std::to_string(utf8::code_points(src_.substr(0, pos_))),
                  pos_);
    }
    return true;  // end of input inside a tag: the parser reports it
  }

  // Digits with optional '_' separators: returns the end of `(\d+_)*\d+` or start.
  std::size_t digits(std::size_t p) const {
    std::size_t q = p;
    while (true) {
      std::size_t r = q;
      while (r < src_.size() && is_digit(src_[r])) ++r;
      if (r == q) return q == p ? p : q - 1;  // a trailing '_' is not part of it
      if (r < src_.size() && src_[r] == '_' && r + 1 < src_.size() && is_digit(src_[r + 1])) {
        q = r + 1;
        continue;
      }
      return r;
    }
  }

  bool lex_number() {
    std::size_t start = pos_;
    bool after_dot = start > 0 && src_[start - 1] == '.';
    std::size_t int_end = digits(start);
    // float: int part, then (.frac)? e[+-]?exp  |  .frac
    if (!after_dot) {
      std::size_t p = int_end;
      std::size_t frac_end = p;
      if (p < src_.size() && src_[p] == '.' && p + 1 < src_.size() && is_digit(src_[p + 1]))
        frac_end = digits(p + 1);
      std::size_t exp_end = std::string_view::npos;
      std::size_t e = frac_end;
      if (e < src_.size() && (src_[e] == 'e' || src_[e] == 'E')) {
        std::size_t q = e + 1;
        if (q < src_.size() && (src_[q] == '+' || src_[q] == '-')) ++q;
        if (q < src_.size() && is_digit(src_[q])) exp_end = digits(q);
      }
      std::size_t float_end = exp_end != std::string_view::npos ? exp_end
                              : frac_end != p                   ? frac_end
                                                                : std::string_view::npos;
      if (float_end != std::string_view::npos) {
        std::string text;
        for (std::size_t i = start; i < float_end; ++i)
          if (src_[i] != '_') text += src_[i];
        push(Tok::Float, start, text);
        tokens_.back().float_value = std::strtod(text.c_str(), nullptr);
        pos_ = float_end;
        return true;
      }
    }
    // integer: 0b/0o/0x prefixes, [1-9](_?\d)*, 0(_?0)*
    int base = 10;
    std::size_t p = start;
    std::string digits_text;
    if (src_[start] == '0' && start + 1 < src_.size()) {
      char x = static_cast<char>(src_[start + 1] | 0x20);
      base = x == 'b' ? 2 : x == 'o' ? 8 : x == 'x' ? 16 : 10;
    }
    if (base != 10) {
      p = start + 2;
      while (p < src_.size()) {
        std::size_t q = p;
        if (src_[q] == '_') ++q;
        if (q >= src_.size()) break;
        int v = hex_value(src_[q]);
        if (v < 0 || v >= base) break;
        digits_text += src_[q];
        p = q + 1;
      }
      if (digits_text.empty()) {  // "0x" alone: the integer is 0, then a name
        base = 10;
        p = start + 1;
        digits_text.assign(1, '0');
      }
    } else if (src_[start] == '0') {
      p = start + 1;
      digits_text.assign(1, '0');
      while (p < src_.size()) {
        std::size_t q = p;
        if (src_[q] == '_') ++q;
        if (q < src_.size() && src_[q] == '0') {
          p = q + 1;
        } else {
          break;
        }
      }
    } else {
      p = int_end;
      for (std::size_t i = start; i < p; ++i)
        if (src_[i] != '_') digits_text += src_[i];
    }
    unsigned __int128 value = 0;
    for (char d : digits_text) {
      value = value * static_cast<unsigned>(base) + static_cast<unsigned>(hex_value(d));
      if (value > static_cast<unsigned __int128>(INT64_MAX))
        return fail("integer literal too large for 64 bits", start);
    }
    push(Tok::Integer, start, std::string(src_.substr(start, p - start)));
    tokens_.back().int_value = static_cast<std::int64_t>(value);
    pos_ = p;
    return true;
  }

  // Python's "unicode-escape" decoding of a string literal's body.
  bool lex_string(std::string_view body) {
    std::string out;
    out.reserve(body.size());
    for (std::size_t i = 0; i < body.size(); ++i) {
      char c = body[i];
      if (c != '\\' || i + 1 >= body.size()) {
        out += c;
        continue;
      }
      char e = body[++i];
      switch (e) {
        case '\n':
          break;
        case '\\':
          out += '\\';
          break;
        case '\'':
          out += '\'';
          break;
        case '"':
          out += '"';
          break;
        case 'a':
          out += '\a';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'v':
          out += '\v';
          break;
        case 'x':
        case 'u':
        case 'U': {
          std::size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          char32_t cp = 0;
          for (std::size_t k = 0; k < n; ++k) {
            int v = i + 1 + k < body.size() ? hex_value(body[i + 1 + k]) : -1;
            if (v < 0)
              return fail(std::string("(unicode error) 'unicodeescape' codec can't decode bytes: "
                                      "truncated \\") +
                              e + std::string(n, 'X') + " escape",
                          pos_);
            cp = cp * 16 + static_cast<char32_t>(v);
          }
          if (cp > 0x10FFFF)
            return fail(
                "(unicode error) 'unicodeescape' codec can't decode bytes: illegal "
                "Unicode character",
                pos_);
          utf8::append(out, cp);
          i += n;
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            char32_t cp = static_cast<char32_t>(e - '0');
            for (int k = 0;
                 k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++k)
              cp = cp * 8 + static_cast<char32_t>(body[++i] - '0');
            utf8::append(out, cp);
          } else {  // unknown escapes keep their backslash
            out += '\\';
            out += e;
          }
      }
    }
    push(Tok::String, pos_, std::move(out));
    return true;
  }
};

TokenStream::TokenStream(std::string_view source) : lexer_(std::make_unique<Lexer>(source)) {}
TokenStream::~TokenStream() = default;

const Token* TokenStream::at(std::size_t index) {
  return lexer_->lex_until(index) ? &lexer_->token(index) : nullptr;
}

const Error& TokenStream::error() const {
  return lexer_->error();
}

}  // namespace chatwire::jinja
