// The adapter, tested on the bundled templates. Templates are chosen by their measured profile
// (e.g. "a template whose profile has tool_calls_dropped"), never by name in library code;
// the oracle goldens (scripts/check-adapt-oracle) are compared template by template.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "chatwire/adapt_json.hpp"

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
namespace adapt = chatwire::adapt;

namespace {

const fs::path kData = CHATWIRE_DATA_DIR;

struct Loaded {
  std::string name;
  adapt::Target target;
};

// Every bundled template, loaded and probed once for the whole test program.
const std::vector<Loaded>& templates() {
  static const std::vector<Loaded> all = [] {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(kData / "templates"))
      if (e.path().extension() == ".jinja") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    std::vector<Loaded> out;
    for (const auto& f : files) {
      auto t = adapt::load_template_file(f);
      if (t) out.push_back({f.filename().string(), std::move(t).value()});
    }
    return out;
  }();
  return all;
}

adapt::Options options_for(const adapt::Target& t) {
  adapt::Options o;
  o.special_tokens = t.measured_tokens;  // adapted as the probe measured (a file: stand-ins)
  return o;
}

chatwire::Result<adapt::Adapted> run(const Loaded& l, const json& request) {
  return adapt::adapt(request, l.target.profile, *l.target.tmpl, options_for(l.target));
}

bool has_code(const adapt::Adapted& a, std::string_view code) {
  return std::any_of(a.adaptations.begin(), a.adaptations.end(),
                     [&](const adapt::Adaptation& x) { return x.code == code; });
}

// The first bundled template whose profile satisfies `pred`.
const Loaded* pick(const std::function<bool(const chatwire::probe::Profile&)>& pred) {
  for (const auto& l : templates())
    if (l.target.profile.renders && pred(l.target.profile)) return &l;
  return nullptr;
}

// The bundled template of that file name, or nullptr.
const Loaded* named(std::string_view name) {
  for (const auto& l : templates())
    if (l.name == name) return &l;
  return nullptr;
}

// Adapts the sentinel request for the template picked by `pred`, expects `code` among the
// adaptations and every sentinel to survive.
void expect_adaptation(const std::function<bool(const chatwire::probe::Profile&)>& pred,
                       std::string_view code, json* context_out = nullptr) {
  const Loaded* l = pick(pred);
  ASSERT_NE(l, nullptr) << "no bundled template with that profile";
  auto a = run(*l, adapt::sentinel_request());
  ASSERT_TRUE(a) << l->name << ": " << a.error().to_string();
  EXPECT_TRUE(has_code(*a, code)) << l->name << " lacks " << code;
  for (const auto& s : adapt::find_sentinels(a->rendered))
    EXPECT_TRUE(s.ok()) << l->name << ": " << s.name;
  if (context_out) *context_out = a->context;
}

bool convention_ok(const chatwire::probe::Profile& p, std::string_view key) {
  return p.accepts(key);
}
bool convention_error(const chatwire::probe::Profile& p, std::string_view key) {
  const auto* c = p.convention(key);
  return c != nullptr && c->status == chatwire::probe::Status::error;
}

}  // namespace

TEST(Adapt, ArgumentsToDictWhereStringsFail) {
  expect_adaptation([](const auto& p) { return convention_error(p, "arguments_string"); },
                    "arguments_to_dict");
}

TEST(Adapt, ArgumentsToStringWhereDictsFail) {
  // The sentinel request already carries strings; give it dict arguments instead.
  const Loaded* l = pick([](const auto& p) {
    return convention_error(p, "arguments_dict") && convention_ok(p, "arguments_string");
  });
  ASSERT_NE(l, nullptr);
  json request = adapt::sentinel_request();
  auto& args = request["messages"][2]["tool_calls"][0]["function"]["arguments"];
  args = json::parse(args.get<std::string>());
  auto a = run(*l, request);
  ASSERT_TRUE(a) << l->name << ": " << a.error().to_string();
  EXPECT_TRUE(has_code(*a, "arguments_to_string")) << l->name;
  EXPECT_TRUE(a->context["messages"][2]["tool_calls"][0]["function"]["arguments"].is_string());
}

// Every bundled template: a tool whose parameter has no description is adapted (an empty
// description added) exactly where the probe measured that the template needs one, and the
// adapted request renders; elsewhere the request is left as it is.
TEST(Adapt, ParameterDescriptionsWhereTheTemplateNeedsThem) {
  json request = adapt::sentinel_request();
  for (auto& tool : request["tools"]) {
    json& function = tool.contains("function") ? tool["function"] : tool;
    for (auto& [name, schema] : function["parameters"]["properties"].items())
      schema.erase("description");
  }
  std::size_t needing = 0;
  for (const auto& l : templates()) {
    if (!l.target.profile.renders) continue;
    const bool needs = l.target.profile.tools.parameter_description_required.has_value();
    needing += needs;
    auto a = run(l, request);
    if (!a) {  // only a refusal the sentinel request with descriptions also gets
      EXPECT_FALSE(needs) << l.name << ": " << a.error().to_string();
      EXPECT_FALSE(run(l, adapt::sentinel_request())) << l.name << ": " << a.error().to_string();
      continue;
    }
    EXPECT_EQ(has_code(*a, "parameter_descriptions"), needs) << l.name;
  }
  EXPECT_GT(needing, 0u) << "no bundled template needs parameter descriptions";
}

TEST(Adapt, ShortCallIdsWhereLongIdsFail) {
  json context;
  expect_adaptation(
      [](const auto& p) {
        return convention_error(p, "long_call_id") && convention_ok(p, "short_call_id");
      },
      "short_call_ids", &context);
  const std::string id = context["messages"][2]["tool_calls"][0]["id"];
  EXPECT_TRUE(std::regex_match(id, std::regex("[A-Za-z0-9]{9}"))) << id;
  EXPECT_EQ(context["messages"][3]["tool_call_id"], id);  // consistent in the result
}

TEST(Adapt, ShortCallIdsAreDeterministicAndDistinct) {
  const Loaded* l = pick([](const auto& p) {
    return convention_error(p, "long_call_id") && convention_ok(p, "short_call_id");
  });
  ASSERT_NE(l, nullptr);
  json request = adapt::sentinel_request();
  // A second call with another id, answered by a second result.
  json second = request["messages"][2]["tool_calls"][0];
  second["id"] = "call_second_abcdefghijklmnop";
  request["messages"][2]["tool_calls"].push_back(second);
  json result2 = request["messages"][3];
  result2["tool_call_id"] = "call_second_abcdefghijklmnop";
  request["messages"].insert(request["messages"].begin() + 4, result2);
  auto a = run(*l, request);
  auto b = run(*l, request);
  ASSERT_TRUE(a && b) << l->name;
  const json& calls = a->context["messages"][2]["tool_calls"];
  EXPECT_EQ(calls, b->context["messages"][2]["tool_calls"]);  // same input, same ids
  EXPECT_NE(calls[0]["id"], calls[1]["id"]);
  EXPECT_EQ(a->context["messages"][3]["tool_call_id"], calls[0]["id"]);
  EXPECT_EQ(a->context["messages"][4]["tool_call_id"], calls[1]["id"]);
}

// The request's own ids, not the probe's: a short hand-written id (`call_1`) is adapted wherever
// the OpenAI-style id is; a template that raises on it gets 9-alphanumeric ids, measured at
// render time (vLLM's mistral_parallel wants at least 9 characters).
TEST(Adapt, RequestIdsTheTemplateRaisesOnAreShortened) {
  auto with_id = [](const std::string& id) {
    json request = adapt::sentinel_request();
    request["messages"][2]["tool_calls"][0]["id"] = id;
    request["messages"][3]["tool_call_id"] = id;
    return request;
  };
  int retried = 0;
  for (const auto& l : templates()) {
    if (!l.target.profile.renders) continue;
    auto openai = run(l, adapt::sentinel_request());
    auto hand = run(l, with_id("call_1"));
    EXPECT_EQ(static_cast<bool>(openai), static_cast<bool>(hand))
        << l.name << ": " << (hand ? openai.error().to_string() : hand.error().to_string());
    if (!hand) continue;
    const bool shortened = has_code(*hand, "short_call_ids");
    retried += shortened && !has_code(*openai, "short_call_ids");
    if (shortened) {
      const std::string id = hand->context["messages"][2]["tool_calls"][0]["id"];
      EXPECT_TRUE(std::regex_match(id, std::regex("[A-Za-z0-9]{9}"))) << l.name << " " << id;
      EXPECT_EQ(hand->context["messages"][3]["tool_call_id"], id) << l.name;
    }
  }
  EXPECT_GT(retried, 0);  // at least one template needs the render-time retry
  std::cout << "call_1 ids shortened at render time: " << retried << " template(s)\n";
  // A request that already holds the short form call_1 would get keeps it for that call, and
  // call_1 gets another: two calls never share an id.
  for (const auto& l : templates()) {
    if (!l.target.profile.renders) continue;
    auto first = run(l, with_id("call_1"));
    if (!first || !has_code(*first, "short_call_ids")) continue;
    const std::string taken = first->context["messages"][2]["tool_calls"][0]["id"];
    json request = with_id("call_1");
    json second = request["messages"][2]["tool_calls"][0];
    second["id"] = taken;
    request["messages"][2]["tool_calls"].push_back(second);
    json result2 = request["messages"][3];
    result2["tool_call_id"] = taken;
    request["messages"].insert(request["messages"].begin() + 4, result2);
    auto both = run(l, request);
    ASSERT_TRUE(both) << l.name << ": " << both.error().to_string();
    const json& calls = both->context["messages"][2]["tool_calls"];
    EXPECT_NE(calls[0]["id"], calls[1]["id"]) << l.name;
    EXPECT_EQ(calls[1]["id"], taken) << l.name;
    EXPECT_EQ(both->context["messages"][3]["tool_call_id"], calls[0]["id"]) << l.name;
    EXPECT_EQ(both->context["messages"][4]["tool_call_id"], calls[1]["id"]) << l.name;
  }
}

// A request can need two render-time retries at once: here a template variable the request sets
// (`strict_content`, which the probe cannot foresee) makes null content raise, and the request's
// own `call_1` ids are shorter than the 9 characters the template wants. Neither retry renders
// alone; together they do, and both are recorded.
TEST(Adapt, RenderRetriesCombine) {
  const std::string file = ::testing::TempDir() + "chatwire_two_retries.jinja";
  std::ofstream(file) << R"({%- for m in messages -%}
{%- if m.role == 'assistant' -%}
{%- if either is defined and either -%}
{%- if m.content is none and m.tool_calls and m.tool_calls[0].id | length < 9 -%}
{{- raise_exception('null content with a short id') -}}
{%- endif -%}
{%- elif m.content is none and strict_content is defined and strict_content -%}
{{- raise_exception('assistant content is none') -}}
{%- endif -%}
<|assistant|>{% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}{{ m.content or '' }}
{%- for c in m.tool_calls or [] -%}
{%- if c.id | length < 9 and not (either is defined and either) -%}{{- raise_exception('tool call ids need 9 characters') -}}{%- endif -%}
<call id="{{ c.id }}">{{ c.function.name }} {{ c.function.arguments | tojson }}</call>
{%- endfor -%}
{%- elif m.role == 'tool' -%}
<|tool|>{{ m.tool_call_id }} {{ m.content }}
{%- else -%}
<|{{ m.role }}|>{{ m.content }}
{%- endif -%}
{%- endfor -%}
{%- if tools %}<|tools|>{{ tools | tojson }}{% endif -%}
{%- if add_generation_prompt %}<|assistant|>{% endif -%})";
  auto target = adapt::load_template_file(file);
  ASSERT_TRUE(target) << target.error().to_string();
  ASSERT_TRUE(target->profile.renders) << target->profile.baseline.error;
  const Loaded l{"two_retries", std::move(target).value()};

  json request = adapt::sentinel_request();
  request["messages"][2]["tool_calls"][0]["id"] = "call_1";
  request["messages"][3]["tool_call_id"] = "call_1";
  request["strict_content"] = true;
  auto adapted = run(l, request);
  ASSERT_TRUE(adapted) << adapted.error().to_string();
  EXPECT_TRUE(has_code(*adapted, "null_content_replaced"));
  EXPECT_TRUE(has_code(*adapted, "short_call_ids"));
  const json& turn = adapted->context["messages"][2];
  EXPECT_FALSE(turn["content"].is_null());
  const std::string id = turn["tool_calls"][0]["id"];
  EXPECT_TRUE(std::regex_match(id, std::regex("[A-Za-z0-9]{9}"))) << id;
  EXPECT_EQ(adapted->context["messages"][3]["tool_call_id"], id);
  // Each row's finding is the error the render raised without that row.
  for (const auto& a : adapted->adaptations) {
    const std::string cause = a.code == "null_content_replaced" ? "assistant content is none"
                              : a.code == "short_call_ids"      ? "tool call ids need 9 characters"
                                                                : "";
    if (!cause.empty()) {
      EXPECT_NE(a.finding.find(cause), std::string::npos) << a.finding;
    }
  }

  // Where either retry alone renders, the first in table order (null content) is taken.
  json either = request;
  either.erase("strict_content");
  either["either"] = true;
  auto first = run(l, either);
  ASSERT_TRUE(first) << first.error().to_string();
  EXPECT_TRUE(has_code(*first, "null_content_replaced"));
  EXPECT_FALSE(has_code(*first, "short_call_ids"));
  EXPECT_EQ(first->context["messages"][2]["tool_calls"][0]["id"], "call_1");

  // One retry alone where one is needed: the other is not recorded.
  request["strict_content"] = false;
  auto ids_only = run(l, request);
  ASSERT_TRUE(ids_only) << ids_only.error().to_string();
  EXPECT_TRUE(has_code(*ids_only, "short_call_ids"));
  EXPECT_FALSE(has_code(*ids_only, "null_content_replaced"));
}

TEST(Adapt, FlatToolsWhereNestedFail) {
  expect_adaptation(
      [](const auto& p) {
        return !convention_ok(p, "nested_tools") && convention_ok(p, "flat_tools");
      },
      "flat_tools");
}

TEST(Adapt, CallsAsTextWhereCallsAreDropped) {
  expect_adaptation([](const auto& p) { return p.has_silent_failure("tool_calls_dropped"); },
                    "calls_as_text");
}

TEST(Adapt, DefinitionsIntoSystemWhereToolsAreIgnored) {
  expect_adaptation([](const auto& p) { return p.has_silent_failure("tools_ignored"); },
                    "definitions_into_system");
}

TEST(Adapt, ResultsAsUserTextWhereResultsAreDropped) {
  expect_adaptation([](const auto& p) { return !p.tool_results.rendered; }, "results_as_user_text");
}

TEST(Adapt, SystemIntoUserWithoutSystemRole) {
  expect_adaptation([](const auto& p) { return !p.system.supported; }, "system_into_user");
}

TEST(Adapt, MergeForAlternation) {
  const Loaded* l = pick([](const auto& p) { return p.alternation.required; });
  ASSERT_NE(l, nullptr);
  json request = {
      {"messages",
       {{{"role", "user"}, {"content", "QXONEQX"}}, {{"role", "user"}, {"content", "QXTWOQX"}}}}};
  auto a = run(*l, request);
  ASSERT_TRUE(a) << l->name << ": " << a.error().to_string();
  EXPECT_TRUE(has_code(*a, "merge_for_alternation")) << l->name;
  EXPECT_NE(a->rendered.find("QXONEQX"), std::string::npos);
  EXPECT_NE(a->rendered.find("QXTWOQX"), std::string::npos);
}

TEST(Adapt, PastReasoningDroppedWhereTheTemplateReplaysIt) {
  expect_adaptation([](const auto& p) { return p.reasoning.history_kept; }, "drop_past_reasoning");
}

// A tool loop's reasoning sent as `reasoning` (vLLM's and OpenRouter's field) reaches a template
// that renders it only for the calls after the last answer (Kimi K2 Thinking): the probe measures
// that turn, so adapt passes it in the field the template reads.
TEST(Adapt, ToolLoopReasoningReachesATemplateThatRendersItOnlyThere) {
  const auto it = std::find_if(templates().begin(), templates().end(), [](const Loaded& l) {
    return l.name == "moonshotai--Kimi-K2-Thinking--rev-hfjs.jinja";
  });
  ASSERT_NE(it, templates().end());
  const json request = json::parse(R"({
    "messages": [
      {"role": "user", "content": "Weather in Paris?"},
      {"role": "assistant", "content": "", "reasoning": "RXLOOPRX",
       "tool_calls": [{"id": "functions.get_w:0", "type": "function",
                       "function": {"name": "get_w", "arguments": "{\"city\": \"Paris\"}"}}]},
      {"role": "tool", "tool_call_id": "functions.get_w:0", "content": "22C"}],
    "tools": [{"type": "function", "function": {"name": "get_w", "parameters": {"type": "object",
               "properties": {"city": {"type": "string"}}}}}]})");
  auto a = run(*it, request);
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_TRUE(has_code(*a, "reasoning_field"));
  EXPECT_NE(a->rendered.find("<think>RXLOOPRX</think>"), std::string::npos) << a->rendered;
}

TEST(Adapt, ToolResultNamesFromTheAnsweredCall) {
  json context;
  expect_adaptation([](const auto& p) { return p.tool_results.rendered; }, "tool_result_names",
                    &context);
  EXPECT_EQ(context["messages"][3]["name"], "get_qxweather");
}

TEST(Adapt, TextPartsWhereStringContentIsLossy) {
  json context;
  expect_adaptation(
      [](const auto& p) {
        const auto* c = p.convention("string_content");
        return c != nullptr && c->status != chatwire::probe::Status::ok &&
               convention_ok(p, "content_parts");
      },
      "wrap_text_parts", &context);
  EXPECT_TRUE(context["messages"][0]["content"].is_array());
}

TEST(Adapt, CallIdsCarryTheNameWhereOnlyTheIdIsRendered) {
  using chatwire::probe::sentinel::kFunctionName;
  using chatwire::probe::sentinel::kLongCallId;
  json context;
  expect_adaptation(
      [](const auto& p) {
        return p.tool_calls.example &&
               p.tool_calls.example->find(kFunctionName) == std::string::npos &&
               p.tool_calls.example->find(kLongCallId) != std::string::npos;
      },
      "call_ids_with_names", &context);
  EXPECT_EQ(context["messages"][2]["tool_calls"][0]["id"], "functions.get_qxweather:0");
  EXPECT_EQ(context["messages"][3]["tool_call_id"], "functions.get_qxweather:0");
}

// Request validation: malformed requests are RequestErrors naming the field.
TEST(Adapt, RequestErrorsWithFieldPaths) {
  const Loaded* l = pick([](const auto&) { return true; });
  ASSERT_NE(l, nullptr);
  struct Case {
    json request;
    std::string path;
  };
  const std::vector<Case> cases = {
      {json::array(), ""},
      {json::object(), "messages"},
      {{{"messages", json::array()}}, "messages"},
      {{{"messages", {42}}}, "messages[0]"},
      {{{"messages", {{{"content", "x"}}}}}, "messages[0].role"},
      {{{"messages", {{{"role", "user"}}}}}, "messages[0].content"},
      {{{"messages",
         {{{"role", "user"}, {"content", "x"}}, {{"role", "tool"}, {"tool_call_id", "a"}}}}},
       "messages[1].content"},
      {{{"messages", {{{"role", "user"}, {"content", 5}}}}}, "messages[0].content"},
      {{{"messages", {{{"role", "user"}, {"content", {{{"text", "x"}}}}}}}},
       "messages[0].content[0].type"},
      {{{"messages", {{{"role", "assistant"}, {"tool_calls", {{{"id", "a"}}}}}}}},
       "messages[0].tool_calls[0].function"},
      {{{"messages", {{{"role", "assistant"}, {"tool_calls", {{{"function", {{"name", ""}}}}}}}}}},
       "messages[0].tool_calls[0].function.name"},
      {{{"messages",
         {{{"role", "assistant"},
           {"tool_calls", {{{"function", {{"name", "f"}, {"arguments", 3}}}}}}}}}},
       "messages[0].tool_calls[0].function.arguments"},
      {{{"messages", {{{"role", "user"}, {"content", "x"}}}}, {"tools", 1}}, "tools"},
      {{{"messages", {{{"role", "user"}, {"content", "x"}}}}, {"tools", {1}}}, "tools[0]"},
      {{{"messages", {{{"role", "user"}, {"content", "x"}}}}, {"chat_template_kwargs", 1}},
       "chat_template_kwargs"},
      // Tool definitions as OpenAI and vLLM take them: a function, named, its parameters an
      // object (transformers' flat {"name", "parameters"} is taken too).
      {{{"messages", {{{"role", "user"}, {"content", "x"}}}},
        {"tools", {{{"type", "custom"}, {"custom", {{"name", "x"}}}}}}},
       "tools[0].type"},
      {{{"messages", {{{"role", "user"}, {"content", "x"}}}}, {"tools", {{{"type", "function"}}}}},
       "tools[0].function"},
      {{{"messages", {{{"role", "user"}, {"content", "x"}}}},
        {"tools", {{{"type", "function"}, {"function", {{"description", "d"}}}}}}},
       "tools[0].function.name"},
      {{{"messages", {{{"role", "user"}, {"content", "x"}}}},
        {"tools",
         {{{"type", "function"}, {"function", {{"name", "f"}}}},
          {{"type", "function"}, {"function", {{"name", "g"}, {"parameters", "nope"}}}}}}},
       "tools[1].function.parameters"},
      {{{"messages", {{{"role", "user"}, {"content", "x"}}}},
        {"tools", {{{"parameters", json::object()}}}}},
       "tools[0].name"},
  };
  for (const auto& c : cases) {
    auto a = run(*l, c.request);
    ASSERT_FALSE(a) << c.request.dump();
    EXPECT_EQ(a.error().type, "RequestError") << c.request.dump();
    EXPECT_EQ(a.error().path, c.path) << c.request.dump();
  }
}

// An assistant turn may leave content out beside its tool_calls (OpenAI's schema): adapted as
// null content, on every bundled template, with the same context and render as `"content":
// null` (a template reading message.content of a dict without it raised before).
TEST(Adapt, AbsentAssistantContentIsNullContent) {
  json with_null = adapt::sentinel_request(), absent = with_null;
  std::size_t turns = 0;
  for (std::size_t i = 0; i < with_null["messages"].size(); ++i) {
    json& m = with_null["messages"][i];
    if (m["role"] != "assistant" || !m.contains("tool_calls")) continue;
    m["content"] = nullptr;
    absent["messages"][i].erase("content");
    ++turns;
  }
  ASSERT_GT(turns, 0u);
  std::size_t compared = 0;
  for (const auto& l : templates()) {
    auto expected = run(l, with_null);
    auto got = run(l, absent);
    ASSERT_EQ(expected.ok(), got.ok())
        << l.name << ": " << (got ? expected.error() : got.error()).to_string();
    if (!expected) continue;
    EXPECT_EQ(got->context.dump(), expected->context.dump()) << l.name;
    EXPECT_EQ(got->rendered, expected->rendered) << l.name;
    ++compared;
  }
  EXPECT_GT(compared, templates().size() / 2);
}

// A call syntax the table does not name is a ValueError naming the option, not the taught one.
TEST(Adapt, UnknownCallSyntaxIsRefused) {
  const Loaded* l = pick([](const auto&) { return true; });
  ASSERT_NE(l, nullptr);
  adapt::Options options = options_for(l->target);
  options.call_syntax = "nosuch";
  auto a = adapt::adapt(adapt::sentinel_request(), l->target.profile, *l->target.tmpl, options);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().type, "ValueError");
  EXPECT_EQ(a.error().path, "call_syntax");
  EXPECT_NE(a.error().message.find("hermes"), std::string::npos) << a.error().message;
}

// The request as JSON text (chatwire/adapt.hpp, no nlohmann): the same request path as the
// JSON object, and text that is not JSON, too large or too deep is a RequestError.
TEST(Adapt, RequestAsJsonText) {
  const Loaded* l = pick([](const auto& p) { return p.tool_calls.rendered; });
  ASSERT_NE(l, nullptr);
  const json request = adapt::sentinel_request();
  auto from_json =
      adapt::adapt_request(request, l->target.profile, *l->target.tmpl, options_for(l->target));
  auto from_text = adapt::adapt_request(std::string_view(request.dump()), l->target.profile,
                                        *l->target.tmpl, options_for(l->target));
  ASSERT_TRUE(from_json) << from_json.error().to_string();
  ASSERT_TRUE(from_text) << from_text.error().to_string();
  ASSERT_TRUE(from_json->rendered && from_text->rendered);
  EXPECT_EQ(from_text->rendered->text, from_json->rendered->text);
  EXPECT_EQ(from_text->adaptations.size(), from_json->adaptations.size());

  auto options = options_for(l->target);
  options.input.max_json_depth = 8;
  options.input.max_request_bytes = 4096;
  const std::string deep = std::string(20, '[') + std::string(20, ']');
  const std::string big =
      "{\"messages\": [{\"role\": \"user\", \"content\": \"" + std::string(5000, 'x') + "\"}]}";
  for (const std::string& bad : {std::string("{\"messages\": ["), deep, big}) {
    auto a =
        adapt::adapt_request(std::string_view(bad), l->target.profile, *l->target.tmpl, options);
    ASSERT_FALSE(a) << bad.substr(0, 40);
    EXPECT_EQ(a.error().type, "RequestError") << bad.substr(0, 40);
  }
  // A field error in text names the same path as in the object.
  auto field = adapt::adapt_request(std::string_view(R"({"messages": [42]})"), l->target.profile,
                                    *l->target.tmpl, options_for(l->target));
  ASSERT_FALSE(field);
  EXPECT_EQ(field.error().path, "messages[0]");
}

// Every bundled template: chatwire's own check agrees with the oracle-rendered goldens of
// scripts/check-adapt-oracle, for the raw and the adapted request.
TEST(Adapt, AgreesWithTheOracleCheckOnEveryBundledTemplate) {
  std::ifstream in(kData / "goldens" / "adapt" / "oracle_check.jsonl");
  ASSERT_TRUE(in);
  std::map<std::string, json> golden;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) {
      json j = json::parse(line);
      golden[j["template"]] = j;
    }
  ASSERT_EQ(golden.size(), templates().size());
  int raw_pass = 0, adapted_pass = 0, refused = 0;
  int golden_raw_pass = 0, golden_adapted_pass = 0, golden_refused = 0;
  for (const auto& [name, g] : golden) {
    golden_raw_pass += g["raw"] == "pass";
    golden_adapted_pass += g["adapted"] == "pass";
    golden_refused += g["adapted"] == "refused";
  }
  for (const auto& l : templates()) {
    SCOPED_TRACE(l.name);
    ASSERT_TRUE(golden.count(l.name));
    const json& g = golden[l.name];
    auto opts = options_for(l.target);
    auto raw = adapt::check_raw(*l.target.tmpl, opts);
    EXPECT_EQ(raw.passed ? "pass" : "fail", g["raw"].get<std::string>());
    auto checked = adapt::check(l.target.profile, *l.target.tmpl, opts);
    std::string adapted = checked.refused ? "refused" : checked.passed ? "pass" : "fail";
    EXPECT_EQ(adapted, g["adapted"].get<std::string>()) << checked.error;
    // The same request with content beside the call (scripts/check-adapt-oracle's BESIDE): the
    // oracle renders chatwire's adapted context; chatwire's own render must agree.
    json beside_request = adapt::sentinel_request();
    for (auto& m : beside_request["messages"])
      if (m.contains("tool_calls")) {
        m["content"] = "QXBESIDEQX Let me check that for you.";
        break;
      }
    auto beside = adapt::adapt(beside_request, l.target.profile, *l.target.tmpl, opts);
    std::string beside_verdict = "refused";
    if (beside) {
      bool kept = beside->rendered.find("QXBESIDEQX") != std::string::npos;
      for (const auto& s : adapt::find_sentinels(beside->rendered)) kept = kept && s.ok();
      beside_verdict = kept ? "pass" : "fail";
    }
    EXPECT_EQ(beside_verdict, g["beside"].get<std::string>())
        << (beside ? "" : beside.error().to_string());
    raw_pass += raw.passed;
    adapted_pass += checked.passed;
    refused += checked.refused;
  }
  // The totals follow from the per-template verdicts; they are compared here so that a summary
  // that drifts from them (docs/adapt.md quotes them) shows as a total, not only per template.
  EXPECT_EQ(raw_pass, golden_raw_pass);
  EXPECT_EQ(adapted_pass, golden_adapted_pass);
  EXPECT_EQ(refused, golden_refused);
  EXPECT_GT(golden_adapted_pass, 0) << "the golden file passes no template";
}

// A turn with content and a call whose values also occur elsewhere in the prompt (the name in
// the tool definitions, the city in the question): on every bundled template, adapting it
// succeeds exactly when adapting the same request with a city found nowhere else succeeds. So a
// template that drops the calls of a turn with content (DeepSeek V3's) is never passed because
// `get_weather` and "Paris" are elsewhere in the prompt: it gets the content as an assistant
// turn of its own before the calls (content_before_calls, as one that drops the content beside
// calls does), or, where that does not render either, a refusal naming the piece lost.
TEST(Adapt, CallsBesideContentAreFoundAfterTheTurnTheyFollow) {
  // `city` is the call's argument; the question is sent as text parts, as many clients do, and
  // the tool result names the function (and, `repeated`, the city).
  auto request = [](std::string_view city, bool repeated) {
    json r = json::parse(R"({"messages": [
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": "Let me check that for you.", "tool_calls": [
          {"id": "call_1", "type": "function",
           "function": {"name": "get_weather", "arguments": {"city": "CITY"}}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "22C"},
        {"role": "assistant", "content": "It is 22C."},
        {"role": "user", "content": "Thanks. And tomorrow?"}],
      "tools": [{"type": "function", "function": {"name": "get_weather",
        "description": "Get the weather for a city.", "parameters": {"type": "object",
        "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]})");
    r["messages"][1]["tool_calls"][0]["function"]["arguments"]["city"] = city;
    r["messages"][0]["content"] =
        json::array({json{{"type", "text"}, {"text", "What is the weather in Paris?"}}});
    r["messages"][2]["content"] =
        repeated ? "22C in Paris, from get_weather" : "22C, from get_weather";
    return r;
  };
  int adapted = 0, refused = 0, split = 0;
  for (const auto& l : templates()) {
    if (!l.target.profile.renders) continue;
    auto ambiguous = run(l, request("Paris", true));
    auto unique = run(l, request("Zxuniquecityxz", false));
    EXPECT_EQ(static_cast<bool>(ambiguous), static_cast<bool>(unique))
        << l.name << ": "
        << (ambiguous ? unique.error().to_string() : ambiguous.error().to_string());
    if (!ambiguous) {
      ++refused;
      // A piece lost is named (other refusals: the template raises on the conversation).
      if (ambiguous.error().message.find("does not render this text") != std::string::npos) {
        EXPECT_EQ(ambiguous.error().path.rfind("messages[1]", 0), 0u)
            << l.name << ": " << ambiguous.error().to_string();
      }
    } else {
      ++adapted;
      split += has_code(*ambiguous, "content_before_calls");
      // The same adaptations: what the unique value shows the template needs, the ambiguous
      // request gets too (verification cannot be fooled into skipping one).
      auto codes = [](const adapt::Adapted& a) {
        std::vector<std::string> out;
        for (const auto& x : a.adaptations) out.push_back(x.code);
        return out;
      };
      if (unique) {
        EXPECT_EQ(codes(*ambiguous), codes(*unique)) << l.name;
      }
    }
  }
  EXPECT_GT(adapted, 0);
  EXPECT_GT(refused, 0);  // Mistral's alternation check refuses the content as a turn of its own
  EXPECT_GT(split, 0);    // templates that lose one of the two render them as two turns
  std::cout << "content beside a call: " << adapted << " adapted (" << split
            << " with the content as a turn of its own), " << refused << " refused\n";
}

// An image sent as OpenAI sends it (an `image_url` part beside text): on every bundled template it
// is adapted with the template's measured placeholder for it in the prompt, where the template
// writes one for `image_url` or, as vLLM passes it, for the bare `image` (media_part_types), or
// refused naming the part; never dropped or written out as data (GLM-4.6 dropped it with no
// warning, GigaChat 3 wrote the part's JSON, base64 and all, into the prompt).
TEST(Adapt, AnImageIsKeptAsItsPlaceholderOrRefused) {
  const json request = json::parse(R"({"messages": [{"role": "user", "content": [
      {"type": "text", "text": "What is in this picture?"},
      {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgoZXDATAXZ"}}]}]})");
  int kept = 0, as_bare = 0, refused = 0;
  for (const auto& l : templates()) {
    if (!l.target.profile.renders) continue;
    auto a = run(l, request);
    if (!a) {
      ++refused;
      if (a.error().message.find("renders no conversation") == std::string::npos) {
        EXPECT_EQ(a.error().path, "messages[0].content[1]")
            << l.name << ": " << a.error().to_string();
      }
      continue;
    }
    ++kept;
    EXPECT_EQ(a->rendered.find("ZXDATAXZ"), std::string::npos) << l.name << ": " << a->rendered;
    const bool bare = has_code(*a, "media_part_types");
    as_bare += bare;
    const std::string type = bare ? "image" : "image_url";
    const auto& parts = l.target.profile.multimodal.parts;
    const auto part =
        std::find_if(parts.begin(), parts.end(), [&](const auto& p) { return p.type == type; });
    ASSERT_NE(part, parts.end()) << l.name;
    EXPECT_EQ(part->status, "placeholder") << l.name;
  }
  const Loaded* glm = named("zai-org--GLM-4.6.jinja");
  ASSERT_NE(glm, nullptr);
  auto dropped = run(*glm, request);
  ASSERT_FALSE(dropped);
  EXPECT_EQ(dropped.error().path, "messages[0].content[1]");
  EXPECT_GT(kept, 10);
  EXPECT_GT(as_bare, 5);
  std::cout << "an image_url part: " << kept << " adapted (" << as_bare
            << " as the bare image modality), " << refused << " refused\n";
}

// Past reasoning is dropped, unless the request sets a template variable the probe measured to
// render it (GLM-4.7's clear_thinking false, Qwen3.6's preserve_thinking true): then the caller
// asked the template itself to keep it, and it is kept, with a warning (it was dropped anyway).
TEST(Adapt, PastReasoningKeptWhereTheRequestAsksTheTemplateTo) {
  json request = json::parse(R"({"messages": [
      {"role": "user", "content": "Q1"},
      {"role": "assistant", "content": "A1", "reasoning_content": "ZXPASTREASONINGXZ"},
      {"role": "user", "content": "Q2"}]})");
  int kept = 0;
  for (const auto& l : templates()) {
    for (const auto& control : l.target.profile.thinking_controls.controls)
      for (const bool value : {true, false}) {
        const auto& at = value ? control.true_value : control.false_value;
        if (!at.past_reasoning || at.error) continue;
        json asked = request;
        asked["chat_template_kwargs"] = {{control.name, value}};
        auto a = run(l, asked);
        ASSERT_TRUE(a) << l.name << ": " << a.error().to_string();
        EXPECT_NE(a->rendered.find("ZXPASTREASONINGXZ"), std::string::npos)
            << l.name << " " << control.name << "=" << value;
        EXPECT_FALSE(has_code(*a, "drop_past_reasoning")) << l.name;
        ++kept;
      }
    auto plain = run(l, request);
    if (plain) {
      EXPECT_EQ(plain->rendered.find("ZXPASTREASONINGXZ"), std::string::npos) << l.name;
    }
  }
  EXPECT_GT(kept, 1);
  std::cout << "past reasoning kept where a measured variable asks: " << kept << " cases\n";
}

// Null content on a message without calls is "" (a template writes null as Python's `None`:
// Llama 3.1 rendered "None" three times), and empty arguments are `{}`, as vLLM passes both; on
// every bundled template the adapted prompt holds no "None" and the call without arguments.
TEST(Adapt, NullContentAndEmptyArgumentsAreWhatVllmPasses) {
  const json request = json::parse(R"({"messages": [
      {"role": "system", "content": null},
      {"role": "user", "content": "What time is it?"},
      {"role": "assistant", "content": null},
      {"role": "user", "content": "Please check."},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "get_time", "arguments": ""}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "12:00"}],
    "tools": [{"type": "function", "function": {"name": "get_time", "description": "The time.",
      "parameters": {"type": "object", "properties": {}}}}]})");
  int adapted = 0;
  for (const auto& l : templates()) {
    if (!l.target.profile.renders) continue;
    auto a = run(l, request);
    if (!a) {
      // Refused for what the template cannot take (alternation, a system message), never for
      // the empty arguments.
      EXPECT_EQ(a.error().message.find("arguments"), std::string::npos)
          << l.name << ": " << a.error().to_string();
      continue;
    }
    ++adapted;
    // Up to the calls turn, whose null content is passed as the probe measured it renders (a
    // few templates write it as `None` there too: see docs/adapt.md).
    const std::size_t calls_turn = a->rendered.find("Please check.");
    ASSERT_NE(calls_turn, std::string::npos) << l.name;
    EXPECT_EQ(a->rendered.substr(0, calls_turn).find("None"), std::string::npos)
        << l.name << ": " << a->rendered;
  }
  const Loaded* llama = named("meta-llama--Llama-3.1-8B-Instruct.jinja");
  ASSERT_NE(llama, nullptr);
  auto a = run(*llama, request);
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_TRUE(has_code(*a, "null_content_to_empty"));
  EXPECT_GT(adapted, 100);
  std::cout << "null content and empty arguments: " << adapted << " adapted\n";
}

// OpenAI's tools may omit a function's description; gpt-oss's templates read it unguarded and
// raised (a review found the Endpoint refusing such requests). On every bundled template the
// sentinel request without its tool descriptions adapts wherever the request with them does,
// with `tool_descriptions` ("" passed) only where the render raised without.
TEST(Adapt, AToolWithoutADescriptionAdaptsWhereOneWithItDoes) {
  json without = adapt::sentinel_request();
  for (auto& tool : without["tools"]) tool["function"].erase("description");
  int adapted = 0, filled = 0;
  for (const auto& l : templates()) {
    if (!l.target.profile.renders) continue;
    auto with = run(l, adapt::sentinel_request());
    auto a = run(l, without);
    EXPECT_EQ(static_cast<bool>(with), static_cast<bool>(a))
        << l.name << ": " << (a ? "" : a.error().to_string());
    if (!a) continue;
    ++adapted;
    filled += has_code(*a, "tool_descriptions");
  }
  const Loaded* oss = named("openai--gpt-oss-20b.jinja");
  ASSERT_NE(oss, nullptr);
  auto a = run(*oss, without);
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_TRUE(has_code(*a, "tool_descriptions"));
  EXPECT_GT(filled, 0);
  std::cout << "tools without descriptions: " << adapted << " adapted, " << filled
            << " with \"\" passed\n";
}

// Without a system role, a late system message goes in front of the user turn after it, not
// before the first question (a review found "from now on answer in French" moved before Q1 and
// A1); on every bundled template without one, the late text stands between A1 and Q2.
TEST(Adapt, ALateSystemMessageStaysWhereItWasGiven) {
  const json request = json::parse(R"({"messages": [
      {"role": "system", "content": "ZXFIRSTXZ"}, {"role": "user", "content": "ZXQ1XZ"},
      {"role": "assistant", "content": "ZXA1XZ"}, {"role": "system", "content": "ZXLATEXZ"},
      {"role": "user", "content": "ZXQ2XZ"}]})");
  int checked = 0;
  for (const auto& l : templates()) {
    if (!l.target.profile.renders || l.target.profile.system.supported) continue;
    auto a = run(l, request);
    if (!a) continue;  // (the alternation or a content shape it cannot take: named elsewhere)
    ASSERT_TRUE(has_code(*a, "system_into_user")) << l.name;
    const std::string& r = a->rendered;
    const auto first = r.find("ZXFIRSTXZ"), q1 = r.find("ZXQ1XZ"), a1 = r.find("ZXA1XZ"),
               late = r.find("ZXLATEXZ"), q2 = r.find("ZXQ2XZ");
    ASSERT_TRUE(first != std::string::npos && late != std::string::npos) << l.name << ": " << r;
    EXPECT_LT(first, q1) << l.name;
    EXPECT_LT(a1, late) << l.name << ": " << r;
    EXPECT_LT(late, q2) << l.name << ": " << r;
    ++checked;
  }
  EXPECT_GT(checked, 5);
  std::cout << "a late system message in place: " << checked
            << " templates without a system role\n";
}

// Two user turns merged for a template that alternates strictly, the first with an image: the
// parts are merged (the text at the seam joined), where they were refused naming `messages`.
TEST(Adapt, TurnsWithMediaAreMergedAsParts) {
  const json request = json::parse(R"({"messages": [
      {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Look at this."}]},
      {"role": "user", "content": "What is it?"}]})");
  const Loaded* gemma = named("google--gemma-3-it.jinja");
  ASSERT_NE(gemma, nullptr);
  ASSERT_TRUE(gemma->target.profile.alternation.required);
  auto a = run(*gemma, request);
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_TRUE(has_code(*a, "merge_for_alternation"));
  EXPECT_NE(a->rendered.find("<start_of_image>Look at this.\n\nWhat is it?"), std::string::npos)
      << a->rendered;
}

// A participant's `name` (OpenAI's optional field) that the template does not write is a
// warning naming it: the conversation is whole, but it was dropped without a word before.
TEST(Adapt, AParticipantsNameTheTemplateDropsIsAWarning) {
  const json request = json::parse(R"({"messages": [
      {"role": "user", "name": "zxalicexz", "content": "I like red"},
      {"role": "assistant", "content": "Noted."},
      {"role": "user", "name": "zxbobxz", "content": "I like blue"}]})");
  const Loaded* llama = named("meta-llama--Llama-3.1-8B-Instruct.jinja");
  ASSERT_NE(llama, nullptr);
  auto a = run(*llama, request);
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_EQ(a->rendered.find("zxalicexz"), std::string::npos);
  EXPECT_EQ(a->warnings, (std::vector<std::string>{
                             "messages[0].name ('zxalicexz') is not written by this template",
                             "messages[2].name ('zxbobxz') is not written by this template"}));
}

// Two calls in one turn to the same function, with integer arguments: a template that writes only
// the turn's first call (gpt-oss's: `{"sides": 6}<|call|>`, then both results) is refused naming
// the second call, not passed because the name `roll` stands there once; on every bundled
// template, adapting succeeds exactly when the render holds both calls between the question and
// the first result.
TEST(Adapt, EveryCallOfATurnIsVerified) {
  const json request = json::parse(R"({"messages": [
      {"role": "user", "content": "Roll two dice for me"},
      {"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "roll", "arguments": "{\"sides\": 6}"}},
        {"id": "call_b", "type": "function", "function": {"name": "roll", "arguments": "{\"sides\": 20}"}}]},
      {"role": "tool", "tool_call_id": "call_a", "content": "Rolled four"},
      {"role": "tool", "tool_call_id": "call_b", "content": "Rolled seventeen"}],
    "tools": [{"type": "function", "function": {"name": "roll", "description": "Roll a die.",
      "parameters": {"type": "object", "properties": {"sides": {"type": "integer"}}}}}]})");
  int adapted = 0, refused_naming_a_call = 0;
  for (const auto& l : templates()) {
    if (!l.target.profile.renders) continue;
    auto a = run(l, request);
    if (!a) {
      refused_naming_a_call += a.error().path.rfind("messages[1].tool_calls", 0) == 0 ||
                               a.error().message.find("a call to roll") != std::string::npos;
      continue;
    }
    ++adapted;
    // Both calls stand between the question and the first result, each with its value.
    const std::string& r = a->rendered;
    const std::size_t q = r.find("Roll two dice for me"), res = r.find("Rolled four");
    ASSERT_NE(q, std::string::npos) << l.name;
    const std::string turn = r.substr(q, res == std::string::npos ? std::string::npos : res - q);
    std::size_t rolls = 0;
    for (std::size_t at = turn.find("roll"); at != std::string::npos;
         at = turn.find("roll", at + 1))
      ++rolls;
    EXPECT_GE(rolls, 2u) << l.name << ": " << turn;
    EXPECT_NE(turn.find("20"), std::string::npos) << l.name << ": " << turn;
  }
  const Loaded* oss = named("openai--gpt-oss-20b.jinja");
  ASSERT_NE(oss, nullptr);
  auto refused = run(*oss, request);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().type, "CannotRepresent");
  EXPECT_EQ(refused.error().path, "messages[1].tool_calls[1].function.arguments.sides");
  // Counted without the turn's own text, which may name the call and its value (the review of
  // this check found it passed then), and a name inside a longer one (`roll-2`) is not the name.
  json mentioned = request;
  mentioned["messages"][1]["content"] = "Rolling a d6 with roll, then a d20 with roll: sides 20.";
  auto still = run(*oss, mentioned);
  ASSERT_FALSE(still);
  EXPECT_EQ(still.error().path, "messages[1].tool_calls[1].function.arguments.sides");
  json hyphen = request;
  hyphen["messages"][1]["tool_calls"][0]["function"]["name"] = "roll-2";
  hyphen["tools"].push_back(hyphen["tools"][0]);
  hyphen["tools"][1]["function"]["name"] = "roll-2";
  auto longer = run(*oss, hyphen);
  ASSERT_FALSE(longer);
  EXPECT_NE(longer.error().message.find("messages[1].tool_calls[1].function.name"),
            std::string::npos)
      << longer.error().to_string();
  EXPECT_GT(adapted, 100);
  std::cout << "two calls to one function in a turn: " << adapted << " adapted, "
            << refused_naming_a_call << " refused naming a call\n";
}

// The pieces are looked for in the request's order, from where the last one was found, and in
// the whole render when they are not there: a template that writes the system message after the
// conversation still keeps it (found behind the cursor), and one that drops it does not.
TEST(Adapt, PiecesWrittenOutOfOrderAreStillFound) {
  const std::string last = R"({%- for m in messages if m.role != 'system' -%}
<|{{ m.role }}|>{{ m.content }}
{%- endfor -%}
{%- for m in messages if m.role == 'system' %}<|system|>{{ m.content }}{% endfor -%}
{%- if add_generation_prompt %}<|assistant|>{% endif -%})";
  auto tmpl = chatwire::jinja::Template::compile(last);
  ASSERT_TRUE(tmpl);
  const auto profile = chatwire::probe::probe_template(*tmpl, chatwire::Value::empty_dict());
  const json request = json::parse(R"({"messages": [
      {"role": "system", "content": "Sys text here"},
      {"role": "user", "content": "First question"},
      {"role": "assistant", "content": "First answer"},
      {"role": "user", "content": "Second question"}]})");
  adapt::Options options;
  auto a = adapt::adapt(request, profile, *tmpl, options);
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_TRUE(a->rendered.ends_with("<|system|>Sys text here<|assistant|>")) << a->rendered;
}

// Every template passes, or is refused because no conversation renders at all; where the probe
// found no baseline but a plain conversation renders, everything goes as text in plain turns.
TEST(Adapt, RefusalsOnlyWhereNoConversationRenders) {
  // The templates the oracle check recorded as adapted to plain text turns.
  std::set<std::string> golden_plain;
  {
    std::ifstream in(kData / "goldens" / "adapt" / "oracle_check.jsonl");
    ASSERT_TRUE(in);
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      json j = json::parse(line);
      const json& a = j.value("adaptations", json::array());
      if (!a.empty() && a.front() == "plain_text_conversation") golden_plain.insert(j["template"]);
    }
  }
  std::set<std::string> plain;
  for (const auto& l : templates()) {
    auto checked = adapt::check(l.target.profile, *l.target.tmpl, options_for(l.target));
    if (l.target.profile.renders) {
      EXPECT_TRUE(checked.passed) << l.name << ": " << checked.error;
      continue;
    }
    if (checked.refused) {
      EXPECT_NE(checked.error.find("renders no conversation at all"), std::string::npos) << l.name;
      continue;
    }
    EXPECT_TRUE(checked.passed) << l.name;
    ASSERT_FALSE(checked.adaptations.empty());
    EXPECT_EQ(checked.adaptations.front().code, "plain_text_conversation") << l.name;
    EXPECT_TRUE(checked.context["tools"].is_null() || checked.context["tools"].empty());
    plain.insert(l.name);
  }
  EXPECT_EQ(plain, golden_plain);  // see docs/adapt.md
}

// `chatwire survey` carries the raw vs adapted column with the committed counts.
TEST(AdaptCli, SurveyHasTheRawVsAdaptedColumn) {
  ASSERT_TRUE(fs::exists(CHATWIRE_CLI)) << "the CLI is not built: " << CHATWIRE_CLI;
  const std::string out_file = ::testing::TempDir() + "chatwire_survey_adapt.md";
  const std::string cmd =
      std::string(CHATWIRE_CLI) + " survey " + kData.string() + "/templates --quiet > " + out_file;
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream in(out_file);
  std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(out.find("## Raw vs adapted request"), std::string::npos);
  // The summary line's counts come from the oracle check's verdicts of the bundled templates.
  std::ifstream golden_in(kData / "goldens" / "adapt" / "oracle_check.jsonl");
  ASSERT_TRUE(golden_in);
  int total = 0, raw_pass = 0, adapted_pass = 0, refused = 0, failed = 0;
  for (std::string line; std::getline(golden_in, line);) {
    if (line.empty()) continue;
    json g = json::parse(line);
    ++total;
    raw_pass += g["raw"] == "pass";
    adapted_pass += g["adapted"] == "pass";
    refused += g["adapted"] == "refused";
    failed += g["adapted"] == "fail";
  }
  ASSERT_EQ(total, static_cast<int>(templates().size()));
  const std::string summary = "raw " + std::to_string(raw_pass) + "/" + std::to_string(total) +
                              " pass; adapted " + std::to_string(adapted_pass) + "/" +
                              std::to_string(total) + " pass, " + std::to_string(refused) +
                              " refused with a reason, " + std::to_string(failed) + " fail";
  EXPECT_NE(out.find(summary), std::string::npos) << summary;
  EXPECT_NE(out.find("| Qwen--Qwen3-0.6B.jinja | "), std::string::npos);
}

namespace {

// Runs a shell command, returns {exit status, stdout}.
std::pair<int, std::string> shell(const std::string& cmd) {
  const std::string out_file = ::testing::TempDir() + "chatwire_adapt_cli.out";
  int status = std::system((cmd + " > " + out_file + " 2>/dev/null").c_str());
  std::ifstream in(out_file);
  std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return {WEXITSTATUS(status), out};
}

}  // namespace

// `chatwire adapt --render` prints the adapted prompt; `--model` works on a checkpoint
// directory; a malformed request is a JSON error with its field path and exit status 1.
TEST(AdaptCli, AdaptRenderModelAndErrors) {
  ASSERT_TRUE(fs::exists(CHATWIRE_CLI)) << "the CLI is not built: " << CHATWIRE_CLI;
  const std::string cli = CHATWIRE_CLI;
  const std::string request = ::testing::TempDir() + "chatwire_adapt_request.json";
  ASSERT_EQ(std::system((cli + " check --print-request > " + request).c_str()), 0);
  const Loaded* l = pick([](const auto& p) { return !p.system.supported; });
  ASSERT_NE(l, nullptr);
  auto [status, out] = shell(cli + " adapt --render --request " + request + " --template " +
                             (kData / "templates" / l->name).string());
  EXPECT_EQ(status, 0);
  for (const auto& s : adapt::find_sentinels(out)) EXPECT_TRUE(s.ok()) << s.name;

  auto [model_status, model_out] = shell(cli + " check --all " + (kData / "models").string());
  EXPECT_NE(model_out.find(" 0 fail"), std::string::npos) << model_out;
  (void)model_status;  // directories without a template make it 1 ("not loaded")

  const std::string bad = ::testing::TempDir() + "chatwire_adapt_bad.json";
  std::ofstream(bad) << R"({"messages": [{"role": "user", "content": 7}]})";
  auto [bad_status, bad_out] = shell(cli + " adapt --request " + bad + " --template " +
                                     (kData / "templates" / l->name).string());
  EXPECT_EQ(bad_status, 1);
  json err = json::parse(bad_out);
  EXPECT_EQ(err["error"]["type"], "RequestError");
  EXPECT_EQ(err["error"]["path"], "messages[0].content");
}
