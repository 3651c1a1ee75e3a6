// Rendering one chat request as transformers' render_jinja_template does, including its
// continue_final_message technique: a marker is appended to the final message, the template
// is rendered, and the output is cut at the marker's last occurrence.
#include <string>
#include <utility>
#include <vector>

#include "chat/internal.hpp"
#include "chatwire/chat.hpp"

namespace chatwire::chat {

using detail::make_error;

namespace {

// transformers' marker, trailing space included; the cut looks for it without the space.
constexpr std::string_view kContinueTag = "CONTINUE_FINAL_MESSAGE_TAG ";
constexpr std::string_view kContinueTagStripped = "CONTINUE_FINAL_MESSAGE_TAG";

Value with_entry(const Value& dict, std::string_view key, Value replacement) {
  std::vector<std::pair<Value, Value>> entries(dict.dict_entries().begin(),
                                               dict.dict_entries().end());
  for (auto& entry : entries) {
    if (entry.first.is_string() && entry.first.as_string() == key) {
      entry.second = std::move(replacement);
      break;
    }
  }
  return Value::dict_unchecked(std::move(entries));
}

struct Continuation {
  Value messages;       // a copy with the marker appended to the final message's text
  Value final_message;  // the text that was continued, before the marker
};

// Appends the marker to the final message (or to its last part that has a "text"), as
// transformers does; errors are the ones Python raises there.
Result<Continuation> mark_final_message(const Value& messages) {
  auto items = messages.is_sequence() ? messages.as_list() : std::span<const Value>{};
  if (items.empty()) return make_error("IndexError", "list index out of range");
  const Value& last = items.back();
  if (!last.is_dict()) return make_error("TypeError", "the final message must be an object");
  const Value* content = last.dict_find(std::string_view("content"));
  if (content == nullptr) {
    return make_error(
        "KeyError",
        "'content': continue_final_message needs the final message's content to continue");
  }
  Value tag(kContinueTag);
  Continuation result;
  Value new_content;
  if (content->is_sequence()) {
    auto parts = content->as_list();
    std::vector<Value> new_parts(parts.begin(), parts.end());
    bool found = false;
    for (std::size_t i = parts.size(); i-- > 0;) {
      auto has_text = contains(parts[i], Value("text"));
      if (!has_text) return has_text.error();
      if (!*has_text) continue;
      auto text = get_item(parts[i], Value("text"));
      if (!text) return text.error();
      auto marked = binary_op(BinaryOp::Add, *text, tag);
      if (!marked) return marked.error();
      result.final_message = *text;
      if (!parts[i].is_dict())
        return make_error("TypeError", "'str' object does not support item assignment");
      new_parts[i] = with_entry(parts[i], "text", std::move(*marked));
      found = true;
      break;
    }
    if (!found) {
      return make_error(
          "ValueError",
          "continue_final_message is set but we could not find any text to continue in the "
          "final message!");
    }
    new_content =
        content->is_list() ? Value::list(std::move(new_parts)) : Value::tuple(std::move(new_parts));
  } else {
    auto marked = binary_op(BinaryOp::Add, *content, tag);
    if (!marked) {
      // Python's own words first (transformers raises exactly this), then what to do.
      Error e = marked.error();
      e.message += " (continue_final_message needs the final message's content to be text, got " +
                   detail::json_kind(*content) + ")";
      return e;
    }
    result.final_message = *content;
    new_content = std::move(*marked);
  }
  std::vector<Value> new_messages(items.begin(), items.end());
  new_messages.back() = with_entry(last, "content", std::move(new_content));
  result.messages = Value::list(std::move(new_messages));
  return result;
}

// Cuts the rendered text after the final message, exactly as transformers does.
Status cut_at_marker(std::string& out, const Value& final_message) {
  auto stripped = call_method(final_message, "strip", CallArgs{});
  if (!stripped) return stripped.error();
  std::string_view needle = stripped->is_string() ? stripped->as_string() : std::string_view{};
  if (out.find(needle) == std::string::npos ||
      out.find(kContinueTagStripped) == std::string::npos) {
    return make_error(
        "ValueError",
        "continue_final_message is set but the final message does not appear in the chat after "
        "applying the chat template!");
  }
  std::size_t loc = out.rfind(kContinueTagStripped);
  bool full_tag = out.compare(loc, kContinueTag.size(), kContinueTag) == 0;
  out.resize(loc);
  if (!full_tag) detail::rstrip_python(out);
  return ok_status();
}

std::string_view last_role(const Value& messages) {
  if (!messages.is_sequence() || messages.as_list().empty()) return {};
  const Value& last = messages.as_list().back();
  if (!last.is_dict()) return {};
  const Value* role = last.dict_find(std::string_view("role"));
  return role != nullptr && role->is_string() ? role->as_string() : std::string_view{};
}

// Applies a mode to the two flags; prefill needs an assistant message to continue.
Status apply_mode(Mode mode, const ChatRequest& request, bool& agp, bool& cfm,
                  std::vector<std::string>& warnings) {
  bool want_agp = mode == Mode::reply;
  bool want_cfm = mode == Mode::prefill;
  if ((request.add_generation_prompt && !want_agp) ||
      (request.continue_final_message && !want_cfm)) {
    warnings.push_back("mode " + std::string(mode_name(mode)) +
                       " overrides the request's add_generation_prompt/continue_final_message");
  }
  agp = want_agp;
  cfm = want_cfm;
  std::string_view role = last_role(request.messages);
  std::size_t count = request.messages.is_sequence() ? request.messages.as_list().size() : 0;
  if (mode == Mode::prefill && role != "assistant" && count > 0) {
    return detail::request_error(
        "messages[" + std::to_string(count - 1) + "].role",
        "prefill mode continues the final message, which must be an assistant message (got '" +
            std::string(role) + "')");
  }
  if (mode == Mode::reply && role == "assistant") {
    warnings.push_back(
        "reply mode after an assistant message: the template starts another assistant "
        "message (use prefill to continue it)");
  }
  return ok_status();
}

}  // namespace

namespace {

// Template variables in transformers' order: special tokens, the request's overrides, extra
// keyword variables, then the four it always passes. A later duplicate key wins (Python dict).
// The one place a context is assembled (adapt's context comes from here too).
Value variables(const ChatRequest& request, const Value& special_tokens, Value messages,
                bool add_generation_prompt) {
  std::vector<std::pair<Value, Value>> entries;
  auto add_all = [&entries](const Value& dict) {
    if (!dict.is_dict()) return;
    for (const auto& entry : dict.dict_entries()) entries.push_back(entry);
  };
  add_all(special_tokens);
  add_all(request.special_tokens_map);
  add_all(request.kwargs);
  entries.emplace_back(Value("messages"), std::move(messages));
  entries.emplace_back(Value("tools"), request.tools);
  entries.emplace_back(Value("documents"), request.documents);
  entries.emplace_back(Value("add_generation_prompt"), Value(add_generation_prompt));
  // Every key comes from a dict or is a literal string, so all are hashable.
  return Value::dict_unchecked(std::move(entries));
}

}  // namespace

Value template_variables(const ChatRequest& request, const Value& special_tokens) {
  return variables(request, special_tokens, request.messages, request.add_generation_prompt);
}

Result<ChatResult> render(const jinja::Template& tmpl, const ChatRequest& request,
                          const Value& special_tokens, const RenderOptions& options) {
  ChatResult result;
  if (options.validate) {
    if (auto s = validate(request); !s) return s.error();
  }
  bool agp = request.add_generation_prompt;
  bool cfm = request.continue_final_message;
  if (options.mode) {
    if (auto s = apply_mode(*options.mode, request, agp, cfm, result.warnings); !s)
      return s.error();
  }
  if (cfm && agp) {
    return make_error("ValueError",
                      "continue_final_message and add_generation_prompt are not compatible.");
  }
  if (options.assistant_mask && !tmpl.uses_generation()) {
    result.warnings.push_back(
        "assistant masks were requested but the chat template has no {% generation %} blocks: "
        "the mask is empty");
  }

  Value messages = request.messages;
  Value final_message;
  if (cfm) {
    auto marked = mark_final_message(request.messages);
    if (!marked) return marked.error();
    messages = std::move(marked->messages);
    final_message = std::move(marked->final_message);
  }

  const Value context = variables(request, special_tokens, std::move(messages), agp);

  jinja::RenderOptions render_options;
  render_options.limits = options.limits;
  render_options.now = options.now;
  auto rendered = tmpl.render(context, render_options);
  if (!rendered) return rendered.error();
  result.text = std::move(rendered->output);
  result.uses_generation = rendered->uses_generation;
  result.generation = std::move(rendered->generation);
  if (cfm) {
    if (auto s = cut_at_marker(result.text, final_message); !s) return s.error();
  }
  return result;
}

}  // namespace chatwire::chat
