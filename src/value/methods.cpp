// The Python methods templates call on str, dict, list and tuple values: one table
// (kind x name -> function), plus the names ImmutableSandboxedEnvironment refuses.
#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>

#include "value/internal.hpp"

namespace chatwire {

namespace {

using Positional = std::span<const Value>;

// ---------------------------------------------------------------------------------
// Argument binding
// ---------------------------------------------------------------------------------

// Binds positional and keyword arguments to parameter slots; missing ones stay null.
struct Bound {
  std::array<const Value*, 4> slot{};
  const Value* operator[](std::size_t i) const { return slot[i]; }
  bool given(std::size_t i) const { return slot[i] && !slot[i]->is_none(); }
};

Result<Bound> bind(const CallArgs& args, std::string_view method,
                   std::initializer_list<std::string_view> names, std::size_t required,
                   bool keywords_allowed) {
  Bound bound;
  std::size_t max = names.size();
  std::size_t given = args.positional.size() + args.keyword.size();
  if (!keywords_allowed && !args.keyword.empty())
    return type_error(std::string(method) + "() takes no keyword arguments");
  if (args.positional.size() > max) {
    if (max == 0)
      return type_error(std::string(method) + "() takes no arguments (" + std::to_string(given) +
                        " given)");
    return type_error(std::string(method) + " expected at most " + std::to_string(max) +
                      (max == 1 ? " argument, got " : " arguments, got ") +
                      std::to_string(args.positional.size()));
  }
  for (std::size_t i = 0; i < args.positional.size(); ++i) bound.slot[i] = &args.positional[i];
  for (const NamedArg& kw : args.keyword) {
    std::size_t index = 0;
    for (std::string_view n : names) {
      if (n == kw.name) break;
      ++index;
    }
    if (index == max)
      return type_error(std::string("'") + std::string(kw.name) +
                        "' is an invalid keyword argument for " + std::string(method) + "()");
    if (bound.slot[index])
      return type_error("argument for " + std::string(method) + "() given by name ('" +
                        std::string(kw.name) + "') and position (" + std::to_string(index + 1) +
                        ")");
    bound.slot[index] = &kw.value;
  }
  for (std::size_t i = 0; i < required; ++i)
    if (!bound.slot[i])
      return type_error(std::string(method) + " expected at least " + std::to_string(required) +
                        (required == 1 ? " argument, got " : " arguments, got ") +
                        std::to_string(given));
  return bound;
}

Error must_be_str(const Value& v) {
  return type_error("must be str, not " + std::string(type_name(v)));
}

Result<std::int64_t> int_arg(const Value* v, std::int64_t fallback) {
  if (!v) return fallback;
  if (v->is_int() || v->is_bool()) return v->as_integer();
  return type_error(std::string("'") + std::string(type_name(*v)) +
                    "' object cannot be interpreted as an integer");
}

// Slice-style optional index (None allowed) for find/count/startswith.
Result<std::optional<std::int64_t>> index_arg(const Value* v) {
  if (!v || v->is_none()) return std::optional<std::int64_t>();
  if (v->is_int() || v->is_bool()) return std::optional<std::int64_t>(v->as_integer());
  return type_error("slice indices must be integers or None or have an __index__ method");
}

// ---------------------------------------------------------------------------------
// Code-point views of strings
// ---------------------------------------------------------------------------------

std::u32string decode_all(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) out += utf8::decode(s, i);
  return out;
}

// A substring small enough for the payload block cache (core.cpp: blocks up to 256 bytes)
// is built by Value(string_view), its bytes in the payload's own block: that saves the
// std::string buffer's allocation, which costs more than the flag scan it redoes.
Value substring_value(std::string_view s, bool ascii) {
  if (s.size() <= 256 - sizeof(detail::StringData)) return Value(s);
  if (ascii) return Value::string_known(std::string(s), true, s.size());
  return make_string(std::string(s));
}

// Byte offsets <-> code-point indexes of one string.
struct Positions {
  std::string_view s;
  bool ascii;
  std::size_t length;  // code points
  std::size_t byte_of(std::size_t cp) const { return ascii ? cp : utf8::byte_offset(s, cp); }
  std::size_t cp_of(std::size_t byte) const {
    return ascii ? byte : utf8::code_points(s.substr(0, byte));
  }
};

Positions positions(const Value& v) {
  return {v.as_string(), v.string_is_ascii(), v.string_length()};
}

// CPython's ADJUST_INDICES.
void adjust_indices(std::int64_t& start, std::int64_t& end, std::int64_t length) {
  if (end > length)
    end = length;
  else if (end < 0) {
    end += length;
    if (end < 0) end = 0;
  }
  if (start < 0) {
    start += length;
    if (start < 0) start = 0;
  }
}

// s[start:end] of str.find/count/startswith and friends: the optional start and end arguments,
// adjusted to the string's length in code points.
struct SliceArgs {
  Positions p;
  std::int64_t start, end, length;
};

Result<SliceArgs> slice_args(const Value& self, const Value* start_value, const Value* end_value) {
  auto start_arg = index_arg(start_value);
  if (!start_arg) return start_arg.error();
  auto end_arg = index_arg(end_value);
  if (!end_arg) return end_arg.error();
  SliceArgs slice{positions(self), start_arg->value_or(0),
                  end_arg->value_or(std::numeric_limits<std::int64_t>::max()), 0};
  slice.length = static_cast<std::int64_t>(slice.p.length);
  adjust_indices(slice.start, slice.end, slice.length);
  return slice;
}

// ---------------------------------------------------------------------------------
// str methods
// ---------------------------------------------------------------------------------

Result<Value> do_strip(const Value& self, const CallArgs& args, std::string_view name, bool left,
                       bool right) {
  if (!args.keyword.empty()) return type_error(std::string(name) + "() takes no keyword arguments");
  if (args.positional.size() > 1)
    return type_error(std::string(name) + " expected at most 1 argument, got " +
                      std::to_string(args.positional.size()));
  const Value* chars = args.positional.empty() ? nullptr : &args.positional[0];
  if (chars && !chars->is_none() && !chars->is_string())
    return type_error(std::string(name) + " arg must be None or str");
  // ASCII members of the strip set as a bitmap (whitespace: str.isspace's ASCII rows);
  // other code points go through is_space or the decoded set.
  std::uint64_t ascii[2] = {0, 0};
  auto mark = [&](unsigned c) { ascii[c >> 6] |= std::uint64_t{1} << (c & 63); };
  std::u32string set;
  bool whitespace = !chars || chars->is_none();
  if (whitespace) {
    for (unsigned c = 0x09; c <= 0x0D; ++c) mark(c);
    for (unsigned c = 0x1C; c <= 0x20; ++c) mark(c);
  } else if (chars->string_is_ascii()) {
    for (char c : chars->as_string()) mark(static_cast<unsigned char>(c));
  } else {
    set = decode_all(chars->as_string());
    for (char32_t c : set)
      if (c < 0x80) mark(static_cast<unsigned>(c));
  }
  auto strip_it = [&](char32_t c) {
    if (c < 0x80) return ((ascii[c >> 6] >> (c & 63)) & 1) != 0;
    return whitespace ? unicode::is_space(c) : set.find(c) != std::u32string::npos;
  };
  std::string_view s = self.as_string();
  std::size_t begin = 0, end = s.size();
  // ASCII bytes are whole code points: test them without decoding.
  auto ascii_at = [&](std::size_t i) { return static_cast<unsigned char>(s[i]) < 0x80; };
  if (left) {
    while (begin < end) {
      std::size_t next = begin;
      char32_t c = ascii_at(begin) ? static_cast<char32_t>(s[next++]) : utf8::decode(s, next);
      if (!strip_it(c)) break;
      begin = next;
    }
  }
  if (right) {
    while (end > begin) {
      std::size_t prev = end;
      char32_t c =
          ascii_at(end - 1) ? static_cast<char32_t>(s[--prev]) : utf8::decode_back(s, prev);
      if (!strip_it(c)) break;
      end = prev;
    }
  }
  if (begin == 0 && end == s.size()) return self;
  return substring_value(s.substr(begin, end - begin), self.string_is_ascii());
}

Result<Value> str_strip(const Value& self, const CallArgs& args, const ValueLimits&) {
  return do_strip(self, args, "strip", true, true);
}
Result<Value> str_lstrip(const Value& self, const CallArgs& args, const ValueLimits&) {
  return do_strip(self, args, "lstrip", true, false);
}
Result<Value> str_rstrip(const Value& self, const CallArgs& args, const ValueLimits&) {
  return do_strip(self, args, "rstrip", false, true);
}

Result<Value> do_split(const Value& self, const CallArgs& args, bool from_right,
                       const ValueLimits& limits) {
  auto b = bind(args, from_right ? "rsplit" : "split", {"sep", "maxsplit"}, 0, true);
  if (!b) return b.error();
  const Value* sep = (*b)[0];
  if (sep && !sep->is_none() && !sep->is_string())
    return type_error("must be str or None, not " + std::string(type_name(*sep)));
  auto maxsplit_arg = int_arg((*b)[1], -1);
  if (!maxsplit_arg) return maxsplit_arg.error();
  std::int64_t maxsplit =
      *maxsplit_arg < 0 ? std::numeric_limits<std::int64_t>::max() : *maxsplit_arg;
  std::string_view s = self.as_string();
  bool ascii = self.string_is_ascii();
  std::vector<Value> parts;
  auto add = [&](std::size_t from, std::size_t to) -> Status {
    if (parts.size() >= limits.max_container_items)
      return limit_error("max_container_items", limits.max_container_items);
    parts.push_back(substring_value(s.substr(from, to - from), ascii));
    return ok_status();
  };
  if (!sep || sep->is_none()) {
    auto space_at = [&](std::size_t i, std::size_t& next) {
      next = i;
      return unicode::is_space(utf8::decode(s, next));
    };
    if (!from_right) {
      std::size_t i = 0, next = 0;
      while (maxsplit-- > 0) {
        while (i < s.size() && space_at(i, next)) i = next;
        if (i == s.size()) break;
        std::size_t j = i;
        while (i < s.size() && !space_at(i, next)) i = next;
        if (auto st = add(j, i); !st) return st.error();
      }
      if (i < s.size()) {
        while (i < s.size() && space_at(i, next)) i = next;
        if (i != s.size())
          if (auto st = add(i, s.size()); !st) return st.error();
      }
    } else {
      // Work backwards over byte positions of code-point ends.
      std::size_t i = s.size();
      auto space_before = [&](std::size_t end, std::size_t& start) {
        start = end;
        return unicode::is_space(utf8::decode_back(s, start));
      };
      std::size_t prev = 0;
      while (maxsplit-- > 0) {
        while (i > 0 && space_before(i, prev)) i = prev;
        if (i == 0) break;
        std::size_t j = i;
        while (i > 0 && !space_before(i, prev)) i = prev;
        if (auto st = add(i, j); !st) return st.error();
      }
      if (i > 0) {
        while (i > 0 && space_before(i, prev)) i = prev;
        if (i > 0)
          if (auto st = add(0, i); !st) return st.error();
      }
      std::reverse(parts.begin(), parts.end());
    }
    return Value::list(std::move(parts));
  }
  std::string_view separator = sep->as_string();
  if (separator.empty()) return value_error("empty separator");
  // content.split('</think>') and the like: mostly one or two parts.
  parts.reserve(2);
  if (!from_right) {
    std::size_t i = 0;
    while (maxsplit-- > 0) {
      std::size_t found = s.find(separator, i);
      if (found == std::string_view::npos) break;
      if (auto st = add(i, found); !st) return st.error();
      i = found + separator.size();
    }
    if (auto st = add(i, s.size()); !st) return st.error();
  } else {
    std::size_t end = s.size();
    while (maxsplit-- > 0 && end >= separator.size()) {
      std::size_t found = s.rfind(separator, end - separator.size());
      if (found == std::string_view::npos) break;
      if (auto st = add(found + separator.size(), end); !st) return st.error();
      end = found;
    }
    if (auto st = add(0, end); !st) return st.error();
    std::reverse(parts.begin(), parts.end());
  }
  return Value::list(std::move(parts));
}

Result<Value> str_split(const Value& self, const CallArgs& args, const ValueLimits& limits) {
  return do_split(self, args, false, limits);
}
Result<Value> str_rsplit(const Value& self, const CallArgs& args, const ValueLimits& limits) {
  return do_split(self, args, true, limits);
}

Result<Value> str_splitlines(const Value& self, const CallArgs& args, const ValueLimits& limits) {
  auto b = bind(args, "splitlines", {"keepends"}, 0, true);
  if (!b) return b.error();
  bool keepends = (*b)[0] && truthy(*(*b)[0]);
  std::string_view s = self.as_string();
  std::vector<Value> lines;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t start = i, eol = s.size(), next = s.size();
    while (i < s.size()) {
      std::size_t at = i;
      char32_t c = utf8::decode(s, i);
      if (unicode::is_linebreak(c)) {
        eol = at;
        if (c == '\r' && i < s.size() && s[i] == '\n') ++i;
        next = i;
        break;
      }
    }
    if (lines.size() >= limits.max_container_items)
      return limit_error("max_container_items", limits.max_container_items);
    lines.push_back(
        substring_value(s.substr(start, (keepends ? next : eol) - start), self.string_is_ascii()));
    i = next;
  }
  return Value::list(std::move(lines));
}

Result<Value> do_affix(const Value& self, const CallArgs& args, bool at_end) {
  // s.startswith('x') / s.endswith('x'), the usual form: whole-string byte comparison.
  if (args.keyword.empty() && args.positional.size() == 1 && args.positional[0].is_string()) {
    std::string_view s = self.as_string(), needle = args.positional[0].as_string();
    if (needle.size() > s.size()) return Value(false);
    return Value(detail::same_bytes(
        at_end ? s.substr(s.size() - needle.size()) : s.substr(0, needle.size()), needle));
  }
  std::string_view name = at_end ? "endswith" : "startswith";
  auto b = bind(args, name, {"prefix", "start", "end"}, 1, false);
  if (!b) return b.error();
  const Value& prefix = *(*b)[0];
  auto slice = slice_args(self, (*b)[1], (*b)[2]);
  if (!slice) return slice.error();
  const Positions& p = slice->p;
  const std::int64_t start = slice->start, end = slice->end;
  auto match = [&](const Value& candidate) {
    auto sub_length = static_cast<std::int64_t>(candidate.string_length());
    if (end - sub_length < start) return false;  // CPython's tailmatch
    if (sub_length == 0) return true;
    std::size_t from = p.byte_of(static_cast<std::size_t>(start));
    std::size_t to = p.byte_of(static_cast<std::size_t>(end));
    std::string_view window = p.s.substr(from, to - from);
    std::string_view needle = candidate.as_string();
    if (window.size() < needle.size()) return false;
    return at_end ? window.substr(window.size() - needle.size()) == needle
                  : window.substr(0, needle.size()) == needle;
  };
  if (prefix.is_string()) return Value(match(prefix));
  if (prefix.is_tuple()) {
    for (const Value& candidate : prefix.as_list()) {
      if (!candidate.is_string())
        return type_error("tuple for " + std::string(name) + " must only contain str, not " +
                          std::string(type_name(candidate)));
      if (match(candidate)) return Value(true);
    }
    return Value(false);
  }
  return type_error(std::string(name) + " first arg must be str or a tuple of str, not " +
                    std::string(type_name(prefix)));
}

Result<Value> str_startswith(const Value& self, const CallArgs& args, const ValueLimits&) {
  return do_affix(self, args, false);
}
Result<Value> str_endswith(const Value& self, const CallArgs& args, const ValueLimits&) {
  return do_affix(self, args, true);
}

enum class Search { Find, RFind, Index, RIndex, Count };

Result<Value> do_search(const Value& self, const CallArgs& args, Search mode,
                        std::string_view name) {
  auto b = bind(args, name, {"sub", "start", "end"}, 1, false);
  if (!b) return b.error();
  const Value& sub = *(*b)[0];
  if (!sub.is_string())
    return type_error(
        std::string(mode == Search::Count ? "must be str, not " : "must be str, not ") +
        std::string(type_name(sub)));
  auto slice = slice_args(self, (*b)[1], (*b)[2]);
  if (!slice) return slice.error();
  const Positions& p = slice->p;
  const std::int64_t start = slice->start, end = slice->end, length = slice->length;
  std::string_view needle = sub.as_string();
  auto sub_length = static_cast<std::int64_t>(sub.string_length());
  auto not_found = [&]() -> Result<Value> {
    if (mode == Search::Index || mode == Search::RIndex) return value_error("substring not found");
    return Value(-1);
  };
  if (mode == Search::Count) {
    if (end - start < sub_length || start > length) return Value(0);
    if (sub_length == 0) return Value(end - start + 1);
  } else if (end - start < sub_length || start > length) {
    return not_found();
  }
  std::size_t from = p.byte_of(static_cast<std::size_t>(start));
  std::size_t to = p.byte_of(static_cast<std::size_t>(end));
  std::string_view window = p.s.substr(from, to - from);
  switch (mode) {
    case Search::Count: {
      std::int64_t n = 0;
      for (std::size_t at = window.find(needle); at != std::string_view::npos;
           at = window.find(needle, at + needle.size()))
        ++n;
      return Value(n);
    }
    case Search::Find:
    case Search::Index: {
      std::size_t at = window.find(needle);
      if (at == std::string_view::npos) return not_found();
      return Value(static_cast<std::int64_t>(p.cp_of(from + at)));
    }
    case Search::RFind:
    case Search::RIndex: {
      std::size_t at = window.rfind(needle);
      if (at == std::string_view::npos) return not_found();
      return Value(static_cast<std::int64_t>(p.cp_of(from + at)));
    }
  }
  return not_found();
}

Result<Value> str_find(const Value& self, const CallArgs& args, const ValueLimits&) {
  return do_search(self, args, Search::Find, "find");
}
Result<Value> str_rfind(const Value& self, const CallArgs& args, const ValueLimits&) {
  return do_search(self, args, Search::RFind, "rfind");
}
Result<Value> str_index(const Value& self, const CallArgs& args, const ValueLimits&) {
  return do_search(self, args, Search::Index, "index");
}
Result<Value> str_rindex(const Value& self, const CallArgs& args, const ValueLimits&) {
  return do_search(self, args, Search::RIndex, "rindex");
}
Result<Value> str_count(const Value& self, const CallArgs& args, const ValueLimits&) {
  return do_search(self, args, Search::Count, "count");
}

Result<Value> str_replace(const Value& self, const CallArgs& args, const ValueLimits& limits) {
  auto b = bind(args, "replace", {"old", "new", "count"}, 2, false);
  if (!b) return b.error();
  const Value& old_value = *(*b)[0];
  const Value& new_value = *(*b)[1];
  if (!old_value.is_string())
    return type_error("replace() argument 1 must be str, not " + std::string(type_name(old_value)));
  if (!new_value.is_string())
    return type_error("replace() argument 2 must be str, not " + std::string(type_name(new_value)));
  auto count_arg = int_arg((*b)[2], -1);
  if (!count_arg) return count_arg.error();
  std::int64_t count = *count_arg < 0 ? std::numeric_limits<std::int64_t>::max() : *count_arg;
  std::string_view s = self.as_string(), from = old_value.as_string(), to = new_value.as_string();
  std::string out;
  auto check = [&]() -> Status {
    if (out.size() > limits.max_string_bytes)
      return limit_error("max_string_bytes", limits.max_string_bytes);
    return ok_status();
  };
  if (from.empty()) {
    std::size_t i = 0;
    while (i <= s.size()) {
      if (count-- > 0)
        out += to;
      else {
        out.append(s.substr(i));
        break;
      }
      if (i == s.size()) break;
      std::size_t next = i;
      utf8::decode(s, next);
      out.append(s.substr(i, next - i));
      i = next;
      if (auto st = check(); !st) return st.error();
    }
  } else {
    // Nothing to replace (replace("/think", "") on most messages): CPython returns the
    // string itself, and so no copy is made.
    std::size_t first = count > 0 ? s.find(from) : std::string_view::npos;
    if (first == std::string_view::npos) return self;
    // The replacements are counted first, so the result's size is checked against the limit
    // before it is built (a template doubling a string by replace() stops at once), and the
    // result is written once, in place.
    const auto wanted = static_cast<std::uint64_t>(count);
    std::uint64_t n = 0;
    if (from.size() == 1) {
      n = static_cast<std::uint64_t>(
          std::count(s.begin() + static_cast<std::ptrdiff_t>(first), s.end(), from[0]));
      n = std::min(n, wanted);
    } else {
      for (std::size_t at = first; at != std::string_view::npos && n < wanted;
           at = s.find(from, at + from.size()))
        ++n;
    }
    const std::uint64_t size = s.size() - n * from.size() + n * to.size();
    if (size > limits.max_string_bytes)
      return limit_error("max_string_bytes", limits.max_string_bytes);
    out.resize(static_cast<std::size_t>(size));
    char* w = out.data();
    auto put = [&w](const char* from_bytes, std::size_t len) {
      if (len != 0) std::memcpy(w, from_bytes, len);  // memcpy's pointers may not be null
      w += len;
    };
    if (from.size() == 1) {
      const char f = from[0];
      std::size_t i = 0;
      for (std::uint64_t k = 0; k < n; ++i) {
        if (s[i] == f) {
          put(to.data(), to.size());
          ++k;
        } else {
          *w++ = s[i];
        }
      }
      put(s.data() + i, s.size() - i);
    } else {
      std::size_t i = 0;
      for (std::uint64_t k = 0; k < n; ++k) {
        const std::size_t at = k == 0 ? first : s.find(from, i);
        put(s.data() + i, at - i);
        put(to.data(), to.size());
        i = at + from.size();
      }
      put(s.data() + i, s.size() - i);
    }
  }
  if (auto st = check(); !st) return st.error();
  if (self.string_is_ascii() && new_value.string_is_ascii()) {
    std::size_t n = out.size();
    return Value::string_known(std::move(out), true, n);
  }
  return make_string(std::move(out));
}

// Python's lower() for one code point at position i of cps, with Final_Sigma.
void append_lower_at(std::string& out, const std::u32string& cps, std::size_t i) {
  char32_t c = cps[i];
  if (c == 0x3A3) {
    std::size_t j = i;
    char32_t before = 0;
    bool found_before = false;
    while (j > 0) {
      before = cps[--j];
      if (!unicode::is_case_ignorable(before)) {
        found_before = true;
        break;
      }
    }
    bool final_sigma = found_before && unicode::is_cased(before);
    if (final_sigma) {
      std::size_t k = i + 1;
      while (k < cps.size() && unicode::is_case_ignorable(cps[k])) ++k;
      final_sigma = k == cps.size() || !unicode::is_cased(cps[k]);
    }
    utf8::encode(out, final_sigma ? 0x3C2 : 0x3C3);
    return;
  }
  unicode::append_lower(out, c);
}

enum class CaseOp { Upper, Lower, Title, Capitalize, SwapCase, CaseFold };

Result<Value> change_case(const Value& self, CaseOp op, const ValueLimits& limits) {
  std::string_view s = self.as_string();
  std::string out;
  if (self.string_is_ascii()) {
    // Mapped in place in a copy: no capacity check per character.
    out.assign(s);
    bool previous_cased = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      bool lower = c >= 'a' && c <= 'z', upper = c >= 'A' && c <= 'Z';
      char r = c;
      switch (op) {
        case CaseOp::Upper:
          r = lower ? static_cast<char>(c - 32) : c;
          break;
        case CaseOp::Lower:
        case CaseOp::CaseFold:
          r = upper ? static_cast<char>(c + 32) : c;
          break;
        case CaseOp::Title:
          r = previous_cased ? (upper ? static_cast<char>(c + 32) : c)
                             : (lower ? static_cast<char>(c - 32) : c);
          previous_cased = lower || upper;
          break;
        case CaseOp::Capitalize:
          r = i == 0 ? (lower ? static_cast<char>(c - 32) : c)
                     : (upper ? static_cast<char>(c + 32) : c);
          break;
        case CaseOp::SwapCase:
          r = upper ? static_cast<char>(c + 32) : lower ? static_cast<char>(c - 32) : c;
          break;
      }
      out[i] = r;
    }
    return Value::string_known(std::move(out), true, s.size());
  }
  out.reserve(s.size());
  std::u32string cps = decode_all(s);
  bool previous_cased = false;
  for (std::size_t i = 0; i < cps.size(); ++i) {
    char32_t c = cps[i];
    switch (op) {
      case CaseOp::Upper:
        unicode::append_upper(out, c);
        break;
      case CaseOp::Lower:
        append_lower_at(out, cps, i);
        break;
      case CaseOp::CaseFold:
        unicode::append_casefold(out, c);
        break;
      case CaseOp::Title:
        if (previous_cased)
          append_lower_at(out, cps, i);
        else
          unicode::append_title(out, c);
        previous_cased = unicode::is_cased(c);
        break;
      case CaseOp::Capitalize:
        if (i == 0)
          unicode::append_title(out, c);
        else
          append_lower_at(out, cps, i);
        break;
      case CaseOp::SwapCase:
        if (unicode::is_upper(c))
          append_lower_at(out, cps, i);
        else if (unicode::is_lower(c))
          unicode::append_upper(out, c);
        else
          utf8::encode(out, c);
        break;
    }
    if (out.size() > limits.max_string_bytes)
      return limit_error("max_string_bytes", limits.max_string_bytes);
  }
  return make_string(std::move(out));
}

Result<Value> no_args(const CallArgs& args, std::string_view name) {
  if (!args.positional.empty() || !args.keyword.empty())
    return type_error(std::string(name) + "() takes no arguments (" +
                      std::to_string(args.positional.size() + args.keyword.size()) + " given)");
  return Value();
}

#define CASE_METHOD(fn, op, pyname)                                                      \
  Result<Value> fn(const Value& self, const CallArgs& args, const ValueLimits& limits) { \
    if (auto a = no_args(args, "str." pyname); !a) return a.error();                     \
    return change_case(self, op, limits);                                                \
  }
CASE_METHOD(str_upper_m, CaseOp::Upper, "upper")
CASE_METHOD(str_lower_m, CaseOp::Lower, "lower")
CASE_METHOD(str_title_m, CaseOp::Title, "title")
CASE_METHOD(str_capitalize_m, CaseOp::Capitalize, "capitalize")
CASE_METHOD(str_swapcase_m, CaseOp::SwapCase, "swapcase")
CASE_METHOD(str_casefold_m, CaseOp::CaseFold, "casefold")
#undef CASE_METHOD

// Predicates: every code point satisfies `pred` (and the string is non-empty unless
// `empty_result` says otherwise).
template <bool (*pred)(char32_t)>
Result<Value> all_of(const Value& self, const CallArgs& args, std::string_view name,
                     bool empty_result) {
  if (auto a = no_args(args, name); !a) return a.error();
  std::string_view s = self.as_string();
  if (s.empty()) return Value(empty_result);
  for (std::size_t i = 0; i < s.size();)
    if (!pred(utf8::decode(s, i))) return Value(false);
  return Value(true);
}

bool alnum_cp(char32_t c) noexcept {
  return unicode::is_alpha(c) || unicode::is_decimal(c) || unicode::is_digit(c) ||
         unicode::is_numeric(c);
}
bool ascii_cp(char32_t c) noexcept {
  return c < 0x80;
}

#define PREDICATE(fn, pred, pyname, empty)                                        \
  Result<Value> fn(const Value& self, const CallArgs& args, const ValueLimits&) { \
    return all_of<pred>(self, args, "str." pyname, empty);                        \
  }
PREDICATE(str_isalpha, unicode::is_alpha, "isalpha", false)
PREDICATE(str_isdigit, unicode::is_digit, "isdigit", false)
PREDICATE(str_isdecimal, unicode::is_decimal, "isdecimal", false)
PREDICATE(str_isnumeric, unicode::is_numeric, "isnumeric", false)
PREDICATE(str_isalnum, alnum_cp, "isalnum", false)
PREDICATE(str_isspace, unicode::is_space, "isspace", false)
PREDICATE(str_isprintable, unicode::is_printable, "isprintable", true)
PREDICATE(str_isascii, ascii_cp, "isascii", true)
#undef PREDICATE

// str.islower / str.isupper: at least one character of the wanted case and none of the
// other case; a titlecase character counts as the other case for both.
template <bool (*wanted)(char32_t), bool (*other)(char32_t)>
Result<Value> all_cased(const Value& self, const CallArgs& args, std::string_view name) {
  if (auto a = no_args(args, name); !a) return a.error();
  std::string_view s = self.as_string();
  bool cased = false;
  for (std::size_t i = 0; i < s.size();) {
    char32_t c = utf8::decode(s, i);
    if (other(c) || unicode::is_title(c)) return Value(false);
    if (!cased && wanted(c)) cased = true;
  }
  return Value(cased);
}

Result<Value> str_islower(const Value& self, const CallArgs& args, const ValueLimits&) {
  return all_cased<unicode::is_lower, unicode::is_upper>(self, args, "str.islower");
}

Result<Value> str_isupper(const Value& self, const CallArgs& args, const ValueLimits&) {
  return all_cased<unicode::is_upper, unicode::is_lower>(self, args, "str.isupper");
}

Result<Value> str_istitle(const Value& self, const CallArgs& args, const ValueLimits&) {
  if (auto a = no_args(args, "str.istitle"); !a) return a.error();
  std::string_view s = self.as_string();
  bool cased = false, previous_cased = false;
  for (std::size_t i = 0; i < s.size();) {
    char32_t c = utf8::decode(s, i);
    if (unicode::is_upper(c) || unicode::is_title(c)) {
      if (previous_cased) return Value(false);
      previous_cased = cased = true;
    } else if (unicode::is_lower(c)) {
      if (!previous_cased) return Value(false);
      previous_cased = cased = true;
    } else {
      previous_cased = false;
    }
  }
  return Value(cased);
}

Result<Value> str_isidentifier(const Value& self, const CallArgs& args, const ValueLimits&) {
  if (auto a = no_args(args, "str.isidentifier"); !a) return a.error();
  std::string_view s = self.as_string();
  if (s.empty()) return Value(false);
  std::size_t i = 0;
  if (!unicode::is_xid_start(utf8::decode(s, i))) return Value(false);
  while (i < s.size())
    if (!unicode::is_xid_continue(utf8::decode(s, i))) return Value(false);
  return Value(true);
}

Result<Value> str_join(const Value& self, const CallArgs& args, const ValueLimits& limits) {
  auto b = bind(args, "join", {"iterable"}, 1, false);
  if (!b) return b.error();
  auto items = iterate(*(*b)[0]);
  if (!items) return type_error("can only join an iterable");
  std::string_view sep = self.as_string();
  std::string out;
  bool ascii = self.string_is_ascii();
  std::size_t code_points = 0;
  auto list = items->as_list();
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Value& item = list[i];
    if (!item.is_string())
      return type_error("sequence item " + std::to_string(i) + ": expected str instance, " +
                        std::string(type_name(item)) + " found");
    if (i) {
      out += sep;
      code_points += self.string_length();
    }
    out += item.as_string();
    code_points += item.string_length();
    ascii = ascii && item.string_is_ascii();
    if (out.size() > limits.max_string_bytes)
      return limit_error("max_string_bytes", limits.max_string_bytes);
  }
  if (list.size() <= 1) ascii = list.empty() || list[0].string_is_ascii();
  return Value::string_known(std::move(out), ascii, code_points);
}

Result<Value> str_format_m(const Value& self, const CallArgs& args, const ValueLimits& limits) {
  return str_format(self.as_string(), args, limits);
}

// self.format_map(mapping) through `format` (str_format, or markup_str_format for a Markup):
// the mapping's str keys become the fields.
using Formatter = Result<Value> (*)(std::string_view, const CallArgs&, const ValueLimits&);
Result<Value> format_map_with(Formatter format, const Value& self, const CallArgs& args,
                              const ValueLimits& limits) {
  auto b = bind(args, "format_map", {"mapping"}, 1, false);
  if (!b) return b.error();
  const Value& mapping = *(*b)[0];
  if (!mapping.is_dict())
    return type_error("format_map() argument must be a mapping, not " +
                      std::string(type_name(mapping)));
  std::vector<NamedArg> named;
  for (const auto& [key, value] : mapping.dict_entries())
    if (key.is_string()) named.push_back({key.as_string(), value});
  return format(self.as_string(), CallArgs{{}, named}, limits);
}

Result<Value> str_format_map(const Value& self, const CallArgs& args, const ValueLimits& limits) {
  return format_map_with(str_format, self, args, limits);
}

Result<std::int64_t> width_arg(const Value* v) {
  return int_arg(v, 0);
}

Result<char32_t> fill_arg(const Value* v, std::string_view name) {
  if (!v) return char32_t{' '};
  if (!v->is_string())
    return type_error(std::string(name) + "() argument 2 must be str, not " +
                      std::string(type_name(*v)));
  if (v->string_length() != 1)
    return type_error("The fill character must be exactly one character long");
  std::size_t i = 0;
  return utf8::decode(v->as_string(), i);
}

enum class Justify { Left, Right, Center };

Result<Value> do_justify(const Value& self, const CallArgs& args, Justify how,
                         std::string_view name, const ValueLimits& limits) {
  auto b = bind(args, name, {"width", "fillchar"}, 1, false);
  if (!b) return b.error();
  auto width = width_arg((*b)[0]);
  if (!width) return width.error();
  auto fill = fill_arg((*b)[1], name);
  if (!fill) return fill.error();
  auto length = static_cast<std::int64_t>(self.string_length());
  if (*width <= length) return self;
  std::int64_t margin = *width - length;
  if (static_cast<std::uint64_t>(*width) * 4 > limits.max_string_bytes)
    return limit_error("max_string_bytes", limits.max_string_bytes);
  std::int64_t left = 0;
  switch (how) {
    case Justify::Left:
      left = 0;
      break;
    case Justify::Right:
      left = margin;
      break;
    case Justify::Center:
      left = margin / 2 + (margin & *width & 1);
      break;
  }
  std::string fill_bytes;
  utf8::encode(fill_bytes, *fill);
  std::string out;
  for (std::int64_t k = 0; k < left; ++k) out += fill_bytes;
  out += self.as_string();
  for (std::int64_t k = 0; k < margin - left; ++k) out += fill_bytes;
  return make_string(std::move(out));
}

Result<Value> str_ljust(const Value& self, const CallArgs& args, const ValueLimits& limits) {
  return do_justify(self, args, Justify::Left, "ljust", limits);
}
Result<Value> str_rjust(const Value& self, const CallArgs& args, const ValueLimits& limits) {
  return do_justify(self, args, Justify::Right, "rjust", limits);
}
Result<Value> str_center(const Value& self, const CallArgs& args, const ValueLimits& limits) {
  return do_justify(self, args, Justify::Center, "center", limits);
}

Result<Value> str_zfill(const Value& self, const CallArgs& args, const ValueLimits& limits) {
  auto b = bind(args, "zfill", {"width"}, 1, false);
  if (!b) return b.error();
  auto width = width_arg((*b)[0]);
  if (!width) return width.error();
  auto length = static_cast<std::int64_t>(self.string_length());
  if (*width <= length) return self;
  if (static_cast<std::uint64_t>(*width) > limits.max_string_bytes)
    return limit_error("max_string_bytes", limits.max_string_bytes);
  std::string_view s = self.as_string();
  std::string out(static_cast<std::size_t>(*width - length), '0');
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    out.insert(out.begin(), s[0]);
    out.append(s.substr(1));
  } else {
    out.append(s);
  }
  return make_string(std::move(out));
}

Result<Value> do_partition(const Value& self, const CallArgs& args, bool from_right) {
  auto b = bind(args, from_right ? "rpartition" : "partition", {"sep"}, 1, false);
  if (!b) return b.error();
  const Value& sep = *(*b)[0];
  if (!sep.is_string()) return must_be_str(sep);
  std::string_view s = self.as_string(), needle = sep.as_string();
  if (needle.empty()) return value_error("empty separator");
  std::size_t at = from_right ? s.rfind(needle) : s.find(needle);
  bool ascii = self.string_is_ascii();
  if (at == std::string_view::npos) {
    Value empty("");
    if (from_right) return Value::tuple({empty, empty, self});
    return Value::tuple({self, empty, empty});
  }
  return Value::tuple({substring_value(s.substr(0, at), ascii), sep,
                       substring_value(s.substr(at + needle.size()), ascii)});
}

Result<Value> str_partition(const Value& self, const CallArgs& args, const ValueLimits&) {
  return do_partition(self, args, false);
}
Result<Value> str_rpartition(const Value& self, const CallArgs& args, const ValueLimits&) {
  return do_partition(self, args, true);
}

Result<Value> do_remove_affix(const Value& self, const CallArgs& args, bool suffix) {
  auto b = bind(args, suffix ? "removesuffix" : "removeprefix", {"affix"}, 1, false);
  if (!b) return b.error();
  const Value& affix = *(*b)[0];
  if (!affix.is_string())
    return type_error(std::string(suffix ? "removesuffix" : "removeprefix") +
                      "() argument must be str, not " + std::string(type_name(affix)));
  std::string_view s = self.as_string(), a = affix.as_string();
  if (a.empty() || s.size() < a.size()) return self;
  if (suffix ? s.substr(s.size() - a.size()) == a : s.substr(0, a.size()) == a)
    return substring_value(suffix ? s.substr(0, s.size() - a.size()) : s.substr(a.size()),
                           self.string_is_ascii());
  return self;
}

Result<Value> str_removeprefix(const Value& self, const CallArgs& args, const ValueLimits&) {
  return do_remove_affix(self, args, false);
}
Result<Value> str_removesuffix(const Value& self, const CallArgs& args, const ValueLimits&) {
  return do_remove_affix(self, args, true);
}

Result<Value> str_expandtabs(const Value& self, const CallArgs& args, const ValueLimits& limits) {
  auto b = bind(args, "expandtabs", {"tabsize"}, 0, true);
  if (!b) return b.error();
  auto tabsize = int_arg((*b)[0], 8);
  if (!tabsize) return tabsize.error();
  std::string_view s = self.as_string();
  std::string out;
  std::int64_t column = 0;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t start = i;
    char32_t c = utf8::decode(s, i);
    if (c == '\t') {
      if (*tabsize > 0) {
        std::int64_t spaces = *tabsize - (column % *tabsize);
        if (out.size() + static_cast<std::uint64_t>(spaces) > limits.max_string_bytes)
          return limit_error("max_string_bytes", limits.max_string_bytes);
        column += spaces;
        out.append(static_cast<std::size_t>(spaces), ' ');
      }
    } else {
      ++column;
      out.append(s.substr(start, i - start));
      if (c == '\n' || c == '\r') column = 0;
    }
    if (out.size() > limits.max_string_bytes)
      return limit_error("max_string_bytes", limits.max_string_bytes);
  }
  return make_string(std::move(out));
}

Result<Value> not_supported(const Value& self, std::string_view name) {
  return make_error("TemplateError", "str." + std::string(name) + "() is not supported (" +
                                         std::string(type_name(self)) + ")");
}
Result<Value> str_encode(const Value& self, const CallArgs&, const ValueLimits&) {
  return not_supported(self, "encode");
}
Result<Value> str_maketrans(const Value& self, const CallArgs&, const ValueLimits&) {
  return not_supported(self, "maketrans");
}
Result<Value> str_translate(const Value& self, const CallArgs&, const ValueLimits&) {
  return not_supported(self, "translate");
}

// ---------------------------------------------------------------------------------
// dict views and dict methods
// ---------------------------------------------------------------------------------

enum class ViewKind { Items, Keys, Values };

class DictView final : public Object {
 public:
  DictView(Value dict, ViewKind kind) : dict_(std::move(dict)), kind_(kind) {}
  std::string_view type_name() const override {
    return kind_ == ViewKind::Items  ? "dict_items"
           : kind_ == ViewKind::Keys ? "dict_keys"
                                     : "dict_values";
  }
  void repr(std::string& out) const override {
    out += type_name();
    out += '(';
    append_repr(out, materialize());
    out += ')';
  }
  bool truthy() const override { return dict_.dict_size() != 0; }
  Result<std::size_t> length() const override { return dict_.dict_size(); }
  Result<Value> iterate() const override { return materialize(); }
  Result<bool> contains(const Value& item) const override {
    switch (kind_) {
      case ViewKind::Keys: {
        std::uint64_t hash;
        if (!hash_value(item, hash))
          return type_error("unhashable type: '" + std::string(chatwire::type_name(item)) + "'");
        return dict_.dict_find(item) != nullptr;
      }
      case ViewKind::Values:
        for (const auto& entry : dict_.dict_entries())
          if (equals(entry.second, item)) return true;
        return false;
      case ViewKind::Items: {
        if (!item.is_tuple() || item.as_list().size() != 2) return false;
        const Value* found = dict_.dict_find(item.as_list()[0]);
        return found && equals(*found, item.as_list()[1]);
      }
    }
    return false;
  }

 private:
  Value materialize() const {
    std::vector<Value> items;
    items.reserve(dict_.dict_size());
    for (const auto& [key, value] : dict_.dict_entries()) {
      switch (kind_) {
        case ViewKind::Items:
          items.push_back(Value::tuple({key, value}));
          break;
        case ViewKind::Keys:
          items.push_back(key);
          break;
        case ViewKind::Values:
          items.push_back(value);
          break;
      }
    }
    return Value::list(std::move(items));
  }
  Value dict_;
  ViewKind kind_;
};

Result<Value> dict_items(const Value& self, const CallArgs& args, const ValueLimits&) {
  if (auto a = no_args(args, "dict.items"); !a) return a.error();
  return Value::make_object<DictView>(self, ViewKind::Items);
}
Result<Value> dict_keys(const Value& self, const CallArgs& args, const ValueLimits&) {
  if (auto a = no_args(args, "dict.keys"); !a) return a.error();
  return Value::make_object<DictView>(self, ViewKind::Keys);
}
Result<Value> dict_values(const Value& self, const CallArgs& args, const ValueLimits&) {
  if (auto a = no_args(args, "dict.values"); !a) return a.error();
  return Value::make_object<DictView>(self, ViewKind::Values);
}
Result<Value> dict_get(const Value& self, const CallArgs& args, const ValueLimits&) {
  // d.get('key') / d.get('key', default) with a string key, the common case in templates:
  // no argument binding, and the key's cached hash.
  if (args.keyword.empty() && (args.positional.size() == 1 || args.positional.size() == 2) &&
      args.positional[0].is_string()) {
    const Value& key = args.positional[0];
    if (const Value* found = self.dict_find(key.as_string(), key.string_hash())) return *found;
    return args.positional.size() == 2 ? args.positional[1] : Value::none();
  }
  auto b = bind(args, "get", {"key", "default"}, 1, false);
  if (!b) return b.error();
  const Value& key = *(*b)[0];
  std::uint64_t hash;
  if (!hash_value(key, hash))
    return type_error("unhashable type: '" + std::string(type_name(key)) + "'");
  if (const Value* found = self.dict_find(key)) return *found;
  return (*b)[1] ? *(*b)[1] : Value::none();
}
Result<Value> copy_self(const Value& self, const CallArgs& args, const ValueLimits&) {
  if (auto a = no_args(args, std::string(type_name(self)) + ".copy"); !a) return a.error();
  return self;  // values are immutable: a copy is indistinguishable
}

// ---------------------------------------------------------------------------------
// list / tuple methods
// ---------------------------------------------------------------------------------

Result<Value> seq_index(const Value& self, const CallArgs& args, const ValueLimits&) {
  auto b = bind(args, "index", {"value", "start", "stop"}, 1, false);
  if (!b) return b.error();
  auto items = self.as_list();
  auto length = static_cast<std::int64_t>(items.size());
  auto start = int_arg((*b)[1], 0);
  if (!start) return start.error();
  auto stop = int_arg((*b)[2], length);
  if (!stop) return stop.error();
  std::int64_t from = *start, to = *stop;
  adjust_indices(from, to, length);
  for (std::int64_t i = from; i < to; ++i)
    if (equals(items[static_cast<std::size_t>(i)], *(*b)[0])) return Value(i);
  if (self.is_tuple()) return value_error("tuple.index(x): x not in tuple");
  return value_error(to_repr(*(*b)[0]) + " is not in list");
}

Result<Value> seq_count(const Value& self, const CallArgs& args, const ValueLimits&) {
  auto b = bind(args, "count", {"value"}, 1, false);
  if (!b) return b.error();
  std::int64_t n = 0;
  for (const Value& item : self.as_list()) n += equals(item, *(*b)[0]);
  return Value(n);
}

// ---------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------

// What markupsafe.Markup does with a str method when `self` is a Markup (Markup
// overrides some of str's methods; the others are str's own).
enum class MarkupRule : std::uint8_t {
  Plain,         // str's method, result as it is (count, find, startswith, isdigit, ...)
  Keep,          // the result is a Markup (upper, strip, zfill, ...)
  EscapeSecond,  // the second argument escaped first (replace's new, ljust's fillchar), Markup
  EachItem,      // a list or tuple of Markups (split, partition, ...)
  Join,          // each item escaped, the result a Markup
  Format,        // markupsafe's EscapeFormatter (each field escaped), a Markup
  FormatMap,     // the same, with the fields from a mapping
};

struct MethodEntry {
  std::string_view name;
  MethodFn fn;
  MarkupRule markup = MarkupRule::Plain;
};

// Sorted by name (binary search); checked by the tests.
constexpr MethodEntry kStrMethods[] = {
    {"capitalize", str_capitalize_m, MarkupRule::Keep},
    {"casefold", str_casefold_m, MarkupRule::Keep},
    {"center", str_center, MarkupRule::EscapeSecond},
    {"count", str_count, MarkupRule::Plain},
    {"encode", str_encode, MarkupRule::Plain},
    {"endswith", str_endswith, MarkupRule::Plain},
    {"expandtabs", str_expandtabs, MarkupRule::Keep},
    {"find", str_find, MarkupRule::Plain},
    {"format", str_format_m, MarkupRule::Format},
    {"format_map", str_format_map, MarkupRule::FormatMap},
    {"index", str_index, MarkupRule::Plain},
    {"isalnum", str_isalnum, MarkupRule::Plain},
    {"isalpha", str_isalpha, MarkupRule::Plain},
    {"isascii", str_isascii, MarkupRule::Plain},
    {"isdecimal", str_isdecimal, MarkupRule::Plain},
    {"isdigit", str_isdigit, MarkupRule::Plain},
    {"isidentifier", str_isidentifier, MarkupRule::Plain},
    {"islower", str_islower, MarkupRule::Plain},
    {"isnumeric", str_isnumeric, MarkupRule::Plain},
    {"isprintable", str_isprintable, MarkupRule::Plain},
    {"isspace", str_isspace, MarkupRule::Plain},
    {"istitle", str_istitle, MarkupRule::Plain},
    {"isupper", str_isupper, MarkupRule::Plain},
    {"join", str_join, MarkupRule::Join},
    {"ljust", str_ljust, MarkupRule::EscapeSecond},
    {"lower", str_lower_m, MarkupRule::Keep},
    {"lstrip", str_lstrip, MarkupRule::Keep},
    {"maketrans", str_maketrans, MarkupRule::Plain},
    {"partition", str_partition, MarkupRule::EachItem},
    {"removeprefix", str_removeprefix, MarkupRule::Keep},
    {"removesuffix", str_removesuffix, MarkupRule::Keep},
    {"replace", str_replace, MarkupRule::EscapeSecond},
    {"rfind", str_rfind, MarkupRule::Plain},
    {"rindex", str_rindex, MarkupRule::Plain},
    {"rjust", str_rjust, MarkupRule::EscapeSecond},
    {"rpartition", str_rpartition, MarkupRule::EachItem},
    {"rsplit", str_rsplit, MarkupRule::EachItem},
    {"rstrip", str_rstrip, MarkupRule::Keep},
    {"split", str_split, MarkupRule::EachItem},
    {"splitlines", str_splitlines, MarkupRule::EachItem},
    {"startswith", str_startswith, MarkupRule::Plain},
    {"strip", str_strip, MarkupRule::Keep},
    {"swapcase", str_swapcase_m, MarkupRule::Keep},
    {"title", str_title_m, MarkupRule::Keep},
    {"translate", str_translate, MarkupRule::Keep},
    {"upper", str_upper_m, MarkupRule::Keep},
    {"zfill", str_zfill, MarkupRule::Keep},
};

Result<Value> markup_unescape_m(const Value& self, const CallArgs& args, const ValueLimits&) {
  auto b = bind(args, "unescape", {}, 0, false);
  if (!b) return b.error();
  return Value(html_unescape(self.as_string()));
}

Result<Value> markup_striptags_m(const Value& self, const CallArgs& args,
                                 const ValueLimits& limits) {
  auto b = bind(args, "striptags", {}, 0, false);
  if (!b) return b.error();
  return Value(markup_striptags(self.as_string(), limits));
}

// Methods that only a Markup has (sorted by name).
constexpr MethodEntry kMarkupOnlyMethods[] = {
    {"striptags", markup_striptags_m},
    {"unescape", markup_unescape_m},
};

constexpr MethodEntry kDictMethods[] = {
    {"copy", copy_self}, {"get", dict_get},       {"items", dict_items},
    {"keys", dict_keys}, {"values", dict_values},
};

constexpr MethodEntry kListMethods[] = {
    {"copy", copy_self},
    {"count", seq_count},
    {"index", seq_index},
};

constexpr MethodEntry kTupleMethods[] = {
    {"count", seq_count},
    {"index", seq_index},
};

// ImmutableSandboxedEnvironment's modifies_known_mutable (Jinja2 3.1.6).
constexpr std::string_view kListMutators[] = {"append", "clear",  "extend",  "insert",
                                              "pop",    "remove", "reverse", "sort"};
constexpr std::string_view kDictMutators[] = {"clear", "pop", "popitem", "setdefault", "update"};

std::span<const MethodEntry> methods_of(Kind kind) {
  switch (kind) {
    case Kind::String:
      return kStrMethods;
    case Kind::Dict:
      return kDictMethods;
    case Kind::List:
      return kListMethods;
    case Kind::Tuple:
      return kTupleMethods;
    default:
      return {};
  }
}

// Bit (c - 'a') is set when some method of the table starts with letter c: most
// attribute lookups are dict keys ("role", "content") and are rejected here at once.
std::uint32_t first_letters(std::span<const MethodEntry> table) {
  std::uint32_t mask = 0;
  for (const MethodEntry& e : table) mask |= 1u << (e.name[0] - 'a');
  return mask;
}

const MethodEntry* find_method(Kind kind, std::string_view name) {
  static const std::uint32_t masks[] = {first_letters(kStrMethods), first_letters(kDictMethods),
                                        first_letters(kListMethods), first_letters(kTupleMethods)};
  int which = kind == Kind::String  ? 0
              : kind == Kind::Dict  ? 1
              : kind == Kind::List  ? 2
              : kind == Kind::Tuple ? 3
                                    : -1;
  if (which < 0 || name.empty() || name[0] < 'a' || name[0] > 'z' ||
      !(masks[which] & (1u << (name[0] - 'a'))))
    return nullptr;
  auto table = methods_of(kind);
  auto it = std::lower_bound(table.begin(), table.end(), name,
                             [](const MethodEntry& e, std::string_view n) { return e.name < n; });
  if (it == table.end() || it->name != name) return nullptr;
  return &*it;
}

const MethodEntry* find_markup_only_method(std::string_view name) {
  for (const MethodEntry& e : kMarkupOnlyMethods)
    if (e.name == name) return &e;
  return nullptr;
}

// markupsafe.escape(v) of an argument or item: a Markup stays, anything else is escaped
// str(v).
Value escape_any(const Value& v) {
  if (v.is_string()) return html_escape(v);
  std::string text;
  append_str(text, v);
  std::string out;
  append_html_escaped(out, text);
  return Value::markup(std::move(out));
}

// self.name(*args) for a Markup self: str's method with Markup's rule around it.
Result<Value> call_markup_method(const MethodEntry& m, const Value& self, const CallArgs& args,
                                 const ValueLimits& limits) {
  switch (m.markup) {
    case MarkupRule::Plain:
      return m.fn(self, args, limits);
    case MarkupRule::Keep: {
      auto r = m.fn(self, args, limits);
      if (!r || !r->is_string()) return r;
      return Value::as_markup(*r);
    }
    case MarkupRule::EscapeSecond: {
      std::vector<Value> positional(args.positional.begin(), args.positional.end());
      if (positional.size() >= 2) positional[1] = escape_any(positional[1]);
      auto r = m.fn(self, CallArgs{positional, args.keyword}, limits);
      if (!r || !r->is_string()) return r;
      return Value::as_markup(*r);
    }
    case MarkupRule::EachItem: {
      auto r = m.fn(self, args, limits);
      if (!r || !r->is_sequence()) return r;
      std::vector<Value> items;
      items.reserve(r->as_list().size());
      for (const Value& item : r->as_list())
        items.push_back(item.is_string() ? Value::as_markup(item) : item);
      return r->is_list() ? Value::list(std::move(items)) : Value::tuple(std::move(items));
    }
    case MarkupRule::Join: {
      auto b = bind(args, "join", {"iterable"}, 1, false);
      if (!b) return b.error();
      auto items = iterate(*(*b)[0], limits);  // map(self.escape, iterable)
      if (!items) return items.error();
      std::vector<Value> escaped;
      escaped.reserve(items->as_list().size());
      for (const Value& item : items->as_list()) escaped.push_back(escape_any(item));
      Value list = Value::list(std::move(escaped));
      auto r = m.fn(self, CallArgs{std::span<const Value>(&list, 1), {}}, limits);
      if (!r) return r;
      return Value::as_markup(*r);
    }
    case MarkupRule::Format:
      return markup_str_format(self.as_string(), args, limits);
    case MarkupRule::FormatMap:
      return format_map_with(markup_str_format, self, args, limits);
  }
  return m.fn(self, args, limits);
}

// Markup defines its own version of the method (or has it alone).
bool markup_overrides(std::string_view name) {
  if (find_markup_only_method(name)) return true;
  const MethodEntry* m = find_method(Kind::String, name);
  return m && m->markup != MarkupRule::Plain;
}

class BoundMethod final : public Object {
 public:
  BoundMethod(Value self, std::string name) : self_(std::move(self)), name_(std::move(name)) {}
  std::string_view type_name() const override { return "builtin_function_or_method"; }
  bool is_callable() const override { return true; }
  Result<Value> call(const CallArgs& args, CallContext& context) const override {
    return call_method(self_, name_, args, context.limits);
  }
  void repr(std::string& out) const override {
    if (self_.is_markup() && markup_overrides(name_)) {  // a Python method of Markup's
      out += "<bound method Markup.";
      out += name_;
      out += " of ";
      append_repr(out, self_);
      out += '>';
      return;
    }
    out += "<built-in method ";
    out += name_;
    out += " of ";
    out += chatwire::type_name(self_);
    out += " object>";
  }

 private:
  Value self_;
  std::string name_;
};

}  // namespace

namespace detail {
// For the tests: every table sorted by name.
bool method_tables_sorted() {
  for (Kind kind : {Kind::String, Kind::Dict, Kind::List, Kind::Tuple}) {
    auto table = methods_of(kind);
    for (std::size_t i = 1; i < table.size(); ++i)
      if (!(table[i - 1].name < table[i].name)) return false;
  }
  return true;
}
}  // namespace detail

MethodFn find_method_fn(Kind kind, std::string_view name) noexcept {
  const MethodEntry* m = find_method(kind, name);
  return m ? m->fn : nullptr;
}

bool has_method(Kind kind, std::string_view name) noexcept {
  return find_method(kind, name) != nullptr;
}

bool has_method(const Value& self, std::string_view name) noexcept {
  if (self.is_markup() && find_markup_only_method(name)) return true;
  return has_method(self.kind(), name);
}

bool is_unsafe_mutator(Kind kind, std::string_view name) noexcept {
  auto in = [&](std::span<const std::string_view> names) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  switch (kind) {
    case Kind::List:
      return in(kListMutators);
    case Kind::Dict:
      return in(kDictMutators);
    default:
      return false;
  }
}

Result<Value> call_method(const Value& self, std::string_view name, const CallArgs& args,
                          const ValueLimits& limits) {
  if (self.is_markup()) [[unlikely]] {
    if (const MethodEntry* m = find_markup_only_method(name)) return m->fn(self, args, limits);
    if (const MethodEntry* m = find_method(Kind::String, name))
      return call_markup_method(*m, self, args, limits);
  }
  if (const MethodEntry* m = find_method(self.kind(), name)) return m->fn(self, args, limits);
  if (is_unsafe_mutator(self.kind(), name))
    return Value::unsafe_attribute(name, self).undefined_error();
  if (self.is_undefined()) return self.undefined_error();
  return Value::undefined_attribute(name, self).undefined_error();
}

Value bound_method(const Value& self, std::string_view name) {
  return Value::make_object<BoundMethod>(self, std::string(name));
}

Result<Value> str_upper(const Value& s, const ValueLimits& limits) {
  return change_case(s, CaseOp::Upper, limits);
}
Result<Value> str_lower(const Value& s, const ValueLimits& limits) {
  return change_case(s, CaseOp::Lower, limits);
}
Result<Value> str_title(const Value& s, const ValueLimits& limits) {
  return change_case(s, CaseOp::Title, limits);
}
Result<Value> str_capitalize(const Value& s, const ValueLimits& limits) {
  return change_case(s, CaseOp::Capitalize, limits);
}

bool is_python_whitespace(char32_t c) noexcept {
  return unicode::is_space(c);
}

}  // namespace chatwire
