// Casting tool-call arguments by the calling tool's JSON schema (transformers'
// ResponseParser._coerce_tool_calls, _schema_types and _coerce): only string arguments of a
// declared tool whose property names types are cast, each type tried in declared order, and a
// failed cast keeps the text.
#include <cmath>

#include "response/internal.hpp"

namespace chatwire::response {

// _schema_types: "type" (a str or a list of them), then each anyOf choice, then nullable.
Result<std::vector<std::string>> schema_types(const Json& schema, std::size_t depth) {
  std::vector<std::string> types;
  if (!schema.is_object()) return types;
  if (depth > 64) return error_of("LimitError", "anyOf nested deeper than 64");
  if (auto it = schema.find("type"); it != schema.end()) {
    if (it->is_string()) types.push_back(it->get<std::string>());
    if (it->is_array())
      for (const auto& t : *it)
        if (t.is_string()) types.push_back(t.get<std::string>());
  }
  if (auto it = schema.find("anyOf"); it != schema.end() && py_truthy(*it)) {
    if (it->is_array()) {
      for (const auto& choice : *it) {
        auto sub = schema_types(choice, depth + 1);
        if (!sub) return sub;
        types.insert(types.end(), sub->begin(), sub->end());
      }
    } else if (!it->is_object() && !it->is_string()) {
      // Iterating a number or a bool raises in Python.
      std::string message = py_type_name(*it);
      message.insert(0, 1, '\'');
      message += "' object is not iterable (anyOf)";
      return error_of("TypeError", std::move(message));
    }
  }
  if (auto it = schema.find("nullable");
      it != schema.end() && py_truthy(*it) &&
      std::find(types.begin(), types.end(), "null") == types.end())
    types.push_back("null");
  return types;
}

static std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// _coerce(raw, types): the first type that casts, else the text.
Result<Json> coerce_argument(const std::string& raw, const std::vector<std::string>& types,
                             std::size_t max_depth) {
  for (const auto& type : types) {
    if (type == "integer") {
      PyResult r = py_int(raw);
      if (r.kind == PyResult::Kind::kRefused) return r.error;
      if (r.kind == PyResult::Kind::kValue) return std::move(r.value);
    } else if (type == "number") {
      PyResult r = py_float(raw);
      if (r.kind == PyResult::Kind::kRefused) return r.error;
      if (r.kind != PyResult::Kind::kValue) continue;
      const double d = r.value.get<double>();
      if (std::isnan(d) || std::isinf(d)) continue;  // not JSON numbers
      if (d == std::floor(d) && raw.find('.') == std::string::npos) {
        // int(number): exact for any double, but JSON here holds 64 bits.
        if (d >= -9223372036854775808.0 && d < 9223372036854775808.0)
          return Json(static_cast<std::int64_t>(d));
        if (d >= 0 && d < 18446744073709551616.0) return Json(static_cast<std::uint64_t>(d));
        return error_of("LimitError", "an integer beyond 64 bits (Python would keep it)");
      }
      return r.value;
    } else if (type == "boolean") {
      const std::string word = lower_ascii(py_strip(raw));
      if (word == "true" || word == "1" || word == "false" || word == "0")
        return Json(word == "true" || word == "1");
    } else if (type == "null") {
      const std::string_view word = py_strip(raw);
      if (word == "null" || word == "None") return Json(nullptr);
    } else if (type == "object" || type == "array") {
      PyResult r = py_json_loads(raw, max_depth);
      if (r.kind == PyResult::Kind::kRefused) return r.error;
      if (r.kind == PyResult::Kind::kValue &&
          (type == "object" ? r.value.is_object() : r.value.is_array()))
        return std::move(r.value);
    }
  }
  return Json(raw);
}

namespace {

const Json* find_params(const ToolParams& params, const std::string& name) {
  for (const auto& [n, p] : params)
    if (n == name) return &p;
  return nullptr;
}

}  // namespace

Result<ToolParams> tool_params(const Json& tools) {
  ToolParams out;
  if (tools.is_null()) return out;
  if (!tools.is_array()) return Error{"ValueError", "tools must be a list", 0, 0, "tools"};
  for (const auto& tool : tools) {
    if (!tool.is_object()) continue;
    const Json& fn = tool.contains("function") ? tool.at("function") : tool;
    if (!fn.is_object() || !fn.contains("name") || !fn.at("name").is_string()) continue;
    const Json* parameters = fn.contains("parameters") ? &fn.at("parameters") : nullptr;
    Json properties = Json::object();
    if (parameters != nullptr && parameters->is_object() && parameters->contains("properties") &&
        parameters->at("properties").is_object())
      properties = parameters->at("properties");
    const std::string name = fn.at("name").get<std::string>();
    // A later tool of the same name replaces the earlier one (a dict assignment).
    bool replaced = false;
    for (auto& [n, p] : out)
      if (n == name) p = properties, replaced = true;
    if (!replaced) out.emplace_back(name, std::move(properties));
  }
  return out;
}

Result<bool> coerce_tool_calls(Json& value, const ToolParams& params) {
  if (value.is_array()) {
    for (auto& item : value) {
      auto ok = coerce_tool_calls(item, params);
      if (!ok) return ok;
    }
    return true;
  }
  if (!value.is_object() || !value.contains("function") || !value.at("function").is_object())
    return true;
  Json& fn = value.at("function");
  if (!fn.contains("name") || !fn.at("name").is_string() || !fn.contains("arguments") ||
      !fn.at("arguments").is_object())
    return true;
  const Json* properties = find_params(params, fn.at("name").get<std::string>());
  if (properties == nullptr || properties->empty()) return true;
  for (auto& [key, argument] : fn.at("arguments").items()) {
    if (!properties->contains(key)) continue;
    auto types = schema_types(properties->at(key), 0);
    if (!types) return types.error();
    if (types->empty()) continue;
    if (argument.is_string()) {
      auto cast = coerce_argument(argument.get<std::string>(), *types, 512);
      if (!cast) return cast.error();
      argument = std::move(*cast);
    } else if (argument.is_array()) {  // duplicate keys collected by merge_duplicates
      for (auto& item : argument) {
        if (!item.is_string()) continue;
        auto cast = coerce_argument(item.get<std::string>(), *types, 512);
        if (!cast) return cast.error();
        item = std::move(*cast);
      }
    }
  }
  return true;
}

}  // namespace chatwire::response
