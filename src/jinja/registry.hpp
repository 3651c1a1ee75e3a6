// The filter and test tables (filters.cpp, tests.cpp): name -> function.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "chatwire/value.hpp"

namespace chatwire::jinja {

class RenderState;

// A filter receives the operand first, then the call's arguments.
using FilterFn = Result<Value> (*)(RenderState& state, const Value& operand, const CallArgs& args);
using TestFn = Result<bool> (*)(RenderState& state, const Value& operand, const CallArgs& args);

// What a filter's result is when Markup is involved (Jinja2 3.1.6 over markupsafe): the
// column that decides whether the next `+` or print escapes.
enum class FilterMarkup : std::uint8_t {
  Str,         // as the function returns it: a new str, or a value it passes through
  Keep,        // a Markup operand gives a Markup (soft_str(s).upper(), s[::-1], Markup % ...)
  Always,      // a Markup whatever the operand (safe, escape, forceescape)
  Autoescape,  // a Markup while autoescaping is on (urlize, xmlattr)
};

// Filters the evaluator can answer without building a value: `x | trim` printed is a view
// of x, `x | trim | length` counts that view, a printed `x | tojson` is written without a
// string Value, and `for k, v in d | items` / `d | dictsort` binds d's entries directly. The
// optimiser copies the column into FilterExpr::special; with the optimiser off every filter
// takes the general path.
enum class FilterSpecial : std::uint8_t { None, Trim, Length, Tojson, Items, Dictsort };

// Tests the evaluator answers itself, without an argument list (TestEntry::fast_path, copied
// into TestExpr::special by the optimiser).
enum class TestSpecial : std::uint8_t {
  None,  // not special (the `none` test is NoneValue)
  Defined,
  Undefined,
  Escaped,
  String,
  NoneValue,
  Mapping
};

// One row per filter name. The columns after `fn` are what the rest of the engine needs to
// know about a filter: how its result treats Markup (the evaluator), whether Jinja2's
// optimizer may compute it at compile time (resolve and optimise), and its fast path.
struct FilterEntry {
  std::string_view name;
  FilterFn fn;
  FilterMarkup markup = FilterMarkup::Str;
  // Jinja2's @pass_context filters: they read the render's environment, so its optimizer
  // never computes them at compile time. Every other filter is computed when its operand
  // and arguments are constants (what `~` chains of constants fold to: folds_to_str).
  bool needs_context = false;
  FilterSpecial fast_path = FilterSpecial::None;
};

// Calls the filter and applies its Markup column: every call of a filter goes through here.
Result<Value> run_filter(const FilterEntry& filter, RenderState& state, const Value& operand,
                         const CallArgs& args);

struct TestEntry {
  std::string_view name;
  TestFn fn;
  std::string_view python_name;  // for arity messages ("test_even")
  std::uint8_t arity = 0;        // arguments after the operand
  TestSpecial fast_path = TestSpecial::None;
};

// Room for n sort positions, inside the object up to 16 (a dict literal of a few keys,
// sorted at every render, needs no allocation).
class SortPositions {
 public:
  explicit SortPositions(std::size_t n) {
    if (n > kInline) heap_.resize(n);
    span_ = n > kInline ? std::span<std::uint32_t>(heap_) : std::span<std::uint32_t>(inline_, n);
  }
  SortPositions(const SortPositions&) = delete;
  SortPositions& operator=(const SortPositions&) = delete;
  std::span<std::uint32_t> span() { return span_; }

 private:
  static constexpr std::size_t kInline = 16;
  std::uint32_t inline_[kInline];
  std::vector<std::uint32_t> heap_;
  std::span<std::uint32_t> span_;
};

// The order of `d | dictsort` (no arguments: by key, case-insensitive, ascending) as
// positions of d's entries: order.size() == d.dict_size(). Raises as the filter does when
// two keys cannot be compared.
void dictsort_positions(RenderState& state, const Value& d, std::span<std::uint32_t> order);

// transformers' tojson filter, appending its text to `out` (a printed `{{ x | tojson }}`
// writes it without building the string Value). Raises as the filter does.
void tojson_into(RenderState& state, const Value& v, const CallArgs& args, std::string& out);

const FilterEntry* find_filter(std::string_view name);
const TestEntry* find_test(std::string_view name);

}  // namespace chatwire::jinja
