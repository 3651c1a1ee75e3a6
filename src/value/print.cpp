// Python str() and repr() of values, written straight into the caller's buffer.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "chatwire/value_print.hpp"
#include "value/internal.hpp"

namespace chatwire {

namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_hex(std::string& out, char32_t c, int digits) {
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) out += kHex[(c >> shift) & 0xF];
}

// Python's unicode_repr: choose the quote, escape what is not printable.
void append_string_repr(std::string& out, const Value& v) {
  std::string_view s = v.as_string();
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char quote = (has_single && !has_double) ? '"' : '\'';
  out += quote;
  bool ascii = v.string_is_ascii();
  std::size_t i = 0;
  while (i < s.size()) {
    // Copy the longest run of printable ASCII other than the quote and backslash.
    std::size_t run = i;
    // Eight bytes per step while all are printable ASCII other than quote and backslash.
    constexpr std::uint64_t k01 = 0x0101010101010101ull, k80 = 0x8080808080808080ull;
    while (run + 8 <= s.size()) {
      std::uint64_t w;
      std::memcpy(&w, s.data() + run, 8);
      const std::uint64_t q = w ^ (k01 * static_cast<unsigned char>(quote)), bs = w ^ (k01 * '\\');
      const std::uint64_t bad = ((w - k01 * 0x20) & ~w) | ((w + k01) | w) |  // < 0x20, > 0x7E
                                ((q - k01) & ~q) | ((bs - k01) & ~bs);
      if (bad & k80) break;
      run += 8;
    }
    while (run < s.size()) {
      auto b = static_cast<unsigned char>(s[run]);
      if (b < 0x20 || b >= 0x7F || b == '\\' || b == static_cast<unsigned char>(quote)) break;
      ++run;
    }
    out.append(s.data() + i, run - i);
    i = run;
    if (i >= s.size()) break;
    char32_t c = ascii ? static_cast<unsigned char>(s[i++]) : utf8::decode(s, i);
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      out += "\\x";
      append_hex(out, c, 2);
    } else if (c < 0x7F) {
      out += static_cast<char>(c);
    } else if (!unicode::is_printable(c)) {
      if (c <= 0xFF) {
        out += "\\x";
        append_hex(out, c, 2);
      } else if (c <= 0xFFFF) {
        out += "\\u";
        append_hex(out, c, 4);
      } else {
        out += "\\U";
        append_hex(out, c, 8);
      }
    } else {
      utf8::encode(out, c);
    }
  }
  out += quote;
}

// Nesting depth of the container reprs under way on this thread. A counter rather than a
// parameter so that it also counts through Object::repr (a namespace holding a list holding
// the namespace), which calls back into append_repr.
thread_local std::size_t repr_depth = 0;

// Python's repr recurses once per nesting level and raises RecursionError near its recursion
// limit; a list nested a million deep would otherwise overflow the C++ stack. append_repr has
// no error channel (it is the hot path of every print), so the error is thrown as
// NestingError and the engine returns it from render.
struct ReprDepthGuard {
  ReprDepthGuard() {
    if (repr_depth >= kMaxValueNesting)
      throw NestingError{
          make_error("RecursionError",
                     "maximum recursion depth exceeded while getting the repr of an object")};
    ++repr_depth;
  }
  ~ReprDepthGuard() { --repr_depth; }
  ReprDepthGuard(const ReprDepthGuard&) = delete;
  ReprDepthGuard& operator=(const ReprDepthGuard&) = delete;
};

// The container layouts repr() and pprint's _safe_repr share; `item` writes one element.
using ReprFn = void (*)(std::string&, const Value&);
void append_sequence_repr(std::string& out, const Value& v, ReprFn item) {
  ReprDepthGuard guard;
  const bool is_list = v.is_list();
  out += is_list ? '[' : '(';
  auto items = v.as_list();
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    item(out, items[i]);
  }
  if (!is_list && items.size() == 1) out += ',';
  out += is_list ? ']' : ')';
}
void append_entry_repr(std::string& out, const std::pair<Value, Value>& entry, bool& first,
                       ReprFn item) {
  if (!first) out += ", ";
  first = false;
  item(out, entry.first);
  out += ": ";
  item(out, entry.second);
}

}  // namespace

void append_float_repr(std::string& out, double d) {
  if (std::isnan(d)) {
    out += "nan";
    return;
  }
  if (std::isinf(d)) {
    out += d < 0 ? "-inf" : "inf";
    return;
  }
  if (d == 0.0) {
    out += std::signbit(d) ? "-0.0" : "0.0";
    return;
  }
  // Shortest round-trip digits, then Python's layout rule (float_repr_style 'short'):
  // fixed notation when -4 < decimal exponent <= 16, else scientific.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view sci(buf, res.ptr - buf);
  bool negative = sci[0] == '-';
  if (negative) sci.remove_prefix(1);
  std::size_t e_pos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_pos))
    if (c != '.') digits += c;
  int exponent = 0;
  std::from_chars(sci.data() + e_pos + 1 + (sci[e_pos + 1] == '+'), sci.data() + sci.size(),
                  exponent);
  int decpt = exponent + 1;  // value = 0.DIGITS * 10^decpt
  if (negative) out += '-';
  int ndigits = static_cast<int>(digits.size());
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out += "0.";
      out.append(static_cast<std::size_t>(-decpt), '0');
      out += digits;
    } else if (decpt >= ndigits) {
      out += digits;
      out.append(static_cast<std::size_t>(decpt - ndigits), '0');
      out += ".0";
    } else {
      out.append(digits, 0, static_cast<std::size_t>(decpt));
      out += '.';
      out.append(digits, static_cast<std::size_t>(decpt), std::string::npos);
    }
  } else {
    out += digits[0];
    if (ndigits > 1) {
      out += '.';
      out.append(digits, 1, std::string::npos);
    }
    int e = decpt - 1;
    out += 'e';
    out += e < 0 ? '-' : '+';
    if (e < 0) e = -e;
    if (e < 10) out += '0';
    out += std::to_string(e);
  }
}

void append_repr(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Kind::Undefined:
      out += "Undefined";
      return;
    case Kind::None:
      out += "None";
      return;
    case Kind::Bool:
      out += v.as_bool() ? "True" : "False";
      return;
    case Kind::Int: {
      char buf[24];
      auto res = std::to_chars(buf, buf + sizeof buf, v.as_int());
      out.append(buf, res.ptr);
      return;
    }
    case Kind::Float:
      append_float_repr(out, v.as_float());
      return;
    case Kind::String:
      append_string_repr(out, v);
      return;
    case Kind::List:
    case Kind::Tuple:
      return append_sequence_repr(out, v, append_repr);
    case Kind::Dict: {
      ReprDepthGuard guard;
      out += '{';
      bool first = true;
      for (const auto& entry : v.dict_entries()) append_entry_repr(out, entry, first, append_repr);
      out += '}';
      return;
    }
    case Kind::Object: {
      ReprDepthGuard guard;
      v.as_object()->repr(out);
      return;
    }
  }
}

void append_str(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Kind::Undefined:
      return;
    case Kind::String:
      out += v.as_string();
      return;
    case Kind::Object: {
      ReprDepthGuard guard;
      v.as_object()->str(out);
      return;
    }
    default:
      append_repr(out, v);
  }
}

std::string to_str(const Value& v) {
  std::string s;
  append_str(s, v);
  return s;
}

std::string to_repr(const Value& v) {
  std::string s;
  append_repr(s, v);
  return s;
}

// ---------------------------------------------------------------------------------
// pprint.pformat (Python 3.11 Lib/pprint.py, width=80, indent=1, sort_dicts=True)
// ---------------------------------------------------------------------------------

namespace {

constexpr std::size_t kPprintWidth = 80;

// pprint's dict order: sorted(items, key=_safe_tuple). Keys of one orderable kind compare
// with `<`; where `<` raises, _safe_key orders by the type's name (then by id(), which is
// arbitrary in Python: insertion order here). stable_sort stays in bounds even if that
// fallback is not a strict weak order.
std::vector<const std::pair<Value, Value>*> pprint_sorted_entries(const Value& dict) {
  std::vector<const std::pair<Value, Value>*> entries;
  entries.reserve(dict.dict_size());
  for (const auto& entry : dict.dict_entries()) entries.push_back(&entry);
  std::stable_sort(entries.begin(), entries.end(), [](const auto* a, const auto* b) {
    auto less = compare(CompareOp::Lt, a->first, b->first);
    if (less) return *less;
    return type_name(a->first) < type_name(b->first);
  });
  return entries;
}

// pprint's _safe_repr: repr() with dict keys sorted, all the way down.
void append_safe_repr(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Kind::List:
    case Kind::Tuple:
      return append_sequence_repr(out, v, append_safe_repr);
    case Kind::Dict: {
      ReprDepthGuard guard;
      out += '{';
      bool first = true;
      for (const auto* entry : pprint_sorted_entries(v))
        append_entry_repr(out, *entry, first, append_safe_repr);
      out += '}';
      return;
    }
    default:
      append_repr(out, v);
  }
}

std::string safe_repr(const Value& v) {
  std::string s;
  append_safe_repr(s, v);
  return s;
}

std::size_t width_of(std::string_view s) {
  return utf8::count(s);
}

// str.splitlines(keepends=True) with Python's line boundaries.
std::vector<std::string_view> split_lines_keepends(std::string_view s) {
  std::vector<std::string_view> lines;
  std::size_t start = 0, i = 0;
  while (i < s.size()) {
    std::size_t at = i;
    char32_t c = utf8::decode(s, i);
    if (!unicode::is_linebreak(c)) continue;
    if (c == '\r' && i < s.size() && s[i] == '\n') ++i;
    lines.push_back(s.substr(start, i - start));
    start = i;
    (void)at;
  }
  if (start < s.size()) lines.push_back(s.substr(start));
  return lines;
}

// re.findall(r'\S*\s*', line) without the final empty match: runs of non-space followed
// by their spaces.
std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> parts;
  std::size_t i = 0;
  while (i < line.size()) {
    std::size_t start = i;
    auto run = [&](bool space) {
      while (i < line.size()) {
        std::size_t next = i;
        char32_t c = utf8::decode(line, next);
        if (unicode::is_space(c) != space) break;
        i = next;
      }
    };
    run(false);
    run(true);
    parts.push_back(line.substr(start, i - start));
  }
  return parts;
}

std::string string_repr(std::string_view s) {
  return to_repr(make_string(std::string(s)));
}

struct PrettyPrinter {
  std::string& out;

  void format(const Value& v, std::size_t indent, std::size_t allowance, int level) {
    std::string rep = safe_repr(v);
    std::size_t used = indent + allowance;
    std::size_t max_width = used < kPprintWidth ? kPprintWidth - used : 0;
    if (width_of(rep) > max_width) {
      switch (v.kind()) {
        case Kind::List:
        case Kind::Tuple:
        case Kind::Dict:
        case Kind::String: {
          ReprDepthGuard guard;
          if (v.is_dict())
            pprint_dict(v, indent, allowance, level + 1);
          else if (v.is_string())
            pprint_str(v.as_string(), indent, allowance, level + 1);
          else
            pprint_sequence(v, indent, allowance, level + 1);
          return;
        }
        default:
          break;
      }
    }
    out += rep;
  }

  void pprint_dict(const Value& v, std::size_t indent, std::size_t allowance, int level) {
    out += '{';
    if (v.dict_size()) {
      auto entries = pprint_sorted_entries(v);
      indent += 1;
      for (std::size_t i = 0; i < entries.size(); ++i) {
        bool last = i + 1 == entries.size();
        std::string rep = safe_repr(entries[i]->first);
        out += rep;
        out += ": ";
        format(entries[i]->second, indent + width_of(rep) + 2, last ? allowance + 1 : 1, level);
        if (!last) {
          out += ",\n";
          out.append(indent, ' ');
        }
      }
    }
    out += '}';
  }

  void pprint_sequence(const Value& v, std::size_t indent, std::size_t allowance, int level) {
    auto items = v.as_list();
    std::string_view end = v.is_list() ? "]" : items.size() == 1 ? ",)" : ")";
    out += v.is_list() ? '[' : '(';
    allowance += end.size();
    indent += 1;
    for (std::size_t i = 0; i < items.size(); ++i) {
      bool last = i + 1 == items.size();
      if (i) {
        out += ",\n";
        out.append(indent, ' ');
      }
      format(items[i], indent, last ? allowance : 1, level);
    }
    out += end;
  }

  void pprint_str(std::string_view s, std::size_t indent, std::size_t allowance, int level) {
    if (level == 1) {
      indent += 1;
      allowance += 1;
    }
    std::size_t max_width = indent < kPprintWidth ? kPprintWidth - indent : 0;
    std::size_t max_width1 = max_width;
    std::vector<std::string> chunks;
    auto lines = split_lines_keepends(s);
    std::string rep;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      rep = string_repr(lines[i]);
      bool last_line = i + 1 == lines.size();
      if (last_line) max_width1 = max_width1 > allowance ? max_width1 - allowance : 0;
      if (width_of(rep) <= max_width1) {
        chunks.push_back(rep);
        continue;
      }
      auto parts = split_words(lines[i]);
      std::size_t max_width2 = max_width;
      std::string current;
      for (std::size_t j = 0; j < parts.size(); ++j) {
        std::string candidate = current + std::string(parts[j]);
        if (j + 1 == parts.size() && last_line)
          max_width2 = max_width2 > allowance ? max_width2 - allowance : 0;
        if (width_of(string_repr(candidate)) > max_width2) {
          if (!current.empty()) chunks.push_back(string_repr(current));
          current = std::string(parts[j]);
        } else {
          current = std::move(candidate);
        }
      }
      if (!current.empty()) chunks.push_back(string_repr(current));
    }
    if (chunks.size() == 1) {
      out += rep;  // Python writes the last line's repr here
      return;
    }
    if (level == 1) out += '(';
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      if (i) {
        out += '\n';
        out.append(indent, ' ');
      }
      out += chunks[i];
    }
    if (level == 1) out += ')';
  }
};

}  // namespace

void append_pformat(std::string& out, const Value& v) {
  PrettyPrinter printer{out};
  printer.format(v, 0, 0, 0);
}

}  // namespace chatwire
