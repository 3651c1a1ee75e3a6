// Python regexes translated to PCRE2, construct by construct: the `re` syntax, and the extensions
// of the `regex` module that transformers compiles a template's patterns with and that PCRE2
// reads the same way ((?<name>...), \p{..} general categories, \m, \M, \G). Where the two
// engines read the same text differently the construct is rewritten (\Z, \v, \uXXXX, octal
// escapes, {,n}, a '[' inside a class, \s); constructs PCRE2 would accept with another meaning, or
// that it cannot express (POSIX classes, fuzzy matching, \N{..}), are refused by name.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <set>

#include "response/internal.hpp"
#include "util/utf8.hpp"

namespace chatwire::response {

struct RegexCode {
  pcre2_code* code = nullptr;
  ~RegexCode() { pcre2_code_free(code); }
};

namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_octal(char c) {
  return c >= '0' && c <= '7';
}
bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

std::string hex_escape(unsigned long v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "\\x{%lx}", v);
  return buf;
}

// re's \s also holds U+001C..U+001F, which PCRE2's Unicode \s does not (nor does the regex
// module's).
constexpr const char* kSpaceItems = "\\s\\x{1c}-\\x{1f}";

// The regex module's \s: the White_Space property. PCRE2's \s also holds U+180E (its \h list).
constexpr const char* kRegexSpaceItems =
    "\\x{9}-\\x{d}\\x{20}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}"
    "\\x{205f}\\x{3000}";

// The regex module's \w (Unicode TR18): Alphabetic (letters, Nl, and the circled and squared
// letters of category So), marks, decimal digits, connectors and the joiners; not `²` or `½`,
// which re's \w (and PCRE2's) hold. Its \b, \B, \m and \M are read with it.
constexpr const char* kRegexWordItems =
    "\\p{L}\\p{Nl}\\p{M}\\p{Nd}\\p{Pc}\\x{200c}\\x{200d}\\x{24b6}-\\x{24e9}\\x{1f130}-\\x{1f149}"
    "\\x{1f150}-\\x{1f169}\\x{1f170}-\\x{1f189}";

class Translator {
 public:
  Translator(std::string_view p, const std::string& path, Regex::Syntax syntax)
      : p_(p), path_(path), regex_module_(syntax == Regex::Syntax::kRegexModule) {}

  Result<std::string> run() {
    while (i_ < p_.size()) {
      if (!step()) return error_;
    }
    if (!open_groups_.empty()) return fail("missing ), unterminated subpattern");
    return out_;
  }

 private:
  bool fail_bool(std::string what) {
    error_ = Error{"ValueError", "invalid or unsupported regex: " + what, 0, 0, path_};
    return false;
  }
  Error fail(std::string what) {
    fail_bool(std::move(what));
    return error_;
  }

  bool step() {
    const char c = p_[i_];
    switch (c) {
      case '\\':
        return escape(false);
      case '[':
        return char_class();
      case '(':
        return group();
      case ')':
        if (open_groups_.empty()) return fail_bool("unbalanced parenthesis at position " + pos());
        if (open_groups_.back() > 0) closed_groups_.insert(open_groups_.back());
        open_groups_.pop_back();
        out_ += ')';
        ++i_;
        last_repeatable_ = true;
        return true;
      case '{':
        return brace();
      case '*':
      case '+':
      case '?':
        if (!last_repeatable_) return fail_bool("nothing to repeat at position " + pos());
        out_ += c;
        ++i_;
        // A lazy or possessive suffix belongs to this quantifier.
        if (i_ < p_.size() && (p_[i_] == '?' || p_[i_] == '+')) out_ += p_[i_++];
        last_repeatable_ = false;
        return true;
      default:
        copy_char();
        last_repeatable_ = true;
        return true;
    }
  }

  std::string pos() const { return std::to_string(i_); }

  void copy_char() {
    const unsigned char c = static_cast<unsigned char>(p_[i_]);
    if (c < 0x20 || c == 0x7F) {
      out_ += hex_escape(c);
      ++i_;
      return;
    }
    std::size_t next = i_;
    util::utf8::decode(p_, next);
    out_.append(p_.substr(i_, next - i_));
    i_ = next;
  }

  // {m}, {m,}, {,n}, {m,n} are quantifiers in Python ({,n} is {0,n}); anything else is a literal
  // brace. PCRE2 before 10.43 reads {,n} as literal text, so the translation always names m.
  bool brace() {
    std::size_t j = i_ + 1;
    std::string lo, hi;
    while (j < p_.size() && is_digit(p_[j])) lo += p_[j++];
    bool comma = false;
    if (j < p_.size() && p_[j] == ',') {
      comma = true;
      ++j;
      while (j < p_.size() && is_digit(p_[j])) hi += p_[j++];
    }
    if (regex_module_) {
      // `{e<=1}`, `{i<=1,d<=2}`, `{2i+2d+1s<=4}`, `{e}`, `{e<=1:[a-z]}`: the regex module's fuzzy
      // matching, which PCRE2 has no form of (re reads the braces as text). Only a brace whose
      // text up to its `}` (or a `:` constraint) is cost syntax: errors, counts and comparisons.
      const std::size_t close = p_.find('}', i_);
      if (close != std::string_view::npos) {
        std::string_view body = p_.substr(i_ + 1, close - i_ - 1);
        if (const std::size_t colon = body.find(':'); colon != std::string_view::npos)
          body = body.substr(0, colon);
        const bool cost_syntax =
            !body.empty() &&
            body.find_first_not_of("eids0123456789<=+*, ") == std::string_view::npos &&
            body.find_first_of("eids") != std::string_view::npos &&
            (body.find_first_of("<=") != std::string_view::npos || body.size() == 1);
        if (cost_syntax)
          return fail_bool("fuzzy matching {" + std::string(p_.substr(i_ + 1, close - i_ - 1)) +
                           "} is not supported at position " + pos());
      }
    }
    if (j < p_.size() && p_[j] == '}' && (!lo.empty() || comma)) {
      if (!last_repeatable_) return fail_bool("nothing to repeat at position " + pos());
      out_ += '{';
      out_ += lo.empty() ? "0" : lo;
      if (comma) out_ += "," + hi;
      out_ += '}';
      i_ = j + 1;
      if (i_ < p_.size() && (p_[i_] == '?' || p_[i_] == '+')) out_ += p_[i_++];
      last_repeatable_ = false;
      return true;
    }
    out_ += "\\{";
    ++i_;
    last_repeatable_ = true;
    return true;
  }

  // An escape outside (in_class false) or inside a character class.
  bool escape(bool in_class) {
    if (i_ + 1 >= p_.size()) return fail_bool("bad escape (end of pattern)");
    const char e = p_[i_ + 1];
    const std::string where = " at position " + pos();
    i_ += 2;
    last_repeatable_ = true;
    switch (e) {
      case 'w':
      case 'W':
        if (regex_module_) {
          if (e == 'W' && in_class)
            return fail_bool("\\W inside a character class is not supported" + where);
          out_ += in_class ? std::string(kRegexWordItems)
                           : std::string(e == 'w' ? "[" : "[^") + kRegexWordItems + "]";
          return true;
        }
        out_ += '\\';
        out_ += e;
        return true;
      case 'd':
      case 'D':
        out_ += '\\';
        out_ += e;
        return true;
      case 's':
      case 'S': {
        const char* items = regex_module_ ? kRegexSpaceItems : kSpaceItems;
        if (e == 'S' && in_class)
          return fail_bool("\\S inside a character class is not supported" + where);
        out_ += in_class ? std::string(items) : std::string(e == 's' ? "[" : "[^") + items + "]";
        return true;
      }
      case 'A':
      case 'b':
      case 'B':
      case 'Z':
        if (in_class) {
          if (e == 'b') return out_ += "\\x{8}", true;
          return fail_bool(std::string("bad escape \\") + e + where);
        }
        if (regex_module_ && (e == 'b' || e == 'B')) {
          out_ += e == 'b' ? word_boundary("(?<=W)(?!W)|(?<!W)(?=W)")
                           : word_boundary("(?<=W)(?=W)|(?<!W)(?!W)");
          last_repeatable_ = false;
          return true;
        }
        out_ += e == 'Z' ? "\\z" : std::string("\\") + e;  // Python's \Z is the very end
        last_repeatable_ = false;
        return true;
      case 'a':
        out_ += "\\x{7}";
        return true;
      case 'f':
        out_ += "\\x{c}";
        return true;
      case 'n':
        out_ += "\\x{a}";
        return true;
      case 'r':
        out_ += "\\x{d}";
        return true;
      case 't':
        out_ += "\\x{9}";
        return true;
      case 'v':
        out_ += "\\x{b}";
        return true;  // PCRE2's \v is a class
      case 'x':
        return hex(2, where);
      case 'u':
        return hex(4, where);
      case 'U':
        return hex(8, where);
      case 'N':
        return fail_bool("named character escapes \\N{...} are not supported" + where);
      case 'm':
      case 'M':
      case 'G':
        // The regex module's word start and end, and the search's start position (where every
        // search of ours starts, as PCRE2's \G).
        if (in_class || !regex_module_) return fail_bool(std::string("bad escape \\") + e + where);
        out_ += e == 'm'   ? word_boundary("(?<!W)(?=W)")
                : e == 'M' ? word_boundary("(?<=W)(?!W)")
                           : std::string("\\G");
        last_repeatable_ = false;
        return true;
      case 'p':
      case 'P':
        if (!regex_module_) return fail_bool(std::string("bad escape \\") + e + where);
        return property(e == 'P', where);
      default:
        break;
    }
    if (is_digit(e)) return numeric_escape(e, in_class, where);
    if (is_alpha(e)) return fail_bool(std::string("bad escape \\") + e + where);
    // Any other escaped character is itself.
    --i_;
    const unsigned char c = static_cast<unsigned char>(p_[i_]);
    if (c < 0x80 && c > 0x20 && c != 0x7F) {
      out_ += '\\';
      out_ += static_cast<char>(c);
      ++i_;
    } else {
      copy_char();
    }
    return true;
  }

  // A word-boundary assertion of the regex module: `shape`'s W is its word class.
  static std::string word_boundary(std::string_view shape) {
    std::string out = "(?:";
    for (char c : shape) {
      if (c == 'W')
        out += std::string("[") + kRegexWordItems + "]";
      else
        out += c;
    }
    return out + ")";
  }

  // \pL, \p{Lu}, \p{Letter}, \p{^L}, \P{..}: a general category, as the regex module reads it
  // (names loosely: case, spaces, '_' and '-' ignored). Scripts and binary properties are
  // refused: the two engines' Unicode versions and script rules differ.
  bool property(bool negated, const std::string& where) {
    std::string raw;
    if (i_ < p_.size() && p_[i_] == '{') {
      const std::size_t close = p_.find('}', i_);
      if (close == std::string_view::npos) return fail_bool("missing }" + where);
      raw = std::string(p_.substr(i_ + 1, close - i_ - 1));
      i_ = close + 1;
    } else if (i_ < p_.size() && is_alpha(p_[i_])) {
      raw = std::string(1, p_[i_++]);
    } else {
      return fail_bool("bad property escape" + where);
    }
    if (!raw.empty() && raw[0] == '^') {
      negated = !negated;
      raw.erase(0, 1);
    }
    std::string key;
    for (char c : raw)
      if (c != ' ' && c != '_' && c != '-') key += static_cast<char>(c | 0x20);
    static const std::pair<const char*, const char*> kCategories[] = {
        {"l", "L"},   {"letter", "L"},
        {"lu", "Lu"}, {"uppercaseletter", "Lu"},
        {"ll", "Ll"}, {"lowercaseletter", "Ll"},
        {"lt", "Lt"}, {"titlecaseletter", "Lt"},
        {"lm", "Lm"}, {"modifierletter", "Lm"},
        {"lo", "Lo"}, {"otherletter", "Lo"},
        {"m", "M"},   {"mark", "M"},
        {"mn", "Mn"}, {"nonspacingmark", "Mn"},
        {"mc", "Mc"}, {"spacingmark", "Mc"},
        {"me", "Me"}, {"enclosingmark", "Me"},
        {"n", "N"},   {"number", "N"},
        {"nd", "Nd"}, {"decimalnumber", "Nd"},
        {"nl", "Nl"}, {"letternumber", "Nl"},
        {"no", "No"}, {"othernumber", "No"},
        {"p", "P"},   {"punctuation", "P"},
        {"pc", "Pc"}, {"connectorpunctuation", "Pc"},
        {"pd", "Pd"}, {"dashpunctuation", "Pd"},
        {"ps", "Ps"}, {"openpunctuation", "Ps"},
        {"pe", "Pe"}, {"closepunctuation", "Pe"},
        {"pi", "Pi"}, {"initialpunctuation", "Pi"},
        {"pf", "Pf"}, {"finalpunctuation", "Pf"},
        {"po", "Po"}, {"otherpunctuation", "Po"},
        {"s", "S"},   {"symbol", "S"},
        {"sm", "Sm"}, {"mathsymbol", "Sm"},
        {"sc", "Sc"}, {"currencysymbol", "Sc"},
        {"sk", "Sk"}, {"modifiersymbol", "Sk"},
        {"so", "So"}, {"othersymbol", "So"},
        {"z", "Z"},   {"separator", "Z"},
        {"zs", "Zs"}, {"spaceseparator", "Zs"},
        {"zl", "Zl"}, {"lineseparator", "Zl"},
        {"zp", "Zp"}, {"paragraphseparator", "Zp"},
        {"c", "C"},   {"other", "C"},
        {"cc", "Cc"}, {"control", "Cc"},
        {"cf", "Cf"}, {"format", "Cf"},
        {"co", "Co"}, {"privateuse", "Co"},
        {"cn", "Cn"}, {"unassigned", "Cn"},
        {"cs", "Cs"}, {"surrogate", "Cs"},
    };
    for (const auto& [name, category] : kCategories) {
      if (key != name) continue;
      out_ += negated ? "\\P{" : "\\p{";
      out_ += category;
      out_ += '}';
      return true;
    }
    return fail_bool("property \\p{" + raw +
                     "} is not supported (general categories only: L, Lu, Letter, ...)" + where);
  }

  bool hex(std::size_t digits, const std::string& where) {
    if (i_ + digits > p_.size()) return fail_bool("incomplete escape" + where);
    unsigned long v = 0;
    for (std::size_t k = 0; k < digits; ++k) {
      const char h = p_[i_ + k];
      if (!is_hex(h)) return fail_bool("incomplete escape" + where);
      v = v * 16 + static_cast<unsigned long>(is_digit(h) ? h - '0' : (h | 0x20) - 'a' + 10);
    }
    i_ += digits;
    if (v > 0x10FFFF) return fail_bool("bad escape (code point above U+10FFFF)" + where);
    if (v >= 0xD800 && v <= 0xDFFF)
      return fail_bool("a surrogate escape cannot match UTF-8 text" + where);
    out_ += hex_escape(v);
    return true;
  }

  // \0, \0oo, \ooo: octal characters; \N, \NN: group references (Python's rules).
  bool numeric_escape(char first, bool in_class, const std::string& where) {
    const auto octal = [&](std::size_t count) {
      unsigned long v = 0;
      for (std::size_t k = 0; k < count; ++k)
        v = v * 8 + static_cast<unsigned long>(p_[i_ + k] - '0');
      return v;
    };
    if (first == '0') {
      std::size_t n = 0;
      while (n < 2 && i_ + n < p_.size() && is_octal(p_[i_ + n])) ++n;
      unsigned long v = octal(n);
      i_ += n;
      out_ += hex_escape(v);
      return true;
    }
    if (i_ + 1 < p_.size() && is_octal(first) && is_octal(p_[i_]) && is_octal(p_[i_ + 1])) {
      unsigned long v = static_cast<unsigned long>(first - '0') * 64 + octal(2);
      if (v > 0377) return fail_bool("octal escape value outside of range 0-0o377" + where);
      i_ += 2;
      out_ += hex_escape(v);
      return true;
    }
    if (in_class) return fail_bool("bad escape (group reference in a class)" + where);
    int group = first - '0';
    if (i_ < p_.size() && is_digit(p_[i_])) group = group * 10 + (p_[i_++] - '0');
    if (!closed_groups_.count(group)) return fail_bool("invalid group reference" + where);
    out_ += "\\g{" + std::to_string(group) + "}";
    return true;
  }

  bool char_class() {
    out_ += '[';
    ++i_;
    if (i_ < p_.size() && p_[i_] == '^') out_ += p_[i_++];
    if (i_ < p_.size() && p_[i_] == ']') out_ += "\\]", ++i_;  // a leading ']' is literal
    while (true) {
      if (i_ >= p_.size()) return fail_bool("unterminated character set");
      const char c = p_[i_];
      if (c == ']') {
        out_ += ']';
        ++i_;
        last_repeatable_ = true;
        return true;
      }
      if (c == '\\') {
        if (!escape(true)) return false;
        continue;
      }
      if (c == '[') {  // literal in Python; PCRE2 would read [: as a POSIX class
        // The regex module reads `[:alpha:]` (a known name) as a POSIX class, with its own
        // definitions (digit is ASCII, alpha is Alphabetic): refused rather than read as text.
        static constexpr std::string_view kPosix[] = {"alnum", "alpha", "ascii", "blank", "cntrl",
                                                      "digit", "graph", "lower", "print", "punct",
                                                      "space", "upper", "word",  "xdigit"};
        if (regex_module_ && i_ + 1 < p_.size() && p_[i_ + 1] == ':') {
          std::size_t j = i_ + 2;
          if (j < p_.size() && p_[j] == '^') ++j;
          const std::size_t end = p_.find(":]", j);
          if (end != std::string_view::npos && std::find(std::begin(kPosix), std::end(kPosix),
                                                         p_.substr(j, end - j)) != std::end(kPosix))
            return fail_bool("POSIX class [" + std::string(p_.substr(i_ + 1, end + 1 - i_)) +
                             "] is not supported at position " + pos());
        }
        out_ += "\\[";
        ++i_;
        continue;
      }
      copy_char();
    }
  }

  bool name(std::size_t& j, char end, std::string& out) {
    out.clear();
    while (j < p_.size() && p_[j] != end) out += p_[j++];
    if (j >= p_.size()) return fail_bool("missing " + std::string(1, end) + ", unterminated name");
    ++j;
    if (out.empty() || out.size() > 32 || is_digit(out[0]))
      return fail_bool("bad group name '" + out + "' (ASCII identifiers of up to 32 characters)");
    for (char c : out)
      if (!(is_alpha(c) || is_digit(c) || c == '_'))
        return fail_bool("bad group name '" + out + "' (ASCII identifiers of up to 32 characters)");
    return true;
  }

  bool open_capture(const std::string& group_name) {
    const int number = ++groups_;
    if (!group_name.empty()) {
      if (!names_.insert(group_name).second)
        return fail_bool("redefinition of group name '" + group_name + "'");
      out_ += "(?<" + group_name + ">";
    } else {
      out_ += '(';
    }
    open_groups_.push_back(number);
    last_repeatable_ = false;
    return true;
  }

  bool group() {
    const std::string where = " at position " + pos();
    if (i_ + 1 >= p_.size() || p_[i_ + 1] != '?') {
      ++i_;
      if (i_ < p_.size() && (p_[i_] == '*' || p_[i_] == '+' || p_[i_] == '{'))
        return fail_bool("nothing to repeat" + where);
      return open_capture("");
    }
    std::size_t j = i_ + 2;
    if (j >= p_.size()) return fail_bool("unexpected end of pattern" + where);
    const char k = p_[j];
    std::string n;
    if (k == 'P') {
      ++j;
      if (j < p_.size() && p_[j] == '<') {
        ++j;
        if (!name(j, '>', n)) return false;
        i_ = j;
        return open_capture(n);
      }
      if (j < p_.size() && p_[j] == '=') {
        ++j;
        if (!name(j, ')', n)) return false;
        if (!names_.count(n)) return fail_bool("unknown or open group name '" + n + "'" + where);
        out_ += "\\k<" + n + ">";
        i_ = j;
        last_repeatable_ = true;
        return true;
      }
      return fail_bool("unknown extension ?P" + where);
    }
    if (k == '<' && j + 1 < p_.size() && p_[j + 1] != '=' && p_[j + 1] != '!') {
      // (?<name>...): the regex module's spelling of (?P<name>...).
      if (!regex_module_)
        return fail_bool("(?<name>...) is not Python re syntax; use (?P<name>...)" + where);
      ++j;
      if (!name(j, '>', n)) return false;
      i_ = j;
      return open_capture(n);
    }
    if (k == ':' || k == '=' || k == '!' || k == '>' ||
        (k == '<' && j + 1 < p_.size() && (p_[j + 1] == '=' || p_[j + 1] == '!'))) {
      const std::size_t len = k == '<' ? 2 : 1;
      out_.append(p_.substr(i_, 2 + len));
      i_ = j + len;
      open_groups_.push_back(0);
      last_repeatable_ = false;
      return true;
    }
    if (k == '#') {
      while (j < p_.size() && p_[j] != ')') ++j;
      if (j >= p_.size()) return fail_bool("missing ), unterminated comment" + where);
      i_ = j + 1;
      return true;  // a comment leaves the previous item repeatable or not
    }
    if (k == '(') {  // (?(id)yes|no)
      ++j;
      std::string ref;
      while (j < p_.size() && p_[j] != ')') ref += p_[j++];
      if (j >= p_.size()) return fail_bool("missing ), unterminated name" + where);
      ++j;
      bool numeric = !ref.empty();
      for (char c : ref) numeric = numeric && is_digit(c);
      if (numeric) {
        if (ref.size() > 3 || !closed_groups_.count(std::stoi(ref)))
          return fail_bool("invalid group reference " + ref + where);
        out_ += "(?(" + ref + ")";
      } else {
        if (!names_.count(ref)) return fail_bool("unknown group name '" + ref + "'" + where);
        out_ += "(?(<" + ref + ">)";
      }
      i_ = j;
      open_groups_.push_back(0);
      last_repeatable_ = false;
      return true;
    }
    // Inline flags: (?flags) at the start, or (?flags-flags:...) scoped.
    std::string on, off;
    bool minus = false;
    while (j < p_.size() && (is_alpha(p_[j]) || p_[j] == '-')) {
      if (p_[j] == '-') {
        if (minus) return fail_bool("bad inline flags" + where);
        minus = true;
      } else {
        (minus ? off : on) += p_[j];
      }
      ++j;
    }
    if (j >= p_.size() || (p_[j] != ')' && p_[j] != ':'))
      return fail_bool("unknown extension (?" + std::string(1, k) + where);
    for (char f : on + off) {
      if (f == 'u') continue;  // Unicode matching is the default for str patterns
      if (f != 'i' && f != 'm' && f != 's')
        return fail_bool(std::string("inline flag '") + f +
                         "' is not supported (only i, m, s and u)" + where);
    }
    std::string kept_on, kept_off;
    for (char f : on)
      if (f != 'u') kept_on += f;
    for (char f : off)
      if (f != 'u') kept_off += f;
    if (p_[j] == ')') {
      if (minus) return fail_bool("missing :" + where);
      if (i_ != 0 && !leading_flags_only())
        return fail_bool("global flags not at the start of the expression" + where);
      if (!kept_on.empty()) out_ += "(?" + kept_on + ")";
      i_ = j + 1;
      return true;
    }
    out_ += "(?" + kept_on + (kept_off.empty() ? "" : "-" + kept_off) + ":";
    i_ = j + 1;
    open_groups_.push_back(0);
    last_repeatable_ = false;
    return true;
  }

  // Whether everything before i_ is global flag groups (Python allows several in a row).
  bool leading_flags_only() const {
    std::size_t j = 0;
    while (j < i_) {
      if (p_.substr(j, 2) != "(?") return false;
      j += 2;
      while (j < i_ && is_alpha(p_[j])) ++j;
      if (j >= i_ || p_[j] != ')') return false;
      ++j;
    }
    return true;
  }

  std::string_view p_;
  std::string path_;
  std::size_t i_ = 0;
  std::string out_;
  Error error_;
  int groups_ = 0;
  std::vector<int> open_groups_;  // capture numbers (0 for non-capturing) of the open groups
  std::set<int> closed_groups_;
  std::set<std::string> names_;
  bool last_repeatable_ = false;
  bool regex_module_ = false;  // the regex module's syntax (else re's)
};

Result<std::shared_ptr<const RegexCode>> compile(const std::string& pcre, const std::string& path) {
  int code = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* re = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pcre.data()), pcre.size(),
                                 PCRE2_UTF | PCRE2_UCP | PCRE2_DOTALL | PCRE2_NEVER_BACKSLASH_C,
                                 &code, &offset, nullptr);
  if (re == nullptr) {
    PCRE2_UCHAR buf[256];
    pcre2_get_error_message(code, buf, sizeof buf);
    return Error{"ValueError",
                 std::string("invalid regex: ") + reinterpret_cast<const char*>(buf) +
                     " (translated pattern offset " + std::to_string(offset) + ")",
                 0, 0, path};
  }
  auto holder = std::make_shared<RegexCode>();
  holder->code = re;
  return std::shared_ptr<const RegexCode>(holder);
}

std::vector<std::string> group_names_of(const pcre2_code* re) {
  std::uint32_t count = 0, entry = 0;
  PCRE2_SPTR table = nullptr;
  pcre2_pattern_info(re, PCRE2_INFO_NAMECOUNT, &count);
  pcre2_pattern_info(re, PCRE2_INFO_NAMEENTRYSIZE, &entry);
  pcre2_pattern_info(re, PCRE2_INFO_NAMETABLE, &table);
  std::vector<std::string> names;
  for (std::uint32_t k = 0; k < count; ++k)
    names.emplace_back(reinterpret_cast<const char*>(table + k * entry + 2));
  return names;
}

}  // namespace

Result<Regex> Regex::python(std::string_view pattern, const std::string& path, const Limits& limits,
                            Syntax syntax) {
  if (pattern.size() > limits.max_pattern_bytes)
    return Error{
        "LimitError",
        "pattern longer than max_pattern_bytes=" + std::to_string(limits.max_pattern_bytes), 0, 0,
        path};
  if (util::utf8::first_invalid(pattern) != pattern.size())
    return Error{"ValueError", "pattern is not valid UTF-8", 0, 0, path};
  auto translated = Translator(pattern, path, syntax).run();
  if (!translated) return translated.error();
  auto code = compile(*translated, path);
  if (!code) return code.error();
  Regex r;
  r.code_ = *code;
  r.names_ = group_names_of((*code)->code);
  r.limits_ = limits;
  return r;
}

Result<Regex> Regex::literals(const std::vector<std::string>& literals, const std::string& path,
                              const Limits& limits) {
  std::string pcre;
  for (const auto& lit : literals) {
    if (!pcre.empty()) pcre += '|';
    for (std::size_t i = 0; i < lit.size();) {
      const unsigned char c = static_cast<unsigned char>(lit[i]);
      if (c >= 0x80) {
        std::size_t next = i;
        util::utf8::decode(lit, next);
        pcre.append(lit, i, next - i);
        i = next;
        continue;
      }
      if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
        pcre += static_cast<char>(c);
      } else if (c <= 0x20 || c == 0x7F) {
        pcre += hex_escape(c);
      } else {
        pcre += '\\';
        pcre += static_cast<char>(c);
      }
      ++i;
    }
  }
  auto code = compile(pcre, path);
  if (!code) return code.error();
  Regex r;
  r.code_ = *code;
  r.limits_ = limits;
  return r;
}

Result<Regex::Match> Regex::search(std::string_view subject, std::size_t pos, bool partial,
                                   bool not_empty_at_start) const {
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(code_->code, nullptr);
  pcre2_match_context* mc = pcre2_match_context_create(nullptr);
  pcre2_set_match_limit(mc, limits_.regex_match_limit);
  const std::uint64_t searched = subject.size() - std::min(pos, subject.size());
  pcre2_set_depth_limit(
      mc, static_cast<std::uint32_t>(std::min<std::uint64_t>(
              UINT32_MAX, std::max<std::uint64_t>(limits_.regex_depth_limit, 2 * searched + 64))));
  pcre2_set_heap_limit(mc, limits_.regex_heap_limit_kib);
  std::uint32_t options = partial ? PCRE2_PARTIAL_HARD : 0;
  if (not_empty_at_start) options |= PCRE2_NOTEMPTY_ATSTART;
  // The subject was checked as UTF-8 when it was fed, and pos is always a character boundary.
  options |= PCRE2_NO_UTF_CHECK;
  const int rc = pcre2_match(code_->code, reinterpret_cast<PCRE2_SPTR>(subject.data()),
                             subject.size(), pos, options, md, mc);
  Match m;
  Result<Match> out = m;
  if (rc == PCRE2_ERROR_NOMATCH) {
    // no match
  } else if (rc == PCRE2_ERROR_PARTIAL || rc >= 0) {
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    m.found = rc == PCRE2_ERROR_PARTIAL ? Found::kPartial : Found::kComplete;
    m.start = ov[0];
    m.end = ov[1];
    if (rc >= 0) {
      for (const auto& n : names_) {
        const int number =
            pcre2_substring_number_from_name(code_->code, reinterpret_cast<PCRE2_SPTR>(n.c_str()));
        if (number < 0) continue;
        const auto idx = static_cast<std::size_t>(number);
        if (ov[2 * idx] == PCRE2_UNSET) {
          m.groupdict[n] = std::nullopt;
        } else {
          std::string v(subject.substr(ov[2 * idx], ov[2 * idx + 1] - ov[2 * idx]));
          m.named.emplace_back(n, v);
          m.groupdict[n] = std::move(v);
        }
      }
    }
    out = std::move(m);
  } else if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
             rc == PCRE2_ERROR_HEAPLIMIT) {
    out = error_of("LimitError",
                   "regex search hit the PCRE2 match/depth/heap limit (regex_match_limit, "
                   "regex_depth_limit, regex_heap_limit_kib)");
  } else {
    PCRE2_UCHAR buf[256];
    pcre2_get_error_message(rc, buf, sizeof buf);
    out = error_of("RuntimeError",
                   std::string("regex search failed: ") + reinterpret_cast<const char*>(buf));
  }
  pcre2_match_context_free(mc);
  pcre2_match_data_free(md);
  return out;
}

}  // namespace chatwire::response
