// Every code point through every tokenizer (scripts/regen-tokenize-sweep): catches differences in
// the Unicode tables (\p{L}, \p{N}, \s, NFC) between us and Hugging Face's Oniguruma.
#include <filesystem>

#include "test_support.hpp"
#include "tokenize/unicode.hpp"

namespace chatwire::tokenize::testing {
namespace {

std::uint64_t fnv(const std::vector<std::uint32_t>& ids) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::uint32_t i : ids) h = (h ^ i) * 0x100000001b3ull;
  return h;
}

std::string chunk_text(char32_t start, char32_t chunk, char32_t last) {
  std::string out;
  for (char32_t cp = start; cp < start + chunk && cp <= last; ++cp) {
    if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF)) continue;
    if (cp % 3 == 0) out += ' ';
    if (cp % 3 == 1) out += 'x';
    unicode::append_utf8(out, cp);
  }
  return out;
}

class Sweep : public ::testing::TestWithParam<std::string> {};

TEST_P(Sweep, EveryCodePointMatchesTheOracle) {
  const std::string name = GetParam();
  ASSERT_FALSE(tokenizer_dir(name).empty())
      << "tokenizer '" << name << "' not present: scripts/fetch-tokenizers brings it";
  const Tokenizer* tok = shared_tokenizer(name);
  ASSERT_NE(tok, nullptr);
  auto golden = read_json(data_dir() + "/goldens/tokenize/sweep/" + name + ".json");
  const auto chunk = golden["chunk"].get<char32_t>();
  const auto last = golden["last"].get<char32_t>();
  const auto& hashes = golden["fnv1a64"];
  int ok = 0, total = 0;
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    if (hashes[i].is_null()) continue;
    ++total;
    auto start = static_cast<char32_t>(i * chunk);
    auto ids = tok->encode_ids(chunk_text(start, chunk, last));
    ASSERT_TRUE(ids.ok()) << ids.error().to_string();
    char buf[20];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv(*ids)));
    if (hashes[i].get<std::string>() == buf) {
      ++ok;
    } else {
      ADD_FAILURE() << name << ": chunk U+" << std::hex << static_cast<unsigned>(start) << "..U+"
                    << static_cast<unsigned>(start + chunk - 1) << " differs from the oracle";
    }
  }
  EXPECT_GT(total, 0) << name;
  std::printf("[ %s ] sweep %d/%d chunks match the oracle\n", name.c_str(), ok, total);
}

std::vector<std::string> sweep_names() {
  std::vector<std::string> names;
  for (const auto& entry :
       std::filesystem::directory_iterator(data_dir() + "/goldens/tokenize/sweep")) {
    names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Oracle, Sweep, ::testing::ValuesIn(sweep_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace chatwire::tokenize::testing
