// Printing extras of the value component (src/value/print.cpp): the nesting bound of repr()
// and == (also ops.cpp), and Python's pprint.pformat. Kept out of value.hpp so that adding
// them does not rebuild every user of values.
#pragma once

#include <cstddef>
#include <string>

#include "chatwire/error.hpp"

namespace chatwire {

// Python raises RecursionError when repr() or == descend about a thousand nested containers
// (a Jinja2 render leaves room for ~990); chatwire stops at this depth instead of
// overflowing the C++ stack on a list a template nested a million deep.
inline constexpr std::size_t kMaxValueNesting = 1000;

// Thrown by append_str / append_repr / to_str / to_repr, which have no error channel, for
// containers nested deeper than kMaxValueNesting: RecursionError "maximum recursion depth
// exceeded while getting the repr of an object", as Python. The Jinja engine returns `error`
// from render. Values parsed from JSON (max_depth 512) never reach the bound.
// compare() and contains() return RecursionError "maximum recursion depth exceeded in
// comparison" as an ordinary Error instead.
struct NestingError {
  Error error;
};

class Value;

// pprint.pformat(v) as Python 3.11 writes it (Jinja2's `pprint` filter): width 80, indent 1,
// dict keys sorted, containers and long strings broken over lines. Throws NestingError
// like append_repr.
void append_pformat(std::string& out, const Value& v);

}  // namespace chatwire
