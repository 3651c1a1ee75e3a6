// The capability card (issue 21): everything a service must know about one model's chat
// template before routing a request to it, measured. Built from the probe profile, the
// output parser chosen by readback (with its round-trip verdict), and a minimal compatibility
// example per row rendered with the model's own template (role order, empty system, two user
// turns, long conversation, prefill, tools, reasoning, multimodal, documents).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "chatwire/error.hpp"

namespace chatwire::cli {

// The card of a model directory (`model` true) or of one .jinja file (special tokens <s>,
// </s>), as JSON: {card_version, model, special_tokens, rows: [{row, verdict, ok, measured,
// example?}], parser, template_bugs, silent_failures, profile}.
Result<nlohmann::ordered_json> capability_card(const std::filesystem::path& path, bool model);

// The card as Markdown: the rows as a table, then each example's request and rendered text.
std::string card_markdown(const nlohmann::ordered_json& card);

}  // namespace chatwire::cli
