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
  return equals(v, arg0(a, "eq"));
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
Result<bool> t_escaped(RenderState&, const Value&, const CallArgs&) {
  return false;
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
  return v.is_string() || v.is_sequence() || v.is_dict();
}
Result<bool> t_string(RenderState&, const Value& v, const CallArgs&) {
  return v.is_string();
}

constexpr TestEntry kTests[] = {
    {"boolean", t_boolean},
    {"callable", t_callable},
    {"defined", t_defined},
    {"divisibleby", t_divisibleby},
    {"eq", t_eq},
    {"equalto", t_eq},
    {"==", t_eq},
    {"escaped", t_escaped},
    {"even", t_even},
    {"false", t_false},
    {"filter", t_filter},
    {"float", t_float},
    {"ge", t_ge},
    {">=", t_ge},
    {"gt", t_gt},
    {"greaterthan", t_gt},
    {">", t_gt},
    {"in", t_in},
    {"integer", t_integer},
    {"iterable", t_iterable},
    {"le", t_le},
    {"<=", t_le},
    {"lower", t_lower},
    {"lt", t_lt},
    {"lessthan", t_lt},
    {"<", t_lt},
    {"mapping", t_mapping},
    {"ne", t_ne},
    {"!=", t_ne},
    {"none", t_none},
    {"number", t_number},
    {"odd", t_odd},
    {"sameas", t_sameas},
    {"sequence", t_sequence},
    {"string", t_string},
    {"test", t_test},
    {"true", t_true},
    {"undefined", t_undefined},
    {"upper", t_upper},
};

}  // namespace

const TestEntry* find_test(std::string_view name) {
  for (const auto& t : kTests)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace chatwire::jinja
