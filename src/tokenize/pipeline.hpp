// Internal interfaces between the encode stages (normalize -> pre-tokenize -> model) and decode.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/error.hpp"
#include "tokenize/regex.hpp"
#include "tokenize/tokenizer_data.hpp"

namespace chatwire::tokenize {

// A text being transformed, with (when `track`) the original byte range each byte came from:
// HF's NormalizedString alignments, kept per byte.
struct Text {
  std::string s;
  bool track = false;
  std::vector<std::uint32_t> begin, end;  // per byte of s, when track

  void assign(std::string_view original, std::uint32_t base, bool tracking);
  // Appends bytes aligned to the original range [ob, oe).
  void append(std::string_view bytes, std::uint32_t ob, std::uint32_t oe) {
    s.append(bytes);
    if (track) {
      begin.insert(begin.end(), bytes.size(), ob);
      end.insert(end.end(), bytes.size(), oe);
    }
  }
  // Appends src.s[b, e) with its alignment.
  void append_from(const Text& src, std::size_t b, std::size_t e) {
    s.append(src.s, b, e - b);
    if (track) {
      begin.insert(begin.end(), src.begin.begin() + static_cast<std::ptrdiff_t>(b),
                   src.begin.begin() + static_cast<std::ptrdiff_t>(e));
      end.insert(end.end(), src.end.begin() + static_cast<std::ptrdiff_t>(b),
                 src.end.begin() + static_cast<std::ptrdiff_t>(e));
    }
  }
  void clear() {
    s.clear();
    begin.clear();
    end.clear();
  }
};

// ---- normalize.cpp ----
// Applies every normalizer to `text` in place (scratch is reused storage).
Result<bool> normalize(const std::vector<NormalizerStep>& steps, Text& text, Text& scratch);
// The normalized form of a plain string (added tokens' contents).
Result<std::string> normalize_string(const std::vector<NormalizerStep>& steps, std::string_view s);

// ---- pretokenize.cpp ----
// Pieces of a text after the pre-tokenizers: `text` may be rewritten (prefix spaces, Metaspace),
// `pieces` are byte ranges into it. `at_input_start` tells Metaspace(prepend_scheme=first) whether
// the text starts the whole input.
struct PreTokenized {
  Text text;
  SpanVector pieces;
};
Result<bool> pre_tokenize(const std::vector<PreTokenizerStep>& steps, PreTokenized& state,
                          bool at_input_start, Text& scratch, SpanVector& spans_scratch,
                          SpanVector& matches_scratch);

// ---- bpe.cpp ----
struct TokenPiece {
  std::uint32_t id;
  std::uint32_t len;  // bytes of the pre-token it covers
};
using TokenList = HugeVector<TokenPiece>;
// Tokenizes the pre-tokens `pieces` of `text`, appending to out; piece_end[i] is out.size() once
// piece i is done. All pieces at once, so that the model can overlap the cache misses of
// different words. Errors only for WordLevel without unk.
Result<bool> run_model(const TokenizerData& data, std::string_view text, const SpanVector& pieces,
                       TokenList& out, HugeVector<std::uint32_t>& piece_end);

// ---- decode.cpp ----
void append_lossy_utf8(std::string& out, std::string_view bytes);

}  // namespace chatwire::tokenize
