// The parser's API contract beyond the reference cases: registry, errors as values, UTF-8 never
// split across deltas, limits that keep text, and the CLI protocols. Linear streaming is measured
// by bench/parse.cpp (BM_Stream1Byte at three sizes, in scripts/bench), not timed in a test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "chatwire/parse_json.hpp"

namespace {

namespace parse = chatwire::parse;
using parse::Json;

TEST(ParseApi, RegistryListsEveryDialectOfTheIssue) {
  const std::vector<std::string> names = {"think",
                                          "kimi_think",
                                          "hermes",
                                          "qwen3_coder",
                                          "llama3_json",
                                          "pythonic",
                                          "olmo3",
                                          "mistral_v03",
                                          "mistral_v11",
                                          "harmony",
                                          "minimax_m2",
                                          "glimmer",
                                          "step3",
                                          "seed_oss",
                                          "glm45",
                                          "ling3",
                                          "kimi_k2",
                                          "deepseek_r1",
                                          "deepseek_v31",
                                          "deepseek_v32",
                                          "deepseek_v4",
                                          "deepseek_v41",
                                          "nemotron",
                                          "granite",
                                          "granite_3_2",
                                          "granite_pythonic",
                                          "functionary_v3_1",
                                          "functionary_v3_2",
                                          "command_r7b",
                                          "xlam",
                                          "longcat",
                                          "internlm2",
                                          "phi4_mini",
                                          "jamba",
                                          "apriel16",
                                          "hunyuan_a13b",
                                          "ernie45",
                                          "minimax_m1",
                                          "step3p5",
                                          "qwen25_coder",
                                          "gemma4",
                                          "functiongemma",
                                          "apertus",
                                          "granite_20b_fc",
                                          "hunyuan",
                                          "hunyuan_v4",
                                          "hyperclovax",
                                          "iquest_coder_v2",
                                          "iquest_q1",
                                          "solar_open2",
                                          "plamo3",
                                          "command_r_plus",
                                          "gigachat3",
                                          "gigachat35",
                                          "minicpm5",
                                          "k2_horizon",
                                          "kimi_k3",
                                          "inkling",
                                          "dots",
                                          "minimax_m3",
                                          "rwkv",
                                          "hyperclovax_14b",
                                          "cwm"};
  parse::Options no_thinking;
  no_thinking.enable_thinking = false;
  for (const std::string& name : names) {
    EXPECT_TRUE(parse::has_dialect(name)) << name;
    // Every dialect passes plain text through as content.
    auto r = parse::parse("Hello there.", name, parse::Tools{}, no_thinking);
    ASSERT_TRUE(r.ok()) << name;
    EXPECT_EQ(r->message.content, "Hello there.") << name;
  }
  // Every registered dialect is one of these (a new one is added to this list with a check).
  for (const auto& info : parse::dialects()) {
    EXPECT_NE(std::find(names.begin(), names.end(), info.name), names.end()) << info.name;
    // One line each in `chatwire parse --list` (a marker's newline is written \n).
    EXPECT_EQ(info.summary.find('\n'), std::string_view::npos) << info.name;
  }
  EXPECT_EQ(parse::dialects().size(), names.size());
}

TEST(ParseApi, ErrorsAreValues) {
  auto unknown = parse::parse("x", "no_such_dialect");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().type, "ValueError");
  EXPECT_EQ(unknown.error().path, "dialect");
  auto bad_tools = parse::parse("x", "hermes", Json::object());
  ASSERT_FALSE(bad_tools.ok());
  EXPECT_EQ(bad_tools.error().path, "tools");
  EXPECT_FALSE(parse::StreamParser::create("no_such_dialect").ok());
}

TEST(ParseApi, MultiByteCharactersAreNeverSplitAcrossDeltas) {
  const std::string text =
      "<think>思考中…</think>天気は晴れ 🌞<tool_call>{\"name\": \"f\", \"arguments\": {\"q\": "
      "\"東京 🗼\"}}</tool_call>";
  auto stream = parse::StreamParser::create("hermes");
  ASSERT_TRUE(stream.ok());
  std::vector<parse::Delta> deltas;
  for (char c : text) {
    auto d = stream->feed(std::string_view(&c, 1));
    deltas.insert(deltas.end(), d.begin(), d.end());
  }
  auto d = stream->finish();
  deltas.insert(deltas.end(), d.begin(), d.end());
  for (const auto& delta : deltas) {
    for (const std::string* s : {&delta.content, &delta.reasoning_content}) {
      EXPECT_NO_THROW((void)Json(*s).dump()) << *s;
    }
    for (const auto& t : delta.tool_calls) EXPECT_NO_THROW((void)Json(t.arguments).dump());
  }
  EXPECT_EQ(stream->message().content, "天気は晴れ 🌞");
  EXPECT_EQ(stream->message().reasoning_content, "思考中…");
}

// A string value is escaped into the call's arguments as nlohmann writes it: every byte JSON
// escapes, at every offset of a 16-byte block and near the end (the escaper works a block at a
// time), one-shot and streamed alike.
TEST(ParseApi, StringValuesAreEscapedAsJsonWritesThem) {
  const Json tools = Json::parse(
      R"([{"type": "function", "function": {"name": "f", "parameters": {"type": "object",
          "properties": {"v": {"type": "string"}}}}}])");
  std::string every;
  for (int c = 1; c < 0x80; ++c)
    if (c != '<') every += static_cast<char>(c);
  every += "\xC3\xAF \xE2\x82\xAC \xF0\x9F\x98\x80";
  std::vector<std::string> values = {every, "\"", "a\\", std::string(1, '\0') + "x"};
  for (std::size_t len = 1; len < 40; ++len)  // an escape at each offset, plain text around it
    for (std::size_t at = 0; at < len; ++at) {
      std::string v(len, 'a');
      v[at] = "\"\\\n\x01\t\x1f"[(len + at) % 6];
      values.push_back(v + "z");
    }
  for (const auto& v : values) {
    const std::string text = "<tool_call>\n<function=f>\n<parameter=v>\n" + v +
                             "\n</parameter>\n</function>\n</tool_call>";
    const std::string expected = "{\"v\": " + Json(v).dump() + "}";
    auto r = parse::parse(text, "qwen3_coder", tools);
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->message.tool_calls.size(), 1u);
    EXPECT_EQ(r->message.tool_calls[0].arguments, expected) << Json(v).dump();
    auto stream = parse::stream_parser("qwen3_coder", tools);
    ASSERT_TRUE(stream.ok());
    std::string streamed;
    for (std::size_t i = 0; i < text.size(); i += 7)
      for (const auto& d : stream->feed(std::string_view(text).substr(i, 7)))
        for (const auto& t : d.tool_calls) streamed += t.arguments;
    for (const auto& d : stream->finish())
      for (const auto& t : d.tool_calls) streamed += t.arguments;
    EXPECT_EQ(streamed, expected) << Json(v).dump();
  }
}

// A JSON call's string arguments dense with backslash runs and quotes, across the scanner's
// 64-byte blocks: the call ends where the JSON ends, one-shot and in 1-byte chunks alike.
TEST(ParseApi, JsonStringsWithBackslashRunsEndAtTheirQuote) {
  std::uint64_t seed = 12345;
  auto next = [&seed] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<unsigned>(seed >> 33);
  };
  const char* pieces[] = {"a", "\\", "\\", "\"", "\n", "\xC3\xA9", "\\\\", "b"};
  for (int round = 0; round < 300; ++round) {
    std::string v;
    const unsigned len = next() % 400;
    for (unsigned k = 0; k < len; ++k) v += pieces[next() % 8];
    const std::string arguments = "{\"content\": " + Json(v).dump() + ", \"n\": 1}";
    const std::string text =
        "<tool_call>\n{\"name\": \"f\", \"arguments\": " + arguments + "}\n</tool_call>";
    auto r = parse::parse(text, "hermes");
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->message.tool_calls.size(), 1u) << round;
    const Json args = Json::parse(r->message.tool_calls[0].arguments, nullptr, false);
    ASSERT_TRUE(args.is_object()) << round;
    EXPECT_EQ(args["content"], v) << round;
    auto stream = parse::stream_parser("hermes", Json());
    ASSERT_TRUE(stream.ok());
    std::string streamed;
    for (std::size_t i = 0; i < text.size(); ++i)
      for (const auto& d : stream->feed(std::string_view(text).substr(i, 1)))
        for (const auto& t : d.tool_calls) streamed += t.arguments;
    for (const auto& d : stream->finish())
      for (const auto& t : d.tool_calls) streamed += t.arguments;
    EXPECT_EQ(streamed, r->message.tool_calls[0].arguments) << round;
  }
}

TEST(ParseApi, HeldBytesLimitKeepsTextAsContent) {
  parse::Options options;
  options.max_held_bytes = 16;
  std::string text = "Here {\"name\": \"a_rather_long_function_name\", \"parameters\": {}} after";
  auto r = parse::parse(text, "llama3_json", parse::Tools{}, options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->message.content, text);
  EXPECT_TRUE(r->message.tool_calls.empty());
  ASSERT_FALSE(r->warnings.empty());
  EXPECT_EQ(r->warnings[0].code, "limit");
}

// A reasoning close written twice is one close when the reasoning is separated (as SGLang dedupes
// it); with separate_reasoning off the block is content as written, the repeated close included.
// One-shot and 1-byte streaming agree, and both say what happened to the marker.
TEST(ParseApi, RepeatedReasoningCloseIsRemovedOnlyWhenReasoningIsSeparated) {
  const std::string text = "<think>a</think></think>b";
  for (bool separate : {true, false}) {
    parse::Options options;
    options.separate_reasoning = separate;
    auto r = parse::parse(text, "think", parse::Tools{}, options);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->message.content, separate ? "b" : text) << separate;
    EXPECT_EQ(r->message.reasoning_content, separate ? "a" : "") << separate;
    ASSERT_EQ(r->warnings.size(), 1u);
    EXPECT_EQ(r->warnings[0].code, "stray_marker");
    EXPECT_EQ(r->warnings[0].offset, 16u);
    EXPECT_NE(r->warnings[0].message.find(separate ? "removed" : "kept as written"),
              std::string::npos)
        << r->warnings[0].message;
    auto stream = parse::stream_parser("think", Json(), options);
    ASSERT_TRUE(stream.ok());
    for (char ch : text) stream->feed(std::string_view(&ch, 1));
    stream->finish();
    EXPECT_EQ(stream->message().content, r->message.content) << separate;
    EXPECT_EQ(stream->message().reasoning_content, r->message.reasoning_content) << separate;
  }
}

TEST(ParseApi, OutputLimitKeepsTheRestAsContent) {
  parse::Options options;
  options.max_output_bytes = 10;
  auto r = parse::parse("Hello <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>",
                        "hermes", parse::Tools{}, options);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->message.tool_calls.empty());
  EXPECT_EQ(r->message.content,
            "Hello <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>");
}

TEST(ParseApi, ArgumentsStreamAsGrowingFragments) {
  // A long string argument arrives in many deltas, not in one at the end.
  std::string body(5000, 'x');
  std::string text = "<tool_call>\n<function=write>\n<parameter=content>\n" + body +
                     "\n</parameter>\n</function>\n</tool_call>";
  auto stream = parse::StreamParser::create("qwen3_coder");
  std::size_t arg_deltas = 0;
  for (std::size_t i = 0; i < text.size(); i += 100) {
    for (const auto& d : stream->feed(std::string_view(text).substr(i, 100)))
      arg_deltas += d.tool_calls.size();
  }
  stream->finish();
  EXPECT_GT(arg_deltas, 40u);
  EXPECT_EQ(Json::parse(stream->message().tool_calls.at(0).arguments)["content"], body);
}

std::string run_cli(const std::string& args, const std::string& input) {
  std::string in_path = ::testing::TempDir() + "/parse_cli_in.txt";
  std::ofstream(in_path, std::ios::binary) << input;
  std::string cmd = std::string(CHATWIRE_CLI) + " parse " + args + " < " + in_path;
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    std::size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
  }
  return out;
}

TEST(ParseCli, MessageStreamAndBatch) {
  ASSERT_TRUE(std::filesystem::exists(CHATWIRE_CLI)) << "CLI not built: " << CHATWIRE_CLI;
  std::string text =
      "<think>hm</think>Sure.<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>";
  Json message = Json::parse(run_cli("--dialect hermes", text));
  EXPECT_EQ(message["content"], "Sure.");
  EXPECT_EQ(message["reasoning_content"], "hm");
  EXPECT_EQ(message["tool_calls"][0]["function"]["name"], "f");

  std::string lines = run_cli("--dialect hermes --stream 5", text);
  std::string content, args;
  std::size_t count = 0, start = 0;
  while (start < lines.size()) {
    std::size_t end = lines.find('\n', start);
    Json delta = Json::parse(lines.substr(start, end - start));
    content += delta.value("content", "");
    if (delta.contains("tool_calls"))
      args += delta["tool_calls"][0]["function"]["arguments"].get<std::string>();
    ++count;
    start = end + 1;
  }
  EXPECT_GT(count, 3u);
  EXPECT_EQ(content, "Sure.");
  EXPECT_EQ(Json::parse(args), Json::parse("{\"a\": 1}"));

  Json request = {{"id", "r1"}, {"dialect", "hermes"}, {"input", text}, {"chunk_sizes", {1, 2, 7}}};
  std::string batch =
      run_cli("--batch", request.dump() + "\n{\"id\": 2, \"dialect\": \"x\", \"input\": \"\"}\n");
  std::size_t nl = batch.find('\n');
  Json first = Json::parse(batch.substr(0, nl)), second = Json::parse(batch.substr(nl + 1));
  EXPECT_EQ(first["id"], "r1");
  EXPECT_EQ(first["ok"], true);
  EXPECT_EQ(first["stream_consistent"], true);
  EXPECT_EQ(first["message"]["content"], "Sure.");
  EXPECT_EQ(second["ok"], false);
  EXPECT_EQ(second["error"]["type"], "ValueError");
}

// The command's flags and batch options for undeclared calls and reasoning left in the content.
TEST(ParseCli, UnknownToolsAndSeparateReasoning) {
  ASSERT_TRUE(std::filesystem::exists(CHATWIRE_CLI)) << "CLI not built: " << CHATWIRE_CLI;
  std::string tools_path = ::testing::TempDir() + "/parse_cli_tools.json";
  std::ofstream(tools_path) << R"([{"type": "function", "function": {"name": "g"}}])";
  const std::string call =
      "<minimax:tool_call>\n<invoke name=\"f\">\n<parameter name=\"a\">1</parameter>\n</invoke>\n"
      "</minimax:tool_call>";
  // minimax_m2 drops a call to an undeclared function by default (SGLang's detector does).
  Json dropped =
      Json::parse(run_cli("--dialect minimax_m2 --tools " + tools_path + " 2>/dev/null", call));
  EXPECT_FALSE(dropped.contains("tool_calls")) << dropped.dump();
  Json forwarded = Json::parse(
      run_cli("--dialect minimax_m2 --tools " + tools_path + " --unknown-tools forward", call));
  EXPECT_EQ(forwarded["tool_calls"][0]["function"]["name"], "f");

  const std::string thought = "<think>hm</think>Sure.";
  Json kept = Json::parse(run_cli("--dialect hermes --no-separate-reasoning", thought));
  EXPECT_EQ(kept["content"], thought);
  EXPECT_FALSE(kept.contains("reasoning_content"));

  Json request = {{"id", 1},
                  {"dialect", "minimax_m2"},
                  {"input", call},
                  {"tools", Json::parse(R"([{"type": "function", "function": {"name": "g"}}])")},
                  {"options", {{"forward_unknown_tools", false}, {"separate_reasoning", false}}}};
  Json line = Json::parse(run_cli("--batch", request.dump() + "\n"));
  EXPECT_EQ(line["ok"], true);
  EXPECT_FALSE(line["message"].contains("tool_calls"));
  EXPECT_EQ(line["warnings"][0]["code"], "unknown_tool");
  request["options"] = {{"forward_unknown_tools", "yes"}};
  Json bad = Json::parse(run_cli("--batch", request.dump() + "\n"));
  EXPECT_EQ(bad["ok"], false);
  EXPECT_EQ(bad["error"]["message"], "options.forward_unknown_tools: must be a boolean or null");
}

}  // namespace

// Options from JSON: every kind of field, null for the dialect's default, and each bad value or
// unknown key refused with its path.
TEST(ParseApi, OptionsFromJson) {
  auto o = parse::options_from_json(Json::parse(R"({"reasoning_prefilled": true,
      "enable_thinking": false, "separate_reasoning": false, "strict": true,
      "forward_unknown_tools": null, "id_prefix": "t_", "max_tool_calls": 3})"));
  ASSERT_TRUE(o.ok()) << o.error().to_string();
  EXPECT_TRUE(o->reasoning_prefilled);
  EXPECT_EQ(o->enable_thinking, std::optional<bool>(false));
  EXPECT_FALSE(o->separate_reasoning);
  EXPECT_TRUE(o->strict);
  EXPECT_FALSE(o->forward_unknown_tools.has_value());
  EXPECT_EQ(o->id_prefix, "t_");
  EXPECT_EQ(o->max_tool_calls, 3u);
  EXPECT_EQ(parse::options_from_json(Json())->max_held_bytes, parse::Options{}.max_held_bytes);
  const std::pair<const char*, const char*> bad[] = {
      {R"([])", "options: must be an object"},
      {R"({"strict": 1})", "options.strict: must be a boolean"},
      {R"({"enable_thinking": "on"})", "options.enable_thinking: must be a boolean or null"},
      {R"({"max_held_bytes": -1})", "options.max_held_bytes: must be a non-negative integer"},
      {R"({"id_prefix": 7})", "options.id_prefix: must be a string"},
      {R"({"stirct": true})", "options.stirct: unknown option"},
  };
  for (const auto& [text, why] : bad) {
    auto r = parse::options_from_json(Json::parse(text));
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().type, "ValueError");
    EXPECT_EQ(r.error().path + ": " + r.error().message, why);
  }
}

// The tools and the parser description as JSON text (chatwire/parse.hpp, no nlohmann).
TEST(ParseApi, ToolsAndSyntaxAsJsonText) {
  const std::string tools_text = R"([{"type": "function", "function": {"name": "f",
      "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}}])";
  auto tools = parse::Tools::from_json_text(tools_text);
  ASSERT_TRUE(tools.ok());
  EXPECT_EQ(tools->size(), 1u);
  EXPECT_TRUE(parse::Tools().empty());
  // Typed by the schema read from the text: the XML value 5 becomes the integer 5.
  const std::string out =
      "<tool_call>\n<function=f>\n<parameter=n>\n5\n</parameter>\n</function>\n</tool_call>";
  auto r = parse::parse(out, "qwen3_coder", *tools);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->message.tool_calls.size(), 1u);
  EXPECT_EQ(r->message.tool_calls[0].arguments, R"({"n": 5})");
  EXPECT_EQ(parse::message_to_json_text(r->message), parse::message_to_json(r->message).dump());
  const std::string deep = std::string(600, '[') + std::string(600, ']');
  for (const std::string& bad : {std::string("["), std::string("{}"), std::string("3"), deep}) {
    auto t = parse::Tools::from_json_text(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_EQ(t.error().path, "tools") << bad;
  }
  auto syntax = parse::Syntax::named("qwen3_coder");
  ASSERT_TRUE(syntax.ok());
  auto back = parse::Syntax::from_json_text(syntax->to_json_text());
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(back->to_json_text(), syntax->to_json_text());
  EXPECT_EQ(parse::to_json(*back), parse::to_json(*syntax));
  EXPECT_FALSE(parse::Syntax::from_json_text("{").ok());
  EXPECT_FALSE(parse::Syntax::from_json_text("[]").ok());
  EXPECT_FALSE(parse::Syntax::from_json_text(deep).ok());
}

// {"NAME": {arguments}} call objects (name_as_key, derived for Apertus-style templates): read
// one-shot and streamed byte by byte alike; a value that is not an object is not a call.
TEST(ParseApi, NameKeyedCallObjects) {
  auto syntax = parse::Syntax::from_json_text(
      R"({"family": "json", "name_as_key": true, "sections": [["<|calls|>", "<|/calls|>"]]})");
  ASSERT_TRUE(syntax.ok()) << syntax.error().to_string();
  const std::string text =
      R"(Sure.<|calls|>[{"get_weather": {"city": "Bern", "days": 2}}, {"set_alarm": {}}]<|/calls|>)";
  auto r = parse::parse(text, *syntax);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->message.content, "Sure.");
  ASSERT_EQ(r->message.tool_calls.size(), 2u);
  EXPECT_EQ(r->message.tool_calls[0].name, "get_weather");
  EXPECT_EQ(r->message.tool_calls[0].arguments, R"({"city": "Bern", "days": 2})");
  EXPECT_EQ(r->message.tool_calls[1].name, "set_alarm");
  EXPECT_EQ(r->message.tool_calls[1].arguments, "{}");
  auto stream = parse::StreamParser::create(*syntax);
  ASSERT_TRUE(stream.ok());
  for (char c : text) stream->feed(std::string_view(&c, 1));
  stream->finish();
  EXPECT_EQ(parse::message_to_json_text(stream->message()),
            parse::message_to_json_text(r->message));
  auto not_call = parse::parse(R"(<|calls|>[{"answer": 42}]<|/calls|>)", *syntax);
  ASSERT_TRUE(not_call.ok());
  EXPECT_TRUE(not_call->message.tool_calls.empty());
  EXPECT_EQ(not_call->message.content, R"(<|calls|>[{"answer": 42}]<|/calls|>)");
}

// A hand-written syntax that names only an end-of-turn token: the token ends the output and is
// not content (it needs no listing in "dropped"), in content, in reasoning and after a call cut
// by it; streamed byte by byte alike.
TEST(ParseApi, EndTokensEndTheOutputWithoutBeingListedAsDropped) {
  auto syntax = parse::Syntax::from_json_text(
      R"({"family": "json", "sections": [["<|calls|>", "<|/calls|>"]],
          "think_open": "<think>", "think_close": "</think>", "end_tokens": ["<|end|>"]})");
  ASSERT_TRUE(syntax.ok()) << syntax.error().to_string();
  struct Case {
    std::string text, content, reasoning;
    std::size_t calls;
  };
  for (const Case& c : std::vector<Case>{
           {"Hello.<|end|>\n", "Hello.", "", 0},
           {"<think>hm<|end|>", "", "hm", 0},
           {R"(Ok.<|calls|>[{"name": "f", "arguments": {}}]<|/calls|><|end|>)", "Ok.", "", 1},
           {"Bye.<|end|>more", "Bye.", "", 0}}) {
    auto r = parse::parse(c.text, *syntax);
    ASSERT_TRUE(r.ok()) << c.text;
    EXPECT_EQ(r->message.content, c.content) << c.text;
    EXPECT_EQ(r->message.reasoning_content, c.reasoning) << c.text;
    EXPECT_EQ(r->message.tool_calls.size(), c.calls) << c.text;
    auto stream = parse::StreamParser::create(*syntax);
    ASSERT_TRUE(stream.ok());
    for (char ch : c.text) stream->feed(std::string_view(&ch, 1));
    stream->finish();
    EXPECT_EQ(parse::message_to_json_text(stream->message()),
              parse::message_to_json_text(r->message))
        << c.text;
  }
}

// Messages routed by recipient (derived for Muse Glimmer-style templates): the message to the
// reasoning recipient is reasoning, a header before a call or an answer is layout, and a header
// that names no recipient stays text. Byte-by-byte streaming gives the same message.
TEST(ParseApi, MessagesRoutedByRecipient) {
  auto syntax = parse::Syntax::from_json_text(R"({"family": "json",
      "sections": [["<call>", "</call>"]], "think_close": "<|eom|>", "dropped": ["<|eom|>"],
      "recipient_open": "to=", "recipient_close": "<|message|>",
      "recipient_header": "<|start|>assistant to=", "reasoning_recipient": "self"})");
  ASSERT_TRUE(syntax.ok()) << syntax.error().to_string();
  const std::string text =
      " to=self<|message|>Think.<|eom|><|start|>assistant to=f<|message|><call>{\"name\": \"f\", "
      "\"arguments\": {\"a\": 1}}</call><|eom|><|start|>assistant to=user<|message|>Done.";
  auto one = parse::parse(text, *syntax);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->message.reasoning_content, "Think.");
  EXPECT_EQ(one->message.content, "Done.");
  ASSERT_EQ(one->message.tool_calls.size(), 1u);
  EXPECT_EQ(one->message.tool_calls[0].arguments, R"({"a": 1})");
  auto stream = parse::StreamParser::create(*syntax);
  ASSERT_TRUE(stream.ok());
  for (char c : text) stream->feed(std::string_view(&c, 1));
  stream->finish();
  EXPECT_EQ(parse::message_to_json_text(stream->message()),
            parse::message_to_json_text(one->message));
  // A direct answer (no reasoning message) is content; a header without a recipient is text.
  auto direct = parse::parse(" to=user<|message|>Hi. <|start|>assistant to=<b> x", *syntax);
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(direct->message.reasoning_content, "");
  EXPECT_EQ(direct->message.content, "Hi. <|start|>assistant to=<b> x");
}

namespace {

// answer_open (a derived field: the opener a template writes before a plain answer) is layout
// only at the output's start, survives the JSON form, and with_calls() keeps it with the text
// syntax's reasoning markers around another syntax's calls.
TEST(ParseApi, AnswerOpenerAndTaughtCalls) {
  auto text = parse::syntax_from_json(Json{{"family", "none"},
                                           {"think_open", "<think>"},
                                           {"think_close", "</think>"},
                                           {"answer_open", "<|channel|>final<|message|>"}});
  ASSERT_TRUE(text) << text.error().message;
  auto back = parse::syntax_from_json(parse::to_json(*text));
  ASSERT_TRUE(back);
  EXPECT_EQ(parse::to_json(*back), parse::to_json(*text));
  auto r = parse::parse("  <|channel|>final<|message|>Hi <|channel|>final<|message|>", *text);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->message.content, "Hi <|channel|>final<|message|>");
  auto hermes = parse::Syntax::named("hermes");
  ASSERT_TRUE(hermes);
  parse::Syntax both = parse::Syntax::with_calls(*text, *hermes);
  EXPECT_EQ(both.name(), "hermes");
  const std::string out =
      "<think>hm</think><tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>";
  auto whole = parse::parse(out, both);
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->message.reasoning_content, "hm");
  ASSERT_EQ(whole->message.tool_calls.size(), 1u);
  EXPECT_EQ(whole->message.tool_calls[0].name, "f");
  // Streamed byte by byte: the opener is still layout.
  const std::string framed = "<|channel|>final<|message|>Hello";
  auto plain = parse::StreamParser::create(*text);
  ASSERT_TRUE(plain);
  for (char c : framed) plain->feed(std::string_view(&c, 1));
  plain->finish();
  EXPECT_EQ(plain->message().content, "Hello");
}

// tool_choice "none": the same syntax reading no calls keeps the reasoning and leaves call markup
// as the content the model wrote (one-shot and streamed); where calls are the format's messages
// (Harmony, Glimmer) there is no such syntax.
TEST(ParseApi, WithoutCallsCallMarkupIsContent) {
  for (const char* name : {"hermes", "qwen3_coder", "deepseek_r1", "kimi_k3"}) {
    auto syntax = parse::Syntax::named(name);
    ASSERT_TRUE(syntax) << name;
    auto none = parse::Syntax::without_calls(*syntax);
    ASSERT_TRUE(none) << name;
    EXPECT_FALSE(none->has_tool_calls()) << name;
  }
  auto hermes = parse::Syntax::named("hermes");
  auto none = parse::Syntax::without_calls(*hermes);
  const std::string call =
      "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>";
  const std::string out = "<think>hm</think>Sure. " + call;
  auto whole = parse::parse(out, *none);
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->message.reasoning_content, "hm");
  EXPECT_EQ(whole->message.content, "Sure. " + call);
  EXPECT_TRUE(whole->message.tool_calls.empty());
  auto streamed = parse::StreamParser::create(*none);
  ASSERT_TRUE(streamed);
  for (char c : out) streamed->feed(std::string_view(&c, 1));
  streamed->finish();
  EXPECT_EQ(streamed->message().content, whole->message.content);
  for (const char* name : {"harmony", "glimmer"}) {
    auto messages = parse::Syntax::named(name);
    ASSERT_TRUE(messages);
    EXPECT_FALSE(parse::Syntax::without_calls(*messages)) << name;
  }
}

}  // namespace

namespace {

// Options::strict: a malformed call is an error naming its byte offset and the family, one-shot
// and streamed; well-formed output and a malformed call's lenient reading are unchanged.
TEST(ParseApi, StrictRefusesMalformedCalls) {
  const std::string broken = R"(<tool_call>{"name": "f", "arguments": {"a": 1}</tool_call>)";
  parse::Options strict;
  strict.strict = true;
  auto lenient = parse::parse(broken, "hermes");
  ASSERT_TRUE(lenient);
  EXPECT_FALSE(lenient->warnings.empty());
  auto refused = parse::parse(broken, "hermes", parse::Tools{}, strict);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().type, "ParseError");
  EXPECT_EQ(refused.error().path, "output");
  EXPECT_NE(refused.error().message.find("at byte 46"), std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find("json family"), std::string::npos);
  auto stream = parse::StreamParser::create("hermes", parse::Tools{}, strict);
  ASSERT_TRUE(stream);
  for (char c : broken) stream->feed(std::string_view(&c, 1));
  stream->finish();
  ASSERT_TRUE(stream->failure());
  EXPECT_EQ(stream->failure()->message, refused.error().message);
  // A call cut off at the end is malformed too; a clean call is not.
  EXPECT_FALSE(parse::parse(R"(<tool_call>{"name": "f", "argu)", "hermes", parse::Tools{}, strict));
  auto clean = parse::parse(R"(<tool_call>{"name": "f", "arguments": {}}</tool_call>)", "hermes",
                            parse::Tools{}, strict);
  ASSERT_TRUE(clean);
  EXPECT_EQ(clean->message.tool_calls.size(), 1u);
  EXPECT_TRUE(parse::is_malformed_call("truncated"));
  EXPECT_FALSE(parse::is_malformed_call("coercion"));
}

// A string value is escaped into the arguments by counting its escaped size first (16 bytes a
// step) and then writing into exactly that room: every byte class (quotes, backslashes, controls
// with and without a short escape, non-ASCII) at every alignment and length, including values
// longer than one 64 KiB piece, must come back as written.
TEST(ParseApi, EscapedStringValuesRoundTrip) {
  const auto tools = parse::Tools::from_json_text(R"([{"type": "function", "function": {"name": "w",
      "parameters": {"type": "object", "properties": {"s": {"type": "string"}}}}}])");
  ASSERT_TRUE(tools);
  const std::string alphabet[] = {"a",  "\"", "\\", "\n",   "\t",       "\x01", "\x1f",
                                  "\b", "\f", "\r", "\x7f", "\xc3\xa9", "/",    " "};
  std::uint32_t seed = 12345;
  auto next = [&] { return seed = seed * 1664525u + 1013904223u; };
  for (std::size_t length : {0u, 1u, 15u, 16u, 17u, 47u, 777u, 70000u, 200000u}) {
    std::string value;
    while (value.size() < length) {
      // Runs of one class, so some 16-byte blocks are all escapes and some have none.
      const std::string& piece = alphabet[next() % std::size(alphabet)];
      for (std::uint32_t run = next() % 40; run > 0; --run) value += piece;
    }
    const std::string out = "<tool_call>\n<function=w>\n<parameter=s>\nv" + value +
                            "v\n</parameter>\n</function>\n</tool_call>";
    auto r = parse::parse(out, "qwen3_coder", *tools);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->message.tool_calls.size(), 1u) << length;
    const auto args = parse::Json::parse(r->message.tool_calls[0].arguments);
    EXPECT_EQ(args["s"].get<std::string>(), "v" + value + "v") << length;
  }
}

// A section opener repeated all through a long output (each a section with no call): the text
// a section holds before a call is looked for within a few KiB, so each costs that window, not
// the rest of the output (200,000 PLaMo 3 openers took over a minute before; now about a second).
// One-shot and streamed the same.
TEST(ParseApi, RepeatedSectionOpenersCostTheirWindow) {
  std::string out = "<|plamo:end_think:plamo|>A";
  for (int i = 0; i < 100000; ++i) out += "<|plamo:begin_tool_requests:plamo|>";
  auto whole = parse::parse(out, "plamo3");
  ASSERT_TRUE(whole);
  EXPECT_TRUE(whole->message.tool_calls.empty());
  EXPECT_EQ(whole->message.content.rfind("A<|plamo:begin_tool_requests:plamo|>", 0), 0u);
  auto stream = parse::StreamParser::create("plamo3");
  ASSERT_TRUE(stream);
  for (std::size_t at = 0; at < out.size(); at += 4096)
    stream->feed(std::string_view(out).substr(at, 4096));
  stream->finish();
  EXPECT_EQ(stream->message().content, whole->message.content);
}

}  // namespace

// Every key of a call object that is not read is named in a warning of its own (a second
// misspelt key was left out without one), up to a cap, then one warning counts the rest.
TEST(ParseApi, EveryUnreadKeyOfACallObjectIsReported) {
  const std::string two =
      R"(<tool_call>{"name": "f", "argumnets": {"a": 1}, "args": {"b": 2}, "arguments": {}})"
      R"(</tool_call>)";
  auto r = parse::parse(two, "hermes", parse::Tools{}, parse::Options{});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->message.tool_calls.size(), 1u);
  ASSERT_EQ(r->warnings.size(), 2u);
  EXPECT_NE(r->warnings[0].message.find("\"argumnets\""), std::string::npos);
  EXPECT_NE(r->warnings[1].message.find("\"args\""), std::string::npos);
  EXPECT_LT(r->warnings[0].offset, r->warnings[1].offset);

  std::string many = R"(<tool_call>{"name": "f")";
  for (int i = 0; i < 20; ++i) many += ", \"k" + std::to_string(i) + "\": " + std::to_string(i);
  many += R"(, "arguments": {}}</tool_call>)";
  r = parse::parse(many, "hermes", parse::Tools{}, parse::Options{});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->warnings.size(), 9u);
  EXPECT_NE(r->warnings[8].message.find("12 more keys"), std::string::npos)
      << r->warnings[8].message;
}
