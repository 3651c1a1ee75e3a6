// A region's value: its content parser on the body (text, int, float, bool, json with the
// dialect knobs, xml-inline, kv-lines), then the field's transform template with the open
// pattern's named captures, as transformers' content_parsers.process_field computes it.
#include "response/internal.hpp"
#include "util/utf8.hpp"

namespace chatwire::response {

namespace {

namespace utf8 = util::utf8;

Error from_py(const PyResult& r, const std::string& scope) {
  Error e = r.error;
  if (!scope.empty()) e.path = scope;
  return e;
}

// \w as Python's re reads it in a str pattern: letters, numbers and '_'.
bool word_char(char32_t c) {
  if (c < 0x80)
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  static const Limits limits;
  static const auto re = Regex::python("\\w", "", limits);
  std::string s;
  utf8::append(s, c);
  auto m = re->search(s, 0, false);
  return m && m->found == Regex::Found::kComplete;
}

// re.sub(r"(?<=[{,])(\w+):", r'"\1":', text): bare keys after '{' or ',' get quotes.
std::string quote_bare_keys(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (i > 0 && (text[i - 1] == '{' || text[i - 1] == ',')) {
      std::size_t j = i;
      while (j < text.size()) {
        std::size_t next = j;
        if (!word_char(utf8::decode(text, next))) break;
        j = next;
      }
      if (j > i && j < text.size() && text[j] == ':') {
        out += '"';
        out.append(text.substr(i, j - i));
        out += "\":";
        i = j + 1;
        continue;
      }
    }
    std::size_t next = i;
    utf8::decode(text, next);
    out.append(text.substr(i, next - i));
    i = next;
  }
  return out;
}

std::string text_value(std::string_view body, const ContentParser& p) {
  return std::string(p.strip ? py_strip(body) : body);
}

Result<Json> parse_content(std::string_view body, const ContentParser& p, const Limits& limits);

Result<Json> parse_json(std::string_view body, const ContentParser& p, const Limits& limits) {
  if (!p.string_delims.empty() &&
      (body.find('\x01') != std::string_view::npos || body.find('\x02') != std::string_view::npos))
    return error_of("ValueError",
                    "json: input contains reserved sentinel characters (\\x01/\\x02); cannot parse "
                    "safely.");
  std::string working(body);
  std::vector<std::string> captured;
  // re.sub(escape(open) + "(.*?)" + escape(close), ..., flags=DOTALL): leftmost, shortest.
  for (const auto& [open, close] : p.string_delims) {
    std::string next;
    std::size_t i = 0;
    while (true) {
      const std::size_t a = working.find(open, i);
      if (a == std::string::npos) break;
      const std::size_t b = working.find(close, a + open.size());
      if (b == std::string::npos) break;
      next.append(working, i, a - i);
      captured.push_back(working.substr(a + open.size(), b - a - open.size()));
      next += '\x01' + std::to_string(captured.size() - 1) + '\x02';
      i = b + close.size();
    }
    next.append(working, i, std::string::npos);
    working = std::move(next);
  }
  if (p.unquoted_keys) working = quote_bare_keys(working);
  for (std::size_t k = 0; k < captured.size(); ++k) {
    const std::string marker = '\x01' + std::to_string(k) + '\x02';
    const std::string literal = py_json_dumps_str(captured[k]);
    std::string next;
    std::size_t i = 0;
    for (std::size_t at; (at = working.find(marker, i)) != std::string::npos;
         i = at + marker.size())
      next.append(working, i, at - i) += literal;
    next.append(working, i, std::string::npos);
    working = std::move(next);
  }
  PyResult r = py_json_loads(working, limits.max_json_depth);
  if (r.kind == PyResult::Kind::kValue) return std::move(r.value);
  if (r.kind == PyResult::Kind::kRefused) return r.error;
  if (p.allow_non_json) return Json(text_value(body, p));
  return error_of("ValueError", "json parser could not parse region as JSON: " + r.error.message);
}

Result<Json> sub_parse(std::optional<std::string> raw, const ContentParser* vp,
                       const Limits& limits) {
  if (vp == nullptr) return raw ? Json(*raw) : Json(nullptr);
  if (!raw)
    return error_of("AttributeError",
                    "'NoneType' object has no attribute 'strip' (a value group "
                    "that took no part in the match)");
  return parse_content(*raw, *vp, limits);
}

Result<Json> parse_xml_inline(std::string_view body, const ContentParser& p, const Limits& limits) {
  Json out = Json::object();
  std::size_t pos = 0;
  bool after_empty = false;
  while (pos <= body.size()) {
    auto m = p.tag_pattern->search(body, pos, false, after_empty);
    if (!m) return m.error();
    if (m->found != Regex::Found::kComplete) break;
    auto key = m->groupdict.find("key");
    if (key == m->groupdict.end() || !key->second)
      return error_of("ValueError", "xml-inline: tag_pattern must have a named group 'key'");
    std::optional<std::string> raw = std::string();
    if (auto v = m->groupdict.find("value"); v != m->groupdict.end()) raw = v->second;
    auto value = sub_parse(raw, p.value_parser.get(), limits);
    if (!value) return value.error();
    const std::string& k = *key->second;
    if (out.contains(k) && p.merge_duplicates) {
      if (!out[k].is_array()) out[k] = Json::array({out[k]});
      out[k].push_back(std::move(*value));
    } else {
      out[k] = std::move(*value);
    }
    after_empty = m->start == m->end;
    pos = m->end;
  }
  return out;
}

Result<Json> parse_kv_lines(std::string_view body, const ContentParser& p, const Limits& limits) {
  Json out = Json::object();
  std::size_t i = 0;
  while (true) {
    const std::size_t end = body.find(p.line_sep, i);
    std::string line = text_value(body.substr(i, end == std::string_view::npos ? end : end - i), p);
    if (!line.empty()) {
      const std::size_t sep = line.find(p.kv_sep);
      if (sep != std::string::npos) {
        const std::string key = text_value(std::string_view(line).substr(0, sep), p);
        auto value = sub_parse(text_value(std::string_view(line).substr(sep + p.kv_sep.size()), p),
                               p.value_parser.get(), limits);
        if (!value) return value.error();
        out[key] = std::move(*value);
      }
    }
    if (end == std::string_view::npos) break;
    i = end + p.line_sep.size();
  }
  return out;
}

Result<Json> parse_content(std::string_view body, const ContentParser& p, const Limits& limits) {
  switch (p.kind) {
    case ContentKind::kText:
      return Json(text_value(body, p));
    case ContentKind::kInt:
    case ContentKind::kFloat: {
      const std::string t = text_value(body, p);
      PyResult r = p.kind == ContentKind::kInt ? py_int(t) : py_float(t);
      if (r.kind != PyResult::Kind::kValue) return from_py(r, "");
      return std::move(r.value);
    }
    case ContentKind::kBool: {
      // .lower() in ("true", "1"): no non-ASCII character lowers into these ASCII letters.
      std::string t = text_value(body, p);
      for (char& c : t)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      return Json(t == "true" || t == "1");
    }
    case ContentKind::kJson:
      return parse_json(body, p, limits);
    case ContentKind::kXmlInline:
      return parse_xml_inline(body, p, limits);
    case ContentKind::kKvLines:
      return parse_kv_lines(body, p, limits);
  }
  return Json();
}

// "{name}" or "{a.b.c}" with \w+ parts: the path, else nullopt.
std::optional<std::string> whole_placeholder(std::string_view s) {
  if (s.size() < 3 || s.front() != '{' || s.back() != '}') return std::nullopt;
  const std::string_view path = s.substr(1, s.size() - 2);
  bool part_empty = true;
  for (std::size_t i = 0; i < path.size();) {
    if (path[i] == '.') {
      if (part_empty) return std::nullopt;
      part_empty = true;
      ++i;
      continue;
    }
    std::size_t next = i;
    if (!word_char(utf8::decode(path, next))) return std::nullopt;
    part_empty = false;
    i = next;
  }
  if (part_empty) return std::nullopt;
  return std::string(path);
}

// Whether s holds a placeholder anywhere (re.search of the placeholder pattern).
bool has_placeholder(std::string_view s) {
  for (std::size_t a = s.find('{'); a != std::string_view::npos; a = s.find('{', a + 1)) {
    const std::size_t b = s.find('}', a);
    if (b == std::string_view::npos) return false;
    // The shortest "{...}" from a: a placeholder only if all of it is one.
    if (whole_placeholder(s.substr(a, b - a + 1))) return true;
  }
  return false;
}

Result<Json> apply_transform(const Json& t, const Json& scope, std::size_t depth) {
  if (depth > 512) return error_of("LimitError", "transform nested deeper than 512");
  if (t.is_object()) {
    Json out = Json::object();
    for (const auto& [k, v] : t.items()) {
      auto r = apply_transform(v, scope, depth + 1);
      if (!r) return r;
      out[k] = std::move(*r);
    }
    return out;
  }
  if (t.is_array()) {
    Json out = Json::array();
    for (const auto& v : t) {
      auto r = apply_transform(v, scope, depth + 1);
      if (!r) return r;
      out.push_back(std::move(*r));
    }
    return out;
  }
  if (!t.is_string()) return t;
  auto path = whole_placeholder(t.get_ref<const std::string&>());
  if (!path) return t;
  std::vector<std::string> parts;
  for (std::size_t i = 0;;) {
    const std::size_t dot = path->find('.', i);
    parts.push_back(path->substr(i, dot == std::string::npos ? dot : dot - i));
    if (dot == std::string::npos) break;
    i = dot + 1;
  }
  const auto available = [](const Json& obj) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : obj.items()) (void)v, keys.push_back(k);
    std::sort(keys.begin(), keys.end());
    std::string out = "[";
    for (std::size_t k = 0; k < keys.size(); ++k) out += (k ? ", " : "") + py_repr(keys[k]);
    return out + "]";
  };
  if (!scope.contains(parts[0]))
    return error_of("KeyError", "transform placeholder '{" + *path +
                                    "}' is not defined. Available: " + available(scope));
  const Json* value = &scope.at(parts[0]);
  for (std::size_t k = 1; k < parts.size(); ++k) {
    if (!value->is_object())
      return error_of("ValueError", "transform placeholder '{" + *path + "}' cannot index into " +
                                        py_type_name(*value) + " at '" + parts[k] + "'");
    if (!value->contains(parts[k]))
      return error_of("ValueError", "transform placeholder '{" + *path + "}' is missing key '" +
                                        parts[k] + "'. Available: " + available(*value));
    value = &value->at(parts[k]);
  }
  return *value;
}

}  // namespace

Result<bool> validate_transform(const Json& t, const std::string& path) {
  if (t.is_object() || t.is_array()) {
    for (const auto& v : t) {
      auto ok = validate_transform(v, path);
      if (!ok) return ok;
    }
    return true;
  }
  if (!t.is_string()) return true;
  const auto& s = t.get_ref<const std::string&>();
  if (has_placeholder(s) && !whole_placeholder(s))
    return Error{"ValueError",
                 "transform string " + py_repr(s) +
                     " mixes a {placeholder} with literal text. Use either a whole-string "
                     "placeholder (e.g. \"{content}\") or a plain literal; string interpolation "
                     "is not supported.",
                 0, 0, path};
  return true;
}

Result<Json> process_field(const Field& field, std::string_view body,
                           const std::vector<std::pair<std::string, std::string>>& captures,
                           const Limits& limits) {
  auto value = parse_content(body, field.content, limits);
  if (!value) {
    Error e = value.error();
    e.path = "fields." + field.name;
    return e;
  }
  if (!field.transform) return value;
  Json scope = Json::object();
  for (const auto& [k, v] : captures) scope[k] = v;
  const auto fail = [&](Error e) {
    e.path = "fields." + field.name + ".transform";
    return e;
  };
  if (field.transform_each) {
    if (!value->is_array())
      return fail(
          error_of("ValueError", "Field '" + field.name +
                                     "': transform_each requires the parsed content to be a "
                                     "list, got " +
                                     py_type_name(*value) + "."));
    Json out = Json::array();
    for (const auto& item : *value) {
      if (!item.is_object())
        return fail(error_of("ValueError", "Field '" + field.name +
                                               "': transform_each requires each list element to be "
                                               "a dict, got " +
                                               py_type_name(item) + "."));
      Json item_scope = scope;
      for (const auto& [k, v] : item.items()) item_scope[k] = v;
      auto r = apply_transform(*field.transform, item_scope, 0);
      if (!r) return fail(r.error());
      out.push_back(std::move(*r));
    }
    return out;
  }
  scope["content"] = std::move(*value);
  auto r = apply_transform(*field.transform, scope, 0);
  if (!r) return fail(r.error());
  return r;
}

}  // namespace chatwire::response
