// Every built-in test of Jinja2 3.1.6 (jinja2/tests.py). ONE table: name -> function.
#include "jinja/objects.hpp"
#include "jinja/registry.hpp"

namespace chatwire::jinja {

namespace {

const Value& arg0(const CallArgs& args, const char* test) {
  if (!args.positional.empty()) return args.positional[0];
  if (!args.keyword.empty()) return args.keyword[0].value;
  raise("TypeError", std::string("test_") + test + "() missing 1 required positional argument");
}

Result<bool> t_boolean(RenderState&, const Value& v, const CallArgs&) {
  return v.is_bool();
}
Result<bool> t_callable(RenderState&, const Value& v, const CallArgs&) {
  return v.is_object() && v.as_object()->is_callable();
}
Result<bool> t_defined(RenderState&, const Value& v, const CallArgs&) {
  return !v.is_undefined();
}
Result<bool> t_undefined(RenderState&, const Value& v, const CallArgs&) {
  return v.is_undefined();
}
Result<bool> t_divisibleby(RenderState&, const Value& v, const CallArgs& a) {
  Value r = check(binary_op(BinaryOp::Mod, v, arg0(a, "divisibleby")));
  return equals(r, Value(0));
}
Result<bool> t_even(RenderState&, const Value& v, const CallArgs&) {
  return equals(check(binary_op(BinaryOp::Mod, v, Value(2))), Value(0));
}
Result<bool> t_odd(RenderState&, const Value& v, const CallArgs&) {
  return equals(check(binary_op(BinaryOp::Mod, v, Value(2))), Value(1));
}
Result<bool> t_eq(RenderState&, const Value& v, const CallArgs& a) {
  const Value& other = arg0(a, "eq");
  // selectattr("role", "equalto", "user"): two strings compare their bytes inline.
  if (v.is_string() && other.is_string())
    return detail::same_bytes(v.as_string(), other.as_string());
  return equals(v, other);
}
Result<bool> t_ne(RenderState&, const Value& v, const CallArgs& a) {
  return !equals(v, arg0(a, "ne"));
}
Result<bool> t_lt(RenderState&, const Value& v, const CallArgs& a) {
  return compare(CompareOp::Lt, v, arg0(a, "lt"));
}
Result<bool> t_le(RenderState&, const Value& v, const CallArgs& a) {
  return compare(CompareOp::Le, v, arg0(a, "le"));
}
Result<bool> t_gt(RenderState&, const Value& v, const CallArgs& a) {
  return compare(CompareOp::Gt, v, arg0(a, "gt"));
}
Result<bool> t_ge(RenderState&, const Value& v, const CallArgs& a) {
  return compare(CompareOp::Ge, v, arg0(a, "ge"));
}
Result<bool> t_escaped(RenderState&, const Value& v, const CallArgs&) {
  return v.is_markup();  // hasattr(value, "__html__")
}
Result<bool> t_false(RenderState&, const Value& v, const CallArgs&) {
  return v.is_bool() && !v.as_bool();
}
Result<bool> t_true(RenderState&, const Value& v, const CallArgs&) {
  return v.is_bool() && v.as_bool();
}
Result<bool> t_filter(RenderState&, const Value& v, const CallArgs&) {
  return v.is_string() && find_filter(v.as_string()) != nullptr;
}
Result<bool> t_test(RenderState&, const Value& v, const CallArgs&) {
  return v.is_string() && find_test(v.as_string()) != nullptr;
}
Result<bool> t_float(RenderState&, const Value& v, const CallArgs&) {
  return v.is_float();
}
Result<bool> t_integer(RenderState&, const Value& v, const CallArgs&) {
  return v.is_int();
}
Result<bool> t_number(RenderState&, const Value& v, const CallArgs&) {
  return v.is_number();
}
Result<bool> t_in(RenderState&, const Value& v, const CallArgs& a) {
  return contains(arg0(a, "in"), v);
}
Result<bool> t_iterable(RenderState&, const Value& v, const CallArgs&) {
  switch (v.kind()) {
    case Kind::String:
    case Kind::List:
    case Kind::Tuple:
    case Kind::Dict:
    case Kind::Undefined:
      return true;
    case Kind::Object:
      return static_cast<bool>(v.as_object()->iterate());
    default:
      return false;
  }
}
Result<bool> t_lower(RenderState&, const Value& v, const CallArgs&) {
  std::string s = to_str(v);
  return truthy(check(call_method(Value(s), "islower", CallArgs{})));
}
Result<bool> t_upper(RenderState&, const Value& v, const CallArgs&) {
  std::string s = to_str(v);
  return truthy(check(call_method(Value(s), "isupper", CallArgs{})));
}
Result<bool> t_mapping(RenderState&, const Value& v, const CallArgs&) {
  return v.is_dict();
}
Result<bool> t_none(RenderState&, const Value& v, const CallArgs&) {
  return v.is_none();
}
Result<bool> t_sameas(RenderState&, const Value& v, const CallArgs& a) {
  const Value& other = arg0(a, "sameas");
  if (v.kind() != other.kind()) return false;
  switch (v.kind()) {
    case Kind::None:
      return true;
    case Kind::Bool:
      return v.as_bool() == other.as_bool();
    case Kind::Int:  // CPython caches small ints
      return v.as_int() == other.as_int() && v.as_int() >= -5 && v.as_int() <= 256;
    default:
      return v.same(other);
  }
}
Result<bool> t_sequence(RenderState&, const Value& v, const CallArgs&) {
  if (v.is_object())  // len() and __getitem__: range, groupby tuples
    return dynamic_cast<const RangeObject*>(v.as_object()) != nullptr ||
           dynamic_cast<const GroupTuple*>(v.as_object()) != nullptr;
  return v.is_string() || v.is_sequence() || v.is_dict() || v.is_undefined();
}
Result<bool> t_string(RenderState&, const Value& v, const CallArgs&) {
  return v.is_string();
}

constexpr TestEntry kTests[] = {
    {"boolean", t_boolean, "test_boolean", 0},
    {"callable", t_callable, "test_callable", 0},
    {"defined", t_defined, "test_defined", 0, TestSpecial::Defined},
    {"divisibleby", t_divisibleby, "test_divisibleby", 1},
    {"eq", t_eq, "test_eq", 1},
    {"equalto", t_eq, "test_eq", 1},
    {"==", t_eq, "test_eq", 1},
    {"escaped", t_escaped, "test_escaped", 0, TestSpecial::Escaped},
    {"even", t_even, "test_even", 0},
    {"false", t_false, "test_false", 0},
    {"filter", t_filter, "test_filter", 0},
    {"float", t_float, "test_float", 0},
    {"ge", t_ge, "test_ge", 1},
    {">=", t_ge, "test_ge", 1},
    {"gt", t_gt, "test_gt", 1},
    {"greaterthan", t_gt, "test_gt", 1},
    {">", t_gt, "test_gt", 1},
    {"in", t_in, "test_in", 1},
    {"integer", t_integer, "test_integer", 0},
    {"iterable", t_iterable, "test_iterable", 0},
    {"le", t_le, "test_le", 1},
    {"<=", t_le, "test_le", 1},
    {"lower", t_lower, "test_lower", 0},
    {"lt", t_lt, "test_lt", 1},
    {"lessthan", t_lt, "test_lt", 1},
    {"<", t_lt, "test_lt", 1},
    {"mapping", t_mapping, "test_mapping", 0, TestSpecial::Mapping},
    {"ne", t_ne, "test_ne", 1},
    {"!=", t_ne, "test_ne", 1},
    {"none", t_none, "test_none", 0, TestSpecial::NoneValue},
    {"number", t_number, "test_number", 0},
    {"odd", t_odd, "test_odd", 0},
    {"sameas", t_sameas, "test_sameas", 1},
    {"sequence", t_sequence, "test_sequence", 0},
    {"string", t_string, "test_string", 0, TestSpecial::String},
    {"test", t_test, "test_test", 0},
    {"true", t_true, "test_true", 0},
    {"undefined", t_undefined, "test_undefined", 0, TestSpecial::Undefined},
    {"upper", t_upper, "test_upper", 0},
};

}  // namespace

const TestEntry* find_test(std::string_view name) {
  for (const auto& t : kTests)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace chatwire::jinja
