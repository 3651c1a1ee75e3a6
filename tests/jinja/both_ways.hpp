// Every golden of tests/jinja is rendered twice: compiled with the optimise pass (what users
// get, and what is compared with the oracle) and without it (CompileOptions::optimize =
// false). The optimiser may only make rendering faster, so the two must agree byte for byte,
// generation spans and errors (type, message, position) included.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "chatwire/jinja.hpp"
#include "jinja/test_util.hpp"

namespace chatwire::test {

class BothWays {
 public:
  static Result<jinja::RenderResult> run(const Result<jinja::Template>& t, const Value& context,
                                         const jinja::RenderOptions& options) {
    if (!t.ok()) return t.error();
    return t->render(context, options);
  }

  explicit BothWays(std::string_view source, jinja::CompileOptions options = {})
      : optimized_(compile(source, options, true)), unoptimized_(compile(source, options, false)) {}

  // The optimised template (its compile error when it fails).
  const Result<jinja::Template>& optimized() const { return optimized_; }

  // Renders with both templates (a compile error counts as the result) and returns the
  // optimised result; `difference` says how the unoptimised one differs ("" when it does not).
  // `random_output`: the template prints random choices, only success or the error compares.
  Result<jinja::RenderResult> render(const Value& context, const jinja::RenderOptions& options,
                                     std::string& difference, bool random_output = false) const {
    auto with = run(optimized_, context, options);
    auto without = run(unoptimized_, context, options);
    difference = describe(with, without, random_output);
    return with;
  }

  static Result<jinja::Template> compile(std::string_view source, jinja::CompileOptions options,
                                         bool optimize) {
    options.optimize = optimize;
    return jinja::Template::compile(source, options);
  }

  // How `without` (the unoptimised result) differs from `with`; "" when it does not.
  static std::string describe(const Result<jinja::RenderResult>& with,
                              const Result<jinja::RenderResult>& without,
                              bool random_output = false) {
    if (with.ok() != without.ok())
      return with.ok() ? "without the optimiser it fails: " + without.error().to_string()
                       : "without the optimiser it renders; with it: " + with.error().to_string();
    if (!with.ok()) {
      const Error& a = with.error();
      const Error& b = without.error();
      if (a.type != b.type || a.message != b.message || a.line != b.line || a.column != b.column)
        return "error with the optimiser: " + a.to_string() + "; without: " + b.to_string();
      return {};
    }
    if (random_output) return {};
    if (with->output != without->output)
      return "output without the optimiser: " + describe_difference(with->output, without->output);
    if (with->uses_generation != without->uses_generation)
      return "uses_generation differs without the optimiser";
    if (with->generation.size() != without->generation.size())
      return "generation span count differs without the optimiser";
    for (std::size_t i = 0; i < with->generation.size(); ++i) {
      const auto& a = with->generation[i];
      const auto& b = without->generation[i];
      if (a.begin != b.begin || a.end != b.end || a.begin_byte != b.begin_byte ||
          a.end_byte != b.end_byte)
        return "generation span " + std::to_string(i) + " differs without the optimiser";
    }
    return {};
  }

 private:
  Result<jinja::Template> optimized_, unoptimized_;
};

// Compiles `source` without the optimiser and renders it (a compile error is the result).
inline Result<jinja::RenderResult> render_unoptimized(std::string_view source, const Value& context,
                                                      const jinja::RenderOptions& options) {
  return BothWays::run(BothWays::compile(source, {}, false), context, options);
}

}  // namespace chatwire::test
