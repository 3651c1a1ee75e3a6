// Chat requests: building them from JSON and validating them before rendering. Every refusal
// is a RequestError whose path names the field, so a user can find it in their request.
#include <string>

#include "chat/internal.hpp"
#include "chatwire/chat.hpp"

namespace chatwire::chat {

using detail::json_kind;

namespace {

struct ModeName {
  Mode mode;
  std::string_view name;
};
constexpr ModeName kModeNames[] = {
    {Mode::reply, "reply"},
    {Mode::prefill, "prefill"},
    {Mode::training, "training"},
};

// A field path such as messages[2].tool_calls[0].function.name, kept as a chain of stack
// nodes and spelled out only when an error needs it (validation runs on every render).
struct Path {
  const Path* parent = nullptr;
  std::string_view field;  // empty for an index step
  std::size_t index = 0;

  Path at(std::size_t i) const { return Path{this, {}, i}; }
  Path dot(std::string_view name) const { return Path{this, name, 0}; }
  void append_to(std::string& out) const {
    if (parent != nullptr) parent->append_to(out);
    if (field.empty()) {
      out += '[';
      out += std::to_string(index);
      out += ']';
    } else {
      if (!out.empty()) out += '.';
      out += field;
    }
  }
  std::string str() const {
    std::string out;
    append_to(out);
    return out;
  }
};

Error request_error(const Path& path, std::string message) {
  return detail::request_error(path.str(), std::move(message));
}
Error request_error(std::string path, std::string message) {
  return detail::request_error(std::move(path), std::move(message));
}

const Value* find(const Value& dict, std::string_view key) {
  return dict.dict_find(key);
}

// A present, non-null field.
const Value* present(const Value& dict, std::string_view key) {
  const Value* v = dict.dict_find(key);
  return v != nullptr && !v->is_none() ? v : nullptr;
}

Status expect_non_empty_string(const Value* v, const Path& path, bool required) {
  if (v == nullptr) {
    if (!required) return ok_status();
    return request_error(path, "is required (a non-empty string)");
  }
  if (!v->is_string()) return request_error(path, "must be a string, got " + json_kind(*v));
  if (v->as_string().empty()) return request_error(path, "must not be empty");
  return ok_status();
}

// A list of objects or null ("tools", "documents").
Status expect_list_of_objects(const Value& v, const Path& path) {
  if (v.is_none()) return ok_status();
  if (!v.is_list())
    return request_error(path, "must be an array of objects or null, got " + json_kind(v));
  auto items = v.as_list();
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_dict())
      return request_error(path.at(i), "must be an object, got " + json_kind(items[i]));
  }
  return ok_status();
}

Status validate_content(const Value& content, const Path& path) {
  if (content.is_none() || content.is_string()) return ok_status();
  if (!content.is_list()) {
    return request_error(
        path, "must be a string, an array of typed parts or null, got " + json_kind(content));
  }
  auto parts = content.as_list();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    Path part_path = path.at(i);
    const Value& part = parts[i];
    if (!part.is_dict())
      return request_error(part_path, "must be an object with a \"type\", got " + json_kind(part));
    const Value* type = find(part, "type");
    if (auto s = expect_non_empty_string(type, part_path.dot("type"), true); !s) return s;
    if (type->as_string() == "text") {
      const Value* text = find(part, "text");
      if (text == nullptr || !text->is_string()) {
        return request_error(part_path.dot("text"),
                             "a \"text\" part needs a string \"text\", got " +
                                 (text == nullptr ? std::string("nothing") : json_kind(*text)));
      }
    }
  }
  return ok_status();
}

Status validate_arguments(const Value* arguments, const Path& path) {
  if (arguments == nullptr) return ok_status();
  if (arguments->is_string() || arguments->is_dict()) return ok_status();
  return request_error(path, "must be a JSON string or an object, got " + json_kind(*arguments));
}

Status validate_tool_call(const Value& call, const Path& path) {
  if (!call.is_dict()) return request_error(path, "must be an object, got " + json_kind(call));
  if (const Value* type = present(call, "type"); type && !type->is_string())
    return request_error(path.dot("type"), "must be a string, got " + json_kind(*type));
  if (const Value* id = present(call, "id"); id && !id->is_string())
    return request_error(path.dot("id"), "must be a string, got " + json_kind(*id));
  const Value* function = find(call, "function");
  if (function == nullptr) {
    // The flat form some templates read: {name, arguments} without the "function" wrapper.
    if (find(call, "name") == nullptr)
      return request_error(path.dot("function"), "is required (an object with a \"name\")");
    if (auto s = expect_non_empty_string(find(call, "name"), path.dot("name"), true); !s) return s;
    return validate_arguments(find(call, "arguments"), path.dot("arguments"));
  }
  Path function_path = path.dot("function");
  if (!function->is_dict())
    return request_error(function_path, "must be an object, got " + json_kind(*function));
  if (auto s = expect_non_empty_string(find(*function, "name"), function_path.dot("name"), true);
      !s)
    return s;
  return validate_arguments(find(*function, "arguments"), function_path.dot("arguments"));
}

Status validate_message(const Value& message, const Path& path) {
  if (!message.is_dict())
    return request_error(path, "must be an object with a \"role\", got " + json_kind(message));
  if (auto s = expect_non_empty_string(find(message, "role"), path.dot("role"), true); !s) return s;
  if (const Value* content = find(message, "content"))
    if (auto s = validate_content(*content, path.dot("content")); !s) return s;
  if (const Value* calls = present(message, "tool_calls")) {
    Path calls_path = path.dot("tool_calls");
    if (!calls->is_list())
      return request_error(calls_path, "must be an array of tool calls, got " + json_kind(*calls));
    auto items = calls->as_list();
    for (std::size_t i = 0; i < items.size(); ++i)
      if (auto s = validate_tool_call(items[i], calls_path.at(i)); !s) return s;
  }
  return ok_status();
}

// An optional boolean flag; null counts as absent (false).
Result<bool> flag(const Value& chat, std::string_view key) {
  const Value* v = present(chat, key);
  if (v == nullptr) return false;
  if (!v->is_bool())
    return request_error(std::string(key), "must be true or false, got " + json_kind(*v));
  return v->as_bool();
}

Result<Value> optional_object(const Value& chat, std::string_view key) {
  const Value* v = present(chat, key);
  if (v == nullptr) return Value::empty_dict();
  if (!v->is_dict())
    return request_error(std::string(key), "must be an object, got " + json_kind(*v));
  return *v;
}

}  // namespace

std::string_view mode_name(Mode mode) noexcept {
  for (const auto& entry : kModeNames)
    if (entry.mode == mode) return entry.name;
  return "?";
}

std::optional<Mode> parse_mode(std::string_view name) noexcept {
  for (const auto& entry : kModeNames)
    if (entry.name == name) return entry.mode;
  return std::nullopt;
}

Status validate(const ChatRequest& request) {
  const Value& messages = request.messages;
  if (!messages.is_list())
    return request_error("messages", "must be an array of messages, got " + json_kind(messages));
  auto items = messages.as_list();
  if (items.empty()) return request_error("messages", "must not be empty");
  const Path messages_path{nullptr, "messages"};
  for (std::size_t i = 0; i < items.size(); ++i)
    if (auto s = validate_message(items[i], messages_path.at(i)); !s) return s;
  if (auto s = expect_list_of_objects(request.tools, Path{nullptr, "tools"}); !s) return s;
  if (auto s = expect_list_of_objects(request.documents, Path{nullptr, "documents"}); !s) return s;
  return ok_status();
}

Result<ChatRequest> request_from_value(const Value& chat) {
  if (!chat.is_dict())
    return request_error("", "the request must be a JSON object, got " + json_kind(chat));
  ChatRequest request;
  const Value* messages = find(chat, "messages");
  if (messages == nullptr) return request_error("messages", "is required (an array of messages)");
  request.messages = *messages;
  if (const Value* tools = find(chat, "tools")) request.tools = *tools;
  if (const Value* documents = find(chat, "documents")) request.documents = *documents;
  auto agp = flag(chat, "add_generation_prompt");
  if (!agp) return agp.error();
  request.add_generation_prompt = *agp;
  auto cfm = flag(chat, "continue_final_message");
  if (!cfm) return cfm.error();
  request.continue_final_message = *cfm;
  if (const Value* name = present(chat, "chat_template")) {
    if (!name->is_string())
      return request_error("chat_template",
                           "must be a template name (a string), got " + json_kind(*name));
    request.chat_template = std::string(name->as_string());
  }
  auto tokens = optional_object(chat, "special_tokens_map");
  if (!tokens) return tokens.error();
  request.special_tokens_map = std::move(*tokens);
  auto kwargs = optional_object(chat, "kwargs");
  if (!kwargs) return kwargs.error();
  request.kwargs = std::move(*kwargs);
  return request;
}

Result<ChatRequest> parse_request_json(std::string_view json, const InputLimits& limits,
                                       bool check) {
  if (json.size() > limits.max_request_bytes)
    return limit_error("max_request_bytes", limits.max_request_bytes);
  detail::Utf8Problem problem;
  if (!detail::valid_utf8(json, problem)) {
    Error e = detail::make_error("UnicodeDecodeError", "the request is not valid UTF-8 at byte " +
                                                           std::to_string(problem.offset));
    e.line = problem.line;
    e.column = problem.column;
    return e;
  }
  JsonParseOptions options;
  options.max_depth = limits.max_json_depth;
  options.max_string_bytes = limits.max_request_bytes;
  auto parsed = parse_json(json, options);
  if (!parsed) return parsed.error();
  if (!parsed->is_dict()) {
    // Point at the value that should have been an object: its first character.
    std::size_t line = 1, column = 1;
    for (char c : json) {
      if (c != ' ' && c != '\t' && c != '\r' && c != '\n') break;
      if (c == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    Error e = request_error("", "the request must be a JSON object, got " + json_kind(*parsed));
    e.line = line;
    e.column = column;
    return e;
  }
  auto request = request_from_value(*parsed);
  if (!request) return request.error();
  if (check) {
    if (auto s = validate(*request); !s) return s.error();
  }
  return request;
}

}  // namespace chatwire::chat
