// Jinja2's Expr.as_const for the node kinds chatwire folds (see fold.hpp).
#include "jinja/fold.hpp"

#include <utility>
#include <vector>

namespace chatwire::jinja {

namespace {

std::optional<Value> binary_constant(const BinaryExpr& b) {
  if (b.kind != ExprKind::Binary && b.kind != ExprKind::Concat) return std::nullopt;
  auto left = constant_value(*b.left);
  if (!left) return std::nullopt;
  auto right = constant_value(*b.right);
  if (!right) return std::nullopt;
  if (b.kind == ExprKind::Concat) {  // str(a) + str(b)
    std::string text;
    append_str(text, *left);
    append_str(text, *right);
    if (text.size() > kMaxFoldedBytes) return std::nullopt;
    return Value(std::move(text));
  }
  if (!(left->is_string() || left->is_number()) || !(right->is_string() || right->is_number()))
    return std::nullopt;
  auto result = binary_op(b.op, *left, *right);
  if (!result) return std::nullopt;
  if (result->is_string() && result->as_string().size() > kMaxFoldedBytes) return std::nullopt;
  return std::move(result.value());
}

// A literal is shared by every evaluation once folded: nothing in the sandbox can mutate
// it (append/update raise SecurityError), and only `is sameas` between two evaluations of
// the same literal could tell.
std::optional<Value> literal_constant(const Expr& e) {
  if (e.kind == ExprKind::Dict) {
    const auto& dict = static_cast<const DictExpr&>(e);
    std::vector<std::pair<Value, Value>> entries;
    entries.reserve(dict.items.size());
    for (const auto& [k, v] : dict.items) {
      auto key = constant_value(*k);
      if (!key) return std::nullopt;
      auto value = constant_value(*v);
      if (!value) return std::nullopt;
      entries.emplace_back(std::move(*key), std::move(*value));
    }
    auto built = Value::dict(std::move(entries));
    if (!built) return std::nullopt;
    return std::move(built.value());
  }
  const auto& seq = static_cast<const SequenceExpr&>(e);
  std::vector<Value> items;
  items.reserve(seq.items.size());
  for (const auto& item : seq.items) {
    auto value = constant_value(*item);
    if (!value) return std::nullopt;
    items.push_back(std::move(*value));
  }
  return e.kind == ExprKind::List ? Value::list(std::move(items)) : Value::tuple(std::move(items));
}

}  // namespace

std::optional<Value> constant_value(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Const:
      return static_cast<const ConstExpr&>(e).value;
    case ExprKind::Binary:
    case ExprKind::Concat:
      return binary_constant(static_cast<const BinaryExpr&>(e));
    case ExprKind::Neg:
    case ExprKind::Pos: {
      auto operand = constant_value(*static_cast<const UnaryExpr&>(e).operand);
      if (!operand || !(operand->is_int() || operand->is_float())) return std::nullopt;
      auto signed_value = e.kind == ExprKind::Neg ? negate(*operand) : unary_plus(*operand);
      if (!signed_value) return std::nullopt;  // an overflow: the runtime raises it
      return std::move(signed_value.value());
    }
    case ExprKind::List:
    case ExprKind::Tuple:
    case ExprKind::Dict:
      return literal_constant(e);
    default:
      return std::nullopt;
  }
}

bool computable_at_compile_time(const Expr& e) {
  if (e.kind == ExprKind::Concat && static_cast<const BinaryExpr&>(e).folds_to_str) return true;
  if (e.kind != ExprKind::Filter) return constant_value(e).has_value();
  const auto& fe = static_cast<const FilterExpr&>(e);
  if (!fe.filter || fe.filter->needs_context || !fe.operand) return false;
  if (fe.arguments.dyn_args || fe.arguments.dyn_kwargs) return false;
  for (const auto& a : fe.arguments.args)
    if (!constant_value(*a)) return false;
  for (const auto& k : fe.arguments.kwargs)
    if (!constant_value(*k.value)) return false;
  return computable_at_compile_time(*fe.operand);
}

}  // namespace chatwire::jinja
