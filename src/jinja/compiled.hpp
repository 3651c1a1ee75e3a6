// What Template::compile produces: the syntax tree plus per-symbol tables resolved
// once (globals), shared read-only by every render.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "chatwire/jinja.hpp"
#include "jinja/parser.hpp"

namespace chatwire::jinja {

struct CompiledTemplate {
  ParsedTemplate parsed;
  std::vector<Value> globals;                // per SymbolId: the global function, or Undefined
  std::vector<std::uint64_t> symbol_hashes;  // per SymbolId: hash_string(name), for context lookups
  bool uses_generation = false;              // the oracle's text test for generation tracking
  // Size of the latest output: the next render reserves that much once instead of
  // growing its buffer step by step (renders of one template are similar in size).
  mutable std::atomic<std::size_t> output_hint{0};
  // Symbols of the implicit variables (kNoSymbol when the template never names them).
  static constexpr SymbolId kNoSymbol = 0xFFFFFFFFu;
  SymbolId sym_loop = kNoSymbol, sym_caller = kNoSymbol, sym_kwargs = kNoSymbol,
           sym_varargs = kNoSymbol;
};

// Evaluates the template body into `result` (evaluator.cpp).
Result<RenderResult> render_template(const CompiledTemplate& tmpl, const Value& context,
                                     const RenderOptions& options);

}  // namespace chatwire::jinja

namespace chatwire::jinja {
struct Template::Impl : CompiledTemplate {};
}  // namespace chatwire::jinja
