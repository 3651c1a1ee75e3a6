// The chatwire command line: one subcommand per job, each in its own file
// (cli/<name>.cpp). To add a subcommand, write `void add_<name>(CLI::App&, int&)`
// and list it in kSubcommands in cli/main.cpp.
#pragma once

#include <CLI/CLI.hpp>

namespace chatwire::cli {

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
