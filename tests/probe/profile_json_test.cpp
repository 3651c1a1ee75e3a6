// Profile::from_json: a cached profile loads back (the round trip over every bundled template
// is in oracle_test.cpp, on the profiles it computes anyway); malformed JSON is refused with the
// path of the bad key, never a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "chatwire/probe_json.hpp"

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
using chatwire::probe::Profile;
using chatwire::probe::profile_from_json;
using chatwire::probe::to_json;

namespace {

json load(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

// The oracle's profiles (scripts/probe-oracle.py writes the same keys) load too, and print back
// byte for byte.
TEST(ProfileJson, OracleProfilesLoadBack) {
  std::size_t loaded = 0;
  for (const auto& e : fs::directory_iterator(fs::path(CHATWIRE_DATA_DIR) / "goldens" / "probe")) {
    if (e.path().extension() != ".json") continue;
    json golden = load(e.path());
    if (golden.contains("error")) continue;
    auto p = profile_from_json(golden);
    ASSERT_TRUE(p.ok()) << e.path() << ": " << p.error().to_string();
    EXPECT_EQ(to_json(*p), golden) << e.path();
    ++loaded;
  }
  EXPECT_GT(loaded, 0u);
}

TEST(ProfileJson, MalformedProfilesNameTheKey) {
  auto profile = chatwire::probe::probe_source("{{ messages[0].content }}");
  ASSERT_TRUE(profile.ok());
  const json good = to_json(*profile);
  struct Case {
    std::string pointer;  // a JSON pointer to change
    json value;
    std::string path;
  };
  const Case cases[] = {
      {"/profile_version", 99, "profile_version"},
      {"/renders", "yes", "renders"},
      {"/frame", 1, "frame"},
      {"/frame/family", nullptr, "frame.family"},
      {"/reasoning/open", 3, "reasoning.open"},
      {"/baseline/kept", json::array({1}), "baseline.kept[0]"},
      {"/conventions/long_call_id/status", "maybe", "conventions.long_call_id.status"},
      {"/template_bugs", json::object(), "template_bugs"},
      {"/renders_used", -1, "renders_used"},
  };
  for (const auto& c : cases) {
    json bad = good;
    bad[json::json_pointer(c.pointer)] = c.value;
    auto p = profile_from_json(bad);
    ASSERT_FALSE(p.ok()) << c.pointer;
    EXPECT_EQ(p.error().type, "ValueError");
    EXPECT_EQ(p.error().path, c.path) << c.pointer << ": " << p.error().to_string();
  }
  json missing = good;
  missing.erase("tool_calls");
  auto p = profile_from_json(missing);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().path, "tool_calls");
  EXPECT_FALSE(profile_from_json(json::array()).ok());
  EXPECT_FALSE(profile_from_json(json()).ok());
}

}  // namespace

// The profile as JSON text (chatwire/probe.hpp, no nlohmann): what a server caches.
TEST(ProfileJson, TextFormLoadsBack) {
  auto profile = chatwire::probe::probe_source(
      "{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>{% endfor %}");
  ASSERT_TRUE(profile.ok());
  const std::string text = profile->to_json_text();
  EXPECT_EQ(json::parse(text), to_json(*profile));
  auto back = Profile::from_json_text(text);
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(back->to_json_text(), text);
  EXPECT_EQ(json::parse(profile->to_json_text(1)), to_json(*profile));
  auto bad = Profile::from_json_text("{\"profile_version\": ");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().type, "ValueError");
  auto deep = Profile::from_json_text(std::string(600, '[') + std::string(600, ']'));
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.error().message.find("deeper"), std::string::npos) << deep.error().message;
}
