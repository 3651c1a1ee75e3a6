// End-to-end tests of the commands' handling of what a user gets wrong: files that are not what
// an option asks for, numbers out of range, options that mean nothing where they are given, and
// errors that must name the field or file. Each refusal is exit status 2 (usage) or 1 (input).
#include <string>
#include <vector>

#include "cli/cli_run.hpp"

namespace {

using namespace chatwire_test;  // NOLINT(google-build-using-namespace): the fixture's helpers

class CommandsCli : public CliTest {
 protected:
  const std::string qwen3_ = kData + "/models/endpoint/qwen3";
};

// A path quoted for the shell (built by appending: GCC 12 at -O3 warns of a bogus overflow on
// `"'" + path + "'"`).
std::string quoted(const std::string& path) {
  std::string out(1, '\'');
  out += path;
  out += '\'';
  return out;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A directory given as a template file is an error naming it, in every command that reads one
// (it had been read as an empty template, and probe, check and parse succeeded on it).
TEST_F(CommandsCli, ADirectoryIsNoTemplateFile) {
  const std::string dir = quoted(dir_.string());
  auto output = write("o.txt", "hello");
  auto request = write("r.json", R"({"messages": [{"role": "user", "content": "hi"}]})");
  for (const std::string& args :
       {"probe --template " + dir, "check --template " + dir + " --card", "parse --template " + dir,
        "adapt --template " + dir + " --request '" + request.string() + "'",
        "render --template " + dir}) {
    CliRun r = run(args, output.string());
    EXPECT_EQ(r.status, 1) << args << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.err, "Is a directory")) << args << "\n" << r.err;
  }
}

// A template file's syntax error names the file in every command that reads one (probe, check
// and parse gave only the line and column).
TEST_F(CommandsCli, ATemplatesSyntaxErrorNamesItsFile) {
  auto bad = write("bad.jinja", "{% if %}");
  auto request = write("r.json", R"({"messages": [{"role": "user", "content": "hi"}]})");
  const std::string file = quoted(bad.string());
  for (const std::string& args :
       {"probe --template " + file, "check --template " + file,
        "check --template " + file + " --card", "parse --template " + file,
        "adapt --template " + file + " --request '" + request.string() + "'"}) {
    CliRun r = run(args, request.string());
    EXPECT_EQ(r.status, 1) << args;
    EXPECT_TRUE(has(r.err, "TemplateSyntaxError: " + bad.string() + ": ")) << args << "\n" << r.err;
  }
}

// check --all on a directory with nothing to check is no pass: exit 1 naming it (it printed an
// empty table and exited 0, so a mistyped directory passed).
TEST_F(CommandsCli, CheckAllOfNothingIsAFailure) {
  const auto empty = dir_ / "empty";
  fs::create_directories(empty);
  CliRun r = run("check --all " + quoted(empty.string()));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "holds no .jinja file")) << r.err;
}

// A template that never ends (a device) stops at the file limit with an error naming the file.
TEST_F(CommandsCli, AnEndlessTemplateStopsAtTheFileLimit) {
  CliRun r = run("probe --template /dev/zero");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(has(r.err, "/dev/zero: max_file_bytes")) << r.err;
}

// Ids are taken as tokenizers takes them: integers in 0..2^32-1; the others are refused with the
// element named, not converted (4294967297 had become 1, 1.7 had become 1).
TEST_F(CommandsCli, DecodeRefusesWhatIsNoTokenId) {
  for (const char* ids : {"[4294967297]", "[5, 1.7]", "[-1]", "{\"a\": 1}"}) {
    auto input = write("ids.json", ids);
    CliRun r = run("tokenize --tokenizer '" + qwen3_ + "' --decode", input.string());
    EXPECT_EQ(r.status, 1) << ids;
    EXPECT_TRUE(has(r.err, "standard input")) << ids << ": " << r.err;
    EXPECT_EQ(r.out, "") << ids;
  }
  auto second = write("ids.json", "[5, 1.7]");
  EXPECT_TRUE(has(run("tokenize --tokenizer '" + qwen3_ + "' --decode", second.string()).err,
                  "standard input[1]: 1.7 is not a token id"));
  auto good = write("ids.json", "[14990, 1879]");
  CliRun ok = run("tokenize --tokenizer '" + qwen3_ + "' --decode", good.string());
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(ok.out, "\"hello world\"\n");
}

// Each batch line's result has an id (null where the line gives none), a field of the wrong type
// is named, and the command's --tokenizer and --special are the lines' defaults.
TEST_F(CommandsCli, TokenizeBatchLinesNameWhatIsWrong) {
  auto input = write("in.jsonl",
                     "{\"id\": 1, \"text\": \"hello world\", \"add_special_tokens\": \"yes\"}\n"
                     "not json\n"
                     "{\"id\": 3, \"ids\": [14990, -2]}\n"
                     "{\"id\": 4, \"text\": \"hello world\"}\n"
                     "{\"id\": 5, \"ids\": [14990, 1879]}\n"
                     "{\"id\": 6, \"text\": \"hi\", \"offsets\": true}\n"
                     "{\"id\": 7, \"text\": \"hi\", \"ad_special_tokens\": true}\n");
  CliRun r = run("tokenize --batch --tokenizer '" + qwen3_ + "'", input.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<ordered_json> lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 7u) << r.out;
  // A key the protocol does not have is refused, not ignored.
  EXPECT_TRUE(has(lines[5]["message"].get<std::string>(), "offsets: not available with --batch"));
  EXPECT_TRUE(has(lines[6]["message"].get<std::string>(), "ad_special_tokens: not a field"));
  for (const auto& line : lines) EXPECT_TRUE(line.contains("id")) << line.dump();
  EXPECT_EQ(lines[0]["id"], 1);
  EXPECT_FALSE(lines[0]["ok"].get<bool>());
  EXPECT_TRUE(has(lines[0]["message"].get<std::string>(), "add_special_tokens: expected a boolean"))
      << lines[0].dump();
  EXPECT_TRUE(lines[1]["id"].is_null());
  EXPECT_FALSE(lines[1]["ok"].get<bool>());
  EXPECT_TRUE(has(lines[2]["message"].get<std::string>(), "ids[1]: -2 is not a token id"));
  EXPECT_EQ(lines[3]["ids"], ordered_json::parse("[14990, 1879]"));
  EXPECT_EQ(lines[4]["text"], "hello world");
}

// A count or limit cannot be negative: CLI11 had read -3 as 2^64-3 (`--repeat -3` never ended,
// `--max-output-bytes -1` removed the limit).
TEST_F(CommandsCli, NegativeCountsAreUsageErrors) {
  auto tpl = write("t.jinja", "x");
  for (const std::string& args : {std::string("render --batch --repeat -3"),
                                  "render --template '" + tpl.string() + "' --max-output-bytes -1",
                                  std::string("tokenize --batch --max-line-bytes -1"),
                                  std::string("parse --dialect hermes --stream -1")}) {
    CliRun r = run(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_TRUE(has(r.err, "expected a non-negative integer")) << args << "\n" << r.err;
  }
}

// Usage errors are status 2 whatever CLI11 reports (105, 106, 109 before), and an unknown
// command is named.
TEST_F(CommandsCli, UsageErrorsAreStatusTwo) {
  CliRun unknown = run("nosuchcmd");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_TRUE(has(unknown.err, "unknown command 'nosuchcmd'")) << unknown.err;
  EXPECT_EQ(run("adapt --model '" + qwen3_ + "'").status, 2);         // --request missing
  EXPECT_EQ(run("render --template x --mode sideways").status, 2);    // not a mode
  EXPECT_EQ(run("tokenize --tokenizer x --no-such-flag").status, 2);  // unknown flag
  EXPECT_EQ(run("adapt --model x --request y --call-syntax nosuch").status, 2);
  EXPECT_EQ(run("--help").status, 0);
}

// An option the way a command runs does not read is refused, not ignored.
TEST_F(CommandsCli, OptionsThatWouldBeIgnoredAreRefused) {
  auto tpl = write("t.jinja", "{{ strftime_now('%Y') }}");
  auto request = write("r.json", R"({"messages": [{"role": "user", "content": "hi"}]})");
  auto context = write("c.json", "{}");
  const std::string t = quoted(tpl.string()), r = quoted(request.string());
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"render --batch --now 2020-01-01T00:00:00", "--now is not used with --batch"},
      {"render --template " + t + " --repeat 2", "--repeat is not used with"},
      {"render --template " + t + " --request " + r + " --context '" + context.string() + "'",
       "--context is not used with a chat request"},
      {"render --model '" + qwen3_ + "' --template " + t + " --request " + r,
       "give one of --model DIR and --template FILE"},
      {"render --template " + t + " --request " + r + " --tokenizer '" + qwen3_ + "'",
       "--tokenizer is read with --tokenize"},
      {"parse --explain --dialect hermes", "--explain needs --template or --model"},
      {"parse --batch --dialect hermes", "--dialect is not used with --batch"},
      {"parse --dialect hermes --prefix " + r, "--prefix is read with a response template"},
      {"tokenize --tokenizer '" + qwen3_ + "' --stream",
       "--stream and --skip-special need --decode"},
      {"tokenize --batch --offsets", "--offsets is not available with --batch"},
      {"tokenize --batch --decode", "--decode is not used with --batch"},
      {"tokenize --batch --max-input-bytes 3", "--max-input-bytes is not used with --batch"},
      {"tokenize --tokenizer '" + qwen3_ + "' --max-line-bytes 9",
       "--max-line-bytes is read with --batch"},
      {"parse --dialect hermes --max-line-bytes 9", "--max-line-bytes is read with --batch"},
  };
  for (const auto& [args, message] : refused) {
    CliRun run_result = run(args);
    EXPECT_EQ(run_result.status, 2) << args << "\n" << run_result.err;
    EXPECT_TRUE(has(run_result.err, message)) << args << "\n" << run_result.err;
  }
}

// A template given with --template and --tokenize sees the tokenizer directory's special tokens,
// as apply_chat_template(chat_template=...) passes the tokenizer's (zephyr's eos_token was
// undefined).
TEST_F(CommandsCli, TokenizeWithATemplateFileSeesTheTokenizersSpecialTokens) {
  auto request = write("r.json", R"({"messages": [{"role": "user", "content": "hi"}]})");
  CliRun r = run("render --template '" + kData +
                 "/templates/HuggingFaceH4--zephyr-7b-beta.jinja' --request '" + request.string() +
                 "' --tokenizer '" + qwen3_ + "' --tokenize --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto out = ordered_json::parse(r.out);
  EXPECT_EQ(out["output"], "<|user|>\nhi<|im_end|>\n") << r.out;
}

// adapt answers every failure with an {"error"} object on standard output, naming the file of a
// request that is not JSON; an assistant turn without content (OpenAI allows it beside
// tool_calls) is null content, not a failure; an unknown call syntax is refused.
TEST_F(CommandsCli, AdaptErrorsAreJsonAndAbsentContentIsNull) {
  auto bad = write("bad.json", "{\"model\":");
  CliRun r = run("adapt --model '" + qwen3_ + "' --request '" + bad.string() + "'");
  EXPECT_EQ(r.status, 1);
  const auto error = ordered_json::parse(r.out);
  EXPECT_EQ(error["error"]["type"], "JSONDecodeError");
  CliRun missing =
      run("adapt --model '" + qwen3_ + "' --request '" + (dir_ / "none.json").string() + "'");
  EXPECT_EQ(missing.status, 1);
  EXPECT_EQ(ordered_json::parse(missing.out)["error"]["path"], (dir_ / "none.json").string());
  EXPECT_TRUE(has(error["error"]["message"].get<std::string>(), bad.string()));
  auto no_content = write("nc.json", R"({"messages": [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
      "function": {"name": "f", "arguments": "{\"a\": 1}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "ok"}],
    "tools": [{"type": "function", "function": {"name": "f",
      "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}}]})");
  CliRun adapted =
      run("adapt --model '" + qwen3_ + "' --request '" + no_content.string() + "' --render");
  ASSERT_EQ(adapted.status, 0) << adapted.out << adapted.err;
  EXPECT_TRUE(has(adapted.out, "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}"))
      << adapted.out;
}

// parse --batch checks chunk_sizes before parsing (a bad one fails the line whole) and skips a
// blank line; a tools file that is not JSON is named with the place of the error.
TEST_F(CommandsCli, ParseBatchAndToolsErrors) {
  auto input =
      write("in.jsonl",
            "{\"id\": 1, \"dialect\": \"hermes\", \"input\": \"x\", \"chunk_sizes\": 2}\n"
            "   \n"
            "{\"id\": 2, \"dialect\": \"hermes\", \"input\": \"x\", \"chunk_sizes\": [0]}\n"
            "{\"id\": 3, \"dialect\": \"hermes\", \"input\": \"x\", \"chunk_sizes\": [1]}\n");
  CliRun r = run("parse --batch", input.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<ordered_json> lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0]["error"]["message"], "chunk_sizes: expected a list of positive integers");
  EXPECT_FALSE(lines[1].contains("message")) << lines[1].dump();
  EXPECT_EQ(lines[1]["error"]["message"], "chunk_sizes[0]: expected a positive integer");
  EXPECT_TRUE(lines[2]["ok"].get<bool>());
  EXPECT_TRUE(lines[2]["stream_consistent"].get<bool>());
  auto tools = write("tools.json", "[1,");
  auto output = write("o.txt", "hi");
  CliRun bad = run("parse --dialect hermes --tools '" + tools.string() + "'", output.string());
  EXPECT_EQ(bad.status, 1);
  EXPECT_TRUE(has(bad.err, tools.string() + ": not valid JSON")) << bad.err;
  EXPECT_TRUE(has(bad.err, "line 1, column 4")) << bad.err;
}

// A request key render does not read is named (a vLLM-style chat_template_kwargs left thinking on
// without a word); the render is the oracle's, which ignores it.
TEST_F(CommandsCli, UnreadRequestKeysAreNamed) {
  auto request = write("r.json", R"({"messages": [{"role": "user", "content": "hi"}],
      "chat_template_kwargs": {"enable_thinking": false}, "kwargs": {}})");
  CliRun r = run("render --model '" + qwen3_ + "' --request '" + request.string() + "'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "key \"chat_template_kwargs\" is not read")) << r.err;
  EXPECT_FALSE(has(r.err, "\"kwargs\" is not read")) << r.err;
}

// A file's errors name the file: a context that is not JSON, a survey of a path that is none.
TEST_F(CommandsCli, ErrorsNameTheirFile) {
  auto tpl = write("t.jinja", "{{ x }}");
  auto context = write("c.json", "{\"x\":");
  CliRun r = run("render --template '" + tpl.string() + "' --context '" + context.string() + "'");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(has(r.err, context.string() + ": JSONDecodeError")) << r.err;
  auto bad_text = write("t.txt",
                        "ab\xff"
                        "cd");
  CliRun bad = run("tokenize --tokenizer '" + qwen3_ + "'", bad_text.string());
  EXPECT_EQ(bad.status, 1);
  EXPECT_TRUE(has(bad.err, "not valid UTF-8 at byte 2")) << bad.err;
  CliRun survey = run("survey '" + (dir_ / "nothing").string() + "'");
  EXPECT_EQ(survey.status, 1);
  EXPECT_TRUE(has(survey.err, "nothing: no such file or directory")) << survey.err;
}

// `--thinking` replaces the reasoning state the template's default prompt leaves: Nemotron Nano
// 9B v2's prompt opens reasoning (`<think>\n`), and with thinking off an answer is content (it had
// been read as reasoning, the template's default taking precedence).
TEST_F(CommandsCli, ThinkingOffReplacesThePromptsOpenBlock) {
  const std::string tpl =
      "--template '" + kData + "/templates/nvidia--NVIDIA-Nemotron-Nano-9B-v2.jinja'";
  auto output = write("o.txt", "The answer is 4.");
  CliRun def = run("parse " + tpl, output.string());
  ASSERT_EQ(def.status, 0) << def.err;
  EXPECT_EQ(json_lines(def.out).at(0).value("reasoning_content", ""), "The answer is 4.");
  CliRun off = run("parse " + tpl + " --thinking off", output.string());
  ASSERT_EQ(off.status, 0) << off.err;
  EXPECT_EQ(json_lines(off.out).at(0).value("content", ""), "The answer is 4.") << off.out;
  EXPECT_FALSE(json_lines(off.out).at(0).contains("reasoning_content")) << off.out;
}

// The card says where a prompt that opens reasoning closes it again (EXAONE 4, thinking off:
// `<think>\n\n</think>`): such a prompt leaves nothing open, and the parser reads it so.
TEST_F(CommandsCli, CardSaysThePromptClosesTheBlockItOpens) {
  const std::string tpl = "--template '" + kData + "/templates/";
  CliRun exaone = run("check " + tpl + "LGAI-EXAONE--EXAONE-4.0-1.2B.jinja' --card");
  ASSERT_EQ(exaone.status, 0) << exaone.err;
  EXPECT_TRUE(has(exaone.out, "the prompt opens reasoning: yes (and closes it: an empty block)"))
      << exaone.out;
  CliRun qwq = run("check " + tpl + "Qwen--QwQ-32B.jinja' --card");
  ASSERT_EQ(qwq.status, 0) << qwq.err;
  EXPECT_TRUE(has(qwq.out, "the prompt opens reasoning: yes |")) << qwq.out;
}

// Output that never reached its file (here /dev/full: no space) is a failure, exit 1 with a
// message, for the buffered writer (render, parse, tokenize) and printf/iostream (probe) alike:
// a script must not take a lost result for a whole one.
TEST_F(CommandsCli, AFailedWriteToStandardOutputIsAFailure) {
  const fs::path context =
      write("ctx.json", R"({"messages": [{"role": "user", "content": "hi"}]})");
  const std::string tmpl = kData + "/templates/Qwen--Qwen3-0.6B.jinja";
  for (const std::string& args :
       {"render --template '" + tmpl + "' --context '" + context.string() + "'",
        "probe --template '" + tmpl + "'"}) {
    const fs::path err = dir_ / "stderr";
    const int raw =
        std::system(("'" + kCli + "' " + args + " >/dev/full 2>'" + err.string() + "'").c_str());
    ASSERT_TRUE(WIFEXITED(raw)) << args;
    EXPECT_EQ(WEXITSTATUS(raw), 1) << args;
    EXPECT_NE(slurp(err).find("could not write standard output"), std::string::npos) << args;
    EXPECT_EQ(run(args).status, 0) << args;  // the same command to a file succeeds
  }
}

// A checkpoint's tokenizer_config.json holds values the response template is not concerned with:
// transformers writes model_max_length 1000000000000000019884624838656, beyond 64 bits. `parse
// --model` on such a directory without a response template falls through to the derived parser,
// and one with a response template reads it, where the whole config was read strictly and
// refused.
TEST_F(CommandsCli, AResponseTemplateIsReadBesideAConfigsBigIntegers) {
  const fs::path hello = write("hello.txt", "hello");
  const auto plain = run("parse --model '" + kData + "/models/endpoint/llama3_1'", hello.string());
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(ordered_json::parse(plain.out)["content"], "hello");
  const ordered_json spec =
      ordered_json::parse(slurp(kData + "/goldens/response/templates.json"))["qwen3"];
  const fs::path config =
      write("tokenizer_config.json",
            R"({"model_max_length": 1000000000000000019884624838656, "response_template": )" +
                spec.dump() + "}");
  const fs::path output = write("out.txt", "<think>\nR\n</think>\n\nA");
  const auto read = run("parse --response-template '" + config.string() + "' --prefix /dev/null",
                        output.string());
  ASSERT_EQ(read.status, 0) << read.err;
  // As the same template from a file of its own.
  const fs::path alone = write("spec.json", spec.dump());
  const auto same =
      run("parse --response-template '" + alone.string() + "' --prefix /dev/null", output.string());
  ASSERT_EQ(same.status, 0) << same.err;
  EXPECT_EQ(read.out, same.out);
  EXPECT_NE(read.out.find("\"thinking\":\"R\""), std::string::npos) << read.out;
}

// The parser comes from one source: a dialect, a template or a model directory, never two
// (one was ignored, or a dialect's syntax mixed with a template's options).
TEST_F(CommandsCli, OneSourceOfTheParser) {
  const std::string tmpl = "--template '" + kData + "/templates/Qwen--Qwen3-0.6B.jinja'";
  const std::string model = "--model '" + kData + "/models/endpoint/gpt-oss'";
  for (const std::string& args :
       {"parse " + tmpl + " " + model, "parse " + tmpl + " --dialect hermes",
        "parse --dialect hermes " + model}) {
    const auto r = run(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find("excludes"), std::string::npos) << r.err;
  }
}

// parse --batch: a bad line gets an answer saying where it goes wrong, as render --batch and
// tokenize --batch say it, and the batch goes on.
TEST_F(CommandsCli, ParseBatchSaysWhereABadLineGoesWrong) {
  const fs::path in = write("in.jsonl",
                            "garbage\n{\"id\":13,\"dialect\":\"hermes\",\"input\":\"a\xff\"}\n[1]\n"
                            "{\"id\":1,\"dialect\":\"hermes\",\"input\":\"hi\"}\n");
  const auto r = run("parse --batch", in.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_NE(lines[0]["error"]["message"].get<std::string>().find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(lines[0]["error"]["message"].get<std::string>().find("column 1"), std::string::npos);
  EXPECT_EQ(lines[1]["error"]["message"], "request line is not valid UTF-8 at byte 38");
  EXPECT_EQ(lines[2]["error"]["message"], "request line is not a JSON object");
  EXPECT_EQ(lines[3]["ok"], true);
}

// --now is checked before anything renders: a template that never calls strftime_now would not
// notice a bad clock, and the probe measured its failure as the template's (exit 0, renders: no).
TEST_F(CommandsCli, ABadClockIsAUsageError) {
  const std::string tmpl = "'" + kData + "/templates/meta-llama--Llama-3.2-3B-Instruct.jinja'";
  const fs::path context =
      write("ctx.json", R"({"messages": [{"role": "user", "content": "hi"}]})");
  for (const std::string& args :
       {"probe --template " + tmpl + " --now garbage",
        "render --template " + tmpl + " --context '" + context.string() + "' --now 2026-13-40"}) {
    const auto r = run(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.out;
    EXPECT_NE(r.err.find("--now: not a clock strftime_now reads"), std::string::npos) << r.err;
  }
  const auto good = run("render --template " + tmpl + " --context '" + context.string() +
                        "' --now 2026-08-19T10:00:00");
  ASSERT_EQ(good.status, 0) << good.err;
  EXPECT_NE(good.out.find("19 Aug 2026"), std::string::npos);
}

}  // namespace
