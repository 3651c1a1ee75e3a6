// The XML family: a call element naming the function, one element per parameter, values typed
// by the tool's schema (`<function=f><parameter=k>v</parameter></function>`, Qwen3-Coder, GLM,
// MiniMax, DeepSeek's DSML, step3).
#include <algorithm>
#include <optional>

#include "parse/engine_section.hpp"
#include "util/hex.hpp"
#include "util/json_text.hpp"
#include "util/utf8.hpp"

namespace chatwire::parse {

namespace {

// XML's character references in an attribute value: the five named ones and numeric ones
// (`&#38;`, `&#x26;`) of a code point other than NUL and the surrogates, up to U+10FFFF. Any
// other `&` stays as written, as XML readers that recover keep it.
std::string xml_unescape(std::string_view s) {
  static constexpr std::pair<std::string_view, char> kNamed[] = {
      {"amp;", '&'}, {"lt;", '<'}, {"gt;", '>'}, {"quot;", '"'}, {"apos;", '\''}};
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    const std::string_view rest = s.substr(i + 1);
    bool done = false;
    for (const auto& [name, ch] : kNamed)
      if (rest.starts_with(name)) {
        out += ch;
        i += name.size();
        done = true;
        break;
      }
    if (!done && rest.starts_with('#')) {
      const bool hex = rest.size() > 1 && (rest[1] == 'x' || rest[1] == 'X');
      std::size_t p = hex ? 2 : 1;
      std::uint32_t cp = 0;
      const std::size_t digits_at = p;
      for (; p < rest.size() && p < digits_at + 8; ++p) {
        const int d = hex ? util::hex_value(rest[p])
                          : (rest[p] >= '0' && rest[p] <= '9' ? rest[p] - '0' : -1);
        if (d < 0) break;
        cp = cp * (hex ? 16 : 10) + static_cast<std::uint32_t>(d);
      }
      if (p > digits_at && p < rest.size() && rest[p] == ';' && cp != 0 && cp <= 0x10FFFF &&
          (cp < 0xD800 || cp > 0xDFFF)) {
        util::utf8::append(out, static_cast<char32_t>(cp));
        i += p + 1;
        done = true;
      }
    }
    if (!done) out += '&';
  }
  return out;
}

// Whether `text` is a type expression: comma-separated type names (or `any`), each with an
// optional bracketed parameter that is one too (`array[string]`, `dict[str, int]`).
bool type_expression(std::string_view text, int depth = 0) {
  if (depth > 8) return false;
  std::size_t from = 0;
  while (from <= text.size()) {
    // The part up to the next top-level comma.
    std::size_t at = from;
    int nest = 0;
    for (; at < text.size() && (nest > 0 || text[at] != ','); ++at)
      nest += text[at] == '[' ? 1 : text[at] == ']' ? -1 : 0;
    const std::string_view part = trim(text.substr(from, at - from));
    const std::size_t bracket = part.find('[');
    const std::string_view word = part.substr(0, bracket);
    if (!is_word(word) || (!named_types(word).known && !names_any_type(word))) return false;
    if (bracket != std::string_view::npos &&
        (part.back() != ']' ||
         !type_expression(part.substr(bracket + 1, part.size() - bracket - 2), depth + 1)))
      return false;
    from = at + 1;
  }
  return true;
}

// The text of top-level member `key` of `object`, a JSON object already known to be valid
// (arguments are passed through as written); empty when it has no such member.
std::string_view member_text(std::string_view object, std::string_view key) {
  std::size_t i = 1;
  auto ws = [&] {
    while (i < object.size() && is_ws(object[i])) ++i;
  };
  auto string_end = [&](std::size_t at) {  // at the opening quote
    for (++at; at < object.size() && object[at] != '"'; ++at)
      if (object[at] == '\\') ++at;
    return std::min(at + 1, object.size());
  };
  auto value_end = [&](std::size_t at) {
    int depth = 0;
    while (at < object.size()) {
      const char c = object[at];
      if (c == '"') {
        at = string_end(at);
        if (depth == 0) return at;
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (depth == 0) return at;  // the object's own close ends a scalar
        if (--depth == 0) return at + 1;
      }
      if (depth == 0 && (c == ',' || is_ws(c))) return at;
      ++at;
    }
    return at;
  };
  for (ws(); i < object.size() && object[i] == '"'; ws()) {
    const std::size_t name_end = string_end(i);
    const std::string_view name = object.substr(i + 1, name_end - i - 2);
    i = name_end;
    ws();
    if (i >= object.size() || object[i] != ':') return {};
    ++i;
    ws();
    const std::size_t start = i;
    i = value_end(i);
    if (name == key) return object.substr(start, i - start);
    ws();
    if (i < object.size() && object[i] == ',') ++i;
  }
  return {};
}

// Where the element opened just before `from` closes: its close, not that of a child of the same
// name (`<item><item>a</item></item>`); npos when it does not.
std::size_t matching_close(std::string_view text, std::size_t from, const std::string& open,
                           const std::string& close) {
  // Each search resumes past what it found, so the scan is linear.
  std::size_t at = text.find(close, from), inner = text.find(open, from);
  for (int depth = 0; at != std::string_view::npos;) {
    if (inner < at) {  // a child of the same name opens first
      ++depth;
      inner = text.find(open, inner + open.size());
      continue;
    }
    if (depth == 0) return at;
    --depth;
    at = text.find(close, at + close.size());
  }
  return at;
}

// Dialect::cdata_values: a value's CDATA section markers.
constexpr std::string_view kCdataOpen = "<![CDATA[", kCdataClose = "]]>";
// A line break written escaped (the two bytes backslash, n): Dialect::escaped_layout.
constexpr std::string_view kEscapedNewline = "\\n";

// An element written empty whose schema is a container only: that container, empty.
std::optional<Json> empty_container(const ParamTypes& types) {
  if (types.string || types.array == types.object) return std::nullopt;
  return types.array ? Json::array() : Json::object();
}

// How many levels of elements nested_elements reads: vLLM's minimax_m3 engine's 128, the bound
// of its work on untrusted output. A deeper value stays the string as written.
constexpr int kMaxElementLevels = 128;

// Dialect::value_close_named: a value made of elements, `open name>..close name>` each, read as
// JSON, as SGLang's and vLLM's minimax_m3 parsers build it: under an array schema the children
// are its elements in order (`<tags><item>a..<item>b..</tags>`: ["a", "b"]), otherwise an object
// of the children by name, a name repeated giving a list; a leaf is typed by its schema (a
// member's, additionalProperties', an array's items') as a parameter's value is, and without one
// as the dialect's untyped values; an element written empty is the empty container its schema
// names. Nothing when the text is not only elements (text mixed with them stays the string it
// is).
std::optional<Json> nested_elements(std::string_view text, std::string_view open,
                                    std::string_view close, const SchemaSet& schema,
                                    UntypedValues untyped, bool& mismatch_out, int depth,
                                    bool as_list = false) {
  // `depth` counts from 0 inside the parameter's own element, which is the first level.
  if (depth + 1 >= kMaxElementLevels) return std::nullopt;
  bool mismatch = false;  // reported only for the reading returned
  std::vector<std::pair<std::string, std::vector<Json>>> children;
  const ParamTypes types = schema.types();
  // Every child is an element of the list: an array schema, or an array-or-object union whose
  // object member the children do not fill (`as_list`).
  const bool is_list = as_list || (types.array && !types.object);
  const SchemaSet element_schema = is_list ? schema.items() : SchemaSet{};
  std::vector<Json> elements;
  std::size_t p = 0;
  auto skip_ws = [&] {
    while (p < text.size() && is_ws(text[p])) ++p;
  };
  for (skip_ws(); p < text.size(); skip_ws()) {
    if (text.compare(p, open.size(), open) != 0) return std::nullopt;
    p += open.size();
    const std::size_t gt = text.find('>', p);
    if (gt == std::string_view::npos || gt == p) return std::nullopt;
    const std::string name(text.substr(p, gt - p));
    if (name.find_first_of("<>/ \t\n") != std::string::npos) return std::nullopt;
    const std::string end = std::string(close) + name + ">";
    const std::size_t at = matching_close(text, gt + 1, std::string(open) + name + ">", end);
    if (at == std::string_view::npos) return std::nullopt;
    const std::string_view inner = trim(text.substr(gt + 1, at - gt - 1));
    p = at + end.size();
    const SchemaSet child = is_list ? element_schema : schema.property(name);
    Json value;
    if (inner.compare(0, open.size(), open) == 0) {
      auto nested = nested_elements(inner, open, close, child, untyped, mismatch, depth + 1);
      if (!nested) return std::nullopt;
      value = std::move(*nested);
    } else if (const ParamTypes leaf = child.types(); inner.empty() && empty_container(leaf)) {
      value = *empty_container(leaf);
    } else {
      bool ok = true;
      value = Json::parse(coerce_value(inner, leaf, untyped, &ok), nullptr, false);
      // A member of an array schema written once per element (`<tag>a..<tag>b..`): each is
      // typed by the items' schema.
      if (leaf.array && !leaf.object && !value.is_array())
        if (const ParamTypes item = child.items().types(); item.known)
          value = Json::parse(coerce_value(inner, item, untyped, &ok), nullptr, false);
      if (value.is_discarded()) value = std::string(inner);
      mismatch = mismatch || !ok;
    }
    if (is_list) {  // the elements in the order written, whatever their names
      elements.push_back(std::move(value));
      continue;
    }
    auto it = std::find_if(children.begin(), children.end(),
                           [&](const auto& c) { return c.first == name; });
    if (it == children.end()) {
      children.push_back({name, {}});
      it = children.end() - 1;
    }
    it->second.push_back(std::move(value));
  }
  if (is_list) {
    if (elements.empty()) return std::nullopt;
    mismatch_out = mismatch_out || mismatch;
    return Json(std::move(elements));
  }
  if (children.empty()) return std::nullopt;
  Json object = Json::object();
  for (auto& [name, values] : children) {
    // A name given twice is a list of its values, as both references build it; where the
    // member's schema allows no array, that list is not what the schema declares.
    if (const ParamTypes member = schema.property(name).types();
        values.size() > 1 && member.known && !member.array)
      mismatch = true;
    object[name] = values.size() == 1 ? std::move(values[0]) : Json(std::move(values));
  }
  // A union of an array and an object whose required keys the children lack is the array
  // (`anyOf [array, {field, op} required]` written as `<item>`s), as llama.cpp reads it.
  if (types.array && !holds_required(object, types))
    return nested_elements(text, open, close, schema, untyped, mismatch_out, depth, true);
  mismatch_out = mismatch_out || mismatch;
  return object;
}

class XmlFamily final : public SectionFamily {
 public:
  explicit XmlFamily(Core& core) : SectionFamily(core) {
    const Dialect& d = c_.d;
    for (auto m : d.name_end) name_markers_.add(m, 1);
    for (auto m : d.name_stop) name_markers_.add(m, 2);
    name_markers_.add(d.call_open, 3);  // a call marker written twice: the first is text
    param_name_markers_.add(d.param_name_end, 1);
    // A name the call's or section's close cuts (its end marker garbled or never written) names
    // no parameter; the call goes on to that close.
    param_name_markers_.add(d.call_close, 2);
    param_name_markers_.add(d.section_close, 2);
    if (d.call_open_restarts) {
      // A name cut by another marker: the model dropped the rest of the parameter.
      param_name_markers_.add(d.param_open, 2);
      param_name_markers_.add(d.call_open, 2);
      value_markers_.add(d.call_open, 2);
    }
    value_markers_.add(d.value_close, 1);
    value_markers_.add(d.param_open, 2);
    value_markers_.add(d.call_close, 2);
    value_markers_.add(d.section_close, 2);
    garbage_markers_.add(d.param_open, 1);
    garbage_markers_.add(d.call_close, 1);
    garbage_markers_.add(d.section_close, 1);
    if (d.value_close_checked) {
      checked_markers_.add(d.value_close, kClose);
      checked_markers_.add(d.param_open, kParamOpen);
      checked_markers_.add(d.call_close, kCallClose);
      checked_markers_.add(d.section_close, kSectionClose);
      // The close without its last byte: the start of a misspelt close (`</parameter1>`).
      checked_markers_.add(d.value_close.substr(0, d.value_close.size() - 1), kMisspeltClose);
    }
  }

  bool step() override {
    switch (st_) {
      case St::kBetweenCalls:
        return between_calls();
      case St::kName:
        return xp_name();
      case St::kParams:
        return xp_params();
      case St::kGarbage:
        return xp_garbage();
      case St::kParamName:
        return xp_param_name();
      case St::kValueOpen:
        return xp_value_open();
      case St::kValue:
        return xp_value();
    }
    return false;
  }

 private:
  enum class St {
    kBetweenCalls,
    kName,       // the function name after the call marker
    kParams,     // a parameter, or the call's end
    kGarbage,    // text inside a call that is not a parameter: content
    kParamName,  // the parameter's name, up to its end marker
    kValueOpen,  // the value's open marker (when the dialect has one)
    kValue,      // the value, up to its close marker
  };

  void go(St state) {
    st_ = state;
    c_.enter(this);
  }
  void go_between_calls() override { go(St::kBetweenCalls); }
  void begin_call() override {
    c_.mark = c_.pos;
    name_.clear();
    given_.clear();
    go(St::kName);
  }
  bool has_function_lines() const override { return true; }
  // Dialect::repairs_tag_slips: `<function bash>` and `<functionbash>` for `<function=bash>`,
  // when the request lists the name (SGLang's step3p5 detector; an unlisted one is not repaired).
  Tri take_slipped_call_open() override;
  // Dialect::attr_headers: an open `<function=` (`open`) written as `<function name="f">` or
  // `<function = f>` at p; kYes sets `name_at` to the name's first byte.
  Tri attr_header_at(std::size_t p, std::string_view open, std::string_view attr,
                     std::size_t& name_at) const;
  // ... at the cursor, which kYes moves to the name.
  Tri take_attr_header(std::string_view open, std::string_view attr) {
    std::size_t name_at = 0;
    const Tri t = attr_header_at(c_.pos, open, attr, name_at);
    if (t == Tri::kYes) c_.pos = name_at;
    return t;
  }
  // Dialect::json_call_body: a JSON call object where a call's name (or, in a section, a call)
  // stands, read up to `close`: kYes leaves the cursor at `close`.
  Tri json_call(std::string_view close);
  Tri take_json_call() override {
    return c_.d.json_call_body ? json_call(c_.d.section_close) : Tri::kNo;
  }

  // `name="x"` / `="x"` / `x` -> x
  // The value of attribute `key` in a header (`name="f"`, quoted or not); a header without it
  // is the name itself (`=f`, `"f"`, `f`).
  static std::string attr_name(std::string_view header, std::string_view key = "name") {
    return attr_value(header, key).text;
  }
  struct AttrValue {
    std::string text;
    bool quoted = false;  // written in quotes, which delimit it whatever it holds
  };
  static AttrValue attr_value(std::string_view header, std::string_view key);
  // attr_value's text, unescaped where the dialect's template escapes attributes
  // (Dialect::attr_entities).
  AttrValue attr_text(std::string_view header, std::string_view key) const {
    AttrValue v = attr_value(header, key);
    if (v.quoted && c_.d.attr_entities) v.text = xml_unescape(v.text);
    return v;
  }
  // The text of an attribute-form header (`<invoke name="f">`) that no attribute read holds:
  // what stands outside the `key="value"` pairs (quoted or not) of the name attribute (`key`),
  // `string` (true or false: DSML's typing), the dialect's value_type_attr and `index` (Kimi K3;
  // one word each). Empty for a header without `key=` (`<function=f>`: the whole header is the
  // name).
  std::string unread_attr_text(std::string_view header, std::string_view key) const;
  // Warns that such text was left out of the call.
  void warn_unread_attrs(std::string_view header, std::string_view key, std::size_t at) {
    if (std::string unread = unread_attr_text(header, key); !unread.empty())
      c_.em.warn("malformed_call",
                 "text '" + quoted_start(unread) + "' in the header not read; left out",
                 c_.abs(at));
  }
  bool xp_name();
  // Whether a call to `name` is read where it stands: outside the dialect's section, only one
  // to a function the request lists (the XML call and its JSON body alike).
  bool may_call_outside_section(const std::string& name) const;
  void close_xml_call();
  // Skips whitespace and, with Dialect::escaped_layout, literal backslash-n pairs; false when
  // more input is needed.
  bool skip_layout();
  bool xp_params();
  bool xp_garbage();
  bool xp_param_name();
  bool xp_value_open();
  void param_prefix();
  bool streams_as_string() const;
  // End of buf[from..end) without the value's trailing layout (see ValueFraming).
  std::size_t without_trailing_layout(std::size_t from, std::size_t end) const;
  bool xp_value();

  // value_close_checked: where the value that starts at c_.mark ends (see Dialect).
  enum CheckedTag { kClose = 1, kParamOpen, kCallClose, kSectionClose, kMisspeltClose };
  struct ValueEnd {
    bool decided = false;    // false: more bytes are needed (or, at eof, the output ended)
    std::size_t at = 0;      // decided: the value's end; else the end of what is surely value
    std::size_t resume = 0;  // decided: where the call's reading goes on
    bool closed = false;     // ended by its close marker (else a missing_marker warning)
  };
  ValueEnd checked_value_end();
  enum class Ahead { kMore, kEnd, kText };
  // What stands after buf[p..) skips whitespace: a structural end (`ends`), text, or not yet known.
  Ahead ahead(std::size_t p, bool param_of_schema, bool call_close, bool section_close,
              bool section_open, bool call_open = false) const;
  Tri at_pos(std::size_t p, std::string_view lit) const;
  // The name of a `param_open NAME param_name_end` element at p: kYes with the name, kMore when
  // not complete yet, kNo when no name end comes within kLookahead bytes.
  Tri param_name_at(std::size_t p, std::string& name) const {
    return param_name_from(p + c_.d.param_open.size(), name);
  }
  // The name of a parameter header whose name starts at `from`.
  Tri param_name_from(std::size_t from, std::string& name) const;
  // How far a decision looks past a marker (a name, a misspelt close's line, the whitespace after
  // a close): beyond it the marker is text, so an undecided marker is never held, and scanned
  // again on every chunk, for long.
  static constexpr std::size_t kLookahead = 256;
  bool line_start(std::size_t p) const { return p == c_.mark || c_.buf[p - 1] == '\n'; }
  bool schema_param(const std::string& name) const;
  // The parameter name in a header (the bytes between param_open and param_name_end) and how many
  // of its bytes the name takes (`used`; the value starts there). With Dialect::repairs_tag_slips,
  // a repeated open (`<parameter=parameter=city>`) and a header whose `>` was left out, ended by
  // its line (`<parameter=city\nDallas`), give a name the schema declares.
  std::string header_name(std::string_view header, std::size_t& used) const;

  St st_ = St::kBetweenCalls;
  MarkerSet name_markers_, param_name_markers_, value_markers_, garbage_markers_, checked_markers_;
  std::string name_;                // the function of the open call (its schema types the values)
  std::string param_;               // the parameter being read
  std::vector<std::string> given_;  // the parameters of the open call read so far
  const Json* params_ = nullptr;    // value_close_checked: its function's parameters schema
  std::vector<std::string> param_names_;  // ... and the names it declares (sorted)
  std::size_t vscan_ = 0;          // value_close_checked: the value is decided up to here ...
  int depth_ = 0;                  // ... with this many line-start parameter elements open in it
  ParamTypes types_;               // ... and its schema types
  ResumePoint body_close_search_;  // where the JSON body's close search resumes
  bool first_param_ = true, json_value_ = false, value_started_ = false, streaming_value_ = false,
       quote_open_ = false;
  bool cdata_ = false;       // Dialect::cdata_values: the value is a CDATA section
  bool cdata_read_ = false;  // ... and its close is behind: the value's close is searched after it
  std::string named_close_;  // Dialect::value_close_named: the open value's close ...
  MarkerSet named_markers_;  // ... and the markers that end it
};

auto XmlFamily::attr_value(std::string_view header, std::string_view key) -> AttrValue {
  header = trim(header);
  // Found anywhere, as models glue it to the tag (`<paramname="k">`, `<functionĠname="f">`).
  std::size_t p = header.find(key);
  while (p != std::string_view::npos && header.compare(p + key.size(), 1, "=") != 0)
    p = header.find(key, p + 1);
  if (p != std::string_view::npos) {
    std::string_view v = header.substr(p + key.size() + 1);
    if (!v.empty() && (v[0] == '"' || v[0] == '\'')) {
      char q = v[0];
      v.remove_prefix(1);
      auto e = v.find(q);
      return {std::string(v.substr(0, e)), e != std::string_view::npos};
    }
    auto e = v.find_first_of(" \t\n>");
    return {std::string(trim(v.substr(0, e))), false};
  }
  if (!header.empty() && header[0] == '=') header.remove_prefix(1);
  header = trim(header);
  if (header.size() >= 2 && (header[0] == '"' || header[0] == '\'') && header.back() == header[0])
    return {std::string(header.substr(1, header.size() - 2)), true};
  return {std::string(header), false};
}

std::string XmlFamily::unread_attr_text(std::string_view header, std::string_view key) const {
  if (header.find(std::string(key) + "=") == std::string_view::npos) return {};
  std::string unread;
  // Only the first `key=` names (as attr_name reads it); a later one is left out.
  bool key_read = false;
  auto keep = [&](std::string_view text) {
    if (text = trim(text); !text.empty()) append_word(unread, text);
  };
  while (!header.empty()) {
    const std::size_t eq = header.find('=');
    if (eq == std::string_view::npos || eq + 1 >= header.size()) {
      if (trim(header) != "/") keep(header);  // a self-closing element's '/' is read
      break;
    }
    // A value in quotes, or unquoted up to the next whitespace (as attr_name reads it); `close`
    // is its last byte, `value_at` its first.
    const bool quoted = header[eq + 1] == '"' || header[eq + 1] == '\'';
    const std::size_t value_at = quoted ? eq + 2 : eq + 1;
    std::size_t close = quoted ? header.find(header[eq + 1], value_at) : value_at;
    if (!quoted) {
      while (close < header.size() && !is_ws(header[close])) ++close;
      if (close == header.size() && header.ends_with("/")) --close;  // `name=f/`: self-closing
      if (close == value_at) {
        keep(header);
        break;
      }
      --close;
    }
    if (close == std::string_view::npos) {
      keep(header);
      break;
    }
    // The attribute's key is the word before '='; text before it is no attribute's.
    std::string_view before = header.substr(0, eq);
    std::size_t k = before.size();
    while (k > 0 && !is_ws(before[k - 1])) --k;
    keep(before.substr(0, k));
    const std::string_view name = before.substr(k);
    const std::string_view value = header.substr(value_at, close + (quoted ? 0 : 1) - value_at);
    // The first attribute whose name ends with `key` names the call or parameter, as attr_name
    // finds it (also glued to what precedes it: `<functionĠname="f">`, `data-name="g"`); what
    // it is glued to is reported unless it is a tokenizer's space marker (no letter or digit).
    bool read = false;
    if (name.ends_with(key) && !key_read) {
      key_read = read = true;
      const std::string_view glue = name.substr(0, name.size() - key.size());
      if (std::any_of(glue.begin(), glue.end(),
                      [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0; }))
        keep(glue);
    }
    // Kimi K3's call index is a number, and its value type a JSON type's name; any other value is
    // text the model wrote, reported.
    const bool number = !value.empty() && std::all_of(value.begin(), value.end(), [](char ch) {
      return std::isdigit(static_cast<unsigned char>(ch)) != 0;
    });
    read = read || (name == "index" && number) ||
           (!c_.d.value_type_attr.empty() && name == c_.d.value_type_attr && is_word(value) &&
            (named_types(value).known || names_any_type(value))) ||
           (name == "string" && (value == "true" || value == "false"));
    if (!read) keep(header.substr(k, close + 1 - k));
    header.remove_prefix(close + 1);
  }
  return unread;
}

bool XmlFamily::xp_name() {
  if (c_.d.json_call_body) {
    const Tri json = json_call(c_.d.call_close);
    if (json == Tri::kMore) return false;
    if (json == Tri::kYes) {
      c_.pos += c_.d.call_close.size();
      go(St::kBetweenCalls);
      return true;
    }
  }
  MarkerSet::Hit hit = c_.search(name_markers_);
  if (hit.kind != MarkerSet::Hit::kFound) {
    if (!c_.eof) return false;
    c_.pos = c_.buf.size();
    // Cut off inside the header, or a call marker in prose that no header follows: either way
    // the end marker never came, which is what the warning says.
    const std::string end = c_.d.name_end.empty() ? "its end" : shown_marker(c_.d.name_end.front());
    not_a_call("truncated", "call header not closed by " + end + " before the output ended");
    return true;
  }
  if (hit.tag == 3) {
    // Another call marker before any name (`<tool_call><tool_call>f..`): the first is text, the
    // call starts at the second (as vLLM's GLM-4.7 parser engine recovers it).
    c_.pos = hit.at;
    not_a_call("not_a_call", "call marker followed by another call marker");
    return true;
  }
  const std::string_view header = std::string_view(c_.buf).substr(c_.mark, hit.at - c_.mark);
  AttrValue attr = attr_text(header, c_.d.call_name_attr);
  std::string name = std::move(attr.text);
  c_.pos = hit.at + (hit.tag == 1 ? hit.len : 0);
  // A quoted name is delimited by its quotes, so it is the name whatever it holds (`calc<beta`,
  // as vLLM's and SGLang's attribute readers return it); an unquoted one must look like a name.
  if (!(attr.quoted ? Core::quoted_name(name) : c_.valid_name(name))) {
    not_a_call("not_a_call", "call marker not followed by a function name");
    return true;
  }
  if (!may_call_outside_section(name)) {
    not_a_call("not_a_call", "call marker outside " + std::string(c_.d.section_open) +
                                 " names a function the request does not list");
    return true;
  }
  c_.open_call("", name);
  warn_unread_attrs(header, c_.d.call_name_attr, c_.mark);
  if (!function_line_.empty() && function_line_ != name)
    c_.em.warn("malformed_call",
               "function-name line '" + quoted_start(function_line_) +
                   "' is not the call's name; left out",
               function_line_at_);
  function_line_.clear();
  name_ = std::move(name);
  params_ = nullptr;
  if (c_.d.value_close_checked && !c_.d.value_close_any_param) {
    const Json* params = function_parameters(c_.tools, name_);
    if (params && schema_declares_properties(*params)) {
      params_ = params;
      param_names_ = schema_property_names(*params);
    }
  }
  c_.em.args("{");
  first_param_ = true;
  go(St::kParams);
  return true;
}

bool XmlFamily::may_call_outside_section(const std::string& name) const {
  // A call marker without its section's opener is a call only for a function the request
  // lists: `<function=unknown>` in prose stays text (SGLang's step3p5 detector).
  return in_section_ || c_.committed || c_.d.section_open.empty() || c_.listed(name);
}

Tri XmlFamily::json_call(std::string_view close) {
  std::size_t p = c_.pos;
  while (p < c_.buf.size() && is_ws(c_.buf[p])) ++p;
  if (p == c_.buf.size()) return c_.eof ? Tri::kNo : Tri::kMore;
  if (c_.buf[p] != '{' || close.empty()) return Tri::kNo;
  // Held whole until its close (not streamed); the search resumes where it stopped.
  const std::size_t from = body_close_search_.from(c_, p);
  const std::size_t end = c_.buf.find(close, from);
  if (end == std::string::npos) {
    if (!c_.eof && c_.buf.size() - p <= c_.opt.max_held_bytes) {
      body_close_search_.hold(c_, from, close.size());
      return Tri::kMore;
    }
    body_close_search_.clear();
    return Tri::kNo;
  }
  body_close_search_.clear();
  const std::string_view body = trim(c_.bytes(p, end));
  const auto parsed =
      util::parse_bounded_json(body, c_.opt.max_json_depth, util::RepeatedKeys::kTopLevel);
  if (!parsed || !parsed.value.is_object()) return Tri::kNo;
  std::string name;
  std::string_view used_name_key, used_args_key;  // the keys read (any other is reported)
  for (auto key : c_.d.name_keys) {
    auto it = parsed.value.find(std::string(key));
    if (it != parsed.value.end() && it->is_string()) {
      name = it->get<std::string>();
      used_name_key = key;
    }
  }
  std::string_view args = "{}";
  std::string decoded;  // arguments written as a JSON string holding an object, decoded
  for (auto key : c_.d.args_keys) {
    auto it = parsed.value.find(std::string(key));
    if (it == parsed.value.end() || it->is_null()) continue;  // (a null one: no arguments)
    used_args_key = key;
    if (it->is_string()) {  // as the JSON family reads them (normalize_args)
      decoded = it->get<std::string>();
      const auto inner = util::parse_bounded_json(decoded, c_.opt.max_json_depth);
      if (!inner || !inner.value.is_object()) return Tri::kNo;
      args = decoded;
      break;
    }
    if (!it->is_object()) return Tri::kNo;
    args = member_text(body, key);
    break;
  }
  if (!c_.valid_name(name) || args.empty()) return Tri::kNo;
  if (!may_call_outside_section(name)) return Tri::kNo;
  c_.open_call("", name);
  // A key that is not the name or the arguments is left out, as the JSON family reports it; so
  // is one written twice (the reader keeps one value).
  if (!parsed.repeated_key.empty())
    c_.em.warn("malformed_call",
               "key \"" + parsed.repeated_key +
                   "\" of the call object given twice; one value is used, the other left out",
               c_.abs(p));
  for (const auto& item : parsed.value.items()) {
    const std::string& key = item.key();
    const auto& value = item.value();
    if (key == used_name_key || key == used_args_key ||
        (key == "type" && value.is_string() && is_call_kind(value.get_ref<const std::string&>())))
      continue;
    if (one_of(c_.d.args_keys, key) && value.is_null()) continue;  // no arguments: none left out
    if (one_of(c_.d.name_keys, key) || one_of(c_.d.args_keys, key)) {
      c_.em.warn(
          "malformed_call",
          "key \"" + key + "\" of the call object gives its name or arguments again; left out",
          c_.abs(p));
      break;
    }
    c_.em.warn("malformed_call",
               "key \"" + key + "\" of the call object is not its name or arguments; left out",
               c_.abs(p));
    break;
  }
  c_.em.args(args);
  c_.close_call();
  c_.pos = end;
  return Tri::kYes;
}

void XmlFamily::close_xml_call() {
  c_.em.args("}");
  c_.close_call(false);  // built by us from escaped values: valid by construction
}

bool XmlFamily::skip_layout() {
  for (;;) {
    if (!c_.skip_ws()) return false;
    if (!c_.d.escaped_layout) return true;
    const Tri escaped_newline = c_.at(kEscapedNewline);
    if (escaped_newline == Tri::kMore) return false;
    if (escaped_newline == Tri::kNo) return true;
    c_.pos += kEscapedNewline.size();
  }
}

bool XmlFamily::xp_params() {
  if (!skip_layout()) return false;
  if (c_.pos == c_.buf.size()) {
    c_.truncated("a tool call");
    close_xml_call();
    c_.end_block();
    return true;
  }
  // The closes first: a parameter open may be a prefix of them (MiniMax M3's `NS<` of
  // `NS</invoke>`).
  Tri t = c_.take(c_.d.call_close);
  if (t == Tri::kMore) return false;
  if (t == Tri::kYes) {
    close_xml_call();
    go(St::kBetweenCalls);
    return true;
  }
  // The section's close, or the next call's open (Dialect::call_open_restarts): this call's
  // close was left out.
  for (std::string_view next :
       {c_.d.section_close, c_.d.call_open_restarts ? c_.d.call_open : std::string_view()}) {
    t = c_.at(next);
    if (t == Tri::kMore) return false;
    if (t == Tri::kYes) {
      close_xml_call();
      c_.em.warn("missing_marker", "call not closed with " + std::string(c_.d.call_close),
                 c_.abs(c_.pos));
      go(St::kBetweenCalls);
      return true;
    }
  }
  t = c_.take(c_.d.param_open);
  if (t == Tri::kNo) t = take_attr_header(c_.d.param_open, c_.d.param_name_attr);
  if (t == Tri::kMore) return false;
  if (t == Tri::kYes) {
    c_.mark = c_.pos;
    go(St::kParamName);
    return true;
  }
  if (first_param_ && c_.buf[c_.pos] == '{' && !c_.d.call_close.empty()) {
    // A call whose body is one JSON object instead of parameters (DeepSeek's DSML invoke, as
    // SGLang reads it): the object is the arguments.
    // Streamed, the search resumes where a close marker could still start (linear).
    const std::size_t from = body_close_search_.from(c_, c_.pos);
    const std::size_t close = c_.buf.find(c_.d.call_close, from);
    if (close == std::string::npos && !c_.eof && c_.buf.size() - c_.pos <= c_.opt.max_held_bytes) {
      body_close_search_.hold(c_, from, c_.d.call_close.size());
      return false;
    }
    body_close_search_.clear();
    if (close != std::string::npos) {
      // Text that starts with '{' and is valid JSON is an object (accept: no tree is built).
      std::string_view body = trim(std::string_view(c_.buf).substr(c_.pos, close - c_.pos));
      if (body.size() >= 2 && body.back() == '}' && Json::accept(body)) {
        first_param_ = false;
        c_.em.args(body.substr(1, body.size() - 2));
        c_.pos = close + c_.d.call_close.size();
        close_xml_call();
        go(St::kBetweenCalls);
        return true;
      }
    }
  }
  c_.em.warn("malformed_call", "text inside a call that is not a parameter; kept as content",
             c_.abs(c_.pos));
  go(St::kGarbage);
  return true;
}

bool XmlFamily::xp_garbage() {
  MarkerSet::Hit hit = c_.search(garbage_markers_);
  std::size_t end = hit.kind == MarkerSet::Hit::kFound ? hit.at : c_.emit_end(hit.at);
  if (end > c_.pos) c_.emit(Route::kContent, std::string_view(c_.buf).substr(c_.pos, end - c_.pos));
  c_.pos = end;
  if (hit.kind == MarkerSet::Hit::kFound || c_.eof) {
    go(St::kParams);
    return true;
  }
  return false;
}

bool XmlFamily::xp_param_name() {
  MarkerSet::Hit hit = c_.search(param_name_markers_);
  if (hit.kind != MarkerSet::Hit::kFound) {
    if (!c_.eof) return false;
    c_.pos = c_.buf.size();
    // What the name held is left out with it: named, since it may be more than a name (its
    // end marker garbled, the call's close with it).
    if (const std::string_view name = trim(c_.bytes(c_.mark, c_.pos)); !name.empty())
      c_.em.warn("truncated",
                 "output ended inside a parameter name; '" + quoted_start(name) + "' left out",
                 c_.abs(c_.mark));
    else
      c_.truncated("a parameter name");
    close_xml_call();
    c_.end_block();
    return true;
  }
  if (hit.tag == 2) {
    // A name cut by another marker names no parameter: the text is named in the warning.
    const std::string_view name = c_.bytes(c_.mark, hit.at);
    c_.em.warn("malformed_call",
               (name.empty() ? std::string("parameter marker without a name")
                             : "parameter name '" + quoted_start(name) + "' not ended by " +
                                   shown_marker(c_.d.param_name_end)) +
                   "; left out",
               c_.abs(c_.mark));
    c_.pos = hit.at;
    go(St::kParams);
    return true;
  }
  std::string_view header = std::string_view(c_.buf).substr(c_.mark, hit.at - c_.mark);
  std::size_t used = header.size();
  param_ = header_name(header, used);
  // A name written right after its marker (`<parameter=a>`) ends at a line break: the model left
  // out its end marker (`<parameter=a\n1\n</parameter>`), and what follows is the value.
  if (const std::size_t nl = header.find('\n');
      used == header.size() && c_.d.param_open.ends_with('=') && nl != std::string_view::npos) {
    if (const std::string_view name = trim(header.substr(0, nl)); !name.empty()) {
      c_.em.warn("missing_marker",
                 "parameter name '" + quoted_start(name) + "' not ended by " +
                     shown_marker(c_.d.param_name_end) + " before its line ends; read up to it",
                 c_.abs(c_.mark));
      param_.assign(name);
      used = nl;
    }
  }
  if (used == header.size()) warn_unread_attrs(header, c_.d.param_name_attr, c_.mark);
  // A name that runs over a value's markup (`<arg_key>a</arg_key\n>\n<arg_value>1..`) lost its
  // end marker; it is read up to the next one, as the references' patterns read it, and said.
  for (const std::string_view m : {c_.d.value_open, c_.d.value_close})
    if (!m.empty() && header.substr(0, used).find(m) != std::string_view::npos) {
      c_.em.warn("malformed_call",
                 "parameter name runs over " + std::string(m) + " (its " +
                     std::string(c_.d.param_name_end) + " is missing or garbled); kept as written",
                 c_.abs(c_.mark));
      break;
    }
  // DeepSeek V3.2 DSML: string="false" marks a JSON-typed value; so does any type but string
  // where the dialect names the value's type in an attribute (Kimi K3's type="object").
  json_value_ = header.find("string=\"false\"") != std::string_view::npos;
  if (!c_.d.value_type_attr.empty() &&
      header.find(c_.d.value_type_attr) != std::string_view::npos) {
    const std::string type = attr_name(header, c_.d.value_type_attr);
    json_value_ = !type.empty() && type != "string" && type != header;
  }
  c_.pos = used < header.size() ? c_.mark + used : hit.at + hit.len;
  types_ = param_types(c_.tools, name_, param_);
  given_.push_back(param_);
  if (c_.d.value_close_named) {
    // The value ends at its own element's close, so the elements nested in it stay inside.
    named_close_ = std::string(c_.d.value_close) + param_ + ">";
    named_markers_ = MarkerSet{};
    named_markers_.add(named_close_, 1);
    named_markers_.add(c_.d.call_close, 2);
    named_markers_.add(c_.d.section_close, 2);
  }
  go(c_.d.value_open.empty() ? St::kValue : St::kValueOpen);
  value_started_ = false;
  return true;
}

bool XmlFamily::xp_value_open() {
  std::size_t save = c_.pos;
  // The type element's text and where it starts, settled once this state is through (it may
  // wait for more input and run again).
  std::optional<std::string_view> wire_type;
  std::size_t wire_type_at = 0;
  auto settle_type = [&] {
    if (!wire_type) return;
    // One word, or one word and its parameter (`array[string]`, as vLLM reads the base type).
    const std::string_view type = *wire_type;
    const std::size_t bracket = type.find('[');
    const std::string_view base = trim(type.substr(0, bracket));
    if (!is_word(base) || (bracket != std::string_view::npos &&
                           (type.back() != ']' || type.find_first_of("<>") != kNone))) {
      c_.em.warn("malformed_call",
                 "value type '" + std::string(type) + "' is not one word; left out", wire_type_at);
      return;
    }
    // `any` is the model's word for "as written": a string where the schema does not type it
    // (as vLLM reads it).
    if (names_any_type(base)) {
      if (!types_.known) types_ = named_types("string");
      return;
    }
    const ParamTypes named = named_types(base);
    if (!named.known) {
      c_.em.warn("malformed_call",
                 "value type '" + std::string(type) + "' names no JSON type; left out",
                 wire_type_at);
      return;
    }
    // The parameter is not read (vLLM reads the base type only); one that is no type is text
    // the model wrote, reported.
    if (bracket != std::string_view::npos &&
        !type_expression(type.substr(bracket + 1, type.size() - bracket - 2)))
      c_.em.warn("malformed_call",
                 "value type '" + std::string(type) + "': its parameter names no type; left out",
                 wire_type_at);
    types_ = narrowed_types(types_, named);
  };
  if (!skip_layout()) return false;
  if (!c_.d.type_open.empty()) {
    // An element naming the value's type (`<ifm|arg_type>integer</ifm|arg_type>`) is markup:
    // read whole, or waited for.
    const Tri typed = c_.at(c_.d.type_open);
    if (typed == Tri::kMore) {
      c_.pos = save;
      return false;
    }
    if (typed == Tri::kYes) {
      // A type name is short: an element longer than the lookahead is not one.
      const std::size_t from = c_.pos + c_.d.type_open.size();
      const std::size_t limit = std::min(c_.buf.size(), from + kLookahead);
      const std::size_t found = c_.bytes(from, limit).find(c_.d.type_close);
      const std::size_t close = found == std::string_view::npos ? std::string::npos : from + found;
      if (close == std::string::npos && !c_.eof && limit - from < kLookahead) {
        c_.pos = save;
        return false;
      }
      if (close != std::string::npos) {
        c_.pos = close + c_.d.type_close.size();
        if (!c_.skip_ws()) {
          c_.pos = save;
          return false;
        }
        wire_type = trim(c_.bytes(from, close));
        wire_type_at = c_.abs(from);
      }
    }
  }
  Tri t = c_.take(c_.d.value_open);
  if (t == Tri::kMore) {
    c_.pos = save;
    return false;
  }
  if (t == Tri::kNo) {
    // A key the model wrote without any value (`<arg_key>a</arg_key><arg_key>b</arg_key>..`):
    // the next parameter, the call's end or the output's end follows. No value is made up for it
    // (vLLM's and SGLang's GLM parsers read key/value pairs only): the parameter is left out,
    // reported.
    for (std::string_view next : {c_.d.param_open, c_.d.call_close, c_.d.section_close}) {
      const Tri at = c_.pos == c_.buf.size() ? Tri::kYes : c_.at(next);  // or the output's end
      if (at == Tri::kMore) {
        c_.pos = save;
        return false;
      }
      if (at == Tri::kYes) {
        settle_type();
        c_.em.warn("malformed_call", "parameter " + param_ + " has no value; left out",
                   c_.abs(c_.pos));
        given_.pop_back();
        go(St::kParams);
        return true;
      }
    }
    settle_type();
    c_.em.warn("missing_marker", "parameter value without " + std::string(c_.d.value_open),
               c_.abs(c_.pos));
  } else {
    settle_type();
  }
  go(St::kValue);
  return true;
}

void XmlFamily::param_prefix() {
  std::string s = first_param_ ? "" : ", ";
  first_param_ = false;
  append_json_quoted(s, param_);
  s += ": ";
  c_.em.args(s);
}

bool XmlFamily::streams_as_string() const {
  // A value marked JSON is read whole, even for a string parameter: it may be a quoted string.
  if (json_value_ && (!types_.known || types_.string)) return false;
  if (c_.d.framing == ValueFraming::kJson) return false;  // a JSON value is read whole
  if (types_.known) return types_.string_decides();
  return c_.d.untyped == UntypedValues::kString;
}

auto XmlFamily::without_trailing_layout(std::size_t from, std::size_t end) const -> std::size_t {
  if (c_.d.framing == ValueFraming::kStripOneNewline) {
    if (end > from && c_.buf[end - 1] == '\n') --end;
    if (end > from && c_.buf[end - 1] == '\r') --end;
  } else if (c_.d.framing == ValueFraming::kTrim || c_.d.framing == ValueFraming::kJson) {
    while (end > from && is_ws(c_.buf[end - 1])) --end;
  }
  return end;
}

bool XmlFamily::xp_value() {
  if (!value_started_) {
    // Leading layout of the value.
    if (c_.d.framing == ValueFraming::kStripOneNewline) {
      if (c_.pos == c_.buf.size() && !c_.eof) return false;
      if (c_.pos < c_.buf.size() && c_.buf[c_.pos] == '\n')
        ++c_.pos;
      else if (c_.buf.compare(c_.pos, 2, "\r\n") == 0)
        c_.pos += 2;
      else if (c_.pos + 1 == c_.buf.size() && c_.buf[c_.pos] == '\r' && !c_.eof)
        return false;
    } else if (c_.d.framing == ValueFraming::kTrim || c_.d.framing == ValueFraming::kJson) {
      if (!c_.skip_ws()) return false;
    }
    // Dialect::cdata_values: a value written as <![CDATA[..]]> is read whole, then unwrapped.
    const Tri cdata = c_.d.cdata_values ? c_.at(kCdataOpen) : Tri::kNo;
    if (cdata == Tri::kMore) return false;
    cdata_ = cdata == Tri::kYes;
    cdata_read_ = false;
    // Dialect::value_close_named: a value that begins with an element is read whole (nested).
    bool nested = false;
    if (c_.d.value_close_named) {
      const std::size_t value_at = c_.pos;
      c_.skip_ws();
      const Tri element = c_.at(c_.d.param_open);
      c_.pos = value_at;
      if (element == Tri::kMore) return false;
      nested = element == Tri::kYes;
    }
    value_started_ = true;
    streaming_value_ = !cdata_ && !nested && streams_as_string();
    c_.mark = c_.pos;
    vscan_ = c_.pos;
    depth_ = 0;
    quote_open_ = false;
    if (streaming_value_) param_prefix();
  }
  if (cdata_ && !cdata_read_) {
    // A CDATA section may hold the value's close (`<![CDATA[..</param>..]]>`): the close is
    // searched after the section's end.
    const std::size_t from =
        std::max(c_.scan, c_.pos == c_.mark ? c_.pos + kCdataOpen.size() : c_.pos);
    const std::size_t close = c_.buf.find(kCdataClose, from);
    if (close == std::string::npos && !c_.eof) {
      c_.scan = c_.marker_tail(from, kCdataClose.size());
      return false;
    }
    if (close != std::string::npos) c_.pos = close + kCdataClose.size();
    c_.scan = c_.pos;
    cdata_read_ = true;
  }
  ValueEnd ve;
  if (c_.d.value_close_checked) {
    ve = checked_value_end();
  } else {
    MarkerSet::Hit hit = c_.search(c_.d.value_close_named ? named_markers_ : value_markers_);
    ve.decided = hit.kind == MarkerSet::Hit::kFound;
    ve.at = hit.at;
    ve.closed = ve.decided && hit.tag == 1;
    ve.resume = ve.closed ? hit.at + hit.len : hit.at;
  }
  bool found = ve.decided;
  if (!found && !c_.eof) {
    if (streaming_value_) {
      // Emit what cannot be trailing layout or the start of the end marker.
      std::size_t end = c_.emit_end(without_trailing_layout(c_.pos, ve.at));
      // A string value whose schema allows null is held until it cannot be the literal null
      // (read as JSON null, whitespace around it too, as at the value's close); for a
      // string-only schema the text null is the string "null".
      if (end > c_.pos &&
          (quote_open_ || !types_.null || trim(c_.bytes(c_.mark, end)).size() > 4)) {
        c_.em.args_escaped(quote_open_ ? "" : "\"", c_.bytes(c_.pos, end), "");
        quote_open_ = true;
        c_.pos = end;
      }
    }
    return false;
  }
  std::size_t end = found ? ve.at : c_.buf.size();
  std::size_t stop = without_trailing_layout(streaming_value_ ? c_.pos : c_.mark, end);
  if (!found) c_.truncated("a parameter value");
  if (streaming_value_) {
    std::string_view rest = std::string_view(c_.buf).substr(c_.pos, stop - c_.pos);
    if (!quote_open_ && (trim(rest) == "null" || trim(rest) == "None") && types_.known &&
        types_.null) {
      c_.em.args("null");
    } else {
      c_.em.args_escaped(quote_open_ ? "" : "\"", rest, "\"");
    }
  } else {
    std::string_view raw = std::string_view(c_.buf).substr(c_.mark, stop - c_.mark);
    bool unwrapped = false;  // a CDATA section's content (a string keeps its whitespace)
    if (cdata_) {
      const std::string_view t = trim(raw);
      unwrapped = t.size() >= kCdataOpen.size() + kCdataClose.size() && t.starts_with(kCdataOpen) &&
                  t.ends_with(kCdataClose);
      if (unwrapped)
        raw = t.substr(kCdataOpen.size(), t.size() - kCdataOpen.size() - kCdataClose.size());
    }
    std::string value;
    std::optional<Json> nested;
    if (c_.d.value_close_named && trim(raw).starts_with(c_.d.param_open)) {
      SchemaSet function;
      if (const Json* params = function_parameters(c_.tools, name_)) function = {params, {params}};
      bool mismatch = false;
      nested = nested_elements(trim(raw), c_.d.param_open, c_.d.value_close,
                               function.property(param_), c_.d.untyped, mismatch, 0);
      if (nested && mismatch)
        c_.em.warn("coercion",
                   "a value nested in parameter " + param_ +
                       " does not match its schema (kept as written: a value not of its "
                       "type as a string, an element given twice as a list)",
                   c_.abs(c_.mark));
    }
    if (c_.d.value_close_named && !nested && trim(raw).empty()) nested = empty_container(types_);
    if (nested) {
      append_python_json(value, *nested);
    } else if (c_.d.framing == ValueFraming::kJson && Json::accept(raw)) {
      value.assign(raw);  // already trimmed by the framing
    } else if (json_value_ && types_.string && is_json_string(trim(raw))) {
      // A string parameter marked JSON (DSML's string="false") written as a JSON string: the
      // quotes are the encoding the marker announces, not part of the string (as vLLM reads it).
      value.assign(trim(raw));
    } else if (json_value_ && !types_.known) {
      std::string_view t = trim(raw);
      if (Json::accept(t)) {
        value.assign(t);
      } else {
        c_.em.warn("coercion",
                   "parameter " + param_ + " is marked JSON but is not; kept as a string",
                   c_.abs(c_.mark));
        append_json_quoted(value, raw);
      }
    } else {
      bool ok = true;
      // A string in a CDATA section keeps its whitespace (vLLM's minicpm5 parser reads it so).
      const bool verbatim = !types_.known || (unwrapped && types_.string);
      value = coerce_value(verbatim ? raw : trim(raw), types_, c_.d.untyped, &ok);
      if (!ok)
        c_.em.warn("coercion",
                   "parameter " + param_ + " does not match its schema type; kept as a string",
                   c_.abs(c_.mark));
    }
    param_prefix();
    c_.em.args(value);
  }
  c_.pos = found ? ve.resume : end;
  if (found && !ve.closed)
    c_.em.warn("missing_marker", "parameter not closed with " + std::string(c_.d.value_close),
               c_.abs(end));
  go(St::kParams);
  return true;
}

auto XmlFamily::attr_header_at(std::size_t p, std::string_view open, std::string_view attr,
                               std::size_t& name_at) const -> Tri {
  if (!c_.d.attr_headers || open.size() < 2 || open.back() != '=') return Tri::kNo;
  open.remove_suffix(1);  // `<function`
  Tri t = at_pos(p, open);
  if (t != Tri::kYes) return t;
  // `<function` ws+ (`=` | attr ws* `=`) ws*, within kLookahead bytes; the first ws keeps
  // `<functions>` and `<function_x` out.
  const std::size_t start = p;
  const std::size_t limit = std::min(c_.buf.size(), start + kLookahead);
  p += open.size();
  auto skip_ws = [&] {
    while (p < limit && is_ws(c_.buf[p])) ++p;
  };
  // At `limit`: more bytes may decide it, unless the output ended or the lookahead is used up.
  auto undecided = [&] {
    return c_.eof || limit < c_.buf.size() || limit - start >= kLookahead ? Tri::kNo : Tri::kMore;
  };
  if (p >= limit) return undecided();
  if (!is_ws(c_.buf[p])) return Tri::kNo;
  skip_ws();
  if (p == limit) return undecided();
  if (c_.buf[p] != '=') {
    const Tri named = at_pos(p, attr);
    if (named != Tri::kYes) return named;
    p += attr.size();
    skip_ws();
    if (p == limit) return undecided();
    if (c_.buf[p] != '=') return Tri::kNo;
  }
  ++p;
  skip_ws();
  if (p == limit) return undecided();
  name_at = p;
  return Tri::kYes;
}

Tri XmlFamily::take_slipped_call_open() {
  const Tri attr = take_attr_header(c_.d.call_open, c_.d.call_name_attr);
  if (attr != Tri::kNo) return attr;
  std::string_view open = c_.d.call_open;
  if (!c_.d.repairs_tag_slips || !c_.lists_tools() || open.size() < 2 || open.back() != '=')
    return Tri::kNo;
  open.remove_suffix(1);  // `<function`
  Tri t = c_.at(open);
  if (t != Tri::kYes) return t;
  std::size_t p = c_.pos + open.size();
  if (p < c_.buf.size() && c_.buf[p] == ' ') ++p;
  const std::size_t limit = std::min(c_.buf.size(), p + kLookahead);
  const std::size_t gt = c_.bytes(p, limit).find('>');
  if (gt == std::string_view::npos)
    return c_.eof || limit - p == kLookahead ? Tri::kNo : Tri::kMore;
  if (!c_.lists(c_.bytes(p, p + gt))) return Tri::kNo;
  c_.em.warn("missing_marker", "call marker written without '=': " + std::string(c_.d.call_open),
             c_.abs(c_.pos));
  c_.pos = p;
  return Tri::kYes;
}

auto XmlFamily::at_pos(std::size_t p, std::string_view lit) const -> Tri {
  if (lit.empty()) return Tri::kNo;
  std::size_t n = std::min(c_.buf.size() - p, lit.size());
  if (c_.buf.compare(p, n, lit.substr(0, n)) != 0) return Tri::kNo;
  if (n == lit.size()) return Tri::kYes;
  return c_.eof ? Tri::kNo : Tri::kMore;
}

auto XmlFamily::param_name_from(std::size_t from, std::string& name) const -> Tri {
  const std::size_t limit = std::min(c_.buf.size(), from + kLookahead);
  const std::size_t e = c_.bytes(from, limit).find(c_.d.param_name_end);
  if (e == std::string_view::npos)
    return c_.eof || limit - from == kLookahead ? Tri::kNo : Tri::kMore;
  std::size_t used = e;
  name = header_name(c_.bytes(from, from + e), used);
  return Tri::kYes;
}

std::string XmlFamily::header_name(std::string_view header, std::size_t& used) const {
  used = header.size();
  if (!c_.d.repairs_tag_slips || !params_) return attr_text(header, c_.d.param_name_attr).text;
  // The open marker without its '<' (`parameter=`), repeated at the header's start.
  const std::string_view again = std::string_view(c_.d.param_open).substr(1);
  auto schema_name = [&](std::string_view h, std::string& out) {
    out = attr_name(h);
    while (!schema_param(out) && out.size() > again.size() && out.starts_with(again))
      out.erase(0, again.size());
    return schema_param(out);
  };
  std::string name;
  if (schema_name(header, name)) return name;
  if (auto nl = header.find('\n');
      nl != std::string_view::npos && schema_name(header.substr(0, nl), name)) {
    used = nl;
    return name;
  }
  return attr_name(header);
}

bool XmlFamily::schema_param(const std::string& name) const {
  // No schema: any name may be a parameter.
  return !params_ || std::binary_search(param_names_.begin(), param_names_.end(), name);
}

auto XmlFamily::ahead(std::size_t p, bool param_of_schema, bool call_close, bool section_close,
                      bool section_open, bool call_open) const -> Ahead {
  const Dialect& d = c_.d;
  const std::size_t start = p;
  for (;;) {
    while (p < c_.buf.size() && is_ws(c_.buf[p])) ++p;
    const Tri escaped_newline = d.escaped_layout ? at_pos(p, kEscapedNewline) : Tri::kNo;
    if (escaped_newline == Tri::kMore) return Ahead::kMore;
    if (escaped_newline == Tri::kNo) break;
    p += kEscapedNewline.size();
  }
  if (p - start >= kLookahead) return Ahead::kText;
  if (p == c_.buf.size()) return c_.eof ? Ahead::kEnd : Ahead::kMore;
  bool more = false;
  auto check = [&](bool wanted, std::string_view lit) {
    if (!wanted) return false;
    Tri t = at_pos(p, lit);
    more = more || t == Tri::kMore;
    return t == Tri::kYes;
  };
  std::size_t name_at = 0;
  if (check(param_of_schema, d.param_open)) {
    name_at = p + d.param_open.size();
  } else if (param_of_schema) {
    // name_at is set only when the header is one.
    more = more || attr_header_at(p, d.param_open, d.param_name_attr, name_at) == Tri::kMore;
  }
  if (name_at != 0) {
    std::string name;
    Tri t = param_name_from(name_at, name);
    if (t != Tri::kYes) return t == Tri::kMore ? Ahead::kMore : Ahead::kText;
    return schema_param(name) ? Ahead::kEnd : Ahead::kText;
  }
  if (check(call_close, d.call_close) || check(section_close, d.section_close) ||
      check(section_open, d.section_open) || check(call_open, d.call_open))
    return Ahead::kEnd;
  return more ? Ahead::kMore : Ahead::kText;
}

auto XmlFamily::checked_value_end() -> ValueEnd {
  const Dialect& d = c_.d;
  const std::string_view buf = c_.buf;
  for (;;) {
    MarkerSet::Hit hit = checked_markers_.find(buf, vscan_, c_.eof);
    if (hit.kind != MarkerSet::Hit::kFound) {
      // No marker starts before hit.at: the next chunk's search resumes there, so a long value
      // streamed in small chunks is scanned once, not once per chunk.
      vscan_ = hit.at;
      return {false, hit.at, 0, false};
    }
    const std::size_t at = hit.at, after = hit.at + hit.len;
    auto undecided = [&] { return ValueEnd{false, at, 0, false}; };
    auto text = [&](std::size_t next) { vscan_ = next; };
    switch (hit.tag) {
      case kParamOpen: {
        // Inside a line it is text, unless the dialect repairs tag slips (Dialect) and it opens
        // a parameter the schema declares and the call has not given yet. GLM's markers are
        // tokens of their own, written on one line (GLM-4.7): no line start to tell them by.
        const bool inline_open = !line_start(at) && !d.value_close_any_param;
        if (inline_open && (!d.repairs_tag_slips || !params_ || depth_ > 0)) {
          text(after);
          break;
        }
        std::string name;
        Tri t = param_name_at(at, name);
        if (t == Tri::kMore) return undecided();
        if (t == Tri::kNo) {
          text(after);
          break;
        }
        bool given = std::find(given_.begin(), given_.end(), name) != given_.end();
        if (!given && schema_param(name)) return {true, at, at, false};
        // A parameter element quoted in the value: its close pairs with it.
        if (!inline_open) ++depth_;
        text(after);
        break;
      }
      case kClose: {
        if (depth_ > 0) {
          --depth_;
          text(after);
          break;
        }
        Ahead a = ahead(after, true, true, true, false);
        if (a == Ahead::kMore) return undecided();
        if (a == Ahead::kEnd) return {true, at, after, true};
        text(after);
        break;
      }
      case kMisspeltClose: {
        // On a line of its own, with no markup after the misspelt part (at most 16 bytes).
        constexpr std::size_t kMisspelt = 16;
        const std::size_t limit = std::min(buf.size(), after + kMisspelt + 1);
        std::size_t eol = buf.substr(0, limit).find('\n', after);
        // No newline yet, with fewer bytes than the limit there: the line may still end in time.
        if (eol == std::string_view::npos && limit - after <= kMisspelt) {
          if (!c_.eof) return undecided();
          eol = buf.size();
        }
        if (eol == std::string_view::npos || depth_ > 0 || !line_start(at) ||
            c_.bytes(after, eol).find('<') != std::string_view::npos) {
          text(after);
          break;
        }
        Ahead a = ahead(eol, true, true, true, false);
        if (a == Ahead::kMore) return undecided();
        if (a == Ahead::kEnd) return {true, at, eol, false};
        text(after);
        break;
      }
      case kCallClose:
      case kSectionClose: {
        if (depth_ > 0) {
          text(after);
          break;
        }
        // A call close ends the value before the section's close (or the end), or without
        // sections before the next call's open (GLM); a section close before the next section
        // (or the end).
        bool call = hit.tag == kCallClose;
        Ahead a = ahead(after, false, false, call, !call, call && d.section_close.empty());
        if (a == Ahead::kEnd && call && !d.section_close.empty()) {
          // `</function>` then `</tool_call>`: the section's close must itself be followed by
          // another section or the end, as a quoted call's is not.
          std::size_t p = after;
          while (p < buf.size() && is_ws(buf[p])) ++p;
          if (p < buf.size()) a = ahead(p + d.section_close.size(), false, false, false, true);
        }
        if (a == Ahead::kMore) return undecided();
        if (a == Ahead::kEnd) return {true, at, at, false};
        text(after);
        break;
      }
      default:
        text(after);
    }
  }
}

}  // namespace

std::unique_ptr<Family> make_xml_family(Core& core) {
  return std::make_unique<XmlFamily>(core);
}

}  // namespace chatwire::parse
