// markupsafe.Markup, the str subclass that Jinja2's `|safe`, `|escape` and autoescaping
// produce: its escaping and the operators where Python calls Markup's own methods. A
// Markup is a String value whose payload is marked (Value::markup); everything else reads
// it as a str.
//
// Python's rule for a subclass as the right operand decides most of this: in `s + m`
// with m a Markup, Markup overrides __radd__, so Python calls m.__radd__(s) before
// str.__add__, which escapes s. The result is a Markup again, so every later `+` in a
// chain escapes its other operand as well.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

#include "chatwire/value.hpp"
#include "internal.hpp"

namespace chatwire {

void append_html_escaped(std::string& out, std::string_view s) {
  std::size_t plain = 0;  // start of the run of bytes that need no escaping
  for (std::size_t i = 0; i < s.size(); ++i) {
    std::string_view entity;
    switch (s[i]) {
      case '&':
        entity = "&amp;";
        break;
      case '<':
        entity = "&lt;";
        break;
      case '>':
        entity = "&gt;";
        break;
      case '"':
        entity = "&#34;";
        break;
      case '\'':
        entity = "&#39;";
        break;
      default:
        continue;
    }
    out.append(s.substr(plain, i - plain));
    out += entity;
    plain = i + 1;
  }
  out.append(s.substr(plain));
}

Value html_escape(const Value& str) {
  if (str.is_markup()) return str;
  std::string out;
  append_html_escaped(out, str.as_string());
  return Value::markup(std::move(out));
}

namespace {

Error unsupported_operands(BinaryOp op, const Value& a, const Value& b) {
  return type_error("unsupported operand type(s) for " + std::string(op_symbol(op)) + ": '" +
                    std::string(type_name(a)) + "' and '" + std::string(type_name(b)) + "'");
}

// Markup(escape(a) + escape(b)): __add__ when a is the Markup, __radd__ when b is.
Result<Value> markup_concat(const Value& a, const Value& b, const ValueLimits& limits) {
  std::string out;
  auto add = [&](const Value& v) {
    if (v.is_markup())
      out += v.as_string();
    else
      append_html_escaped(out, v.as_string());
  };
  add(a);
  add(b);
  if (out.size() > limits.max_string_bytes)
    return limit_error("max_string_bytes", limits.max_string_bytes);
  return Value::markup(std::move(out));
}

}  // namespace

Result<Value> markup_binary_op(BinaryOp op, const Value& a, const Value& b,
                               const ValueLimits& limits) {
  switch (op) {
    case BinaryOp::Add:
      if (a.is_string() && b.is_string()) return markup_concat(a, b, limits);
      // Markup.__add__ / __radd__ return NotImplemented for anything but a str; then
      // Undefined's reflected method raises its error, a list or tuple on the left says it
      // can only concatenate its own kind, anything else is unsupported.
      if (a.is_undefined()) return a.undefined_error();
      if (b.is_undefined()) return b.undefined_error();
      if (b.is_markup() && a.is_sequence())
        return type_error("can only concatenate " + std::string(type_name(a)) +
                          " (not \"Markup\") to " + std::string(type_name(a)));
      return unsupported_operands(op, a, b);
    case BinaryOp::Mul: {
      // Markup.__mul__ and __rmul__ call str.__mul__(self, other): `other` must be an int.
      const Value& other = a.is_markup() ? b : a;
      if (!other.is_int() && !other.is_bool()) {
        if (other.is_undefined()) return other.undefined_error();
        std::string message = "'";
        message += type_name(other);
        message += "' object cannot be interpreted as an integer";
        return type_error(std::move(message));
      }
      auto r = str_binary_op(op, a, b, limits);
      if (!r || !r->is_string()) return r;
      return Value::as_markup(*r);
    }
    case BinaryOp::Mod:
      // Markup.__mod__ escapes its arguments; `str % Markup` is str's own (Markup does not
      // override __rmod__).
      if (a.is_markup()) return markup_percent_format(a.as_string(), b, limits);
      return str_binary_op(op, a, b, limits);
    default:
      return str_binary_op(op, a, b, limits);
  }
}

}  // namespace chatwire

// ---------------------------------------------------------------------------------
// Markup.unescape and Markup.striptags (markupsafe 3.0.3; Python 3.11's html.unescape)
// ---------------------------------------------------------------------------------

namespace chatwire {
namespace {

struct HtmlEntity {
  std::string_view name;
  std::string_view text;
};
struct InvalidCharref {
  char32_t code_point;
  std::string_view text;
};
#include "html_entities.inc"

const HtmlEntity* find_entity(std::string_view name) {
  const auto* end = std::end(kHtml5Entities);
  const auto* it =
      std::lower_bound(std::begin(kHtml5Entities), end, name,
                       [](const HtmlEntity& e, std::string_view n) { return e.name < n; });
  return it != end && it->name == name ? it : nullptr;
}

bool is_ascii_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_ascii_hex(char c) {
  return is_ascii_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// html._replace_charref for a numeric reference's digits.
void append_numeric_charref(std::string& out, std::string_view digits, int base) {
  std::uint64_t num = 0;
  bool huge = false;
  for (char c : digits) {
    int d = is_ascii_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10;
    if (num > (0x7fffffffULL)) {
      huge = true;  // beyond every table and beyond 0x10FFFF: only the last rule applies
      continue;
    }
    num = num * static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(d);
  }
  if (!huge) {
    for (const auto& r : kInvalidCharrefs)
      if (r.code_point == num) {
        out += r.text;
        return;
      }
  }
  if (huge || (num >= 0xD800 && num <= 0xDFFF) || num > 0x10FFFF) {
    out += "\xEF\xBF\xBD";  // U+FFFD
    return;
  }
  if (std::binary_search(std::begin(kInvalidCodepoints), std::end(kInvalidCodepoints),
                         static_cast<char32_t>(num)))
    return;
  util::utf8::append(out, static_cast<char32_t>(num));
}

}  // namespace

std::string html_unescape(std::string_view s) {
  if (s.find('&') == std::string_view::npos) return std::string(s);
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t amp = s.find('&', i);
    if (amp == std::string_view::npos) {
      out.append(s.substr(i));
      break;
    }
    out.append(s.substr(i, amp - i));
    std::size_t j = amp + 1;
    // &(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)
    if (j < s.size() && s[j] == '#') {
      std::size_t k = j + 1;
      int base = 10;
      if (k < s.size() && (s[k] == 'x' || s[k] == 'X') && k + 1 < s.size() &&
          is_ascii_hex(s[k + 1])) {
        base = 16;
        ++k;
      }
      std::size_t digits_start = k;
      while (k < s.size() && (base == 16 ? is_ascii_hex(s[k]) : is_ascii_digit(s[k]))) ++k;
      if (k == digits_start) {  // no reference: '&' stays
        out += '&';
        i = j;
        continue;
      }
      append_numeric_charref(out, s.substr(digits_start, k - digits_start), base);
      if (k < s.size() && s[k] == ';') ++k;
      i = k;
      continue;
    }
    std::size_t k = j;
    std::size_t count = 0;
    auto stop = [](char c) {
      return c == '\t' || c == '\n' || c == '\f' || c == ' ' || c == '<' || c == '&' || c == '#' ||
             c == ';';
    };
    while (k < s.size() && count < 32 && !stop(s[k])) {
      utf8::decode(s, k);  // one code point
      ++count;
    }
    if (count == 0) {
      out += '&';
      i = j;
      continue;
    }
    if (k < s.size() && s[k] == ';') ++k;
    std::string_view ref = s.substr(j, k - j);
    if (const HtmlEntity* e = find_entity(ref)) {
      out += e->text;
    } else {
      // The longest name that is a proper prefix (at least 2 characters); the names are
      // ASCII, so only the ASCII start of the reference can match.
      std::size_t ascii = 0;
      while (ascii < ref.size() && static_cast<unsigned char>(ref[ascii]) < 0x80) ++ascii;
      std::size_t longest = std::min(ascii, utf8::code_points(ref) - 1);
      bool found = false;
      for (std::size_t x = longest; x > 1; --x) {
        if (const HtmlEntity* p = find_entity(ref.substr(0, x))) {
          out += p->text;
          out += ref.substr(x);
          found = true;
          break;
        }
      }
      if (!found) {
        out += '&';
        out += ref;
      }
    }
    i = k;
  }
  return out;
}

std::string markup_striptags(std::string_view s, const ValueLimits& limits) {
  // Comments first: the first "<!--" up to the first "-->" at or after it, removed, again
  // and again from the start (a removal can join a new "<!--"); no "-->" ends the pass.
  // Read left to right: `out` never holds a whole "<!--" except at its end.
  std::string no_comments;
  no_comments.reserve(s.size());
  std::size_t r = 0;
  while (r < s.size()) {
    no_comments += s[r++];
    if (no_comments.size() < 4 || no_comments.compare(no_comments.size() - 4, 4, "<!--") != 0)
      continue;
    std::size_t end;  // input position just past the "-->"
    if (r < s.size() && s[r] == '>') {
      end = r + 1;  // "<!-->"
    } else if (r + 1 < s.size() && s[r] == '-' && s[r + 1] == '>') {
      end = r + 2;  // "<!--->"
    } else {
      std::size_t close = s.find("-->", r);
      if (close == std::string_view::npos) {
        no_comments.append(s.substr(r));
        break;
      }
      end = close + 3;
    }
    no_comments.resize(no_comments.size() - 4);
    r = end;
  }
  // Then tags: each '<' up to the next '>'; a '<' without one ends the pass.
  std::string no_tags;
  no_tags.reserve(no_comments.size());
  std::string_view v = no_comments;
  std::size_t i = 0;
  while (i < v.size()) {
    std::size_t open = v.find('<', i);
    if (open == std::string_view::npos) {
      no_tags.append(v.substr(i));
      break;
    }
    std::size_t close = v.find('>', open);
    if (close == std::string_view::npos) {
      no_tags.append(v.substr(i));
      break;
    }
    no_tags.append(v.substr(i, open - i));
    i = close + 1;
  }
  // " ".join(value.split()), then unescape.
  Value words = *call_method(Value(std::move(no_tags)), "split", CallArgs{}, limits);
  std::string joined;
  for (const auto& w : words.as_list()) {
    if (!joined.empty()) joined += ' ';
    joined += w.as_string();
  }
  return html_unescape(joined);
}

}  // namespace chatwire
