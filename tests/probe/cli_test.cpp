// The commands: `chatwire survey` over every bundled template (the main job of `make run`)
// prints the survey's tables; `chatwire probe` prints one profile. How fast the survey runs is
// not asserted: a test that times itself fails on a loaded machine, not on slow code.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace {

struct CommandResult {
  int status = -1;
  std::string out;
};

CommandResult run(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[65536];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  r.status = pclose(pipe);
  return r;
}

bool have_cli() {
  return std::filesystem::exists(CHATWIRE_CLI);
}

TEST(ProbeCli, SurveyOfAllBundledTemplates) {
  ASSERT_TRUE(have_cli()) << "the CLI is not built: " << CHATWIRE_CLI;
  CommandResult r =
      run(std::string(CHATWIRE_CLI) + " survey " + CHATWIRE_DATA_DIR + "/templates --quiet");
  EXPECT_EQ(r.status, 0);
  for (const char* table :
       {"## Turn frames by family", "## Reasoning", "## Where tool definitions go",
        "## Call syntax", "## Tool-result role", "## Input conventions", "## Silent failures",
        "## Template bugs", "## Assistant masks", "## Thinking controls", "## Documents (RAG)",
        "## Multimodal content parts", "## Date dependence", "## bos_token written by the template",
        "## Output parser and round trip"})
    EXPECT_NE(r.out.find(table), std::string::npos) << table;
  std::size_t bundled = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(CHATWIRE_DATA_DIR) + "/templates"))
    bundled += entry.path().extension() == ".jinja";
  ASSERT_GT(bundled, 0u);
  EXPECT_NE(r.out.find(std::to_string(bundled) + " templates"), std::string::npos) << bundled;
}

TEST(ProbeCli, ProbeJsonHasTheIssueKeys) {
  ASSERT_TRUE(have_cli()) << "the CLI is not built: " << CHATWIRE_CLI;
  CommandResult r = run(std::string(CHATWIRE_CLI) + " probe --json --template " +
                        CHATWIRE_DATA_DIR + "/templates/Qwen--Qwen3-0.6B.jinja");
  ASSERT_EQ(r.status, 0);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["tools"]["definitions_location"], "system");
  EXPECT_EQ(j["tool_results"]["role"], "user");
  EXPECT_EQ(j["frame"]["family"], "ChatML");
  for (const char* key : {"arguments_dict", "arguments_string", "long_call_id", "flat_tools"})
    EXPECT_TRUE(j["conventions"].contains(key)) << key;
  // The output parser derived from the template and its round-trip verdict.
  EXPECT_EQ(j["parser"]["verdict"], "read back");
  EXPECT_EQ(j["parser"]["syntax"]["family"], "json");
  EXPECT_EQ(j["parser"]["calls_read_back"], true);
}

TEST(ProbeCli, ProbeNeedsExactlyOneInput) {
  ASSERT_TRUE(have_cli()) << "the CLI is not built: " << CHATWIRE_CLI;
  CommandResult r = run(std::string(CHATWIRE_CLI) + " probe 2>/dev/null");
  EXPECT_NE(r.status, 0);
}

// Issue 21: the capability card of a model directory, as JSON and Markdown files: every row,
// the examples rendered with the model's template, the parser and its round-trip verdict.
TEST(ProbeCli, CapabilityCardOfAModel) {
  ASSERT_TRUE(have_cli()) << "the CLI is not built: " << CHATWIRE_CLI;
  const std::filesystem::path out =
      std::filesystem::temp_directory_path() / ("chatwire-card-" + std::to_string(getpid()));
  CommandResult r = run(std::string(CHATWIRE_CLI) + " check --model " + CHATWIRE_DATA_DIR +
                        "/models/hf-qwen3 --card --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream json_file(out.string() + ".json"), md_file(out.string() + ".md");
  ASSERT_TRUE(json_file && md_file);
  auto card = nlohmann::ordered_json::parse(json_file);
  std::string md((std::istreambuf_iterator<char>(md_file)), std::istreambuf_iterator<char>());
  std::filesystem::remove(out.string() + ".json");
  std::filesystem::remove(out.string() + ".md");
  std::map<std::string, nlohmann::ordered_json> rows;
  for (const auto& row : card["rows"]) rows[row["row"]] = row;
  for (const char* row :
       {"turn_frame", "system_role", "consecutive_roles", "long_conversation", "prefill", "tools",
        "input_conventions", "reasoning", "thinking_controls", "multimodal", "documents",
        "assistant_masks", "date", "bos_token", "parser"}) {
    ASSERT_TRUE(rows.count(row)) << row;
    EXPECT_TRUE(rows[row]["verdict"].is_string()) << row;
    EXPECT_NE(md.find("| " + std::string(row) + " |"), std::string::npos) << row;
  }
  // The compatibility examples the issue names, rendered (or refused with the error).
  for (const char* row :
       {"turn_frame", "system_role", "long_conversation", "prefill", "tools", "multimodal"}) {
    const auto& example = rows[row]["example"];
    ASSERT_TRUE(example.contains("messages")) << row;
    EXPECT_TRUE(example["rendered"].is_string() || example.contains("error")) << row;
  }
  EXPECT_TRUE(rows["prefill"]["example"]["rendered"].get<std::string>().ends_with("Waves fold"));
  EXPECT_NE(rows["tools"]["example"]["rendered"].get<std::string>().find("<tool_response>"),
            std::string::npos);
  EXPECT_EQ(rows["multimodal"]["example"].contains("error"), true);  // Qwen3 takes no parts
  EXPECT_EQ(rows["parser"]["verdict"], "read back");
  EXPECT_EQ(card["parser"]["calls_read_back"], true);
  EXPECT_EQ(card["profile"]["frame"]["family"], "ChatML");
  bool read_as_result = false;
  for (const auto& bug : card["template_bugs"])
    read_as_result |= bug["kind"] == "user_message_read_as_tool_result";
  EXPECT_TRUE(read_as_result);
}

// The card of a template file on stdout: the Falcon3-style bug with its rendered evidence.
TEST(ProbeCli, CapabilityCardShowsTemplateBugs) {
  ASSERT_TRUE(have_cli()) << "the CLI is not built: " << CHATWIRE_CLI;
  CommandResult r = run(std::string(CHATWIRE_CLI) + " check --card --template " +
                        CHATWIRE_DATA_DIR + "/goldens/probe/crafted/falcon3-style.jinja");
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("**tool_result_under_assistant**"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("<|assistant|>\n<tool_response>\n"), std::string::npos) << r.out;
  CommandResult bad = run(std::string(CHATWIRE_CLI) + " check --card 2>/dev/null");
  EXPECT_EQ(WEXITSTATUS(bad.status), 2);
}

// The survey's bug table names each bug with its rendered evidence (the crafted templates have
// one kind each).
TEST(ProbeCli, SurveyBugTableShowsEvidence) {
  ASSERT_TRUE(have_cli()) << "the CLI is not built: " << CHATWIRE_CLI;
  CommandResult r = run(std::string(CHATWIRE_CLI) + " survey " + CHATWIRE_DATA_DIR +
                        "/goldens/probe/crafted --quiet");
  ASSERT_EQ(r.status, 0);
  for (const char* row :
       {"| falcon3-style | tool_result_under_assistant | result header `<\\|assistant\\|>\\n`: "
        "`<\\|assistant\\|>\\n<tool_response>\\nZXRESULTXZ 22C and sunny` |",
        "| result-without-role | tool_result_without_role | the result right after the previous "
        "turn's end: `<\\|im_end\\|>\\nZXRESULTXZ 22C and sunny` |",
        "| marker-mismatch | instruction_history_marker_mismatch | renders `<｜tool_call_begin>`"})
    EXPECT_NE(r.out.find(row), std::string::npos) << row << "\n" << r.out;
}

}  // namespace
