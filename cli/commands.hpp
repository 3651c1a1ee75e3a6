// The chatwire command line: one subcommand per job, each in its own file
// (cli/<name>.cpp). To add a subcommand, write `void add_<name>(CLI::App&, int&)`
// and list it in kSubcommands in cli/main.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/error.hpp"

namespace chatwire::cli {

// For a count or limit read into an unsigned integer: CLI11 converts with strtoull, which takes
// "-3" as 2^64-3 (a limit gone, a loop without end), so a leading minus is refused first.
inline CLI::Validator non_negative() {
  return CLI::Validator(
      [](std::string& text) {
        const auto first = text.find_first_not_of(" \t");
        return first != std::string::npos && text[first] == '-'
                   ? std::string("expected a non-negative integer, got " + text)
                   : std::string();
      },
      "NONNEGATIVE", "non_negative");
}

// For --now: a clock strftime_now can read, checked before anything renders (a template that
// never calls strftime_now would not notice a bad one, and the probe would measure its failure
// as the template's). Checked by the engine itself, so it takes what rendering takes.
CLI::Validator iso_clock();

// The first option given on `cmd`'s command line that the way it runs does not read, or "":
// `reads` names the options read, and every option whose name starts with `read_prefix` is read
// too (render's --max-* limits). Such an option is refused rather than ignored.
inline std::string first_unread_option(const CLI::App& cmd,
                                       const std::vector<std::string_view>& reads,
                                       std::string_view read_prefix = {}) {
  for (const CLI::Option* option : cmd.get_options()) {
    const std::string name = option->get_name();
    if (option->count() == 0 || !name.starts_with("--") || name == "--help") continue;
    if (!read_prefix.empty() && name.starts_with(read_prefix)) continue;
    if (std::find(reads.begin(), reads.end(), name) == reads.end()) return name;
  }
  return {};
}

// A template file is adapted without special tokens (its model is unknown; the probe's stand-ins
// <s> and </s> are no model's). When a missing token is why it did not render, the message says
// how to give the model's.
inline Error with_special_tokens_hint(Error error) {
  if (error.message.find("_token' is undefined") != std::string::npos)
    error.message +=
        " (a template file has no special tokens: give --tokenizer DIR for its "
        "model's bos_token, eos_token, ...)";
  return error;
}

// An error of a template file or model directory names it where the error itself names no field
// (a syntax error's line and column are the file's).
inline Error naming(Error error, const std::string& where) {
  if (error.path.empty()) error.path = where;
  return error;
}

// Each function registers one subcommand on `root`. Its callback runs the job and
// stores the process exit code in `exit_code` (0 success, 1 failure, 2 usage).
void add_render(CLI::App& root, int& exit_code);
void add_probe(CLI::App& root, int& exit_code);
void add_survey(CLI::App& root, int& exit_code);
void add_adapt(CLI::App& root, int& exit_code);
void add_check(CLI::App& root, int& exit_code);
void add_parse(CLI::App& root, int& exit_code);
void add_tokenize(CLI::App& root, int& exit_code);
void add_serve(CLI::App& root, int& exit_code);

}  // namespace chatwire::cli
