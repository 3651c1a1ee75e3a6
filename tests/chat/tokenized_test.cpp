// render --tokenize: ids and assistant masks against the assembled oracle
// (data/goldens/tokenized/, scripts/regen-tokenized-goldens: hf_render.py for the text and spans,
// npm tokenizers@0.23.2 + transformers' mask loop for the ids and masks), the loop's quirks on
// hand-made encodings, the CLI, and the JSON request fuzz target's regression inputs.
#include "chatwire/tokenized.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chatwire/chat.hpp"
#include "chatwire/value.hpp"

namespace {

using chatwire::chat::TokenizedModel;
using chatwire::jinja::GenerationSpan;
using json = nlohmann::ordered_json;  // keeps the chat objects' key order

const std::string kData = CHATWIRE_DATA_DIR;

TEST(Tokenized, EveryGoldenMatchesTheOracle) {
  std::ifstream in(kData + "/goldens/tokenized/goldens.jsonl", std::ios::binary);
  ASSERT_TRUE(in) << "goldens/tokenized/goldens.jsonl";
  std::map<std::string, std::shared_ptr<TokenizedModel>> models;
  std::size_t rows = 0, rendered = 0, errors = 0, masked = 0;
  std::string line;
  while (std::getline(in, line)) {
    ++rows;
    json g = json::parse(line);
    const std::string id = g["id"];
    auto& model = models[g["model_dir"]];
    if (!model) {
      auto loaded = TokenizedModel::load(kData + "/" + g["model_dir"].get<std::string>());
      ASSERT_TRUE(loaded) << id << ": " << loaded.error().to_string();
      model = std::make_shared<TokenizedModel>(std::move(*loaded));
    }
    auto chat = chatwire::parse_json(g["chat"].dump());
    ASSERT_TRUE(chat) << id;
    auto request = chatwire::chat::request_from_value(*chat);
    ASSERT_TRUE(request) << id << ": " << request.error().to_string();
    chatwire::chat::RenderOptions options;
    options.mode = chatwire::chat::parse_mode(g["mode"].get<std::string>());
    options.now = g["now"];
    auto got = model->render(*request, options);
    if (!g["ok"].get<bool>()) {
      ASSERT_FALSE(got) << id << ": rendered where the oracle fails with " << g["error_type"];
      EXPECT_EQ(got.error().type, g["error_type"].get<std::string>()) << id;
      ++errors;
      continue;
    }
    ASSERT_TRUE(got) << id << ": " << got.error().to_string();
    ASSERT_EQ(got->chat.text, g["output"].get<std::string>()) << id;
    EXPECT_EQ(got->input_ids, g["input_ids"].get<std::vector<std::uint32_t>>()) << id;
    auto want_mask = g["assistant_masks"].get<std::vector<int>>();
    EXPECT_EQ(std::vector<int>(got->assistant_masks.begin(), got->assistant_masks.end()), want_mask)
        << id;
    EXPECT_EQ(got->attention_mask, std::vector<std::uint8_t>(got->input_ids.size(), 1)) << id;
    EXPECT_EQ(got->chat.uses_generation, !g["generation"].is_null()) << id;
    if (!got->chat.uses_generation) {
      EXPECT_FALSE(got->chat.warnings.empty()) << id << ": no warning about the missing tag";
    }
    ++rendered;
    for (int m : want_mask) {
      if (m) {
        ++masked;
        break;
      }
    }
  }
  // Every row was checked (none skipped), and the file exercises each kind of row: renders,
  // the oracle's errors, and assistant masks with at least one masked token.
  EXPECT_EQ(rendered + errors, rows);
  EXPECT_GT(rendered, 0u);
  EXPECT_GT(errors, 0u);
  EXPECT_GT(masked, 0u);
}

// A hand-made encoding: per token, byte offsets into `text`.
chatwire::tokenize::Encoding encoding(std::vector<std::pair<std::size_t, std::size_t>> offsets) {
  chatwire::tokenize::Encoding e;
  for (std::size_t i = 0; i < offsets.size(); ++i) e.ids.push_back(static_cast<std::uint32_t>(i));
  e.offsets = std::move(offsets);
  return e;
}

std::vector<int> mask(std::string_view text, std::vector<GenerationSpan> spans,
                      const chatwire::tokenize::Encoding& e) {
  auto m = chatwire::chat::assistant_token_mask(text, spans, e);
  EXPECT_TRUE(m) << m.error().to_string();
  return m ? std::vector<int>(m->begin(), m->end()) : std::vector<int>{};
}

TEST(Tokenized, MaskLoopQuirks) {
  const std::string text = "abcdefgh";  // tokens: ab cd ef gh
  auto e = encoding({{0, 2}, {2, 4}, {4, 6}, {6, 8}});
  EXPECT_EQ(mask(text, {{2, 4}}, e), (std::vector<int>{0, 1, 0, 0}));
  EXPECT_EQ(mask(text, {{3, 5}}, e), (std::vector<int>{0, 1, 1, 0}));
  // The end char past the text (prefill cut the text after the spans were recorded): to the end.
  EXPECT_EQ(mask(text, {{2, 20}}, e), (std::vector<int>{0, 1, 1, 1}));
  // The start past the text: this span and every later one are dropped.
  EXPECT_EQ(mask(text, {{9, 12}, {0, 2}}, e), (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(mask(text, {{2, 4}, {9, 12}, {6, 8}}, e), (std::vector<int>{0, 1, 0, 0}));
  // An end in token 0 is falsy in Python: to the end of the prompt.
  EXPECT_EQ(mask(text, {{4, 6}, {1, 2}}, e), (std::vector<int>{1, 1, 1, 1}));
  // An empty span whose end-1 falls in the token before its start masks nothing...
  EXPECT_EQ(mask(text, {{4, 4}}, e), (std::vector<int>{0, 0, 0, 0}));
  // ...unless that token is token 0.
  EXPECT_EQ(mask(text, {{2, 2}}, e), (std::vector<int>{0, 1, 1, 1}));
  // A span ending at 0: char_to_token(-1) raises in transformers.
  auto overflow =
      chatwire::chat::assistant_token_mask(text, std::vector<GenerationSpan>{{0, 0}}, e);
  ASSERT_FALSE(overflow);
  EXPECT_EQ(overflow.error().type, "OverflowError");
  // A character no token covers (a pre-tokenizer removed it): the start is None, so break.
  auto gap = encoding({{0, 2}, {3, 4}});
  EXPECT_EQ(mask("ab d", {{2, 4}}, gap), (std::vector<int>{0, 0}));
  EXPECT_EQ(mask("ab d", {{3, 4}}, gap), (std::vector<int>{0, 1}));
  // An uncovered end char is None: to the end.
  EXPECT_EQ(mask("ab d", {{1, 3}}, gap), (std::vector<int>{1, 1}));
}

TEST(Tokenized, OffsetsAreConvertedToCodePointsAsTokenizersDoes) {
  // "é😀x": é = bytes 0-1 (char 0), 😀 = bytes 2-5 (char 1), x = byte 6 (char 2).
  const std::string text = "\xC3\xA9\xF0\x9F\x98\x80x";
  // Byte-fallback style: every byte token of 😀 carries the whole character.
  auto whole = encoding({{0, 2}, {2, 6}, {2, 6}, {2, 6}, {2, 6}, {6, 7}});
  EXPECT_EQ(mask(text, {{1, 2}}, whole), (std::vector<int>{0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(mask(text, {{1, 3}}, whole), (std::vector<int>{0, 1, 1, 1, 1, 1}));
  // Byte-wise offsets inside a character: tokenizers maps (2,3) to chars (1,1), empty, so the
  // character belongs to the token holding its last byte.
  auto bytewise = encoding({{0, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}});
  EXPECT_EQ(mask(text, {{1, 2}}, bytewise), (std::vector<int>{0, 0, 0, 0, 1, 0}));
  // Overlapping tokens (a normalizer rewrote a run): the first token that holds the char wins.
  auto overlap = encoding({{0, 7}, {0, 7}, {0, 7}});
  EXPECT_EQ(mask(text, {{2, 3}}, overlap), (std::vector<int>{1, 1, 1}));  // end token 0: to the end
}

std::string run(const std::string& args, int* status) {
  std::string cmd = std::string(CHATWIRE_CLI) + " " + args + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  std::string out;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe.get())) > 0) out.append(buf.data(), n);
  *status = pclose(pipe.release());
  return out;
}

std::string write_temp(const std::string& name, const std::string& text) {
  std::string path = testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(Tokenized, Cli) {
  const std::string request = write_temp(
      "tokenized_request.json",
      R"({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello"}]})");
  int status = 0;
  std::string out = run("render --model " + kData + "/models/tokenized/qwen3-training --request " +
                            request + " --mode training --tokenize",
                        &status);
  ASSERT_EQ(status, 0) << out;
  json j = json::parse(out);
  ASSERT_TRUE(j.contains("input_ids") && j.contains("attention_mask") &&
              j.contains("assistant_masks"));
  EXPECT_EQ(j["input_ids"].size(), j["assistant_masks"].size());
  int ones = 0;
  for (int m : j["assistant_masks"]) ones += m;
  EXPECT_GT(ones, 0);
  // --json adds the text and spans; a template without generation blocks warns (all zeros).
  out = run("render --model " + kData + "/models/tokenized/qwen3 --request " + request +
                " --mode reply --tokenize --json",
            &status);
  ASSERT_EQ(status, 0) << out;
  j = json::parse(out);
  EXPECT_TRUE(j.contains("output"));
  EXPECT_FALSE(j["warnings"].empty());
  for (int m : j["assistant_masks"]) EXPECT_EQ(m, 0);
  // A directory without tokenizer.json, and --tokenize without a request.
  out =
      run("render --model " + kData + "/models/training-mask --request " + request + " --tokenize",
          &status);
  EXPECT_NE(status, 0) << out;
  out = run("render --template " + kData +
                "/models/tokenized/qwen3-training/chat_template.jinja --tokenize",
            &status);
  EXPECT_NE(status, 0) << out;
  // A loose template with --tokenizer.
  out = run("render --template " + kData +
                "/models/tokenized/qwen3-training/chat_template.jinja --request " + request +
                " --tokenizer " + kData + "/tokenizers/qwen3 --tokenize --mode training",
            &status);
  ASSERT_EQ(status, 0) << out;
  j = json::parse(out);
  ones = 0;
  for (int m : j["assistant_masks"]) ones += m;
  EXPECT_GT(ones, 0);
}

}  // namespace
