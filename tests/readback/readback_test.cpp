// The round trip on every bundled template: the parser derived from the template's own renders
// reads back its own calls and reasoning.
#include "chatwire/readback.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace cw = chatwire;
namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Readback, EveryBundledTemplate) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(CHATWIRE_DATA_DIR) / "templates"))
    if (e.path().extension() == ".jinja") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  int calls = 0, calls_ok = 0, reason = 0, reason_ok = 0;
  for (const auto& f : files) {
    auto tmpl = cw::jinja::Template::compile(read(f));
    ASSERT_TRUE(tmpl) << f;
    cw::Value tokens = cw::Value::dict_unchecked(
        {{cw::Value("bos_token"), cw::Value("<s>")}, {cw::Value("eos_token"), cw::Value("</s>")}});
    auto profile = cw::probe::probe_template(*tmpl, tokens);
    auto render = cw::probe::template_renderer(*tmpl, tokens);
    auto choice = cw::readback::choose_parser(render, profile, {"</s>"});
    bool ct = false, rt = false;
    for (const auto& t : choice.trips) {
      if (t.kind == "calls" && t.applicable) ct = true;
      if (t.kind == "reasoning" && t.applicable) rt = true;
    }
    calls += ct;
    reason += rt;
    calls_ok += ct && choice.calls_read_back;
    reason_ok += rt && choice.reasoning_read_back;
    if (choice.template_bug) std::cout << "BUG " << f.filename().string() << " " << choice.template_bug->cause << " " << choice.template_bug->evidence << "\n";
    else if ((ct && !choice.calls_read_back) || (rt && !choice.reasoning_read_back)) {
      std::cout << "FAIL " << f.filename().string() << ": " << choice.verdict << "\n";
      for (const auto& t : choice.trips)
        if (t.applicable)
          std::cout << "  [" << t.kind << "] " << cw::parse::Json(t.generated).dump() << "\n";
      for (const auto& c : choice.tried)
        if (c.origin == "derived")
          std::cout << "  derived " << c.syntax.summary() << " -> " << c.verdict << "\n";
    }
  }
  std::cout << "calls " << calls_ok << "/" << calls << " reasoning " << reason_ok << "/" << reason
            << "\n";
}

}  // namespace
