// Python operators over values: arithmetic, comparison, membership, subscription,
// slicing and iteration, with Python's results and error messages.
#include <cmath>
#include <limits>

#include "chatwire/value_print.hpp"
#include "value/internal.hpp"

namespace chatwire {

namespace {

std::string quoted_type(const Value& v) {
  std::string s = "'";
  s += type_name(v);
  s += "'";
  return s;
}

Error unsupported(std::string_view symbol, const Value& a, const Value& b) {
  return type_error("unsupported operand type(s) for " + std::string(symbol) + ": " +
                    quoted_type(a) + " and " + quoted_type(b));
}

Error overflow() {
  return make_error("OverflowError", "integer result exceeds 64 bits");
}

bool is_integral(const Value& v) noexcept {
  return v.is_int() || v.is_bool();
}

// Repeats a sequence `count` times under the limits.
Result<Value> repeat(const Value& seq, std::int64_t count, const ValueLimits& limits) {
  if (count < 0) count = 0;
  if (seq.is_string()) {
    std::string_view s = seq.as_string();
    if (count > 0 && s.size() > 0 &&
        static_cast<std::uint64_t>(count) > limits.max_string_bytes / s.size())
      return limit_error("max_string_bytes", limits.max_string_bytes);
    std::string out;
    out.reserve(s.size() * static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) out += s;
    return Value::string_known(std::move(out), seq.string_is_ascii(),
                               seq.string_length() * static_cast<std::size_t>(count));
  }
  auto items = seq.as_list();
  if (count > 0 && items.size() > 0 &&
      static_cast<std::uint64_t>(count) > limits.max_container_items / items.size())
    return limit_error("max_container_items", limits.max_container_items);
  std::vector<Value> out;
  out.reserve(items.size() * static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) out.insert(out.end(), items.begin(), items.end());
  return seq.is_list() ? Value::list(std::move(out)) : Value::tuple(std::move(out));
}

// Python's float divmod (Objects/floatobject.c).
void float_divmod(double vx, double wx, double& floordiv, double& mod) {
  mod = std::fmod(vx, wx);
  double div = (vx - mod) / wx;
  if (mod != 0.0) {
    if ((wx < 0) != (mod < 0)) {
      mod += wx;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, wx);
  }
  if (div != 0.0) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
  } else {
    floordiv = std::copysign(0.0, vx / wx);
  }
}

Result<Value> int_pow(std::int64_t base, std::int64_t exp) {
  if (exp < 0) {
    if (base == 0)
      return make_error("ZeroDivisionError", "0.0 cannot be raised to a negative power");
    return Value(std::pow(static_cast<double>(base), static_cast<double>(exp)));
  }
  std::int64_t result = 1;
  std::int64_t b = base;
  while (exp > 0) {
    if (exp & 1)
      if (__builtin_mul_overflow(result, b, &result)) return overflow();
    exp >>= 1;
    if (exp > 0 && __builtin_mul_overflow(b, b, &b)) return overflow();
  }
  return Value(result);
}

Result<Value> arithmetic(BinaryOp op, const Value& a, const Value& b) {
  if (is_integral(a) && is_integral(b)) {
    std::int64_t x = a.as_integer(), y = b.as_integer(), r = 0;
    switch (op) {
      case BinaryOp::Add:
        if (__builtin_add_overflow(x, y, &r)) return overflow();
        return Value(r);
      case BinaryOp::Sub:
        if (__builtin_sub_overflow(x, y, &r)) return overflow();
        return Value(r);
      case BinaryOp::Mul:
        if (__builtin_mul_overflow(x, y, &r)) return overflow();
        return Value(r);
      case BinaryOp::Div:
        if (y == 0) return make_error("ZeroDivisionError", "division by zero");
        return Value(static_cast<double>(x) / static_cast<double>(y));
      case BinaryOp::FloorDiv:
      case BinaryOp::Mod: {
        if (y == 0)
          return make_error("ZeroDivisionError", op == BinaryOp::Mod
                                                     ? "integer modulo by zero"
                                                     : "integer division or modulo by zero");
        if (x == std::numeric_limits<std::int64_t>::min() && y == -1) {
          if (op == BinaryOp::Mod) return Value(0);
          return overflow();
        }
        std::int64_t q = x / y, m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) {
          m += y;
          q -= 1;
        }
        return op == BinaryOp::FloorDiv ? Value(q) : Value(m);
      }
      case BinaryOp::Pow:
        return int_pow(x, y);
    }
  }
  double x = a.to_double(), y = b.to_double();
  switch (op) {
    case BinaryOp::Add:
      return Value(x + y);
    case BinaryOp::Sub:
      return Value(x - y);
    case BinaryOp::Mul:
      return Value(x * y);
    case BinaryOp::Div:
      if (y == 0.0) return make_error("ZeroDivisionError", "float division by zero");
      return Value(x / y);
    case BinaryOp::FloorDiv:
    case BinaryOp::Mod: {
      if (y == 0.0)
        return make_error("ZeroDivisionError",
                          op == BinaryOp::Mod ? "float modulo" : "float floor division by zero");
      double q, m;
      float_divmod(x, y, q, m);
      return op == BinaryOp::FloorDiv ? Value(q) : Value(m);
    }
    case BinaryOp::Pow: {
      if (x == 0.0 && y < 0.0)
        return make_error("ZeroDivisionError", "0.0 cannot be raised to a negative power");
      if (x < 0.0 && std::isfinite(y) && y != std::floor(y))
        return value_error("complex result of a negative number to a fractional power");
      double r = std::pow(x, y);
      if (std::isinf(r) && std::isfinite(x) && std::isfinite(y))
        return make_error("OverflowError", "(34, 'Numerical result out of range')");
      return Value(r);
    }
  }
  return unsupported(op_symbol(op), a, b);
}

// Python's int-vs-float ordering without rounding through double: <0, 0, >0.
int compare_int_float(std::int64_t i, double d) noexcept {
  if (d >= 9223372036854775808.0) return -1;
  if (d < -9223372036854775808.0) return 1;
  double t = std::trunc(d);
  auto it = static_cast<std::int64_t>(t);
  if (i < it) return -1;
  if (i > it) return 1;
  double frac = d - t;
  return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}

// Ordering of two numbers (NaN handled by the caller).
int compare_numbers(const Value& a, const Value& b) noexcept {
  if (!a.is_float() && !b.is_float()) {
    std::int64_t x = a.as_integer(), y = b.as_integer();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.is_float() && b.is_float()) {
    double x = a.as_float(), y = b.as_float();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.is_float()) return -compare_int_float(b.as_integer(), a.as_float());
  return compare_int_float(a.as_integer(), b.as_float());
}

bool ordering_holds(CompareOp op, int c) noexcept {
  switch (op) {
    case CompareOp::Lt:
      return c < 0;
    case CompareOp::Le:
      return c <= 0;
    case CompareOp::Gt:
      return c > 0;
    case CompareOp::Ge:
      return c >= 0;
    case CompareOp::Eq:
      return c == 0;
    case CompareOp::Ne:
      return c != 0;
  }
  return false;
}

// Python-style index normalisation for item access.
bool normalize_index(std::int64_t& index, std::size_t size) noexcept {
  if (index < 0) index += static_cast<std::int64_t>(size);
  return index >= 0 && static_cast<std::size_t>(index) < size;
}

// PySlice_AdjustIndices + computing the selected positions.
struct SliceBounds {
  std::int64_t start, stop, step, count;
};
SliceBounds adjust_slice(std::optional<std::int64_t> start_opt,
                         std::optional<std::int64_t> stop_opt, std::int64_t step,
                         std::int64_t length) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  std::int64_t start = start_opt.value_or(step < 0 ? kMax : 0);
  std::int64_t stop = stop_opt.value_or(step < 0 ? kMin : kMax);
  auto clamp = [&](std::int64_t& v) {
    if (v < 0) {
      v = v < kMin + length ? -1 : v + length;  // no overflow near kMin
      if (v < 0) v = step < 0 ? -1 : 0;
    } else if (v >= length) {
      v = step < 0 ? length - 1 : length;
    }
  };
  clamp(start);
  clamp(stop);
  std::int64_t count = 0;
  if (step < 0) {
    if (stop < start) count = (start - stop - 1) / (-step) + 1;
  } else if (start < stop) {
    count = (stop - start - 1) / step + 1;
  }
  return {start, stop, step, count};
}

Error comparison_recursion() {
  return make_error("RecursionError", "maximum recursion depth exceeded in comparison");
}

bool is_container(const Value& v) noexcept {
  return v.is_list() || v.is_tuple() || v.is_dict();
}

// Python's == where it can recurse: one level per nested container, RecursionError past
// kMaxValueNesting levels (Python's limit is about the same) instead of a C++ stack overflow.
// Items that are the same container are equal without looking inside, as Python's
// PyObject_RichCompareBool identity shortcut makes them (so `x == x` of a deep list is True).
// Anything else is equals()'s.
Result<bool> equal_nested(const Value& a, const Value& b, std::size_t depth) {
  if (!is_container(a) || a.kind() != b.kind()) return equals(a, b);
  if (a.is_dict()) {
    if (ValueAccess::dict(a) == ValueAccess::dict(b)) return true;
    if (a.dict_size() != b.dict_size()) return false;
    if (depth >= kMaxValueNesting) return comparison_recursion();
    for (const auto& [key, value] : a.dict_entries()) {
      const Value* other = b.dict_find(key);
      if (!other) return false;
      auto same = equal_nested(value, *other, depth + 1);
      if (!same || !*same) return same;
    }
    return true;
  }
  if (ValueAccess::list(a) == ValueAccess::list(b)) return true;
  auto x = a.as_list(), y = b.as_list();
  if (x.size() != y.size()) return false;
  if (depth >= kMaxValueNesting) return comparison_recursion();
  for (std::size_t i = 0; i < x.size(); ++i) {
    auto same = equal_nested(x[i], y[i], depth + 1);
    if (!same || !*same) return same;
  }
  return true;
}

}  // namespace

std::string_view op_symbol(BinaryOp op) noexcept {
  switch (op) {
    case BinaryOp::Add:
      return "+";
    case BinaryOp::Sub:
      return "-";
    case BinaryOp::Mul:
      return "*";
    case BinaryOp::Div:
      return "/";
    case BinaryOp::FloorDiv:
      return "//";
    case BinaryOp::Mod:
      return "%";
    case BinaryOp::Pow:
      return "** or pow()";
  }
  return "?";
}

std::string_view op_symbol(CompareOp op) noexcept {
  switch (op) {
    case CompareOp::Eq:
      return "==";
    case CompareOp::Ne:
      return "!=";
    case CompareOp::Lt:
      return "<";
    case CompareOp::Le:
      return "<=";
    case CompareOp::Gt:
      return ">";
    case CompareOp::Ge:
      return ">=";
  }
  return "?";
}

Result<Value> binary_op(BinaryOp op, const Value& a, const Value& b, const ValueLimits& limits) {
  if (a.is_markup() || b.is_markup()) [[unlikely]]
    return markup_binary_op(op, a, b, limits);
  return str_binary_op(op, a, b, limits);
}

Result<Value> str_binary_op(BinaryOp op, const Value& a, const Value& b,
                            const ValueLimits& limits) {
  // str.__mod__ accepts any right operand, Undefined included ('%s' % u is '').
  if (op == BinaryOp::Mod && a.is_string()) return percent_format(a.as_string(), b, limits);
  if (a.is_undefined()) return a.undefined_error();
  if (b.is_undefined()) return b.undefined_error();
  if (a.is_number() && b.is_number()) return arithmetic(op, a, b);
  switch (op) {
    case BinaryOp::Add:
      if (a.is_string() && b.is_string()) {
        std::string_view x = a.as_string(), y = b.as_string();
        if (x.size() + y.size() > limits.max_string_bytes)
          return limit_error("max_string_bytes", limits.max_string_bytes);
        std::string out;
        out.reserve(x.size() + y.size());
        out += x;
        out += y;
        return Value::string_known(std::move(out), a.string_is_ascii() && b.string_is_ascii(),
                                   a.string_length() + b.string_length());
      }
      if (a.kind() == b.kind() && a.is_sequence()) {
        auto x = a.as_list(), y = b.as_list();
        if (x.size() + y.size() > limits.max_container_items)
          return limit_error("max_container_items", limits.max_container_items);
        std::vector<Value> out;
        out.reserve(x.size() + y.size());
        out.insert(out.end(), x.begin(), x.end());
        out.insert(out.end(), y.begin(), y.end());
        return a.is_list() ? Value::list(std::move(out)) : Value::tuple(std::move(out));
      }
      if (a.is_string() || a.is_sequence())
        return type_error("can only concatenate " + std::string(type_name(a)) + " (not \"" +
                          std::string(type_name(b)) + "\") to " + std::string(type_name(a)));
      break;
    case BinaryOp::Mul:
      if ((a.is_string() || a.is_sequence()) && is_integral(b))
        return repeat(a, b.as_integer(), limits);
      if ((b.is_string() || b.is_sequence()) && is_integral(a))
        return repeat(b, a.as_integer(), limits);
      if (a.is_string() || a.is_sequence() || b.is_string() || b.is_sequence()) {
        const Value& other = (a.is_string() || a.is_sequence()) ? b : a;
        if (other.is_string() || other.is_sequence() || other.is_dict() || other.is_none() ||
            other.is_float() || other.is_object())
          return type_error("can't multiply sequence by non-int of type " + quoted_type(other));
      }
      break;
    case BinaryOp::Mod:
      if (a.is_string()) return percent_format(a.as_string(), b, limits);
      break;
    default:
      break;
  }
  return unsupported(op_symbol(op), a, b);
}

Result<Value> negate(const Value& v) {
  if (v.is_undefined()) return v.undefined_error();
  if (v.is_float()) return Value(-v.as_float());
  if (is_integral(v)) {
    std::int64_t i = v.as_integer();
    if (i == std::numeric_limits<std::int64_t>::min()) return overflow();
    return Value(-i);
  }
  return type_error("bad operand type for unary -: " + quoted_type(v));
}

Result<Value> unary_plus(const Value& v) {
  if (v.is_undefined()) return v.undefined_error();
  if (v.is_float()) return v;
  if (is_integral(v)) return Value(v.as_integer());
  return type_error("bad operand type for unary +: " + quoted_type(v));
}

namespace {

// Ordering for <, <=, >, >=: -2 encodes "unordered" (NaN). `depth` counts the sequences
// entered, as equal_nested does.
Result<int> order(CompareOp op, const Value& a, const Value& b, std::size_t depth = 0) {
  if (a.is_undefined()) return a.undefined_error();
  if (b.is_undefined()) return b.undefined_error();
  if (a.is_number() && b.is_number()) {
    if ((a.is_float() && std::isnan(a.as_float())) || (b.is_float() && std::isnan(b.as_float())))
      return -2;
    return compare_numbers(a, b);
  }
  if (a.is_string() && b.is_string()) {
    int c = a.as_string().compare(b.as_string());
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.is_sequence() && a.kind() == b.kind()) {
    if (depth >= kMaxValueNesting) return comparison_recursion();
    auto x = a.as_list(), y = b.as_list();
    std::size_t n = std::min(x.size(), y.size());
    for (std::size_t i = 0; i < n; ++i) {
      auto same = equal_nested(x[i], y[i], depth + 1);
      if (!same) return same.error();
      if (*same) continue;
      // The first differing items decide, with the operator itself (Python).
      return order(op, x[i], y[i], depth + 1);
    }
    return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
  }
  return type_error(std::string("'") + std::string(op_symbol(op)) +
                    "' not supported between instances of " + quoted_type(a) + " and " +
                    quoted_type(b));
}

}  // namespace

Result<bool> compare(CompareOp op, const Value& a, const Value& b) {
  if (op == CompareOp::Eq) return equal_nested(a, b, 0);
  if (op == CompareOp::Ne) {
    auto same = equal_nested(a, b, 0);
    if (!same) return same;
    return !*same;
  }
  auto c = order(op, a, b);
  if (!c) return c.error();
  if (*c == -2) return false;
  return ordering_holds(op, *c);
}

Result<bool> contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Kind::Undefined:
      return false;
    case Kind::String:
      if (!item.is_string())
        return type_error("'in <string>' requires string as left operand, not " +
                          std::string(type_name(item)));
      return container.as_string().find(item.as_string()) != std::string_view::npos;
    case Kind::List:
    case Kind::Tuple:
      if (item.is_string())  // `role in ["user", "system"]`
        return detail::contains_str(container.as_list(), item.as_string());
      for (const Value& v : container.as_list()) {
        auto same = equal_nested(v, item, 0);
        if (!same || *same) return same;
      }
      return false;
    case Kind::Dict: {
      std::uint64_t hash;
      if (!hash_value(item, hash)) return type_error("unhashable type: " + quoted_type(item));
      return container.dict_find(item) != nullptr;
    }
    case Kind::Object:
      return container.as_object()->contains(item);
    default:
      return type_error("argument of type " + quoted_type(container) + " is not iterable");
  }
}

Result<Value> get_item(const Value& container, const Value& key) {
  if (container.is_markup()) [[unlikely]] {  // Markup.__getitem__
    auto item = str_get_item(container, key);
    if (!item) return item;
    return Value::as_markup(*item);
  }
  return str_get_item(container, key);
}

Result<Value> str_get_item(const Value& container, const Value& key) {
  switch (container.kind()) {
    case Kind::Undefined:
      return container.undefined_error();
    case Kind::List:
    case Kind::Tuple: {
      if (!is_integral(key))
        return type_error(std::string(type_name(container)) +
                          " indices must be integers or slices, not " +
                          std::string(type_name(key)));
      auto items = container.as_list();
      std::int64_t i = key.as_integer();
      if (!normalize_index(i, items.size()))
        return make_error("IndexError", std::string(type_name(container)) + " index out of range");
      return items[static_cast<std::size_t>(i)];
    }
    case Kind::String: {
      if (!is_integral(key))
        return type_error("string indices must be integers, not " + quoted_type(key));
      std::int64_t i = key.as_integer();
      if (!normalize_index(i, container.string_length()))
        return make_error("IndexError", "string index out of range");
      std::string_view s = container.as_string();
      if (container.string_is_ascii())
        return Value::string_known(std::string(1, s[static_cast<std::size_t>(i)]), true, 1);
      std::size_t begin = utf8::byte_offset(s, static_cast<std::size_t>(i));
      std::size_t end = begin;
      utf8::decode(s, end);
      return Value::string_known(std::string(s.substr(begin, end - begin)), false, 1);
    }
    case Kind::Dict: {
      std::uint64_t hash;
      if (!hash_value(key, hash)) return type_error("unhashable type: " + quoted_type(key));
      const Value* found = container.dict_find(key);
      if (!found) return make_error("KeyError", to_repr(key));
      return *found;
    }
    case Kind::Object:
      return container.as_object()->get_item(key);
    default:
      return type_error(quoted_type(container) + " object is not subscriptable");
  }
}

Result<Value> slice(const Value& v, std::optional<std::int64_t> start,
                    std::optional<std::int64_t> stop, std::optional<std::int64_t> step,
                    const ValueLimits& limits) {
  if (v.is_markup()) [[unlikely]] {  // Markup.__getitem__ with a slice
    auto part = str_slice(v, start, stop, step, limits);
    if (!part) return part;
    return Value::as_markup(*part);
  }
  return str_slice(v, start, stop, step, limits);
}

Result<Value> str_slice(const Value& v, std::optional<std::int64_t> start,
                        std::optional<std::int64_t> stop, std::optional<std::int64_t> step_opt,
                        const ValueLimits& limits) {
  std::int64_t step = step_opt.value_or(1);
  if (step < -std::numeric_limits<std::int64_t>::max())
    step = -std::numeric_limits<std::int64_t>::max();
  if (step == 0) return value_error("slice step cannot be zero");
  if (v.is_undefined()) return v.undefined_error();
  if (v.is_string()) {
    std::string_view s = v.as_string();
    auto len = static_cast<std::int64_t>(v.string_length());
    SliceBounds b = adjust_slice(start, stop, step, len);
    if (v.string_is_ascii()) {
      if (step == 1) {
        std::string_view part =
            s.substr(static_cast<std::size_t>(b.start), static_cast<std::size_t>(b.count));
        // Small enough for the payload block cache (core.cpp, 256-byte blocks): the bytes go
        // in the payload's own block, without a std::string buffer to allocate.
        if (part.size() <= 256 - sizeof(detail::StringData)) return Value(part);
        return Value::string_known(std::string(part), true, part.size());
      }
      std::string out;
      out.reserve(static_cast<std::size_t>(b.count));
      for (std::int64_t k = 0, i = b.start; k < b.count; ++k, i += step)
        out += s[static_cast<std::size_t>(i)];
      return Value::string_known(std::move(out), true, static_cast<std::size_t>(b.count));
    }
    // Byte offsets of every code point, then pick.
    std::vector<std::size_t> offsets;
    offsets.reserve(static_cast<std::size_t>(len) + 1);
    for (std::size_t i = 0; i < s.size();) {
      offsets.push_back(i);
      utf8::decode(s, i);
    }
    offsets.push_back(s.size());
    std::string out;
    for (std::int64_t k = 0, i = b.start; k < b.count; ++k, i += step) {
      std::size_t from = offsets[static_cast<std::size_t>(i)];
      out.append(s.substr(from, offsets[static_cast<std::size_t>(i) + 1] - from));
    }
    if (out.size() > limits.max_string_bytes)
      return limit_error("max_string_bytes", limits.max_string_bytes);
    return make_string(std::move(out));
  }
  if (v.is_sequence()) {
    auto items = v.as_list();
    SliceBounds b = adjust_slice(start, stop, step, static_cast<std::int64_t>(items.size()));
    if (step == 1)  // messages[1:]: a window of the same items
      return Value::window(v, static_cast<std::size_t>(b.start), static_cast<std::size_t>(b.count));
    std::vector<Value> out;
    {
      out.reserve(static_cast<std::size_t>(b.count));
      for (std::int64_t k = 0, i = b.start; k < b.count; ++k, i += step)
        out.push_back(items[static_cast<std::size_t>(i)]);
    }
    return v.is_list() ? Value::list(std::move(out)) : Value::tuple(std::move(out));
  }
  if (v.is_dict()) return type_error("unhashable type: 'slice'");
  return type_error(quoted_type(v) + " object is not subscriptable");
}

Result<Value> iterate(const Value& v, const ValueLimits& limits) {
  switch (v.kind()) {
    case Kind::Undefined:
      return Value::empty_list();
    case Kind::List:
    case Kind::Tuple:
      return v;
    case Kind::String: {
      std::string_view s = v.as_string();
      if (v.string_length() > limits.max_container_items)
        return limit_error("max_container_items", limits.max_container_items);
      std::vector<Value> chars;
      chars.reserve(v.string_length());
      for (std::size_t i = 0; i < s.size();) {
        std::size_t begin = i;
        utf8::decode(s, i);
        chars.push_back(
            Value::string_known(std::string(s.substr(begin, i - begin)), i - begin == 1, 1));
      }
      return Value::list(std::move(chars));
    }
    case Kind::Dict: {
      std::vector<Value> keys;
      keys.reserve(v.dict_size());
      for (const auto& entry : v.dict_entries()) keys.push_back(entry.first);
      return Value::list(std::move(keys));
    }
    case Kind::Object:
      return v.as_object()->iterate();
    default:
      return type_error(quoted_type(v) + " object is not iterable");
  }
}

}  // namespace chatwire
