// A Responses request as a chat-completions request (see responses.hpp): the request's fields
// by the table below, its input items as chat messages.
#include <array>
#include <exception>
#include <initializer_list>
#include <string_view>
#include <variant>

#include "serve/responses.hpp"
#include "util/json_text.hpp"

namespace chatwire::serve {

namespace {

using Status = Result<std::monostate>;

Error bad(std::string path, std::string message) {
  return Error{"RequestError", std::move(message), 0, 0, std::move(path)};
}

std::string at(std::string_view field, std::size_t i) {
  return std::string(field) + "[" + std::to_string(i) + "]";
}

// What becomes of each top-level field of a Responses request.
enum class FieldRule : unsigned char {
  handled,  // read below (input, instructions, tools, text, reasoning, ...)
  to_chat,  // the chat field of the same name (sampling extras vLLM also takes)
  echoed,   // repeated in the response, no effect on the output (metadata, user, ...)
  refused,  // needs what the gateway does not have (a store, built-in tools' servers)
};

struct ResponsesField {
  std::string_view name;
  FieldRule rule;
  std::string_view why;  // refused: the reason given
};

constexpr std::array<ResponsesField, 32> kFields = {{
    {"model", FieldRule::handled, ""},
    {"input", FieldRule::handled, ""},
    {"instructions", FieldRule::handled, ""},
    {"tools", FieldRule::handled, ""},
    {"tool_choice", FieldRule::handled, ""},
    {"parallel_tool_calls", FieldRule::handled, ""},
    {"max_output_tokens", FieldRule::handled, ""},
    {"temperature", FieldRule::handled, ""},
    {"top_p", FieldRule::handled, ""},
    {"stream", FieldRule::handled, ""},
    {"stream_options", FieldRule::handled, ""},
    {"text", FieldRule::handled, ""},
    {"reasoning", FieldRule::handled, ""},
    {"store", FieldRule::handled, ""},
    {"truncation", FieldRule::handled, ""},
    {"include", FieldRule::handled, ""},
    {"background", FieldRule::handled, ""},
    {"metadata", FieldRule::echoed, ""},
    {"user", FieldRule::echoed, ""},
    {"safety_identifier", FieldRule::echoed, ""},
    {"prompt_cache_key", FieldRule::echoed, ""},
    {"service_tier", FieldRule::echoed, ""},
    {"chat_template_kwargs", FieldRule::to_chat, ""},
    {"top_k", FieldRule::to_chat, ""},
    {"min_p", FieldRule::to_chat, ""},
    {"seed", FieldRule::to_chat, ""},
    {"stop", FieldRule::to_chat, ""},
    {"presence_penalty", FieldRule::to_chat, ""},
    {"frequency_penalty", FieldRule::to_chat, ""},
    {"repetition_penalty", FieldRule::to_chat, ""},
    {"previous_response_id", FieldRule::refused,
     "is not served: the gateway stores no responses; send the whole conversation as input"},
    {"conversation", FieldRule::refused,
     "is not served: the gateway stores no conversations; send the whole conversation as input"},
}};

// Fields refused by name that the table does not list: known OpenAI fields the gateway cannot
// serve get this reason, unknown ones "is not a field of a Responses request".
constexpr std::array<std::string_view, 4> kKnownUnserved = {"prompt", "top_logprobs",
                                                            "max_tool_calls", "context_management"};

const ResponsesField* field_rule(std::string_view name) {
  for (const auto& f : kFields)
    if (f.name == name) return &f;
  return nullptr;
}

// The `type` of an object the request lists (a content part, a tool, a format).
Result<std::string> type_of(const json& object, const std::string& path) {
  if (!object.is_object() || !object.contains("type") || !object["type"].is_string())
    return bad(path, "must be an object with a string `type`");
  return object["type"].get<std::string>();
}

// The text of content parts (input_text, output_text, refusal, summary_text, reasoning_text).
Result<std::string> joined_text(const json& parts, const std::string& path,
                                std::initializer_list<std::string_view> types) {
  if (parts.is_string()) return parts.get<std::string>();
  if (!parts.is_array()) return bad(path, "must be a string or a list of content parts");
  std::string text;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const json& p = parts[i];
    const std::string where = at(path, i);
    auto part_type = type_of(p, where);
    if (!part_type) return part_type.error();
    const std::string& type = *part_type;
    bool known = false;
    for (auto t : types) known |= t == type;
    if (!known) return bad(where + ".type", "'" + type + "' is not served here");
    const char* key = type == "refusal" ? "refusal" : "text";
    if (!p.contains(key) || !(*p.find(key)).is_string())
      return bad(where + "." + key, "must be a string");
    text += (*p.find(key)).get<std::string>();
  }
  return text;
}

// A message item's content as chat content: a string as it is; parts as chat parts (text and
// images), so a template sees what a chat client would have sent.
Result<json> message_content(const json& content, const std::string& path, bool assistant) {
  if (content.is_string()) return json(content);
  if (!content.is_array()) return bad(path, "must be a string or a list of content parts");
  if (assistant) {  // output_text parts of one message are one text
    auto text = joined_text(content, path, {"output_text", "input_text", "refusal"});
    if (!text) return text.error();
    return json(*text);
  }
  json parts = json::array();
  for (std::size_t i = 0; i < content.size(); ++i) {
    const json& p = content[i];
    const std::string where = at(path, i);
    auto part_type = type_of(p, where);
    if (!part_type) return part_type.error();
    const std::string& type = *part_type;
    if (type == "input_text" || type == "output_text") {
      if (!p.contains("text") || !p["text"].is_string())
        return bad(where + ".text", "must be a string");
      parts.push_back({{"type", "text"}, {"text", p["text"]}});
    } else if (type == "input_image") {
      if (!p.contains("image_url") || !p["image_url"].is_string())
        return bad(where + ".image_url",
                   "must be a URL or data URL (file_id is not served: no file store)");
      json image = {{"url", p["image_url"]}};
      if (p.contains("detail") && !p["detail"].is_null()) image["detail"] = p["detail"];
      parts.push_back({{"type", "image_url"}, {"image_url", std::move(image)}});
    } else {
      return bad(where + ".type", "'" + type + "' content is not served");
    }
  }
  return parts;
}

// Builds the chat messages from the input items. Consecutive assistant-side items (reasoning,
// an assistant message, function calls) are one assistant turn, as the model wrote them.
class MessageBuilder {
 public:
  explicit MessageBuilder(ResponsesRequest& out) : out_(out) {}

  void add(json message, std::string source) {
    out_.chat["messages"].push_back(std::move(message));
    out_.message_sources.push_back(std::move(source));
    assistant_open_ = false;
  }

  // The open assistant message, or a new one. `stage`: 0 reasoning, 1 text, 2 calls; an item
  // of an earlier stage than the open turn has reached starts a new turn.
  json& assistant(int stage, const std::string& source) {
    if (!assistant_open_ || stage < stage_ || (stage == stage_ && stage < 2)) {
      add({{"role", "assistant"}, {"content", nullptr}}, source);
      assistant_open_ = true;
    }
    stage_ = stage;
    return out_.chat["messages"].back();
  }

 private:
  ResponsesRequest& out_;
  bool assistant_open_ = false;
  int stage_ = 0;
};

Status read_item(const json& item, const std::string& path, MessageBuilder& messages) {
  if (!item.is_object()) return bad(path, "must be an object");
  std::string type = "message";
  if (auto t = item.find("type"); t != item.end() && !t->is_null()) {
    if (!t->is_string()) return bad(path + ".type", "must be a string");
    type = t->get<std::string>();
  }
  auto string_field = [&](const char* key) -> Result<std::string> {
    auto it = item.find(key);
    if (it == item.end() || !it->is_string())
      return bad(path + "." + key, "must be a string (required)");
    return it->get<std::string>();
  };
  if (type == "message") {
    auto role = string_field("role");
    if (!role) return role.error();
    if (*role != "user" && *role != "assistant" && *role != "system" && *role != "developer")
      return bad(path + ".role", "must be user, assistant, system or developer");
    if (!item.contains("content")) return bad(path + ".content", "is missing");
    auto content = message_content(item["content"], path + ".content", *role == "assistant");
    if (!content) return content.error();
    if (*role == "assistant") {
      messages.assistant(1, path)["content"] = std::move(*content);
    } else {
      messages.add({{"role", *role}, {"content", std::move(*content)}}, path);
    }
    return Status{std::monostate{}};
  }
  if (type == "function_call") {
    auto call_id = string_field("call_id");
    if (!call_id) return call_id.error();
    auto name = string_field("name");
    if (!name) return name.error();
    auto arguments = string_field("arguments");
    if (!arguments) return arguments.error();
    json& m = messages.assistant(2, path);
    if (!m.contains("tool_calls")) m["tool_calls"] = json::array();
    m["tool_calls"].push_back({{"id", *call_id},
                               {"type", "function"},
                               {"function", {{"name", *name}, {"arguments", *arguments}}}});
    return Status{std::monostate{}};
  }
  if (type == "function_call_output") {
    auto call_id = string_field("call_id");
    if (!call_id) return call_id.error();
    if (!item.contains("output")) return bad(path + ".output", "is missing");
    auto output = joined_text(item["output"], path + ".output", {"input_text", "output_text"});
    if (!output) return output.error();
    messages.add({{"role", "tool"}, {"tool_call_id", *call_id}, {"content", *output}}, path);
    return Status{std::monostate{}};
  }
  if (type == "reasoning") {
    // The reasoning text itself when given, else its summary (what the client kept of it).
    std::string text;
    if (auto c = item.find("content"); c != item.end() && !c->is_null()) {
      auto t = joined_text(*c, path + ".content", {"reasoning_text"});
      if (!t) return t.error();
      text = std::move(*t);
    }
    if (auto s = item.find("summary"); text.empty() && s != item.end() && !s->is_null()) {
      auto t = joined_text(*s, path + ".summary", {"summary_text"});
      if (!t) return t.error();
      text = std::move(*t);
    }
    if (text.empty())
      if (auto e = item.find("encrypted_content"); e != item.end() && !e->is_null())
        return bad(path + ".encrypted_content",
                   "cannot be read: only the service that encrypted it can; send the "
                   "reasoning as content");
    messages.assistant(0, path)["reasoning_content"] = std::move(text);
    return Status{std::monostate{}};
  }
  if (type == "item_reference")
    return bad(path + ".type", "'item_reference' is not served: the gateway stores no items");
  return bad(path + ".type", "'" + type + "' items are not served (built-in tools are not)");
}

Status read_tools(const json& tools, ResponsesRequest& out) {
  if (!tools.is_array()) return bad("tools", "must be a list");
  json chat_tools = json::array();
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const json& t = tools[i];
    const std::string path = at("tools", i);
    auto type = type_of(t, path);
    if (!type) return type.error();
    if (*type != "function")
      return bad(path + ".type", "'" + *type +
                                     "' tools are not served: only function tools, which the "
                                     "model calls and the client runs");
    if (!t.contains("name") || !t["name"].is_string())
      return bad(path + ".name", "must be a string (required)");
    // The chat function is the tool without its type, keys in the client's order: a template
    // that writes tools with tojson writes them as the client wrote them.
    json function = t;
    function.erase("type");
    chat_tools.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  out.chat["tools"] = std::move(chat_tools);
  out.echo["tools"] = tools;
  return Status{std::monostate{}};
}

Status read_tool_choice(const json& choice, ResponsesRequest& out) {
  out.echo["tool_choice"] = choice;
  if (choice.is_string()) {
    if (choice != "auto" && choice != "none" && choice != "required")
      return bad("tool_choice", "must be auto, none, required or {type: function, name}");
    out.chat["tool_choice"] = choice;
    return Status{std::monostate{}};
  }
  if (!choice.is_object() || choice.value("type", json()) != "function")
    return bad("tool_choice", "must be auto, none, required or {type: function, name}");
  if (!choice.contains("name") || !choice["name"].is_string())
    return bad("tool_choice.name", "must be a string");
  out.chat["tool_choice"] = {{"type", "function"}, {"function", {{"name", choice["name"]}}}};
  return Status{std::monostate{}};
}

// text.format: the chat response_format.
Status read_text(const json& text, ResponsesRequest& out) {
  if (!text.is_object()) return bad("text", "must be an object");
  for (auto it = text.begin(); it != text.end(); ++it)
    if (it.key() != "format" && it.key() != "verbosity")
      return bad("text." + it.key(), "is not a field of text");
  out.echo["text"] = text;
  if (auto v = text.find("verbosity"); v != text.end() && !v->is_null())
    return bad("text.verbosity", "is not served: an open model has no verbosity setting");
  auto f = text.find("format");
  if (f == text.end() || f->is_null()) return Status{std::monostate{}};
  auto format_type = type_of(*f, "text.format");
  if (!format_type) return format_type.error();
  const std::string& type = *format_type;
  if (type == "text") return Status{std::monostate{}};
  if (type == "json_object") {
    out.chat["response_format"] = {{"type", "json_object"}};
  } else if (type == "json_schema") {
    if (!f->contains("schema")) return bad("text.format.schema", "is missing");
    json name = "response";
    if (auto n = f->find("name"); n != f->end() && !n->is_null()) {
      if (!n->is_string()) return bad("text.format.name", "must be a string");
      name = *n;
    }
    json schema = {{"name", std::move(name)}, {"schema", (*f)["schema"]}};
    for (const char* key : {"description", "strict"})
      if (auto it = f->find(key); it != f->end() && !it->is_null()) schema[key] = *it;
    out.chat["response_format"] = {{"type", "json_schema"}, {"json_schema", std::move(schema)}};
  } else {
    return bad("text.format.type", "must be text, json_object or json_schema");
  }
  return Status{std::monostate{}};
}

}  // namespace

Result<ResponsesRequest> to_chat_request(const json& request) {
  if (!request.is_object()) return bad("", "the request is not a JSON object");
  ResponsesRequest out;
  out.chat = {{"messages", json::array()}};
  out.echo = {{"instructions", nullptr},
              {"metadata", json::object()},
              {"parallel_tool_calls", true},
              {"temperature", nullptr},
              {"top_p", nullptr},
              {"max_output_tokens", nullptr},
              {"tool_choice", "auto"},
              {"tools", json::array()},
              {"text", {{"format", {{"type", "text"}}}}},
              {"reasoning", {{"effort", nullptr}, {"summary", nullptr}}},
              {"store", false},
              {"truncation", "disabled"}};
  for (auto it = request.begin(); it != request.end(); ++it) {
    const std::string& key = it.key();
    const ResponsesField* f = field_rule(key);
    if (f == nullptr) {
      for (auto known : kKnownUnserved)
        if (known == key) return bad(key, "is not served by this gateway");
      return bad(key, "is not a field of a Responses request");
    }
    if (it->is_null()) continue;
    if (f->rule == FieldRule::refused) return bad(key, std::string(f->why));
    if (f->rule == FieldRule::to_chat) out.chat[key] = *it;
    if (f->rule == FieldRule::echoed) out.echo[key] = *it;
  }
  auto get = [&](const char* key) -> const json* {
    auto it = request.find(key);
    return it == request.end() || it->is_null() ? nullptr : &*it;
  };
  if (const json* m = get("model")) out.chat["model"] = *m;
  if (const json* s = get("stream")) {
    if (!s->is_boolean()) return bad("stream", "must be a boolean");
    out.stream = s->get<bool>();
  }
  out.chat["stream"] = out.stream;
  if (out.stream) out.chat["stream_options"] = {{"include_usage", true}};  // for response.usage
  if (const json* o = get("stream_options")) {
    if (!o->is_object()) return bad("stream_options", "must be an object");
    // include_obfuscation pads events against length side channels on shared networks; the
    // events are written without padding either way, which only makes them shorter.
    for (auto it = o->begin(); it != o->end(); ++it)
      if (it.key() != "include_obfuscation")
        return bad("stream_options." + it.key(), "is not served");
  }
  if (const json* b = get("background"); b && *b != false)
    return bad("background", "is not served: the gateway stores no responses to poll");
  if (const json* s = get("store")) {
    if (!s->is_boolean()) return bad("store", "must be a boolean");
    if (*s == true)
      return bad("store",
                 "true is not served: the gateway stores no responses (send false, or "
                 "leave it out)");
  }
  if (const json* t = get("truncation"); t && *t != "disabled")
    return bad("truncation",
               "only \"disabled\" is served: a conversation too long for the "
               "model is the backend's error, never cut silently");
  if (const json* inc = get("include")) {
    if (!inc->is_array()) return bad("include", "must be a list");
    if (!inc->empty())
      return bad("include[0]",
                 "is not served (no encrypted reasoning, no logprobs in "
                 "Responses output)");
  }
  if (const json* i = get("instructions")) {
    if (!i->is_string()) return bad("instructions", "must be a string");
    out.chat["messages"].push_back({{"role", "system"}, {"content", *i}});
    out.message_sources.push_back("instructions");
    out.echo["instructions"] = *i;
  }
  const json* input = get("input");
  if (input == nullptr) return bad("input", "is missing");
  if (input->is_string()) {
    out.chat["messages"].push_back({{"role", "user"}, {"content", *input}});
    out.message_sources.push_back("input");
  } else if (input->is_array()) {
    MessageBuilder messages(out);
    for (std::size_t i = 0; i < input->size(); ++i)
      if (auto s = read_item((*input)[i], at("input", i), messages); !s) return s.error();
  } else {
    return bad("input", "must be a string or a list of items");
  }
  if (const json* t = get("tools"))
    if (auto s = read_tools(*t, out); !s) return s.error();
  if (const json* c = get("tool_choice"))
    if (auto s = read_tool_choice(*c, out); !s) return s.error();
  if (const json* p = get("parallel_tool_calls")) {
    out.chat["parallel_tool_calls"] = *p;
    out.echo["parallel_tool_calls"] = *p;
  }
  if (const json* m = get("max_output_tokens")) {
    out.chat["max_completion_tokens"] = *m;
    out.echo["max_output_tokens"] = *m;
  }
  for (const char* key : {"temperature", "top_p"})
    if (const json* v = get(key)) {
      out.chat[key] = *v;
      out.echo[key] = *v;
    }
  if (const json* t = get("text"))
    if (auto s = read_text(*t, out); !s) return s.error();
  if (const json* r = get("reasoning")) {
    if (!r->is_object()) return bad("reasoning", "must be an object");
    out.echo["reasoning"] = *r;
    // The effort is the template's variable, as chat's reasoning_effort (gpt-oss reads it). A
    // summary is not made: the reasoning itself is returned, as reasoning_text.
    if (auto e = r->find("effort"); e != r->end() && !e->is_null())
      out.chat["reasoning_effort"] = *e;
  }
  return out;
}

Error responses_error_path(Error e, const ResponsesRequest& request) {
  // messages[i]... -> the input item it came from; tools[i].function.x -> tools[i].x.
  constexpr std::string_view kMessages = "messages[";
  if (e.path.starts_with(kMessages)) {
    const auto close = e.path.find(']');
    if (close != std::string::npos) {
      std::size_t i = 0;
      bool digits = close > kMessages.size();
      for (std::size_t k = kMessages.size(); k < close; ++k) {
        if (e.path[k] < '0' || e.path[k] > '9') digits = false;
        if (digits) i = i * 10 + static_cast<std::size_t>(e.path[k] - '0');
      }
      if (digits && i < request.message_sources.size())
        e.path = request.message_sources[i] + e.path.substr(close + 1);
    }
  } else if (e.path.starts_with("tools[")) {
    if (const auto f = e.path.find("].function"); f != std::string::npos)
      e.path = e.path.substr(0, f + 1) + e.path.substr(f + 10);
  } else if (e.path == "messages") {
    e.path = "input";
  } else if (e.path == "max_completion_tokens") {
    e.path = "max_output_tokens";
  } else if (e.path.starts_with("response_format")) {
    e.path = "text.format" + e.path.substr(15);
  } else if (e.path == "tool_choice.function.name") {
    e.path = "tool_choice.name";
  }
  return e;
}

Result<ResponsesJob> plan_responses(const LoadedModels& models, std::string_view body,
                                    std::size_t max_json_depth) {
  auto parsed = util::parse_bounded_json(body, max_json_depth);
  if (!parsed)
    return bad("", parsed.failure == util::BoundedJson::Failure::kTooDeep
                       ? "the request is nested too deeply"
                       : "the request body is not JSON: " + parsed.what);
  Result<ResponsesRequest> request = bad("", "");
  try {
    request = to_chat_request(parsed.value);
  } catch (const std::exception& e) {  // a shape the checks missed: a refusal, never a crash
    return bad("", std::string("the request could not be read: ") + e.what());
  }
  if (!request) return request.error();
  // One level more: the chat request nests the input one object deeper than it came.
  auto chat = plan_chat(models, request->chat.dump(-1, ' ', false, json::error_handler_t::replace),
                        max_json_depth + 2, 1);
  if (!chat) return responses_error_path(chat.error(), *request);
  return ResponsesJob{std::move(*request), std::move(*chat)};
}

}  // namespace chatwire::serve
