// Loading a response template: the checks transformers' load_response_template makes, in its
// order and with its messages, plus the bounds of Limits and the checks of content_args that
// transformers leaves to the first region that uses them. Errors name the key path.
#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include "response/internal.hpp"
#include "util/json_text.hpp"
#include "util/utf8.hpp"

namespace chatwire::response {

namespace {

constexpr const char* kParserNames[] = {"bool",     "float", "int",       "json",
                                        "kv-lines", "text",  "xml-inline"};

struct ParserRow {
  const char* name;
  ContentKind kind;
};
constexpr ParserRow kParsers[] = {
    {"text", ContentKind::kText},        {"int", ContentKind::kInt},
    {"float", ContentKind::kFloat},      {"bool", ContentKind::kBool},
    {"json", ContentKind::kJson},        {"xml-inline", ContentKind::kXmlInline},
    {"kv-lines", ContentKind::kKvLines},
};

constexpr const char* kTopKeys[] = {"version", "defaults", "fields", "start_anchor",
                                    "start_anchor_pattern"};
constexpr const char* kFieldKeys[] = {"open",     "open_pattern", "close",         "close_pattern",
                                      "content",  "content_args", "repeats",       "join",
                                      "optional", "transform",    "transform_each"};

Error invalid(const std::string& path, std::string message) {
  return Error{"ValueError", std::move(message), 0, 0, path};
}

// Python's repr of a list of str, for "Unknown keys [...]" messages.
std::string repr_list(std::vector<std::string> items) {
  std::sort(items.begin(), items.end());
  std::string out = "[";
  for (std::size_t k = 0; k < items.size(); ++k) out += (k ? ", " : "") + py_repr(items[k]);
  return out + "]";
}

template <std::size_t N>
std::vector<std::string> unknown_keys(const Json& object, const char* const (&allowed)[N]) {
  std::vector<std::string> out;
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string& key = it.key();
    if (std::none_of(std::begin(allowed), std::end(allowed),
                     [&key](const char* a) { return key == a; }))
      out.push_back(key);
  }
  return out;
}

// _compile_anchor: a literal, a list of literals (any of them, longest first), or a pattern.
Result<std::optional<Delimiter>> delimiter(const Json& obj, const std::string& scope,
                                           const std::string& path, const char* literal_key,
                                           const char* pattern_key, const Limits& limits) {
  const bool has_literal = obj.contains(literal_key), has_pattern = obj.contains(pattern_key);
  if (has_literal && has_pattern)
    return invalid(path,
                   scope + ": cannot specify both '" + literal_key + "' and '" + pattern_key + "'");
  if (has_literal) {
    const Json& raw = obj.at(literal_key);
    const std::string at = path.empty() ? literal_key : path + "." + literal_key;
    std::vector<std::string> literals;
    if (raw.is_string()) {
      literals.push_back(raw.get<std::string>());
    } else if (raw.is_array()) {
      if (raw.empty())
        return invalid(at,
                       scope + ": '" + literal_key + "' list must contain at least one literal");
      if (raw.size() > limits.max_literals)
        return Error{"LimitError",
                     "more literals than max_literals=" + std::to_string(limits.max_literals), 0, 0,
                     at};
      for (const auto& item : raw) {
        if (!item.is_string())
          return invalid(at, scope + ": '" + literal_key + "' list must contain only strings");
        const auto& s = item.get_ref<const std::string&>();
        if (std::find(literals.begin(), literals.end(), s) == literals.end()) literals.push_back(s);
      }
    } else {
      return invalid(at, scope + ": '" + literal_key +
                             "' must be a string or list of strings, got " + py_type_name(raw));
    }
    for (const auto& s : literals)
      if (s.empty())
        return invalid(at, scope + ": '" + literal_key + "' literals cannot be empty strings");
    // Longest first (Python's len counts code points; the sort is stable).
    std::vector<std::string> ordered = literals;
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const std::string& a, const std::string& b) {
                       return util::utf8::code_points(a) > util::utf8::code_points(b);
                     });
    Delimiter d;
    for (const auto& a : literals)
      for (const auto& b : literals)
        if (a != b && a.compare(0, b.size(), b) == 0) d.can_extend = true;
    auto re = Regex::literals(ordered, at, limits);
    if (!re) return re.error();
    d.re = std::move(*re);
    d.literal = true;
    return std::optional<Delimiter>(std::move(d));
  }
  if (has_pattern) {
    const std::string at = path.empty() ? pattern_key : path + "." + pattern_key;
    const Json& raw = obj.at(pattern_key);
    if (!raw.is_string())
      return invalid(at, scope + ": invalid " + pattern_key +
                             " regex: first argument must be "
                             "string or compiled pattern");
    // Delimiter patterns are compiled with the regex module (transformers' partial matching).
    auto re =
        Regex::python(raw.get_ref<const std::string&>(), at, limits, Regex::Syntax::kRegexModule);
    if (!re) {
      Error e = re.error();
      if (e.type == "ValueError")
        e.message = scope + ": invalid " + pattern_key + " regex: " + e.message;
      return e;
    }
    Delimiter d;
    d.re = std::move(*re);
    return std::optional<Delimiter>(std::move(d));
  }
  return std::optional<Delimiter>();
}

Result<ContentParser> content_parser(const Json& name_json, const Json& args,
                                     const std::string& scope, const std::string& name_path,
                                     const std::string& path, const Limits& limits,
                                     std::size_t depth);

Result<std::shared_ptr<const ContentParser>> value_parser(const Json& args,
                                                          const std::string& scope,
                                                          const std::string& path,
                                                          const Limits& limits, std::size_t depth) {
  if (!args.contains("value_parser") || args.at("value_parser").is_null())
    return std::shared_ptr<const ContentParser>();
  const Json& vp = args.at("value_parser");
  const std::string at = path + ".value_parser";
  if (!vp.is_object()) return invalid(at, scope + ": value_parser must be a dict");
  if (depth >= 16) return Error{"LimitError", "value_parser nested more than 16 deep", 0, 0, at};
  const Json name = vp.contains("name") ? vp.at("name") : Json("text");
  const Json sub_args = vp.contains("args") ? vp.at("args") : Json::object();
  auto parsed =
      content_parser(name, sub_args, scope, at + ".name", at + ".args", limits, depth + 1);
  if (!parsed) return parsed.error();
  return std::shared_ptr<const ContentParser>(std::make_shared<ContentParser>(std::move(*parsed)));
}

Result<std::string> nonempty_string(const Json& args, const char* key, const char* fallback,
                                    const std::string& scope, const std::string& path) {
  if (!args.contains(key)) return std::string(fallback);
  const Json& v = args.at(key);
  if (!v.is_string() || v.get_ref<const std::string&>().empty())
    return invalid(path + "." + key, scope + ": '" + key + "' must be a non-empty string");
  return v.get<std::string>();
}

// `name_path` locates the parser's name, `path` its arguments (errors name one or the other).
Result<ContentParser> content_parser(const Json& name_json, const Json& args,
                                     const std::string& scope, const std::string& name_path,
                                     const std::string& path, const Limits& limits,
                                     std::size_t depth) {
  std::string available = "[";
  for (std::size_t k = 0; k < std::size(kParserNames); ++k)
    available += (k ? ", '" : "'") + std::string(kParserNames[k]) + "'";
  available += "]";
  const ParserRow* row = nullptr;
  if (name_json.is_string())
    for (const auto& r : kParsers)
      if (name_json.get_ref<const std::string&>() == r.name) row = &r;
  if (row == nullptr)
    return invalid(name_path, scope + ": unknown content parser " +
                                  (name_json.is_string() ? py_repr(name_json.get<std::string>())
                                                         : name_json.dump()) +
                                  ". Available: " + available);
  if (!args.is_object()) return invalid(path, scope + ": content_args must be a dict");
  ContentParser p;
  p.kind = row->kind;
  p.name = row->name;
  const auto flag = [&](const char* key, bool fallback) {
    return args.contains(key) ? py_truthy(args.at(key)) : fallback;
  };
  p.strip = flag("strip", true);
  switch (p.kind) {
    case ContentKind::kJson: {
      p.unquoted_keys = flag("unquoted_keys", false);
      p.allow_non_json = flag("allow_non_json", false);
      if (args.contains("string_delims") && py_truthy(args.at("string_delims"))) {
        const Json& d = args.at("string_delims");
        const std::string at = path + ".string_delims";
        if (!d.is_array())
          return invalid(at, scope + ": string_delims must be a list of [open, close]");
        for (const auto& pair : d) {
          if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() ||
              !pair[1].is_string() || pair[0].get_ref<const std::string&>().empty() ||
              pair[1].get_ref<const std::string&>().empty())
            return invalid(at, scope +
                                   ": each string_delims item must be [open, close], two "
                                   "non-empty strings");
          p.string_delims.emplace_back(pair[0].get<std::string>(), pair[1].get<std::string>());
        }
      }
      break;
    }
    case ContentKind::kXmlInline: {
      const std::string at = path + ".tag_pattern";
      if (!args.contains("tag_pattern") || args.at("tag_pattern").is_null())
        return invalid(at, "xml-inline: 'tag_pattern' content_arg is required");
      if (!args.at("tag_pattern").is_string())
        return invalid(at, "xml-inline: 'tag_pattern' must be a string");
      auto re = Regex::python(args.at("tag_pattern").get_ref<const std::string&>(), at, limits);
      if (!re) return re.error();
      p.tag_pattern = std::move(*re);
      p.merge_duplicates = flag("merge_duplicates", false);
      auto vp = value_parser(args, scope, path, limits, depth);
      if (!vp) return vp.error();
      p.value_parser = *vp;
      break;
    }
    case ContentKind::kKvLines: {
      auto line_sep = nonempty_string(args, "line_sep", "\n", scope, path);
      if (!line_sep) return line_sep.error();
      auto kv_sep = nonempty_string(args, "kv_sep", ":", scope, path);
      if (!kv_sep) return kv_sep.error();
      p.line_sep = *line_sep;
      p.kv_sep = *kv_sep;
      auto vp = value_parser(args, scope, path, limits, depth);
      if (!vp) return vp.error();
      p.value_parser = *vp;
      break;
    }
    default:
      break;
  }
  return p;
}

Result<bool> boolean(const Json& obj, const char* key, bool fallback, bool& out,
                     const std::string& scope, const std::string& path) {
  out = fallback;
  if (!obj.contains(key)) return true;
  const Json& v = obj.at(key);
  if (!v.is_boolean())
    return invalid(path + "." + key,
                   scope + ": " + key + " must be a bool, got " + py_type_name(v));
  out = v.get<bool>();
  return true;
}

Result<Field> build_field(const std::string& name, const Json& raw, const Limits& limits) {
  const std::string scope = "Field '" + name + "'";
  const std::string path = "fields." + name;
  if (!raw.is_object()) return invalid(path, scope + " must be a dict");
  if (auto unknown = unknown_keys(raw, kFieldKeys); !unknown.empty())
    return invalid(path, scope + ": unknown keys " + repr_list(unknown));
  Field f;
  f.name = name;
  const Json content = raw.contains("content") ? raw.at("content") : Json("text");
  const Json args = raw.contains("content_args") ? raw.at("content_args") : Json::object();
  auto parser =
      content_parser(content, args, scope, path + ".content", path + ".content_args", limits, 0);
  if (!parser) return parser.error();
  f.content = std::move(*parser);
  auto open = delimiter(raw, scope, path, "open", "open_pattern", limits);
  if (!open) return open.error();
  f.open = std::move(*open);
  auto close = delimiter(raw, scope, path, "close", "close_pattern", limits);
  if (!close) return close.error();
  f.close = std::move(*close);
  // transformers reads these two by truthiness (optional: null makes the field required).
  f.repeats = raw.contains("repeats") ? py_truthy(raw.at("repeats")) : false;
  f.optional = raw.contains("optional") ? py_truthy(raw.at("optional")) : true;
  if (raw.contains("join") && !raw.at("join").is_null()) {
    const Json& join = raw.at("join");
    if (!join.is_string())
      return invalid(path + ".join",
                     scope + ": 'join' must be a string, got " + py_type_name(join));
    if (!f.repeats) return invalid(path + ".join", scope + ": 'join' requires 'repeats': true");
    f.join = join.get<std::string>();
  }
  if (auto ok = boolean(raw, "transform_each", false, f.transform_each, scope, path); !ok)
    return ok.error();
  const bool has_transform = raw.contains("transform") && !raw.at("transform").is_null();
  if (f.transform_each && !has_transform)
    return invalid(path + ".transform_each",
                   scope + ": transform_each is set but no transform was provided");
  if (has_transform) {
    auto ok = validate_transform(raw.at("transform"), path + ".transform");
    if (!ok) {
      Error e = ok.error();
      e.message = scope + ": " + e.message;
      return e;
    }
    f.transform = raw.at("transform");
  } else {
    std::vector<std::string> captured;
    for (const auto* d : {&f.open, &f.close})
      if (*d)
        for (const auto& n : (*d)->re.group_names())
          if (std::find(captured.begin(), captured.end(), n) == captured.end())
            captured.push_back(n);
    if (!captured.empty())
      return invalid(path, scope + ": open_pattern/close_pattern declares named group(s) " +
                               repr_list(captured) +
                               ", but the field has no 'transform'. Named captures are only "
                               "surfaced through a 'transform' template");
  }
  return f;
}

}  // namespace

bool streamable(ContentKind kind) {
  return kind == ContentKind::kText || kind == ContentKind::kInt || kind == ContentKind::kFloat ||
         kind == ContentKind::kBool;
}

Result<Template> Template::from_json(const Json& spec, const Limits& limits) {
  if (!spec.is_object())
    return invalid("", "response_template must be a dict, got " + py_type_name(spec));
  if (spec.contains("version")) {
    const Json& v = spec.at("version");
    // Python compares with ==, so 1.0 and True are version 1 too.
    const bool one = (v.is_number() && v.get<double>() == 1.0) || (v.is_boolean() && v.get<bool>());
    if (!one) return invalid("version", "Unsupported response_template version: " + v.dump());
  }
  if (auto unknown = unknown_keys(spec, kTopKeys); !unknown.empty())
    return invalid("", "Unknown keys in response_template: " + repr_list(unknown));
  auto impl = std::make_shared<Impl>();
  impl->spec = spec;
  impl->limits = limits;
  if (spec.contains("defaults")) {
    if (!spec.at("defaults").is_object())
      return invalid("defaults", "response_template.defaults must be a dict");
    impl->defaults = spec.at("defaults");
  }
  if (!spec.contains("fields") || !spec.at("fields").is_object() || spec.at("fields").empty())
    return invalid("fields", "response_template.fields must be a non-empty dict");
  if (spec.at("fields").size() > limits.max_fields)
    return Error{"LimitError", "more fields than max_fields=" + std::to_string(limits.max_fields),
                 0, 0, "fields"};
  std::vector<std::string> implicit;
  for (const auto& [name, raw] : spec.at("fields").items()) {
    auto field = build_field(name, raw, limits);
    if (!field) return field.error();
    if (!field->open) {
      implicit.push_back(name);
      impl->implicit = impl->fields.size();
    }
    impl->fields.push_back(std::move(*field));
  }
  if (implicit.size() > 1) {
    std::string names;
    for (const auto& n : implicit) names += (names.empty() ? "" : ", ") + n;
    return invalid("fields",
                   "At most one field may omit 'open'/'open_pattern' (that field becomes the "
                   "implicit-open / leftover sink). Found: " +
                       names);
  }
  auto anchor =
      delimiter(spec, "response_template", "", "start_anchor", "start_anchor_pattern", limits);
  if (!anchor) return anchor.error();
  if (!*anchor)
    return invalid("start_anchor",
                   "response_template must define 'start_anchor' or 'start_anchor_pattern'.");
  impl->anchor = std::move(**anchor);
  impl->anchor_key = spec.contains("start_anchor") ? "start_anchor" : "start_anchor_pattern";
  Template t;
  t.impl = std::move(impl);
  return t;
}

Result<Template> Template::from_json_text(std::string_view text, const Limits& limits) {
  if (text.size() > limits.max_spec_bytes)
    return error_of("LimitError",
                    "spec longer than max_spec_bytes=" + std::to_string(limits.max_spec_bytes));
  if (util::utf8::first_invalid(text) != text.size())
    return error_of("ValueError", "spec is not valid UTF-8");
  PyResult parsed = py_json_loads(text, limits.max_json_depth);
  if (parsed.kind != PyResult::Kind::kValue) return parsed.error;
  return from_json(parsed.value, limits);
}

namespace {

Result<std::string> read_text(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"OSError", "cannot open file", 0, 0, path};
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes)
      return Error{"LimitError", "file longer than " + std::to_string(max_bytes) + " bytes", 0, 0,
                   path};
  }
  if (util::utf8::first_invalid(text) != text.size())
    return Error{"ValueError", "not valid UTF-8", 0, 0, path};
  return text;
}

Result<Json> parse_python_json(std::string_view text, const std::string& path,
                               const Limits& limits) {
  PyResult parsed = py_json_loads(text, limits.max_json_depth);
  if (parsed.kind != PyResult::Kind::kValue) {
    Error e = parsed.error;
    e.path = path;
    return e;
  }
  return parsed.value;
}

// A tokenizer_config.json's response_template, read with Python's semantics; the rest of the
// file only as JSON, since its other values are not the template's (transformers writes
// model_max_length 1000000000000000019884624838656, an integer beyond 64 bits, which the strict
// reading refuses). nullopt: the file is a JSON object without a response_template (or one
// that is a spec itself, with "fields"); an error where it is no JSON at all.
Result<std::optional<Json>> config_response_template(const std::string& text,
                                                     const std::string& path,
                                                     const Limits& limits) {
  util::BoundedJson loose = util::parse_bounded_json(text, limits.max_json_depth);
  if (!loose) {  // not JSON to nlohmann (a lone surrogate escape Python takes): read it all
    auto strict = parse_python_json(text, path, limits);
    if (!strict) return strict.error();
    if (!strict->is_object() || strict->contains("fields") ||
        !strict->contains("response_template") || strict->at("response_template").is_null())
      return std::optional<Json>();
    return std::optional<Json>(strict->at("response_template"));
  }
  const auto& config = loose.value;
  if (!config.is_object() || config.contains("fields")) return std::optional<Json>();
  const auto it = config.find("response_template");
  if (it == config.end() || it->is_null()) return std::optional<Json>();
  auto spec = parse_python_json(it->dump(), path, limits);
  if (!spec) return spec.error();
  return std::optional<Json>(std::move(*spec));
}

Result<Template> with_file(Result<Template> t, const std::string& file) {
  if (!t) {
    Error e = t.error();
    e.path = file + (e.path.empty() ? "" : ": " + e.path);
    return e;
  }
  return t;
}

}  // namespace

Result<Template> Template::from_file(const std::string& path, const Limits& limits) {
  auto text = read_text(path, limits.max_spec_bytes);
  if (!text) return text.error();
  // A tokenizer_config.json: its key (a spec itself has "fields", never "response_template").
  auto in_config = config_response_template(*text, path, limits);
  if (!in_config) return in_config.error();
  if (*in_config) return with_file(from_json(**in_config, limits), path + " response_template");
  auto json = parse_python_json(*text, path, limits);
  if (!json) return json.error();
  return with_file(from_json(*json, limits), path);
}

Result<Template> Template::from_model_dir(const std::string& dir, const Limits& limits) {
  const std::string path = dir + "/tokenizer_config.json";
  auto text = read_text(path, limits.max_config_bytes);
  if (!text) return text.error();
  auto in_config = config_response_template(*text, path, limits);
  if (!in_config) return in_config.error();
  if (!*in_config)
    return Error{"LookupError", "the tokenizer config has no response_template", 0, 0, path};
  return with_file(from_json(**in_config, limits), path + " response_template");
}

const Json& Template::spec() const {
  return impl->spec;
}
const Limits& Template::limits() const {
  return impl->limits;
}

}  // namespace chatwire::response
