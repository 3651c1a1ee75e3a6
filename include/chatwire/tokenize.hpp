// Tokenization exactly as Hugging Face `tokenizers` does it, from a checkpoint's tokenizer.json
// (+ tokenizer_config.json for decode clean-up): BPE (byte-level and SentencePiece-style), added
// tokens, normalizers, pre-tokenizers, post-processors, decoders and streaming decode.
//
// A Tokenizer is immutable after loading and safe to use from many threads at once; copies share
// the loaded data. Nothing here throws: every failure is an Error value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chatwire/error.hpp"

namespace chatwire::tokenize {

// Limits for untrusted tokenizer files. A file beyond a limit fails to load with a LimitError
// naming the limit; a malformed file fails with a TokenizerError naming the JSON path.
struct LoadOptions {
  std::size_t max_file_bytes = std::size_t{512} << 20;  // tokenizer.json size (Gemma 3: 33 MB)
  std::size_t max_json_depth = 256;                     // nesting of arrays/objects
  std::size_t max_vocab = 4'000'000;                    // model.vocab entries
  std::size_t max_merges = 8'000'000;                   // model.merges entries
  std::size_t max_added_tokens = 1'000'000;             // added_tokens entries
  std::size_t max_token_bytes = 1 << 16;                // length of one vocab/added token
  std::size_t max_pipeline_steps = 256;   // normalizers/pre-tokenizers/decoders in total
  std::size_t max_regex_bytes = 1 << 16;  // one Split/Replace regex pattern
};

struct EncodeOptions {
  // Add the post-processor's tokens (BOS/EOS...). transformers' apply_chat_template(tokenize=True)
  // encodes the rendered prompt with false: the template writes its own BOS.
  bool add_special_tokens = false;
  // Fill Encoding::offsets (costs a little time: the normalizers keep an alignment).
  bool with_offsets = false;
  std::size_t max_input_bytes = std::size_t{1} << 30;  // LimitError beyond
};

struct Encoding {
  std::vector<std::uint32_t> ids;
  // With EncodeOptions::with_offsets: per token, the [begin, end) byte range of the input text it
  // came from (as HF's offsets, but in UTF-8 bytes; a token holding part of a character covers the
  // whole character; tokens added by the post-processor have {0, 0}).
  std::vector<std::pair<std::size_t, std::size_t>> offsets;

  // transformers' Encoding.char_to_token, with a byte offset into the input text: the first token
  // whose range holds that byte, or nullopt. This is what return_assistant_tokens_mask needs.
  std::optional<std::size_t> byte_to_token(std::size_t byte_offset) const {
    for (std::size_t i = 0; i < offsets.size(); ++i) {
      if (byte_offset >= offsets[i].first && byte_offset < offsets[i].second) return i;
    }
    return std::nullopt;
  }
};

struct DecodeOptions {
  bool skip_special_tokens = false;
  // Python transformers' clean_up_tokenization (" ." -> "." ...). Unset: the value of
  // tokenizer_config.json's clean_up_tokenization_spaces (false when absent).
  std::optional<bool> clean_up_tokenization_spaces;
};

struct TokenizerData;  // the loaded tables (internal)

class Tokenizer {
 public:
  // Reads DIR/tokenizer.json and, when present, DIR/tokenizer_config.json.
  static Result<Tokenizer> load_dir(const std::string& dir, const LoadOptions& options = {});
  // From file contents; config_json may be empty.
  static Result<Tokenizer> load_json(std::string_view tokenizer_json,
                                     std::string_view config_json = {},
                                     const LoadOptions& options = {});

  Result<Encoding> encode(std::string_view text, const EncodeOptions& options = {}) const;
  Result<std::vector<std::uint32_t>> encode_ids(std::string_view text,
                                                bool add_special_tokens = false) const;
  // Unknown ids are an error (HF silently drops them; we prefer to say so).
  Result<std::string> decode(std::span<const std::uint32_t> ids,
                             const DecodeOptions& options = {}) const;

  std::size_t vocab_size() const;  // largest id + 1, added tokens included
  // The model's own vocabulary, without added tokens: tokenizers' get_vocab_size(false), which
  // transformers' `vocab_size` reports.
  std::size_t model_vocab_size() const;
  // The vocabulary and the added tokens as distinct tokens: tokenizers' get_vocab_size(true),
  // transformers' len(tokenizer) (not vocab_size(), which counts ids up to the largest).
  std::size_t distinct_vocab_size() const;
  std::optional<std::uint32_t> token_to_id(std::string_view token) const;
  std::optional<std::string> id_to_token(std::uint32_t id) const;
  bool is_special(std::uint32_t id) const;  // an added token marked special
  // The special tokens from tokenizer_config.json / the post-processor, when known.
  std::optional<std::string> bos_token() const;
  std::optional<std::string> eos_token() const;

  const TokenizerData& data() const { return *data_; }

 private:
  explicit Tokenizer(std::shared_ptr<const TokenizerData> data) : data_(std::move(data)) {}
  std::shared_ptr<const TokenizerData> data_;
};

// Streaming detokenization: push ids as they are generated; each call returns the text that is now
// final. The fragments never split a UTF-8 character and concatenate to decode(all ids).
// One stream per generation; not thread-safe itself (the Tokenizer it reads is).
class DecodeStream {
 public:
  explicit DecodeStream(Tokenizer tokenizer, DecodeOptions options = {});
  Result<std::string> push(std::uint32_t id);
  // An error (an id not in the vocabulary, without an unk token) leaves the stream as it was.
  Result<std::string> push(std::span<const std::uint32_t> ids);
  // The rest of the text once the generation has ended (an incomplete character becomes U+FFFD,
  // as in decode).
  Result<std::string> finish();

 private:
  Tokenizer tokenizer_;
  DecodeOptions options_;
  std::vector<std::uint32_t> ids_;
  std::size_t prefix_offset_ = 0;  // ids_[prefix_offset_:] is re-decoded for context
  std::size_t read_offset_ = 0;    // text of ids_[prefix_offset_:read_offset_] was already emitted
  bool cleanup_ = false;           // clean_up_tokenization_spaces, applied to the emitted text
  std::string held_;               // decoded text held back for clean-up
  std::string emit(std::string raw, bool final);
};

}  // namespace chatwire::tokenize
