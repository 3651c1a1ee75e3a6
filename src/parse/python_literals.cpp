// Python literals and call lists (pythonic tool calls: `[f(a=1), g(b='x')]`) read and
// converted to JSON text, as the pythonic family and the key-value readers need them.
#include <cctype>
#include <string>

#include "parse/internal.hpp"
#include "util/utf8.hpp"

namespace chatwire::parse {

namespace {

// ---- Python literals ----

class PyReader {
 public:
  PyReader(std::string_view text, std::size_t max_depth) : s_(text), max_depth_(max_depth) {}

  std::string_view s_;
  std::size_t i_ = 0;
  std::size_t max_depth_;
  std::string error_;

  bool fail(std::string message) {
    if (error_.empty()) error_ = std::move(message) + " at offset " + std::to_string(i_);
    return false;
  }
  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip_ws(bool newlines = true) {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\r' || (newlines && c == '\n')) {
        ++i_;
      } else {
        break;
      }
    }
  }
  bool identifier(std::string& out) {
    std::size_t start = i_;
    while (i_ < s_.size()) {
      unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (std::isalnum(c) || c == '_' || c == '-' || c >= 0x80 || (c == '.' && i_ > start)) {
        ++i_;
      } else {
        break;
      }
    }
    if (i_ == start || std::isdigit(static_cast<unsigned char>(s_[start]))) {
      i_ = start;
      return fail("expected a name");
    }
    out.assign(s_.substr(start, i_ - start));
    return true;
  }

  // A Python (or JSON) literal, appended to `out` as JSON text.
  bool value(std::string& out, std::size_t depth) {
    if (depth > max_depth_) return fail("nesting deeper than max_json_depth");
    skip_ws();
    char c = peek();
    if (c == '\'' || c == '"') {
      std::string decoded;
      if (!string_literal(decoded)) return false;
      append_json_quoted(out, decoded);
      return true;
    }
    // An f-string without placeholders is the string it spells (SGLang evaluates the constant
    // one); one with a placeholder is code, not a literal.
    if ((c == 'f' || c == 'F') && i_ + 1 < s_.size() && (s_[i_ + 1] == '\'' || s_[i_ + 1] == '"')) {
      const std::size_t start = i_;
      ++i_;
      std::string decoded;
      if (!string_literal(decoded)) return false;
      if (decoded.find_first_of("{}") != std::string::npos) {
        i_ = start;
        return fail("an f-string with a placeholder is not a literal");
      }
      append_json_quoted(out, decoded);
      return true;
    }
    if (c == '[' || c == '(') return sequence(out, depth, c == '[' ? ']' : ')');
    if (c == '{') return mapping(out, depth);
    if (c == '-' || c == '+' || c == '.' || std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t start = i_;
      ++i_;
      while (i_ < s_.size()) {
        char d = s_[i_];
        if (std::isalnum(static_cast<unsigned char>(d)) || d == '.' || d == '_' ||
            ((d == '+' || d == '-') && (s_[i_ - 1] == 'e' || s_[i_ - 1] == 'E'))) {
          ++i_;
        } else {
          break;
        }
      }
      std::string_view text = s_.substr(start, i_ - start);
      std::string digits(text);
      digits.erase(std::remove(digits.begin(), digits.end(), '_'), digits.end());
      if (is_integer_text(digits)) {
        out += integer_json(digits);
        return true;
      }
      std::string number;
      if (!number_json(text, number)) {
        i_ = start;
        return fail("not a finite number");
      }
      // Python float literals stay floats ("2.0" -> 2.0).
      if (number.find_first_of(".e") == std::string::npos) number += ".0";
      out += number;
      return true;
    }
    std::string word;
    std::size_t start = i_;
    while (i_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[i_]))) ++i_;
    word.assign(s_.substr(start, i_ - start));
    if (word == "True" || word == "true") {
      out += "true";
      return true;
    }
    if (word == "False" || word == "false") {
      out += "false";
      return true;
    }
    if (word == "None" || word == "null") {
      out += "null";
      return true;
    }
    i_ = start;
    return fail("expected a literal");
  }

  bool sequence(std::string& out, std::size_t depth, char close) {
    ++i_;
    out += '[';
    return items(out, depth, close, true);
  }

  // Before an element of a container closed by `close`: the separator (a trailing comma is
  // allowed), or the close itself, which writes `json_close` to `out`.
  enum class Next { kElement, kClosed, kFailed };
  Next next_element(std::string& out, char close, char json_close, bool& first) {
    for (;;) {
      skip_ws();
      if (peek() == close) {
        ++i_;
        out += json_close;
        return Next::kClosed;
      }
      if (first) {
        first = false;
        return Next::kElement;
      }
      if (peek() != ',') {
        fail("expected ','");
        return Next::kFailed;
      }
      ++i_;
      skip_ws();
      if (peek() == close) continue;
      out += ", ";
      return Next::kElement;
    }
  }

  // The elements of a list, tuple or set up to `close`, as the rest of a JSON array in `out`
  // (`first`: no element read yet).
  bool items(std::string& out, std::size_t depth, char close, bool first) {
    for (;;) {
      const Next next = next_element(out, close, ']', first);
      if (next != Next::kElement) return next == Next::kClosed;
      if (!value(out, depth + 1)) return false;
    }
  }

  bool mapping(std::string& out, std::size_t depth) {
    ++i_;
    const std::size_t open = out.size();
    out += '{';
    bool first = true;
    for (;;) {
      const Next next = next_element(out, '}', '}', first);
      if (next != Next::kElement) return next == Next::kClosed;
      std::string key;
      if (!value(key, depth + 1)) return false;
      skip_ws();
      if (first_element_ends_set(open, out, key)) return items(out, depth, '}', false);
      // JSON keys are strings; quoted byte-safely (Json::dump throws on invalid UTF-8).
      if (key.empty() || key[0] != '"')
        append_json_quoted(out, key);
      else
        out += key;
      if (peek() != ':') return fail("expected ':'");
      ++i_;
      out += ": ";
      if (!value(out, depth + 1)) return false;
    }
  }

  // `{'a', 'b'}` is a Python set (models write one for a list of tags): its first element is
  // followed by ',' or '}', not ':'. JSON has no set; it becomes the array of its elements.
  bool first_element_ends_set(std::size_t open, std::string& out, const std::string& first) {
    if (out.size() != open + 1 || (peek() != ',' && peek() != '}')) return false;
    out[open] = '[';
    out += first;
    return true;
  }

  // From an opening bracket to just after its match, strings skipped; false if unbalanced.
  bool skip_balanced() {
    int depth = 0;
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\'' || c == '"') {
        std::string ignored;
        if (!string_literal(ignored)) return false;
        continue;
      }
      ++i_;
      if (c == '(' || c == '[' || c == '{') ++depth;
      if ((c == ')' || c == ']' || c == '}') && --depth == 0) return true;
    }
    return false;
  }

  bool hex(std::size_t digits, std::uint32_t& cp) {
    if (i_ + digits > s_.size()) return fail("short escape");
    cp = 0;
    for (std::size_t k = 0; k < digits; ++k) {
      char c = s_[i_ + k];
      cp <<= 4;
      if (c >= '0' && c <= '9') {
        cp |= static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        cp |= static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        cp |= static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        return fail("bad hex escape");
      }
    }
    i_ += digits;
    return true;
  }

  bool string_literal(std::string& out) {
    char quote = s_[i_];
    bool triple = s_.substr(i_, 3) == std::string(3, quote);
    i_ += triple ? 3 : 1;
    for (;;) {
      if (i_ >= s_.size()) return fail("unterminated string");
      char c = s_[i_];
      if (c == quote) {
        if (!triple) {
          ++i_;
          return true;
        }
        if (s_.substr(i_, 3) == std::string(3, quote)) {
          i_ += 3;
          return true;
        }
      }
      // A raw newline in a one-line string is a Python syntax error, but models write one in
      // the code or text they pass (vLLM's LFM2 tests expect the call): it is the newline.
      if (c != '\\') {
        out += c;
        ++i_;
        continue;
      }
      if (++i_ >= s_.size()) return fail("unterminated string");
      char e = s_[i_++];
      std::uint32_t cp = 0;
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case '0':
          out += '\0';
          break;
        case '\n':
          break;
        case 'x':
          if (!hex(2, cp)) return false;
          util::utf8::append(out, cp);
          break;
        case 'u':
          if (!hex(4, cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00 && s_.substr(i_, 2) == "\\u") {
            std::uint32_t low = 0;
            std::size_t save = i_;
            i_ += 2;
            if (hex(4, low) && low >= 0xDC00 && low < 0xE000) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            } else {
              i_ = save;
            }
          }
          util::utf8::append(out, cp);
          break;
        case 'U':
          if (!hex(8, cp)) return false;
          util::utf8::append(out, cp);
          break;
        case 'a':
          out += '\a';
          break;
        case 'v':
          out += '\v';
          break;
        case '\\':
        case '\'':
        case '"':
          out += e;
          break;
        default:
          // As in Python, an unknown escape keeps its backslash (`"\d+"` is the regex \d+).
          out += '\\';
          out += e;
          break;
      }
    }
  }
};

}  // namespace

bool python_literal_json(std::string_view text, std::size_t max_depth, std::string& json) {
  PyReader reader(text, max_depth);
  if (!reader.value(json, 0)) return false;
  reader.skip_ws();
  return reader.at_end();
}

// The call list as Python reads it, nothing repaired.
// Names a call left out of a list in `dropped` ("'start of the call..' (why)"; several are
// joined with "; "), for the warning the caller gives.
static void append_dropped(std::string& dropped, std::string_view call, std::string_view why) {
  if (!dropped.empty()) dropped += "; ";
  // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on one chain of +.
  constexpr std::size_t kShown = 80;
  const std::size_t shown = util::utf8::char_start(call, std::min(call.size(), kShown));
  dropped += '\'';
  dropped.append(call.substr(0, shown));
  dropped += shown < call.size() ? "..' (" : "' (";
  dropped += why.empty() ? std::string_view("not one call") : why;
  dropped += ')';
}

static bool read_python_calls(std::string_view text, std::vector<PyCall>& calls, std::string& error,
                              std::size_t max_depth) {
  PyReader r(text, max_depth);
  std::string last_why;  // the reason the last dropped call gave
  std::size_t dropped_calls = 0;
  r.skip_ws();
  bool bracketed = r.peek() == '[';
  if (bracketed) ++r.i_;
  for (bool first = true;; first = false) {
    r.skip_ws();
    if (bracketed && r.peek() == ']') {
      ++r.i_;
      break;
    }
    if (!bracketed && r.at_end()) break;
    if (!first && r.peek() == ',') {
      ++r.i_;
      r.skip_ws();
    }
    PyCall call;
    const std::size_t call_start = r.i_;
    if (!r.identifier(call.name)) {
      error = r.error_;
      return false;
    }
    // Llama 3 builtin tools are written `brave_search.call(query="...")`.
    if (call.name.size() > 5 && call.name.ends_with(".call")) {
      call.name.resize(call.name.size() - 5);
      call.builtin_form = true;
    }
    r.skip_ws();
    if (r.peek() != '(') {
      error = "expected '(' after " + call.name;
      return false;
    }
    std::size_t open_paren = r.i_;
    ++r.i_;
    call.arguments.assign(1, '{');  // not = "{": GCC 12 -O3 warns a false -Wrestrict there
    bool bad_value = false;
    for (bool first_arg = true;; first_arg = false) {
      r.skip_ws();
      if (r.peek() == ')') {
        ++r.i_;
        break;
      }
      if (!first_arg) {
        if (r.peek() != ',') {
          error = r.error_.empty() ? "expected ',' between arguments" : r.error_;
          return false;
        }
        ++r.i_;
        r.skip_ws();
        if (r.peek() == ')') continue;
        call.arguments += ", ";
      }
      // `**{'k': v}` spreads a literal mapping into the arguments, as Python (and SGLang) reads it.
      if (r.peek() == '*' && r.i_ + 1 < text.size() && text[r.i_ + 1] == '*') {
        r.i_ += 2;
        r.skip_ws();
        std::string mapping;
        if (r.peek() != '{' || !r.value(mapping, 1) || mapping.size() < 2) {
          error = r.error_.empty() ? "** is not followed by a literal mapping" : r.error_;
          return false;
        }
        std::string_view members = std::string_view(mapping).substr(1, mapping.size() - 2);
        if (members.empty()) {
          if (!first_arg && call.arguments.ends_with(", "))
            call.arguments.resize(call.arguments.size() - 2);
        } else {
          call.arguments += members;
        }
        continue;
      }
      std::string key;
      if (!r.identifier(key)) {
        error = r.error_;
        return false;
      }
      r.skip_ws();
      if (r.peek() != '=') {
        error = "positional argument in call to " + call.name;
        return false;
      }
      ++r.i_;
      append_json_quoted(call.arguments, key);
      call.arguments += ": ";
      if (!r.value(call.arguments, 1)) {
        // One unconvertible argument (bytes, inf) drops that call, not its siblings; each
        // call dropped is named.
        const std::string why = std::move(r.error_);
        r.error_.clear();
        r.i_ = open_paren;
        if (!r.skip_balanced()) {
          error = why;
          return false;
        }
        append_dropped(error, text.substr(call_start, r.i_ - call_start), why);
        last_why = why;
        ++dropped_calls;
        bad_value = true;
        break;
      }
    }
    call.arguments += "}";
    if (!bad_value) calls.push_back(std::move(call));
    if (!bracketed) {
      r.skip_ws();
      if (r.at_end()) break;
    }
  }
  r.skip_ws();
  if (!r.at_end()) {
    error = "text after the call list";
    return false;
  }
  // No call read: the list is no call list, and its caller names it; one dropped call's reason
  // is given as it is, several keep their names.
  if (calls.empty() && dropped_calls == 1) error = last_why;
  return !calls.empty();
}

namespace {

// ---- recovery of a call list that does not read as Python (SGLang's LFM2 detector) ----

bool is_quote_closer(std::string_view text, std::size_t pos) {
  std::size_t k = pos + 1;
  while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
  return k < text.size() && std::string_view(",)]}:").find(text[k]) != std::string_view::npos;
}

bool escaped_at(std::string_view text, std::size_t pos) {
  std::size_t backslashes = 0;
  while (pos > backslashes && text[pos - 1 - backslashes] == '\\') ++backslashes;
  return backslashes % 2 == 1;
}

// The top-level calls of a list, split at commas outside brackets (`respect_strings`: and outside
// quotes). Counting brackets alone cannot be misled by a broken quote.
std::vector<std::string_view> split_calls(std::string_view text, bool respect_strings) {
  std::size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  if (e - b >= 2 && text[b] == '[' && text[e - 1] == ']') ++b, --e;
  std::vector<std::string_view> parts;
  std::size_t start = b;
  int depth = 0;
  char quote = 0;
  auto push = [&](std::size_t end) {
    std::string_view part = text.substr(start, end - start);
    while (!part.empty() && std::isspace(static_cast<unsigned char>(part.front())))
      part.remove_prefix(1);
    while (!part.empty() && std::isspace(static_cast<unsigned char>(part.back())))
      part.remove_suffix(1);
    if (!part.empty()) parts.push_back(part);
  };
  for (std::size_t i = b; i < e; ++i) {
    const char c = text[i];
    if (respect_strings && quote) {
      if (c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (respect_strings && (c == '\'' || c == '"')) {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      push(i);
      start = i + 1;
    }
  }
  push(e);
  return parts;
}

// Candidates are tried for one broken string only, each a read of the whole text: at most this
// many, so a hostile output full of quotes costs a bounded number of linear reads.
constexpr std::size_t kMaxQuoteCandidates = 64;

// A call list whose first broken string (its first unescaped quote of its own kind cannot end it:
// what follows is none of `,)]}:`) closes at exactly one of its later quotes that can, with the
// quotes inside escaped: `command='sed -n '360,450p' f.py'`. Several readings that parse are an
// ambiguity and none is taken; a reading with fewer calls than the list's brackets count swallowed
// a sibling call and is not taken either.
bool read_with_nested_quotes(std::string_view text, std::vector<PyCall>& calls, std::string& error,
                             std::size_t max_depth) {
  const std::size_t expected_calls = split_calls(text, false).size();
  std::size_t i = 0;
  while (i < text.size()) {
    const char q = text[i];
    if (q != '\'' && q != '"') {
      ++i;
      continue;
    }
    // The string's first unescaped quote of its kind: when it can close the string, the scan
    // goes on after it (each byte is read once: a list of many good strings stays linear).
    std::size_t first = text.size();
    for (std::size_t j = i + 1; j < text.size(); ++j) {
      if (text[j] == '\\') {
        ++j;
      } else if (text[j] == q) {
        first = j;
        break;
      }
    }
    if (first == text.size()) return false;
    if (is_quote_closer(text, first)) {
      i = first + 1;
      continue;
    }
    // A broken string: its later quotes are the candidates (collected once).
    std::vector<std::size_t> quotes{first};
    for (std::size_t j = first + 1; j < text.size(); ++j) {
      if (text[j] == '\\') {
        ++j;
      } else if (text[j] == q) {
        quotes.push_back(j);
      }
    }
    std::vector<PyCall> winner;
    std::string winner_dropped;  // the calls the winning reading left out, named
    std::size_t winners = 0, tried = 0;
    for (std::size_t close : quotes) {
      if (!is_quote_closer(text, close)) continue;
      if (++tried > kMaxQuoteCandidates) return false;
      std::string candidate(text.substr(0, i + 1));
      for (std::size_t j = i + 1; j < close; ++j) {
        if (text[j] == q && !escaped_at(text, j)) candidate += '\\';
        candidate += text[j];
      }
      candidate += text.substr(close);
      std::vector<PyCall> got;
      std::string why;
      if (!read_python_calls(candidate, got, why, max_depth)) continue;
      if (expected_calls > 1 && got.size() < expected_calls) continue;
      if (++winners > 1) return false;
      winner = std::move(got);
      winner_dropped = std::move(why);
    }
    if (winners != 1) return false;
    calls = std::move(winner);
    error = std::move(winner_dropped);
    return true;
  }
  return false;
}

bool read_or_repair(std::string_view text, std::vector<PyCall>& calls, std::string& error,
                    std::size_t max_depth) {
  if (read_python_calls(text, calls, error, max_depth)) return true;
  std::string first_error = error;
  calls.clear();
  if (read_with_nested_quotes(text, calls, error, max_depth)) return true;
  calls.clear();
  error = first_error;
  return false;
}

}  // namespace

bool parse_python_calls(std::string_view text, std::vector<PyCall>& calls, std::string& error,
                        std::size_t max_depth) {
  if (read_or_repair(text, calls, error, max_depth)) return true;
  // One call that cannot be read does not take its siblings with it: each top-level call is read
  // on its own (split both ways, the split that reads more calls wins), and the calls not read
  // are named in `error`, which the caller reports (SGLang's LFM2 detector salvages the same way).
  const std::string whole_error = error;
  std::vector<PyCall> best;
  std::string best_dropped;
  for (bool respect_strings : {true, false}) {
    const auto parts = split_calls(text, respect_strings);
    if (parts.size() < 2) continue;
    std::vector<PyCall> got;
    std::string dropped;
    bool every_part_a_call = true;
    for (std::string_view part : parts) {
      // Only a list of call-shaped parts (`name(`) is salvaged: prose in brackets is no call list.
      std::size_t k = 0;
      while (k < part.size() && (std::isalnum(static_cast<unsigned char>(part[k])) ||
                                 part[k] == '_' || part[k] == '.'))
        ++k;
      while (k < part.size() && part[k] == ' ') ++k;
      if (k == 0 || k >= part.size() || part[k] != '(' || part.back() != ')') {
        every_part_a_call = false;
        break;
      }
      std::vector<PyCall> one;
      std::string why;
      if (read_or_repair(part, one, why, max_depth) && one.size() == 1 && why.empty()) {
        got.push_back(std::move(one.front()));
      } else {
        append_dropped(dropped, part, why);
      }
    }
    if (every_part_a_call && got.size() > best.size()) {
      best = std::move(got);
      best_dropped = std::move(dropped);
    }
  }
  if (best.empty()) {
    calls.clear();
    error = whole_error;
    return false;
  }
  calls = std::move(best);
  error = best_dropped;
  return true;
}

}  // namespace chatwire::parse
