// Entry point of the `chatwire` command: builds the subcommand table and runs one.
#include <cstdio>
#include <exception>

#include "commands.hpp"

namespace {

using AddSubcommand = void (*)(CLI::App&, int&);

// One row per subcommand; the order is the order of `chatwire --help`.
constexpr AddSubcommand kSubcommands[] = {
    chatwire::cli::add_render, chatwire::cli::add_probe,    chatwire::cli::add_survey,
    chatwire::cli::add_adapt,  chatwire::cli::add_check,    chatwire::cli::add_parse,
    chatwire::cli::add_tokenize,
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"chatwire: render, probe, adapt and parse LLM chat formats"};
  app.require_subcommand(1);
  int exit_code = 0;
  for (AddSubcommand add : kSubcommands) add(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chatwire: %s\n", e.what());
    return 1;
  }
  return exit_code;
}
