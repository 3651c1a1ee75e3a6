// The round-trip conversations and the text a model trained on the template would generate.
// scripts/readback-oracle.py builds the same conversations (keep the two in step).
#include <regex>

#include "readback/internal.hpp"

namespace chatwire::readback {

namespace {

constexpr const char* kSystem = "You are a helpful assistant.";
constexpr const char* kQuestion = "What is the weather in São Paulo, and set my alarm?";
constexpr const char* kReasoning = "The user wants the forecast, then the alarm.";
constexpr const char* kAnswer = "It will be sunny for three days.";
// The two calls: a string with quotes and non-ASCII, an integer, a boolean.
constexpr const char* kCallNames[] = {"get_weather", "set_alarm"};
constexpr const char* kArgumentTexts[] = {R"({"city": "São Paulo \"SP\"", "days": 3})",
                                          R"({"enabled": true})"};
// OpenAI-style ids, or 9 alphanumerics where the template wants those (probe axis call_id).
constexpr const char* kLongIds[] = {"call_ABCDEFGHIJKLMNOPQRSTUVWX",
                                    "call_BCDEFGHIJKLMNOPQRSTUVWXY"};
constexpr const char* kShortIds[] = {"A1b2C3d4E", "F5g6H7i8J"};

std::string convention(const probe::Profile& p, std::string_view axis, std::string fallback) {
  for (const auto& [a, v] : p.baseline.conventions)
    if (a == axis) return v;
  return fallback;
}

Json base_messages(const probe::Profile& p) {
  Json messages = Json::array();
  const std::string& shape = p.baseline.conversation;
  if (shape == "full" || shape == "no_tool_messages")
    messages.push_back({{"role", "system"}, {"content", kSystem}});
  messages.push_back({{"role", "user"}, {"content", kQuestion}});
  return messages;
}

// Whether the template renders a turn's reasoning from a message field (the probe's styles "tags"
// and "channel"), not from markers in the content.
bool reasoning_in_field(const probe::Profile& p) {
  return p.reasoning.style == "tags" || p.reasoning.style == "channel";
}

std::string reasoning_field(const probe::Profile& p) {
  return p.reasoning.field.value_or("reasoning_content");
}

// The id of call i under an id rule: "long" (OpenAI style), "short" (9 alphanumerics) or
// "named" ("functions.NAME:i", for templates that write the id where the name goes).
std::string call_id(const std::string& rule, std::size_t i) {
  if (rule == "named") return std::string("functions.") + kCallNames[i] + ":" + std::to_string(i);
  return rule == "short" ? kShortIds[i] : kLongIds[i];
}

Json calls_turn(const probe::Profile& p, std::size_t calls, const std::string& id_rule) {
  bool string_args = convention(p, "arguments", "dict") == "string";
  Json turn = {{"role", "assistant"}};
  turn["content"] = convention(p, "call_content", "empty") == "null" ? Json() : Json("");
  Json list = Json::array();
  for (std::size_t i = 0; i < calls; ++i) {
    Json args = Json::parse(kArgumentTexts[i]);
    list.push_back(
        {{"id", call_id(id_rule, i)},
         {"type", "function"},
         {"function",
          {{"name", kCallNames[i]}, {"arguments", string_args ? Json(kArgumentTexts[i]) : args}}}});
  }
  turn["tool_calls"] = std::move(list);
  if (reasoning_in_field(p)) turn[reasoning_field(p)] = kReasoning;
  return turn;
}

// The answer with its reasoning: in the field the template renders, or, where the template
// takes reasoning from the content (style "content": DeepSeek R1, QwQ) or renders none of its
// own (style "prompt": OLMo 3 Think), written there between its markers as the model writes it.
Json reasoning_turn(const probe::Profile& p) {
  Json turn = {{"role", "assistant"}, {"content", kAnswer}};
  if (reasoning_in_field(p))
    turn[reasoning_field(p)] = kReasoning;
  else
    turn["content"] =
        p.reasoning.open.value_or("") + kReasoning + p.reasoning.close.value_or("") + kAnswer;
  return turn;
}

// A literal marker inside a frame suffix: <...>, <｜...｜>, [UPPER] or [|word|].
const std::regex& marker_regex() {
  static const std::regex re(R"(<[^<> \t\n\r\f\v]{1,64}>|\[[A-Z_]{2,32}\]|\[\|[a-z_]{1,32}\|\])");
  return re;
}

}  // namespace

const std::vector<std::string_view>& conversation_texts() {
  static const std::vector<std::string_view> texts = {kSystem, kQuestion, kReasoning, kAnswer};
  return texts;
}

const Json& round_trip_tools_json() {
  static const Json tools = Json::parse(R"([
    {"type": "function", "function": {"name": "get_weather",
      "description": "Get the weather forecast for a city.",
      "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name"},
        "days": {"type": "integer", "description": "Number of days"}},
        "required": ["city", "days"]}}},
    {"type": "function", "function": {"name": "set_alarm",
      "description": "Turn the alarm on or off.",
      "parameters": {"type": "object", "properties": {
        "enabled": {"type": "boolean", "description": "On or off"}},
        "required": ["enabled"]}}}])");
  return tools;
}

const parse::Tools& round_trip_tools() {
  static const parse::Tools tools = *parse::tools_from_json(round_trip_tools_json());
  return tools;
}

namespace {
// The literal markers of the measured assistant suffix, in order.
std::vector<std::string> suffix_markers(const probe::Profile& p) {
  const std::string suffix(trim(p.frame.assistant_suffix.value_or("")));
  std::vector<std::string> out;
  for (std::sregex_iterator it(suffix.begin(), suffix.end(), marker_regex()), end; it != end; ++it)
    out.push_back(it->str());
  return out;
}
}  // namespace

// Whether a prompt leaves a reasoning block open: only when the prompt itself ends with the
// opener, since a generation prompt that opens and closes an empty block
// (`<think>\n\n</think>\n\n`, thinking off) leaves nothing open. Where the template measured
// no opener of its own, the probe's reading of the prompt's reasoning state with the known
// openers and closers says whether it closes what it opens (DeepSeek V3.2's llama.cpp template
// writes `<｜Assistant｜><think></think>`).
bool leaves_reasoning_open(const probe::Profile& p, std::string_view prompt) {
  const std::string_view open = trim(p.reasoning.open ? *p.reasoning.open : std::string_view());
  return p.reasoning.prompt_opens &&
         (open.empty() ? p.thinking_controls.prompt != "closed" : trim(prompt).ends_with(open));
}

std::string_view after_empty_block(std::string_view s, std::string_view open,
                                   std::string_view close, bool prefilled) {
  if (close.empty()) return s;
  const std::size_t c = s.find(close);
  if (c == std::string_view::npos) return s;
  const std::string_view before = trim(s.substr(0, c));
  if (before.empty() || before == trim(open) || prefilled) return s.substr(c + close.size());
  return s;
}

std::vector<std::string> turn_end_markers(const probe::Profile& p,
                                          const std::vector<std::string>& extra) {
  std::vector<std::string> out;
  auto add = [&](std::string m) {
    if (!m.empty() && std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  };
  const auto markers = suffix_markers(p);
  for (const auto& m : markers) add(m);
  if (markers.empty()) add(std::string(trim(p.frame.assistant_suffix.value_or(""))));
  for (const auto& m : extra) add(m);
  return out;
}

namespace {

// Where the turn in `generated` ends and the marker it ends at ("" = not cut): the first of
// `ends`. A turn of several messages (HyperCLOVA X: `<|im_end|>` ends each message,
// `<|im_end|><|endofturn|>` the turn) ends where the whole measured suffix stands, or where its
// first marker is directly followed by another one (a turn that ends in calls:
// `<|im_end|><|stop|>`), not at the end of its first message.
std::pair<std::size_t, std::string> turn_end(std::string_view generated, const probe::Profile& p,
                                             const std::vector<std::string>& ends) {
  const auto markers = suffix_markers(p);
  if (markers.size() > 1) {
    const std::string suffix(trim(p.frame.assistant_suffix.value_or("")));
    if (std::size_t at = generated.find(suffix); at != std::string_view::npos) return {at, suffix};
    const std::string& message_end = markers.front();
    for (std::size_t at = generated.find(message_end); at != std::string_view::npos;
         at = generated.find(message_end, at + 1)) {
      const std::string after(generated.substr(at + message_end.size(), 64));
      std::smatch next;
      if (std::regex_search(after, next, marker_regex(), std::regex_constants::match_continuous))
        return {at, message_end + next.str()};
    }
    // Else the suffix's last marker that no assistant header writes: the turn's own end (Kimi
    // K3's `<|end_of_msg|>`, where the suffix's first marker also closes elements inside the turn,
    // `<|close|>think<|sep|>`); a suffix that runs into the next turn's header (Command A's
    // `..<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>`) ends before that header.
    // One that ends with the marker it begins with holds a whole message after the turn (Command
    // R's tool_use: `<|END_OF_TURN_TOKEN|>`, a system message, `<|END_OF_TURN_TOKEN|>`): the
    // first of the end markers below decides.
    std::string header = p.frame.assistant_prefix.value_or("");
    header += '\n';
    header += p.frame.generation_prompt.value_or("");
    for (auto m = markers.rbegin(); m != markers.rend(); ++m) {
      if (header.find(*m) != std::string::npos) continue;
      if (*m == markers.front()) break;
      if (std::size_t at = generated.find(*m); at != std::string_view::npos) return {at, *m};
      break;
    }
  }
  std::pair<std::size_t, std::string> first{generated.size(), ""};
  for (const auto& m : ends)
    if (std::size_t at = generated.find(m); at != std::string_view::npos && at < first.first)
      first = {at, m};
  return first;
}

}  // namespace

RoundTrip render_trip(const probe::RenderFunction& render, const probe::Profile& p,
                      std::string kind, const Json& turn, const std::vector<std::string>& ends) {
  RoundTrip trip;
  trip.kind = std::move(kind);
  Json messages = base_messages(p);
  // The tools in the shape the probe's baseline conversation renders with: flat function
  // objects where the template reads no `function` wrapper (Apertus), as adapt passes them.
  Json tools = round_trip_tools_json();
  if (convention(p, "tools", "nested") == "flat")
    for (auto& tool : tools) tool = Json(tool["function"]);
  auto prompt = render({{"messages", messages}, {"tools", tools}, {"add_generation_prompt", true}});
  Json with_turn = messages;
  with_turn.push_back(turn);
  auto full = render({{"messages", with_turn}, {"tools", tools}, {"add_generation_prompt", false}});
  if (!prompt || !full) {
    const Error& e = !prompt ? prompt.error() : full.error();
    trip.why_not = e.type + ": " + e.message;
    return trip;
  }
  trip.prompt = std::move(*prompt);
  trip.full = std::move(*full);
  trip.prefix = trip.full.compare(0, trip.prompt.size(), trip.prompt) == 0;
  std::size_t common = trip.prompt.size();
  // A template that moves text when the turn follows (Mistral puts the system message into the
  // last user turn) shares less: the turn starts after the question and the prompt's own text
  // after the question (the generation prompt, `[/INST]`), where the conversation has them.
  std::size_t q_prompt = trip.prompt.rfind(kQuestion), q_full = trip.full.rfind(kQuestion);
  bool moved = false;
  if (!trip.prefix && q_prompt != std::string::npos && q_full != std::string::npos) {
    std::string_view tail = std::string_view(trip.prompt).substr(q_prompt);
    if (std::string_view(trip.full).substr(q_full, tail.size()) == tail &&
        q_full + tail.size() > 0) {
      common = q_full + tail.size();
      moved = true;
    }
  }
  if (!trip.prefix && !moved) {
    common = 0;
    while (common < trip.prompt.size() && common < trip.full.size() &&
           trip.prompt[common] == trip.full[common])
      ++common;
    // Back to the start of the marker or word the two diverge in (`<|t` of `<|turn>` and
    // `<|tool_call>` is neither's).
    auto boundary = [&](std::size_t i) {
      if (i == 0 || i >= trip.full.size()) return true;
      char c = trip.full[i], prev = trip.full[i - 1];
      return c == '<' || c == '[' || prev == ' ' || prev == '\n' || prev == '\t' || prev == '>' ||
             prev == ']';
    };
    while (common > 0 && !boundary(common)) --common;
  }
  // A marker the conversation writes first that the prompt's own text already ends with is the
  // prompt's, not the model's: DeepSeek V3.2's prompt ends `<think></think>`, and its history
  // writes `</think>` before the answer. (Only where `common` is the two renders' shared prefix,
  // an offset into both.)
  // So is the whole of the prompt's own text after that prefix where the conversation writes
  // it too, with other whitespace: Granite-20B-FunctionCalling's prompt ends `ASSISTANT: \n`, its
  // history writes `ASSISTANT:\n<function_call>`.
  // The prompt's own text after the shared prefix, trimmed.
  const std::string_view prompt_rest =
      !trip.prefix && !moved ? trim(std::string_view(trip.prompt).substr(common)) : "";
  if (!trip.prefix && !moved) {
    const std::string_view full_rest = std::string_view(trip.full).substr(common);
    const std::string_view lead = leading_marker(full_rest);
    if (!lead.empty() && prompt_rest.ends_with(lead))
      common = trip.full.find(lead, common) + lead.size();
    else if (!prompt_rest.empty() && full_rest.starts_with(prompt_rest))
      common += prompt_rest.size();
  }
  trip.applicable = true;
  trip.turn_at = common;
  std::string_view generated = std::string_view(trip.full).substr(common);
  const auto [cut, marker] = turn_end(generated, p, ends);
  trip.end_marker = marker;
  trip.generated = std::string(generated.substr(0, cut));
  trip.turn_ends = ends;
  const std::string open_marker = p.reasoning.open.value_or("");  // `open` views it
  const std::string_view open = trim(open_marker);
  const bool prompt_leaves_open = leaves_reasoning_open(p, trip.prompt);
  // A prefix that holds the whole prompt but its trailing whitespace (Nemotron 3's prompt ends
  // `<think>\n`, its history writes `<think></think>` before an answer) leaves the text in the
  // state the prompt leaves it.
  if (trip.prefix || (!moved && prompt_rest.empty())) {
    trip.reasoning_prefilled = prompt_leaves_open;
  } else {
    // Past a shorter shared prefix the text is inside reasoning when that prefix ends with the
    // opener, or when the turn begins with the close of the block the prompt leaves open: the
    // model, after the prompt's opener, writes that close (GLM-4.7's prompt ends `<think>`, its
    // history writes `</think>` where the prompt wrote it).
    std::string_view before = trim(std::string_view(trip.full).substr(0, common));
    const std::string close_marker = p.reasoning.close.value_or("");
    const std::string_view close = trim(close_marker);
    trip.reasoning_prefilled =
        (!open.empty() && before.ends_with(open)) ||
        (prompt_leaves_open && !close.empty() && trim(trip.generated).starts_with(close));
  }
  return trip;
}

std::vector<RoundTrip> round_trips(const probe::RenderFunction& render,
                                   const probe::Profile& profile,
                                   const std::vector<std::string>& end_markers) {
  std::vector<RoundTrip> out;
  const auto ends = turn_end_markers(profile, end_markers);
  if (profile.tool_calls.rendered) {
    // Two calls; a template that refuses or drops the second one gets one call per turn. A
    // template that writes the call id instead of the name gets ids that carry the name.
    RoundTrip trip;
    std::string id_rule = convention(profile, "call_id", "long");
    for (std::size_t calls : {2u, 1u}) {
      trip = render_trip(render, profile, "calls", calls_turn(profile, calls, id_rule), ends);
      trip.calls = calls;
      if (trip.applicable && trip.generated.find(kCallNames[0]) == std::string::npos &&
          trip.generated.find(call_id(id_rule, 0)) != std::string::npos) {
        id_rule = "named";
        trip = render_trip(render, profile, "calls", calls_turn(profile, calls, id_rule), ends);
        trip.calls = calls;
      }
      if (trip.applicable && calls == 2 && trip.generated.find(kCallNames[1]) == std::string::npos)
        continue;
      if (trip.applicable || calls == 1) break;
    }
    trip.id_rule = id_rule;
    for (std::size_t i = 0; trip.applicable && i < trip.calls; ++i) {
      trip.expected.tool_calls.push_back({"", kCallNames[i], kArgumentTexts[i]});
      trip.call_ids.push_back(call_id(id_rule, i));
    }
    if (trip.generated.find(kReasoning) != std::string::npos)
      trip.expected.reasoning_content = kReasoning;
    out.push_back(std::move(trip));
  }
  if (profile.reasoning.style != "none") {
    RoundTrip trip = render_trip(render, profile, "reasoning", reasoning_turn(profile), ends);
    if (trip.applicable && trip.generated.find(kReasoning) == std::string::npos) {
      trip.applicable = false;
      trip.why_not = "the reasoning is not in the generated text";
    }
    trip.expected.content = kAnswer;
    trip.expected.reasoning_content = kReasoning;
    out.push_back(std::move(trip));
  }
  // A plain answer, no reasoning and no calls: what most turns are. Some templates frame it
  // (gpt-oss writes `<|channel|>final<|message|>` after the generation prompt).
  {
    RoundTrip trip = render_trip(render, profile, "answer",
                                 Json{{"role", "assistant"}, {"content", kAnswer}}, ends);
    if (trip.applicable && trip.generated.find(kAnswer) == std::string::npos) {
      trip.applicable = false;
      trip.why_not = "the answer is not in the generated text";
    }
    // A template whose prompt opens reasoning and whose answer turn writes the answer on, with no
    // closer (Nemotron Nano 9B v2 expects the content to hold `..</think>`): the text says the
    // model is still reasoning, and a parser reads it so, as vLLM's reasoning parsers do.
    const std::string close = std::string(trim(profile.reasoning.close.value_or("")));
    if (trip.applicable && trip.reasoning_prefilled && !close.empty() &&
        trip.generated.find(close) == std::string::npos) {
      trip.applicable = false;
      trip.why_not = "the template writes the answer inside the reasoning its prompt opens";
    }
    trip.expected.content = kAnswer;
    out.push_back(std::move(trip));
  }
  // Content beside a call, as a client replays a turn that said something and called: measured
  // with the parser the other trips chose (ParserChoice::content_calls_read_back).
  if (profile.tool_calls.rendered && !out.empty() && out.front().kind == "calls") {
    const std::string id_rule = out.front().id_rule;
    Json turn = calls_turn(profile, 1, id_rule);
    turn["content"] = kAnswer;
    RoundTrip trip = render_trip(render, profile, "content_calls", turn, ends);
    trip.calls = 1;
    trip.id_rule = id_rule;
    if (trip.applicable && (trip.generated.find(kAnswer) == std::string::npos ||
                            (trip.generated.find(kCallNames[0]) == std::string::npos &&
                             trip.generated.find(call_id(id_rule, 0)) == std::string::npos))) {
      trip.applicable = false;
      trip.why_not = "the content or the call is not in the generated text";
    }
    trip.expected.content = kAnswer;
    trip.expected.tool_calls.push_back({"", kCallNames[0], kArgumentTexts[0]});
    trip.call_ids.push_back(call_id(id_rule, 0));
    if (trip.generated.find(kReasoning) != std::string::npos)
      trip.expected.reasoning_content = kReasoning;
    out.push_back(std::move(trip));
  }
  // An end-of-turn marker written inside some turn is framing there, not the turn's end.
  std::vector<std::string> inner;
  for (const auto& m : ends)
    for (const auto& t : out)
      if (t.applicable && t.generated.find(m) != std::string::npos) {
        inner.push_back(m);
        break;
      }
  for (auto& t : out) t.inner_ends = inner;
  return out;
}

}  // namespace chatwire::readback
