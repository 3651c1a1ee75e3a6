// Syntax: the public handle of a dialect, either a table row or one derived from a template's
// renders, and its JSON form (so a server can cache a derived parser with the probe profile).
//
// The JSON form is written and read through one table of the dialect's fields per kind (text,
// flag, list, sections, enums): a new Dialect field is one row here.
#include <algorithm>
#include <utility>

#include "parse/internal.hpp"
#include "util/json_text.hpp"

namespace chatwire::parse {

namespace {

struct TextField {
  const char* key;
  std::string_view Dialect::*member;
};
constexpr TextField kTextFields[] = {
    {"think_open", &Dialect::think_open},
    {"think_close", &Dialect::think_close},
    {"reasoning_label", &Dialect::reasoning_label},
    {"answer_open", &Dialect::answer_open},
    {"damaged_marker_prefix", &Dialect::damaged_marker_prefix},
    {"layout_before_calls", &Dialect::layout_before_calls},
    {"noise_call_end", &Dialect::noise_call_end},
    {"recipient_open", &Dialect::recipient_open},
    {"recipient_close", &Dialect::recipient_close},
    {"recipient_header", &Dialect::recipient_header},
    {"call_header_after", &Dialect::call_header_after},
    {"reasoning_recipient", &Dialect::reasoning_recipient},
    {"answer_recipient", &Dialect::answer_recipient},
    {"section_open", &Dialect::section_open},
    {"section_close", &Dialect::section_close},
    {"call_open", &Dialect::call_open},
    {"call_close", &Dialect::call_close},
    {"id_marker", &Dialect::id_marker},
    {"type_separator", &Dialect::type_separator},
    {"label_close", &Dialect::label_close},
    {"call_label", &Dialect::call_label},
    {"raw_args_key", &Dialect::raw_args_key},
    {"raw_args_function", &Dialect::raw_args_function},
    {"content_name", &Dialect::content_name},
    {"call_name_attr", &Dialect::call_name_attr},
    {"param_name_attr", &Dialect::param_name_attr},
    {"value_type_attr", &Dialect::value_type_attr},
    {"param_open", &Dialect::param_open},
    {"param_name_end", &Dialect::param_name_end},
    {"value_open", &Dialect::value_open},
    {"type_open", &Dialect::type_open},
    {"type_close", &Dialect::type_close},
    {"value_close", &Dialect::value_close},
    {"kv_prefix", &Dialect::kv_prefix},
    {"kv_quote", &Dialect::kv_quote},
};

struct FlagField {
  const char* key;
  bool Dialect::*member;
};
constexpr FlagField kFlagFields[] = {
    {"starts_in_reasoning", &Dialect::starts_in_reasoning},
    {"reasoning_until_close", &Dialect::reasoning_until_close},
    {"stray_close_dropped", &Dialect::stray_close_dropped},
    {"newlines_after_think_close", &Dialect::newlines_after_think_close},
    {"reasoning_newlines_trimmed", &Dialect::reasoning_newlines_trimmed},
    {"reasoning_lead_trimmed", &Dialect::reasoning_lead_trimmed},
    {"think_close_newline", &Dialect::think_close_newline},
    {"call_ends_reasoning", &Dialect::call_ends_reasoning},
    {"drops_unknown_tools", &Dialect::drops_unknown_tools},
    {"markdown_literals", &Dialect::markdown_literals},
    {"bare_json", &Dialect::bare_json},
    {"bare_anywhere", &Dialect::bare_anywhere},
    {"bare_separators", &Dialect::bare_separators},
    {"builtin_calls", &Dialect::builtin_calls},
    {"args_required", &Dialect::args_required},
    {"name_as_key", &Dialect::name_as_key},
    {"python_dicts", &Dialect::python_dicts},
    {"id_in_header", &Dialect::id_in_header},
    {"id_first", &Dialect::id_first},
    {"fenced_args", &Dialect::fenced_args},
    {"header_at_start", &Dialect::header_at_start},
    {"json_list_calls", &Dialect::json_list_calls},
    {"header_recovery", &Dialect::header_recovery},
    {"pythonic_bare", &Dialect::pythonic_bare},
    {"pythonic_lines", &Dialect::pythonic_lines},
    {"value_close_checked", &Dialect::value_close_checked},
    {"value_close_any_param", &Dialect::value_close_any_param},
    {"value_close_named", &Dialect::value_close_named},
    {"call_open_restarts", &Dialect::call_open_restarts},
    {"json_call_body", &Dialect::json_call_body},
    {"cdata_values", &Dialect::cdata_values},
    {"repairs_tag_slips", &Dialect::repairs_tag_slips},
    {"namespaced_names", &Dialect::namespaced_names},
    {"attr_headers", &Dialect::attr_headers},
    {"attr_entities", &Dialect::attr_entities},
    {"escaped_layout", &Dialect::escaped_layout},
    {"loose_bare", &Dialect::loose_bare},
};

struct ListField {
  const char* key;
  std::vector<std::string_view> Dialect::*member;
};
constexpr ListField kListFields[] = {
    {"dropped", &Dialect::dropped},       {"end_tokens", &Dialect::end_tokens},
    {"name_keys", &Dialect::name_keys},   {"args_keys", &Dialect::args_keys},
    {"id_keys", &Dialect::id_keys},       {"noise", &Dialect::noise},
    {"header_end", &Dialect::header_end}, {"name_end", &Dialect::name_end},
    {"name_stop", &Dialect::name_stop},   {"cut_frame_prefixes", &Dialect::cut_frame_prefixes},
};

struct SectionField {
  const char* key;
  std::vector<Section> Dialect::*member;
};
constexpr SectionField kSectionFields[] = {
    {"sections", &Dialect::sections},
    {"pythonic_sections", &Dialect::pythonic_sections},
    {"loose_sections", &Dialect::loose_sections},
    {"think_alternates", &Dialect::think_alternates},
};

template <typename E>
struct EnumName {
  E value;
  const char* name;
};
constexpr EnumName<CallSyntax> kFamilies[] = {
    {CallSyntax::kNone, "none"},
    {CallSyntax::kJsonObject, "json"},
    {CallSyntax::kHeaderJson, "header_json"},
    {CallSyntax::kXmlParams, "xml"},
    {CallSyntax::kPythonic, "pythonic"},
    {CallSyntax::kKeyValue, "key_value"},
    {CallSyntax::kHarmony, "harmony"},
};
constexpr EnumName<ValueFraming> kFramings[] = {
    {ValueFraming::kVerbatim, "verbatim"},
    {ValueFraming::kStripOneNewline, "strip_one_newline"},
    {ValueFraming::kTrim, "trim"},
    {ValueFraming::kJson, "json"},
};
constexpr EnumName<UntypedValues> kUntyped[] = {
    {UntypedValues::kString, "string"},
    {UntypedValues::kJsonGuess, "json_guess"},
};

template <typename E, std::size_t N>
const char* enum_name(const EnumName<E> (&table)[N], E value) {
  for (const auto& row : table)
    if (row.value == value) return row.name;
  return table[0].name;
}
template <typename E, std::size_t N>
bool enum_value(const EnumName<E> (&table)[N], std::string_view name, E& out) {
  for (const auto& row : table)
    if (name == row.name) {
      out = row.value;
      return true;
    }
  return false;
}

// Copies every view of `d` into `data.strings`, so the dialect no longer points elsewhere.
void own_strings(SyntaxData& data) {
  Dialect& d = data.dialect;
  for (const auto& f : kTextFields) d.*f.member = data.keep(d.*f.member);
  for (const auto& f : kListFields)
    for (auto& v : d.*f.member) v = data.keep(v);
  for (const auto& f : kSectionFields)
    for (auto& s : d.*f.member) s = {data.keep(s.open), data.keep(s.close)};
  d.name = data.name;
  d.summary = data.summary;
}

Error field_error(const std::string& key, const std::string& what) {
  return Error{"ValueError", "parser field '" + key + "': " + what, 0, 0, "parser." + key};
}

}  // namespace

std::string_view family_name(CallSyntax syntax) noexcept {
  return enum_name(kFamilies, syntax);
}

Syntax make_syntax(const Dialect& dialect, std::string name, std::string summary) {
  auto data = std::make_shared<SyntaxData>();
  data->dialect = dialect;
  data->name = std::move(name);
  data->summary = std::move(summary);
  own_strings(*data);
  return Syntax(std::move(data));
}

std::optional<Syntax> Syntax::without_calls(const Syntax& text) {
  Dialect d = text.data().dialect;
  if (d.syntax == CallSyntax::kNone) return text;
  if (d.syntax == CallSyntax::kHarmony || !d.recipient_open.empty()) return std::nullopt;
  d.syntax = CallSyntax::kNone;
  return make_syntax(d, text.name(), text.summary() + "; no tool calls read");
}

Syntax Syntax::with_calls(const Syntax& text, const Syntax& calls) {
  Dialect d = calls.data().dialect;
  const Dialect& t = text.data().dialect;
  if (!t.think_open.empty() || !t.think_close.empty()) {
    d.think_open = t.think_open;
    d.think_close = t.think_close;
    d.think_alternates = t.think_alternates;
    d.starts_in_reasoning = t.starts_in_reasoning;
    d.newlines_after_think_close = t.newlines_after_think_close;
    d.reasoning_newlines_trimmed = t.reasoning_newlines_trimmed;
    d.stray_close_dropped = t.stray_close_dropped;
    d.reasoning_lead_trimmed = t.reasoning_lead_trimmed;
  }
  if (!t.answer_open.empty()) d.answer_open = t.answer_open;
  // The text syntax's framing joins the calls syntax's: its dropped tokens, the turn's end (no
  // longer listed in dropped), the control tokens that frame its markers.
  auto merge = [](std::vector<std::string_view>& into, const std::vector<std::string_view>& from) {
    for (auto m : from)
      if (std::find(into.begin(), into.end(), m) == into.end()) into.push_back(m);
  };
  merge(d.dropped, t.dropped);
  merge(d.end_tokens, t.end_tokens);
  merge(d.cut_frame_prefixes, t.cut_frame_prefixes);
  return make_syntax(d, calls.name(),
                     calls.summary() + "; reasoning and framing of " + text.name());
}

Result<Syntax> Syntax::named(std::string_view dialect) {
  const Dialect* d = find_dialect(dialect);
  if (!d) {
    std::string names;
    for (const auto& info : dialect_table())
      names += (names.empty() ? "" : ", ") + std::string(info.name);
    return Error{"ValueError",
                 "unknown dialect '" + std::string(dialect) + "' (known: " + names + ")", 0, 0,
                 "dialect"};
  }
  // A table row's views point at literals: shared once per row, never copied.
  static const std::vector<std::shared_ptr<const SyntaxData>> rows = [] {
    std::vector<std::shared_ptr<const SyntaxData>> out;
    for (const auto& row : dialect_table()) {
      auto data = std::make_shared<SyntaxData>();
      data->dialect = row;
      data->name = std::string(row.name);
      data->summary = std::string(row.summary);
      out.push_back(std::move(data));
    }
    return out;
  }();
  return Syntax(rows[static_cast<std::size_t>(d - dialect_table().data())]);
}

const std::string& Syntax::name() const noexcept {
  return data_->name;
}
const std::string& Syntax::summary() const noexcept {
  return data_->summary;
}
std::string_view Syntax::family() const noexcept {
  return family_name(data_->dialect.syntax);
}
bool Syntax::has_tool_calls() const noexcept {
  return data_->dialect.syntax != CallSyntax::kNone;
}
bool Syntax::has_reasoning() const noexcept {
  return !data_->dialect.think_open.empty() || !data_->dialect.think_close.empty();
}

Json to_json(const Syntax& syntax) {
  const SyntaxData& data = syntax.data();
  const Dialect& d = data.dialect;
  const Dialect empty;
  Json out = Json::object();
  out["name"] = data.name;
  out["summary"] = data.summary;
  out["family"] = family_name(d.syntax);
  for (const auto& f : kTextFields)
    if (d.*f.member != empty.*f.member) out[f.key] = d.*f.member;
  for (const auto& f : kFlagFields)
    if (d.*f.member != empty.*f.member) out[f.key] = d.*f.member;
  for (const auto& f : kListFields)
    if (d.*f.member != empty.*f.member) {
      Json list = Json::array();
      for (auto v : d.*f.member) list.push_back(v);
      out[f.key] = std::move(list);
    }
  for (const auto& f : kSectionFields)
    if (!(d.*f.member).empty()) {
      Json list = Json::array();
      for (const auto& s : d.*f.member) list.push_back(Json::array({s.open, s.close}));
      out[f.key] = std::move(list);
    }
  if (d.framing != empty.framing) out["framing"] = enum_name(kFramings, d.framing);
  if (d.untyped != empty.untyped) out["untyped"] = enum_name(kUntyped, d.untyped);
  return out;
}

Result<Syntax> syntax_from_json(const Json& json) {
  if (!json.is_object()) return field_error("", "a parser is a JSON object");
  auto data = std::make_shared<SyntaxData>();
  Dialect& d = data->dialect;
  auto text = [&](const char* key, std::string& out) -> bool {
    auto it = json.find(key);
    if (it == json.end()) return true;
    if (!it->is_string()) return false;
    out = it->get<std::string>();
    return true;
  };
  if (!text("name", data->name)) return field_error("name", "must be a string");
  if (!text("summary", data->summary)) return field_error("summary", "must be a string");
  std::string family = "none";
  if (!text("family", family) || !enum_value(kFamilies, family, d.syntax))
    return field_error("family", "unknown family '" + family + "'");
  for (const auto& f : kTextFields) {
    if (!json.contains(f.key)) continue;  // the field's default (call_name_attr: "name")
    std::string v;
    if (!text(f.key, v)) return field_error(f.key, "must be a string");
    d.*f.member = data->keep(v);
  }
  for (const auto& f : kFlagFields) {
    auto it = json.find(f.key);
    if (it == json.end()) continue;
    if (!it->is_boolean()) return field_error(f.key, "must be true or false");
    d.*f.member = it->get<bool>();
  }
  for (const auto& f : kListFields) {
    auto it = json.find(f.key);
    if (it == json.end()) continue;
    if (!it->is_array()) return field_error(f.key, "must be a list of strings");
    (d.*f.member).clear();
    for (const auto& v : *it) {
      if (!v.is_string()) return field_error(f.key, "must be a list of strings");
      (d.*f.member).push_back(data->keep(v.get<std::string>()));
    }
  }
  for (const auto& f : kSectionFields) {
    auto it = json.find(f.key);
    if (it == json.end()) continue;
    if (!it->is_array()) return field_error(f.key, "must be a list of [open, close] pairs");
    for (const auto& v : *it) {
      if (!v.is_array() || v.size() != 2 || !v[0].is_string() || !v[1].is_string())
        return field_error(f.key, "must be a list of [open, close] pairs");
      (d.*f.member)
          .push_back({data->keep(v[0].get<std::string>()), data->keep(v[1].get<std::string>())});
    }
  }
  std::string framing = "verbatim", untyped = "string";
  if (!text("framing", framing) || !enum_value(kFramings, framing, d.framing))
    return field_error("framing", "unknown framing '" + framing + "'");
  if (!text("untyped", untyped) || !enum_value(kUntyped, untyped, d.untyped))
    return field_error("untyped", "unknown value rule '" + untyped + "'");
  d.name = data->name;
  d.summary = data->summary;
  return Syntax(std::move(data));
}

std::string Syntax::to_json_text(int indent) const {
  return to_json(*this).dump(indent, ' ', false, Json::error_handler_t::replace);
}
Result<Syntax> Syntax::from_json_text(std::string_view json_text, std::size_t max_json_depth) {
  auto json = util::parse_bounded_json(json_text, max_json_depth);
  if (json.failure == util::BoundedJson::Failure::kTooDeep)
    return field_error("", "a parser nests deeper than " + std::to_string(max_json_depth));
  if (!json)
    return field_error("", "a parser is a JSON object (the text is not JSON: " + json.what + ")");
  return syntax_from_json(json.value);
}

}  // namespace chatwire::parse
