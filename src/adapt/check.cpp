// The acceptance check: "render and look for the sentinels". A tool conversation in OpenAI
// wire shape, every field a unique sentinel, is adapted for the template and rendered; each
// sentinel must survive and the past turn's reasoning must not.
#include <string>
#include <utility>

#include "chatwire/adapt_json.hpp"
#include "chatwire/value_json.hpp"

namespace chatwire::adapt {

namespace {

using json = nlohmann::ordered_json;

// ONE table: the sentinels, where they sit in the request, and whether they must survive.
// Strings that cannot occur by accident in any template.
// The sentinels by name: an enum, so that a misspelled one is a compile error.
enum class Sentinel : unsigned char {
  system,
  question,
  tool_description,
  call_name,
  call_argument,
  result,
  answer,
  question2,
  past_reasoning,
  past_thinking,
};
struct SentinelEntry {
  Sentinel id;
  std::string_view name, text;
  bool expected;
};
constexpr SentinelEntry kSentinels[] = {
    {Sentinel::system, "system", "QXSYSTEMQX", true},
    {Sentinel::question, "question", "QXQUESTIONQX", true},
    {Sentinel::tool_description, "tool_description", "QXTOOLDESCQX", true},
    {Sentinel::call_name, "call_name", "get_qxweather", true},
    {Sentinel::call_argument, "call_argument", "QXCITYQX", true},
    {Sentinel::result, "result", "QXRESULTQX", true},
    {Sentinel::answer, "answer", "QXANSWERQX", true},
    {Sentinel::question2, "question2", "QXQUESTION2QX", true},
    {Sentinel::past_reasoning, "past_reasoning", "QXPASTREASONQX", false},
    {Sentinel::past_thinking, "past_thinking", "QXPASTTHINKQX", false},
};
static_assert(
    [] {
      for (std::size_t i = 0; i < std::size(kSentinels); ++i)
        if (static_cast<std::size_t>(kSentinels[i].id) != i) return false;
      return true;
    }(),
    "kSentinels is in enum order");

std::string S(Sentinel s) {
  return std::string(kSentinels[static_cast<std::size_t>(s)].text);
}

constexpr std::string_view kCallId = "call_QX7f3a9c2e1b4d6f8a0c2e4g6i";

// How far from the argument sentinel the call name may stand to count as the call's name
// (the name also occurs in the tool definitions, so alone it proves nothing).
constexpr std::size_t kCallNameWindow = 400;

}  // namespace

json sentinel_request() {
  json tool = {
      {"type", "function"},
      {"function",
       {{"name", S(Sentinel::call_name)},
        {"description", S(Sentinel::tool_description) + " Get the current weather for a city."},
        {"parameters",
         {{"type", "object"},
          {"properties", {{"city", {{"type", "string"}, {"description", "City name"}}}}},
          {"required", json::array({"city"})}}}}}};
  json call = {{"id", kCallId},
               {"type", "function"},
               {"function",
                {{"name", S(Sentinel::call_name)},
                 {"arguments", "{\"city\": \"" + S(Sentinel::call_argument) + "\"}"}}}};
  json messages = json::array();
  messages.push_back(
      {{"role", "system"}, {"content", S(Sentinel::system) + " You are a helpful assistant."}});
  messages.push_back(
      {{"role", "user"}, {"content", S(Sentinel::question) + " What is the weather in Paris?"}});
  messages.push_back(
      {{"role", "assistant"},
       {"content", nullptr},
       {"reasoning_content", S(Sentinel::past_reasoning) + " The user wants the weather."},
       {"thinking", S(Sentinel::past_thinking) + " I should call the tool."},
       {"tool_calls", json::array({call})}});
  messages.push_back({{"role", "tool"},
                      {"tool_call_id", kCallId},
                      {"content", S(Sentinel::result) + " 22C and sunny"}});
  messages.push_back(
      {{"role", "assistant"}, {"content", S(Sentinel::answer) + " It is 22C and sunny in Paris."}});
  messages.push_back({{"role", "user"}, {"content", S(Sentinel::question2) + " And tomorrow?"}});
  return json{{"messages", messages}, {"tools", json::array({tool})}};
}

std::vector<SentinelResult> find_sentinels(std::string_view rendered) {
  std::vector<SentinelResult> out;
  std::size_t argument_at = rendered.find(S(Sentinel::call_argument));
  for (const auto& s : kSentinels) {
    SentinelResult r{std::string(s.name), std::string(s.text), s.expected, false};
    if (s.id == Sentinel::call_name) {
      // The call's name must stand near its argument.
      if (argument_at != std::string_view::npos) {
        std::size_t from = argument_at > kCallNameWindow ? argument_at - kCallNameWindow : 0;
        std::string_view window = rendered.substr(from, 2 * kCallNameWindow + s.text.size());
        r.present = window.find(s.text) != std::string_view::npos;
      }
    } else {
      r.present = rendered.find(s.text) != std::string_view::npos;
    }
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

void finish(CheckReport& report, std::string_view rendered) {
  report.sentinels = find_sentinels(rendered);
  report.passed = true;
  for (const auto& s : report.sentinels) report.passed = report.passed && s.ok();
}

}  // namespace

CheckReport check(const probe::Profile& profile, const jinja::Template& tmpl,
                  const Options& options) {
  CheckReport report;
  Options verified = options;
  verified.verify = true;
  auto adapted = adapt(sentinel_request(), profile, tmpl, verified);
  if (adapted) {
    report.adaptations = adapted->adaptations;
    report.warnings = adapted->warnings;
    report.context = adapted->context;
    finish(report, adapted->rendered);
    return report;
  }
  // Refused: say why, and still show which sentinels the unverified adaptation would lose.
  report.refused = adapted.error().type == "CannotRepresent";
  report.error = adapted.error().to_string();
  report.context = nullptr;
  Options unverified = options;
  unverified.verify = false;
  auto attempt = adapt(sentinel_request(), profile, tmpl, unverified);
  std::string rendered;
  if (attempt) {
    report.adaptations = attempt->adaptations;
    jinja::RenderOptions render_options;
    render_options.limits = options.limits;
    render_options.now = options.now;
    if (auto r = tmpl.render(from_json(attempt->context), render_options)) rendered = r->output;
  }
  report.sentinels = find_sentinels(rendered);
  report.passed = false;
  return report;
}

CheckReport check_raw(const jinja::Template& tmpl, const Options& options) {
  CheckReport report;
  json context = json::object();
  if (auto tokens = to_json(options.special_tokens); tokens && tokens->is_object())
    for (auto& [k, v] : tokens->items()) context[k] = v;
  json request = sentinel_request();
  context["messages"] = request["messages"];
  context["tools"] = request["tools"];
  context["documents"] = nullptr;
  context["add_generation_prompt"] = true;
  report.context = context;
  jinja::RenderOptions render_options;
  render_options.limits = options.limits;
  render_options.now = options.now;
  auto rendered = tmpl.render(from_json(context), render_options);
  if (!rendered) {
    report.error = rendered.error().to_string();
    report.sentinels = find_sentinels("");
    return report;
  }
  finish(report, rendered->output);
  return report;
}

json CheckReport::to_json() const {
  json j = json::object();
  j["passed"] = passed;
  j["refused"] = refused;
  if (!error.empty()) j["error"] = error;
  json s = json::object();
  for (const auto& r : sentinels) {
    s[r.name] = {
        {"text", r.text}, {"expected", r.expected}, {"present", r.present}, {"ok", r.ok()}};
  }
  j["sentinels"] = s;
  json a = json::array();
  for (const auto& ad : adaptations)
    a.push_back({{"code", ad.code}, {"finding", ad.finding}, {"detail", ad.detail}});
  j["adaptations"] = a;
  j["warnings"] = warnings;
  return j;
}

}  // namespace chatwire::adapt
