// The commands: `chatwire survey` over every bundled template (the main job of `make run`)
// prints the survey's tables; `chatwire probe` prints one profile. How fast the survey runs is
// not asserted: a test that times itself fails on a loaded machine, not on slow code.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
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
        "## Template bugs", "## Output parser and round trip"})
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

}  // namespace
