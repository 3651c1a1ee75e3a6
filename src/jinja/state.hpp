// Per-render state: scopes (frames), the output buffer with its capture stack and
// {% generation %} tracking, fuel and recursion counters. Lives on the stack of
// Template::render; nothing here is shared between renders.
#pragma once
// GCC 12 reports a false -Wrestrict inside std::string concatenation at -O3
// (GCC bug 105329); it is not a property of this code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "chatwire/jinja.hpp"
#include "chatwire/value.hpp"
#include "jinja/ast.hpp"
#include "jinja/output.hpp"
#include "jinja/small_vector.hpp"

namespace chatwire::jinja {

// Thrown inside the engine to unwind a failed render; Template::render catches it
// and returns the Error. Never crosses the public API.
struct RenderError {
  Error error;
};

[[noreturn]] void raise(Error error);
[[noreturn]] void raise(std::string type, std::string message);

// Unwraps a Result or throws its error.
template <typename T>
T check(Result<T>&& r) {
  if (!r) raise(std::move(r.error()));
  return std::move(r.value());
}

// Variables of one scope. Few per scope, so a linear search over a small vector.
struct Frame {
  Frame* parent = nullptr;
  SmallVector<std::pair<SymbolId, Value>, 4> vars;

  const Value* find_local(SymbolId id) const {
    for (const auto& [sym, value] : vars)
      if (sym == id) return &value;
    return nullptr;
  }
  void set(SymbolId id, Value value) {
    for (auto& [sym, v] : vars) {
      if (sym == id) {
        v = std::move(value);
        return;
      }
    }
    vars.emplace_back(id, std::move(value));
  }
};

struct CompiledTemplate;

class RenderState : public CallContext {
 public:
  RenderState(const CompiledTemplate& tmpl, const Value& context, const RenderOptions& options);

  const CompiledTemplate& tmpl;
  const Value& context;
  const RenderOptions& options;
  const Limits& lim;
  Output out;
  // Text of a printed value that is not a string (a number, a container's repr, tojson),
  // filled and written at once; shared by the render's evaluators (one per macro call).
  std::string scratch;
  Frame root;
  std::uint64_t steps_left = 0;  // lim.max_steps + 1 at the start
  std::uint32_t depth = 0;       // macro / recursive loop nesting
  bool track_generation = false;
  // Inside {% autoescape true %} (or a macro or call block defined there): printed values
  // that are not Markup are HTML-escaped, and captures and macro results are Markup.
  bool autoescape = false;
  const char* stack_base = nullptr;  // frame address of the render call (stack budget)
  // Recorded {% generation %} spans: code points [begin, end), and where they are in the
  // bytes of the top-level output when that is known as they are recorded (the end is
  // known when the span's text went to the top level; kUnknownByte otherwise).
  static constexpr std::size_t kUnknownByte = SIZE_MAX;
  struct RecordedSpan {
    std::size_t begin, end, begin_byte, end_byte;
  };
  std::vector<RecordedSpan> generation;
  // Set by `{{ macro(...) }}` right before the call: the macro writes its body to the
  // current output instead of returning it as a string (MacroObject::call clears it).
  bool macro_print_in_place = false;
  // RenderOptions::now, parsed on the first strftime_now call of the render.
  bool now_parsed = false;
  std::tm now_tm{};
  long now_micros = 0;

  // The outermost scope, by symbol. Most names a template reads live there: its own
  // top-level `set`s, the context and the globals; a table indexed by symbol answers them
  // without searching the root's variables and then the context on every read.
  // outer[s]: nullptr = not resolved yet, &kAbsent = undefined, otherwise the root binding
  // (a slot of root_slots), else the context's value, else the global. Templates name a
  // few dozen symbols, so both tables usually live inside the state (no allocation).
  static const Value kAbsent;
  static constexpr std::size_t kInlineSymbols = 128;
  const Value** outer = nullptr;
  Value* root_slots = nullptr;  // only the slots listed in root_bound hold a Value
  SmallVector<SymbolId, 32> root_bound;
  const Value* outer_inline[kInlineSymbols];
  alignas(Value) unsigned char root_inline[kInlineSymbols * sizeof(Value)];
  std::unique_ptr<const Value*[]> outer_heap;
  std::unique_ptr<unsigned char[]> root_heap;
  ~RenderState();
  RenderState(const RenderState&) = delete;
  RenderState& operator=(const RenderState&) = delete;

  const Value* resolve_outer(SymbolId symbol) {  // nullptr: undefined
    const Value* v = outer[symbol];
    if (!v) v = resolve_outer_slow(symbol);
    return v == &kAbsent ? nullptr : v;
  }
  const Value* resolve_outer_slow(SymbolId symbol);
  // `{% set %}` / `{% macro %}` at the top level.
  void bind_root(SymbolId symbol, Value value);

  // Counts down: one decrement and test per step.
  void step() {
    if (--steps_left == 0) fuel_exhausted();
  }
  void steps(std::uint64_t n) {  // n steps at once
    if (steps_left <= n) fuel_exhausted();
    steps_left -= n;
  }
  [[noreturn]] void fuel_exhausted();

  // Name resolution: frames, then the root scope, the render context, the globals.
  Value lookup(Frame* frame, SymbolId symbol);
  // The variable's storage, or nullptr when it is undefined. The innermost scope (a
  // loop's item, a macro's parameters: most reads) is searched inline.
  const Value* lookup_ptr(Frame* frame, SymbolId symbol) {
    if (frame == &root) return resolve_outer(symbol);
    if (const Value* v = frame->find_local(symbol)) return v;
    return lookup_outer(frame->parent, symbol);
  }
  const Value* lookup_outer(Frame* frame, SymbolId symbol);  // from `frame` outwards
  // Binds a variable in `frame` (the root scope's table for the root frame).
  void bind(Frame* frame, SymbolId symbol, Value value) {
    if (frame == &root) return bind_root(symbol, std::move(value));
    frame->set(symbol, std::move(value));
  }
  Value lookup_name(Frame* frame, std::string_view name);  // by name (rare paths)
};

}  // namespace chatwire::jinja
