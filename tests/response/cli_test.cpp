// `chatwire parse --response-template FILE` and `--model DIR` (a directory whose
// tokenizer_config.json holds a response_template): the printed message, the streamed events
// and the error for a bad template.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "chatwire/response_json.hpp"

namespace chatwire::response {
namespace {

struct CliRun {
  std::string out;
  int status = -1;
};

CliRun run_cli(const std::string& args, const std::string& input) {
  const std::string in_path = ::testing::TempDir() + "/response_cli_in.txt";
  std::ofstream(in_path, std::ios::binary) << input;
  const std::string cmd = std::string(CHATWIRE_CLI) + " parse " + args + " < " + in_path + " 2>&1";
  CliRun r;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    std::size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    r.status = pclose(p);
  }
  return r;
}

Json templates() {
  std::ifstream in(CHATWIRE_DATA_DIR "/goldens/response/templates.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return Json::parse(ss.str());
}

std::string write(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(ResponseCli, TemplateFileWholeAndStreamed) {
  ASSERT_TRUE(std::filesystem::exists(CHATWIRE_CLI)) << "CLI not built: " << CHATWIRE_CLI;
  const std::string spec = write("gemma4_response.json", templates().at("gemma4").dump());
  const std::string text =
      "<|channel>thought\nhi<channel|><|tool_call>call:foo{a:1,b:<|\"|>bar<|\"|>}<tool_call|>";
  const Json expected = Json::parse(
      R"({"role": "assistant", "thinking": "hi", "tool_calls": [{"type": "function",
          "function": {"name": "foo", "arguments": {"a": 1, "b": "bar"}}}]})");
  CliRun whole = run_cli("--response-template " + spec, text);
  ASSERT_EQ(whole.status, 0) << whole.out;
  EXPECT_EQ(Json::parse(whole.out), expected);

  CliRun streamed = run_cli("--response-template " + spec + " --stream 3", text);
  ASSERT_EQ(streamed.status, 0) << streamed.out;
  std::stringstream lines(streamed.out);
  std::string line, thinking;
  Json last;
  while (std::getline(lines, line)) {
    last = Json::parse(line);
    if (last["type"] == "region_chunk" && last["field"] == "thinking") thinking += last["text"];
  }
  EXPECT_EQ(thinking, "hi");
  EXPECT_EQ(last["type"], "message");
  EXPECT_EQ(last["message"], expected);
}

TEST(ResponseCli, ModelDirectoryTemplateWithPrefix) {
  const std::string dir = ::testing::TempDir() + "/response_model";
  std::filesystem::create_directories(dir);
  write("response_model/tokenizer_config.json",
        Json{{"model_max_length", 8}, {"response_template", templates().at("qwen3")}}.dump());
  const std::string prefix = write("response_prefix.txt", "<|im_start|>assistant\n<think>\n");
  CliRun r = run_cli("--model " + dir + " --prefix " + prefix, "deep</think>");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(Json::parse(r.out), Json::parse(R"({"role": "assistant", "thinking": "deep"})"));
}

TEST(ResponseCli, InvalidTemplateNamesTheKey) {
  const std::string spec =
      write("bad_response.json", R"({"start_anchor": "a", "fields": {"x": {"open": []}}})");
  CliRun r = run_cli("--response-template " + spec, "x");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("fields.x.open"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace chatwire::response
