// End-to-end tests of `chatwire render`: the built binary run as a user would run it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_run.hpp"

namespace {

using namespace chatwire_test;  // NOLINT(google-build-using-namespace): the fixture's helpers
namespace fs = std::filesystem;
using nlohmann::ordered_json;

class RenderCli : public CliTest {};

TEST_F(RenderCli, TemplateAndContext) {
  auto tpl = write(
      "t.jinja",
      "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}{{ strftime_now('%Y') }}");
  auto ctx = write("c.json", R"({"messages": [{"role": "user", "content": "h\u00e9"}]})");
  CliRun r = run("render --template '" + tpl.string() + "' --context '" + ctx.string() +
                 "' --now 2026-08-19T10:00:00");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "user: h\xC3\xA9\n2026");
}

TEST_F(RenderCli, ModelRequestAndModes) {
  auto req = write(
      "r.json",
      R"({"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hel"}]})");
  std::string base =
      "render --model '" + kData + "/models/unicode-tokens' --request '" + req.string() + "'";
  CliRun training = run(base + " --mode training");
  EXPECT_EQ(training.status, 0) << training.err;
  EXPECT_EQ(training.out,
            "\xE2\x96\x81<\xC3\xA9>user\xE2\x94\x82Hi\xF0\x9F\x94\x9A"
            "assistant\xE2\x94\x82Hel\xF0\x9F\x94\x9A");
  CliRun prefill = run(base + " --mode prefill");
  EXPECT_EQ(prefill.status, 0) << prefill.err;
  EXPECT_EQ(prefill.out,
            "\xE2\x96\x81<\xC3\xA9>user\xE2\x94\x82Hi\xF0\x9F\x94\x9A"
            "assistant\xE2\x94\x82Hel");
  CliRun reply = run(base + " --mode reply");
  EXPECT_EQ(reply.status, 0) << reply.err;
  EXPECT_NE(reply.err.find("warning"), std::string::npos);
  CliRun bad_mode = run(base + " --mode generate");
  EXPECT_NE(bad_mode.status, 0);
}

TEST_F(RenderCli, JsonOutputHasBothKindsOfSpan) {
  auto req = write(
      "r.json",
      R"({"messages": [{"role": "user", "content": "\u00e9"}, {"role": "assistant", "content": "ok"}]})");
  auto tpl = write("t.jinja",
                   "{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}{{ "
                   "m.content }}{% endgeneration %}"
                   "{% else %}{{ m.content }}{% endif %}{% endfor %}");
  CliRun r =
      run("render --template '" + tpl.string() + "' --request '" + req.string() + "' --json");
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = ordered_json::parse(r.out);
  EXPECT_EQ(j["output"], "\xC3\xA9ok");
  EXPECT_EQ(j["generation"].dump(), "[[1,3]]");
  EXPECT_EQ(j["generation_bytes"].dump(), "[[2,4]]");
}

TEST_F(RenderCli, BadRequestNamesTheField) {
  auto req =
      write("r.json", R"({"messages": [{"role": "user", "content": "a"}, {"role": "assistant",
      "tool_calls": [{"function": {"arguments": "{}"}}]}]})");
  CliRun r =
      run("render --model '" + kData + "/models/jinja-file' --request '" + req.string() + "'");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("messages[1].tool_calls[0].function.name"), std::string::npos) << r.err;
  auto not_utf8 = write("u.json", "{\"messages\": \"\xFF\"}");
  CliRun u =
      run("render --model '" + kData + "/models/jinja-file' --request '" + not_utf8.string() + "'");
  EXPECT_EQ(u.status, 1);
  EXPECT_NE(u.err.find("UTF-8"), std::string::npos) << u.err;
  CliRun none = run("render --model '" + kData + "/models/no-template' --request '" + req.string() +
                    "' --no-validate");
  EXPECT_EQ(none.status, 1);
  EXPECT_NE(none.err.find("has no chat template"), std::string::npos) << none.err;
}

TEST_F(RenderCli, LimitFlagsReachTheEngine) {
  auto tpl = write("t.jinja", "{% for i in range(1000) %}{{ i }}{% endfor %}");
  CliRun r = run("render --template '" + tpl.string() + "' --max-output-bytes 100");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("LimitError"), std::string::npos) << r.err;
}

TEST_F(RenderCli, BatchAnswersTheOracleGoldensLineByLine) {
  const std::string requests = kData + "/goldens/chat/requests.jsonl";
  CliRun r = run("render --batch", requests, kData);
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> want, got, reqs;
  std::string line;
  std::istringstream w(slurp(kData + "/goldens/chat/results.jsonl")), g(r.out), q(slurp(requests));
  while (std::getline(w, line)) want.push_back(line);
  while (std::getline(g, line)) got.push_back(line);
  while (std::getline(q, line)) reqs.push_back(line);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (got[i] == want[i]) continue;
    auto expected = ordered_json::parse(want[i]);
    auto actual = ordered_json::parse(got[i]);
    EXPECT_FALSE(expected["ok"].get<bool>())
        << "line " << i + 1 << "\n  want: " << want[i] << "\n  got:  " << got[i];
    EXPECT_EQ(actual["id"], expected["id"]);
    EXPECT_EQ(actual["error_type"], expected["error_type"]) << "line " << i + 1;
  }
}

TEST_F(RenderCli, BatchSurvivesBadLines) {
  auto input = write("in.jsonl",
                     "{\"id\": 1, \"template\": \"{{ x }}\", \"context\": {\"x\": 2}}\n"
                     "\n"
                     "not json\n"
                     "[1, 2]\n"
                     "{\"id\": 2, \"template\": \"{% if %}\"}\r\n"
                     "{\"id\": 3, \"template\": \"ok\"}\n");
  CliRun r = run("render --batch", input.string());
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> lines;
  std::istringstream s(r.out);
  std::string line;
  while (std::getline(s, line)) lines.push_back(line);
  ASSERT_EQ(lines.size(), 5u) << r.out;
  EXPECT_EQ(lines[0], R"({"id": 1, "ok": true, "output": "2"})");
  EXPECT_NE(lines[1].find("\"ok\": false"), std::string::npos);
  EXPECT_NE(lines[2].find("\"ok\": false"), std::string::npos);
  EXPECT_NE(lines[3].find("TemplateSyntaxError"), std::string::npos);
  EXPECT_EQ(lines[4], R"({"id": 3, "ok": true, "output": "ok"})");
}

// A co-process that changes a template file between two requests, after reading the answer
// to the first, gets the new content: the batch checks files once per read of input and write
// of output, and the change reached it through them. Lines written ahead in one block (the
// same file twice in a row) share one check.
TEST_F(RenderCli, BatchCoProcessSeesATemplateChangedBetweenLines) {
  auto tpl = write("t.jinja", "one");
  int to_child[2], from_child[2];
  ASSERT_EQ(::pipe(to_child), 0);
  ASSERT_EQ(::pipe(from_child), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(to_child[0], 0);
    ::dup2(from_child[1], 1);
    ::close(to_child[1]);
    ::close(from_child[0]);
    ::execl(kCli.c_str(), kCli.c_str(), "render", "--batch", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  const std::string line = R"({"id": 1, "template_file": ")" + tpl.string() +
                           R"("})"
                           "\n";
  auto send = [&](const std::string& text) {
    ASSERT_EQ(::write(to_child[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  };
  std::string pending;
  auto answer = [&]() {
    while (pending.find('\n') == std::string::npos) {
      char buf[4096];
      ssize_t n = ::read(from_child[0], buf, sizeof buf);
      if (n <= 0) return std::string("<closed>");
      pending.append(buf, static_cast<std::size_t>(n));
    }
    std::string first = pending.substr(0, pending.find('\n'));
    pending.erase(0, first.size() + 1);
    return first;
  };
  send(line + line);
  EXPECT_EQ(answer(), R"({"id": 1, "ok": true, "output": "one"})");
  EXPECT_EQ(answer(), R"({"id": 1, "ok": true, "output": "one"})");
  write("t.jinja", "two!");
  send(line);
  EXPECT_EQ(answer(), R"({"id": 1, "ok": true, "output": "two!"})");
  write("t.jinja", "six!");  // same size: the modification time tells
  fs::last_write_time(tpl, fs::last_write_time(tpl) + std::chrono::seconds(5));
  send(line);
  EXPECT_EQ(answer(), R"({"id": 1, "ok": true, "output": "six!"})");
  ::close(to_child[1]);
  ::close(from_child[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace

// --adapt: an OpenAI request is adapted to what the template renders, and nothing is lost.
// SmolLM3's template drops structured tool calls (the probe measures it), so the call must
// come back as text in the content, and the past turn's reasoning must be gone.
TEST_F(RenderCli, AdaptRendersWhatTheTemplateWouldDrop) {
  CliRun request = run("check --print-request");
  ASSERT_EQ(request.status, 0) << request.err;
  auto req = write("openai.json", request.out);
  const std::string tpl =
      std::string(CHATWIRE_DATA_DIR) + "/templates/HuggingFaceTB--SmolLM3-3B.jinja";
  CliRun raw = run("render --template '" + tpl + "' --request '" + req.string() + "'");
  CliRun r = run("render --template '" + tpl + "' --request '" + req.string() + "' --adapt");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(raw.out.find("QXCITYQX"), std::string::npos)
      << "the raw request already keeps the call";
  for (const char* sentinel : {"QXSYSTEMQX", "QXQUESTIONQX", "QXTOOLDESCQX", "QXCITYQX",
                               "QXRESULTQX", "QXANSWERQX", "QXQUESTION2QX"})
    EXPECT_NE(r.out.find(sentinel), std::string::npos) << sentinel;
  EXPECT_EQ(r.out.find("QXPASTREASONQX"), std::string::npos);
  EXPECT_NE(r.err.find("calls_as_text"), std::string::npos) << r.err;
  EXPECT_EQ(run("render --adapt --request '" + req.string() + "'").status, 2);
}

// A template file has no model, so its adapted context carries no special tokens: the probe
// measures with stand-ins (<s>, </s>), which are no model's and must not reach the prompt (they
// did: Llama 3.1's prompt began with <s>). --tokenizer DIR gives the model's; a template that
// cannot render without them says how to give them.
TEST_F(RenderCli, AdaptedTemplateFileRendersWithTheTokensGiven) {
  auto req = write("hi.json", R"({"messages": [{"role": "user", "content": "hi"}]})");
  const std::string data = CHATWIRE_DATA_DIR;
  const std::string llama = data + "/templates/meta-llama--Llama-3.1-8B-Instruct.jinja";
  CliRun bare = run("render --adapt --template '" + llama + "' --request '" + req.string() + "'");
  ASSERT_EQ(bare.status, 0) << bare.err;
  EXPECT_TRUE(bare.out.starts_with("<|start_header_id|>system")) << bare.out;
  CliRun plain =
      run("render --template '" + llama + "' --request '" + req.string() + "' --mode reply");
  EXPECT_EQ(plain.out, bare.out);  // as render --template renders it
  CliRun context = run("adapt --template '" + llama + "' --request '" + req.string() + "'");
  ASSERT_EQ(context.status, 0) << context.err;
  EXPECT_FALSE(ordered_json::parse(context.out)["context"].contains("bos_token")) << context.out;
  const std::string tokenizer = " --tokenizer '" + data + "/tokenizers/llama3_1'";
  for (const std::string command : {"render --adapt", "adapt --render"}) {
    CliRun given =
        run(command + " --template '" + llama + "' --request '" + req.string() + "'" + tokenizer);
    ASSERT_EQ(given.status, 0) << given.err;
    EXPECT_TRUE(given.out.starts_with("<|begin_of_text|><|start_header_id|>system")) << given.out;
  }
  // --tokenizer beside --model (which has its own tokens) is refused, as is --tokenizer alone.
  EXPECT_EQ(run("render --adapt --model '" + data + "/tokenizers/llama3_1' --request '" +
                req.string() + "'" + tokenizer)
                .status,
            2);
  EXPECT_EQ(
      run("render --template '" + llama + "' --context '" + req.string() + "'" + tokenizer).status,
      2);
  const std::string monarch = data + "/templates/mlabonne--AlphaMonarch-7B.jinja";
  CliRun needs =
      run("render --adapt --template '" + monarch + "' --request '" + req.string() + "'");
  EXPECT_EQ(needs.status, 1);
  EXPECT_NE(needs.err.find("'bos_token' is undefined"), std::string::npos) << needs.err;
  EXPECT_NE(needs.err.find("give --tokenizer DIR"), std::string::npos) << needs.err;
}
