// libFuzzer: arbitrary text through real tokenizers (encode with and without special tokens and
// offsets, decode, streaming decode): never a crash, streaming equals decode, and
// decode(encode(text)) round-trips for GPT-2 (byte-level, no normalizer) without clean-up.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "chatwire/tokenize.hpp"

namespace {

// The data folder: $CHATWIRE_DATA_DIR, else ./data (run from the repository root).
const chatwire::tokenize::Tokenizer* load(const char* name) {
  const char* data = std::getenv("CHATWIRE_DATA_DIR");
  std::string dir = std::string(data ? data : "data") + "/tokenizers/" + name;
  auto t = chatwire::tokenize::Tokenizer::load_dir(dir);
  if (!t) std::abort();
  return new chatwire::tokenize::Tokenizer(std::move(*t));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const chatwire::tokenize::Tokenizer* tokenizers[] = {
      load("gpt2"), load("qwen3"), load("llama2"), load("synthetic_flags"),
      load("synthetic_metaspace")};
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const auto* tok : tokenizers) {
    chatwire::tokenize::EncodeOptions options;
    options.with_offsets = size % 2 == 0;
    options.add_special_tokens = size % 3 == 0;
    auto enc = tok->encode(text, options);
    if (!enc) continue;  // invalid UTF-8
    auto decoded = tok->decode(enc->ids);
    chatwire::tokenize::DecodeStream stream(*tok);
    std::string streamed;
    for (std::uint32_t id : enc->ids) streamed += *stream.push(id);
    streamed += *stream.finish();
    if (!decoded || streamed != *decoded) std::abort();
    chatwire::tokenize::DecodeOptions raw;
    raw.clean_up_tokenization_spaces = false;
    if (tok == tokenizers[0] && !options.add_special_tokens &&
        *tok->decode(enc->ids, raw) != text) {
      std::abort();
    }
  }
  return 0;
}
