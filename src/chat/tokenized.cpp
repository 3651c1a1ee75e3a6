// render --tokenize: the rendered prompt's ids and transformers' assistant token mask.
#include "chatwire/tokenized.hpp"

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <utility>

namespace chatwire::chat {

namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

// Encoding.char_to_token for every code point at once: first[c] is the first token whose
// code point range holds c, or kNone.
class CharToToken {
 public:
  CharToToken(std::string_view text, const tokenize::Encoding& encoding) {
    // Code point index of the character each byte belongs to (tokenizers'
    // BytesToCharOffsetConverter map); chars_ = number of code points.
    std::vector<std::size_t> char_of_byte(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
      if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 || i == 0)
        char_of_byte[i] = chars_++;
      else
        char_of_byte[i] = chars_ - 1;
    }
    first_.assign(chars_, kNone);
    // Union-find "next unfilled code point at or after c", so that tokens covering the same
    // long run (a normalizer that rewrites it maps every token to the whole run) cost O(1)
    // each instead of the run's length.
    next_.resize(chars_ + 1);
    for (std::size_t c = 0; c <= chars_; ++c) next_[c] = c;
    for (std::size_t t = 0; t < encoding.offsets.size(); ++t) {
      auto [begin, end] = to_chars(encoding.offsets[t], text.size(), char_of_byte);
      if (end > chars_) end = chars_;
      for (std::size_t c = find(begin); c < end; c = find(c)) {
        first_[c] = t;
        next_[c] = c + 1;
      }
    }
  }

  std::optional<std::size_t> operator()(std::size_t c) const {
    if (c >= chars_ || first_[c] == kNone) return std::nullopt;
    return first_[c];
  }

 private:
  // tokenizers converts byte offsets to char offsets as: start = char of byte `begin`,
  // end = char of byte `end`, or (at the end of the text) char of byte end-1 plus one; an
  // offset whose start is past the text keeps its byte values.
  static std::pair<std::size_t, std::size_t> to_chars(
      std::pair<std::size_t, std::size_t> bytes, std::size_t size,
      const std::vector<std::size_t>& char_of_byte) {
    auto [begin, end] = bytes;
    if (begin >= size) return {begin, end};
    std::size_t c_begin = char_of_byte[begin];
    if (end < size) return {c_begin, char_of_byte[end]};
    std::size_t last = end >= 1 && end - 1 < size ? char_of_byte[end - 1] : c_begin;
    return {c_begin, last + 1};
  }

  std::size_t find(std::size_t c) {
    if (c >= chars_) return chars_;
    std::size_t root = c;
    while (next_[root] != root) root = next_[root];
    while (next_[c] != root) c = std::exchange(next_[c], root);
    return root;
  }

  std::size_t chars_ = 0;
  std::vector<std::size_t> first_;
  std::vector<std::size_t> next_;
};

}  // namespace

Result<std::vector<std::uint8_t>> assistant_token_mask(std::string_view text,
                                                       std::span<const jinja::GenerationSpan> spans,
                                                       const tokenize::Encoding& encoding) {
  const std::size_t n = encoding.ids.size();
  std::vector<std::uint8_t> mask(n, 0);
  if (spans.empty()) return mask;
  CharToToken char_to_token(text, encoding);
  for (const auto& span : spans) {
    // transformers computes both before testing either, so end - 1 = -1 raises first
    // (the Rust binding takes an unsigned index).
    if (span.end == 0)
      return Error{"OverflowError", "can't convert negative int to unsigned", 0, 0, "generation"};
    auto start = char_to_token(span.begin);
    auto end = char_to_token(span.end - 1);
    if (!start) break;  // transformers: "out of bounds maybe due to truncation"
    // `end_token + 1 if end_token else len(ids)`: a None or 0 end means "to the end".
    std::size_t stop = end && *end != 0 ? *end + 1 : n;
    for (std::size_t t = *start; t < stop && t < n; ++t) mask[t] = 1;
  }
  return mask;
}

Result<TokenizedResult> tokenize_rendered(ChatResult rendered,
                                          const tokenize::Tokenizer& tokenizer) {
  tokenize::EncodeOptions options;
  options.add_special_tokens = false;  // the template writes its own BOS
  options.with_offsets = true;
  auto encoding = tokenizer.encode(rendered.text, options);
  if (!encoding) return encoding.error();
  auto mask = assistant_token_mask(rendered.text, rendered.generation, *encoding);
  if (!mask) return mask.error();
  TokenizedResult out;
  out.input_ids = std::move(encoding->ids);
  out.attention_mask.assign(out.input_ids.size(), 1);
  out.assistant_masks = std::move(*mask);
  out.chat = std::move(rendered);
  return out;
}

Result<TokenizedModel> TokenizedModel::load(const std::filesystem::path& dir,
                                            const jinja::CompileOptions& compile,
                                            const InputLimits& limits,
                                            const tokenize::LoadOptions& tokenizer) {
  auto model = Model::load(dir, compile, limits);
  if (!model) return model.error();
  auto tok = tokenize::Tokenizer::load_dir(dir.string(), tokenizer);
  if (!tok) return tok.error();
  return TokenizedModel(std::move(*model), std::move(*tok));
}

Result<TokenizedResult> TokenizedModel::render(const ChatRequest& request,
                                               RenderOptions options) const {
  options.assistant_mask = true;  // masks are always returned: warn when they cannot be set
  auto rendered = model_.render(request, options);
  if (!rendered) return rendered.error();
  return tokenize_rendered(std::move(*rendered), tokenizer_);
}

}  // namespace chatwire::chat
