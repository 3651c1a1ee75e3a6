// `chatwire parse --response-template FILE` (and `--model DIR` when the directory's
// tokenizer_config.json has a response_template): model output read with transformers' region
// parser instead of a dialect.
#pragma once

#include <cstddef>
#include <string>

#include "chatwire/response_json.hpp"

namespace chatwire::cli {

struct ResponseTemplateRun {
  std::string prefix_path;  // the prompt sent before generation ("" = no prefix)
  std::string tools_path;
  std::size_t stream = 0;  // N-byte chunks, events printed as JSON lines
  std::size_t max_input_bytes = 0;
};

// Parses standard input with `tmpl` and prints the message (or, streaming, each event and then
// {"type": "message", "message": ...}). Returns the exit code.
int run_response_template(const response::Template& tmpl, const ResponseTemplateRun& run);

}  // namespace chatwire::cli
