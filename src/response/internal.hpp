// What the response-template files share: Python's value rules (python.cpp), Python regexes on
// PCRE2 (regex.cpp), the loaded template (template.cpp), region values (content.cpp) and the
// tool-argument casts (coerce.cpp). The streaming engine is parser.cpp.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chatwire/response_json.hpp"

namespace chatwire::response {

// An error with no position or path (the caller adds the path where it knows it).
inline Error error_of(std::string type, std::string message) {
  return Error{std::move(type), std::move(message), 0, 0, {}};
}

// ---- Python value rules (python.cpp) ---------------------------------------------------------

// str.strip() with no argument: Python's whitespace (str.isspace), not only ASCII.
std::string_view py_strip(std::string_view s);
// Python truthiness of a JSON value (None, False, 0, 0.0, "", [], {} are false).
bool py_truthy(const Json& v);
// type(v).__name__ for the JSON value as Python holds it.
std::string py_type_name(const Json& v);
// repr() of a str, for messages.
std::string py_repr(std::string_view s);
// None, "", [] and {}: the values finalize drops unless they are defaults.
bool py_is_empty(const Json& v);

// What Python does with a text: a value, the ValueError Python raises (code may catch it), or a
// refusal (a value Python would produce that JSON here cannot hold: ints beyond 64 bits, lone
// surrogates, nesting beyond the limit), which always propagates.
struct PyResult {
  enum class Kind { kValue, kValueError, kRefused };
  Kind kind = Kind::kValue;
  Json value;
  Error error;  // kValueError / kRefused
  static PyResult refused(std::string type, std::string message) {
    PyResult r;
    r.kind = Kind::kRefused;
    r.error = error_of(std::move(type), std::move(message));
    return r;
  }
  static PyResult value_error(std::string type, std::string message) {
    PyResult r;
    r.kind = Kind::kValueError;
    r.error = error_of(std::move(type), std::move(message));
    return r;
  }
};
PyResult py_int(std::string_view text);    // int(text)
PyResult py_float(std::string_view text);  // float(text)
// json.loads(text) with the C scanner's rules (NaN/Infinity, duplicate keys: last value in the
// first key's place, a BOM refused); kValueError is a JSONDecodeError.
PyResult py_json_loads(std::string_view text, std::size_t max_depth);
// json.dumps(s): a JSON string literal (ASCII only, as ensure_ascii=True writes it).
std::string py_json_dumps_str(std::string_view s);

// ---- Python regexes on PCRE2 (regex.cpp) -----------------------------------------------------

struct RegexCode;  // the compiled PCRE2 pattern

class Regex {
 public:
  // Which Python engine's syntax a pattern is written for: transformers compiles a template's
  // delimiters (open_pattern, close_pattern, start_anchor_pattern) with the `regex` module, which
  // its partial matching needs, and a content parser's tag_pattern with `re`.
  enum class Syntax { kRe, kRegexModule };
  // A Python pattern, compiled as re.compile(pattern, re.DOTALL) (or regex.compile); constructs
  // whose Python meaning PCRE2 cannot give exactly are refused (ValueError naming the construct).
  static Result<Regex> python(std::string_view pattern, const std::string& path,
                              const Limits& limits, Syntax syntax = Syntax::kRe);
  // "|".join(re.escape(s) for s in literals): the literals in the given order.
  static Result<Regex> literals(const std::vector<std::string>& literals, const std::string& path,
                                const Limits& limits);

  enum class Found { kNone, kComplete, kPartial };
  struct Match {
    Found found = Found::kNone;
    std::size_t start = 0, end = 0;
    // Named groups that took part in the match (groupdict() without the None values).
    std::vector<std::pair<std::string, std::string>> named;
    // Every named group, None when it did not take part (for xml-inline's key/value).
    std::map<std::string, std::optional<std::string>> groupdict;
  };
  // pattern.search(subject, pos[, partial=True]). `partial` reports a match that reaches the end
  // of the subject and could go on (PCRE2's hard partial match). Errors: LimitError when PCRE2's
  // match or depth limit is hit.
  Result<Match> search(std::string_view subject, std::size_t pos, bool partial,
                       bool not_empty_at_start = false) const;
  const std::vector<std::string>& group_names() const { return names_; }

 private:
  std::shared_ptr<const RegexCode> code_;
  std::vector<std::string> names_;
  Limits limits_;
};

// ---- The loaded template (template.cpp) ------------------------------------------------------

enum class ContentKind { kText, kInt, kFloat, kBool, kJson, kXmlInline, kKvLines };

// A content parser and its validated content_args (value_parser nests one).
struct ContentParser {
  ContentKind kind = ContentKind::kText;
  std::string name;  // the spec's name ("text", "xml-inline", ...)
  bool strip = true;
  // json
  std::vector<std::pair<std::string, std::string>> string_delims;
  bool unquoted_keys = false;
  bool allow_non_json = false;
  // xml-inline
  std::optional<Regex> tag_pattern;
  bool merge_duplicates = false;
  // kv-lines
  std::string line_sep = "\n", kv_sep = ":";
  std::shared_ptr<const ContentParser> value_parser;  // xml-inline, kv-lines
};
bool streamable(ContentKind kind);  // text/int/float/bool chunks are not dirty

struct Delimiter {
  Regex re;
  bool literal = false;     // given as literal(s), not as a pattern
  bool can_extend = false;  // one literal is a strict prefix of another
};

struct Field {
  std::string name;
  std::optional<Delimiter> open, close;
  ContentParser content;
  bool repeats = false;
  std::optional<std::string> join;
  bool optional = true;
  std::optional<Json> transform;
  bool transform_each = false;
};

}  // namespace chatwire::response

struct chatwire::response::Template::Impl {
  Json spec;
  Limits limits;
  Json defaults = Json::object();
  std::vector<Field> fields;
  std::optional<std::size_t> implicit;  // index of the field without an open
  Delimiter anchor;
  std::string anchor_key;  // "start_anchor" or "start_anchor_pattern"
};

namespace chatwire::response {

// ---- Region values (content.cpp) -------------------------------------------------------------

// The field's content parser on the region body, then its transform with the named captures.
Result<Json> process_field(const Field& field, std::string_view body,
                           const std::vector<std::pair<std::string, std::string>>& captures,
                           const Limits& limits);
// A transform template's strings: ValueError when one mixes a {placeholder} with text.
Result<bool> validate_transform(const Json& transform, const std::string& path);

// ---- Tool-argument casts (coerce.cpp) --------------------------------------------------------

// Tool name -> its parameters' `properties` (an empty object when it declares none).
using ToolParams = std::vector<std::pair<std::string, Json>>;
Result<ToolParams> tool_params(const Json& tools);
// _schema_types: the candidate types of one property schema ("type", anyOf, nullable).
Result<std::vector<std::string>> schema_types(const Json& schema, std::size_t depth = 0);
// _coerce: the first of `types` that casts the text, else the text itself.
Result<Json> coerce_argument(const std::string& raw, const std::vector<std::string>& types,
                             std::size_t max_depth = 512);
// Casts the string arguments of a tool-call-shaped value (or a list of them) by the schema.
Result<bool> coerce_tool_calls(Json& value, const ToolParams& params);

}  // namespace chatwire::response
