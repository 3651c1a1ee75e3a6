// Every built-in filter of Jinja2 3.1.6 (jinja2/filters.py) with transformers'
// tojson. ONE table at the bottom: name -> function.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <regex>
#include <string>

#include "chatwire/value_print.hpp"
#include "jinja/args.hpp"
#include "jinja/objects.hpp"
#include "jinja/registry.hpp"
#include "jinja/unicode.hpp"

namespace chatwire::jinja {

namespace {

// Built when the library loads, outside any render: a value built during a render must
// not outlive it (see detail::RenderScope in value.hpp).
const Value kEmptyString("");

const Value kNone = Value::none();
const Value kFalse = Value(false);

// str(x) as Jinja2's soft_str: Undefined -> "".
std::string soft_str(const Value& v) {
  if (v.is_string()) return std::string(v.as_string());
  std::string s;
  append_str(s, v);
  return s;
}
Value str_value(const Value& v) {
  return v.is_string() ? v : Value(soft_str(v));
}

std::int64_t int_arg(const Value& v, const char* what) {
  if (v.is_int() || v.is_bool()) return v.as_integer();
  if (v.is_float()) return static_cast<std::int64_t>(v.as_float());
  raise("TypeError", std::string(what) + ": '" + std::string(type_name(v)) +
                         "' object cannot be interpreted as an integer");
}

std::span<const Value> items_of(const Value& v, Value& holder) {
  holder = check(iterate(v));
  return holder.as_list();
}

Value method(const Value& self, std::string_view name, std::vector<Value> positional,
             RenderState& state) {
  CallArgs args{positional, {}};
  return check(call_method(self, name, args, state.limits));
}

// environment.getitem-based attribute path "a.b.0" (make_attrgetter).
Value attr_path(const Value& item, const Value& attribute) {
  if (!attribute.is_string()) return get_subscript(item, attribute);
  std::string_view path = attribute.as_string();
  auto digits = [](std::string_view part) {
    return !part.empty() &&
           std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  // One name (selectattr("role", ...)): the attribute string is the key itself, with its
  // cached hash, instead of a fresh string per item.
  if (path.find('.') == std::string_view::npos && !digits(path))
    return get_subscript(item, attribute);
  Value cur = item;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = path.find('.', start);
    std::string_view part = path.substr(start, dot == std::string_view::npos ? dot : dot - start);
    cur = digits(part) ? get_subscript(cur, Value(std::atoll(std::string(part).c_str())))
                       : get_subscript(cur, Value(part));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return cur;
}

Value lower_if_string(const Value& v, RenderState& state, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return check(str_lower(v, state.limits));
  return v;
}

bool less(const Value& a, const Value& b) {
  return check(compare(CompareOp::Lt, a, b));
}

// ------------------------------------------------------------------ filters

Result<Value> f_abs(RenderState&, const Value& v, const CallArgs&) {
  if (v.is_bool() || v.is_int()) {
    std::int64_t i = v.as_integer();
    if (i == INT64_MIN) raise("OverflowError", "integer overflow in abs()");
    return Value(static_cast<long long>(i < 0 ? -i : i));
  }
  if (v.is_float()) return Value(std::fabs(v.as_float()));
  raise("TypeError", "bad operand type for abs(): '" + std::string(type_name(v)) + "'");
}

Result<Value> f_attr(RenderState&, const Value& v, const CallArgs& args) {
  auto b = bind_args<1>("do_attr", args, {"name"});
  if (!b.has(0)) raise("TypeError", "do_attr() missing 1 required positional argument: 'name'");
  const Value& name_value = *b.slot[0];
  std::string name = soft_str(name_value);
  // getattr only (no item fallback), with the sandbox's checks.
  if (v.is_undefined()) raise(v.undefined_error());
  if (v.is_object()) {
    if (!name.empty() && name[0] == '_') return Value::unsafe_attribute(name, v);
    return check(v.as_object()->get_attr(name));
  }
  if (has_method(v, name)) return bound_method(v, name);
  if (is_unsafe_mutator(v.kind(), name) || (name.size() > 1 && name[0] == '_' && name[1] == '_'))
    return Value::unsafe_attribute(name, v);
  return Value::undefined_attribute(name, v);
}

Result<Value> f_batch(RenderState& state, const Value& v, const CallArgs& args) {
  auto b = bind_args<2>("do_batch", args, {"linecount", "fill_with"});
  if (!b.has(0))
    raise("TypeError", "do_batch() missing 1 required positional argument: 'linecount'");
  std::int64_t n = int_arg(*b.slot[0], "batch");
  Value holder;
  auto items = items_of(v, holder);
  std::vector<Value> out, cur;
  for (const auto& item : items) {
    state.step();
    if (static_cast<std::int64_t>(cur.size()) == n) {
      out.push_back(Value::list(std::move(cur)));
      cur.clear();
    }
    cur.push_back(item);
  }
  if (!cur.empty()) {
    if (b.has(1) && !b.slot[1]->is_none() && n > 0) {
      if (n > static_cast<std::int64_t>(state.lim.max_container_items))
        raise(limit_error("max_container_items", state.lim.max_container_items));
      while (static_cast<std::int64_t>(cur.size()) < n) cur.push_back(*b.slot[1]);
    }
    out.push_back(Value::list(std::move(cur)));
  }
  return make_generator(Value::list(std::move(out)), "do_batch");
}

Result<Value> f_capitalize(RenderState& state, const Value& v, const CallArgs&) {
  return str_capitalize(str_value(v), state.limits);
}

Result<Value> f_center(RenderState& state, const Value& v, const CallArgs& args) {
  auto b = bind_args<1>("do_center", args, {"width"});
  return method(str_value(v), "center", {b.get(0, Value(80))}, state);
}

Result<Value> f_default(RenderState&, const Value& v, const CallArgs& args) {
  auto b = bind_args<2>("do_default", args, {"default_value", "boolean"});
  bool boolean = b.has(1) && truthy(*b.slot[1]);
  if (v.is_undefined() || (boolean && !truthy(v))) return b.get(0, kEmptyString);
  return v;
}

// Positions 0..n-1 in the order of Python's sorted() over the keys key_at(i), lowered
// when !case_sensitive (Jinja2's ignore_case). Keys that are all integers or all strings
// compare directly: those comparisons cannot raise, so every stable sort gives Python's
// order, and small inputs (a dict literal of a few entries, sorted at every render) take
// an insertion sort with no buffer and no lowered copies. Other keys go through
// compare() on lowered copies with std::stable_sort, keeping its errors.
template <typename KeyAt, typename Less>
void sorted_positions(RenderState& state, std::span<std::uint32_t> order, KeyAt key_at,
                      bool case_sensitive, bool reverse, Less generic_less) {
  const std::size_t n = order.size();
  for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(i);
  if (n < 2) return;
  bool all_int = true, all_str = true;
  for (std::size_t i = 0; i < n && (all_int || all_str); ++i) {
    const Value& k = key_at(i);
    all_int = all_int && (k.is_int() || k.is_bool());
    all_str = all_str && k.is_string() && (case_sensitive || k.string_is_ascii());
  }
  auto run = [&](auto key_less) {
    auto before = [&](std::uint32_t a, std::uint32_t c) {
      return reverse ? key_less(key_at(c), key_at(a)) : key_less(key_at(a), key_at(c));
    };
    if (n > 16) {
      std::stable_sort(order.begin(), order.end(), before);
      return;
    }
    for (std::size_t i = 1; i < n; ++i) {
      std::uint32_t x = order[i];
      std::size_t j = i;
      for (; j > 0 && before(x, order[j - 1]); --j) order[j] = order[j - 1];
      order[j] = x;
    }
  };
  if (all_int) {
    run([](const Value& a, const Value& c) { return a.as_integer() < c.as_integer(); });
  } else if (all_str && case_sensitive) {
    run([](const Value& a, const Value& c) { return a.as_string() < c.as_string(); });
  } else if (all_str) {
    // ASCII only: str.lower() is the ASCII mapping, and code points order as bytes.
    run([](const Value& a, const Value& c) {
      auto lower = [](char ch) {
        return static_cast<unsigned char>(ch >= 'A' && ch <= 'Z' ? ch + ('a' - 'A') : ch);
      };
      std::string_view x = a.as_string(), y = c.as_string();
      std::size_t m = std::min(x.size(), y.size());
      for (std::size_t i = 0; i < m; ++i) {
        unsigned char p = lower(x[i]), q = lower(y[i]);
        if (p != q) return p < q;
      }
      return x.size() < y.size();
    });
  } else {
    std::vector<Value> keys;
    keys.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
      keys.push_back(lower_if_string(key_at(i), state, case_sensitive));
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t c) {
      return reverse ? generic_less(keys[c], keys[a]) : generic_less(keys[a], keys[c]);
    });
  }
}

Result<Value> f_dictsort(RenderState& state, const Value& v, const CallArgs& args) {
  auto b = bind_args<3>("do_dictsort", args, {"case_sensitive", "by", "reverse"});
  bool case_sensitive = b.has(0) && truthy(*b.slot[0]);
  bool reverse = b.has(2) && truthy(*b.slot[2]);
  int pos = 0;
  if (b.has(1)) {
    std::string by = soft_str(*b.slot[1]);
    pos = by == "key" ? 0 : by == "value" ? 1 : -1;
  }
  if (pos < 0) raise("FilterArgumentError", "You can only sort by either \"key\" or \"value\"");
  if (!v.is_dict()) {
    if (v.is_undefined()) raise(v.undefined_error());
    raise("AttributeError", "'" + std::string(type_name(v)) + "' object has no attribute 'items'");
  }
  // `v` outlives the call: its entries are read in place.
  auto entries = v.dict_entries();
  const std::size_t n = entries.size();
  SortPositions positions(n);
  std::span<std::uint32_t> order = positions.span();
  auto key_at = [&](std::size_t i) -> const Value& {
    return pos == 0 ? entries[i].first : entries[i].second;
  };
  sorted_positions(state, order, key_at, case_sensitive, reverse, less);
  std::vector<Value> out;
  out.reserve(n);
  for (auto i : order) out.push_back(Value::tuple({entries[i].first, entries[i].second}));
  return Value::list(std::move(out));
}

}  // namespace

void dictsort_positions(RenderState& state, const Value& d, std::span<std::uint32_t> order) {
  auto entries = d.dict_entries();
  sorted_positions(
      state, order, [&](std::size_t i) -> const Value& { return entries[i].first; }, false, false,
      less);
}

namespace {

// markupsafe.escape: a Markup stays as it is.
Result<Value> f_escape(RenderState&, const Value& v, const CallArgs&) {
  if (v.is_markup()) return v;
  std::string out;
  append_html_escaped(out, soft_str(v));
  return Value::markup(std::move(out));
}

// escape(str(value)): a Markup is escaped again.
Result<Value> f_forceescape(RenderState&, const Value& v, const CallArgs&) {
  std::string out;
  append_html_escaped(out, soft_str(v));
  return Value::markup(std::move(out));
}

Result<Value> f_filesizeformat(RenderState&, const Value& v, const CallArgs& args) {
  auto b = bind_args<1>("do_filesizeformat", args, {"binary"});
  bool binary = b.has(0) && truthy(*b.slot[0]);
  double bytes = v.is_number() ? v.to_double() : std::strtod(soft_str(v).c_str(), nullptr);
  double base = binary ? 1024 : 1000;
  static const char* kDecimal[] = {"kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"};
  static const char* kBinary[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
  char buf[64];
  if (bytes == 1) return Value("1 Byte");
  if (bytes < base) {
    std::snprintf(buf, sizeof buf, "%lld Bytes", static_cast<long long>(bytes));
    return Value(buf);
  }
  double unit = base;
  for (int i = 0; i < 8; ++i) {
    unit = std::pow(base, i + 2);
    if (bytes < unit || i == 7) {
      std::snprintf(buf, sizeof buf, "%.1f %s", base * bytes / unit,
                    binary ? kBinary[i] : kDecimal[i]);
      return Value(buf);
    }
  }
  return Value(buf);
}

Result<Value> f_first(RenderState&, const Value& v, const CallArgs&) {
  Value holder;
  auto items = items_of(v, holder);
  if (items.empty()) return Value::undefined(Value(), {}, "No first item, sequence was empty.");
  return items.front();
}

Result<Value> f_last(RenderState&, const Value& v, const CallArgs&) {
  Value holder;
  auto items = items_of(v, holder);
  if (items.empty()) return Value::undefined(Value(), {}, "No last item, sequence was empty.");
  return items.back();
}

// Python float(str): surrounding whitespace, '_' between digits, inf/nan words.
bool parse_python_float(std::string_view text, double& out) {
  std::string s;
  std::size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  text = text.substr(b, e - b);
  if (text.empty()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '_') {
      if (i == 0 || i + 1 >= text.size() ||
          !std::isdigit(static_cast<unsigned char>(text[i - 1])) ||
          !std::isdigit(static_cast<unsigned char>(text[i + 1])))
        return false;
      continue;
    }
    s += c;
  }
  std::string lower;
  for (char c : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string_view body = lower;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) body = body.substr(1);
  if (body == "inf" || body == "infinity" || body == "nan") {
    out = std::strtod(lower.c_str(), nullptr);
    return true;
  }
  for (char c : body)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == '+' ||
          c == '-'))
      return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

Result<Value> f_float(RenderState&, const Value& v, const CallArgs& args) {
  auto b = bind_args<1>("do_float", args, {"default"});
  if (v.is_float()) return v;
  if (v.is_int() || v.is_bool()) return Value(static_cast<double>(v.as_integer()));
  if (v.is_string()) {
    double d;
    if (parse_python_float(v.as_string(), d)) return Value(d);
  }
  return b.has(0) ? *b.slot[0] : Value(0.0);
}

Result<Value> f_format(RenderState& state, const Value& v, const CallArgs& args) {
  if (!args.positional.empty() && !args.keyword.empty())
    raise("FilterArgumentError", "can't handle positional and keyword arguments at the same time");
  Value fmt = str_value(v);
  if (!args.keyword.empty()) {
    std::vector<std::pair<Value, Value>> entries;
    for (const auto& kw : args.keyword) entries.emplace_back(Value(kw.name), kw.value);
    return binary_op(BinaryOp::Mod, fmt, Value::dict_unchecked(std::move(entries)), state.limits);
  }
  // soft_str(value) % args: Markup.__mod__ (escaping the arguments) for a Markup.
  return binary_op(BinaryOp::Mod, fmt,
                   Value::tuple(std::vector<Value>(args.positional.begin(), args.positional.end())),
                   state.limits);
}

Result<Value> f_groupby(RenderState& state, const Value& v, const CallArgs& args) {
  auto b = bind_args<3>("do_groupby", args, {"attribute", "default", "case_sensitive"});
  if (!b.has(0))
    raise("TypeError", "do_groupby() missing 1 required positional argument: 'attribute'");
  bool case_sensitive = b.has(2) && truthy(*b.slot[2]);
  Value holder;
  auto items = items_of(v, holder);
  std::vector<std::pair<Value, Value>> keyed;
  for (const auto& item : items) {
    Value key = attr_path(item, *b.slot[0]);
    if (key.is_undefined() && b.has(1)) key = *b.slot[1];
    keyed.emplace_back(lower_if_string(key, state, case_sensitive), item);
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& c) { return less(a.first, c.first); });
  std::vector<Value> groups;
  for (std::size_t i = 0; i < keyed.size();) {
    std::size_t j = i;
    std::vector<Value> members;
    while (j < keyed.size() && equals(keyed[j].first, keyed[i].first))
      members.push_back(keyed[j++].second);
    Value grouper = keyed[i].first;
    if (!case_sensitive) grouper = attr_path(members.front(), *b.slot[0]);
    groups.push_back(Value::make_object<GroupTuple>(grouper, Value::list(std::move(members))));
    i = j;
  }
  return Value::list(std::move(groups));
}

// do_indent step by step with Python's operators, for a Markup text or indention: a Markup
// text makes the indention and newline Markup (without escaping them); a Markup indention
// on a plain text escapes the lines it is added to (and, with `first`, the whole result).
Value indent_with_markup(RenderState& state, const Value& text, Value indention, bool first,
                         bool blank) {
  auto add = [&](const Value& a, const Value& b) {
    return check(binary_op(BinaryOp::Add, a, b, state.limits));
  };
  Value newline("\n");
  if (text.is_markup()) {
    indention = Value::as_markup(indention);
    newline = Value::as_markup(newline);
  }
  Value lines = method(add(text, newline), "splitlines", {}, state);
  Value rv;
  if (blank) {
    rv = method(add(newline, indention), "join", {lines}, state);
  } else {
    auto items = lines.as_list();
    rv = items.empty() ? Value("") : items[0];
    if (items.size() > 1) {
      std::vector<Value> rest;
      for (std::size_t i = 1; i < items.size(); ++i)
        rest.push_back(items[i].as_string().empty() ? items[i] : add(indention, items[i]));
      rv = add(rv, add(newline, method(newline, "join", {Value::list(std::move(rest))}, state)));
    }
  }
  if (first) rv = add(indention, rv);
  return rv;
}

Result<Value> f_indent(RenderState& state, const Value& v, const CallArgs& args) {
  auto b = bind_args<3>("do_indent", args, {"width", "first", "blank"});
  std::string indention;
  if (b.has(0) && b.slot[0]->is_string()) {
    indention = std::string(b.slot[0]->as_string());
  } else {
    std::int64_t width = b.has(0) ? int_arg(*b.slot[0], "indent") : 4;
    if (width > static_cast<std::int64_t>(state.lim.max_string_bytes))
      raise(limit_error("max_string_bytes", state.lim.max_string_bytes));
    indention = std::string(static_cast<std::size_t>(std::max<std::int64_t>(0, width)), ' ');
  }
  bool first = b.has(1) && truthy(*b.slot[1]);
  bool blank = b.has(2) && truthy(*b.slot[2]);
  if (v.is_markup() || (b.has(0) && b.slot[0]->is_markup()))
    return indent_with_markup(state, str_value(v),
                              b.has(0) && b.slot[0]->is_string() ? *b.slot[0] : Value(indention),
                              first, blank);
  std::string s = soft_str(v) + "\n";
  Value lines_value = method(Value(std::move(s)), "splitlines", {}, state);
  auto lines = lines_value.as_list();
  std::string rv;
  if (blank) {
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (i) rv += "\n" + indention;
      rv += lines[i].as_string();
    }
  } else {
    if (!lines.empty()) rv = std::string(lines[0].as_string());
    for (std::size_t i = 1; i < lines.size(); ++i) {
      rv += "\n";
      if (!lines[i].as_string().empty()) rv += indention;
      rv += lines[i].as_string();
    }
  }
  if (first) rv = indention + rv;
  if (rv.size() > state.lim.max_string_bytes)
    raise(limit_error("max_string_bytes", state.lim.max_string_bytes));
  return Value(std::move(rv));
}

// Python int(str, base) for base 10 strings (whitespace, sign, '_' separators).
bool parse_python_int(std::string_view text, int base, std::int64_t& out) {
  std::size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  text = text.substr(b, e - b);
  bool neg = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    neg = text[0] == '-';
    text = text.substr(1);
  }
  if (base == 16 && text.size() > 2 && text[0] == '0' && (text[1] | 0x20) == 'x')
    text = text.substr(2);
  if (base == 8 && text.size() > 2 && text[0] == '0' && (text[1] | 0x20) == 'o')
    text = text.substr(2);
  if (base == 2 && text.size() > 2 && text[0] == '0' && (text[1] | 0x20) == 'b')
    text = text.substr(2);
  if (text.empty()) return false;
  unsigned __int128 value = 0;
  bool prev_digit = false;
  for (char c : text) {
    if (c == '_') {
      if (!prev_digit) return false;
      prev_digit = false;
      continue;
    }
    int d = c >= '0' && c <= '9'                     ? c - '0'
            : (c | 0x20) >= 'a' && (c | 0x20) <= 'z' ? (c | 0x20) - 'a' + 10
                                                     : 99;
    if (d >= base) return false;
    value = value * static_cast<unsigned>(base) + static_cast<unsigned>(d);
    if (value > static_cast<unsigned __int128>(INT64_MAX) + 1) return false;
    prev_digit = true;
  }
  if (!prev_digit) return false;
  if (!neg && value > static_cast<unsigned __int128>(INT64_MAX)) return false;
  out = neg ? static_cast<std::int64_t>(-static_cast<__int128>(value))
            : static_cast<std::int64_t>(value);
  return true;
}

Result<Value> f_int(RenderState&, const Value& v, const CallArgs& args) {
  auto b = bind_args<2>("do_int", args, {"default", "base"});
  Value fallback = b.has(0) ? *b.slot[0] : Value(0);
  int base = b.has(1) ? static_cast<int>(int_arg(*b.slot[1], "int")) : 10;
  if (v.is_int()) return v;
  if (v.is_bool()) return Value(static_cast<long long>(v.as_integer()));
  auto from_double = [&](double d) -> Value {
    if (std::isnan(d)) return fallback;
    if (std::isinf(d)) raise("OverflowError", "cannot convert float infinity to integer");
    if (d >= 9.2233720368547758e18 || d < -9.2233720368547758e18)
      raise("OverflowError", "integer too large for 64 bits");
    return Value(static_cast<long long>(d));
  };
  if (v.is_float()) return from_double(v.as_float());
  if (v.is_string()) {
    std::int64_t i;
    if (parse_python_int(v.as_string(), base, i)) return Value(static_cast<long long>(i));
    double d;
    if (parse_python_float(v.as_string(), d)) {
      if (std::isinf(d)) return fallback;  // OverflowError is caught on this path
      return from_double(d);
    }
  }
  return fallback;
}

Result<Value> f_items(RenderState&, const Value& v, const CallArgs&) {
  if (v.is_undefined()) return make_generator(Value::empty_list(), "do_items");
  if (!v.is_dict())
    return GeneratorObject::failing(
        Error{"TypeError", "Can only get item pairs from a mapping.", 0, 0, {}}, "do_items");
  std::vector<Value> out;
  out.reserve(v.dict_size());
  for (const auto& [k, val] : v.dict_entries()) out.push_back(Value::tuple({k, val}));
  return make_generator(Value::list(std::move(out)), "do_items");
}

// do_join while autoescaping: with a Markup among the items (or as the separator) the
// separator becomes a Markup and Markup.join escapes the plain items; otherwise str.join.
Value markup_join_items(RenderState& state, const Value& separator, std::span<const Value> raw,
                        const Value* attribute) {
  std::vector<Value> items;
  items.reserve(raw.size());
  bool any_markup = separator.is_markup();
  for (const auto& r : raw) {
    Value item = attribute && !attribute->is_none() ? attr_path(r, *attribute) : r;
    any_markup = any_markup || item.is_markup();
    items.push_back(std::move(item));
  }
  std::string out;
  auto add = [&](const Value& piece, bool escape) {
    std::string text = soft_str(piece);
    if (escape && !piece.is_markup())
      append_html_escaped(out, text);
    else
      out += text;
    if (out.size() > state.lim.max_string_bytes)
      raise(limit_error("max_string_bytes", state.lim.max_string_bytes));
  };
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) add(separator, any_markup);
    add(items[i], any_markup);
  }
  return any_markup ? Value::markup(std::move(out)) : Value(std::move(out));
}

Result<Value> f_join(RenderState& state, const Value& v, const CallArgs& args) {
  auto b = bind_args<2>("do_join", args, {"d", "attribute"});
  std::string sep = b.has(0) ? soft_str(*b.slot[0]) : "";
  Value holder;
  auto items = items_of(v, holder);
  if (state.autoescape)
    return markup_join_items(state, b.has(0) ? *b.slot[0] : kEmptyString, items,
                             b.has(1) ? b.slot[1] : nullptr);
  std::string out;
  bool first = true;
  for (const auto& raw : items) {
    Value item = b.has(1) && !b.slot[1]->is_none() ? attr_path(raw, *b.slot[1]) : raw;
    if (!first) check(append_checked(out, sep, state.limits));
    first = false;
    if (item.is_string()) {
      check(append_checked(out, item.as_string(), state.limits));
    } else {
      check(append_checked(out, soft_str(item), state.limits));
    }
  }
  return Value(std::move(out));
}

Result<Value> f_length(RenderState&, const Value& v, const CallArgs& args) {
  // Jinja2's `length` is Python's len(): extra arguments are len()'s own TypeErrors.
  if (!args.keyword.empty())
    return Error{"TypeError", "len() takes no keyword arguments", 0, 0, {}};
  if (!args.positional.empty())
    return Error{"TypeError",
                 "len() takes exactly one argument (" + std::to_string(args.positional.size() + 1) +
                     " given)",
                 0,
                 0,
                 {}};
  // `messages|length` runs at every step of some loops: containers answer directly.
  if (v.is_sequence()) return Value(static_cast<long long>(v.as_list().size()));
  if (v.is_dict()) return Value(static_cast<long long>(v.dict_size()));
  if (v.is_string()) return Value(static_cast<long long>(v.string_length()));
  return Value(static_cast<long long>(check(length(v))));
}

Result<Value> f_list(RenderState&, const Value& v, const CallArgs&) {
  Value holder = check(iterate(v));
  if (holder.is_list()) return holder;
  return Value::list(std::vector<Value>(holder.as_list().begin(), holder.as_list().end()));
}

Result<Value> f_lower(RenderState& state, const Value& v, const CallArgs&) {
  return str_lower(str_value(v), state.limits);
}
Result<Value> f_upper(RenderState& state, const Value& v, const CallArgs&) {
  return str_upper(str_value(v), state.limits);
}
// Jinja2's do_title: split on runs of [-\s({[<], upper-case the first character of
// each piece and lower-case the rest.
Result<Value> f_title(RenderState& state, const Value& v, const CallArgs&) {
  Value s = str_value(v);
  std::string_view text = s.as_string();
  std::string out;
  bool at_start = true;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t start = pos;
    char32_t c = utf8::decode(text, pos);
    Value piece(text.substr(start, pos - start));
    bool separator = c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || utf8::is_space(c);
    if (separator) {
      out += piece.as_string();
      at_start = true;
      continue;
    }
    Value mapped =
        check(at_start ? str_upper(piece, state.limits) : str_lower(piece, state.limits));
    out += mapped.as_string();
    at_start = false;
  }
  return Value(std::move(out));
}

Value map_items(RenderState& state, const Value& v, const CallArgs& args);

Result<Value> apply_filter_by_name(RenderState& state, const Value& name, const Value& operand,
                                   const CallArgs& args) {
  const FilterEntry* f = find_filter(name.is_string() ? name.as_string() : std::string_view());
  if (!f) raise("TemplateRuntimeError", "No filter named '" + soft_str(name) + "'.");
  state.step();
  return run_filter(*f, state, operand, args);
}

Result<Value> f_map(RenderState& state, const Value& v, const CallArgs& args) {
  Value r = map_items(state, v, args);
  return make_generator(std::move(r), "sync_do_map");
}

Value map_items(RenderState& state, const Value& v, const CallArgs& args) {
  Value holder;
  if (!truthy(v)) return Value::empty_list();  // `if value:` in do_map
  auto items = items_of(v, holder);
  std::vector<Value> out;
  out.reserve(items.size());
  const Value* attribute = nullptr;
  const Value* fallback = nullptr;
  for (const auto& kw : args.keyword) {
    if (kw.name == "attribute") attribute = &kw.value;
    if (kw.name == "default") fallback = &kw.value;
  }
  if (attribute || args.positional.empty()) {
    if (!attribute) raise("FilterArgumentError", "map requires a filter argument");
    for (const auto& item : items) {
      Value r = attr_path(item, *attribute);
      if (fallback && r.is_undefined()) r = *fallback;
      out.push_back(std::move(r));
    }
    return Value::list(std::move(out));
  }
  CallArgs rest{args.positional.subspan(1), args.keyword};
  for (const auto& item : items)
    out.push_back(check(apply_filter_by_name(state, args.positional[0], item, rest)));
  return Value::list(std::move(out));
}

Result<Value> min_max(RenderState& state, const Value& v, const CallArgs& args, bool want_max,
                      const char* fn) {
  auto b = bind_args<2>(fn, args, {"case_sensitive", "attribute"});
  bool case_sensitive = b.has(0) && truthy(*b.slot[0]);
  Value holder;
  auto items = items_of(v, holder);
  if (items.empty())
    return Value::undefined(Value(), {}, std::string("No aggregated item, sequence was empty."));
  std::size_t best = 0;
  Value best_key;
  for (std::size_t i = 0; i < items.size(); ++i) {
    Value key = b.has(1) && !b.slot[1]->is_none() ? attr_path(items[i], *b.slot[1]) : items[i];
    key = lower_if_string(key, state, case_sensitive);
    if (i == 0 || (want_max ? less(best_key, key) : less(key, best_key))) {
      best = i;
      best_key = key;
    }
  }
  return items[best];
}
Result<Value> f_max(RenderState& s, const Value& v, const CallArgs& a) {
  return min_max(s, v, a, true, "do_max");
}
Result<Value> f_min(RenderState& s, const Value& v, const CallArgs& a) {
  return min_max(s, v, a, false, "do_min");
}

Result<Value> f_pprint(RenderState&, const Value& v, const CallArgs&) {
  std::string out;  // pprint.pformat: wraps at 80 columns like Python's
  append_pformat(out, v);
  return Value(std::move(out));
}

Result<Value> f_random(RenderState&, const Value& v, const CallArgs&) {
  Value holder;
  auto items = items_of(v, holder);
  if (items.empty()) raise("IndexError", "Cannot choose from an empty sequence");
  return items[static_cast<std::size_t>(std::rand()) % items.size()];
}

const TestEntry* resolve_test(const Value& name) {
  const TestEntry* t = find_test(name.is_string() ? name.as_string() : std::string_view());
  if (!t) raise("TemplateRuntimeError", "No test named '" + soft_str(name) + "'.");
  return t;
}

Result<Value> select_reject(RenderState& state, const Value& v, const CallArgs& args, bool select,
                            bool lookup_attr) {
  if (!truthy(v)) return make_generator(Value::empty_list(), "select_or_reject");
  std::size_t off = lookup_attr ? 1 : 0;
  if (lookup_attr && args.positional.empty())
    raise("FilterArgumentError", "Missing parameter for attribute name");
  Value holder;
  auto items = items_of(v, holder);
  std::vector<Value> out;
  bool has_test = args.positional.size() > off;
  CallArgs rest{has_test ? args.positional.subspan(off + 1) : std::span<const Value>(),
                args.keyword};
  // Jinja2 looks the test up when it is first applied (an empty input never does): resolved
  // at the first item, then reused.
  const TestEntry* test = nullptr;
  // selectattr("role", ...) over messages: a one-name attribute is read straight from
  // dict items (no copy, no path parsing per item); anything else, and a missing key
  // (which falls back to getattr), takes attr_path.
  const Value* key = lookup_attr ? &args.positional[0] : nullptr;
  const bool plain_key = key && key->is_string() && !key->as_string().empty() &&
                         key->as_string().find('.') == std::string_view::npos &&
                         !std::all_of(key->as_string().begin(), key->as_string().end(),
                                      [](char c) { return c >= '0' && c <= '9'; });
  const std::uint64_t key_hash = plain_key ? key->string_hash() : 0;
  out.reserve(items.size());
  for (const auto& item : items) {
    Value attr;
    const Value* found =
        plain_key && item.is_dict() ? item.dict_find(key->as_string(), key_hash) : nullptr;
    const Value& subject = found         ? *found
                           : lookup_attr ? (attr = attr_path(item, args.positional[0]))
                                         : item;
    bool r;
    if (has_test) {
      if (!test) test = resolve_test(args.positional[off]);
      state.step();
      r = check(test->fn(state, subject, rest));
    } else {
      r = truthy(subject);
    }
    if (r == select) out.push_back(item);
  }
  return make_generator(Value::list(std::move(out)), "select_or_reject");
}
Result<Value> f_select(RenderState& s, const Value& v, const CallArgs& a) {
  return select_reject(s, v, a, true, false);
}
Result<Value> f_reject(RenderState& s, const Value& v, const CallArgs& a) {
  return select_reject(s, v, a, false, false);
}
Result<Value> f_selectattr(RenderState& s, const Value& v, const CallArgs& a) {
  return select_reject(s, v, a, true, true);
}
Result<Value> f_rejectattr(RenderState& s, const Value& v, const CallArgs& a) {
  return select_reject(s, v, a, false, true);
}

Result<Value> f_replace(RenderState& state, const Value& v, const CallArgs& args) {
  auto b = bind_args<3>("do_replace", args, {"old", "new", "count"});
  if (!b.has(0) || !b.has(1))
    raise("TypeError", "do_replace() missing required argument: 'old' and 'new'");
  std::vector<Value> call{str_value(*b.slot[0]), str_value(*b.slot[1])};
  if (b.has(2) && !b.slot[2]->is_none()) call.push_back(*b.slot[2]);
  if (!state.autoescape) {  // str(s).replace(str(old), str(new), count): no Markup involved
    for (std::size_t i = 0; i < 2; ++i)
      if (call[i].is_markup()) call[i] = Value(call[i].as_string());
    return method(v.is_markup() ? Value(v.as_string()) : str_value(v), "replace", std::move(call),
                  state);
  }
  // Autoescaping: a Markup old or new escapes a plain s first; then Markup.replace (which
  // escapes new) when s is a Markup, str.replace otherwise.
  Value s = str_value(v);
  if ((call[0].is_markup() || call[1].is_markup()) && !s.is_markup()) s = html_escape(s);
  return method(s, "replace", std::move(call), state);
}

Result<Value> f_reverse(RenderState&, const Value& v, const CallArgs&) {
  if (v.is_string()) {
    std::string_view s = v.as_string();
    std::vector<std::pair<std::size_t, std::size_t>> cps;
    for (std::size_t pos = 0; pos < s.size();) {
      std::size_t start = pos;
      utf8::decode(s, pos);
      cps.emplace_back(start, pos - start);
    }
    std::string out;
    out.reserve(s.size());
    for (auto it = cps.rbegin(); it != cps.rend(); ++it)
      out.append(s.substr(it->first, it->second));
    return Value(std::move(out));
  }
  Value holder = check(iterate(v));
  std::vector<Value> items(holder.as_list().rbegin(), holder.as_list().rend());
  if (v.is_list())
    return Value::make_object<GeneratorObject>(Value::list(std::move(items)),
                                               "list_reverseiterator", "");
  if (v.is_tuple() || v.is_dict())
    return Value::make_object<GeneratorObject>(Value::list(std::move(items)), "reversed", "");
  return Value::list(std::move(items));
}

Result<Value> f_round(RenderState&, const Value& v, const CallArgs& args) {
  auto b = bind_args<2>("do_round", args, {"precision", "method"});
  std::int64_t precision = b.has(0) ? int_arg(*b.slot[0], "round") : 0;
  std::string how = b.has(1) ? soft_str(*b.slot[1]) : "common";
  if (how != "common" && how != "ceil" && how != "floor")
    raise("FilterArgumentError", "method must be common, ceil or floor");
  if (!v.is_number())
    raise("TypeError", "type " + std::string(type_name(v)) + " doesn't define __round__ method");
  if (how == "common") {
    if (v.is_int() || v.is_bool()) {
      std::int64_t i = v.as_integer();
      if (precision >= 0) return Value(static_cast<long long>(i));
      double scale = std::pow(10.0, static_cast<double>(-precision));
      double r = std::nearbyint(static_cast<double>(i) / scale) * scale;
      return Value(static_cast<long long>(r));
    }
    double d = v.as_float();
    if (!std::isfinite(d)) return Value(d);
    if (precision > 300) return Value(d);
    if (precision >= 0) {
      // printf rounds the exact binary value half-to-even, as Python's round does.
      char buf[512];
      std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(precision), d);
      return Value(std::strtod(buf, nullptr));
    }
    double scale = std::pow(10.0, static_cast<double>(-precision));
    return Value(std::nearbyint(d / scale) * scale);
  }
  double scale = std::pow(10.0, static_cast<double>(precision));
  double d = v.to_double() * scale;
  d = how == "ceil" ? std::ceil(d) : std::floor(d);
  return Value(d / scale);
}

Result<Value> f_safe(RenderState&, const Value& v, const CallArgs&) {
  return Value::as_markup(str_value(v));
}

Result<Value> f_slice(RenderState& state, const Value& v, const CallArgs& args) {
  auto b = bind_args<2>("do_slice", args, {"slices", "fill_with"});
  std::int64_t slices = b.has(0) ? int_arg(*b.slot[0], "slice") : 0;
  if (slices <= 0) raise("ZeroDivisionError", "integer division or modulo by zero");
  Value holder;
  auto seq = items_of(v, holder);
  std::size_t n = static_cast<std::size_t>(slices);
  std::size_t per = seq.size() / n, extra = seq.size() % n;
  std::vector<Value> out;
  std::size_t offset = 0;
  for (std::size_t i = 0; i < n; ++i) {
    state.step();
    std::size_t start = offset + i * per, end = start + per;
    if (i < extra) ++offset;
    std::vector<Value> part(
        seq.begin() + static_cast<std::ptrdiff_t>(start),
        seq.begin() + static_cast<std::ptrdiff_t>(std::min(end + (i < extra ? 1 : 0), seq.size())));
    if (b.has(1) && !b.slot[1]->is_none() && i >= extra) part.push_back(*b.slot[1]);
    out.push_back(Value::list(std::move(part)));
  }
  return make_generator(Value::list(std::move(out)), "sync_do_slice");
}

Result<Value> f_sort(RenderState& state, const Value& v, const CallArgs& args) {
  auto b = bind_args<3>("do_sort", args, {"reverse", "case_sensitive", "attribute"});
  bool reverse = b.has(0) && truthy(*b.slot[0]);
  bool case_sensitive = b.has(1) && truthy(*b.slot[1]);
  Value holder;
  auto items = items_of(v, holder);
  std::vector<Value> keys;
  for (const auto& item : items) {
    Value key = b.has(2) && !b.slot[2]->is_none() ? attr_path(item, *b.slot[2]) : item;
    keys.push_back(lower_if_string(key, state, case_sensitive));
  }
  std::vector<std::size_t> order(items.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  // do_sort's keys are one-element lists: equal keys never reach `<`.
  auto key_less = [&](const Value& a, const Value& c) { return !equals(a, c) && less(a, c); };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t c) {
    return reverse ? key_less(keys[c], keys[a]) : key_less(keys[a], keys[c]);
  });
  std::vector<Value> out;
  for (auto i : order) out.push_back(items[i]);
  return Value::list(std::move(out));
}

Result<Value> f_string(RenderState&, const Value& v, const CallArgs&) {
  return str_value(v);
}

Result<Value> f_striptags(RenderState& state, const Value& v, const CallArgs&) {
  return Value(markup_striptags(soft_str(v), state.limits));  // Markup(str(value)).striptags()
}

Result<Value> f_sum(RenderState& state, const Value& v, const CallArgs& args) {
  auto b = bind_args<2>("do_sum", args, {"attribute", "start"});
  Value total = b.get(1, Value(0));
  if (total.is_string())  // Python's sum() refuses a str start, Markup included
    raise("TypeError", "sum() can't sum strings [use ''.join(seq) instead]");
  Value holder;
  for (const auto& item : items_of(v, holder)) {
    Value x = b.has(0) && !b.slot[0]->is_none() ? attr_path(item, *b.slot[0]) : item;
    total = check(binary_op(BinaryOp::Add, total, x, state.limits));
  }
  return total;
}

Result<Value> f_tojson(RenderState& state, const Value& v, const CallArgs& args) {
  std::string out;
  out.reserve(256);  // tool schemas and messages: skips the first few regrowths
  tojson_into(state, v, args, out);
  return Value(std::move(out));
}

}  // namespace

void tojson_into(RenderState& state, const Value& v, const CallArgs& args, std::string& out) {
  auto b = bind_args<4>("tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"});
  const bool ensure_ascii = b.has(0) && truthy(*b.slot[0]);
  const bool sort_keys = b.has(3) && truthy(*b.slot[3]);
  if ((!b.has(1) || b.slot[1]->is_none()) && (!b.has(2) || b.slot[2]->is_none()) && !sort_keys) {
    // The usual calls (`x | tojson`, `tojson(ensure_ascii=False)`) use options built once:
    // a JsonDumpOptions holds three optional strings, and building one zero-fills it with a
    // `rep stos` that cost more than dumping a short value.
    static const JsonDumpOptions kPlain = [] {
      JsonDumpOptions o;
      o.ensure_ascii = false;
      return o;
    }();
    static const JsonDumpOptions kAscii = [] {
      JsonDumpOptions o;
      o.ensure_ascii = true;
      return o;
    }();
    check(dump_json(out, v, ensure_ascii ? kAscii : kPlain, state.limits));
    return;
  }
  JsonDumpOptions o;
  o.ensure_ascii = ensure_ascii;
  if (b.has(1) && !b.slot[1]->is_none()) {
    const Value& ind = *b.slot[1];
    if (ind.is_string())
      o.indent = std::string(ind.as_string());
    else {
      std::int64_t width = int_arg(ind, "indent");
      if (width > static_cast<std::int64_t>(state.lim.max_string_bytes))
        raise(limit_error("max_string_bytes", state.lim.max_string_bytes));
      o.indent = std::string(static_cast<std::size_t>(std::max<std::int64_t>(0, width)), ' ');
    }
  }
  if (b.has(2) && !b.slot[2]->is_none()) {
    Value seps = check(iterate(*b.slot[2]));
    auto list = seps.as_list();
    if (list.size() > 2) raise("ValueError", "too many values to unpack (expected 2)");
    if (list.size() < 2)
      raise("ValueError",
            "not enough values to unpack (expected 2, got " + std::to_string(list.size()) + ")");
    if (!list[0].is_string() || !list[1].is_string())
      raise("TypeError", "separators must be strings");
    o.item_separator = std::string(list[0].as_string());
    o.key_separator = std::string(list[1].as_string());
  }
  o.sort_keys = sort_keys;
  check(dump_json(out, v, o, state.limits));
}

namespace {

Result<Value> f_trim(RenderState& state, const Value& v, const CallArgs& args) {
  auto strip = [](const Value& s, const CallArgs& a, const ValueLimits& limits) {
    static const MethodFn fn = find_method_fn(Kind::String, "strip");
    return fn(s, a, limits);
  };
  if (args.positional.empty() && args.keyword.empty()) {
    if (v.is_string()) {
      // Nothing to strip when both ends are printable ASCII (most message contents): the
      // string itself, without a method call.
      std::string_view s = v.as_string();
      auto plain = [](char c) { return c > ' ' && static_cast<unsigned char>(c) < 0x7F; };
      if (s.empty() || (plain(s.front()) && plain(s.back()))) return v;
      return strip(v, CallArgs{}, state.limits);
    }
    // soft_str(Undefined) is "" (a missing description, say): nothing to build.
    if (v.is_undefined()) return kEmptyString;
    return strip(str_value(v), CallArgs{}, state.limits);
  }
  auto b = bind_args<1>("do_trim", args, {"chars"});
  std::span<const Value> chars;
  if (b.has(0)) chars = std::span<const Value>(b.slot[0], 1);
  return strip(str_value(v), CallArgs{chars, {}}, state.limits);
}

Result<Value> f_truncate(RenderState& state, const Value& v, const CallArgs& args) {
  auto b = bind_args<4>("do_truncate", args, {"length", "killwords", "end", "leeway"});
  std::int64_t len = b.has(0) ? int_arg(*b.slot[0], "truncate") : 255;
  bool killwords = b.has(1) && truthy(*b.slot[1]);
  std::string end = b.has(2) ? soft_str(*b.slot[2]) : "...";
  std::int64_t leeway = b.has(3) && !b.slot[3]->is_none() ? int_arg(*b.slot[3], "truncate") : 5;
  Value s = str_value(v);
  std::int64_t n = static_cast<std::int64_t>(s.string_length());
  std::int64_t end_len = static_cast<std::int64_t>(utf8::code_points(end));
  if (len < end_len)
    raise("AssertionError",
          "expected length >= " + std::to_string(end_len) + ", got " + std::to_string(len));
  if (leeway < 0) raise("AssertionError", "expected leeway >= 0, got " + std::to_string(leeway));
  if (n <= len + leeway) return s;
  Value head = check(slice(s, std::nullopt, len - end_len, std::nullopt, state.limits));
  // head + end: a Markup head (slices and rsplit of a Markup are Markup) escapes `end`.
  Value end_value = b.has(2) && b.slot[2]->is_string() ? *b.slot[2] : Value(end);
  if (killwords) return check(binary_op(BinaryOp::Add, head, end_value, state.limits));
  Value parts = method(head, "rsplit", {Value(" "), Value(1)}, state);
  return check(binary_op(BinaryOp::Add, parts.as_list()[0], end_value, state.limits));
}

Result<Value> f_unique(RenderState& state, const Value& v, const CallArgs& args) {
  auto b = bind_args<2>("do_unique", args, {"case_sensitive", "attribute"});
  bool case_sensitive = b.has(0) && truthy(*b.slot[0]);
  Value holder;
  std::vector<Value> out, seen;
  for (const auto& item : items_of(v, holder)) {
    Value key = b.has(1) && !b.slot[1]->is_none() ? attr_path(item, *b.slot[1]) : item;
    key = lower_if_string(key, state, case_sensitive);
    bool dup = false;
    for (const auto& s : seen)
      if (equals(s, key)) {
        dup = true;
        break;
      }
    if (dup) continue;
    state.step();
    seen.push_back(key);
    out.push_back(item);
  }
  return make_generator(Value::list(std::move(out)), "sync_do_unique");
}

Result<Value> f_urlencode(RenderState&, const Value& v, const CallArgs&) {
  // urllib.parse.quote: `slash_safe` for plain strings; query parts (for_qs) quote
  // '/' too and turn spaces into '+'.
  auto quote = [](std::string_view s, std::string& out, bool slash_safe) {
    static const char* kHex = "0123456789ABCDEF";
    for (unsigned char c : s) {
      if (std::isalnum(c) || c == '_' || c == '.' || c == '-' || c == '~' ||
          (slash_safe && c == '/')) {
        out += static_cast<char>(c);
      } else if (c == ' ' && !slash_safe) {
        out += '+';
      } else {
        out += '%';
        out += kHex[c >> 4];
        out += kHex[c & 15];
      }
    }
  };
  std::string out;
  if (v.is_dict()) {
    bool first = true;
    for (const auto& [k, val] : v.dict_entries()) {
      if (!first) out += '&';
      first = false;
      quote(soft_str(k), out, false);
      out += '=';
      quote(soft_str(val), out, false);
    }
    return Value(std::move(out));
  }
  if (v.is_sequence() || v.is_object()) {
    Value holder = check(iterate(v));
    bool first = true;
    for (const auto& pair : holder.as_list()) {
      Value kv = check(iterate(pair));
      if (kv.as_list().size() != 2) raise("ValueError", "too many values to unpack (expected 2)");
      if (!first) out += '&';
      first = false;
      quote(soft_str(kv.as_list()[0]), out, false);
      out += '=';
      quote(soft_str(kv.as_list()[1]), out, false);
    }
    return Value(std::move(out));
  }
  quote(soft_str(v), out, true);
  return Value(std::move(out));
}

Result<Value> f_wordcount(RenderState& state, const Value& v, const CallArgs&) {
  // len(re.findall(r"\w+", s))
  std::string_view s;
  Value str = str_value(v);
  s = str.as_string();
  std::size_t count = 0;
  bool in_word = false;
  for (std::size_t pos = 0; pos < s.size();) {
    char32_t c = utf8::decode(s, pos);
    bool word =
        c == '_' || (c < 0x80 ? std::isalnum(static_cast<int>(c)) != 0 : !utf8::is_space(c));
    if (word && !in_word) ++count;
    in_word = word;
  }
  (void)state;
  return Value(static_cast<long long>(count));
}

// textwrap.TextWrapper as do_wordwrap configures it (words split on whitespace,
// long words broken at `width` when break_long_words), lines joined by wrapstring.
Result<Value> f_wordwrap(RenderState& state, const Value& v, const CallArgs& args) {
  auto b = bind_args<4>("do_wordwrap", args,
                        {"width", "break_long_words", "wrapstring", "break_on_hyphens"});
  std::int64_t width = b.has(0) ? int_arg(*b.slot[0], "wordwrap") : 79;
  if (width <= 0) raise("ValueError", "invalid width " + std::to_string(width) + " (must be > 0)");
  bool break_long = !b.has(1) || truthy(*b.slot[1]);
  std::string wrap = b.has(2) && !b.slot[2]->is_none() ? soft_str(*b.slot[2]) : "\n";
  Value words = method(str_value(v), "split", {}, state);
  std::vector<std::string> lines;
  std::string line;
  std::size_t line_len = 0, w = static_cast<std::size_t>(width);
  for (const auto& word_value : words.as_list()) {
    std::string word(word_value.as_string());
    std::size_t len = utf8::code_points(word);
    if (line_len && line_len + 1 + len <= w) {
      line += ' ';
      line += word;
      line_len += 1 + len;
      continue;
    }
    if (line_len) lines.push_back(std::move(line));
    line.clear();
    line_len = 0;
    while (break_long && len > w) {
      Value head = check(slice(Value(word), std::nullopt, width, std::nullopt, state.limits));
      Value tail = check(slice(Value(word), width, std::nullopt, std::nullopt, state.limits));
      lines.emplace_back(head.as_string());
      word = std::string(tail.as_string());
      len -= w;
    }
    line = word;
    line_len = len;
  }
  if (line_len) lines.push_back(std::move(line));
  // wrapstring.join(...): Markup.join escapes each line when the wrapstring is a Markup.
  const bool markup_wrap = b.has(2) && b.slot[2]->is_markup();
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i) out += wrap;
    if (markup_wrap) {
      std::string escaped;
      append_html_escaped(escaped, lines[i]);
      check(append_checked(out, escaped, state.limits));
    } else {
      check(append_checked(out, lines[i], state.limits));
    }
  }
  if (markup_wrap) return Value::markup(std::move(out));
  return Value(std::move(out));
}

Result<Value> f_xmlattr(RenderState&, const Value& v, const CallArgs& args) {
  auto b = bind_args<1>("do_xmlattr", args, {"autospace"});
  bool autospace = !b.has(0) || truthy(*b.slot[0]);
  if (!v.is_dict())
    raise("AttributeError", "'" + std::string(type_name(v)) + "' object has no attribute 'items'");
  std::string out;
  for (const auto& [k, val] : v.dict_entries()) {
    if (val.is_none() || val.is_undefined()) continue;
    std::string key = soft_str(k);
    for (char c : key)
      if (c == ' ' || c == '/' || c == '>' || c == '=' || c == '\t' || c == '\n')
        raise("ValueError", "Invalid character in attribute name: '" + key + "'");
    if (!out.empty()) out += ' ';
    append_html_escaped(out, key);
    out += "=\"";
    append_html_escaped(out, soft_str(val));
    out += '"';
  }
  if (autospace && !out.empty()) out = " " + out;
  return Value(std::move(out));
}

// jinja2.utils.urlize behind do_urlize (rel "noopener" from the default policies).
std::string urlize_text(std::string_view text, std::optional<std::int64_t> trim_limit,
                        const std::string& rel, const std::string& target,
                        const std::vector<std::string>& extra_schemes) {
  static const std::regex kHttp(
      R"(^(((https?://|www\.)(([\w%-]+\.)+)?([a-z]{2,63}|xn--[\w%]{2,59}))|(([\w%-]{2,63}\.)+)"
      R"((com|net|int|edu|gov|org|info|mil))|((https?://)((\d{1,3})(\.\d{1,3}){3}|)"
      R"(\[([\da-f]{0,4}:){2}([\da-f]{0,4}:?){1,6}\])))(:\d{1,5})?([/?#]\S*)?$)",
      std::regex::icase);
  static const std::regex kEmail(R"(^\S+@\w[\w.-]*\.\w+$)");
  static const std::regex kLead(R"(^([(<]|&lt;)+)");
  static const std::regex kTrail(R"(([)>.,\n]|&gt;)+$)");
  std::string escaped;
  append_html_escaped(escaped, text);
  auto trim = [&](const std::string& x) {
    if (trim_limit && static_cast<std::int64_t>(utf8::code_points(x)) > *trim_limit)
      return std::string(Value(x).as_string().substr(0, static_cast<std::size_t>(*trim_limit))) +
             "...";
    return x;
  };
  std::string rel_attr = rel.empty() ? "" : " rel=\"" + rel + "\"";
  std::string target_attr = target.empty() ? "" : " target=\"" + target + "\"";
  std::string out;
  std::size_t pos = 0;
  while (pos < escaped.size()) {
    std::size_t space = pos;
    while (space < escaped.size() && std::isspace(static_cast<unsigned char>(escaped[space])))
      ++space;
    out.append(escaped, pos, space - pos);
    std::size_t end = space;
    while (end < escaped.size() && !std::isspace(static_cast<unsigned char>(escaped[end]))) ++end;
    if (end == space) break;
    std::string middle = escaped.substr(space, end - space), head, tail;
    pos = end;
    std::smatch m;
    if (std::regex_search(middle, m, kLead)) {
      head = m.str();
      middle = middle.substr(head.size());
    }
    if (std::regex_search(middle, m, kTrail)) {
      tail = m.str();
      middle = middle.substr(0, static_cast<std::size_t>(m.position()));
    }
    const std::pair<std::string, std::string> kPairs[] = {{"(", ")"}, {"<", ">"}, {"&lt;", "&gt;"}};
    for (const auto& [open, close] : kPairs) {
      auto count = [](const std::string& h, const std::string& needle) {
        std::size_t n = 0;
        for (std::size_t p = h.find(needle); p != std::string::npos;
             p = h.find(needle, p + needle.size()))
          ++n;
        return n;
      };
      std::size_t starts = count(middle, open);
      if (starts <= count(middle, close)) continue;
      for (std::size_t k = std::min(starts, count(tail, close)); k > 0; --k) {
        std::size_t end_index = tail.find(close) + close.size();
        middle += tail.substr(0, end_index);
        tail = tail.substr(end_index);
      }
    }
    if (std::regex_match(middle, kHttp)) {
      std::string href = middle.rfind("https://", 0) == 0 || middle.rfind("http://", 0) == 0
                             ? middle
                             : "https://" + middle;
      middle = "<a href=\"" + href + "\"" + rel_attr + target_attr + ">" + trim(middle) + "</a>";
    } else if (middle.rfind("mailto:", 0) == 0 && std::regex_match(middle.substr(7), kEmail)) {
      middle = "<a href=\"" + middle + "\">" + middle.substr(7) + "</a>";
    } else if (middle.find('@') != std::string::npos && middle.rfind("www.", 0) != 0 &&
               middle.find(':') == std::string::npos && std::regex_match(middle, kEmail)) {
      middle = "<a href=\"mailto:" + middle + "\">" + middle + "</a>";
    } else {
      for (const auto& scheme : extra_schemes)
        if (middle != scheme && middle.rfind(scheme, 0) == 0)
          middle = "<a href=\"" + middle + "\"" + rel_attr + target_attr + ">" + middle + "</a>";
    }
    out += head + middle + tail;
  }
  return out;
}

Result<Value> f_urlize(RenderState&, const Value& v, const CallArgs& args) {
  auto b = bind_args<5>("do_urlize", args,
                        {"trim_url_limit", "nofollow", "target", "rel", "extra_schemes"});
  std::optional<std::int64_t> trim_limit;
  if (b.has(0) && !b.slot[0]->is_none()) trim_limit = int_arg(*b.slot[0], "urlize");
  std::vector<std::string> rel_parts{"noopener"};
  if (b.has(3) && !b.slot[3]->is_none()) {
    std::string rel = soft_str(*b.slot[3]);
    std::size_t p = 0;
    while (p < rel.size()) {
      std::size_t q = rel.find(' ', p);
      if (q == std::string::npos) q = rel.size();
      if (q > p) rel_parts.push_back(rel.substr(p, q - p));
      p = q + 1;
    }
  }
  if (b.has(1) && truthy(*b.slot[1])) rel_parts.push_back("nofollow");
  std::sort(rel_parts.begin(), rel_parts.end());
  rel_parts.erase(std::unique(rel_parts.begin(), rel_parts.end()), rel_parts.end());
  std::string rel, target;
  for (const auto& part : rel_parts) rel += (rel.empty() ? "" : " ") + part;
  if (b.has(2) && !b.slot[2]->is_none()) append_html_escaped(target, soft_str(*b.slot[2]));
  std::vector<std::string> schemes;
  if (b.has(4) && !b.slot[4]->is_none()) {
    Value holder = check(iterate(*b.slot[4]));
    static const std::regex kScheme(R"(^[a-zA-Z][\w+.-]*:(//)?$)");
    for (const auto& scheme : holder.as_list()) {
      std::string text = soft_str(scheme);
      if (!std::regex_match(text, kScheme))
        raise("FilterArgumentError", to_repr(scheme) + " is not a valid URI scheme prefix.");
      schemes.push_back(text);
    }
  }
  return Value(urlize_text(soft_str(v), trim_limit, rel, target, schemes));
}

// FilterEntry::needs_context: Jinja2's @pass_context filters.
constexpr bool kNeedsContext = true;

constexpr FilterEntry kFilters[] = {
    {"abs", f_abs},
    {"attr", f_attr},
    {"batch", f_batch},
    {"capitalize", f_capitalize, FilterMarkup::Keep},
    {"center", f_center, FilterMarkup::Keep},
    {.name = "count", .fn = f_length, .fast_path = FilterSpecial::Length},
    {"d", f_default},
    {"default", f_default},
    {.name = "dictsort", .fn = f_dictsort, .fast_path = FilterSpecial::Dictsort},
    {"e", f_escape, FilterMarkup::Always},
    {"escape", f_escape, FilterMarkup::Always},
    {"filesizeformat", f_filesizeformat},
    {"first", f_first},
    {"float", f_float},
    {"forceescape", f_forceescape, FilterMarkup::Always},
    {"format", f_format, FilterMarkup::Keep},
    {"groupby", f_groupby},
    {"indent", f_indent, FilterMarkup::Keep},
    {"int", f_int},
    {.name = "items", .fn = f_items, .fast_path = FilterSpecial::Items},
    {"join", f_join},
    {"last", f_last, FilterMarkup::Keep},
    {.name = "length", .fn = f_length, .fast_path = FilterSpecial::Length},
    {"list", f_list},
    {"lower", f_lower, FilterMarkup::Keep},
    {"map", f_map, FilterMarkup::Str, kNeedsContext},
    {"max", f_max},
    {"min", f_min},
    {"pprint", f_pprint},
    {"random", f_random, FilterMarkup::Str, kNeedsContext},
    {"reject", f_reject, FilterMarkup::Str, kNeedsContext},
    {"rejectattr", f_rejectattr, FilterMarkup::Str, kNeedsContext},
    {"replace", f_replace},
    {"reverse", f_reverse, FilterMarkup::Keep},
    {"round", f_round},
    {"safe", f_safe, FilterMarkup::Always},
    {"select", f_select, FilterMarkup::Str, kNeedsContext},
    {"selectattr", f_selectattr, FilterMarkup::Str, kNeedsContext},
    {"slice", f_slice},
    {"sort", f_sort},
    {"string", f_string, FilterMarkup::Keep},
    {"striptags", f_striptags},
    {"sum", f_sum},
    {"title", f_title},
    {.name = "tojson", .fn = f_tojson, .fast_path = FilterSpecial::Tojson},
    {.name = "trim", .fn = f_trim, .markup = FilterMarkup::Keep, .fast_path = FilterSpecial::Trim},
    {"truncate", f_truncate, FilterMarkup::Keep},
    {"unique", f_unique},
    {"upper", f_upper, FilterMarkup::Keep},
    {"urlencode", f_urlencode},
    {"urlize", f_urlize, FilterMarkup::Autoescape},
    {"wordcount", f_wordcount},
    {"wordwrap", f_wordwrap},
    {"xmlattr", f_xmlattr, FilterMarkup::Autoescape},
};

}  // namespace

Result<Value> run_filter(const FilterEntry& filter, RenderState& state, const Value& operand,
                         const CallArgs& args) {
  auto r = filter.fn(state, operand, args);
  if (!r || !r->is_string() || r->is_markup()) return r;
  switch (filter.markup) {
    case FilterMarkup::Str:
      return r;
    case FilterMarkup::Keep:
      return operand.is_markup() ? Value::as_markup(*r) : std::move(r);
    case FilterMarkup::Always:
      return Value::as_markup(*r);
    case FilterMarkup::Autoescape:
      return state.autoescape ? Value::as_markup(*r) : std::move(r);
  }
  return r;
}

const FilterEntry* find_filter(std::string_view name) {
  for (const auto& f : kFilters)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace chatwire::jinja
