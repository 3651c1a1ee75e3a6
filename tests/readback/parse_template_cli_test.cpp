// `chatwire parse --template FILE --tools TOOLS` on every bundled template's own round-trip text:
// the command a user runs gives the calls and reasoning back (the Done-when of the round trip,
// end to end).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "chatwire/readback_json.hpp"

namespace fs = std::filesystem;
namespace cw = chatwire;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ParseTemplateCli, EveryBundledTemplateRoundTrip) {
  fs::path dir =
      fs::temp_directory_path() / ("chatwire-readback-cli-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // The round trips' tools, as a caller passes the request's: an XML row types the values by
  // their schema (without one, Qwen3-Coder's `3` is the string "3", as vLLM reads it).
  std::ofstream(dir / "tools.json") << cw::readback::round_trip_tools_json().dump();
  std::size_t checked = 0, read_back = 0;
  for (const auto& e : fs::directory_iterator(fs::path(CHATWIRE_DATA_DIR) / "templates")) {
    if (e.path().extension() != ".jinja") continue;
    auto loaded = cw::readback::choose_parser_file(e.path());
    if (!loaded) continue;
    for (const auto& trip : loaded->choice.trips) {
      if (!trip.applicable || !trip.prefix) continue;
      bool expect_ok = trip.kind == "calls"           ? loaded->choice.calls_read_back
                       : trip.kind == "reasoning"     ? loaded->choice.reasoning_read_back
                       : trip.kind == "content_calls" ? loaded->choice.content_calls_read_back
                                                      : loaded->choice.answer_read_back;
      std::ofstream(dir / "in.txt", std::ios::binary) << trip.generated;
      std::string cmd = "'";
      cmd += CHATWIRE_CLI;
      cmd += "' parse --template '";
      cmd += e.path().string();
      cmd += "' --tools '";
      cmd += (dir / "tools.json").string();
      cmd += "' <'";
      cmd += (dir / "in.txt").string();
      cmd += "' >'";
      cmd += (dir / "out.json").string();
      cmd += "' 2>/dev/null";
      int raw = std::system(cmd.c_str());
      ASSERT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 0) << e.path();
      auto out = nlohmann::json::parse(slurp(dir / "out.json"), nullptr, false);
      ASSERT_FALSE(out.is_discarded()) << e.path();
      cw::parse::Message m;
      if (out["content"].is_string()) m.content = out["content"];
      if (out.contains("reasoning_content")) m.reasoning_content = out["reasoning_content"];
      if (out.contains("tool_calls"))
        for (const auto& c : out["tool_calls"])
          m.tool_calls.push_back({c["id"], c["function"]["name"], c["function"]["arguments"]});
      std::string diff = cw::readback::compare(m, trip);
      ++checked;
      read_back += diff.empty();
      if (expect_ok) {
        EXPECT_EQ(diff, "") << e.path() << " " << trip.kind;
      }
    }
  }
  fs::remove_all(dir);
  std::printf("chatwire parse --template: %zu/%zu round trips read back\n", read_back, checked);
  EXPECT_GT(checked, 0u);
}

}  // namespace
