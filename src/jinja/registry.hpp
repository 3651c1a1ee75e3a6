// The filter and test tables (filters.cpp, tests.cpp): name -> function.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "chatwire/value.hpp"

namespace chatwire::jinja {

class RenderState;

// A filter receives the operand first, then the call's arguments.
using FilterFn = Result<Value> (*)(RenderState& state, const Value& operand, const CallArgs& args);
using TestFn = Result<bool> (*)(RenderState& state, const Value& operand, const CallArgs& args);

struct FilterEntry {
  std::string_view name;
  FilterFn fn;
};

struct TestEntry {
  std::string_view name;
  TestFn fn;
  std::string_view python_name;  // for arity messages ("test_even")
  std::uint8_t arity = 0;        // arguments after the operand
};

// The order of `d | dictsort` (no arguments: by key, case-insensitive, ascending) as
// positions of d's entries: order.size() == d.dict_size(). Raises as the filter does when
// two keys cannot be compared.
void dictsort_positions(RenderState& state, const Value& d, std::span<std::uint32_t> order);

// transformers' tojson filter, appending its text to `out` (a printed `{{ x | tojson }}`
// writes it without building the string Value). Raises as the filter does.
void tojson_into(RenderState& state, const Value& v, const CallArgs& args, std::string& out);

// HTML-escapes `s` as markupsafe.escape does (& < > " ').
void html_escape(std::string& out, std::string_view s);

const FilterEntry* find_filter(std::string_view name);
const TestEntry* find_test(std::string_view name);

}  // namespace chatwire::jinja
