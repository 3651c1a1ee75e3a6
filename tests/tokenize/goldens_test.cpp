// Ids and decodes against the oracle goldens (scripts/regen-tokenize-goldens): every text of
// data/goldens/tokenize/texts.json, with and without special tokens, on every tokenizer we hold.
#include <filesystem>

#include "test_support.hpp"

namespace chatwire::tokenize::testing {
namespace {

std::string show(const std::vector<std::uint32_t>& ids) {
  return nlohmann::json(ids).dump();
}

class Goldens : public ::testing::TestWithParam<std::string> {};

TEST_P(Goldens, EncodeAndDecodeMatchTheOracle) {
  const std::string name = GetParam();
  const std::string golden_path = data_dir() + "/goldens/tokenize/" + name + ".json";
  // A golden without its tokenizer is a failure: `make test` fetches the large ones first.
  ASSERT_FALSE(tokenizer_dir(name).empty())
      << "tokenizer '" << name << "' not present: scripts/fetch-tokenizers brings it";
  const Tokenizer* tok = shared_tokenizer(name);
  ASSERT_NE(tok, nullptr);
  auto texts = read_json(data_dir() + "/goldens/tokenize/texts.json");
  auto golden = read_json(golden_path);
  int encode_ok = 0, encode_total = 0, decode_ok = 0, decode_total = 0;
  for (const auto& e : golden["encode"]) {
    if (!e.contains("ids")) continue;
    ++encode_total;
    std::string text = texts[e["text"].get<int>()].get<std::string>();
    bool special = e["add_special_tokens"].get<bool>();
    auto ids = tok->encode_ids(text, special);
    ASSERT_TRUE(ids.ok()) << ids.error().to_string();
    auto want = e["ids"].get<std::vector<std::uint32_t>>();
    if (*ids == want) {
      ++encode_ok;
    } else {
      ADD_FAILURE() << name << " text #" << e["text"] << " special=" << special
                    << "\n  text: " << nlohmann::json(text).dump() << "\n  want: " << show(want)
                    << "\n  got:  " << show(*ids);
    }
  }
  for (const auto& d : golden["decode"]) {
    if (!d.contains("text")) continue;
    ++decode_total;
    auto ids = d["ids"].get<std::vector<std::uint32_t>>();
    DecodeOptions options;
    options.skip_special_tokens = d["skip_special_tokens"].get<bool>();
    auto text = tok->decode(ids, options);
    ASSERT_TRUE(text.ok()) << text.error().to_string();
    if (*text == d["text"].get<std::string>()) {
      ++decode_ok;
    } else {
      ADD_FAILURE() << name << " decode skip=" << options.skip_special_tokens << " ids "
                    << show(ids) << "\n  want: " << d["text"].dump() << "\n  got:  "
                    << nlohmann::json(*text).dump(-1, 32, false,
                                                  nlohmann::json::error_handler_t::replace);
    }
  }
  // A golden file whose rows all lack results would otherwise check nothing.
  EXPECT_GT(encode_total, 0) << name;
  EXPECT_GT(decode_total, 0) << name;
  std::printf("[ %s ] encode %d/%d, decode %d/%d match the oracle\n", name.c_str(), encode_ok,
              encode_total, decode_ok, decode_total);
}

std::vector<std::string> golden_names() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir() + "/goldens/tokenize")) {
    std::string file = entry.path().filename().string();
    if (file == "texts.json" || entry.path().extension() != ".json") continue;
    names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Oracle, Goldens, ::testing::ValuesIn(golden_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace chatwire::tokenize::testing
