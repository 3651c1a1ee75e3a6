// Option validators shared by several subcommands (see commands.hpp).
#include <string>

#include "chatwire/jinja.hpp"
#include "commands.hpp"

namespace chatwire::cli {

CLI::Validator iso_clock() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        static const auto probe = jinja::Template::compile("{{ strftime_now('%Y') }}");
        if (!probe) return "cannot check the clock: " + probe.error().to_string();
        jinja::RenderOptions options;
        options.now = text;
        auto rendered = probe->render(Value::empty_dict(), options);
        return rendered ? std::string()
                        : "not a clock strftime_now reads (" + rendered.error().message +
                              "), e.g. 2026-08-19T10:00:00";
      },
      "ISO8601", "iso_clock");
}

}  // namespace chatwire::cli
