// Behaviour beyond the oracle goldens: streaming decode, offsets, the hand-written regex scanners
// against PCRE2, hostile files, invalid input, concurrent use, the CLI batch protocol.
#include <cstdio>
#include <random>
#include <thread>

#include "test_support.hpp"
#include "tokenize/regex.hpp"
#include "tokenize/unicode.hpp"

namespace chatwire::tokenize::testing {
namespace {

std::vector<std::string> golden_texts() {
  return read_json(data_dir() + "/goldens/tokenize/texts.json").get<std::vector<std::string>>();
}

const char* kTokenizers[] = {
    "gpt2",   "llama2",      "llama3_1", "mistral7b_v01",       "qwen3",
    "gemma3", "deepseek_v3", "gptoss",   "synthetic_metaspace", "synthetic_bytefallback"};

// ---- streaming ----

TEST(Stream, FragmentsAreWholeCharactersAndConcatenateToDecode) {
  auto texts = golden_texts();
  for (const char* name : kTokenizers) {
    const Tokenizer* tok = shared_tokenizer(name);
    ASSERT_NE(tok, nullptr) << name << ": not present (scripts/fetch-tokenizers brings it)";
    for (bool skip : {false, true}) {
      for (const std::string& text : texts) {
        auto ids = tok->encode_ids(text, true);
        ASSERT_TRUE(ids.ok());
        DecodeOptions options;
        options.skip_special_tokens = skip;
        auto whole = tok->decode(*ids, options);
        ASSERT_TRUE(whole.ok());
        DecodeStream stream(*tok, options);
        std::string joined;
        for (std::uint32_t id : *ids) {
          auto piece = stream.push(id);
          ASSERT_TRUE(piece.ok());
          EXPECT_TRUE(unicode::is_valid_utf8(*piece)) << name << ": fragment splits a character";
          joined += *piece;
        }
        joined += *stream.finish();
        EXPECT_EQ(joined, *whole) << name << " skip=" << skip << " text "
                                  << nlohmann::json(text).dump();
      }
    }
  }
}

TEST(Stream, HoldsBackIncompleteCharacters) {
  const Tokenizer* tok = shared_tokenizer("gpt2");
  ASSERT_NE(tok, nullptr);
  auto ids = *tok->encode_ids("🤖");  // one character, several byte-level tokens
  ASSERT_GT(ids.size(), 1u);
  DecodeStream stream(*tok);
  for (std::size_t i = 0; i + 1 < ids.size(); ++i) EXPECT_EQ(*stream.push(ids[i]), "");
  EXPECT_EQ(*stream.push(ids.back()), "🤖");
}

TEST(Stream, CleanUpAcrossFragments) {
  const Tokenizer* tok = shared_tokenizer("gpt2");  // clean_up_tokenization_spaces: true
  ASSERT_NE(tok, nullptr);
  auto ids = *tok->encode_ids("Hello , world ! It 's fine .");
  DecodeStream stream(*tok);
  std::string joined;
  for (std::uint32_t id : ids) joined += *stream.push(id);
  joined += *stream.finish();
  EXPECT_EQ(joined, *tok->decode(ids));
  EXPECT_EQ(joined, "Hello, world! It's fine.");
}

// transformers' clean-up replaces its patterns one after another over the whole text, so one
// replacement can make the next one's pattern (" n ' t" -> " n't" -> "n't", found by
// fuzz_tokenize_encode): streamed one id at a time, every string over the patterns' characters
// gives the text decode gives.
TEST(Stream, CleanUpCascadesAcrossFragments) {
  const Tokenizer* tok = shared_tokenizer("gpt2");
  ASSERT_NE(tok, nullptr);
  std::mt19937 rng(20261207);
  const std::string alphabet = " 'ntmsvre.?!,a";
  for (int round = 0; round < 4000; ++round) {
    std::string text;
    const int length = 1 + static_cast<int>(rng() % 14);
    for (int k = 0; k < length; ++k) text += alphabet[rng() % alphabet.size()];
    auto ids = *tok->encode_ids(text);
    DecodeStream stream(*tok);
    std::string joined;
    for (std::uint32_t id : ids) joined += *stream.push(id);
    joined += *stream.finish();
    ASSERT_EQ(joined, *tok->decode(ids)) << nlohmann::json(text).dump();
  }
}

// ---- offsets ----

TEST(Offsets, CoverTheInputAndKeepTheIds) {
  auto texts = golden_texts();
  for (const char* name : kTokenizers) {
    const Tokenizer* tok = shared_tokenizer(name);
    ASSERT_NE(tok, nullptr) << name << ": not present (scripts/fetch-tokenizers brings it)";
    for (const std::string& text : texts) {
      EncodeOptions options;
      options.with_offsets = true;
      auto enc = tok->encode(text, options);
      ASSERT_TRUE(enc.ok());
      EXPECT_EQ(enc->ids, *tok->encode_ids(text)) << name << ": offsets changed the ids";
      ASSERT_EQ(enc->offsets.size(), enc->ids.size());
      std::size_t last_begin = 0;
      for (auto [b, e] : enc->offsets) {
        EXPECT_LE(b, e);
        EXPECT_LE(e, text.size());
        EXPECT_GE(b, last_begin) << name << " " << nlohmann::json(text).dump();
        last_begin = b;
      }
    }
  }
}

TEST(Offsets, ByteLevelAndSentencePiece) {
  const Tokenizer* gpt2 = shared_tokenizer("gpt2");
  ASSERT_NE(gpt2, nullptr);
  EncodeOptions options;
  options.with_offsets = true;
  auto enc = *gpt2->encode("Hello world", options);
  ASSERT_EQ(enc.offsets.size(), 2u);
  EXPECT_EQ(enc.offsets[0], (std::pair<std::size_t, std::size_t>{0, 5}));
  EXPECT_EQ(enc.offsets[1], (std::pair<std::size_t, std::size_t>{5, 11}));
  EXPECT_EQ(enc.byte_to_token(7), 1u);
  const Tokenizer* llama2 = shared_tokenizer("llama2");
  ASSERT_NE(llama2, nullptr);
  enc = *llama2->encode("<s>Hi there", options);  // <s> normalized:true -> matched as "▁<s>"
  ASSERT_GE(enc.offsets.size(), 2u);
  EXPECT_EQ(enc.offsets[0], (std::pair<std::size_t, std::size_t>{0, 3}));
  EXPECT_EQ(enc.offsets.back().second, 11u);
  // An emoji split into byte tokens: each covers the whole character.
  enc = *gpt2->encode("a🤖", options);
  for (std::size_t i = 1; i < enc.offsets.size(); ++i) {
    EXPECT_EQ(enc.offsets[i], (std::pair<std::size_t, std::size_t>{1, 5}));
  }
}

// ---- regexes ----

std::string random_text(std::mt19937& rng, std::size_t n) {
  static const char32_t kPool[] = {
      'a', 'B', 'z', ' ', ' ', '\n', '\r', '\t', '\'', 's', 't', 'l', 'L', 'e', 'R', '1', '2', '9',
      '.', ',', '!', '-', '_', '/', 0xA0, 0x3000, 0x2003, 0x180E, 0xE9, 0x301, 0x4E2D, 0x65E5,
      0x0661, 0x0966, 0xBD, 0x1F600, 0x1F3FD, 0x200D, 0xFE0F, 0x17F, 0x212A, 0x2028, 0x85, 0x1C89,
      // o200k splits letters by case: Lt, Lm, Lu, Ll outside ASCII, and '/' after punctuation.
      'S', 'D', 0x1C5, 0x2B0, 0xC9, 0x3B1, '/',
      // DeepSeek: kana, symbols, and the CJK range's edges.
      0x3042, 0x30A2, '$', '^', '~', 0x9FA5, 0x9FA6, 0x309F, 0x20AC};
  std::string out;
  std::uniform_int_distribution<std::size_t> pick(0, std::size(kPool) - 1);
  for (std::size_t i = 0; i < n; ++i) unicode::append_utf8(out, kPool[pick(rng)]);
  return out;
}

TEST(Regex, HandScannersEqualPcre2) {
  const std::string patterns[] = {
      R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)",
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
      R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
      // DeepSeek V3 (its \r and \n are the characters themselves).
      "[!\"#$%&'()*+,\\-./"
      ":;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
      "?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
      // One class, repeated (the class-run scanner).
      R"(\p{N}{1,3})",
      "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
      R"([a-z0-9_]+)",
      R"(\p{L}+)",
  };
  std::vector<std::string> inputs = golden_texts();
  std::mt19937 rng(42);
  for (int i = 0; i < 5000; ++i) inputs.push_back(random_text(rng, 1 + i % 40));
  for (const std::string& p : patterns) {
    auto fast = Regex::compile(p);
    RegexOptions slow_options;
    slow_options.hand_scanners = false;
    auto slow = Regex::compile(p, slow_options);
    ASSERT_TRUE(fast.ok() && slow.ok());
    ASSERT_NE((*fast)->scanner(), RegexScanner::kNone);
    ASSERT_EQ((*slow)->scanner(), RegexScanner::kNone);
    for (const std::string& text : inputs) {
      SpanVector a, b;
      ASSERT_TRUE((*fast)->find_all(text, a).ok());
      ASSERT_TRUE((*slow)->find_all(text, b).ok());
      ASSERT_EQ(a, b) << "pattern " << p << "\ntext " << nlohmann::json(text).dump();
    }
  }
}

TEST(Regex, UnicodeClassesAreRewritten) {
  auto r = rewrite_unicode_classes(R"([^\s\p{L}]\p{N}\S)");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->find("\\p{"), std::string::npos);
  EXPECT_EQ(r->find("\\s"), std::string::npos);
  // U+180E is not White_Space (PCRE2's own \s says it is; Oniguruma's does not).
  auto re = *Regex::compile(R"(\s+)");
  SpanVector spans;
  ASSERT_TRUE(re->find_all("a\xE1\xA0\x8E b", spans).ok());
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0], (Span{4, 5}));
}

// ---- hostile and malformed files ----

TEST(Load, MalformedFilesGiveErrorsNotCrashes) {
  const std::string deep(100000, '[');
  const char* cases[] = {
      "",
      "{",
      "[]",
      "null",
      "{\"model\": 1}",
      "{\"model\": {\"type\": \"Unigram\", \"vocab\": []}}",
      "{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}}}",
      "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [\"a b\"]}}",
      "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": [\"a b\"]}}",
      "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": -1}, \"merges\": []}}",
      "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 99999999999}, \"merges\": []}}",
      "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": \"x\"}, \"merges\": []}}",
      "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [[\"a\"]]}}",
      "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"\\ud800\": 0}, \"merges\": []}}",
      "{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}, \"normalizer\": {\"type\": "
      "\"Bogus\"}}",
      "{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}, \"pre_tokenizer\": "
      "{\"type\": \"Split\", "
      "\"pattern\": {\"Regex\": \"(\"}, \"behavior\": \"Isolated\"}}",
      "{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}, \"pre_tokenizer\": "
      "{\"type\": \"Split\", "
      "\"pattern\": {\"Regex\": \"a\"}, \"behavior\": \"Sideways\"}}",
      "{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": [], \"unk_token\": \"<unk>\"}}",
      "{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}, \"decoder\": {\"type\": "
      "\"CTC\"}}",
      "{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}, \"post_processor\": "
      "{\"type\": "
      "\"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"<s>\"}}], "
      "\"special_tokens\": {}}}",
      "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [], \"dropout\": 0.5}}",
      deep.c_str(),
  };
  for (const char* json : cases) {
    auto t = Tokenizer::load_json(json);
    ASSERT_FALSE(t.ok()) << json;
    EXPECT_FALSE(t.error().message.empty());
    EXPECT_TRUE(t.error().type == "TokenizerError" || t.error().type == "LimitError")
        << t.error().type;
  }
  auto unigram = Tokenizer::load_json("{\"model\": {\"type\": \"Unigram\", \"vocab\": []}}");
  EXPECT_NE(unigram.error().message.find("not supported"), std::string::npos);
}

// The merged token of a merge is resolved by its spelling: the same id whether it is the previous
// merge's, the next id, elsewhere, or a key given twice in the vocab (the last id wins, as in HF).
TEST(Load, MergedTokenIdsResolveAsTheVocabSays) {
  auto ids = [](const char* json, const char* text) {
    auto t = Tokenizer::load_json(json);
    EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
    if (!t.ok()) return std::vector<std::uint32_t>{};
    return *t->encode_ids(text);
  };
  // "abc" from two splits (the previous merge's id), "abcd" the next id, "cd" far away.
  const char* plain =
      "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"c\": 2, \"d\": 3, "
      "\"ab\": 4, \"bc\": 5, \"abc\": 6, \"abcd\": 7, \"cd\": 9, \"x\": 8}, "
      "\"merges\": [\"a b\", \"b c\", \"ab c\", \"a bc\", \"abc d\", \"c d\"]}}";
  EXPECT_EQ(ids(plain, "abcd"), (std::vector<std::uint32_t>{7}));
  EXPECT_EQ(ids(plain, "bcd"), (std::vector<std::uint32_t>{5, 3}));
  EXPECT_EQ(ids(plain, "xcd"), (std::vector<std::uint32_t>{8, 9}));
  // "ab" given twice: ids 2 and 4, the map keeps 4; id 2 still reads "ab" (the guess after "x y"
  // would be 2).
  const char* twice =
      "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"x\": 0, \"y\": 5, \"xy\": 1, \"ab\": 2, "
      "\"a\": 3, \"b\": 6, \"ab\": 4}, \"merges\": [\"x y\", \"a b\"]}}";
  EXPECT_EQ(ids(twice, "ab"), (std::vector<std::uint32_t>{4}));
  EXPECT_EQ(ids(twice, "xy"), (std::vector<std::uint32_t>{1}));
  // Missing merged token: the same error as a lookup gives.
  auto bad = Tokenizer::load_json(
      "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2, \"c\": 3}, "
      "\"merges\": [\"a b\", \"ab c\"]}}");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().path, "model.merges[1]");
  EXPECT_EQ(bad.error().message, "merged token not in the vocab: 'abc'");
}

TEST(Load, LimitsAreEnforced) {
  const Tokenizer* tok = shared_tokenizer("gpt2");
  ASSERT_NE(tok, nullptr);
  std::string json = read_text_file(tokenizer_dir("gpt2") + "/tokenizer.json");
  LoadOptions small;
  small.max_vocab = 1000;
  auto t = Tokenizer::load_json(json, "", small);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().type, "LimitError");
  small = LoadOptions{};
  small.max_file_bytes = 1000;
  EXPECT_EQ(Tokenizer::load_json(json, "", small).error().type, "LimitError");
}

TEST(Load, TruncatedAndMutatedFilesNeverCrash) {
  std::string json = read_text_file(tokenizer_dir("synthetic_metaspace") + "/tokenizer.json");
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i) {
    std::string m = json.substr(0, rng() % json.size());
    auto t = Tokenizer::load_json(m);
    EXPECT_FALSE(t.ok());
    std::string flipped = json;
    for (int k = 0; k < 3; ++k) flipped[rng() % flipped.size()] = static_cast<char>(rng() % 256);
    auto u = Tokenizer::load_json(flipped);
    if (u.ok()) (void)u->encode_ids("hello world 123, ünïcode");
  }
}

// ---- input ----

TEST(Encode, InvalidUtf8IsAnError) {
  const Tokenizer* tok = shared_tokenizer("gpt2");
  ASSERT_NE(tok, nullptr);
  auto r = tok->encode_ids("abc\xFF");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, "ValueError");
  EncodeOptions options;
  options.max_input_bytes = 3;
  EXPECT_EQ(tok->encode("abcd", options).error().type, "LimitError");
}

TEST(Encode, AddSpecialTokensUsesThePostProcessor) {
  const Tokenizer* llama = shared_tokenizer("llama3_1");
  ASSERT_NE(llama, nullptr);
  auto plain = *llama->encode_ids("Hi");
  auto with = *llama->encode_ids("Hi", true);
  ASSERT_EQ(with.size(), plain.size() + 1);
  EXPECT_EQ(with[0], 128000u);
  // The chat path: the template's own BOS is matched as a special token, no second BOS.
  auto chat = *llama->encode_ids("<|begin_of_text|>Hi");
  EXPECT_EQ(chat[0], 128000u);
  EXPECT_EQ(chat.size(), plain.size() + 1);
}

TEST(Decode, SkipSpecialAndUnknownIds) {
  const Tokenizer* qwen = shared_tokenizer("qwen3");
  ASSERT_NE(qwen, nullptr);
  auto ids = *qwen->encode_ids("<|im_start|>user\nhi<|im_end|>");
  DecodeOptions skip;
  skip.skip_special_tokens = true;
  EXPECT_EQ(*qwen->decode(ids, skip), "user\nhi");
  EXPECT_TRUE(qwen->is_special(ids[0]));
  EXPECT_EQ(qwen->id_to_token(ids[0]), "<|im_start|>");
  EXPECT_EQ(qwen->token_to_id("<|im_start|>"), ids[0]);
  std::vector<std::uint32_t> bad = {0xFFFFFF};
  EXPECT_FALSE(qwen->decode(bad).ok());
}

// ---- threads ----

TEST(Threads, ConcurrentEncodesAgreeWithSequential) {
  auto texts = golden_texts();
  for (const char* name : {"llama3_1", "llama2", "qwen3"}) {
    const Tokenizer* tok = shared_tokenizer(name);
    ASSERT_NE(tok, nullptr);
    std::vector<std::vector<std::uint32_t>> expected;
    for (const auto& t : texts) expected.push_back(*tok->encode_ids(t));
    std::atomic<int> mismatches{0};
    std::vector<std::thread> threads;
    for (int k = 0; k < 4; ++k) {
      threads.emplace_back([&, k] {
        for (int round = 0; round < 3; ++round) {
          for (std::size_t i = (k * 7) % texts.size(), n = 0; n < texts.size();
               ++n, i = (i + 1) % texts.size()) {
            if (*tok->encode_ids(texts[i]) != expected[i]) ++mismatches;
          }
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(mismatches.load(), 0) << name;
  }
}

// ---- CLI ----

TEST(Cli, BatchProtocol) {
  ASSERT_TRUE(std::filesystem::exists(CHATWIRE_CLI)) << "CLI not built: " << CHATWIRE_CLI;
  std::string dir = tokenizer_dir("gpt2");
  std::string in = "/tmp/chatwire_tokenize_cli_test.jsonl";
  {
    std::ofstream f(in);
    f << nlohmann::json({{"id", 1},
                         {"tokenizer", dir},
                         {"text", "Hello world"},
                         {"add_special_tokens", false}})
             .dump()
      << "\n";
    f << "not json\n";
    f << nlohmann::json({{"id", "d"},
                         {"tokenizer", dir},
                         {"ids", {15496, 995}},
                         {"skip_special_tokens", true}})
             .dump()
      << "\n";
    f << nlohmann::json({{"id", 3}, {"tokenizer", "/nonexistent"}, {"text", "x"}}).dump() << "\n";
  }
  std::string cmd = std::string(CHATWIRE_CLI) + " tokenize --batch < " + in;
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  std::stringstream ss(out);
  std::string line;
  std::vector<nlohmann::json> lines;
  while (std::getline(ss, line)) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0]["ids"], nlohmann::json({15496, 995}));
  EXPECT_EQ(lines[1]["ok"], false);
  EXPECT_EQ(lines[2]["text"], "Hello world");
  EXPECT_EQ(lines[3]["ok"], false);
}

}  // namespace
}  // namespace chatwire::tokenize::testing
