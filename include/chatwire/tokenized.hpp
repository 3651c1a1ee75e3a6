// apply_chat_template(tokenize=True, return_dict=True, return_assistant_tokens_mask=True):
// the rendered prompt encoded with the checkpoint's own tokenizer.json, plus the per-token
// assistant mask that transformers derives from the {% generation %} spans.
//
//   auto model = chatwire::chat::TokenizedModel::load("path/to/checkpoint");  // once
//   auto out = model->render(*request, {.mode = chatwire::chat::Mode::training});
//   // out->input_ids, out->attention_mask, out->assistant_masks, out->chat (text + spans)
//
// Exactly as transformers: the text is encoded with add_special_tokens=False (the template
// writes its own BOS), and for each span (start, end) in code points, in order,
//   start_token = char_to_token(start); end_token = char_to_token(end - 1)
//   if start_token is None: stop (later spans are ignored too)
//   mask[start_token : end_token + 1 if end_token else len(ids)] = 1
// including its quirks: an end char outside every token (prefill cuts the text after the
// spans were recorded) or in token 0 masks to the end of the prompt, and a start char outside
// every token (cut away, or a character no token covers) drops that span and all later ones.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "chatwire/chat.hpp"
#include "chatwire/error.hpp"
#include "chatwire/jinja.hpp"
#include "chatwire/tokenize.hpp"

namespace chatwire::chat {

struct TokenizedResult {
  ChatResult chat;  // the rendered text, its generation spans and warnings
  std::vector<std::uint32_t> input_ids;
  std::vector<std::uint8_t> attention_mask;  // one 1 per token: a single prompt has no padding
  // One 0/1 per token. transformers returns it whenever it is asked for; without any
  // {% generation %} block it is all zeros (chat.warnings then says so).
  std::vector<std::uint8_t> assistant_masks;
};

// transformers' mask loop over `spans` (their code point fields) and the encoding of `text`
// (byte offsets, converted to code points as tokenizers' Python binding converts them).
// The only failure: a span ending at 0, where transformers' char_to_token(-1) raises
// OverflowError.
Result<std::vector<std::uint8_t>> assistant_token_mask(std::string_view text,
                                                       std::span<const jinja::GenerationSpan> spans,
                                                       const tokenize::Encoding& encoding);

// Encodes a rendered result (add_special_tokens=False, with offsets) and computes the masks.
Result<TokenizedResult> tokenize_rendered(ChatResult rendered,
                                          const tokenize::Tokenizer& tokenizer);

// A checkpoint directory's templates and its own tokenizer.json, loaded once; immutable and
// safe to share between threads like Model and Tokenizer.
class TokenizedModel {
 public:
  // Model::load(dir) and Tokenizer::load_dir(dir); either failing fails the load.
  static Result<TokenizedModel> load(const std::filesystem::path& dir,
                                     const jinja::CompileOptions& compile = {},
                                     const InputLimits& limits = {},
                                     const tokenize::LoadOptions& tokenizer = {});
  // Model::render (with options.assistant_mask set, for the warning), then tokenize_rendered.
  Result<TokenizedResult> render(const ChatRequest& request, RenderOptions options = {}) const;

  const Model& model() const noexcept { return model_; }
  const tokenize::Tokenizer& tokenizer() const noexcept { return tokenizer_; }

 private:
  TokenizedModel(Model model, tokenize::Tokenizer tokenizer)
      : model_(std::move(model)), tokenizer_(std::move(tokenizer)) {}
  Model model_;
  tokenize::Tokenizer tokenizer_;
};

}  // namespace chatwire::chat
