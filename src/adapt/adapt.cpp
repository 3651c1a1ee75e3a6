// The adapter: an OpenAI request becomes the template variables that make one template render
// every piece of it. Each adaptation is a pass in ONE table (kAdaptations) that reads the
// probe's measurements of the template; nothing here looks at a template's name.
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "adapt/call_syntax.hpp"
#include "adapt/verify.hpp"
#include "chatwire/adapt_json.hpp"
#include "chatwire/value_json.hpp"
#include "util/json_text.hpp"

namespace chatwire::adapt {

namespace {

const Status kOk = Status{std::monostate{}};

Error request_error(std::string path, std::string message) {
  return Error{"RequestError", std::move(message), 0, 0, std::move(path)};
}

std::string msg_path(std::size_t i) {
  return "messages[" + std::to_string(i) + "]";
}

// OpenAI request fields that are sampling or transport parameters, not template variables.
constexpr std::string_view kOpenAIParameters[] = {
    "model",
    "messages",
    "tools",
    "tool_choice",
    "temperature",
    "top_p",
    "n",
    "stream",
    "stream_options",
    "stop",
    "max_tokens",
    "max_completion_tokens",
    "presence_penalty",
    "frequency_penalty",
    "logit_bias",
    "logprobs",
    "top_logprobs",
    "user",
    "safety_identifier",
    "prompt_cache_key",
    "prompt_cache_retention",
    "seed",
    "response_format",
    "parallel_tool_calls",
    "metadata",
    "store",
    "service_tier",
    "modalities",
    "audio",
    "prediction",
    "web_search_options",
    "verbosity",
    "chat_template_kwargs",
    "add_generation_prompt",
    "documents",
    "continue_final_message",
    "echo",
    "top_k",
    "min_p",
    "repetition_penalty",
};

}  // namespace

bool is_openai_parameter(std::string_view key) {
  return std::find(std::begin(kOpenAIParameters), std::end(kOpenAIParameters), key) !=
         std::end(kOpenAIParameters);
}

namespace {

// "conventions.arguments_string: error (TypeError: ...)"
std::string convention_finding(const probe::Profile& profile, std::string_view key) {
  const probe::Convention* c = profile.convention(key);
  if (c == nullptr) return "conventions." + std::string(key) + ": not measured";
  std::string s =
      "conventions." + std::string(key) + ": " + std::string(probe::status_name(c->status));
  if (c->status == probe::Status::error && !c->error.empty()) s += " (" + c->error + ")";
  if (c->status == probe::Status::lossy && !c->lost.empty()) {
    s += " (loses";
    for (const auto& l : c->lost) s += " " + l;
    s += ")";
  }
  return s;
}

bool convention_renders(const probe::Profile& profile, std::string_view key) {
  return profile.accepts(key);
}
bool convention_errors(const probe::Profile& profile, std::string_view key) {
  const probe::Convention* c = profile.convention(key);
  return c != nullptr && c->status == probe::Status::error;
}

// Text of a message's content: a string, null, or the text parts joined by newlines.
// Non-text parts cannot become text: that is refused.
Result<std::string> content_as_text(const json& message, const std::string& path) {
  auto it = message.find("content");
  if (it == message.end() || it->is_null()) return std::string();
  if (it->is_string()) return it->get<std::string>();
  std::string out;
  bool first = true;
  for (std::size_t k = 0; k < it->size(); ++k) {
    const json& part = (*it)[k];
    std::string type = part.value("type", "");
    if (type != "text")
      return Error{"CannotRepresent",
                   "a '" + type + "' content part cannot be written as text for this template", 0,
                   0, path + ".content[" + std::to_string(k) + "]"};
    if (!first) out += "\n";
    out += part.value("text", "");
    first = false;
  }
  return out;
}

struct Work {
  const probe::Profile& profile;
  const Options& options;
  json messages = json::array();
  json tools = nullptr;
  const CallSyntax* syntax = nullptr;  // chosen lazily
  Adapted out;
  bool taught = false;  // the prompt shows the model calls in `syntax` (not the template's)
  json kwargs = json::object();  // the request's template variables (request_kwargs)

  void record(std::string code, std::string finding, std::string detail) {
    out.adaptations.push_back({std::move(code), std::move(finding), std::move(detail)});
  }
  const CallSyntax& call_syntax() {
    if (syntax == nullptr) {
      if (!options.call_syntax.empty()) syntax = find_syntax(options.call_syntax);
      if (syntax == nullptr)
        syntax = &taught_syntax(profile.tools.definitions_block.value_or(std::string()));
    }
    return *syntax;
  }
};

// ---------------------------------------------------------------------------------------
// The passes, in the order they run.
// ---------------------------------------------------------------------------------------

// OpenAI's part types and the bare modality transformers' processors' templates test (vLLM
// passes an `image_url` part to a template as `{"type": "image"}` for the same reason).
constexpr std::pair<std::string_view, std::string_view> kMediaModalities[] = {
    {"image_url", "image"},
    {"input_audio", "audio"},
    {"video_url", "video"},
};

// A content part that is no text (an image, audio) reaches the model only as the placeholder the
// template writes for it, where the model's processor puts the media. The probe measured what the
// template does with each part type (multimodal.parts). A part it does not write as a placeholder
// goes as its bare modality where that is one (`image_url` as `{"type": "image"}`, the rest of the
// part kept for the caller's processor); otherwise a part the template drops, writes out as data
// (its JSON or Python repr, base64 and all), or a type it did not measure, would be lost or
// garbled without a trace: refused, naming the part. A part the template raises on is left to the
// render, whose error names it.
Status media_parts(Work& w) {
  const auto& measured = w.profile.multimodal.parts;
  auto status_of = [&](std::string_view type) -> const probe::ContentPart* {
    const auto it = std::find_if(measured.begin(), measured.end(),
                                 [&](const probe::ContentPart& p) { return p.type == type; });
    return it == measured.end() ? nullptr : &*it;
  };
  std::string changed;
  for (std::size_t i = 0; i < w.messages.size(); ++i) {
    json& m = w.messages[i];
    if (!m.is_object() || !m.contains("content") || !m["content"].is_array()) continue;
    json& parts = m["content"];
    for (std::size_t k = 0; k < parts.size(); ++k) {
      if (!parts[k].is_object()) continue;  // chat::validate names it
      const std::string type = parts[k].value("type", "");
      if (type == "text") continue;
      const std::string path = msg_path(i) + ".content[" + std::to_string(k) + "]";
      const probe::ContentPart* it = status_of(type);
      if (it == nullptr || it->status != "placeholder")
        for (const auto& [sent, modality] : kMediaModalities)
          if (type == sent)
            if (const probe::ContentPart* bare = status_of(modality);
                bare && bare->status == "placeholder") {
              parts[k]["type"] = std::string(modality);
              changed += (changed.empty() ? "" : ", ") + path + " (" + type + " as " +
                         std::string(modality) + ")";
              it = bare;
            }
      if (it == nullptr)
        return Error{"CannotRepresent",
                     "a '" + type +
                         "' content part: the probe measures image, image_url, audio, "
                         "input_audio and video parts, so whether this template keeps it is "
                         "not known",
                     0, 0, path};
      const std::string finding = "multimodal." + type + ": " + it->status;
      if (it->status == "dropped")
        return Error{"CannotRepresent",
                     "this template drops '" + type + "' content parts (" + finding + ")", 0, 0,
                     path};
      if (it->status == "printed")
        return Error{"CannotRepresent",
                     "this template writes '" + type +
                         "' content parts into the prompt as data, not as a media placeholder (" +
                         finding + ")",
                     0, 0, path};
    }
  }
  if (!changed.empty())
    w.record("media_part_types", "multimodal: the bare modality renders a placeholder", changed);
  return kOk;
}

// "developer" is OpenAI's newer name for the system role; templates know "system".
Status developer_as_system(Work& w) {
  std::string changed;
  for (std::size_t i = 0; i < w.messages.size(); ++i)
    if (w.messages[i].value("role", "") == "developer") {
      w.messages[i]["role"] = "system";
      changed += (changed.empty() ? "" : ", ") + msg_path(i);
    }
  if (!changed.empty())
    w.record("developer_as_system", "the probe measures the system role",
             changed + ": role developer rendered as system");
  return kOk;
}

// OpenAI tool messages carry only tool_call_id; the probe measures tool results with
// message.name set (several templates read it and raise without it), so the name of the call a
// result answers is added, looked up by its id.
Status tool_result_names(Work& w) {
  std::vector<std::pair<std::string, std::string>> names;  // call id -> function name
  std::string changed;
  for (std::size_t i = 0; i < w.messages.size(); ++i) {
    json& m = w.messages[i];
    if (m.contains("tool_calls") && m["tool_calls"].is_array())
      for (const auto& call : m["tool_calls"])
        if (call.contains("id") && call["id"].is_string() && call.contains("function") &&
            call["function"].contains("name") && call["function"]["name"].is_string())
          names.emplace_back(call["id"].get<std::string>(),
                             call["function"]["name"].get<std::string>());
    if (m.value("role", "") != "tool" || (m.contains("name") && m["name"].is_string())) continue;
    if (!m.contains("tool_call_id") || !m["tool_call_id"].is_string()) continue;
    const std::string id = m["tool_call_id"].get<std::string>();
    auto it = std::find_if(names.rbegin(), names.rend(),
                           [&](const auto& entry) { return entry.first == id; });
    if (it == names.rend()) continue;
    m["name"] = it->second;
    changed += (changed.empty() ? "" : ", ") + msg_path(i);
  }
  if (!changed.empty())
    w.record("tool_result_names",
             std::string("tool_results measured with message.name (tool_results.rendered: ") +
                 (w.profile.tool_results.rendered ? "true" : "false") + ")",
             changed + ": name of the answered call added (found by tool_call_id)");
  return kOk;
}

// The template variable the request sets that the probe measured to render a past turn's
// reasoning at that value (thinking_controls: GLM-4.7's clear_thinking false, Qwen3.6's
// preserve_thinking true), or "".
std::string kwarg_keeping_past_reasoning(const Work& w) {
  for (const auto& control : w.profile.thinking_controls.controls) {
    const auto it = w.kwargs.find(control.name);
    if (it == w.kwargs.end() || !it->is_boolean()) continue;
    const probe::ControlValue& at = it->get<bool>() ? control.true_value : control.false_value;
    if (at.past_reasoning && !at.error) return control.name + "=" + it->dump();
  }
  return {};
}

// Reasoning of assistant turns before the last user message is dropped: the model never saw it
// in training, and a few templates replay it (reasoning.history_kept). Unless the request asks
// the template to keep it, with a variable measured to do so: then it is the caller's choice,
// and the template's own.
Status drop_past_reasoning(Work& w) {
  if (const std::string kept = kwarg_keeping_past_reasoning(w); !kept.empty()) {
    w.out.warnings.push_back("past reasoning kept: the request sets " + kept +
                             ", which the probe measured to render it");
    return kOk;
  }
  std::size_t last_user = 0;
  bool any_user = false;
  for (std::size_t i = 0; i < w.messages.size(); ++i)
    if (w.messages[i].value("role", "") == "user") last_user = i, any_user = true;
  if (!any_user) return kOk;
  std::string changed;
  for (std::size_t i = 0; i < last_user; ++i) {
    json& m = w.messages[i];
    if (m.value("role", "") != "assistant") continue;
    for (const char* field : {"reasoning_content", "thinking", "reasoning"})
      if (m.contains(field)) {
        m.erase(field);
        changed += (changed.empty() ? "" : ", ") + msg_path(i) + "." + field;
      }
  }
  if (!changed.empty())
    w.record("drop_past_reasoning",
             std::string("reasoning.history_kept: ") +
                 (w.profile.reasoning.history_kept ? "true" : "false"),
             "removed " + changed);
  return kOk;
}

// The current turn's reasoning goes in the field the template renders.
Status reasoning_field(Work& w) {
  const auto& field = w.profile.reasoning.field;
  if (!field) return kOk;
  const std::string other = *field == "thinking" ? "reasoning_content" : "thinking";
  std::string changed;
  for (std::size_t i = 0; i < w.messages.size(); ++i) {
    json& m = w.messages[i];
    if (m.value("role", "") != "assistant" || m.contains(*field)) continue;
    const char* source = m.contains(other)         ? other.c_str()
                         : m.contains("reasoning") ? "reasoning"
                                                   : nullptr;
    if (source == nullptr) continue;
    m[*field] = m[source];
    changed += (changed.empty() ? "" : ", ") + msg_path(i);
  }
  if (!changed.empty())
    w.record("reasoning_field", "reasoning.field: " + *field,
             changed + ": reasoning passed as " + *field);
  return kOk;
}

// arguments as a dict or as a JSON string, whichever the template takes.
Status arguments_shape(Work& w) {
  bool want_dict = convention_renders(w.profile, "arguments_dict");
  bool want_string = !want_dict && convention_renders(w.profile, "arguments_string");
  if (!want_dict && !want_string) {
    // Neither renders losslessly (e.g. calls are dropped anyway): avoid the one that raises.
    want_dict = !convention_errors(w.profile, "arguments_dict");
    want_string = !want_dict;
  }
  std::size_t converted = 0;
  for (std::size_t i = 0; i < w.messages.size(); ++i) {
    json& m = w.messages[i];
    if (!m.contains("tool_calls") || !m["tool_calls"].is_array()) continue;
    for (std::size_t j = 0; j < m["tool_calls"].size(); ++j) {
      json& call = m["tool_calls"][j];
      json& fn = call.contains("function") ? call["function"] : call;
      std::string path = msg_path(i) + ".tool_calls[" + std::to_string(j) + "].function.arguments";
      // Absent, null or empty arguments are no arguments: `{}` (vLLM turns "" and None into {}
      // too; a call to a function without parameters is often sent so).
      if (!fn.contains("arguments") || fn["arguments"].is_null() ||
          (fn["arguments"].is_string() &&
           fn["arguments"].get_ref<const std::string&>().find_first_not_of(" \t\r\n") ==
               std::string::npos)) {
        fn["arguments"] = want_dict ? json::object() : json("{}");
        continue;
      }
      json& args = fn["arguments"];
      if (want_dict && args.is_string()) {
        json parsed = json::parse(args.get<std::string>(), nullptr, false);
        if (parsed.is_discarded() || !parsed.is_object())
          return request_error(
              path, "is not a JSON object text, and this template needs arguments as a dict (" +
                        convention_finding(w.profile, "arguments_string") + ")");
        args = std::move(parsed);
        ++converted;
      } else if (want_string && !args.is_string()) {
        args = arguments_text(args);
        ++converted;
      }
    }
  }
  if (converted > 0)
    w.record(want_dict ? "arguments_to_dict" : "arguments_to_string",
             want_dict ? convention_finding(w.profile, "arguments_string")
                       : convention_finding(w.profile, "arguments_dict"),
             std::to_string(converted) + " tool call(s): arguments passed as " +
                 (want_dict ? "a dict" : "a JSON string"));
  return kOk;
}

bool is_short_id(std::string_view id) {
  if (id.size() != 9) return false;
  for (char c : id)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return false;
  return true;
}

// A 9-character alphanumeric id derived from the original (FNV-1a, base 62), so the same
// request always maps the same way; `salt` resolves collisions.
std::string short_id(std::string_view id, std::uint64_t salt) {
  static constexpr char kAlphabet[] =
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::uint64_t h = 1469598103934665603ull ^ salt;
  for (unsigned char c : id) h = (h ^ c) * 1099511628211ull;
  std::string out(9, '0');
  for (auto& ch : out) {
    ch = kAlphabet[h % 62];
    h = h / 62 + (h % 62) * 0x9E3779B97F4A7C15ull;
  }
  return out;
}

// Calls `f` on every call id of `messages` that is a string: the calls' ids and the ids the tool
// messages answer.
template <typename F>
void for_each_call_id(json& messages, F&& f) {
  for (auto& m : messages) {
    if (m.contains("tool_calls") && m["tool_calls"].is_array())
      for (auto& call : m["tool_calls"])
        if (call.contains("id") && call["id"].is_string()) f(call["id"]);
    if (m.contains("tool_call_id") && m["tool_call_id"].is_string()) f(m["tool_call_id"]);
  }
}

// Every call id that is not 9 alphanumerics becomes one, consistently in the calls and in the
// tool messages that answer them; returns the mapping ("call_1 -> HXCibUQ4k, ..."), "" when
// every id already was.
std::string shorten_call_ids(json& messages) {
  std::vector<std::pair<std::string, std::string>> mapping;
  // Ids that are already 9 alphanumerics stay, so no other id may become one of them.
  std::set<std::string> kept;
  for_each_call_id(messages, [&](const json& id) {
    if (is_short_id(id.get_ref<const std::string&>())) kept.insert(id.get<std::string>());
  });
  auto map_id = [&](const std::string& id) -> std::string {
    if (is_short_id(id)) return id;
    for (const auto& [from, to] : mapping)
      if (from == id) return to;
    std::uint64_t salt = 0;
    std::string candidate = short_id(id, salt);
    auto taken = [&](const std::string& c) {
      if (kept.count(c) != 0) return true;
      for (const auto& [from, to] : mapping)
        if (to == c) return true;
      return false;
    };
    while (taken(candidate)) candidate = short_id(id, ++salt);
    mapping.emplace_back(id, candidate);
    return candidate;
  };
  for_each_call_id(messages, [&](json& id) { id = map_id(id.get<std::string>()); });
  std::string detail;
  for (const auto& [from, to] : mapping)
    detail += (detail.empty() ? "" : ", ") + from + " -> " + to;
  return detail;
}

// OpenAI call ids → 9 alphanumerics when the template rejects them.
Status short_call_ids(Work& w) {
  if (convention_renders(w.profile, "long_call_id") ||
      !convention_renders(w.profile, "short_call_id"))
    return kOk;
  if (std::string detail = shorten_call_ids(w.messages); !detail.empty())
    w.record("short_call_ids", convention_finding(w.profile, "long_call_id"), detail);
  return kOk;
}

// A template whose measured call example shows the call id where no function name appears
// renders a call only by its id: the name must travel in the id. Ids become
// "functions.<name>:<index>" (index counts calls over the conversation), the form chatwire's
// parser reads back as a call name, consistently in calls and results.
Status call_ids_with_names(Work& w) {
  const auto& example = w.profile.tool_calls.example;
  if (!example || example->find(probe::sentinel::kFunctionName) != std::string::npos) return kOk;
  const bool id_shown = example->find(probe::sentinel::kLongCallId) != std::string::npos ||
                        example->find(probe::sentinel::kShortCallId) != std::string::npos;
  if (!id_shown) return kOk;
  std::vector<std::pair<std::string, std::string>> mapping;
  std::size_t index = 0;
  for (auto& m : w.messages) {
    if (m.contains("tool_calls") && m["tool_calls"].is_array())
      for (auto& call : m["tool_calls"]) {
        std::string name = call["function"].value("name", "");
        std::string id = "functions." + name + ":" + std::to_string(index++);
        if (call.contains("id") && call["id"].is_string())
          mapping.emplace_back(call["id"].get<std::string>(), id);
        call["id"] = id;
      }
    if (m.contains("tool_call_id") && m["tool_call_id"].is_string()) {
      const std::string old = m["tool_call_id"].get<std::string>();
      for (auto it = mapping.rbegin(); it != mapping.rend(); ++it)
        if (it->first == old) {
          m["tool_call_id"] = it->second;
          break;
        }
    }
  }
  if (mapping.empty()) return kOk;
  std::string detail;
  for (const auto& [from, to] : mapping)
    detail += (detail.empty() ? "" : ", ") + from + " -> " + to;
  w.record("call_ids_with_names",
           "tool_calls.example renders the call id and no function name: " + *example, detail);
  return kOk;
}

// A parameter without a description gets "" where the template reads every parameter's
// description (the probe's tools.parameter_description_required): OpenAI tools may omit it.
Status parameter_descriptions(Work& w) {
  if (!w.tools.is_array() || !w.profile.tools.parameter_description_required) return kOk;
  std::string added;
  for (std::size_t t = 0; t < w.tools.size(); ++t) {
    json& tool = w.tools[t];
    if (!tool.is_object()) continue;
    const bool nested = tool.contains("function") && tool["function"].is_object();
    json& function = nested ? tool["function"] : tool;
    auto parameters = function.find("parameters");
    if (parameters == function.end() || !parameters->is_object()) continue;
    auto properties = parameters->find("properties");
    if (properties == parameters->end() || !properties->is_object()) continue;
    for (auto& [name, schema] : properties->items()) {
      if (!schema.is_object() || schema.contains("description")) continue;
      schema["description"] = "";
      added += (added.empty() ? "" : ", ") +
               ("tools[" + std::to_string(t) + "]" + (nested ? ".function" : "") +
                ".parameters.properties." + name);
    }
  }
  if (!added.empty())
    w.record(
        "parameter_descriptions",
        "tools.parameter_description_required: " + *w.profile.tools.parameter_description_required,
        added + ": empty description added");
  return kOk;
}

// Tools nested ({"type":"function","function":{...}}) or flat ({name, description, ...}).
Status tools_shape(Work& w) {
  if (!w.tools.is_array() || convention_renders(w.profile, "nested_tools") ||
      !convention_renders(w.profile, "flat_tools"))
    return kOk;
  for (auto& tool : w.tools)
    if (tool.is_object() && tool.contains("function") && tool["function"].is_object())
      tool = tool["function"];
  w.record("flat_tools", convention_finding(w.profile, "nested_tools"),
           "tools passed as flat function objects");
  return kOk;
}

// Whether a call turn's null content renders (the probe measured it, or measured that "" does not).
bool null_call_content_renders(const probe::Profile& profile) {
  return convention_renders(profile, "null_call_content") ||
         !convention_renders(profile, "empty_call_content");
}

// List-of-parts content joined into a string where the template needs one; null content
// made "" where None breaks the template.
Status content_shapes(Work& w) {
  const bool parts_ok = convention_renders(w.profile, "content_parts");
  const bool null_ok = null_call_content_renders(w.profile);
  std::string joined, nulled, nulled_plain;
  for (std::size_t i = 0; i < w.messages.size(); ++i) {
    json& m = w.messages[i];
    // An assistant turn may leave content out (OpenAI: optional beside tool_calls); that is
    // null content, passed so, since a template reading message.content of a dict without it
    // raises (or tests `is none`) where null renders.
    if (!m.contains("content")) {
      if (!m.is_object() || m.value("role", "") != "assistant") continue;
      // Placed after the role, where a client writing `"content": null` puts it (a template
      // iterating the message's items sees the same order).
      json with_content = json::object();
      for (auto& item : m.items()) {
        with_content[item.key()] = std::move(item.value());
        if (item.key() == "role") with_content["content"] = nullptr;
      }
      m = std::move(with_content);
    }
    // A user message with media parts stays parts where the template renders a user message of
    // parts (multimodal.text_parts, measured on that role): joining could not keep the media, and
    // the placeholder needs the parts (Llama 3.2 Vision prints a system message's parts as a repr,
    // so content_parts is lossy, yet writes <|image|> in a user message's).
    const bool media_kept =
        m["content"].is_array() && w.profile.multimodal.text_parts &&
        m.value("role", "") == "user" &&
        std::any_of(m["content"].begin(), m["content"].end(),
                    [](const json& p) { return p.is_object() && p.value("type", "") != "text"; });
    if (m["content"].is_array() && !parts_ok && !media_kept) {
      auto text = content_as_text(m, msg_path(i));
      if (!text) return text.error();
      m["content"] = *text;
      joined += (joined.empty() ? "" : ", ") + msg_path(i);
    } else if (m["content"].is_null()) {
      // null_call_content measures a turn with calls; a message with none has nothing else to
      // say, and a template writes its null as Python's `None` (Llama 3.1 does): vLLM passes
      // such content as "".
      const bool calls =
          m.contains("tool_calls") && m["tool_calls"].is_array() && !m["tool_calls"].empty();
      if (calls && null_ok) continue;
      m["content"] = "";
      (calls ? nulled : nulled_plain) +=
          ((calls ? nulled : nulled_plain).empty() ? "" : ", ") + msg_path(i);
    }
  }
  if (!joined.empty())
    w.record("join_text_parts", convention_finding(w.profile, "content_parts"),
             joined + ": text parts joined into a string");
  if (!nulled.empty())
    w.record("null_content_to_empty", convention_finding(w.profile, "null_call_content"),
             nulled + ": null content passed as \"\"");
  if (!nulled_plain.empty())
    w.record("null_content_to_empty", "a message without calls: null content is None to a template",
             nulled_plain + ": null content passed as \"\", as vLLM passes it");
  return kOk;
}

// Can the template render tool messages at all (the baseline conversation had them)?
bool renders_tool_messages(const probe::Profile& p) {
  return p.baseline.conversation == "full" || p.baseline.conversation == "no_system";
}

// Tool calls the template drops (or cannot take at all): written into the assistant content
// in the syntax the template's own instructions teach.
Status calls_as_text(Work& w) {
  if (w.profile.tool_calls.rendered && renders_tool_messages(w.profile)) return kOk;
  std::string changed;
  for (std::size_t i = 0; i < w.messages.size(); ++i) {
    json& m = w.messages[i];
    if (!m.contains("tool_calls")) continue;
    if (!m["tool_calls"].is_array() || m["tool_calls"].empty()) {
      m.erase("tool_calls");
      continue;
    }
    auto text = content_as_text(m, msg_path(i));
    if (!text) return text.error();
    std::string content = *text;
    if (!content.empty()) content += "\n";
    content += w.call_syntax().write_calls(m["tool_calls"]);
    w.taught = true;
    m["content"] = content;
    m.erase("tool_calls");
    changed += (changed.empty() ? "" : ", ") + msg_path(i);
  }
  if (!changed.empty()) {
    std::string finding =
        w.profile.tool_calls.rendered
            ? "tool messages do not render: " + w.profile.baseline.full_conversation_error
            : std::string("tool_calls.rendered: false");
    if (w.profile.has_silent_failure("tool_calls_dropped"))
      finding += " (silent failure tool_calls_dropped)";
    w.record("calls_as_text", finding,
             changed + ": tool calls written into the content in the '" +
                 std::string(w.call_syntax().name) + "' syntax");
  }
  return kOk;
}

// Tool results the template drops, or a tool role it rejects: a user turn carrying the text.
Status results_as_user_text(Work& w) {
  if (w.profile.tool_results.rendered && renders_tool_messages(w.profile)) return kOk;
  std::string changed;
  for (std::size_t i = 0; i < w.messages.size(); ++i) {
    json& m = w.messages[i];
    if (m.value("role", "") != "tool") continue;
    json user = json::object();
    user["role"] = "user";
    user["content"] = w.call_syntax().write_result(m);
    m = std::move(user);
    changed += (changed.empty() ? "" : ", ") + msg_path(i);
  }
  if (!changed.empty())
    w.record("results_as_user_text",
             w.profile.tool_results.rendered
                 ? "tool messages do not render: " + w.profile.baseline.full_conversation_error
                 : std::string("tool_results.rendered: false"),
             changed + ": tool result passed as a user turn");
  return kOk;
}

// Where the template ignores `tools` (or has no tool support), the definitions go into the
// system prompt, with the template's own call syntax as the instruction where one was found.
Status definitions_into_system(Work& w) {
  if (!w.tools.is_array() || w.tools.empty() || w.profile.tools.definitions_rendered) return kOk;
  std::string text = "# Tools\n\nYou may call one or more of the following functions:\n";
  for (const auto& tool : w.tools) text += arguments_text(tool) + "\n";
  text += "\nTo call a function, reply with:\n";
  if (w.profile.tool_calls.example) {
    std::string example = *w.profile.tool_calls.example;
    auto replace_all = [&](std::string_view from, std::string_view to) {
      for (std::size_t pos = 0; (pos = example.find(from, pos)) != std::string::npos;
           pos += to.size())
        example.replace(pos, from.size(), to);
    };
    replace_all(probe::sentinel::kFunctionName, "<function-name>");
    replace_all(probe::sentinel::kArgumentKey, "<argument-name>");
    replace_all(probe::sentinel::kArgumentValue, "<argument-value>");
    replace_all(probe::sentinel::kLongCallId, "<call-id>");
    replace_all(probe::sentinel::kShortCallId, "<call-id>");
    text += example;
  } else {
    json call = {
        {"function",
         {{"name", "<function-name>"}, {"arguments", {{"<argument-name>", "<argument-value>"}}}}}};
    text += w.call_syntax().write_calls(json::array({call}));
    w.taught = true;
  }
  if (!w.messages.empty() && w.messages[0].value("role", "") == "system") {
    auto existing = content_as_text(w.messages[0], msg_path(0));
    if (!existing) return existing.error();
    w.messages[0]["content"] = existing->empty() ? text : *existing + "\n\n" + text;
  } else {
    json system = {{"role", "system"}, {"content", text}};
    w.messages.insert(w.messages.begin(), std::move(system));
  }
  std::string finding = "tools.definitions_rendered: false";
  if (w.profile.has_silent_failure("tools_ignored")) finding += " (silent failure tools_ignored)";
  if (w.profile.has_silent_failure("no_tool_support")) finding += " (no_tool_support)";
  w.record("definitions_into_system", finding,
           std::to_string(w.tools.size()) + " tool definition(s) written into the system prompt");
  return kOk;
}

// Content as a list of parts: a string as one text part.
json as_parts(const json& content) {
  if (content.is_array()) return content;
  return json::array({json{{"type", "text"}, {"text", content.is_string() ? content : json("")}}});
}

// `text` put before a message's content: joined as text, or, where the content holds parts that
// are no text (an image), as a text part in front of them (the parts stay, for the placeholder).
Status prepend_text(json& m, const std::string& text, const std::string& path) {
  auto joined = content_as_text(m, path);
  if (joined) {
    m["content"] = text + "\n\n" + *joined;
    return kOk;
  }
  if (!m["content"].is_array()) return joined.error();
  json parts = m["content"];
  parts.insert(parts.begin(), json{{"type", "text"}, {"text", text + "\n\n"}});
  m["content"] = std::move(parts);
  return kOk;
}

// No system role: each system message's text goes in front of the user turn that follows it, so
// a late instruction stays where it was given (all of them went before the first question, a
// review found: "from now on answer in French" before Q1 and A1); one after the last user turn
// becomes a user turn of its own there.
Status system_into_user(Work& w) {
  if (w.profile.system.supported) return kOk;
  std::string pending;
  std::string changed;
  json kept = json::array();
  for (std::size_t i = 0; i < w.messages.size(); ++i) {
    json m = w.messages[i];
    const std::string role = m.value("role", "");
    if (role == "system") {
      auto text = content_as_text(m, msg_path(i));
      if (!text) return text.error();
      if (!pending.empty()) pending += "\n\n";
      pending += *text;
      changed += (changed.empty() ? "" : ", ") + msg_path(i);
      continue;
    }
    if (role == "user" && !pending.empty()) {
      if (auto st = prepend_text(m, pending, msg_path(i)); !st) return st.error();
      pending.clear();
    }
    kept.push_back(std::move(m));
  }
  if (changed.empty()) return kOk;
  if (!pending.empty()) kept.push_back(json{{"role", "user"}, {"content", pending}});
  w.messages = std::move(kept);
  w.record("system_into_user",
           "system.supported: false" +
               (w.profile.system.error.empty() ? "" : " (" + w.profile.system.error + ")"),
           changed + ": system text merged into the user turn after it");
  return kOk;
}

// Strict user/assistant alternation: consecutive turns of one side merged, as text, or as the
// parts of both where one holds parts that are no text and the template renders parts.
Status merge_for_alternation(Work& w) {
  if (!w.profile.alternation.required) return kOk;
  const bool parts_ok =
      convention_renders(w.profile, "content_parts") || w.profile.multimodal.text_parts;
  json merged = json::array();
  std::size_t merges = 0, merged_from = 0;  // the index merged.back() came from
  for (std::size_t i = 0; i < w.messages.size(); ++i) {
    const json& m = w.messages[i];
    std::string role = m.value("role", "");
    if (!merged.empty() && merged.back().value("role", "") == role &&
        (role == "user" || role == "assistant") && !m.contains("tool_calls") &&
        !merged.back().contains("tool_calls")) {
      auto a = content_as_text(merged.back(), msg_path(merged_from));
      auto b = content_as_text(m, msg_path(i));
      if (a && b) {
        merged.back()["content"] = *a + "\n\n" + *b;
      } else if (parts_ok) {
        // The text at the seam joined into one part, as the text turns are joined.
        json parts = as_parts(merged.back()["content"]);
        json more = as_parts(m.contains("content") ? m["content"] : json(nullptr));
        auto is_text = [](const json& p) {
          return p.is_object() && p.value("type", "") == "text" && p.contains("text") &&
                 p["text"].is_string();
        };
        if (!parts.empty() && !more.empty() && is_text(parts.back()) && is_text(more.front())) {
          parts.back()["text"] = parts.back()["text"].get<std::string>() + "\n\n" +
                                 more.front()["text"].get<std::string>();
          more.erase(more.begin());
        }
        for (auto& part : more) parts.push_back(std::move(part));
        merged.back()["content"] = std::move(parts);
      } else {
        return a ? b.error() : a.error();
      }
      ++merges;
      continue;
    }
    merged.push_back(m);
    merged_from = i;
  }
  if (merges == 0) return kOk;
  w.messages = std::move(merged);
  w.record(
      "merge_for_alternation",
      "alternation.required: true" +
          (w.profile.alternation.error.empty() ? "" : " (" + w.profile.alternation.error + ")"),
      std::to_string(merges) + " consecutive same-role turn(s) merged");
  return kOk;
}

// String content where the template only renders list-of-parts content (string_content lossy
// or failing, content_parts ok): every string becomes one text part. Runs last, after the
// passes that write text.
Status wrap_text_parts(Work& w) {
  if (convention_renders(w.profile, "string_content") ||
      !convention_renders(w.profile, "content_parts"))
    return kOk;
  std::string changed;
  for (std::size_t i = 0; i < w.messages.size(); ++i) {
    json& m = w.messages[i];
    if (!m.contains("content") || !m["content"].is_string()) continue;
    json part = {{"type", "text"}, {"text", m["content"]}};
    m["content"] = json::array({std::move(part)});
    changed += (changed.empty() ? "" : ", ") + msg_path(i);
  }
  if (!changed.empty())
    w.record("wrap_text_parts", convention_finding(w.profile, "string_content"),
             changed + ": string content passed as one text part");
  return kOk;
}

// ONE table: the adaptations in the order they run. Adding one is one row plus its pass.
struct AdaptationPass {
  std::string_view code;
  Status (*run)(Work&);
};
constexpr AdaptationPass kAdaptations[] = {
    {"media_parts", media_parts},
    {"developer_as_system", developer_as_system},
    {"tool_result_names", tool_result_names},
    {"drop_past_reasoning", drop_past_reasoning},
    {"reasoning_field", reasoning_field},
    {"arguments", arguments_shape},
    {"short_call_ids", short_call_ids},
    {"call_ids_with_names", call_ids_with_names},
    {"parameter_descriptions", parameter_descriptions},
    {"flat_tools", tools_shape},
    {"calls_as_text", calls_as_text},
    {"results_as_user_text", results_as_user_text},
    {"content_shapes", content_shapes},
    {"definitions_into_system", definitions_into_system},
    {"system_into_user", system_into_user},
    {"merge_for_alternation", merge_for_alternation},
    {"wrap_text_parts", wrap_text_parts},
};

// A tool definition as OpenAI's API and vLLM take it: {"type": "function", "function": {"name",
// "description"?, "parameters"?}}; a definition without "type" and "function" is transformers'
// flat shape ({"name", "parameters"}), taken as the template reads it. A tool no template can
// render as a function (OpenAI's "custom" tools, a nameless one) is refused, naming the field,
// rather than written into the prompt as it came.
Status check_tool(const json& tool, const std::string& path) {
  if (!tool.is_object()) return kOk;  // chat::validate names it
  const auto type = tool.find("type");
  if (type != tool.end() && (!type->is_string() || *type != "function"))
    return request_error(path + ".type",
                         "must be \"function\" (only function tools can be written into a prompt)");
  const bool nested = type != tool.end() || tool.contains("function");
  const std::string where = nested ? path + ".function" : path;
  const json* function = &tool;
  if (nested) {
    auto f = tool.find("function");
    if (f == tool.end() || !f->is_object())
      return request_error(where, "must be an object with the function's name and parameters");
    function = &*f;
  }
  auto name = function->find("name");
  if (name == function->end() || !name->is_string() || name->get_ref<const std::string&>().empty())
    return request_error(where + ".name", "must be the function's name (a non-empty string)");
  if (auto d = function->find("description");
      d != function->end() && !d->is_null() && !d->is_string())
    return request_error(where + ".description", "must be a string");
  if (auto p = function->find("parameters");
      p != function->end() && !p->is_null() && !p->is_object())
    return request_error(where + ".parameters", "must be a JSON Schema object");
  return kOk;
}

// The request's checks, with field paths: chat::validate (the chat layer's one validator of
// message, tool-call, tool and document shapes), after the few rules of the OpenAI wire shape
// that the passes rely on (calls nested under "function") and the OpenAI-only fields.
Status check_request(const json& request) {
  if (!request.is_object()) return request_error("", "the request is not a JSON object");
  auto messages = request.find("messages");
  if (messages != request.end() && messages->is_array())
    for (std::size_t i = 0; i < messages->size(); ++i) {
      const json& m = (*messages)[i];
      // OpenAI's (and vLLM's) message types require content except on an assistant turn; a
      // template reading message.content would fail on it with an engine error naming no field.
      if (m.is_object() && !m.contains("content")) {
        const auto role = m.find("role");
        if (role != m.end() && role->is_string() && *role != "assistant")
          return request_error(msg_path(i) + ".content",
                               "is required in a " + role->get<std::string>() + " message");
      }
      if (!m.is_object() || !m.contains("tool_calls") || !m["tool_calls"].is_array()) continue;
      for (std::size_t j = 0; j < m["tool_calls"].size(); ++j) {
        const json& call = m["tool_calls"][j];
        if (call.is_object() && !(call.contains("function") && call["function"].is_object()))
          return request_error(msg_path(i) + ".tool_calls[" + std::to_string(j) + "].function",
                               "must be an object (OpenAI tool calls nest name and arguments "
                               "under \"function\")");
      }
    }
  for (const char* key : {"add_generation_prompt", "continue_final_message"}) {
    auto it = request.find(key);
    if (it != request.end() && !it->is_null() && !it->is_boolean())
      return request_error(key, "must be true or false");
  }
  auto kwargs = request.find("chat_template_kwargs");
  if (kwargs != request.end() && !kwargs->is_null() && !kwargs->is_object())
    return request_error("chat_template_kwargs", "must be an object");
  if (auto tools = request.find("tools"); tools != request.end() && tools->is_array())
    for (std::size_t k = 0; k < tools->size(); ++k)
      if (auto st = check_tool((*tools)[k], "tools[" + std::to_string(k) + "]"); !st) return st;
  chat::ChatRequest shape;
  if (messages == request.end())
    return request_error("messages", "is required (a list of messages)");
  shape.messages = from_json(*messages);
  if (auto tools = request.find("tools"); tools != request.end()) shape.tools = from_json(*tools);
  if (auto documents = request.find("documents"); documents != request.end())
    shape.documents = from_json(*documents);
  return chat::validate(shape);
}

}  // namespace

namespace {

// The null content of every message, passed as `value`; "" when there is none.
std::string null_content_as(json& messages, const json& value) {
  std::string changed;
  for (std::size_t i = 0; i < messages.size(); ++i)
    if (messages[i].contains("content") && messages[i]["content"].is_null()) {
      messages[i]["content"] = value;
      changed += (changed.empty() ? "" : ", ") + msg_path(i);
    }
  return changed.empty() ? changed : changed + ": null content passed as " + value.dump();
}

// Retries measured when the adapted request's render raises, where the probe could not foresee
// the request's shape. One row per retry: its adaptation code, the cause it answers, and either
// what null content is passed as or a rewrite (the changed field paths and what was done; ""
// where it does not apply). Rows combine (render_retried): each applies to the messages the
// failed render was given, after the rows of the combination before it.
struct RenderRetry {
  std::string_view code;
  std::string_view cause;
  json null_as;  // null content passed as this (the null-content rows)
  // The other rows: what they changed in the messages or the tools ("" = nothing).
  std::string (*rewrite)(const probe::Profile&, json& messages, json& tools) = nullptr;

  std::string apply(const probe::Profile& profile, json& messages, json& tools) const {
    return rewrite != nullptr ? rewrite(profile, messages, tools)
                              : null_content_as(messages, null_as);
  }
};

// A function without a description gets "" (OpenAI's tools may omit it; gpt-oss's templates read
// it unguarded and raise). Where the template renders without, nothing is added.
std::string add_tool_descriptions(const probe::Profile&, json&, json& tools) {
  std::string changed;
  if (!tools.is_array()) return changed;
  for (std::size_t k = 0; k < tools.size(); ++k) {
    json& tool = tools[k];
    if (!tool.is_object()) continue;
    const bool nested = tool.contains("function") && tool["function"].is_object();
    json& fn = nested ? tool["function"] : tool;
    if (!fn.contains("name") || fn.contains("description")) continue;
    fn["description"] = "";
    changed += (changed.empty() ? "" : ", ") + std::string("tools[") + std::to_string(k) + "]" +
               (nested ? ".function" : "") + ".description";
  }
  return changed.empty() ? changed : changed + " passed as \"\"";
}
const RenderRetry kRenderRetries[] = {
    // The probe measured null call content on a turn that still had its reasoning; with past
    // reasoning dropped, some templates index into the content (None[0].thinking): "", then one
    // empty text part.
    {"null_content_replaced", "with null content", json("")},
    {"null_content_replaced", "with null content",
     json::array({json{{"type", "text"}, {"text", ""}}})},
    // The probe's OpenAI-style and 9-alphanumeric ids both render, but the request's own ids
    // may not (vLLM's mistral_parallel template wants at least 9 characters: `call_1` raises).
    {"short_call_ids", "with the request's call ids", json(),
     [](const probe::Profile& p, json& m, json&) {
       return convention_renders(p, "short_call_id") ? shorten_call_ids(m) : std::string();
     }},
    {"tool_descriptions", "without a tool's description", json(), add_tool_descriptions},
};

// A render that succeeded after retries: the rows applied in table order, each with what it
// changed and the error the render raised without it, and the request rendered.
struct RetriedRender {
  struct Applied {
    const RenderRetry* row;
    std::string changed;
    std::string raised_without;  // the error of the same combination without this row
  };
  std::vector<Applied> applied;
  json messages;
  json tools;
  chat::ChatRequest request;
  chat::ChatResult rendered;
};

// The retries, tried on the messages the failed render was given. Rows sharing a code are
// alternatives (at most one of them is applied); rows of different codes combine, since one
// request can need both (null content and its own short ids). Combinations of fewer rows are
// tried first, then in table order (the order of their rows' table positions); one where a row
// changes nothing is skipped (the smaller one was tried). With c codes of r rows each this is
// (r+1)^c - 1 renders at most, only for a request whose render raised (4 rows of 3 codes today:
// 11).
std::optional<RetriedRender> render_retried(const probe::Profile& profile,
                                            const jinja::Template& tmpl,
                                            const chat::ChatRequest& request, const json& messages,
                                            const json& tools, const std::string& raised,
                                            const Value& special_tokens,
                                            const chat::RenderOptions& render_options) {
  constexpr std::size_t kRows = std::size(kRenderRetries);
  // A combination: the table positions of its rows, ascending, at most one per code.
  std::vector<std::vector<std::size_t>> combinations{{}};
  for (std::size_t row = 0; row < kRows; ++row) {
    const std::size_t before = combinations.size();
    for (std::size_t c = 0; c < before; ++c) {
      const auto& combination = combinations[c];
      const bool code_taken =
          std::any_of(combination.begin(), combination.end(), [&](std::size_t other) {
            return kRenderRetries[other].code == kRenderRetries[row].code;
          });
      if (code_taken) continue;
      auto longer = combination;
      longer.push_back(row);
      combinations.push_back(std::move(longer));
    }
  }
  std::sort(combinations.begin(), combinations.end(), [](const auto& a, const auto& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  std::map<std::vector<std::size_t>, std::string> errors{{{}, raised}};  // of the tried ones
  for (const auto& combination : combinations) {
    if (combination.empty()) continue;  // the render that failed
    RetriedRender out{{}, messages, tools, request, {}};
    bool each_changed = true;
    for (std::size_t k = 0; k < combination.size() && each_changed; ++k) {
      const RenderRetry& row = kRenderRetries[combination[k]];
      std::string changed = row.apply(profile, out.messages, out.tools);
      each_changed = !changed.empty();
      auto without = combination;
      without.erase(without.begin() + static_cast<std::ptrdiff_t>(k));
      auto error = errors.find(without);
      out.applied.push_back(
          {&row, std::move(changed), error != errors.end() ? error->second : raised});
    }
    if (!each_changed) continue;
    out.request.messages = from_json(out.messages);
    out.request.tools = from_json(out.tools);
    auto retried = chat::render(tmpl, out.request, special_tokens, render_options);
    if (!retried) {
      errors[combination] = retried.error().to_string();
      continue;
    }
    out.rendered = std::move(*retried);
    return out;
  }
  return std::nullopt;
}

// `tools_as_text` (non-null): the definitions are only written into the system prompt and
// `tools` is passed as this value, None or [] (the plain-conversation fallback below).
Result<AdaptedRequest> adapt_impl(const json& request, const probe::Profile& profile,
                                  const jinja::Template& tmpl, const Options& options,
                                  const json* tools_as_text);

// The probe's baseline search renders its tool conversation; a template can refuse every
// shape of it (it raises on `tools`, on tool messages or on a content shape) and still render a
// plain user/assistant conversation. Measured here: the whole conversation is written as text
// in plain turns (definitions in the system prompt, calls in the assistant content, results as
// user turns, tools = None) in each content shape, with and without a system turn; the first
// variant that renders every piece wins.
Result<AdaptedRequest> plain_text_fallback(const json& request, const probe::Profile& profile,
                                           const jinja::Template& tmpl, const Options& options) {
  const json no_tools[] = {json(nullptr), json::array()};
  for (const json& tools_value : no_tools)
    for (bool parts : {false, true})
      for (bool system : {true, false}) {
        probe::Profile p;
        p.renders = true;
        p.baseline.conversation = "plain";
        p.system.supported = system;
        p.alternation.required = true;
        for (const char* key : {"string_content", "content_parts"}) {
          probe::Convention c;
          c.key = key;
          c.status = (std::string_view(key) == "content_parts") == parts ? probe::Status::ok
                                                                         : probe::Status::error;
          p.conventions.push_back(std::move(c));
        }
        Options quiet = options;
        quiet.verify = true;
        auto adapted = adapt_impl(request, p, tmpl, quiet, &tools_value);
        if (!adapted) continue;
        adapted->adaptations.insert(
            adapted->adaptations.begin(),
            Adaptation{"plain_text_conversation",
                       "renders: false (" + profile.baseline.error +
                           "); measured: a plain conversation renders with " +
                           (parts ? "text-part" : "string") + " content" +
                           (system ? "" : " and no system turn"),
                       "tool definitions, calls and results written as text in plain turns; "
                       "tools passed as " +
                           std::string(tools_value.is_null() ? "None" : "[]")});
        if (!options.verify) adapted->rendered.reset();
        return adapted;
      }
  return Error{"CannotRepresent",
               "the template renders no conversation at all: " + profile.baseline.error, 0, 0, ""};
}

}  // namespace

Result<AdaptedRequest> adapt_request(const json& request, const probe::Profile& profile,
                                     const jinja::Template& tmpl, const Options& options) {
  if (auto st = check_request(request); !st) return st.error();
  // A call syntax the table does not name is refused, not replaced by the taught one.
  if (!options.call_syntax.empty() && find_syntax(options.call_syntax) == nullptr) {
    std::string known;
    for (const auto& name : call_syntax_names()) known += (known.empty() ? "" : ", ") + name;
    return Error{"ValueError",
                 "unknown call syntax '" + options.call_syntax + "' (known: " + known + ")", 0, 0,
                 "call_syntax"};
  }
  auto adapted = !profile.renders ? plain_text_fallback(request, profile, tmpl, options)
                                  : adapt_impl(request, profile, tmpl, options, nullptr);
  // OpenAI's optional `name` of a participant: metadata most templates never write. Not a
  // refusal (the conversation is whole), but not dropped without a word either.
  if (adapted && adapted->rendered)
    for (std::size_t i = 0; i < request["messages"].size(); ++i) {
      const json& m = request["messages"][i];
      if (!m.is_object() || m.value("role", "") == "tool") continue;  // tool_result_names
      const auto name = m.find("name");
      if (name == m.end() || !name->is_string() || name->get_ref<const std::string&>().empty())
        continue;
      if (adapted->rendered->text.find(name->get_ref<const std::string&>()) == std::string::npos)
        adapted->warnings.push_back(msg_path(i) + ".name ('" + name->get<std::string>() +
                                    "') is not written by this template");
    }
  return adapted;
}

Result<AdaptedRequest> adapt_request(std::string_view request_json, const probe::Profile& profile,
                                     const jinja::Template& tmpl, const Options& options) {
  if (request_json.size() > options.input.max_request_bytes)
    return request_error("", "the request is " + std::to_string(request_json.size()) +
                                 " bytes, over the limit of " +
                                 std::to_string(options.input.max_request_bytes));
  // A nesting limit before anything recurses over the request (untrusted input).
  auto request = util::parse_bounded_json(request_json, options.input.max_json_depth);
  if (request.failure == util::BoundedJson::Failure::kTooDeep)
    return request_error("", "the request nests deeper than the limit of " +
                                 std::to_string(options.input.max_json_depth));
  if (!request) return request_error("", "the request is not valid JSON: " + request.what);
  return adapt_request(request.value, profile, tmpl, options);
}

Result<Adapted> adapt(const json& request, const probe::Profile& profile,
                      const jinja::Template& tmpl, const Options& options) {
  auto adapted = adapt_request(request, profile, tmpl, options);
  if (!adapted) return adapted.error();
  Adapted out;
  auto context = to_json(chat::template_variables(adapted->request, options.special_tokens));
  if (!context) return context.error();
  out.context = std::move(*context);
  out.adaptations = std::move(adapted->adaptations);
  out.warnings = std::move(adapted->warnings);
  if (adapted->rendered) out.rendered = std::move(adapted->rendered->text);
  return out;
}

namespace {

// The request's own template variables: every field that is not an OpenAI parameter, then
// chat_template_kwargs (they win), as transformers' apply_chat_template(**kwargs) takes them.
Value request_kwargs(const json& request) {
  json kwargs = json::object();
  for (auto& [k, v] : request.items())
    if (!is_openai_parameter(k)) kwargs[k] = v;
  if (request.contains("chat_template_kwargs") && request["chat_template_kwargs"].is_object())
    for (auto& [k, v] : request["chat_template_kwargs"].items()) kwargs[k] = v;
  return from_json(kwargs);
}

bool flag(const json& request, const char* key, bool absent) {
  auto it = request.find(key);
  return it == request.end() || !it->is_boolean() ? absent : it->get<bool>();
}

Result<AdaptedRequest> adapt_impl(const json& request, const probe::Profile& profile,
                                  const jinja::Template& tmpl, const Options& options,
                                  const json* tools_as_text) {
  Work w{profile, options, json::array(), nullptr, nullptr, Adapted{}, false, json::object()};
  w.messages = request["messages"];
  if (auto kwargs = to_json(request_kwargs(request)); kwargs && kwargs->is_object())
    w.kwargs = std::move(*kwargs);
  for (auto& m : w.messages)
    if (m.contains("tool_calls") && m["tool_calls"].is_null()) m.erase("tool_calls");
  if (request.contains("tools") && request["tools"].is_array() && !request["tools"].empty())
    w.tools = request["tools"];
  for (const auto& pass : kAdaptations)
    if (auto st = pass.run(w); !st) return st.error();

  AdaptedRequest out;
  chat::ChatRequest& chat_request = out.request;
  chat_request.messages = from_json(w.messages);
  const bool has_tools = w.tools.is_array();
  chat_request.tools = from_json(tools_as_text != nullptr ? *tools_as_text : w.tools);
  if (request.contains("documents")) chat_request.documents = from_json(request["documents"]);
  chat_request.continue_final_message = flag(request, "continue_final_message", false);
  chat_request.add_generation_prompt =
      flag(request, "add_generation_prompt", !chat_request.continue_final_message);
  chat_request.kwargs = request_kwargs(request);
  out.adaptations = std::move(w.out.adaptations);
  out.warnings = std::move(w.out.warnings);
  if (w.taught) out.taught_call_syntax = std::string(w.call_syntax().name);
  if (!options.verify) return out;

  json rendered_messages = w.messages;   // the messages the render below was given
  std::optional<json> null_replacement;  // what null content had to be passed as, if anything
  chat::RenderOptions render_options;
  render_options.limits = options.limits;
  render_options.now = options.now;
  render_options.mode = options.mode;
  render_options.assistant_mask = options.assistant_mask;
  render_options.validate = false;  // check_request ran; the passes keep the shapes valid
  auto rendered = chat::render(tmpl, chat_request, options.special_tokens, render_options);
  // Where the render raises, the retries are tried (render_retried): the first combination that
  // renders is kept and each of its rows recorded.
  if (!rendered)
    if (auto retried =
            render_retried(profile, tmpl, chat_request, rendered_messages,
                           tools_as_text != nullptr ? *tools_as_text : w.tools,
                           rendered.error().to_string(), options.special_tokens, render_options)) {
      for (auto& applied : retried->applied) {
        out.adaptations.push_back({std::string(applied.row->code),
                                   "the adapted request raised " + applied.raised_without + " " +
                                       std::string(applied.row->cause),
                                   std::move(applied.changed)});
        if (!applied.row->null_as.is_null()) null_replacement = applied.row->null_as;
      }
      chat_request = std::move(retried->request);
      rendered = std::move(retried->rendered);
      rendered_messages = std::move(retried->messages);
    }
  if (!rendered)
    return Error{"CannotRepresent",
                 "the adapted request does not render: " + rendered.error().to_string(), 0, 0, ""};
  auto verified = verify_survivors(request, rendered->text, has_tools);
  if (!verified) {
    // Measured here: a template that renders a turn's calls but not the content beside them
    // (Llama 3.1, Mistral v0.3, Hermes 2 Pro), or the content but not the calls (DeepSeek V3),
    // may render each when the content is an assistant turn of its own before the calls.
    json split = json::array();
    std::string changed;
    // The calls turn's content as the probe measured it renders, or as the null retry above
    // had to pass it.
    const json call_content = null_replacement.has_value()           ? *null_replacement
                              : null_call_content_renders(w.profile) ? json(nullptr)
                                                                     : json("");
    for (std::size_t i = 0; i < rendered_messages.size(); ++i) {
      const json& m = rendered_messages[i];
      auto said = content_as_text(m, msg_path(i));
      const bool both = m.value("role", "") == "assistant" && m.contains("tool_calls") &&
                        m["tool_calls"].is_array() && !m["tool_calls"].empty() && said &&
                        said->find_first_not_of(" \t\r\n") != std::string::npos;
      if (!both) {
        split.push_back(m);
        continue;
      }
      // The turn's order is kept: its reasoning, its content, then its calls.
      json text = m;
      text.erase("tool_calls");
      json calls = m;
      calls["content"] = call_content;
      for (const char* field : {"reasoning_content", "thinking", "reasoning"}) calls.erase(field);
      split.push_back(std::move(text));
      split.push_back(std::move(calls));
      changed += (changed.empty() ? "" : ", ") + msg_path(i);
    }
    if (!changed.empty()) {
      chat::ChatRequest retry = chat_request;
      retry.messages = from_json(split);
      auto retried = chat::render(tmpl, retry, options.special_tokens, render_options);
      if (retried && verify_survivors(request, retried->text, has_tools)) {
        out.adaptations.push_back(
            {"content_before_calls",
             "the template loses the content or the calls of a turn that "
             "has both (" +
                 verified.error().path + ")",
             changed + " of the adapted request: the content is an assistant turn of its own, "
                       "before the calls"});
        chat_request.messages = std::move(retry.messages);
        rendered = std::move(retried);
        verified = Status{std::monostate{}};
      }
    }
  }
  if (!verified) return verified.error();
  out.rendered = std::move(*rendered);
  return out;
}

}  // namespace

}  // namespace chatwire::adapt
