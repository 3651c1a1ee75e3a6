// What Jinja2's optimizer computes at compile time (Expr.as_const), for the two passes that
// need it: the optimiser replaces such nodes by their value, and the resolve pass marks `~`
// chains that Jinja2 folds, because a folded chain is a plain str even when a piece is
// Markup (BinaryExpr::folds_to_str), with or without chatwire's own optimiser.
#pragma once

#include <optional>

#include "chatwire/value.hpp"
#include "jinja/ast.hpp"

namespace chatwire::jinja {

// The value of a constant expression: a literal; `+ - * / // % **` and `~` of constants
// (`'\n' ~ '<tools>'`, `1 + 1`); a sign on a number (`-1`); a list, tuple or dict literal of
// constants. nullopt for anything else, for an operation that fails (the runtime raises it
// where it is: `1 // 0`, an unhashable key, an overflow), and for a string result over
// kMaxFoldedBytes (`'x' * 1000000` stays a runtime computation under its limits).
std::optional<Value> constant_value(const Expr& e);
inline constexpr std::size_t kMaxFoldedBytes = 64u << 10;

// Whether Jinja2's optimizer computes `e` as an operand of a `~` chain: a constant, a chain
// that folds (folds_to_str already set), or a filter that does not take the context
// (FilterEntry::needs_context) applied to such an operand with constant arguments.
bool computable_at_compile_time(const Expr& e);

}  // namespace chatwire::jinja
