// The probe: renders sentinel conversations through the chat layer and reads the template's
// behaviour from the output. scripts/probe-oracle.py is the same algorithm over the
// reference renderer; keep the two in step (tests/probe/ compares them on every template).
#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "chatwire/chat.hpp"
#include "chatwire/probe_json.hpp"
#include "chatwire/value_json.hpp"
#include "probe/text.hpp"

namespace chatwire::probe {

using json = nlohmann::ordered_json;

namespace {

// ---------------------------------------------------------------------------------------
// Sentinels: unique strings that cannot occur in a template by accident. Upper-case letters
// only (and one identifier for the function name), so escaping, JSON encoding and quoting
// leave them intact.
// ---------------------------------------------------------------------------------------

// The sentinels by name: an enum, so that a misspelled one is a compile error rather than a
// lookup that finds nothing (and then "finds" the empty string in every output).
enum class Sentinel : unsigned char {
  system,
  question,
  reasoning_content,
  thinking,
  call_name,
  call_argument,
  result,
  answer,
  question2,
  tool_description,
  parameter_description,
  prefill,
  answer2,
  document_title,
  document_text,
  bos,
  date,
};
struct SentinelEntry {
  Sentinel id;
  std::string_view name, text;  // name: the key in the profile JSON
};
constexpr SentinelEntry kSentinels[] = {
    {Sentinel::system, "system", "ZXSYSTEMXZ"},
    {Sentinel::question, "question", "ZXQUESTIONXZ"},
    {Sentinel::reasoning_content, "reasoning_content", "ZXREASONXZ"},
    {Sentinel::thinking, "thinking", "ZXTHINKXZ"},
    {Sentinel::call_name, "call_name", sentinel::kFunctionName},
    {Sentinel::call_argument, "call_argument", sentinel::kArgumentValue},
    {Sentinel::result, "result", sentinel::kResult},
    {Sentinel::answer, "answer", "ZXANSWERXZ"},
    {Sentinel::question2, "question2", "ZXFOLLOWUPXZ"},
    {Sentinel::tool_description, "tool_description", sentinel::kToolDescription},
    {Sentinel::parameter_description, "parameter_description", "ZXPARAMDESCXZ"},
    {Sentinel::prefill, "prefill", "ZXPREFILLXZ"},
    {Sentinel::answer2, "answer2", "ZXANSWERTWOXZ"},
    {Sentinel::document_title, "document_title", "ZXDOCTITLEXZ"},
    {Sentinel::document_text, "document_text", "ZXDOCTEXTXZ"},
    {Sentinel::bos, "bos", "ZXBOSXZ"},
    {Sentinel::date, "date", "ZXDATEXZ"},
};
static_assert(
    [] {
      for (std::size_t i = 0; i < std::size(kSentinels); ++i)
        if (static_cast<std::size_t>(kSentinels[i].id) != i) return false;
      return true;
    }(),
    "kSentinels is in enum order");

constexpr std::string_view S(Sentinel s) {
  return kSentinels[static_cast<std::size_t>(s)].text;
}
constexpr std::string_view name_of(Sentinel s) {
  return kSentinels[static_cast<std::size_t>(s)].name;
}

constexpr std::string_view kArgumentKey = sentinel::kArgumentKey;
constexpr std::string_view kLongCallId = sentinel::kLongCallId;
constexpr std::string_view kShortCallId = sentinel::kShortCallId;
constexpr std::string_view kTextPartLeak =
    "'type': 'text'";  // a content list printed as a Python repr

// Sentinels that count when choosing the baseline. Reasoning is left out on purpose:
// dropping past reasoning is the desired behaviour.
constexpr Sentinel kScored[] = {
    Sentinel::system, Sentinel::question,  Sentinel::call_argument,   Sentinel::result,
    Sentinel::answer, Sentinel::question2, Sentinel::tool_description};
// Sentinels compared between a flip and the baseline to call a flip lossy.
constexpr Sentinel kCompared[] = {Sentinel::system,           Sentinel::question,
                                  Sentinel::call_argument,    Sentinel::result,
                                  Sentinel::answer,           Sentinel::question2,
                                  Sentinel::tool_description, Sentinel::parameter_description,
                                  Sentinel::call_name,        Sentinel::reasoning_content,
                                  Sentinel::thinking};

// ---------------------------------------------------------------------------------------
// The probe axes: ONE table, one row per input convention. The first value of each axis is
// preferred when several combinations keep equally many sentinels; each value names the
// convention key the profile reports it under. An axis about tool messages is reported as
// an error when the template cannot render tool messages at all. Adding an axis = one row
// here, its effect in `conversation()`, and the same row in scripts/probe-oracle.py.
// ---------------------------------------------------------------------------------------

struct AxisValue {
  std::string_view value, key;
};
struct Axis {
  std::string_view name;
  std::array<AxisValue, 2> values;
  bool about_tool_messages;
};
constexpr Axis kAxes[] = {
    {"arguments", {{{"dict", "arguments_dict"}, {"string", "arguments_string"}}}, true},
    {"call_id", {{{"long", "long_call_id"}, {"short", "short_call_id"}}}, true},
    {"tools", {{{"nested", "nested_tools"}, {"flat", "flat_tools"}}}, false},
    {"content", {{{"string", "string_content"}, {"parts", "content_parts"}}}, false},
    {"call_content", {{{"empty", "empty_call_content"}, {"null", "null_call_content"}}}, true},
};
constexpr std::size_t kAxisCount = std::size(kAxes);

// A combination of conventions: the index of the chosen value on each axis.
using Combo = std::array<unsigned char, kAxisCount>;

std::string_view value_of(const Combo& combo, std::string_view axis) {
  for (std::size_t i = 0; i < kAxisCount; ++i)
    if (kAxes[i].name == axis) return kAxes[i].values[combo[i]].value;
  return {};
}

// Every combination, in the order itertools.product gives (last axis fastest).
std::vector<Combo> all_combos() {
  std::vector<Combo> combos;
  std::size_t total = std::size_t{1} << kAxisCount;
  for (std::size_t n = 0; n < total; ++n) {
    Combo c{};
    for (std::size_t i = 0; i < kAxisCount; ++i)
      c[i] = static_cast<unsigned char>((n >> (kAxisCount - 1 - i)) & 1u);
    combos.push_back(c);
  }
  return combos;
}

// Conversation shapes tried in order until one renders with some combination: the full
// tool conversation, then without the system message, then without tool traffic (which
// still measures where definitions go).
struct Shape {
  std::string_view name;
  bool system, tool_messages;
};
constexpr Shape kLadder[] = {
    {"full", true, true},
    {"no_system", false, true},
    {"no_tool_messages", true, false},
    {"no_system_no_tool_messages", false, false},
};

// Turn families, recognised by a marker in the assistant frame (user suffix + assistant
// prefix). First match wins, so more specific markers come first.
struct Family {
  std::string_view name, marker;
};
constexpr Family kFamilies[] = {
    {"Harmony", "<|start|>assistant"},
    {"ChatML", "<|im_start|>assistant"},
    {"Llama 3", "<|start_header_id|>assistant<|end_header_id|>"},
    {"Llama 4", "<|header_start|>assistant<|header_end|>"},
    {"Gemma 4", "<|turn>model"},
    {"Gemma", "<start_of_turn>model"},
    {"Granite", "<|start_of_role|>assistant<|end_of_role|>"},
    {"Kimi", "<|im_assistant|>"},
    {"DeepSeek",
     "<\xEF\xBD\x9C"
     "Assistant\xEF\xBD\x9C>"},  // <｜Assistant｜>
    {"Command-R", "<|CHATBOT_TOKEN|>"},
    {"Seed", "<seed:bos>assistant"},
    {"MiniMax", "]~b]ai"},
    {"EXAONE", "[|assistant|]"},
    {"Mistral", "[/INST]"},
    {"pipe role", "<|assistant|>"},
    {"Alpaca", "### Response"},
    {"plain text", "assistant"},
    {"plain text", "Assistant"},
    {"plain text", "ASSISTANT"},
};
// The family of a frame whose markers match no row above but exist (the template has turn
// markers of its own); "unknown" is left for frames with no assistant marker at all.
constexpr std::string_view kOtherFamily = "other";

// Reasoning openers looked for in the generation prompt when the template shows no
// reasoning markers of its own.
constexpr std::string_view kReasoningOpeners[] = {
    "<think>",          "<seed:think>", "[THINK]", "<|channel|>analysis", "<|START_THINKING|>",
    "<|channel>thought"};
// ... and the closers, for the same purpose.
constexpr std::string_view kReasoningClosers[] = {"</think>", "</seed:think>",    "[/THINK]",
                                                  "<|end|>",  "<|END_THINKING|>", "<channel|>"};
static_assert(std::size(kReasoningOpeners) == std::size(kReasoningClosers),
              "each opener has its closer (the reasoning-in-content measurement pairs them)");

// Names the thinking-control measurement never flips: what the renderer passes anyway and
// the environment's own globals.
constexpr std::string_view kNotFlipped[] = {
    "messages",  "tools",     "documents",       "add_generation_prompt",
    "bos_token", "eos_token", "unk_token",       "sep_token",
    "pad_token", "cls_token", "mask_token",      "additional_special_tokens",
    "range",     "dict",      "lipsum",          "cycler",
    "joiner",    "namespace", "raise_exception", "strftime_now",
    "loop",      "caller",    "varargs",         "kwargs",
    "self"};
// The values each candidate variable is set to (the profile's key, the value as JSON).
constexpr std::pair<std::string_view, std::string_view> kFlipValues[] = {
    {"true", "true"}, {"false", "false"}, {"string", "\"ZXVALUEXZ\""}};
// A variable the template needs but transformers does not pass (e.g. `functions`): the
// plain renders pass it as an empty string, up to this many of them.
constexpr int kMaxUndefined = 3;
// The second clock of the date measurement (the first is Options::now).
constexpr std::string_view kOtherNow = "2031-07-04T22:30:00";

// Content part types of the multimodal measurement.
struct PartType {
  std::string_view type;
  std::string_view json;  // the part as sent
};
constexpr PartType kPartTypes[] = {
    {"image", R"({"type": "image"})"},
    {"image_url", R"({"type": "image_url", "image_url": {"url": "https://example.com/zx.png"}})"},
    {"audio", R"({"type": "audio"})"},
    {"input_audio", R"({"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}})"},
    {"video", R"({"type": "video"})"},
};

// ---------------------------------------------------------------------------------------
// The sentinel conversations
// ---------------------------------------------------------------------------------------

json tool_definition(std::string_view shape) {
  json function = {
      {"name", S(Sentinel::call_name)},
      {"description",
       std::string(S(Sentinel::tool_description)) + " Get the current weather for a city."},
      {"parameters",
       {{"type", "object"},
        {"properties",
         {{std::string(kArgumentKey),
           {{"type", "string"},
            {"description", std::string(S(Sentinel::parameter_description)) + " City name"}}}}},
        {"required", json::array({kArgumentKey})}}},
  };
  if (shape == "nested") return json{{"type", "function"}, {"function", function}};
  return function;
}

json text(std::string value, std::string_view shape) {
  if (shape == "parts") return json::array({json{{"type", "text"}, {"text", value}}});
  return value;
}

json message(std::string_view role, json content) {
  return json{{"role", role}, {"content", std::move(content)}};
}

// A chat request as the oracle's `chat` object: messages, tools, add_generation_prompt.
struct Chat {
  json messages = json::array();
  json tools = nullptr;
  bool add_generation_prompt = false;
  bool continue_final_message = false;
  json documents = nullptr;
  json kwargs = json::object();  // extra template variables
  std::string now;               // strftime_now's clock; empty: the probe's own
};

Chat conversation(const Combo& combo, const Shape& shape) {
  std::string_view call_id = value_of(combo, "call_id") == "long" ? kLongCallId : kShortCallId;
  json arguments = json{{std::string(kArgumentKey), S(Sentinel::call_argument)}};
  // As json.dumps writes it (a space after ':'), which nlohmann's compact dump does not.
  if (value_of(combo, "arguments") == "string")
    arguments = "{\"" + std::string(kArgumentKey) + "\": \"" +
                std::string(S(Sentinel::call_argument)) + "\"}";
  std::string_view content = value_of(combo, "content");
  Chat chat;
  if (shape.system)
    chat.messages.push_back(
        message("system",
                text(std::string(S(Sentinel::system)) + " You are a helpful assistant.", content)));
  chat.messages.push_back(message(
      "user",
      text(std::string(S(Sentinel::question)) + " What is the weather in Paris?", content)));
  if (shape.tool_messages) {
    json call = {
        {"role", "assistant"},
        {"content", value_of(combo, "call_content") == "null" ? json(nullptr) : json("")},
        {"tool_calls",
         json::array(
             {json{{"id", call_id},
                   {"type", "function"},
                   {"function", {{"name", S(Sentinel::call_name)}, {"arguments", arguments}}}}})},
        {"reasoning_content",
         std::string(S(Sentinel::reasoning_content)) + " The user wants the weather."},
        {"thinking", std::string(S(Sentinel::thinking)) + " I should call the tool."},
    };
    chat.messages.push_back(std::move(call));
    chat.messages.push_back(json{{"role", "tool"},
                                 {"tool_call_id", call_id},
                                 {"name", S(Sentinel::call_name)},
                                 {"content", std::string(S(Sentinel::result)) + " 22C and sunny"}});
  }
  chat.messages.push_back(
      message("assistant", std::string(S(Sentinel::answer)) + " It is 22C and sunny."));
  chat.messages.push_back(
      message("user", text(std::string(S(Sentinel::question2)) + " And tomorrow?", content)));
  chat.tools = json::array({tool_definition(value_of(combo, "tools"))});
  chat.add_generation_prompt = true;
  return chat;
}

// The baseline conversation cut after its tool result, as a tool loop renders it for the next
// step: the question bare (the reasoning markers are read after it), the call turn with the
// answer as its text and both reasoning fields.
Chat tool_loop(Chat chat) {
  json messages = json::array();
  for (json& m : chat.messages) {
    const std::string role = m.value("role", "");
    if (role == "user") {
      json& content = m["content"];
      (content.is_array() ? content[0]["text"] : content) = S(Sentinel::question);
    } else if (role == "assistant") {
      m["content"] = S(Sentinel::answer);
      m["reasoning_content"] = S(Sentinel::reasoning_content);
      m["thinking"] = S(Sentinel::thinking);
    }
    messages.push_back(std::move(m));
    if (role == "tool") break;
  }
  chat.messages = std::move(messages);
  return chat;
}

// A small conversation without tools: turns are (role, sentinel name) pairs.
Chat plain(std::initializer_list<std::pair<std::string_view, Sentinel>> turns,
           bool generation_prompt = false) {
  Chat chat;
  for (auto [role, key] : turns) chat.messages.push_back(message(role, S(key)));
  chat.add_generation_prompt = generation_prompt;
  return chat;
}

// ---------------------------------------------------------------------------------------
// Rendering through the chat layer
// ---------------------------------------------------------------------------------------

struct Rendered {
  std::optional<std::string> output;
  std::string error;  // "Type: message" when output is empty
  std::vector<std::pair<std::size_t, std::size_t>> generation;  // byte spans
};

json to_chat_json(const Chat& chat) {
  json j{{"messages", chat.messages},
         {"tools", chat.tools},
         {"add_generation_prompt", chat.add_generation_prompt}};
  if (chat.continue_final_message) j["continue_final_message"] = true;
  if (!chat.documents.is_null()) j["documents"] = chat.documents;
  if (!chat.kwargs.empty()) j["kwargs"] = chat.kwargs;
  if (!chat.now.empty()) j["now"] = chat.now;
  return j;
}

// The messages with every string content as one text part.
json as_parts(const json& messages) {
  json out = json::array();
  for (const auto& m : messages) {
    json copy = m;
    if (m.contains("content") && m["content"].is_string())
      copy["content"] = json::array({json{{"type", "text"}, {"text", m["content"]}}});
    out.push_back(std::move(copy));
  }
  return out;
}

// The text of every message (string content, or its text parts).
std::vector<std::string> message_texts(const Chat& chat) {
  std::vector<std::string> texts;
  for (const auto& m : chat.messages) {
    if (!m.contains("content")) continue;
    const json& content = m["content"];
    if (content.is_string()) {
      texts.push_back(content.get<std::string>());
    } else if (content.is_array()) {
      for (const auto& part : content)
        if (part.is_object() && part.contains("text") && part["text"].is_string())
          texts.push_back(part["text"].get<std::string>());
    }
  }
  return texts;
}

// The variable an "UndefinedError: 'name' is undefined" names, or empty.
std::string undefined_name(std::string_view error) {
  constexpr std::string_view head = "UndefinedError: '", tail = "' is undefined";
  if (!error.starts_with(head) || !error.ends_with(tail) ||
      error.size() <= head.size() + tail.size())
    return {};
  std::string_view name = error.substr(head.size(), error.size() - head.size() - tail.size());
  auto word = [](char c, bool first) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
           (!first && c >= '0' && c <= '9');
  };
  for (std::size_t i = 0; i < name.size(); ++i)
    if (!word(name[i], i == 0)) return {};
  return std::string(name);
}

class Renderer {
 public:
  explicit Renderer(const SpanRenderFunction& render) : render_(render) {}

  Rendered render(const Chat& chat) {
    ++count;
    auto result = render_(to_chat_json(chat));
    if (!result) return {std::nullopt, result.error().type + ": " + result.error().message, {}};
    return {std::move(result->text), {}, std::move(result->generation)};
  }

  Rendered render_plain(const Chat& chat) { return render_variant(chat).first; }

  // Renders a small conversation: as given; when that fails or loses a message's text, with
  // the sentinel tool (some templates iterate over `tools` unconditionally), with it flat, and
  // with every content as text parts (some index content[0]['text']). The first variant that
  // keeps every message's text wins, else the first that renders, else the first error.
  std::pair<Rendered, Chat> render_variant(const Chat& chat) {
    std::vector<Chat> variants{chat};
    if (chat.tools.is_null()) {
      variants.push_back(chat);
      variants.back().tools = json::array({tool_definition("nested")});
      variants.push_back(chat);
      variants.back().tools = json::array({tool_definition("flat")});
    }
    variants.push_back(chat);
    variants.back().messages = as_parts(chat.messages);
    std::optional<std::pair<Rendered, Chat>> first;
    for (Chat& variant : variants) {
      Rendered out = render(variant);
      for (int i = 0; i < kMaxUndefined; ++i) {
        std::string name = out.output ? std::string() : undefined_name(out.error);
        if (name.empty()) break;
        variant.kwargs[name] = "";
        out = render(variant);
      }
      if (out.output) {
        bool all = true;
        for (const auto& t : message_texts(variant)) all = all && text::contains(*out.output, t);
        if (all) return {std::move(out), std::move(variant)};
      }
      if (!first || (!first->first.output && out.output)) first = {std::move(out), variant};
    }
    return std::move(*first);
  }

  std::size_t count = 0;

 private:
  const SpanRenderFunction& render_;
};

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

bool has(std::string_view output, Sentinel sentinel) {
  return text::contains(output, S(sentinel));
}

// What markupsafe's escape writes for & < > ' " (and the common named form of ").
constexpr std::string_view kHtmlEntities[] = {"&#34;", "&#39;", "&quot;", "&lt;", "&gt;", "&amp;"};
// Sentinels that the call syntax and the tool definitions put between quotes.
constexpr std::string_view kQuotedSentinels[] = {sentinel::kFunctionName, sentinel::kArgumentKey,
                                                 sentinel::kArgumentValue,
                                                 sentinel::kToolDescription};

// The messages' own text (not the call syntax or the tool definitions).
std::span<const std::string_view> content_sentinels() {
  static const std::string_view kContent[] = {S(Sentinel::system), S(Sentinel::question),
                                              S(Sentinel::result), S(Sentinel::answer),
                                              S(Sentinel::question2)};
  return kContent;
}

// A sentinel right next to an HTML entity: the text around it was escaped.
bool html_escaped(std::string_view text, std::span<const std::string_view> sentinels) {
  for (std::string_view s : sentinels)
    for (std::string_view e : kHtmlEntities)
      if (text::contains(text, std::string(e) + std::string(s)) ||
          text::contains(text, std::string(s) + std::string(e)))
        return true;
  return false;
}

// Python's `a or b`: the first non-empty string.
std::string first_nonempty(const std::optional<std::string>& a,
                           const std::optional<std::string>& b) {
  if (a && !a->empty()) return *a;
  if (b && !b->empty()) return *b;
  return {};
}

// The text without surrounding whitespace, as an owned string (a view of a temporary
// `value_or("")` would dangle).
std::string stripped(const std::optional<std::string>& s) {
  return s ? std::string(text::strip(*s)) : std::string();
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

std::size_t end_of(std::string_view output, Sentinel sentinel) {
  return output.find(S(sentinel)) + S(sentinel).size();
}

// ---------------------------------------------------------------------------------------
// Measurements
// ---------------------------------------------------------------------------------------

void measure_frame(Renderer& r, Profile& p) {
  Frame& frame = p.frame;
  Rendered u_gen = r.render_plain(plain({{"user", Sentinel::question}}, true));
  Rendered u = r.render_plain(plain({{"user", Sentinel::question}}));
  Rendered ua =
      r.render_plain(plain({{"user", Sentinel::question}, {"assistant", Sentinel::answer}}));
  Rendered uau = r.render_plain(plain({{"user", Sentinel::question},
                                       {"assistant", Sentinel::answer},
                                       {"user", Sentinel::question2}}));
  if (u_gen.output && u.output) {
    auto d = text::diff_region(*u_gen.output, *u.output);
    frame.generation_prompt = u_gen.output->substr(d.start, d.end_a - d.start);
  }
  if (ua.output && has(*ua.output, Sentinel::answer))
    frame.assistant_suffix = ua.output->substr(end_of(*ua.output, Sentinel::answer));
  // The prefix of an assistant turn in history (the final turn may be rendered
  // differently, e.g. with an empty reasoning block).
  const Rendered& history = uau.output && has(*uau.output, Sentinel::question2) ? uau : ua;
  std::optional<std::string> between;
  if (history.output && has(*history.output, Sentinel::question) &&
      has(*history.output, Sentinel::answer)) {
    const std::string& h = *history.output;
    std::size_t q_end = end_of(h, Sentinel::question);
    std::size_t a_pos = h.find(S(Sentinel::answer), q_end);
    if (a_pos != std::string::npos) between = h.substr(q_end, a_pos - q_end);
  }
  if (between) {
    const std::string gp = frame.generation_prompt.value_or("");
    std::size_t split = gp.empty() ? std::string::npos : between->rfind(gp);
    if (split == std::string::npos && !gp.empty()) {
      // The prompt may open more than a history turn shows (e.g. "<think>\n"): try it
      // shortened by whole atoms, longest first.
      auto ends = text::atom_starts(gp);
      for (std::size_t i = ends.size(); i-- > 1;) {
        std::string candidate(text::strip(std::string_view(gp).substr(0, ends[i])));
        if (!candidate.empty() && between->rfind(candidate) != std::string::npos) {
          split = between->rfind(candidate);
          break;
        }
      }
    }
    if (split == std::string::npos) split = 0;
    frame.user_suffix = between->substr(0, split);
    frame.assistant_prefix = between->substr(split);
  }
  if (uau.output && has(*uau.output, Sentinel::answer) && has(*uau.output, Sentinel::question2)) {
    const std::string& h = *uau.output;
    std::size_t a_end = end_of(h, Sentinel::answer);
    std::size_t q2 = h.find(S(Sentinel::question2), a_end);
    std::string b = q2 == std::string::npos ? std::string() : h.substr(a_end, q2 - a_end);
    std::string suffix = frame.assistant_suffix.value_or("");
    frame.user_prefix = !suffix.empty() && b.starts_with(suffix) ? b.substr(suffix.size()) : b;
  } else if (u.output && has(*u.output, Sentinel::question)) {
    frame.user_prefix = u.output->substr(0, u.output->find(S(Sentinel::question)));
  }
  std::string look = frame.user_suffix.value_or("") +
                     first_nonempty(frame.assistant_prefix, frame.generation_prompt);
  bool named = false;
  for (const auto& family : kFamilies) {
    if (text::contains(look, family.marker)) {
      frame.family = family.name;
      named = true;
      break;
    }
  }
  if (!named &&
      !text::strip(first_nonempty(frame.assistant_prefix, frame.generation_prompt)).empty())
    frame.family = kOtherFamily;
  if (!u_gen.output) frame.error = u_gen.error;

  Rendered su = r.render_plain(plain({{"system", Sentinel::system}, {"user", Sentinel::question}}));
  if (!su.output) {
    p.system.error = su.error;
  } else if (!has(*su.output, Sentinel::system)) {
    p.system.error = "renders but drops the system message";
  } else {
    p.system.supported = true;
  }
  Rendered uu =
      r.render_plain(plain({{"user", Sentinel::question}, {"user", Sentinel::question2}}));
  // Two user turns that fail say alternation is required only where one user turn renders (a
  // template that renders no plain conversation fails for another reason: Command R v01's
  // `'NoneType' object is not iterable`).
  if (!uu.output && u.output) {
    p.alternation.required = true;
    p.alternation.error = uu.error;
  }
}

// Whether the rendered `out` shows a reasoning field's text between the assistant header (after
// the question) and the answer, and with which markers around it.
bool read_reasoning_markers(const std::string& out, const Profile& p, Reasoning& result) {
  Sentinel field_sentinel = Sentinel::reasoning_content;
  for (Sentinel field : {Sentinel::reasoning_content, Sentinel::thinking}) {
    if (has(out, field)) {
      result.field = std::string(name_of(field));
      field_sentinel = field;
      break;
    }
  }
  if (!result.field || !has(out, Sentinel::answer)) return result.field.has_value();
  std::size_t q_end = has(out, Sentinel::question) ? end_of(out, Sentinel::question) : 0;
  std::size_t r_pos = out.find(S(field_sentinel), q_end);
  if (r_pos == std::string::npos) return true;
  std::size_t a_pos = out.find(S(Sentinel::answer), r_pos);
  if (a_pos == std::string::npos) return true;
  // The reasoning opens after the assistant header: the history prefix, else the prompt's.
  std::size_t open_from = q_end;
  std::string header;
  for (const auto& candidate :
       {stripped(p.frame.assistant_prefix), stripped(p.frame.generation_prompt)}) {
    if (candidate.empty()) continue;
    std::size_t hit = std::string_view(out).substr(q_end, r_pos - q_end).rfind(candidate);
    if (hit != std::string::npos) {
      open_from = q_end + hit + candidate.size();
      header = candidate;
      break;
    }
  }
  if (header.empty()) {
    // No whole header before the reasoning (Poolside Laguna: the prompt's header closes an empty
    // block, `<assistant>\n</think>`, the history's opens one, `<assistant>\n<think>`): the turn
    // starts after the user turn's suffix, and the part of the header the two share, up to a
    // marker's or a line's end, is the header.
    const std::string user_end = stripped(p.frame.user_suffix);
    std::string_view rest = text::lstrip(std::string_view(out).substr(q_end, r_pos - q_end));
    if (!user_end.empty() && rest.starts_with(user_end)) {
      rest = text::lstrip(rest.substr(user_end.size()));
      const std::string prefix = stripped(p.frame.assistant_prefix);
      std::size_t common = 0;
      while (common < prefix.size() && common < rest.size() && prefix[common] == rest[common])
        ++common;
      // Back to a marker's or a line's end, leaving the opener at least one marker (Qwen3.5's
      // thinking-off header `<|im_start|>assistant\n<think>\n\n</think>` shares `<think>` too).
      auto boundary = [&](std::size_t n) {
        return (prefix[n - 1] == '>' || prefix[n - 1] == '\n') &&
               !text::strip(rest.substr(n)).empty();
      };
      while (common > 0 && !boundary(common)) --common;
      open_from = r_pos - rest.size() + common;
      header = std::string(text::strip(std::string_view(prefix).substr(0, common)));
    }
  }
  std::string_view opener = std::string_view(out).substr(open_from, r_pos - open_from);
  std::size_t close_from = r_pos + S(field_sentinel).size();
  std::string_view closer = std::string_view(out).substr(close_from, a_pos - close_from);
  // A tool loop's turn may write its calls before its text (Gemma 4): the reasoning closes
  // before the call.
  if (p.tool_calls.example && !p.tool_calls.example->empty())
    closer = closer.substr(0, closer.find(*p.tool_calls.example));
  result.open = std::string(text::strip(opener));
  result.close = std::string(text::strip(closer));
  // A new assistant header between reasoning and answer: reasoning is a message of its own.
  result.style = !header.empty() && text::contains(closer, header) ? "channel" : "tags";
  return true;
}

// Markers around the reasoning of an assistant turn. Measured, in turn, on the final answer (its
// reasoning field), on a tool loop's turn (Kimi K2 Thinking renders reasoning only for the calls
// after the last answer) and, where no field renders, on reasoning written in a past turn's
// content between known markers, which the template takes out (DeepSeek R1, QwQ and EXAONE 4
// keep only what follows `</think>`): the markers the model writes and a parser must read.
void measure_reasoning_markers(Renderer& r, Profile& p, const std::optional<Chat>& tool_chat) {
  Chat chat;
  chat.messages = json::array({message("user", S(Sentinel::question)),
                               json{{"role", "assistant"},
                                    {"content", S(Sentinel::answer)},
                                    {"reasoning_content", S(Sentinel::reasoning_content)},
                                    {"thinking", S(Sentinel::thinking)}}});
  Rendered rendered = r.render_plain(chat);
  if (!rendered.output) return;
  if (read_reasoning_markers(*rendered.output, p, p.reasoning)) return;
  if (tool_chat) {
    Rendered loop = r.render(tool_loop(*tool_chat));
    if (loop.output && read_reasoning_markers(*loop.output, p, p.reasoning)) return;
  }
  for (std::size_t i = 0; i < std::size(kReasoningOpeners); ++i) {
    Chat past = plain({{"user", Sentinel::question},
                       {"assistant", Sentinel::answer},
                       {"user", Sentinel::question2}},
                      true);
    past.messages[1]["content"] =
        std::string(kReasoningOpeners[i]) + std::string(S(Sentinel::reasoning_content)) +
        std::string(kReasoningClosers[i]) + std::string(S(Sentinel::answer));
    // As given, not through the variants, which take a text the template removes for a failure.
    Rendered taken = r.render(past);
    if (taken.output && has(*taken.output, Sentinel::answer) &&
        !has(*taken.output, Sentinel::reasoning_content)) {
      p.reasoning.style = "content";
      p.reasoning.open = std::string(kReasoningOpeners[i]);
      p.reasoning.close = std::string(kReasoningClosers[i]);
      return;
    }
  }
}

// Whether continue_final_message leaves a final assistant message open, what precedes its text
// (the user turn's end and the assistant header, as rendered), and whether that is exactly
// where a generated reply starts (the measured generation prompt).
Prefill measure_prefill(Renderer& r, const Frame& frame) {
  const std::string text = std::string(S(Sentinel::prefill)) + " The weather in Paris is";
  Chat chat = plain({{"user", Sentinel::question}, {"assistant", Sentinel::prefill}});
  chat.messages[1]["content"] = text;
  chat.continue_final_message = true;
  Rendered rendered = r.render_plain(chat);
  Prefill prefill;
  if (!rendered.output) {
    prefill.error = rendered.error;
    return prefill;
  }
  const std::string& out = *rendered.output;
  const std::size_t q = out.find(S(Sentinel::question));
  if (!out.ends_with(text) || q == std::string::npos) return prefill;
  const std::size_t at = q + S(Sentinel::question).size();
  prefill.supported = true;
  const std::size_t end = out.size() - text.size();
  prefill.prefix = at <= end ? out.substr(at, end - at) : std::string();
  const std::string& gp = frame.generation_prompt.value_or("");
  prefill.matches_generation_prompt = !gp.empty() && prefill.prefix->ends_with(gp);
  return prefill;
}

// The caller's one system message becomes a second system block after the one the template
// writes for the tool definitions (Hermes 3 style): the header right before the system text
// (after the previous end-of-turn marker) appears twice before the user's question.
std::optional<TemplateBug> duplicate_system_block(Renderer& r, const Profile& p) {
  const std::string end(text::strip(p.frame.user_suffix.value_or("")));
  if (p.tools.definitions_location != "system" || end.empty()) return std::nullopt;
  Chat chat = plain({{"system", Sentinel::system}, {"user", Sentinel::question}}, true);
  chat.messages[0]["content"] = std::string(S(Sentinel::system)) + " You are a helpful assistant.";
  chat.messages[1]["content"] =
      std::string(S(Sentinel::question)) + " What is the weather in Paris?";
  chat.tools = json::array({tool_definition("nested")});
  Rendered rendered = r.render(chat);
  if (!rendered.output) return std::nullopt;
  const std::string& out = *rendered.output;
  const std::size_t at = out.find(S(Sentinel::system)), question = out.find(S(Sentinel::question));
  if (at == std::string::npos || question == std::string::npos) return std::nullopt;
  const std::size_t cut = std::string_view(out).substr(0, at).rfind(end);
  if (cut == std::string::npos) return std::nullopt;
  const std::string header(
      text::strip(std::string_view(out).substr(cut + end.size(), at - cut - end.size())));
  const std::string_view head = std::string_view(out).substr(0, question);
  std::size_t count = 0;
  for (std::size_t pos = head.find(header); !header.empty() && pos != std::string_view::npos;
       pos = head.find(header, pos + header.size()))
    ++count;
  if (count < 2) return std::nullopt;
  return TemplateBug{"duplicate_system_block", std::string(head), {}, header, {}, {}, {}, {}};
}

// Tool results go in user turns, wrapped in markers; a user message that the caller wrapped in
// the same markers changes how the rest of the conversation renders (Qwen3 takes it for a tool
// result when it looks for the last user query, and keeps the reasoning before it). Measured:
// a follow-up question plain and wrapped as the template wraps results; the two renders must
// differ only in the question's text.
std::optional<TemplateBug> user_message_read_as_tool_result(Renderer& r, const std::string& out,
                                                            const Profile& p) {
  const std::string end(text::strip(p.frame.user_suffix.value_or("")));
  const std::string& header = p.tool_results.header ? *p.tool_results.header : std::string();
  if (!p.renders || p.tool_results.role != "user" || header.empty() || end.empty())
    return std::nullopt;
  const std::string result_text = std::string(S(Sentinel::result)) + " 22C and sunny";
  const std::size_t at = out.find(result_text);
  if (at == std::string::npos) return std::nullopt;
  const std::size_t opened = std::string_view(out).substr(0, at).rfind(header);
  if (opened == std::string::npos) return std::nullopt;
  const std::size_t closed = out.find(end, at + result_text.size());
  if (closed == std::string::npos) return std::nullopt;
  const std::string wrap_open = out.substr(opened + header.size(), at - opened - header.size());
  const std::size_t after = at + result_text.size();
  const std::string wrap_close = out.substr(after, closed - after);
  if (text::strip(wrap_open).empty() && text::strip(wrap_close).empty()) return std::nullopt;
  const std::string follow = std::string(S(Sentinel::question2)) + " And tomorrow?";
  const std::string wrapped = wrap_open + follow + wrap_close;
  auto chat = [&](const std::string& content) {
    Chat c;
    c.messages = json::array(
        {message("user", std::string(S(Sentinel::question)) + " What is the weather in Paris?"),
         json{{"role", "assistant"},
              {"content", std::string(S(Sentinel::answer)) + " It is 22C and sunny."},
              {"reasoning_content",
               std::string(S(Sentinel::reasoning_content)) + " The user wants the weather."}},
         message("user", content)});
    c.add_generation_prompt = true;
    return c;
  };
  Rendered as_text = r.render(chat(follow));
  Rendered as_result = r.render(chat(wrapped));
  if (!as_text.output || !as_result.output) return std::nullopt;
  if (replace_all(*as_text.output, follow, "") == replace_all(*as_result.output, wrapped, ""))
    return std::nullopt;
  return TemplateBug{"user_message_read_as_tool_result",
                     {},
                     {},
                     {},
                     {},
                     wrapped,
                     *as_text.output,
                     *as_result.output};
}

struct Search {
  const Shape* shape = nullptr;
  std::optional<Combo> combo;
  std::string output;
  std::map<Combo, Rendered> results;
  std::string full_error;  // the first error of the full conversation
};

// The combination that keeps the most sentinels, on the first conversation shape of the
// ladder that renders at all.
Search baseline_search(Renderer& r) {
  Search search;
  std::vector<Combo> combos = all_combos();
  std::string first_error;
  for (const Shape& shape : kLadder) {
    std::optional<std::pair<std::size_t, Combo>> best;
    search.results.clear();
    for (const Combo& combo : combos) {
      Rendered out = r.render(conversation(combo, shape));
      if (!out.output) {
        if (first_error.empty()) first_error = out.error;
      } else {
        std::size_t score = 0;
        for (Sentinel k : kScored) score += has(*out.output, k);
        if (!best || score > best->first) {
          best = {score, combo};
          search.output = *out.output;
        }
      }
      search.results.emplace(combo, std::move(out));
    }
    if (best) {
      search.shape = &shape;
      search.combo = best->second;
      return search;
    }
    if (search.full_error.empty()) search.full_error = first_error;
  }
  return search;
}

// Where a sentinel at `pos` lands: the role of the turn header before it, or own_section
// when a turn ends between that header and the sentinel.
std::optional<std::pair<std::string, text::HeaderPattern::Match>> classify_location(
    const std::string& output, std::size_t pos, const text::HeaderPattern* pattern,
    const Frame& frame, std::size_t lo = 0) {
  if (pattern == nullptr) return std::nullopt;
  auto header = pattern->last(output, lo, pos);
  if (!header) return std::nullopt;
  std::string_view between = std::string_view(output).substr(header->end, pos - header->end);
  for (const auto& end : {frame.user_suffix, frame.assistant_suffix}) {
    std::string e = stripped(end);
    if (!e.empty() && text::contains(between, e))
      return std::pair{std::string("own_section"), *header};
  }
  return std::pair{replace_all(header->role, S(Sentinel::call_name), "{name}"), *header};
}

// Where the sentinel `key` (the tool description, a document's text) lands, and the block its
// input adds to the prompt (the difference from the render without it).
std::pair<std::string, std::optional<std::string>> definitions_location(
    const std::string& output, const std::optional<std::string>& no_tools,
    const text::HeaderPattern* pattern, const Frame& frame,
    Sentinel key = Sentinel::tool_description) {
  std::size_t pos = output.find(S(key));
  if (pos == std::string::npos) return {"not_rendered", std::nullopt};
  std::optional<std::string> block;
  text::DiffRegion d;
  if (no_tools) {
    d = text::diff_region(output, *no_tools);
    block = output.substr(d.start, d.end_a - d.start);
  }
  if (auto located = classify_location(output, pos, pattern, frame)) {
    const std::string& role = located->first;
    if (role == "own_section") return {"own_section", block};
    std::string l = lower(role);
    if (l == "system" || l == "developer" || l == "user") return {l, block};
    return {"own_turn", block};
  }
  // No role headers to go by: a block that starts a turn of its own is a section;
  // otherwise the tools sit in the turn of the next message sentinel.
  if (block) {
    std::string_view after = text::lstrip(std::string_view(output).substr(d.end_a));
    std::string_view before = std::string_view(output).substr(0, d.start);
    bool section = text::strip(before).empty();
    for (const auto& prefix : {frame.user_prefix, frame.assistant_prefix}) {
      std::string s = stripped(prefix);
      if (!s.empty() && after.starts_with(s)) section = true;
    }
    for (const auto& suffix : {frame.assistant_suffix, frame.user_suffix}) {
      std::string s = stripped(suffix);
      if (!s.empty() && text::rstrip(before).ends_with(s)) section = true;
    }
    if (section) return {"own_section", block};
  }
  std::optional<std::pair<std::size_t, Sentinel>> following;  // ties broken by name, as (at, name)
  for (Sentinel k : {Sentinel::system, Sentinel::question, Sentinel::question2}) {
    std::size_t at = output.find(S(k), pos);
    if (at == std::string::npos) continue;
    if (!following || at < following->first ||
        (at == following->first && name_of(k) < name_of(following->second)))
      following = std::pair{at, k};
  }
  if (following) return {following->second == Sentinel::system ? "system" : "user", block};
  return {"own_section", block};
}

void measure_result_role(const std::string& output, const text::HeaderPattern* pattern,
                         const Frame& frame, ToolResults& results) {
  std::size_t pos = output.find(S(Sentinel::result));
  if (pos == std::string::npos) return;
  std::size_t lo = 0;
  for (Sentinel key : {Sentinel::call_argument, Sentinel::question}) {
    std::size_t at = output.find(S(key));
    if (at != std::string::npos && at < pos) {
      lo = at + S(key).size();
      break;
    }
  }
  if (auto located = classify_location(output, pos, pattern, frame, lo);
      located && located->first != "own_section") {
    results.role = located->first;
    results.header = replace_all(
        output.substr(located->second.begin, located->second.end - located->second.begin),
        S(Sentinel::call_name), "{name}");
    return;
  }
  std::string_view between = std::string_view(output).substr(lo, pos - lo);
  // Without a usable header pattern, the frame's own prefixes tell user from assistant.
  std::optional<std::pair<std::size_t, std::pair<std::string, std::string>>> best;
  for (const auto& [name, prefix] :
       {std::pair{"user", frame.user_prefix}, std::pair{"assistant", frame.assistant_prefix}}) {
    std::string s = stripped(prefix);
    if (s.empty() || !text::contains(between, s)) continue;
    std::size_t at = between.rfind(s);
    if (!best || at > best->first) best = {at, {name, std::string(s)}};
  }
  if (best) {
    results.role = best->second.first;
    results.header = best->second.second;
    return;
  }
  results.role = "section";
}

// The call as rendered: the difference an assistant tool call makes to a conversation that
// ends with it.
std::optional<std::string> call_example(Renderer& r, const Combo& combo, const Shape& shape) {
  Chat base = conversation(combo, shape);
  json head = json::array();
  std::size_t want = shape.system ? 2 : 1;
  for (const auto& m : base.messages)
    if (head.size() < want && (m["role"] == "system" || m["role"] == "user")) head.push_back(m);
  json call;
  for (const auto& m : base.messages)
    if (m.contains("tool_calls")) {
      call = m;
      break;
    }
  call.erase("reasoning_content");
  call.erase("thinking");
  json empty = json{{"role", "assistant"}, {"content", call["content"]}};
  Chat with_call = base, without = base;
  with_call.messages = head;
  with_call.messages.push_back(call);
  with_call.add_generation_prompt = false;
  without.messages = head;
  without.messages.push_back(empty);
  without.add_generation_prompt = false;
  Rendered a = r.render(with_call), b = r.render(without);
  if (!a.output || !b.output || !has(*a.output, Sentinel::call_argument)) return std::nullopt;
  auto d = text::diff_region(*a.output, *b.output);
  return a.output->substr(d.start, d.end_a - d.start);
}

// ---------------------------------------------------------------------------------------
// The capability axes of issue 21 (each measured by rendering)
// ---------------------------------------------------------------------------------------

using Spans = std::vector<std::pair<std::size_t, std::size_t>>;

// Whether every byte of [lo, hi) lies in some {% generation %} span.
bool covered(const Spans& spans, std::size_t lo, std::size_t hi) {
  std::size_t pos = lo;
  while (pos < hi) {
    std::optional<std::size_t> next;
    for (const auto& [a, b] : spans)
      if (a <= pos && pos < b && (!next || b > *next)) next = b;
    if (!next) return false;
    pos = *next;
  }
  return true;
}

// nullopt when `text` is not rendered (at or after `start`), else whether it is covered.
std::optional<bool> covered_text(const std::string& out, const Spans& spans, std::string_view text,
                                 std::size_t start = 0) {
  std::size_t pos = out.find(text, start);
  if (pos == std::string::npos) return std::nullopt;
  return covered(spans, pos, pos + text.size());
}

// Assistant masks: whether {% generation %} blocks exist and cover exactly the assistant content
// in training mode, and which parts they miss (content, reasoning, tool calls, the end-of-turn
// marker). `tool_chat`: the baseline tool conversation, when it renders tool messages.
AssistantMasks measure_masks(Renderer& r, const Frame& frame,
                             const std::optional<Chat>& tool_chat) {
  Chat chat = plain({{"user", Sentinel::question},
                     {"assistant", Sentinel::answer},
                     {"user", Sentinel::question2},
                     {"assistant", Sentinel::answer2}});
  chat.messages[3]["reasoning_content"] = S(Sentinel::reasoning_content);
  chat.messages[3]["thinking"] = S(Sentinel::thinking);
  AssistantMasks masks;
  Rendered rendered = r.render_plain(chat);
  const Spans& spans = rendered.generation;
  if (!rendered.output || spans.empty()) return masks;
  const std::string& out = *rendered.output;
  masks.generation_blocks = true;
  for (const auto& [a, b] : spans) masks.masked.push_back(out.substr(a, b - a));
  bool content = true;
  for (Sentinel k : {Sentinel::answer, Sentinel::answer2})
    content = content && covered_text(out, spans, S(k)) == std::optional<bool>(true);
  masks.content_covered = content;
  std::vector<std::optional<bool>> others;
  for (Sentinel k : {Sentinel::question, Sentinel::question2})
    others.push_back(covered_text(out, spans, S(k)));
  if (!content) masks.missed.emplace_back("content");
  for (Sentinel k : {Sentinel::reasoning_content, Sentinel::thinking}) {
    if (covered_text(out, spans, S(k)) == std::optional<bool>(false)) {
      masks.missed.emplace_back("reasoning");
      break;
    }
  }
  if (tool_chat) {
    Chat training = *tool_chat;
    training.add_generation_prompt = false;
    Rendered t = r.render(training);
    if (t.output) {
      if (covered_text(*t.output, t.generation, S(Sentinel::call_argument)) ==
          std::optional<bool>(false))
        masks.missed.emplace_back("tool_calls");
      for (Sentinel k : {Sentinel::system, Sentinel::result})
        others.push_back(covered_text(*t.output, t.generation, S(k)));
    }
  }
  const std::string end = stripped(frame.assistant_suffix);
  const std::size_t a2 = out.find(S(Sentinel::answer2));
  if (!end.empty() && a2 != std::string::npos &&
      covered_text(out, spans, end, a2 + S(Sentinel::answer2).size()) == std::optional<bool>(false))
    masks.missed.emplace_back("end_of_turn");
  masks.only_assistant = std::none_of(others.begin(), others.end(),
                                      [](const auto& o) { return o == std::optional<bool>(true); });
  // Covered beyond the content: the assistant header before the final answer.
  const std::string header = stripped(frame.assistant_prefix);
  const std::size_t q2 = out.find(S(Sentinel::question2));
  if (!header.empty() && q2 != std::string::npos && a2 != std::string::npos && q2 < a2) {
    std::size_t at = std::string_view(out).substr(0, a2).rfind(header);
    if (at != std::string::npos && at >= q2 && at + header.size() <= a2 &&
        covered(spans, at, at + header.size()))
      masks.includes.emplace_back("header");
  }
  return masks;
}

// The prompt's reasoning after the follow-up question: "open" (the prompt opens a reasoning
// block), "closed" (it writes an opened and closed, i.e. skipped, block) or "none".
std::string reasoning_state(const std::string& out, const Reasoning& reasoning) {
  std::size_t at = out.rfind(S(Sentinel::question2));
  std::string_view tail = out;
  if (at != std::string::npos) tail = tail.substr(at + S(Sentinel::question2).size());
  const bool tags = reasoning.style == "tags";
  std::vector<std::string_view> opens, closes;
  if (tags && reasoning.open && !reasoning.open->empty())
    opens.push_back(*reasoning.open);
  else
    opens.assign(std::begin(kReasoningOpeners), std::end(kReasoningOpeners));
  if (tags && reasoning.close && !reasoning.close->empty())
    closes.push_back(*reasoning.close);
  else
    closes.assign(std::begin(kReasoningClosers), std::end(kReasoningClosers));
  std::optional<std::size_t> end;
  for (std::string_view o : opens) {
    std::size_t hit = tail.rfind(o);
    if (hit != std::string_view::npos && (!end || hit + o.size() > *end)) end = hit + o.size();
  }
  if (!end) return "none";
  for (std::string_view c : closes)
    if (text::contains(tail.substr(*end), c)) return "closed";
  return "open";
}

// Where a render first differs from the base render: "preamble" (before the first question),
// "history" (up to the follow-up question) or "prompt" (after it).
std::string change_site(const std::string& base, const std::string& out) {
  const std::size_t start = text::diff_region(out, base).start;
  const std::size_t q = base.find(S(Sentinel::question)), q2 = base.rfind(S(Sentinel::question2));
  if (q == std::string::npos || start < q) return "preamble";
  return q2 != std::string::npos && start >= q2 + S(Sentinel::question2).size() ? "prompt"
                                                                                : "history";
}

// Which template variables change the rendering, set one at a time (true, false, a string) from
// the template's own variable names, and what each does to reasoning: opens or closes it in the
// prompt, keeps or drops past reasoning. Variables that change the rendering otherwise are listed
// with where they change it.
ThinkingControls measure_thinking_controls(Renderer& r, const std::vector<std::string>& names,
                                           const Reasoning& reasoning) {
  Chat chat = plain({{"user", Sentinel::question},
                     {"assistant", Sentinel::answer},
                     {"user", Sentinel::question2}},
                    true);
  chat.messages[1]["reasoning_content"] = S(Sentinel::reasoning_content);
  chat.messages[1]["thinking"] = S(Sentinel::thinking);
  ThinkingControls result;
  for (const auto& name : names)
    if (std::find(std::begin(kNotFlipped), std::end(kNotFlipped), name) == std::end(kNotFlipped))
      result.candidates.push_back(name);
  auto [base, variant] = r.render_variant(chat);
  if (!base.output) return result;
  auto past = [](const std::string& out) {
    return has(out, Sentinel::reasoning_content) || has(out, Sentinel::thinking);
  };
  const std::string base_prompt = reasoning_state(*base.output, reasoning);
  const bool base_past = past(*base.output);
  result.prompt = base_prompt;
  result.past_reasoning = base_past;
  for (const auto& name : result.candidates) {
    ThinkingControl control;
    control.name = name;
    std::string where;  // the first change's site; "raises" only when nothing else changed
    bool effect = false, raised = false;
    for (const auto& [key, value] : kFlipValues) {
      ControlValue& v = key == "true"    ? control.true_value
                        : key == "false" ? control.false_value
                                         : control.string_value;
      Chat flipped = variant;
      flipped.kwargs[name] = json::parse(value);
      Rendered out = r.render(flipped);
      if (!out.output) {
        v.error = out.error;
        raised = true;
        continue;
      }
      v.changed = *out.output != *base.output;
      v.prompt = reasoning_state(*out.output, reasoning);
      v.past_reasoning = past(*out.output);
      if (v.changed && where.empty()) where = change_site(*base.output, *out.output);
      effect = effect || v.prompt != base_prompt || v.past_reasoning != base_past;
    }
    if (effect) {
      result.controls.push_back(std::move(control));
    } else if (!where.empty() || raised) {
      result.other_variables.emplace_back(name, where.empty() ? "raises" : where);
    }
  }
  return result;
}

// Documents (RAG): whether `documents` are rendered (text, title) and where.
Documents measure_documents(Renderer& r, const text::HeaderPattern* pattern, const Frame& frame) {
  auto [base, variant] = r.render_variant(plain({{"user", Sentinel::question}}, true));
  Chat with = variant;
  with.documents = json::array(
      {json{{"title", S(Sentinel::document_title)}, {"text", S(Sentinel::document_text)}}});
  Rendered out = r.render(with);
  Documents result;
  if (!out.output) {
    result.error = out.error;
    return result;
  }
  result.rendered = has(*out.output, Sentinel::document_text);
  result.title_rendered = has(*out.output, Sentinel::document_title);
  if (result.rendered) {
    auto [location, block] =
        definitions_location(*out.output, base.output, pattern, frame, Sentinel::document_text);
    result.location = location;
    result.block = block;
  }
  return result;
}

// Which content part types render (as what placeholder, in place of the part or moved), which
// are dropped silently and which raise: a user message of two text parts with the part between
// them, against the same message without it.
Multimodal measure_multimodal(Renderer& r) {
  const json q = {{"type", "text"}, {"text", S(Sentinel::question)}};
  const json q2 = {{"type", "text"}, {"text", S(Sentinel::question2)}};
  Chat chat;
  chat.messages = json::array({json{{"role", "user"}, {"content", json::array({q, q2})}}});
  chat.add_generation_prompt = true;
  auto [base, variant] = r.render_variant(chat);
  Multimodal result;
  result.text_parts = base.output && has(*base.output, Sentinel::question) &&
                      has(*base.output, Sentinel::question2);
  if (!base.output) result.error = base.error;
  for (const auto& type : kPartTypes) {
    Chat with = variant;
    with.messages = json::array(
        {json{{"role", "user"}, {"content", json::array({q, json::parse(type.json), q2})}}});
    Rendered out = r.render(with);
    ContentPart part;
    part.type = type.type;
    if (!out.output) {
      part.status = "error";
      part.error = out.error;
    } else if (!base.output) {
      part.status = "rendered";
    } else if (*out.output == *base.output) {
      part.status = "dropped";
    } else {
      auto d = text::diff_region(*out.output, *base.output);
      std::string placeholder = out.output->substr(d.start, d.end_a - d.start);
      std::size_t qa = out.output->find(S(Sentinel::question));
      std::size_t qb = out.output->find(S(Sentinel::question2));
      // A part written out as data (a Python repr or JSON of the part), not a placeholder.
      const bool printed =
          text::contains(placeholder, "'type'") || text::contains(placeholder, "\"type\"");
      part.status = printed ? "printed" : "placeholder";
      part.in_place = qa != std::string::npos && qb != std::string::npos &&
                      qa + S(Sentinel::question).size() <= d.start && d.end_a <= qb;
      part.placeholder = std::move(placeholder);
    }
    result.parts.push_back(std::move(part));
  }
  return result;
}

// Whether the prompt depends on the clock (strftime_now), rendered at two clocks, with the
// differing text at each; and whether a `date_string` variable is written.
DateDependence measure_date(Renderer& r) {
  Chat chat = plain({{"user", Sentinel::question}}, true);
  chat.tools = json::array({tool_definition("nested")});
  Rendered a = r.render(chat);
  if (!a.output) {
    Chat without = chat;
    without.tools = nullptr;
    std::tie(a, chat) = r.render_variant(without);
  }
  DateDependence result;
  if (!a.output) return result;
  Chat later = chat;
  later.now = kOtherNow;
  Rendered b = r.render(later);
  if (b.output && *b.output != *a.output) {
    const std::string &x = *a.output, &y = *b.output;
    auto d = text::diff_region(x, y);
    std::size_t start = d.start, end_a = d.end_a, end_b = d.end_b;
    // Widened to whole words, so that "January" and "July" are not cut to "anuary"/"uly".
    while (start > 0 && text::is_word_char(x[start - 1])) --start;
    while (end_a < x.size() && text::is_word_char(x[end_a])) ++end_a;
    while (end_b < y.size() && text::is_word_char(y[end_b])) ++end_b;
    result.depends_on_clock = true;
    result.rendered = {x.substr(start, end_a - start), y.substr(start, end_b - start)};
  }
  Chat dated = chat;
  dated.kwargs["date_string"] = S(Sentinel::date);
  Rendered c = r.render(dated);
  result.date_string = c.output && has(*c.output, Sentinel::date);
  return result;
}

// Whether the template writes bos_token itself (then the tokenizer must not add it again): a
// prompt rendered with bos_token set to a sentinel.
BosToken measure_bos(Renderer& r) {
  Chat chat = plain({{"user", Sentinel::question}}, true);
  chat.kwargs["bos_token"] = S(Sentinel::bos);
  Rendered out = r.render_plain(chat);
  BosToken result;
  if (!out.output) return result;
  const std::string_view bos = S(Sentinel::bos);
  for (std::size_t at = out.output->find(bos); at != std::string::npos;
       at = out.output->find(bos, at + bos.size()))
    ++result.count;
  result.writes_bos_token = result.count > 0;
  result.at_start = out.output->starts_with(bos);
  return result;
}

// Tool results written with no role at all: the template has turn markers, and the result
// follows the end of the previous turn with nothing but whitespace or punctuation between
// (no header, no marker).
std::optional<TemplateBug> tool_result_without_role(const std::string& out, const Profile& p,
                                                    bool tool_aware) {
  if (!p.renders || !tool_aware || p.tool_results.role != "section") return std::nullopt;
  const std::size_t pos = out.find(S(Sentinel::result));
  std::vector<std::string> ends;
  for (const auto& e : {p.frame.assistant_suffix, p.frame.user_suffix})
    if (!stripped(e).empty()) ends.push_back(stripped(e));
  if (pos == std::string::npos || ends.empty() || stripped(p.frame.assistant_prefix).empty())
    return std::nullopt;
  std::optional<std::pair<std::size_t, std::size_t>> found;  // (at, length), the latest end
  for (const auto& e : ends) {
    std::size_t at = std::string_view(out).substr(0, pos).rfind(e);
    if (at == std::string::npos) continue;
    if (!found || at + e.size() > found->first + found->second) found = {at, e.size()};
  }
  const std::size_t call = out.find(S(Sentinel::call_argument));
  if (!found || call == std::string::npos) return std::nullopt;
  const std::size_t lo = found->first + found->second;
  if (lo < call) return std::nullopt;
  std::string_view lead = std::string_view(out).substr(lo, pos - lo);
  if (!text::markers(lead).empty()) return std::nullopt;
  for (char c : lead)
    if (text::is_word_char(c) && c != '_') return std::nullopt;
  const std::string result_text = std::string(S(Sentinel::result)) + " 22C and sunny";
  TemplateBug bug;
  bug.kind = "tool_result_without_role";
  bug.rendered = out.substr(found->first, pos + result_text.size() - found->first);
  return bug;
}

// ---------------------------------------------------------------------------------------
// The capability axes (issue 21): ONE table, one row per axis, each measured by rendering after
// the frame, the baseline and the reasoning markers (which it may read from the profile). The
// same rows are CAPABILITY_AXES in scripts/probe-oracle.py; the profile key is the row's name.
// ---------------------------------------------------------------------------------------

// What the earlier steps measured that an axis needs besides the profile.
struct Measured {
  const text::HeaderPattern* pattern;     // turn headers, from the user prefix
  const std::vector<std::string>& names;  // the template's variable names
  const std::optional<Chat>& tool_chat;   // the baseline tool conversation, if it has tool turns
};
struct CapabilityAxis {
  std::string_view key;  // the profile key
  void (*measure)(Renderer& r, const Measured& m, Profile& p);
};
constexpr CapabilityAxis kCapabilityAxes[] = {
    {"assistant_masks",
     [](Renderer& r, const Measured& m, Profile& p) {
       p.assistant_masks = measure_masks(r, p.frame, m.tool_chat);
     }},
    {"thinking_controls",
     [](Renderer& r, const Measured& m, Profile& p) {
       p.thinking_controls = measure_thinking_controls(r, m.names, p.reasoning);
     }},
    {"documents", [](Renderer& r, const Measured& m,
                     Profile& p) { p.documents = measure_documents(r, m.pattern, p.frame); }},
    {"multimodal",
     [](Renderer& r, const Measured&, Profile& p) { p.multimodal = measure_multimodal(r); }},
    {"date", [](Renderer& r, const Measured&, Profile& p) { p.date = measure_date(r); }},
    {"bos_token", [](Renderer& r, const Measured&, Profile& p) { p.bos_token = measure_bos(r); }},
};

}  // namespace

std::string_view status_name(Status status) noexcept {
  switch (status) {
    case Status::ok:
      return "ok";
    case Status::lossy:
      return "lossy";
    case Status::error:
      break;
  }
  return "error";
}

std::optional<std::pair<std::string_view, std::string_view>> convention_axis(
    std::string_view key) noexcept {
  for (const Axis& axis : kAxes)
    for (const AxisValue& v : axis.values)
      if (v.key == key) return std::pair{axis.name, v.value};
  return std::nullopt;
}

const Convention* Profile::convention(std::string_view key) const noexcept {
  for (const auto& c : conventions)
    if (c.key == key) return &c;
  return nullptr;
}

bool Profile::accepts(std::string_view key) const noexcept {
  const Convention* c = convention(key);
  return c != nullptr && c->status == Status::ok;
}

bool Profile::has_silent_failure(std::string_view name) const noexcept {
  return std::find(silent_failures.begin(), silent_failures.end(), name) != silent_failures.end();
}

SpanRenderFunction template_span_renderer(const jinja::Template& tmpl, const Value& special_tokens,
                                          const Options& options) {
  chat::RenderOptions render_options;
  render_options.limits = options.limits;
  render_options.now = options.now;
  render_options.validate = false;  // the probe measures the template, not the request
  return [&tmpl, special_tokens, render_options](const json& chat_json) -> Result<Rendering> {
    chat::ChatRequest request;
    request.messages = from_json(chat_json["messages"]);
    request.tools = chat_json["tools"].is_null() ? Value::none() : from_json(chat_json["tools"]);
    request.add_generation_prompt = chat_json["add_generation_prompt"].get<bool>();
    request.continue_final_message = chat_json.value("continue_final_message", false);
    if (chat_json.contains("documents")) request.documents = from_json(chat_json["documents"]);
    if (chat_json.contains("kwargs")) request.kwargs = from_json(chat_json["kwargs"]);
    chat::RenderOptions one = render_options;
    if (chat_json.contains("now")) one.now = chat_json["now"].get<std::string>();
    auto result = chat::render(tmpl, request, special_tokens, one);
    if (!result) return result.error();
    Rendering rendering{std::move(result->text), {}};
    for (const auto& span : result->generation)
      rendering.generation.emplace_back(span.begin_byte, span.end_byte);
    return rendering;
  };
}

RenderFunction template_renderer(const jinja::Template& tmpl, const Value& special_tokens,
                                 const Options& options) {
  SpanRenderFunction spans = template_span_renderer(tmpl, special_tokens, options);
  return [spans](const json& chat_json) -> Result<std::string> {
    auto result = spans(chat_json);
    if (!result) return result.error();
    return std::move(result->text);
  };
}

Profile probe_template(const jinja::Template& tmpl, const Value& special_tokens,
                       const Options& options) {
  return probe_with(template_span_renderer(tmpl, special_tokens, options), tmpl.names());
}

Profile probe_with(const RenderFunction& render, const std::vector<std::string>& names) {
  return probe_with(SpanRenderFunction([&render](const json& chat_json) -> Result<Rendering> {
                      auto result = render(chat_json);
                      if (!result) return result.error();
                      return Rendering{std::move(*result), {}};
                    }),
                    names);
}

Profile probe_with(const SpanRenderFunction& render, const std::vector<std::string>& names) {
  Renderer r(render);
  Profile p;
  measure_frame(r, p);
  auto pattern = text::HeaderPattern::from_user_prefix(p.frame.user_prefix.value_or(""));

  Search search = baseline_search(r);
  const Shape* shape = search.shape;
  p.renders = search.combo.has_value();
  std::vector<Sentinel> kept;  // p.baseline.kept, as sentinels
  if (!p.renders) {
    p.baseline.error = search.full_error;
  } else {
    p.baseline.conversation = shape->name;
    for (std::size_t i = 0; i < kAxisCount; ++i)
      p.baseline.conventions.emplace_back(kAxes[i].name, kAxes[i].values[(*search.combo)[i]].value);
    for (Sentinel k : kCompared) {
      if (!shape->system && k == Sentinel::system) continue;
      if (!shape->tool_messages && (k == Sentinel::call_argument || k == Sentinel::result ||
                                    k == Sentinel::reasoning_content || k == Sentinel::thinking))
        continue;
      const bool present = has(search.output, k);
      (present ? p.baseline.kept : p.baseline.lost).emplace_back(name_of(k));
      if (present) kept.push_back(k);
    }
    if (shape != &kLadder[0]) p.baseline.full_conversation_error = search.full_error;
  }

  // One axis at a time, flipped from the baseline.
  for (std::size_t i = 0; i < kAxisCount; ++i) {
    for (std::size_t v = 0; v < kAxes[i].values.size(); ++v) {
      Convention c;
      c.key = kAxes[i].values[v].key;
      c.axis = kAxes[i].name;
      c.value = kAxes[i].values[v].value;
      if (!p.renders) {
        c.error = p.baseline.error;
      } else if (kAxes[i].about_tool_messages && !shape->tool_messages) {
        c.error = search.full_error;
      } else {
        Combo flipped = *search.combo;
        flipped[i] = static_cast<unsigned char>(v);
        const Rendered& f = search.results.at(flipped);
        if (!f.output) {
          c.error = f.error;
        } else {
          for (Sentinel k : kept)
            if (!has(*f.output, k)) c.lost.emplace_back(name_of(k));
          if (c.value == "parts" && text::contains(*f.output, kTextPartLeak))
            c.lost.emplace_back("text_parts_printed_as_repr");
          // Arguments the sentinel survives in, in a form no model emits: a dict printed as
          // Python's repr ({'zxcity': '..'}: vLLM's phi4_mini template), or a JSON string written
          // into JSON as a string, its quotes escaped ("{\"zxcity\": ..}": Llama 3.1's).
          const std::string key(kArgumentKey), value(S(Sentinel::call_argument));
          if (c.axis == "arguments" && c.value == "dict" &&
              text::contains(*f.output, "'" + key + "': '" + value + "'"))
            c.lost.emplace_back("arguments_printed_as_repr");
          if (c.axis == "arguments" && c.value == "string" &&
              text::contains(*f.output, "\\\"" + key + "\\\": \\\"" + value))
            c.lost.emplace_back("arguments_double_encoded");
          c.status = c.lost.empty() ? Status::ok : Status::lossy;
        }
      }
      p.conventions.push_back(std::move(c));
    }
  }

  const std::string& out = search.output;
  if (p.renders) {
    Chat no_tools = conversation(*search.combo, *shape);
    no_tools.tools = nullptr;
    Rendered nt = r.render(no_tools);
    auto [location, block] = definitions_location(out, nt.output, pattern.get(), p.frame);
    p.tools.definitions_rendered = location != "not_rendered";
    p.tools.definitions_location = location;
    if (p.tools.definitions_rendered) p.tools.definitions_block = block;
  }
  // Whether the template needs a description on every parameter (some read it unguarded,
  // and OpenAI tools may omit it): the baseline again without the parameter's description.
  if (p.renders && p.tools.definitions_rendered) {
    Chat bare = conversation(*search.combo, *shape);
    for (auto& tool : bare.tools) {
      json& function = tool.contains("function") ? tool["function"] : tool;
      function["parameters"]["properties"][std::string(kArgumentKey)].erase("description");
    }
    Rendered without = r.render(bare);
    if (!without.output) p.tools.parameter_description_required = without.error;
  }

  if (p.renders && shape->tool_messages) {
    p.tool_calls.rendered = has(out, Sentinel::call_argument);
    p.tool_calls.id_rendered = text::contains(
        out, value_of(*search.combo, "call_id") == "long" ? kLongCallId : kShortCallId);
    if (p.tool_calls.rendered) p.tool_calls.example = call_example(r, *search.combo, *shape);
    p.tool_results.rendered = has(out, Sentinel::result);
    if (p.tool_results.rendered) measure_result_role(out, pattern.get(), p.frame, p.tool_results);
  }

  std::optional<Chat> tool_chat;
  if (p.renders && shape->tool_messages) tool_chat = conversation(*search.combo, *shape);
  measure_reasoning_markers(r, p, tool_chat);
  p.prefill = measure_prefill(r, p.frame);
  p.reasoning.history_kept =
      p.renders && shape->tool_messages &&
      (has(out, Sentinel::reasoning_content) || has(out, Sentinel::thinking));
  const std::string gp = p.frame.generation_prompt.value_or("");
  if (p.reasoning.style == "tags" && p.reasoning.open && !p.reasoning.open->empty()) {
    p.reasoning.prompt_opens = text::contains(gp, *p.reasoning.open);
  } else {
    for (std::string_view o : kReasoningOpeners) p.reasoning.prompt_opens |= text::contains(gp, o);
  }
  // A template that writes no reasoning of any turn but whose generation prompt opens a block
  // with a known opener (OLMo 3 Think: `<|im_start|>assistant\n<think>`): the model closes it
  // with that opener's closer, which a parser must read (style "prompt"; the prompt's last
  // known opener, its pair's closer).
  if (p.reasoning.style == "none" && p.reasoning.prompt_opens) {
    std::size_t last = 0;
    for (std::size_t i = 0; i < std::size(kReasoningOpeners); ++i) {
      const std::size_t at = gp.rfind(kReasoningOpeners[i]);
      if (at == std::string::npos || (p.reasoning.open && at < last)) continue;
      last = at;
      p.reasoning.open = std::string(kReasoningOpeners[i]);
      p.reasoning.close = std::string(kReasoningClosers[i]);
    }
    p.reasoning.style = "prompt";
  }
  const Measured measured{pattern.get(), names, tool_chat};
  for (const auto& axis : kCapabilityAxes) axis.measure(r, measured, p);

  if (p.renders) {
    if (p.tools.definitions_rendered && shape->tool_messages && !p.tool_calls.rendered)
      p.silent_failures.emplace_back("tool_calls_dropped");
    if (!p.tools.definitions_rendered && p.tool_calls.rendered)
      p.silent_failures.emplace_back("tools_ignored");
    if (shape->tool_messages && !p.tool_results.rendered)
      p.silent_failures.emplace_back("tool_results_dropped");
    if (p.reasoning.history_kept) p.silent_failures.emplace_back("reasoning_replayed");
  }
  if (!p.tools.definitions_rendered && !p.tool_calls.rendered)
    p.silent_failures.emplace_back("no_tool_support");

  if (p.tools.definitions_block && !p.tools.definitions_block->empty() && p.tool_calls.example &&
      !p.tool_calls.example->empty()) {
    std::vector<std::string> taught = text::markers(*p.tools.definitions_block);
    for (const auto& m : text::markers(*p.tool_calls.example)) {
      if (std::find(taught.begin(), taught.end(), m) != taught.end()) continue;
      std::string core = text::marker_core(m);
      std::vector<std::string> same_core;
      for (const auto& t : taught)
        if (text::marker_core(t) == core) same_core.push_back(t);
      if (same_core.empty()) continue;
      std::sort(same_core.begin(), same_core.end());
      same_core.erase(std::unique(same_core.begin(), same_core.end()), same_core.end());
      p.template_bugs.push_back(
          {"instruction_history_marker_mismatch", m, same_core, {}, {}, {}, {}, {}});
    }
  }
  bool tool_aware = p.tools.definitions_rendered || p.tool_calls.rendered;
  if (tool_aware && p.tool_results.role && lower(*p.tool_results.role) == "assistant") {
    // The evidence: the result as rendered, from its header on.
    TemplateBug bug;
    bug.kind = "tool_result_under_assistant";
    bug.header = p.tool_results.header.value_or("");
    const std::string result_text = std::string(S(Sentinel::result)) + " 22C and sunny";
    const std::size_t pos = out.find(result_text);
    const std::size_t at = pos == std::string::npos || bug.header.empty()
                               ? std::string::npos
                               : std::string_view(out).substr(0, pos).rfind(bug.header);
    if (at != std::string::npos) bug.rendered = out.substr(at, pos + result_text.size() - at);
    p.template_bugs.push_back(std::move(bug));
  }
  // The template HTML-escapes its own call syntax or tool definitions (e.g. a plain str + a
  // |safe value, which Python's Markup.__radd__ escapes).
  const std::pair<const char*, const std::optional<std::string>*> escaped_checks[] = {
      {"html_escaped_call", &p.tool_calls.example},
      {"html_escaped_tools", &p.tools.definitions_block}};
  for (const auto& [kind, text] : escaped_checks)
    if (*text && html_escaped(**text, kQuotedSentinels))
      p.template_bugs.push_back({kind, **text, {}, {}, html_unescape(**text), {}, {}, {}});
  if (auto dup = duplicate_system_block(r, p)) p.template_bugs.push_back(std::move(*dup));
  if (auto no_role = tool_result_without_role(out, p, tool_aware))
    p.template_bugs.push_back(std::move(*no_role));
  if (auto read = user_message_read_as_tool_result(r, out, p))
    p.template_bugs.push_back(std::move(*read));
  // The same for the messages' own text: the first line of the conversation as rendered
  // where a message sentinel touches an entity.
  if (p.renders) {
    std::string_view rest = out;
    while (true) {
      std::size_t nl = rest.find('\n');
      std::string_view line = rest.substr(0, nl);
      if (html_escaped(line, content_sentinels())) {
        p.template_bugs.push_back(
            {"html_escaped_content", std::string(line), {}, {}, html_unescape(line), {}, {}, {}});
        break;
      }
      if (nl == std::string_view::npos) break;
      rest.remove_prefix(nl + 1);
    }
  }
  p.renders_used = r.count;
  return p;
}

Result<Profile> probe_source(std::string_view source, const Options& options) {
  jinja::CompileOptions compile;
  compile.limits = options.limits;
  auto tmpl = jinja::Template::compile(source, compile);
  if (!tmpl) return tmpl.error();
  Value tokens = Value::dict_unchecked(
      {{Value("bos_token"), Value("<s>")}, {Value("eos_token"), Value("</s>")}});
  return probe_template(*tmpl, tokens, options);
}

Result<Profile> probe_file(const std::filesystem::path& file, const Options& options) {
  auto source = chat::read_text_file(file);
  if (!source) return source.error();
  auto profile = probe_source(*source, options);
  if (profile) profile->name = file.filename().string();
  return profile;
}

Result<Profile> probe_model(const std::filesystem::path& dir, const Options& options) {
  jinja::CompileOptions compile;
  compile.limits = options.limits;
  auto model = chat::Model::load(dir, compile);
  if (!model) return model.error();
  auto tmpl = model->select(std::nullopt, /*tools_given=*/true);
  if (!tmpl) return tmpl.error();
  Profile p = probe_template(**tmpl, model->special_tokens(), options);
  p.name = dir.filename().string();
  if (p.name.empty()) p.name = dir.parent_path().filename().string();
  return p;
}

}  // namespace chatwire::probe
