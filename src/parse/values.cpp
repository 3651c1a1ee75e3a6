// Value helpers of the output parser: JSON quoting, schema-typed coercion of XML parameter values,
// numbers as Python reads them, and JSON call lists. Python literals are python_literals.cpp.
#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "parse/internal.hpp"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include "util/json_escape.hpp"
#include "util/json_text.hpp"
#include "util/utf8.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace chatwire::parse {

namespace {

std::string_view trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Schema type names as models' tool definitions spell them, and the JSON type each means.
struct TypeName {
  std::string_view name;
  bool ParamTypes::*flag;
};
constexpr TypeName kTypeNames[] = {
    {"string", &ParamTypes::string},   {"str", &ParamTypes::string},
    {"text", &ParamTypes::string},     {"enum", &ParamTypes::string},
    {"integer", &ParamTypes::integer}, {"int", &ParamTypes::integer},
    {"number", &ParamTypes::number},   {"float", &ParamTypes::number},
    {"double", &ParamTypes::number},   {"boolean", &ParamTypes::boolean},
    {"bool", &ParamTypes::boolean},    {"object", &ParamTypes::object},
    {"dict", &ParamTypes::object},     {"array", &ParamTypes::array},
    {"list", &ParamTypes::array},      {"null", &ParamTypes::null},
};

// A walk over a function's parameter schema. Local references (`$ref` to "#/...") resolve against
// its root; every schema object visited costs one step of a fixed budget, so that reference cycles
// and fan-out (a definition whose anyOf refers to itself several times) end early instead of
// exploding: the request's tools come from the client, and the walk runs once per parameter.
struct SchemaWalk {
  const Json* root = nullptr;
  int steps_left = 4096;
  bool step() { return --steps_left >= 0; }
};
constexpr int kMaxSchemaDepth = 32;

// The target of a local JSON pointer reference ("#/$defs/a~1b" is $defs -> "a/b"), or nullptr.
const Json* resolve_ref(const Json& root, std::string_view ref) {
  if (ref.substr(0, 2) != "#/") return ref == "#" ? &root : nullptr;
  const Json* at = &root;
  std::size_t pos = 2;
  while (true) {
    const std::size_t slash = std::min(ref.find('/', pos), ref.size());
    std::string key;
    for (std::size_t i = pos; i < slash; ++i) {
      if (ref[i] == '~' && i + 1 < slash && (ref[i + 1] == '0' || ref[i + 1] == '1')) {
        key += ref[i + 1] == '1' ? '/' : '~';
        ++i;
      } else {
        key += ref[i];
      }
    }
    if (at->is_object()) {
      auto it = at->find(key);
      if (it == at->end()) return nullptr;
      at = &*it;
    } else if (at->is_array() && !key.empty() &&
               key.find_first_not_of("0123456789") == std::string::npos && key.size() < 10) {
      const auto index = static_cast<std::size_t>(std::stoul(key));
      if (index >= at->size()) return nullptr;
      at = &(*at)[index];
    } else {
      return nullptr;
    }
    if (slash == ref.size()) return at;
    pos = slash + 1;
  }
}

// The schema a `$ref` names, when `schema` holds a local one that resolves.
const Json* ref_target(const Json& schema, const SchemaWalk& walk) {
  auto it = schema.find("$ref");
  if (it == schema.end() || !it->is_string() || !walk.root) return nullptr;
  return resolve_ref(*walk.root, it->get_ref<const std::string&>());
}

// Adds the type a type name means (kTypeNames: `integer`, `int`, ...) to `types`; the type's
// flag, or nullptr when the name means none.
bool ParamTypes::*add_type_name(ParamTypes& types, std::string_view name) {
  for (const auto& t : kTypeNames)
    if (t.name == name) {
      types.*(t.flag) = true;
      types.known = true;
      if (!types.first && t.flag != &ParamTypes::null) types.first = t.flag;
      return t.flag;
    }
  return nullptr;
}

void add_schema_types(const Json& schema, ParamTypes& types, int depth, SchemaWalk& walk) {
  if (depth > kMaxSchemaDepth || !schema.is_object() || !walk.step()) return;
  // A reference adds its target's types to the schema's own (as SGLang reads `$ref` next to
  // siblings: allOf [target, siblings]).
  if (const Json* target = ref_target(schema, walk))
    add_schema_types(*target, types, depth + 1, walk);
  auto add_name = [&types, &schema](const std::string& name) {
    if (add_type_name(types, name) == &ParamTypes::object && !types.object_schema)
      types.object_schema = &schema;
  };
  if (auto it = schema.find("type"); it != schema.end()) {
    if (it->is_string()) add_name(it->get<std::string>());
    if (it->is_array())
      for (const auto& t : *it)
        if (t.is_string()) add_name(t.get<std::string>());
  }
  for (const char* key : {"anyOf", "oneOf", "allOf"}) {
    if (auto it = schema.find(key); it != schema.end() && it->is_array())
      for (const auto& sub : *it) add_schema_types(sub, types, depth + 1, walk);
  }
  if (auto it = schema.find("nullable"); it != schema.end() && it->is_boolean() && it->get<bool>())
    types.null = true;
  // Without a type, the values an `enum` or `const` allows tell the types (an enum of strings
  // and null is a nullable string; `{"const": "7"}` a string).
  auto add_value_type = [&types](const Json& v) {
    bool ParamTypes::*flag = v.is_string()           ? &ParamTypes::string
                             : v.is_number_integer() ? &ParamTypes::integer
                             : v.is_number()         ? &ParamTypes::number
                             : v.is_boolean()        ? &ParamTypes::boolean
                             : v.is_object()         ? &ParamTypes::object
                             : v.is_array()          ? &ParamTypes::array
                                                     : &ParamTypes::null;
    types.*flag = true;
    types.known = true;
    if (!types.first && flag != &ParamTypes::null) types.first = flag;
  };
  if (!types.known) {
    if (auto it = schema.find("enum"); it != schema.end()) {
      if (it->is_array() && !it->empty()) {
        for (const auto& v : *it) add_value_type(v);
        types.members = &*it;
      } else {
        add_value_type(Json(""));  // a malformed enum: its values are strings
      }
    } else if (auto c = schema.find("const"); c != schema.end()) {
      add_value_type(*c);
    }
  }
}

// Visits a schema and what stands for it: the target of its local reference (first, as the
// reference's members come before the schema's own) and the anyOf/oneOf/allOf branches below it
// (SGLang reads a function whose parameters are a union of objects so). Bounded by
// kMaxSchemaDepth and the walk's budget; stops at the first `visit` that returns true, and
// returns whether one did.
template <typename Visit>
bool visit_branches(const Json& schema, SchemaWalk& walk, const Visit& visit, int depth = 0) {
  if (depth > kMaxSchemaDepth || !schema.is_object() || !walk.step()) return false;
  if (const Json* target = ref_target(schema, walk))
    if (visit_branches(*target, walk, visit, depth + 1)) return true;
  if (visit(schema)) return true;
  for (const char* key : {"anyOf", "oneOf", "allOf"}) {
    if (auto it = schema.find(key); it != schema.end() && it->is_array())
      for (const auto& branch : *it)
        if (visit_branches(branch, walk, visit, depth + 1)) return true;
  }
  return false;
}

// A schema's `properties` object, or null.
const Json* properties_of(const Json& schema) {
  auto props = schema.find("properties");
  return props != schema.end() && props->is_object() ? &*props : nullptr;
}

// The schemas a parameter has in a parameters schema: its entry in `properties`, in the
// schema's references and branches.
void collect_property(const Json& schema, std::string_view name, std::vector<const Json*>& out,
                      SchemaWalk& walk) {
  visit_branches(schema, walk, [&](const Json& node) {
    if (const Json* props = properties_of(node))
      if (auto prop = props->find(std::string(name)); prop != props->end()) out.push_back(&*prop);
    return false;
  });
}

// The schema under `key` (items, additionalProperties) of a schema and of its references and
// branches.
void collect_member(const Json& schema, const char* key, std::vector<const Json*>& out,
                    SchemaWalk& walk) {
  visit_branches(schema, walk, [&](const Json& node) {
    if (auto it = node.find(key); it != node.end() && it->is_object()) out.push_back(&*it);
    return false;
  });
}

}  // namespace

// ---- numbers ----

bool is_json_string(std::string_view s) {
  return !s.empty() && s.front() == '"' && Json::accept(s);
}

bool is_integer_text(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

// Python's int(text) for plain decimal integers, written as JSON.
std::string integer_json(std::string_view s) {
  bool negative = false;
  if (s[0] == '-' || s[0] == '+') {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  while (s.size() > 1 && s[0] == '0') s.remove_prefix(1);
  std::string out;
  if (negative && s != "0") out += '-';
  out += s;
  return out;
}

// Python's float(text), written as JSON; an integral value is written as an integer (the
// reference parsers return int(v) when float(v) is integral). NaN and infinities are rejected.
bool number_json(std::string_view s, std::string& out) {
  std::string text(s);
  text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
  if (text.empty()) return false;
  std::size_t i = (text[0] == '+' || text[0] == '-') ? 1 : 0;
  bool digit = false;
  for (std::size_t j = i; j < text.size(); ++j) {
    char c = text[j];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digit = true;
    } else if (c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-') {
      return false;
    }
  }
  if (!digit) return false;
  const char* begin = text.c_str() + (text[0] == '+' ? 1 : 0);
  double value = 0;
  auto [ptr, ec] = std::from_chars(begin, text.c_str() + text.size(), value);
  if (ec != std::errc() || ptr != text.c_str() + text.size() || !std::isfinite(value)) return false;
  if (value == std::floor(value) && std::fabs(value) < 9007199254740992.0) {
    out = std::to_string(static_cast<long long>(value));
    if (out == "0" && std::signbit(value)) out = "0";
    return true;
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value);
  out.assign(buf, res.ptr);
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return true;
}

namespace {

using util::kJsonEscapes;  // the table (and escaper) the command's JSON writer uses too

inline bool json_escaped(unsigned char c) {
  return c < 0x20 || c == '"' || c == '\\';
}

// Bytes JSON adds to `text` by escaping it, 16 bytes a step. The counts are summed in byte lanes
// and folded every 48 blocks (at most 5 a lane per block), with no per-block popcount: that is a
// libgcc call on baseline x86-64, and code escapes in nearly every block.
std::size_t escaped_extra(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t extra = 0, i = 0;
#if defined(__SSE2__)
  const __m128i flip = _mm_set1_epi8(static_cast<char>(0x80));
  const __m128i below = _mm_set1_epi8(static_cast<char>(0x20 ^ 0x80));
  const __m128i four = _mm_set1_epi8(4);
  while (i + 16 <= n) {
    __m128i lanes = _mm_setzero_si128();
    const std::size_t stop = std::min(n - 15, i + 48 * 16);
    for (; i < stop; i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      const __m128i ctrl = _mm_cmplt_epi8(_mm_xor_si128(v, flip), below);
      __m128i hit = _mm_or_si128(ctrl, _mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
      hit = _mm_or_si128(hit, _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
      lanes = _mm_sub_epi8(lanes, hit);    // one byte more per escape
      if (_mm_movemask_epi8(ctrl) != 0) {  // \u00xx: 4 more for controls without a short escape
        __m128i short_escape = _mm_cmpeq_epi8(v, _mm_set1_epi8('\b'));
        short_escape = _mm_or_si128(short_escape, _mm_cmpeq_epi8(v, _mm_set1_epi8('\t')));
        short_escape = _mm_or_si128(short_escape, _mm_cmpeq_epi8(v, _mm_set1_epi8('\n')));
        short_escape = _mm_or_si128(short_escape, _mm_cmpeq_epi8(v, _mm_set1_epi8('\f')));
        short_escape = _mm_or_si128(short_escape, _mm_cmpeq_epi8(v, _mm_set1_epi8('\r')));
        lanes = _mm_add_epi8(lanes, _mm_and_si128(_mm_andnot_si128(short_escape, ctrl), four));
      }
    }
    const __m128i sums = _mm_sad_epu8(lanes, _mm_setzero_si128());
    extra += static_cast<std::size_t>(_mm_cvtsi128_si32(sums)) +
             static_cast<std::size_t>(_mm_extract_epi16(sums, 4));
  }
#endif
  for (; i < n; ++i)
    if (json_escaped(p[i])) extra += kJsonEscapes.of[p[i]].size - 1u;
  return extra;
}

}  // namespace

void reserve_growing(std::string& s, std::size_t need) {
  if (need <= s.capacity()) return;
  s.reserve(std::max(need, 2 * s.capacity()));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  if (s.capacity() < 2 * kHuge) return;
  // The whole huge pages inside the string's buffer (its own allocation: advice, not ownership).
  const auto begin = reinterpret_cast<std::uintptr_t>(s.data());
  const std::uintptr_t from = (begin + kHuge - 1) & ~std::uintptr_t{kHuge - 1};
  const std::uintptr_t to = (begin + s.capacity()) & ~std::uintptr_t{kHuge - 1};
  if (to > from) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
#endif
}

void append_json_escaped(std::string& out, std::string_view text) {
  // A piece at a time, each counted (its escaped size) and then escaped into the string grown to
  // that size while it is still in the cache: a value of many megabytes is read from memory once.
  reserve_growing(out, out.size() + text.size() + text.size() / 8 + 16);
  constexpr std::size_t kPiece = std::size_t{1} << 16;
  for (std::size_t at = 0; at < text.size(); at += kPiece) {
    const std::string_view part = text.substr(at, kPiece);
    const std::size_t extra = escaped_extra(part);
    if (extra == 0) {
      out.append(part);
      continue;
    }
    const std::size_t start = out.size();
    out.resize(start + part.size() + extra + 16);  // room for whole 16- and 8-byte stores
    util::escape_json_into(out.data() + start, part);
    out.resize(start + part.size() + extra);
  }
}

void append_json_quoted(std::string& out, std::string_view text) {
  out += '"';
  append_json_escaped(out, text);
  out += '"';
}

void append_python_json(std::string& out, const Json& v, int depth) {
  if (depth > 256) {  // deeper than any schema-typed argument: compact, without recursion
    out += v.dump();
    return;
  }
  if (v.is_object()) {
    out += '{';
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!first) out += ", ";
      first = false;
      append_json_quoted(out, it.key());
      out += ": ";
      append_python_json(out, it.value(), depth + 1);
    }
    out += '}';
  } else if (v.is_array()) {
    out += '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) out += ", ";
      append_python_json(out, v[i], depth + 1);
    }
    out += ']';
  } else if (v.is_string()) {
    append_json_quoted(out, v.get_ref<const std::string&>());
  } else {
    out += v.dump();
  }
}

const Json* function_parameters(const Json& tools, std::string_view function) {
  if (!tools.is_array()) return nullptr;
  for (const auto& tool : tools) {
    const std::string* name = tool_function_name(tool);
    if (name && *name == function) return tool_parameters(tool);
  }
  return nullptr;
}

bool schema_declares_properties(const Json& parameters) {
  SchemaWalk walk{&parameters};
  return visit_branches(parameters, walk,
                        [](const Json& node) { return properties_of(node) != nullptr; });
}

std::vector<std::string> schema_property_names(const Json& parameters) {
  SchemaWalk walk{&parameters};
  std::vector<std::string> names;
  visit_branches(parameters, walk, [&](const Json& node) {
    if (const Json* props = properties_of(node))
      for (auto it = props->begin(); it != props->end(); ++it) names.push_back(it.key());
    return false;
  });
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

SchemaSet SchemaSet::property(std::string_view name) const {
  SchemaSet child{root, {}};
  if (!root) return child;
  SchemaWalk walk{root};
  for (const Json* schema : schemas) collect_property(*schema, name, child.schemas, walk);
  if (child.schemas.empty())  // an undeclared key: the schema's additionalProperties, if any
    for (const Json* schema : schemas)
      collect_member(*schema, "additionalProperties", child.schemas, walk);
  return child;
}

SchemaSet SchemaSet::items() const {
  SchemaSet child{root, {}};
  if (!root) return child;
  SchemaWalk walk{root};
  for (const Json* schema : schemas) collect_member(*schema, "items", child.schemas, walk);
  return child;
}

ParamTypes SchemaSet::types() const {
  ParamTypes types;
  if (!root) return types;
  SchemaWalk walk{root};
  for (const Json* schema : schemas) add_schema_types(*schema, types, 0, walk);
  return types;
}

ParamTypes param_types(const Json& tools, std::string_view function, std::string_view param) {
  ParamTypes types;
  const Json* params = function_parameters(tools, function);
  if (!params) return types;
  SchemaWalk walk{params};
  std::vector<const Json*> schemas;
  collect_property(*params, param, schemas, walk);
  for (const Json* schema : schemas) add_schema_types(*schema, types, 0, walk);
  return types;
}

ParamTypes named_types(std::string_view word) {
  ParamTypes types;
  add_type_name(types, lower(trim(word)));
  return types;
}

bool names_any_type(std::string_view word) {
  return lower(trim(word)) == "any";
}

ParamTypes narrowed_types(const ParamTypes& types, const ParamTypes& named) {
  if (!types.known) return named;
  const int allowed = types.string + types.integer + types.number + types.boolean + types.object +
                      types.array + types.null;
  const bool named_allowed = (named.string && types.string) || (named.integer && types.integer) ||
                             (named.number && types.number) || (named.boolean && types.boolean) ||
                             (named.object && types.object) || (named.array && types.array) ||
                             (named.null && types.null);
  if (allowed < 2 || !named_allowed) return types;
  ParamTypes one = named;
  one.members = types.members;
  if (named.object) one.object_schema = types.object_schema;
  return one;
}

bool holds_required(const Json& value, const ParamTypes& types) {
  if (!types.object_schema) return true;
  auto required = types.object_schema->find("required");
  if (required == types.object_schema->end() || !required->is_array()) return true;
  if (!value.is_object()) return false;
  for (const auto& key : *required)
    if (key.is_string() && !value.contains(key.get_ref<const std::string&>())) return false;
  return true;
}

std::string coerce_value(std::string_view raw, const ParamTypes& types, UntypedValues untyped,
                         bool* coerced_ok) {
  std::string out;
  if (coerced_ok) *coerced_ok = true;
  auto as_string = [&] {
    out.clear();
    append_json_quoted(out, raw);
    return out;
  };
  if (!types.known) {
    if (untyped == UntypedValues::kJsonGuess) {
      std::string_view t = trim(raw);
      if (!t.empty() && Json::accept(t)) {
        Json v = Json::parse(t);
        if (!v.is_string()) return std::string(t);
      }
      // Python literals, as templates render Python booleans and None with `{{ value }}`.
      if (t == "True" || t == "False") return t == "True" ? "true" : "false";
      if (t == "None") return "null";
    }
    return as_string();
  }
  std::string_view t = trim(raw);
  if (types.members) {
    // An enum's member as written: a string member by its text, another by its JSON value
    // (`{"enum": ["7", 8]}`: 7 is "7", 8 is 8, as SGLang reads them).
    for (const auto& m : *types.members)
      if (m.is_string() && m.get_ref<const std::string&>() == t) return Json(m).dump();
    if (Json::accept(t)) {
      Json v = Json::parse(t);
      for (const auto& m : *types.members)
        if (!m.is_string() && m == v) return m.dump();
    }
  }
  std::string low = lower(t);
  // The text null/None is JSON null (as the reference parsers read it), except where the schema
  // asks for a string and allows no null: there it is the string the model wrote (vLLM's
  // test_string_null_value_preserved).
  if ((low == "null" || low == "none" || low == "nil") && !(types.string && !types.null))
    return "null";
  // The first non-null type decides (as vLLM's parsers do); when the value is not one, the other
  // members of a union (`["integer", "boolean"]`, `anyOf`) are tried, then it stays a string,
  // which is a mismatch only when the schema does not allow a string. A string first in a union
  // with other types (`["string", "object"]`) takes only what none of the others does, so a value
  // written as one of them (`{"a": 1}`, `42`) is typed, as llama.cpp reads it.
  auto first = types.first;
  if (!first || types.string_decides()) return as_string();
  auto convert = [&](bool ParamTypes::*type) {
    if (type == &ParamTypes::integer) {
      if (is_integer_text(t)) {
        out = integer_json(t);
        return true;
      }
      // "5.0" for an integer: Python's int(float(v)) when the value is integral.
      return number_json(t, out) && out.find_first_of(".e") == std::string::npos;
    }
    if (type == &ParamTypes::number) return number_json(t, out);
    // 1 and 0 are the booleans a model writes in their C form (Solar Open 2's and Spark's
    // parsers read them so); any other text for a boolean is not one.
    if (type == &ParamTypes::boolean &&
        (low == "true" || low == "false" || low == "1" || low == "0")) {
      out = low == "true" || low == "1" ? "true" : "false";
      return true;
    }
    if (type == &ParamTypes::object || type == &ParamTypes::array) {
      const char open = type == &ParamTypes::object ? '{' : '[';
      // Nesting is bounded before anything recurses over the value (model output).
      auto parsed = util::parse_bounded_json(t, 256, util::RepeatedKeys::kAnyLevel);
      if (parsed.failure == util::BoundedJson::Failure::kNone &&
          (type == &ParamTypes::object ? parsed.value.is_object() : parsed.value.is_array())) {
        if (type == &ParamTypes::object && !holds_required(parsed.value, types)) return false;
        out.clear();
        // Written again as Python's json.dumps writes it (as the references do), unless a key
        // is given twice somewhere: the parsed value holds one of the two, the text both.
        if (parsed.repeated_key.empty())
          append_python_json(out, parsed.value);
        else
          out.assign(t);
        return true;
      }
      std::string json;
      if (python_literal_json(t, 256, json) && !json.empty() && json[0] == open) {
        if (type == &ParamTypes::object && types.object_schema &&
            !holds_required(Json::parse(json, nullptr, false), types))
          return false;
        out = std::move(json);
        return true;
      }
    }
    return false;
  };
  auto convert_any = [&] {
    if (first != &ParamTypes::string && convert(first)) return true;
    for (auto member : {&ParamTypes::integer, &ParamTypes::number, &ParamTypes::boolean,
                        &ParamTypes::object, &ParamTypes::array})
      if (member != first && types.*member && convert(member)) return true;
    return false;
  };
  if (convert_any()) return out;
  // A value of another type written as a JSON string (`"42"` for an integer, GLM; `"{'k': 1}"`
  // for an object, Qwen3-Coder) is unwrapped once and converted, as SGLang and vLLM read it.
  std::string unwrapped;
  auto unwrap_and_convert = [&] {
    if (first == &ParamTypes::string || t.size() < 2 || t.front() != '"' || t.back() != '"')
      return false;
    Json inner = Json::parse(t, nullptr, false);
    if (!inner.is_string()) return false;
    unwrapped = inner.get<std::string>();
    t = trim(unwrapped);
    low = lower(t);
    return convert_any();
  };
  if (unwrap_and_convert()) return out;
  // A value written with its quotes backslash-escaped, as if inside a JSON string
  // (`[{\"id\": \"1\"}]`, `\"123\"`: GLM-4.7 does this), is unescaped once and read again,
  // as SGLang's GLM-4.7 parser retries it. Only a value no type took is retried, so a string
  // parameter keeps its backslashes. The rule holds for every schema-typed family, not only GLM:
  // it runs only where the text as written fits none of the schema's types (a value the other
  // references leave as the escaped string), so no family's reading of a valid value changes.
  std::string unescaped;
  if (first != &ParamTypes::string && raw.find("\\\"") != std::string_view::npos) {
    Json body = Json::parse("\"" + std::string(trim(raw)) + "\"", nullptr, false);
    if (body.is_string()) {
      unescaped = body.get<std::string>();
      t = trim(unescaped);
      low = lower(t);
      if (convert_any() || unwrap_and_convert()) return out;
    }
  }
  if (coerced_ok && !types.string) *coerced_ok = false;
  return as_string();
}

bool parse_json_call_list(std::string_view text, std::vector<PyCall>& calls, std::size_t max_depth,
                          std::string* repeated_key) {
  std::string_view t = trim(text);
  if (t.empty() || (t.front() != '[' && t.front() != '{')) return false;
  auto parsed = util::parse_bounded_json(t, max_depth, util::RepeatedKeys::kAnyLevel);
  if (parsed.failure != util::BoundedJson::Failure::kNone) return false;
  Json list = parsed.value.is_array() ? std::move(parsed.value) : Json::array({parsed.value});
  if (list.empty()) return false;
  std::vector<PyCall> out;
  for (const auto& item : list) {
    if (!item.is_object() || item.size() > 2) return false;
    auto name = item.find("name");
    if (name == item.end() || !name->is_string() || name->get<std::string>().empty()) return false;
    auto args = item.find("arguments");
    if (args == item.end()) args = item.find("parameters");  // SGLang's LFM2 reads both keys
    if (item.size() == 2 && args == item.end()) return false;
    if (args != item.end() && !args->is_object() && !args->is_null()) return false;
    PyCall call;
    call.name = name->get<std::string>();
    if (args == item.end() || args->is_null())
      call.arguments = "{}";
    else
      append_python_json(call.arguments, *args);
    out.push_back(std::move(call));
  }
  if (repeated_key) *repeated_key = std::move(parsed.repeated_key);
  calls = std::move(out);
  return true;
}

}  // namespace chatwire::parse

namespace chatwire::parse {

namespace {

struct KeyValueReader {
  std::string_view s;
  std::string_view quote;
  std::size_t max_depth;
  const BareAsString& bare_as_string;
  std::size_t pos = 0;
  std::string error;
  bool last_quoted = false;   // the value just read was a quoted string
  std::string_view function;  // the call's name
  std::string_view key;       // the argument whose value is being read (top level only)

  void skip_ws() {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\n' || s[pos] == '\t' || s[pos] == '\r'))
      ++pos;
  }
  bool fail(std::string what) {
    error = what + " at offset " + std::to_string(pos);
    return false;
  }
  bool starts(std::string_view t) const { return s.substr(pos, t.size()) == t; }

  // A value up to one of `ends` (not consumed), as JSON text appended to out.
  bool value(std::string& out, std::string_view ends, std::size_t depth) {
    if (depth > max_depth) return fail("nesting deeper than max_json_depth");
    skip_ws();
    last_quoted = false;
    if (!quote.empty() && starts(quote)) {
      pos += quote.size();
      std::size_t end = s.find(quote, pos);
      if (end == std::string_view::npos) return fail("unterminated string");
      append_json_quoted(out, s.substr(pos, end - pos));
      pos = end + quote.size();
      last_quoted = true;
      return true;
    }
    if (std::size_t close = omitted_open_quote(); close != std::string_view::npos) {
      // The model left out the opening quote (`query:Paris, France<|"|>,limit:5`): the string
      // runs to the closing one, as SGLang's Gemma 4 detector reads it.
      append_json_quoted(out, s.substr(pos, close - pos));
      pos = close + quote.size();
      last_quoted = true;
      return true;
    }
    if (pos < s.size() && s[pos] == '{') return object(out, depth + 1);
    if (pos < s.size() && s[pos] == '[') {
      ++pos;
      out += '[';
      skip_ws();
      bool first = true;
      while (pos < s.size() && s[pos] != ']') {
        if (!first) {
          if (s[pos] != ',') return fail("expected ',' or ']'");
          ++pos;
          out += ", ";
        }
        first = false;
        if (!value(out, ",]", depth + 1)) return false;
        skip_ws();
      }
      if (pos >= s.size()) return fail("unterminated list");
      ++pos;
      out += ']';
      return true;
    }
    std::size_t start = pos;
    while (pos < s.size() && ends.find(s[pos]) == std::string_view::npos) ++pos;
    std::string_view raw = s.substr(start, pos - start);
    while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n')) raw.remove_suffix(1);
    if (raw.empty()) return fail("missing value");
    auto literal = Json::parse(raw, nullptr, false);
    if (literal.is_discarded() || literal.is_object() || literal.is_array()) {
      if (raw != "True" && raw != "False" && raw != "None") {
        append_json_quoted(out, raw);  // text, its bytes as written (not always UTF-8)
        return true;
      }
      literal = raw == "True" ? Json(true) : raw == "False" ? Json(false) : Json(nullptr);
    }
    // A bare literal of an argument the schema types as a string is that string, typed here as
    // it is written (a rewrite of the finished object would merge an argument given twice).
    if (!literal.is_string() && depth == 1 && bare_as_string &&
        bare_as_string(function, key, literal))
      append_json_quoted(out, literal.dump());
    else
      out += literal.dump();
    return true;
  }

  // Where the closing quote of a string whose opening quote was left out is: the next quote, when
  // no ':' comes before it (it would be a later key's value) and the value ends after it.
  std::size_t omitted_open_quote() const {
    if (quote.empty() || pos >= s.size() || s[pos] == '{' || s[pos] == '[') return npos;
    const std::size_t q = s.find(quote, pos);
    if (q == npos || s.substr(pos, q - pos).find(':') != npos) return npos;
    std::size_t after = q + quote.size();
    while (after < s.size() && (s[after] == ' ' || s[after] == '\n')) ++after;
    return after < s.size() && (s[after] == ',' || s[after] == '}' || s[after] == ']') ? q : npos;
  }
  // A key written right after a quoted value, its ',' left out (`city:<escape>NYC<escape>unit:`,
  // as vLLM's FunctionGemma parser reads it).
  bool key_follows() const {
    std::size_t p = pos;
    while (p < s.size() && (std::isalnum(static_cast<unsigned char>(s[p])) || s[p] == '_')) ++p;
    return p > pos && p < s.size() && s[p] == ':';
  }
  static constexpr std::size_t npos = std::string_view::npos;

  bool object(std::string& out, std::size_t depth) {
    ++pos;  // '{'
    out += '{';
    skip_ws();
    bool first = true;
    while (pos < s.size() && s[pos] != '}') {
      if (!first) {
        if (s[pos] == ',')
          ++pos;
        else if (!(last_quoted && key_follows()))
          return fail("expected ',' or '}'");
        out += ", ";
        skip_ws();
      }
      first = false;
      std::size_t colon = s.find(':', pos);
      if (colon == std::string_view::npos) return fail("expected 'key:'");
      std::string_view key = s.substr(pos, colon - pos);
      while (!key.empty() && key.back() == ' ') key.remove_suffix(1);
      // A quoted key (`<|"|>city<|"|>:`) is its text; one the quotes do not enclose whole
      // (`<|"|>bar<|"|>xyz:`) is kept as written, nothing of it dropped.
      if (!quote.empty() && key.size() >= 2 * quote.size() && key.starts_with(quote) &&
          key.ends_with(quote))
        key = key.substr(quote.size(), key.size() - 2 * quote.size());
      append_json_quoted(out, key);
      out += ": ";
      pos = colon + 1;
      this->key = key;
      if (!value(out, ",}", depth)) return false;
      skip_ws();
    }
    if (pos >= s.size()) return fail("unterminated object");
    ++pos;
    out += '}';
    return true;
  }
};

}  // namespace

bool parse_key_value_call(std::string_view text, std::string_view prefix, std::string_view quote,
                          PyCall& call, std::string& error, std::size_t max_depth,
                          const BareAsString& bare_as_string) {
  KeyValueReader r{text, quote, max_depth, bare_as_string, 0, {}, false, {}, {}};
  r.skip_ws();
  // A stray ':' before the prefix (`<|tool_call>:call:f{..}`, a slip vLLM's Gemma 4 parser reads).
  if (r.starts(":") && !prefix.empty() && text.substr(r.pos + 1).starts_with(prefix)) ++r.pos;
  if (!r.starts(prefix)) {
    error = "expected '" + std::string(prefix) + "' before the function name";
    return false;
  }
  r.pos += prefix.size();
  std::size_t brace = text.find('{', r.pos);
  if (brace == std::string_view::npos) {
    error = "expected '{' after the function name";
    return false;
  }
  std::string_view name = text.substr(r.pos, brace - r.pos);
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
  if (name.empty()) {
    error = "empty function name";
    return false;
  }
  r.pos = brace;
  r.function = name;
  std::string args;
  if (!r.object(args, 1)) {
    error = r.error;
    return false;
  }
  r.skip_ws();
  if (r.pos != text.size()) {
    error = "text after the call at offset " + std::to_string(r.pos);
    return false;
  }
  call.name = std::string(name);
  call.arguments = std::move(args);
  return true;
}

}  // namespace chatwire::parse
