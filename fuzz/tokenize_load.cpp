// libFuzzer: hostile tokenizer.json files must give an error or a working tokenizer, never a crash,
// a hang or unbounded memory (limits from LoadOptions, kept small here).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "chatwire/tokenize.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  chatwire::tokenize::LoadOptions options;
  options.max_file_bytes = 1 << 20;
  options.max_vocab = 1 << 16;
  options.max_merges = 1 << 16;
  options.max_added_tokens = 1 << 12;
  options.max_regex_bytes = 1 << 10;
  std::string_view json(reinterpret_cast<const char*>(data), size);
  auto tok = chatwire::tokenize::Tokenizer::load_json(json, {}, options);
  if (tok) {
    auto ids = tok->encode_ids("Hello world! <s> 123 ünïcode 🤖\n\n  end", true);
    if (ids) (void)tok->decode(*ids);
  }
  return 0;
}
