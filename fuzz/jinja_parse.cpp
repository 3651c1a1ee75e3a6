// libFuzzer: compiling arbitrary bytes as a template never crashes, hangs or leaks;
// it gives a Template or an Error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "chatwire/jinja.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view source(reinterpret_cast<const char*>(data), size);
  chatwire::jinja::CompileOptions options;
  options.limits.max_parse_depth = 200;
  auto compiled = chatwire::jinja::Template::compile(source, options);
  (void)compiled;
  return 0;
}
