// chatwire's Jinja engine: compile a chat template once, render it many times,
// byte-identical to Hugging Face transformers' apply_chat_template environment
// (Jinja2 3.1.6 ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks,
// loopcontrols, {% generation %}, raise_exception, strftime_now, HF tojson).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chatwire/error.hpp"
#include "chatwire/value.hpp"

namespace chatwire::jinja {

// Every resource a template can burn. Hitting a limit stops rendering at once with a
// `LimitError` naming the limit (e.g. "LimitError: max_steps=5000000 exceeded").
// Defaults never fire on real templates with 1000-turn conversations.
struct Limits {
  std::uint64_t max_steps = 50'000'000;        // evaluation steps (loop iterations, calls, ...)
  std::uint32_t max_recursion = 500;           // macro / recursive-loop call depth
  std::uint32_t max_parse_depth = 500;         // nesting of expressions and blocks in the parser
  std::size_t max_output_bytes = 256u << 20;   // rendered output
  std::size_t max_string_bytes = 64u << 20;    // any single string built while rendering
  std::size_t max_container_items = 4u << 20;  // any single list/dict built while rendering
  std::int64_t max_range = 100'000;  // range() size; Jinja2's sandbox raises OverflowError above it
};

struct CompileOptions {
  Limits limits;  // only max_parse_depth is used at compile time
  // Run the optimise pass (constant folding, the evaluator's fast paths). Off, a template
  // renders the same bytes and raises the same errors, only slower: for checking exactly
  // that, and for telling an optimiser bug from an evaluator bug.
  bool optimize = true;
};

struct RenderOptions {
  Limits limits;
  // Local time used by strftime_now, ISO 8601 "YYYY-MM-DDTHH:MM:SS[.ffffff]".
  // Empty means the real local clock.
  std::string now;
};

// One {% generation %} span: [begin, end) in code points (as transformers records them,
// including its quirk that a block rendered before any output is not recorded) and the
// same span in UTF-8 bytes of `output`.
struct GenerationSpan {
  std::size_t begin = 0, end = 0;            // code points
  std::size_t begin_byte = 0, end_byte = 0;  // bytes
};

struct RenderResult {
  std::string output;
  bool uses_generation = false;  // the template has {% generation %} ... {% endgeneration %}
  std::vector<GenerationSpan> generation;
};

class Template {
 public:
  // Parses `source`. Syntax errors carry the oracle's error type (TemplateSyntaxError)
  // and the template line/column.
  static Result<Template> compile(std::string_view source, const CompileOptions& options = {});

  // Renders with `context` (a dict of template variables). Thread-safe: a compiled
  // Template is immutable and may be rendered from many threads at once.
  Result<RenderResult> render(const Value& context, const RenderOptions& options = {}) const;

  // True when the template source uses {% generation %} (transformers' own test).
  bool uses_generation() const;

  // Every name the template's expressions and targets mention (variables it reads, names it
  // sets or loops over, macro names and parameters), sorted; not attribute or filter names.
  // The probe takes its candidate template variables from this list.
  std::vector<std::string> names() const;

  Template(Template&&) noexcept;
  Template& operator=(Template&&) noexcept;
  Template(const Template&);
  Template& operator=(const Template&);
  ~Template();

  struct Impl;

 private:
  explicit Template(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

}  // namespace chatwire::jinja
