// Entry point of the `chatwire` command: builds the subcommand table and runs one.
#include <malloc.h>

#include <cstdio>
#include <exception>

#include "commands.hpp"

namespace {

using AddSubcommand = void (*)(CLI::App&, int&);

// One row per subcommand; the order is the order of `chatwire --help`.
constexpr AddSubcommand kSubcommands[] = {
    chatwire::cli::add_render,   chatwire::cli::add_probe, chatwire::cli::add_survey,
    chatwire::cli::add_adapt,    chatwire::cli::add_check, chatwire::cli::add_parse,
    chatwire::cli::add_tokenize, chatwire::cli::add_serve,
};

}  // namespace

int main(int argc, char** argv) {
  // A command runs once over one input: large buffers (a 16 MB model output, its parsed copies)
  // come from the heap and are reused when freed, instead of a fresh mapping each, whose every
  // page faults in zeroed and is unmapped again (about a tenth of `parse` on 16 MB).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
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
