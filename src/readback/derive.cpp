// Parser candidates derived from a template's own rendering of two known calls: each family's
// fitter finds where the known names, ids and argument values sit in the generated text and
// takes the markers around them exactly as rendered. To read a new shape, add a fitter to
// kFitters; a new checkpoint with known shapes and new markers needs nothing.
#include <cctype>
#include <optional>
#include <regex>

#include "readback/internal.hpp"

namespace chatwire::readback {

namespace {

using parse::CallSyntax;
using parse::Dialect;
using parse::Section;

// Strings a derived dialect's views point at while it is built (make_syntax copies them).
struct Builder {
  std::deque<std::string> store;
  Dialect d;
  std::string_view keep(std::string_view s) { return store.emplace_back(s); }
};

struct Known {
  std::string name, id;
  nlohmann::json args;  // unordered: argument order is not part of equality
};

struct JsonSpan {
  std::size_t begin, end;
  nlohmann::json value;
};

// A marker starts at a bracket or after whitespace or another marker's end...
bool starts_marker(std::string_view s, std::size_t i) {
  if (i == 0 || i >= s.size()) return true;
  char c = s[i], p = s[i - 1];
  return c == '<' || c == '[' || c == '{' || p == ' ' || p == '\n' || p == '\t' || p == '>' ||
         p == ']';
}
// The longest common suffix of a and b that starts on a marker boundary in both.
std::string_view common_suffix(std::string_view a, std::string_view b) {
  std::size_t n = 0;
  while (n < a.size() && n < b.size() && a[a.size() - 1 - n] == b[b.size() - 1 - n]) ++n;
  while (n > 0 && !(starts_marker(a, a.size() - n) && starts_marker(b, b.size() - n))) --n;
  return a.substr(a.size() - n);
}

// The end of the JSON value starting at s[i] ('{' or '['), or npos.
std::size_t json_end(std::string_view s, std::size_t i) {
  int depth = 0;
  bool in_string = false, escape = false;
  for (std::size_t k = i; k < s.size(); ++k) {
    char c = s[k];
    if (in_string) {
      if (escape)
        escape = false;
      else if (c == '\\')
        escape = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return k + 1;
    }
  }
  return std::string_view::npos;
}

// The JSON objects and arrays in s, left to right, not nested in one another.
std::vector<JsonSpan> json_values(std::string_view s) {
  std::vector<JsonSpan> out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '{' && s[i] != '[') continue;
    std::size_t e = json_end(s, i);
    if (e == std::string_view::npos) continue;
    auto v = nlohmann::json::parse(s.substr(i, e - i), nullptr, false);
    if (v.is_discarded()) continue;
    out.push_back({i, e, std::move(v)});
    i = e - 1;
  }
  return out;
}

// The keys of a call object holding the known name, arguments and id.
struct CallKeys {
  std::string name, args, id;
  bool name_as_key = false;  // {"NAME": {arguments}}: no name or arguments key
};
std::optional<CallKeys> call_keys(const nlohmann::json& obj, const Known& k) {
  if (!obj.is_object()) return std::nullopt;
  if (obj.size() == 1 && obj.begin().key() == k.name && obj.begin().value() == k.args) {
    CallKeys keyed;
    keyed.name_as_key = true;
    return keyed;
  }
  CallKeys keys;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const auto& v = it.value();
    if (v.is_string() && v.get<std::string>() == k.name && keys.name.empty())
      keys.name = it.key();
    else if (v == k.args)
      keys.args = it.key();
    else if (v.is_string() && !k.id.empty() && v.get<std::string>() == k.id)
      keys.id = it.key();
  }
  if (keys.name.empty() || keys.args.empty()) return std::nullopt;
  return keys;
}

// The markers that end the assistant's turn. Text that reaches the parser past one (a backend
// that keeps special tokens and reads on) is not the message: a marker the template writes only
// at a turn's end ends the output (what follows is reported, after_end); one it also writes
// inside a turn is framing, removed where it stands. A marker the parser already handles either
// way is left as it is.
void add_turn_ends(Dialect& d, const std::vector<std::string>& ends,
                   const std::vector<std::string>& inner) {
  auto has = [](const std::vector<std::string_view>& v, std::string_view m) {
    return std::find(v.begin(), v.end(), m) != v.end();
  };
  for (const auto& m : ends) {
    const bool framing = std::find(inner.begin(), inner.end(), m) != inner.end();
    auto& list = framing ? d.dropped : d.end_tokens;
    if (!has(d.dropped, m) && !has(d.end_tokens, m)) list.push_back(m);
  }
}

void add_dropped(Builder& b, std::string_view leftover) {
  static const std::regex marker(R"(<[^<> \t\n\r\f\v]{1,64}>|\[[A-Z_]{2,32}\])");
  std::string s(trim(leftover));
  for (std::sregex_iterator it(s.begin(), s.end(), marker), end; it != end; ++it)
    b.d.dropped.push_back(b.keep(it->str()));
}

}  // namespace

std::string_view leading_marker(std::string_view s) {
  static const std::regex marker(R"(^\s*(<[^<> \t\n\r\f\v]{1,64}>|\[[A-Z_]{2,32}\]))");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_search(s.begin(), s.end(), m, marker)) return {};
  return trim(s.substr(0, static_cast<std::size_t>(m.length(0))));
}

namespace {

// The Markdown code fence (``` or ~~~) at the start of s (after whitespace), or "": a section
// closer that is no tag (a fenced block of calls).
std::string_view leading_fence(std::string_view s) {
  std::size_t b = 0;
  while (b < s.size() && (s[b] == ' ' || s[b] == '\n' || s[b] == '\t' || s[b] == '\r')) ++b;
  if (b == s.size() || (s[b] != '`' && s[b] != '~')) return {};
  std::size_t e = b;
  while (e < s.size() && s[e] == s[b]) ++e;
  return e - b >= 3 ? s.substr(b, e - b) : std::string_view();
}

// A section's closer: the tag at the start of `rest`, else a code fence there.
std::string_view leading_closer(std::string_view rest) {
  std::string_view tag = leading_marker(rest);
  return tag.empty() ? leading_fence(rest) : tag;
}

// Splits the text between two calls (`between`) and before the first (`before`) into the call
// opener (their common suffix), the closer (the rest of `between`) and a section opener (the
// rest of `before`).
struct Frame {
  std::string_view section_open, call_open, call_close;
};
Frame split_frame(std::string_view before, std::string_view between) {
  Frame f;
  f.call_open = common_suffix(before, between);
  f.section_open = trim(before.substr(0, before.size() - f.call_open.size()));
  f.call_close = trim(between.substr(0, between.size() - f.call_open.size()));
  f.call_open = trim(f.call_open);
  return f;
}

// Removes `prefix` (after leading whitespace) from the start of `s`; what follows, trimmed.
std::string_view after_prefix(std::string_view s, std::string_view prefix) {
  s = trim(s);
  if (!prefix.empty() && s.substr(0, prefix.size()) == prefix) s.remove_prefix(prefix.size());
  return trim(s);
}

// ---- JSON call objects: {"name": .., "arguments": ..} in markers, one each or one list ----
std::optional<Dialect> fit_json(std::string_view s, const std::vector<Known>& known, Builder& b) {
  auto values = json_values(s);
  Dialect& d = b.d;
  d.syntax = CallSyntax::kJsonObject;
  auto set_keys = [&](const CallKeys& keys) {
    if (keys.name_as_key) {
      d.name_as_key = true;
      return;
    }
    d.name_keys = {b.keep(keys.name)};
    d.args_keys = {b.keep(keys.args)};
    if (!keys.id.empty()) d.id_keys = {b.keep(keys.id)};
  };
  for (const auto& v : values) {  // one list holding every call
    if (!v.value.is_array() || v.value.size() != known.size()) continue;
    std::optional<CallKeys> keys;
    for (std::size_t i = 0; i < known.size(); ++i) {
      keys = call_keys(v.value[i], known[i]);
      if (!keys) break;
    }
    if (!keys) continue;
    set_keys(*keys);
    std::string_view open = trim(s.substr(0, v.begin));
    std::string_view rest = s.substr(v.end);
    std::string_view close = open.empty() ? std::string_view() : leading_closer(rest);
    // Name-keyed objects only inside markers: bare, any JSON answer would look like a call.
    if (open.empty() && d.name_as_key) return std::nullopt;
    if (open.empty()) {
      d.bare_json = true;
      d.args_required = true;  // bare: see below
    } else
      d.sections = {{b.keep(open), b.keep(close)}};
    add_dropped(b, rest.substr(rest.find(close) + close.size()));
    return d;
  }
  // One object per call.
  std::vector<const JsonSpan*> spans;
  std::optional<CallKeys> keys;
  for (const auto& v : values) {
    if (spans.size() == known.size()) break;
    auto k = call_keys(v.value, known[spans.size()]);
    if (!k) continue;
    keys = k;
    spans.push_back(&v);
  }
  if (spans.size() != known.size() || !keys) return std::nullopt;
  set_keys(*keys);
  std::string_view before = s.substr(0, spans[0]->begin);
  std::string_view after = s.substr(spans.back()->end);
  Frame f;
  if (known.size() >= 2) {
    f = split_frame(before, s.substr(spans[0]->end, spans[1]->begin - spans[0]->end));
  } else {
    f.call_open = trim(before);
    if (!f.call_open.empty()) f.call_close = leading_marker(after);
  }
  if (f.call_open.empty() && !f.section_open.empty() && trim(f.call_close).empty()) {
    // Several objects in one section (one per line).
    std::string_view close = leading_closer(after);
    d.sections = {{b.keep(f.section_open), b.keep(close)}};
    add_dropped(b, after_prefix(after, close));
    return d;
  }
  if (f.call_open.empty()) {
    if (d.name_as_key) return std::nullopt;  // bare name-keyed objects: see above
    d.bare_json = true;
    // A bare object is a call only with its arguments key, as the llama3_json row and vLLM's
    // parser read it: an answer that is JSON with a "name" (`{"name": "Bob", "age": 3}`) is not
    // a call to Bob.
    d.args_required = true;
    if (trim(f.call_close) == ";")
      d.bare_separators = true;
    else if (!f.call_close.empty())
      return std::nullopt;
    f.call_close = {};
  } else {
    d.sections = {{b.keep(f.call_open), b.keep(f.call_close)}};
  }
  if (!f.section_open.empty()) add_dropped(b, f.section_open);
  add_dropped(b, after_prefix(after, f.call_close));
  return d;
}

// ---- a header naming the call, then JSON arguments: name<sep>{..} in markers ----
std::optional<Dialect> fit_header_json(std::string_view s, const std::vector<Known>& known,
                                       Builder& b) {
  auto values = json_values(s);
  struct Call {
    std::size_t name_at, args_at, args_end;
  };
  std::vector<Call> calls;
  std::size_t from = 0;
  for (const auto& v : values) {
    if (calls.size() == known.size()) break;
    const Known& k = known[calls.size()];
    if (v.begin < from || v.value != k.args) continue;
    std::size_t at = s.substr(0, v.begin).rfind(k.name);
    if (at == std::string_view::npos || at < from) return std::nullopt;
    calls.push_back({at, v.begin, v.end});
    from = v.end;
  }
  if (calls.size() != known.size()) return std::nullopt;
  Dialect& d = b.d;
  d = parse::Dialect{};
  d.syntax = CallSyntax::kHeaderJson;
  // The header between the name and the arguments: [id marker, id,] separator.
  std::string_view header = s.substr(calls[0].name_at + known[0].name.size(),
                                     calls[0].args_at - calls[0].name_at - known[0].name.size());
  std::string_view fence;
  if (auto at = header.find("```json"); at != std::string_view::npos) {
    d.fenced_args = true;
    fence = "```";
    header = header.substr(0, at);
  }
  if (!known[0].id.empty()) {
    if (auto at = header.find(known[0].id); at != std::string_view::npos) {
      d.id_marker = b.keep(trim(header.substr(0, at)));
      header = header.substr(at + known[0].id.size());
    }
  }
  std::string_view sep = trim(header).empty() ? header : trim(header);
  if (sep.empty()) return std::nullopt;
  d.header_end = {b.keep(sep)};
  std::string_view before = s.substr(0, calls[0].name_at);
  std::string_view after = s.substr(calls.back().args_end);
  // The id before the name: `opener id<id_marker>name<header_end>`.
  std::vector<std::size_t> id_at;
  if (d.id_marker.empty() && !known[0].id.empty()) {
    for (std::size_t i = 0; i < calls.size(); ++i) {
      std::size_t from = i == 0 ? 0 : calls[i - 1].args_end;
      std::size_t at = s.substr(0, calls[i].name_at).rfind(known[i].id);
      if (at == std::string_view::npos || at < from) break;
      id_at.push_back(at);
    }
    if (id_at.size() == calls.size()) {
      std::size_t id_end = id_at[0] + known[0].id.size();
      d.id_marker = b.keep(trim(s.substr(id_end, calls[0].name_at - id_end)));
      if (d.id_marker.empty()) return std::nullopt;
      d.id_first = true;
      before = s.substr(0, id_at[0]);
      for (std::size_t i = 0; i < calls.size(); ++i) calls[i].name_at = id_at[i];
    }
  }
  auto strip_fence = [&](std::string_view t) {
    std::string_view u = trim(t);
    if (!fence.empty() && u.substr(0, fence.size()) == fence) {
      std::size_t at = t.find(fence);
      t = t.substr(at + fence.size());
    }
    return t;
  };
  Frame f;
  if (known.size() >= 2) {
    std::string_view between =
        strip_fence(s.substr(calls[0].args_end, calls[1].name_at - calls[0].args_end));
    if (trim(before).empty() && !trim(between).empty()) {  // the first call has no opener
      d.header_at_start = true;
      f.call_open = trim(between);
    } else {
      f = split_frame(before, between);
    }
  } else {
    f.call_open = trim(before);
  }
  if (f.call_open.empty()) return std::nullopt;
  d.call_open = b.keep(f.call_open);
  d.call_close = b.keep(f.call_close);
  after = strip_fence(after);
  std::string_view rest = after_prefix(after, f.call_close);
  if (!f.section_open.empty()) {
    d.section_open = b.keep(f.section_open);
    std::string_view close = leading_marker(rest);
    d.section_close = b.keep(close);
    rest = after_prefix(rest, close);
  }
  add_dropped(b, rest);
  return d;
}

// ---- XML: a call element naming the function, one element per parameter ----

// How a known argument value may be written as an element's text.
std::vector<std::string> value_spellings(const nlohmann::json& v) {
  if (v.is_string()) return {v.get<std::string>()};
  if (v.is_boolean())
    return v.get<bool>() ? std::vector<std::string>{"true", "True"}
                         : std::vector<std::string>{"false", "False"};
  return {v.dump()};
}

// Drops an attribute opening (` name="`, ` name=`) from the end of a marker: the engine reads
// `name="x"` attributes itself.
std::string_view strip_attribute(std::string_view marker, bool& attribute) {
  for (std::string_view tail : {" name=\"", " name='", " name="}) {
    if (marker.size() > tail.size() && marker.substr(marker.size() - tail.size()) == tail) {
      attribute = true;
      return marker.substr(0, marker.size() - tail.size());
    }
  }
  return marker;
}

std::optional<Dialect> fit_xml(std::string_view s, const std::vector<Known>& known, Builder& b) {
  struct Param {
    std::size_t key_at, key_end, value_at, value_end;
  };
  struct Call {
    std::size_t name_at, name_end;
    std::vector<Param> params;
  };
  std::vector<Call> calls;
  std::size_t pos = 0;
  for (const Known& k : known) {
    if (!k.args.is_object() || k.args.empty()) return std::nullopt;
    std::size_t at = s.find(k.name, pos);
    if (at == std::string_view::npos) return std::nullopt;
    Call c{at, at + k.name.size(), {}};
    pos = c.name_end;
    for (auto it = k.args.begin(); it != k.args.end(); ++it) {
      std::size_t key = s.find(it.key(), pos);
      if (key == std::string_view::npos) return std::nullopt;
      std::size_t value = std::string_view::npos, len = 0;
      for (const auto& spelling : value_spellings(it.value())) {
        std::size_t v = s.find(spelling, key + it.key().size());
        if (v != std::string_view::npos && v < value) value = v, len = spelling.size();
      }
      if (value == std::string_view::npos) return std::nullopt;
      c.params.push_back({key, key + it.key().size(), value, value + len});
      pos = value + len;
    }
    calls.push_back(std::move(c));
  }
  // nlohmann::json orders keys; the rendered order may differ, so sort by position.
  for (auto& c : calls)
    std::sort(c.params.begin(), c.params.end(),
              [](const Param& x, const Param& y) { return x.key_at < y.key_at; });
  const Call& c0 = calls[0];
  std::string_view name_gap = s.substr(c0.name_end, c0.params[0].key_at - c0.name_end);
  std::string_view key_gap =
      s.substr(c0.params[0].key_end, c0.params[0].value_at - c0.params[0].key_end);
  // Between two parameters: the value's closer and the next parameter's opener. With one
  // parameter per call, the opener comes from the second call's first parameter.
  std::string_view param_gap;
  if (c0.params.size() >= 2) {
    param_gap = s.substr(c0.params[0].value_end, c0.params[1].key_at - c0.params[0].value_end);
  } else {
    return std::nullopt;
  }
  Dialect& d = b.d;
  d = parse::Dialect{};
  d.syntax = CallSyntax::kXmlParams;
  d.untyped = parse::UntypedValues::kJsonGuess;
  bool attr = false;
  std::string_view param_open = common_suffix(name_gap, param_gap);
  std::string_view name_end = trim(name_gap.substr(0, name_gap.size() - param_open.size()));
  std::string_view value_close = trim(param_gap.substr(0, param_gap.size() - param_open.size()));
  param_open = strip_attribute(trim(param_open), attr);
  if (param_open.empty() || value_close.empty()) return std::nullopt;
  // The key's closer and the value's opener ("</arg_key>\n<arg_value>", ">", "\">").
  std::string_view key_close = trim(key_gap);
  if (attr) {
    if (key_close.empty() || key_close[0] != '"') {
      if (key_close.empty() || key_close[0] != '\'') return std::nullopt;
    }
    key_close = ">";
  }
  std::string_view value_open;
  if (auto split = key_close.find("><"); split != std::string_view::npos) {
    value_open = trim(key_close.substr(split + 1));
    key_close = key_close.substr(0, split + 1);
  } else if (auto ws = key_close.find_first_of(" \n\t"); ws != std::string_view::npos) {
    value_open = trim(key_close.substr(ws));
    key_close = key_close.substr(0, ws);
  }
  if (key_close.empty()) return std::nullopt;
  if (!key_gap.empty() && key_gap.back() == '\n' && !param_gap.empty() && param_gap[0] == '\n') {
    d.framing = parse::ValueFraming::kStripOneNewline;
    // Markers on lines of their own: a value may quote them (code), so a close is checked by
    // what follows it, as for the qwen3_coder row (see Dialect::value_close_checked).
    d.value_close_checked = true;
  }
  // The call's opener and closer.
  std::string_view before = s.substr(0, c0.name_at);
  bool call_attr = false;
  Frame f;
  std::size_t last_end = calls.back().params.back().value_end;
  std::string_view after = s.substr(last_end);
  auto after_value = [&](std::string_view t) { return after_prefix(t, value_close); };
  if (calls.size() >= 2) {
    std::size_t e0 = c0.params.back().value_end;
    std::string_view between = s.substr(e0, calls[1].name_at - e0);
    between = between.substr(between.find(value_close) + value_close.size());
    f = split_frame(before, between);
  } else {
    f.call_open = trim(before);
  }
  f.call_open = strip_attribute(f.call_open, call_attr);
  if (f.call_open.empty()) return std::nullopt;
  // The name's end: the first marker character after the name ("\n" for GLM's bare names).
  std::string_view name_rest = name_end;
  if (call_attr && !name_rest.empty() && (name_rest[0] == '"' || name_rest[0] == '\''))
    name_rest.remove_prefix(1);
  if (call_attr) name_rest = ">";
  d.call_open = b.keep(f.call_open);
  d.call_close = b.keep(f.call_close);
  d.section_open = b.keep(f.section_open);
  if (name_rest.empty()) {
    d.name_end = {"\n"};
    d.name_stop = {b.keep(param_open), b.keep(f.call_close)};
  } else {
    d.name_end = {b.keep(name_rest)};
  }
  d.param_open = b.keep(param_open);
  d.param_name_end = b.keep(key_close);
  d.value_open = b.keep(value_open);
  d.value_close = b.keep(value_close);
  std::string_view rest = after_prefix(after_value(after), f.call_close);
  if (!f.section_open.empty()) {
    std::string_view close = leading_marker(rest);
    d.section_close = b.keep(close);
    rest = after_prefix(rest, close);
  }
  add_dropped(b, rest);
  return d;
}

// ---- pythonic: [f(a=1), g(b='x')] or f(a=1)\ng(b=2), bare or in markers ----
std::optional<Dialect> fit_pythonic(std::string_view s, const std::vector<Known>& known,
                                    Builder& b) {
  std::size_t at = s.find(known[0].name + "(");
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t last = s.find(known.back().name + "(", at);
  if (last == std::string_view::npos) return std::nullopt;
  std::size_t close_paren = s.find(')', last);
  if (close_paren == std::string_view::npos) return std::nullopt;
  std::string_view open = trim(s.substr(0, at));
  std::string_view after = trim(s.substr(close_paren + 1));
  bool list = !open.empty() && open.back() == '[';
  if (list) {
    open = trim(open.substr(0, open.size() - 1));
    if (after.empty() || after[0] != ']') return std::nullopt;
    after = trim(after.substr(1));
  }
  Dialect& d = b.d;
  d = parse::Dialect{};
  d.syntax = CallSyntax::kPythonic;
  std::string_view close = open.empty() ? std::string_view() : leading_closer(after);
  after = after_prefix(after, close);
  if (open.empty()) {
    if (!list) return std::nullopt;
    d.pythonic_bare = true;
  } else {
    d.pythonic_sections = {{b.keep(open), b.keep(close)}};
  }
  add_dropped(b, after);
  return d;
}

// ---- key-value: call:f{city:<q>..<q>,days:3} in markers, strings between quote tokens ----
std::optional<Dialect> fit_key_value(std::string_view s, const std::vector<Known>& known,
                                     Builder& b) {
  std::size_t name_at = s.find(known[0].name + "{");
  if (name_at == std::string_view::npos) return std::nullopt;
  // The string argument and its quote token: key ':' quote value quote.
  const Known& k = known[0];
  std::string key, value;
  for (auto it = k.args.begin(); it != k.args.end(); ++it)
    if (it.value().is_string()) key = it.key(), value = it.value().get<std::string>();
  if (key.empty()) return std::nullopt;
  std::size_t key_at = s.find(key + ":", name_at);
  std::size_t value_at = s.find(value, key_at);
  if (key_at == std::string_view::npos || value_at == std::string_view::npos) return std::nullopt;
  std::size_t q_at = key_at + key.size() + 1;
  std::string_view quote = s.substr(q_at, value_at - q_at);
  std::size_t value_end = value_at + value.size();
  if (quote.empty() || s.substr(value_end, quote.size()) != quote) return std::nullopt;
  // The section around the call: its opening marker, then the prefix before the name.
  std::string_view before = s.substr(0, name_at);
  std::size_t open_end = before.rfind('>');
  if (open_end == std::string_view::npos) return std::nullopt;
  std::string_view open = trim(before.substr(0, open_end + 1));
  std::string_view prefix = before.substr(open_end + 1);
  // The call's body ends at its closing brace, strings skipped.
  std::size_t pos = name_at + known[0].name.size(), depth = 0;
  for (; pos < s.size(); ++pos) {
    if (s.substr(pos, quote.size()) == quote) {
      std::size_t e = s.find(quote, pos + quote.size());
      if (e == std::string_view::npos) return std::nullopt;
      pos = e + quote.size() - 1;
    } else if (s[pos] == '{') {
      ++depth;
    } else if (s[pos] == '}' && --depth == 0) {
      break;
    }
  }
  if (pos >= s.size()) return std::nullopt;
  std::string_view close = leading_marker(s.substr(pos + 1));
  if (open.empty() || close.empty()) return std::nullopt;
  Dialect& d = b.d;
  d.syntax = CallSyntax::kKeyValue;
  d.pythonic_sections = {{b.keep(open), b.keep(close)}};
  d.kv_prefix = b.keep(trim(prefix));
  d.kv_quote = b.keep(quote);
  // What follows the last call (the next turn's opener) is not content.
  std::size_t last = s.rfind(close);
  add_dropped(b, s.substr(last + close.size()));
  return d;
}

struct Fitter {
  const char* family;
  std::optional<Dialect> (*fit)(std::string_view, const std::vector<Known>&, Builder&);
};
// The derivation table, tried in this order.
constexpr Fitter kFitters[] = {
    {"json", fit_json},         {"header_json", fit_header_json}, {"xml", fit_xml},
    {"pythonic", fit_pythonic}, {"key_value", fit_key_value},
};

std::string describe(const Dialect& d) {
  std::string out(parse::family_name(d.syntax));
  auto add = [&](const char* key, std::string_view v) {
    if (!v.empty()) out += std::string(" ") + key + "=" + nlohmann::json(v).dump();
  };
  add("think", d.think_open);
  add("recipient", d.recipient_open);
  add("message", d.recipient_header);
  for (const auto& s : d.sections) add("open", s.open), add("close", s.close);
  for (const auto& s : d.pythonic_sections) add("open", s.open), add("close", s.close);
  add("section", d.section_open);
  add("call", d.call_open);
  add("call_close", d.call_close);
  for (auto h : d.header_end) add("header_end", h);
  add("id_marker", d.id_marker);
  add("param", d.param_open);
  add("value_close", d.value_close);
  add("prefix", d.kv_prefix);
  add("quote", d.kv_quote);
  return out;
}

// A marker holding a call's name or id fits only that call: such a candidate would pass the
// round trip by accident, so it is not one.
bool names_in_markers(const Dialect& d, const std::vector<Known>& known) {
  std::vector<std::string_view> markers = {
      d.section_open, d.section_close, d.call_open,   d.call_close, d.id_marker,
      d.param_open,   d.value_open,    d.value_close, d.kv_prefix,  d.recipient_header};
  for (const auto& s : d.sections) markers.insert(markers.end(), {s.open, s.close});
  for (const auto& s : d.pythonic_sections) markers.insert(markers.end(), {s.open, s.close});
  for (auto v : d.header_end) markers.push_back(v);
  for (auto v : d.dropped) markers.push_back(v);
  for (auto m : markers) {
    for (const Known& k : known)
      if (m.find(k.name) != std::string_view::npos ||
          (!k.id.empty() && m.find(k.id) != std::string_view::npos))
        return true;
    // Nor may a marker hold the conversation's own text (a question the template moved).
    for (std::string_view text : conversation_texts())
      if (m.find(text.substr(0, 12)) != std::string_view::npos) return true;
  }
  return false;
}

// Messages routed by recipient (Muse Glimmer): the reasoning is a message to a recipient of its
// own (`to=self<|message|>...<|eom|>`), then each call or answer a new message whose header
// names its recipient (`<|start|>assistant to=get_weather<|message|>`). Read from where the
// known reasoning and calls sit; `calls_text` is the text with the reasoning message, the
// message ends and the headers removed, for the call fitters.
struct RecipientMessages {
  std::string open, close, header, reasoning_name, end, calls_text;
};
bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}
std::optional<RecipientMessages> recipient_messages(std::string_view g, std::string_view reasoning,
                                                    const std::vector<Known>& known) {
  if (reasoning.empty() || known.empty()) return std::nullopt;
  const std::size_t at = g.find(reasoning);
  if (at == std::string_view::npos) return std::nullopt;
  RecipientMessages m;
  // Before the reasoning: OPEN NAME CLOSE, e.g. "to=" "self" "<|message|>".
  std::string_view before = trim(g.substr(0, at));
  static const std::regex trailing(R"((<[^<> \t\n\r\f\v]{1,64}>)$)");
  std::match_results<std::string_view::const_iterator> found;
  if (!std::regex_search(before.begin(), before.end(), found, trailing)) return std::nullopt;
  m.close = found.str(1);
  std::string_view head = before.substr(0, before.size() - m.close.size());
  std::size_t name_at = head.size();
  while (name_at > 0 && is_name_char(head[name_at - 1])) --name_at;
  m.reasoning_name = std::string(head.substr(name_at));
  m.open = std::string(head.substr(0, name_at));
  if (m.reasoning_name.empty() || m.open.empty() || m.open.size() > 16 ||
      m.open.find_first_of(" \t\n<>") != std::string::npos)
    return std::nullopt;
  // After it: the message end, then the next message's header before the first call's name.
  std::string_view rest = g.substr(at + reasoning.size());
  m.end = std::string(leading_marker(rest));
  if (m.end.empty()) return std::nullopt;
  rest = after_prefix(rest, m.end);
  const std::string first = m.open + known[0].name + m.close;
  const std::size_t h = rest.find(first);
  if (h == std::string_view::npos || h > 64) return std::nullopt;
  m.header = std::string(rest.substr(0, h)) + m.open;
  // Every call's message: strip the headers (a name between header and close) and the ends.
  std::string calls(rest);
  for (std::size_t p = calls.find(m.header); p != std::string::npos; p = calls.find(m.header, p)) {
    std::size_t q = p + m.header.size();
    while (q < calls.size() && is_name_char(calls[q])) ++q;
    if (calls.compare(q, m.close.size(), m.close) != 0) return std::nullopt;
    calls.erase(p, q + m.close.size() - p);
  }
  for (std::size_t p = calls.find(m.end); p != std::string::npos; p = calls.find(m.end, p))
    calls.erase(p, m.end.size());
  m.calls_text = std::move(calls);
  return m;
}

}  // namespace

// The reasoning markers of the template as measured (the profile), or, when the profile has
// none, read from where the known reasoning sits in the generated text.
void reasoning_markers(const RoundTrip& trip, const probe::Profile& profile, std::string& open,
                       std::string& close) {
  open = std::string(trim(profile.reasoning.open.value_or("")));
  close = std::string(trim(profile.reasoning.close.value_or("")));
  if (!close.empty() || trip.expected.reasoning_content.empty()) return;
  std::string_view g = trip.generated;
  std::size_t at = g.find(trip.expected.reasoning_content);
  if (at == std::string_view::npos) return;
  open = std::string(trim(g.substr(0, at)));
  std::string_view rest = g.substr(at + trip.expected.reasoning_content.size());
  close = std::string(leading_marker(rest));
  if (close.empty()) open.clear();
}

parse::Syntax reasoning_only(const std::string& open, const std::string& close,
                             const std::vector<std::string>& turn_ends,
                             const std::vector<std::string>& inner_ends) {
  Dialect d;
  d.think_open = open;
  d.think_close = close;
  add_turn_ends(d, turn_ends, inner_ends);
  return parse::make_syntax(d, "derived",
                            "reasoning " + nlohmann::json(open).dump() + " .. " +
                                nlohmann::json(close).dump() + "; no tool calls");
}

std::vector<parse::Syntax> derive_candidates(const RoundTrip& trip, const probe::Profile& profile) {
  std::vector<parse::Syntax> out;
  if (!trip.applicable || trip.expected.tool_calls.empty()) return out;
  std::vector<Known> known;
  for (std::size_t i = 0; i < trip.expected.tool_calls.size(); ++i) {
    const auto& c = trip.expected.tool_calls[i];
    known.push_back({c.name, i < trip.call_ids.size() ? trip.call_ids[i] : "",
                     nlohmann::json::parse(c.arguments)});
  }
  std::string open, close;
  reasoning_markers(trip, profile, open, close);
  // The calls follow the reasoning block.
  std::string_view s = trip.generated;
  if (!trip.expected.reasoning_content.empty()) {
    std::size_t at = s.find(trip.expected.reasoning_content);
    if (at != std::string_view::npos) {
      s = s.substr(at + trip.expected.reasoning_content.size());
      if (!close.empty())
        if (auto c = s.find(close); c != std::string_view::npos) s = s.substr(c + close.size());
    }
  } else {  // an empty reasoning block before the calls
    s = after_empty_block(s, open, close, trip.reasoning_prefilled);
  }
  // A recipient header before the calls (`to=get_weather<|message|>`): a plain word, the first
  // call's name, then a marker.
  std::string recipient_open, recipient_close;
  std::string_view unstripped = s;
  {
    std::string_view t = trim(s);
    std::size_t at = t.find(known[0].name);
    std::string_view word = at == std::string_view::npos ? "" : t.substr(0, at);
    bool plain = !word.empty() && word.size() <= 32 &&
                 word.find_first_of(" \t\n<>[]{}\"'") == std::string_view::npos;
    std::string_view marker = plain ? leading_marker(t.substr(at + known[0].name.size())) : "";
    if (plain && !marker.empty() && t.substr(at + known[0].name.size(), marker.size()) == marker) {
      recipient_open = std::string(word);
      recipient_close = std::string(marker);
      s = t.substr(at + known[0].name.size() + marker.size());
    }
  }
  // Messages routed by recipient: every fitter on the calls' text alone, the routing on top.
  if (auto m = recipient_messages(trip.generated, trip.expected.reasoning_content, known)) {
    for (const auto& fitter : kFitters) {
      Builder b;
      auto d = fitter.fit(m->calls_text, known, b);
      if (!d || names_in_markers(*d, known)) continue;
      d->think_open = {};
      d->think_close = b.keep(m->end);
      d->recipient_open = b.keep(m->open);
      d->recipient_close = b.keep(m->close);
      d->recipient_header = b.keep(m->header);
      d->reasoning_recipient = b.keep(m->reasoning_name);
      d->dropped.push_back(b.keep(m->end));
      add_turn_ends(*d, trip.turn_ends, trip.inner_ends);
      out.push_back(parse::make_syntax(*d, "derived", describe(*d)));
    }
  }
  // Every fitter on the text as it is, then (when it has one) without the recipient header.
  for (bool strip : {false, true}) {
    if (strip && recipient_open.empty()) break;
    for (const auto& fitter : kFitters) {
      Builder b;
      auto d = fitter.fit(strip ? s : unstripped, known, b);
      if (!d || names_in_markers(*d, known)) continue;
      d->think_open = b.keep(open);
      d->think_close = b.keep(close);
      if (strip) {
        d->recipient_open = b.keep(recipient_open);
        d->recipient_close = b.keep(recipient_close);
      }
      // Text that reaches the parser past a stop (the end-of-turn markers) is not content.
      add_turn_ends(*d, trip.turn_ends, trip.inner_ends);
      out.push_back(parse::make_syntax(*d, "derived", describe(*d)));
    }
  }
  return out;
}

}  // namespace chatwire::readback
