// Hostile request lines: truncated, byte-flipped and type-swapped versions of every golden
// request go through the batch protocol. Each must give exactly one well-formed result line
// and nothing may crash (this suite also runs under ASan+UBSan).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "chatwire/chat.hpp"

namespace {

using nlohmann::ordered_json;

std::vector<std::string> golden_requests() {
  std::ifstream in(std::string(CHATWIRE_DATA_DIR) + "/goldens/chat/requests.jsonl",
                   std::ios::binary);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

void expect_one_result(chatwire::chat::BatchRenderer& renderer, const std::string& line) {
  std::string result = renderer.render_line(line);
  if (result.empty()) return;  // a blank line is skipped, as the oracle does
  EXPECT_EQ(result.find('\n'), std::string::npos) << line.substr(0, 200);
  auto parsed = ordered_json::parse(result, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << result.substr(0, 300);
  ASSERT_TRUE(parsed.is_object());
  ASSERT_TRUE(parsed.contains("ok"));
  if (!parsed["ok"].get<bool>()) {
    EXPECT_FALSE(parsed["error_type"].get<std::string>().empty());
    EXPECT_FALSE(parsed["message"].get<std::string>().empty()) << result;
  }
}

// Replaces values inside the request by values of other JSON types.
void swap_types(ordered_json& j, std::mt19937& rng, int& budget) {
  static const ordered_json kReplacements[] = {nullptr,
                                               0,
                                               -1,
                                               1.5,
                                               true,
                                               "",
                                               "x",
                                               ordered_json::array(),
                                               ordered_json::object(),
                                               ordered_json::array({1, "a"})};
  if (budget <= 0) return;
  if (j.is_object() || j.is_array()) {
    for (auto& child : j) {
      if (budget <= 0) return;
      if (rng() % 7 == 0) {
        child = kReplacements[rng() % std::size(kReplacements)];
        --budget;
      } else {
        swap_types(child, rng, budget);
      }
    }
  }
}

TEST(ChatRobustness, MutatedRequestsNeverCrash) {
  chatwire::chat::BatchOptions options;
  options.base_dir = CHATWIRE_DATA_DIR;
  options.limits.max_steps = 200'000;
  chatwire::chat::BatchRenderer renderer(options);
  std::mt19937 rng(20260819);
  std::size_t cases = 0;
  for (const std::string& line : golden_requests()) {
    // Truncations at a few positions.
    for (std::size_t cut : {line.size() / 3, line.size() / 2, line.size() - 1}) {
      expect_one_result(renderer, line.substr(0, cut));
      ++cases;
    }
    // Byte flips (also produce invalid UTF-8).
    std::string flipped = line;
    for (int k = 0; k < 3; ++k) flipped[rng() % flipped.size()] = static_cast<char>(rng() % 256);
    expect_one_result(renderer, flipped);
    ++cases;
    // Type swaps inside the chat object.
    auto j = ordered_json::parse(line);
    for (int round = 0; round < 3; ++round) {
      ordered_json copy = j;
      int budget = 2;
      swap_types(copy, rng, budget);
      expect_one_result(renderer, copy.dump());
      ++cases;
    }
  }
  EXPECT_GT(cases, 1000u);
}

TEST(ChatRobustness, DeepAndHugeRequestsHitLimits) {
  chatwire::chat::BatchRenderer renderer;
  std::string deep = R"({"id": 1, "template": "x", "chat": {"messages": )" +
                     std::string(100000, '[') + std::string(100000, ']') + "}}";
  expect_one_result(renderer, deep);
  chatwire::chat::InputLimits small;
  small.max_request_bytes = 64;
  auto request = chatwire::chat::parse_request_json(
      R"({"messages": [{"role": "user", "content": "this request is longer than sixty-four bytes"}]})",
      small);
  ASSERT_FALSE(request.ok());
  EXPECT_EQ(request.error().type, "LimitError");
}

}  // namespace

// A template_file changed on disk is read again. Rewrites keep the size, so only the
// modification time (nanoseconds) and the content tell the versions apart; the file's time is
// set explicitly, since two writes can share a coarse clock tick.
namespace {
std::string rendered_output(chatwire::chat::BatchRenderer& renderer, const std::string& path) {
  auto result = ordered_json::parse(
      renderer.render_line(R"({"id": 1, "template_file": ")" + path + R"(", "context": {}})"));
  return result.value("output", std::string("<error: ") + result.dump() + ">");
}
void rewrite(const std::filesystem::path& path, const std::string& text, int second) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  std::filesystem::last_write_time(
      path, std::filesystem::file_time_type(std::chrono::seconds(1'700'000'000 + second)));
}
}  // namespace

TEST(ChatBatch, ATemplateFileChangedBetweenLinesIsReadAgain) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("chatwire-batch-file-" + std::to_string(::getpid()) + ".jinja");
  rewrite(path, "one", 1);
  chatwire::chat::BatchRenderer every_line;
  EXPECT_EQ(rendered_output(every_line, path.string()), "one");
  rewrite(path, "two", 2);
  EXPECT_EQ(rendered_output(every_line, path.string()), "two");

  // Checked once per I/O epoch: the caller says when input was read or output written out.
  chatwire::chat::BatchOptions per_epoch;
  per_epoch.check_files_per_io_epoch = true;
  chatwire::chat::BatchRenderer renderer(per_epoch);
  EXPECT_EQ(rendered_output(renderer, path.string()), "two");
  rewrite(path, "six", 3);
  EXPECT_EQ(rendered_output(renderer, path.string()), "two");  // same epoch: not checked
  renderer.next_io_epoch();
  EXPECT_EQ(rendered_output(renderer, path.string()), "six");
  std::filesystem::remove(path);
}

// A model directory whose files change is loaded again (the oracle reads it on every line):
// the default template edited in place, then a named template added.
TEST(ChatBatch, AModelDirectoryChangedBetweenLinesIsLoadedAgain) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("chatwire-batch-model-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string line = R"({"id": 1, "model_dir": ")" + dir.string() +
                           R"(", "chat": {"messages": [{"role": "user", "content": "hi"}]}})";
  const std::string named =
      R"({"id": 2, "model_dir": ")" + dir.string() +
      R"(", "chat": {"chat_template": "tool_use", "messages": [{"role": "user", "content": "hi"}]}})";
  auto output = [](chatwire::chat::BatchRenderer& renderer, const std::string& request) {
    auto result = ordered_json::parse(renderer.render_line(request));
    return result.value("output", std::string("<") + result.value("error_type", "?") + ">");
  };
  rewrite(dir / "chat_template.jinja", "A{{ messages | length }}", 1);
  chatwire::chat::BatchRenderer renderer;
  EXPECT_EQ(output(renderer, line), "A1");
  rewrite(dir / "chat_template.jinja", "B{{ messages | length }}", 2);
  EXPECT_EQ(output(renderer, line), "B1");
  // No template of that name yet: transformers takes an unknown name as the template's source.
  EXPECT_EQ(output(renderer, named), "tool_use");
  std::filesystem::create_directories(dir / "additional_chat_templates");
  rewrite(dir / "additional_chat_templates" / "tool_use.jinja", "T", 3);
  EXPECT_EQ(output(renderer, named), "T");
  std::filesystem::remove_all(dir);
}
