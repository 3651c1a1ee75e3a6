// The parser's JSON forms (chatwire/parse_json.hpp): tools read from a JSON array, messages,
// deltas and warnings written as OpenAI JSON, and the overloads that take tools as JSON.
#include <optional>
#include <string>

#include "chatwire/parse_json.hpp"
#include "parse/internal.hpp"
#include "util/json_text.hpp"

namespace chatwire::parse {

namespace {
const Json& null_json() {
  static const Json null;
  return null;
}
}  // namespace

Result<Tools> tools_from_json(const Json& tools) {
  if (tools.is_null()) return Tools();
  if (!tools.is_array())
    return Error{"ValueError", "tools must be a JSON array of tool definitions", 0, 0, "tools"};
  ToolsData data{tools, {}};
  for (const auto& tool : tools)
    if (const std::string* name = tool_function_name(tool)) data.function_names.push_back(*name);
  return Tools(std::make_shared<const ToolsData>(std::move(data)));
}

Result<Tools> Tools::from_json_text(std::string_view json_text, std::size_t max_json_depth) {
  auto tools = util::parse_bounded_json(json_text, max_json_depth);
  if (tools.failure == util::BoundedJson::Failure::kTooDeep)
    return Error{"ValueError", "tools nest deeper than " + std::to_string(max_json_depth), 0, 0,
                 "tools"};
  if (!tools) return Error{"ValueError", "tools is not valid JSON: " + tools.what, 0, 0, "tools"};
  return tools_from_json(tools.value);
}

bool Tools::empty() const noexcept {
  return size() == 0;
}
std::size_t Tools::size() const noexcept {
  return data_ ? data_->json.size() : 0;
}

const Json& tools_json(const Tools& tools) {
  return tools.data() ? tools.data()->json : null_json();
}

Result<ParseResult> parse(std::string_view text, std::string_view dialect, const Json& tools,
                          const Options& options) {
  auto read = tools_from_json(tools);
  if (!read) return read.error();
  return parse(text, dialect, *read, options);
}
Result<ParseResult> parse(std::string_view text, const Syntax& syntax, const Json& tools,
                          const Options& options) {
  auto read = tools_from_json(tools);
  if (!read) return read.error();
  return parse(text, syntax, *read, options);
}
Result<StreamParser> stream_parser(std::string_view dialect, const Json& tools,
                                   const Options& options) {
  auto read = tools_from_json(tools);
  if (!read) return read.error();
  return StreamParser::create(dialect, *read, options);
}
Result<StreamParser> stream_parser(const Syntax& syntax, const Json& tools,
                                   const Options& options) {
  auto read = tools_from_json(tools);
  if (!read) return read.error();
  return StreamParser::create(syntax, *read, options);
}

namespace {
// Model output may hold invalid UTF-8; JSON output replaces it instead of failing.
Json text_json(const std::string& s) {
  return s;
}
}  // namespace

Json message_to_json(const Message& message) {
  Json j = Json::object();
  j["role"] = "assistant";
  j["content"] = message.content.empty() ? Json(nullptr) : text_json(message.content);
  if (!message.reasoning_content.empty())
    j["reasoning_content"] = text_json(message.reasoning_content);
  if (!message.tool_calls.empty()) {
    Json calls = Json::array();
    for (const auto& c : message.tool_calls) {
      Json call = Json::object();
      call["id"] = c.id;
      call["type"] = "function";
      call["function"] = Json{{"name", c.name}, {"arguments", c.arguments}};
      calls.push_back(std::move(call));
    }
    j["tool_calls"] = std::move(calls);
  }
  return j;
}

Json delta_to_json(const Delta& delta) {
  Json j = Json::object();
  if (!delta.reasoning_content.empty()) j["reasoning_content"] = delta.reasoning_content;
  if (!delta.content.empty()) j["content"] = delta.content;
  if (!delta.tool_calls.empty()) {
    Json calls = Json::array();
    for (const auto& t : delta.tool_calls) {
      Json call = Json::object();
      call["index"] = t.index;
      if (!t.id.empty()) {
        call["id"] = t.id;
        call["type"] = "function";
      }
      Json fn = Json::object();
      if (!t.name.empty()) fn["name"] = t.name;
      fn["arguments"] = t.arguments;
      call["function"] = std::move(fn);
      calls.push_back(std::move(call));
    }
    j["tool_calls"] = std::move(calls);
  }
  return j;
}

namespace {

// Every Options member a JSON object may set, one row each (a newcomer adds an option here).
// A boolean option is `flag`; one the dialect decides when unset is `maybe` (null = unset); a
// limit is `size`; text is `text`.
struct OptionField {
  const char* key;
  bool Options::*flag = nullptr;
  std::optional<bool> Options::*maybe = nullptr;
  std::size_t Options::*size = nullptr;
  std::string Options::*text = nullptr;
};
const OptionField kOptionFields[] = {
    {.key = "reasoning_prefilled", .flag = &Options::reasoning_prefilled},
    {.key = "enable_thinking", .maybe = &Options::enable_thinking},
    {.key = "separate_reasoning", .flag = &Options::separate_reasoning},
    {.key = "strict", .flag = &Options::strict},
    {.key = "forward_unknown_tools", .maybe = &Options::forward_unknown_tools},
    {.key = "id_prefix", .text = &Options::id_prefix},
    {.key = "max_output_bytes", .size = &Options::max_output_bytes},
    {.key = "max_held_bytes", .size = &Options::max_held_bytes},
    {.key = "max_tool_calls", .size = &Options::max_tool_calls},
    {.key = "max_json_depth", .size = &Options::max_json_depth},
    {.key = "max_validated_argument_bytes", .size = &Options::max_validated_argument_bytes},
};

}  // namespace

Result<Options> options_from_json(const Json& options) {
  Options out;
  if (options.is_null()) return out;
  if (!options.is_object()) return Error{"ValueError", "must be an object", 0, 0, "options"};
  for (auto it = options.begin(); it != options.end(); ++it) {
    const OptionField* field = nullptr;
    for (const auto& row : kOptionFields)
      if (it.key() == row.key) field = &row;
    const std::string path = "options." + it.key();
    if (!field) return Error{"ValueError", "unknown option", 0, 0, path};
    const Json& v = it.value();
    if (field->flag && v.is_boolean()) {
      out.*field->flag = v.get<bool>();
    } else if (field->maybe && (v.is_boolean() || v.is_null())) {
      out.*field->maybe = v.is_null() ? std::nullopt : std::optional<bool>(v.get<bool>());
    } else if (field->size && v.is_number_unsigned()) {
      out.*field->size = v.get<std::size_t>();
    } else if (field->text && v.is_string()) {
      out.*field->text = v.get<std::string>();
    } else {
      const char* want = field->flag    ? "a boolean"
                         : field->maybe ? "a boolean or null"
                         : field->size  ? "a non-negative integer"
                                        : "a string";
      return Error{"ValueError", std::string("must be ") + want, 0, 0, path};
    }
  }
  return out;
}

Json warnings_to_json(const std::vector<Warning>& warnings) {
  Json out = Json::array();
  for (const auto& w : warnings)
    out.push_back(Json{{"code", w.code}, {"message", w.message}, {"offset", w.offset}});
  return out;
}

// Model output may hold invalid UTF-8: the texts replace it (U+FFFD) instead of failing.
std::string message_to_json_text(const Message& message) {
  return message_to_json(message).dump(-1, ' ', false, Json::error_handler_t::replace);
}
std::string delta_to_json_text(const Delta& delta) {
  return delta_to_json(delta).dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace chatwire::parse
