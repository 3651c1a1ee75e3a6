// The oracle's chat/model_dir goldens (data/goldens/chat/, scripts/regen-chat-goldens): every
// request rendered through the batch protocol must give the oracle's result line byte for
// byte; errors must have the oracle's error_type and, for the chat layer's own errors and
// raise_exception, its message (or the more helpful message the request names).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chatwire/chat.hpp"

namespace {

using nlohmann::ordered_json;

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

const std::string kGoldens = std::string(CHATWIRE_DATA_DIR) + "/goldens/chat/";

TEST(ChatGoldens, EveryOracleRequestGivesTheOracleResult) {
  auto requests = read_lines(kGoldens + "requests.jsonl");
  auto results = read_lines(kGoldens + "results.jsonl");
  ASSERT_FALSE(requests.empty());
  ASSERT_EQ(requests.size(), results.size());

  chatwire::chat::BatchOptions options;
  options.base_dir = CHATWIRE_DATA_DIR;  // the oracle ran from data/
  chatwire::chat::BatchRenderer renderer(options);
  std::size_t identical = 0, rendered = 0, rendered_identical = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const std::string got = renderer.render_line(requests[i]);
    const std::string& want = results[i];
    auto request = ordered_json::parse(requests[i]);
    auto expected = ordered_json::parse(want);
    const std::string label =
        "request " + std::to_string(i + 1) + " id=" + request.value("id", ordered_json()).dump();
    if (expected["ok"].get<bool>()) ++rendered;
    if (got == want) {
      ++identical;
      if (expected["ok"].get<bool>()) ++rendered_identical;
      continue;
    }
    ordered_json actual = ordered_json::parse(got, nullptr, false);
    ASSERT_FALSE(actual.is_discarded()) << label << ": not JSON: " << got;
    if (expected["ok"].get<bool>()) {
      ADD_FAILURE() << label << "\n  want: " << want.substr(0, 2000)
                    << "\n  got:  " << got.substr(0, 2000);
      continue;
    }
    ASSERT_FALSE(actual["ok"].get<bool>())
        << label << ": rendered where the oracle fails with " << want;
    EXPECT_EQ(actual["error_type"], expected["error_type"])
        << label << "\n  want: " << want << "\n  got:  " << got;
    const std::string message = actual["message"].get<std::string>();
    EXPECT_FALSE(message.empty()) << label;
    if (request.contains("chatwire_message_contains")) {
      EXPECT_NE(message.find(request["chatwire_message_contains"].get<std::string>()),
                std::string::npos)
          << label << ": " << message;
    } else if (expected["error_type"] == "TemplateError" ||
               expected["error_type"] == "ValueError") {
      EXPECT_EQ(message, expected["message"].get<std::string>()) << label;
    }
  }
  std::printf(
      "[chat goldens] %zu/%zu result lines byte-identical; rendered by the oracle: %zu/%zu "
      "identical\n",
      identical, requests.size(), rendered_identical, rendered);
  EXPECT_EQ(rendered_identical, rendered);
}

}  // namespace
