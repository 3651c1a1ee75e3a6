// Runs every case of data/goldens/value/python.jsonl (written by
// scripts/regen-value-goldens from real Python 3.11) through the value layer and
// compares results by Python repr and type name, errors by type and message.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include "chatwire/value.hpp"

namespace chatwire {
namespace {

// Golden encoding: {"$float": repr}, {"$tuple": [...]}, {"$dict": [[k, v], ...]}.
Value decode(const Value& v) {
  if (v.is_list()) {
    std::vector<Value> items;
    for (const Value& item : v.as_list()) items.push_back(decode(item));
    return Value::list(std::move(items));
  }
  if (!v.is_dict()) return v;
  if (const Value* f = v.dict_find("$float")) {
    std::string_view s = f->as_string();
    if (s == "inf") return Value(std::numeric_limits<double>::infinity());
    if (s == "-inf") return Value(-std::numeric_limits<double>::infinity());
    if (s == "nan") return Value(std::nan(""));
    return Value(std::strtod(std::string(s).c_str(), nullptr));
  }
  if (const Value* t = v.dict_find("$tuple")) {
    std::vector<Value> items;
    for (const Value& item : t->as_list()) items.push_back(decode(item));
    return Value::tuple(std::move(items));
  }
  if (const Value* d = v.dict_find("$dict")) {
    std::vector<std::pair<Value, Value>> entries;
    for (const Value& pair : d->as_list())
      entries.emplace_back(decode(pair.as_list()[0]), decode(pair.as_list()[1]));
    return std::move(*Value::dict(std::move(entries)));
  }
  return v;
}

const Value& field(const Value& c, std::string_view name) {
  static const Value missing;
  const Value* v = c.dict_find(name);
  return v ? *v : missing;
}

BinaryOp binary_of(std::string_view s) {
  static const std::map<std::string_view, BinaryOp> ops = {
      {"+", BinaryOp::Add},       {"-", BinaryOp::Sub}, {"*", BinaryOp::Mul}, {"/", BinaryOp::Div},
      {"//", BinaryOp::FloorDiv}, {"%", BinaryOp::Mod}, {"**", BinaryOp::Pow}};
  return ops.at(s);
}

CompareOp compare_of(std::string_view s) {
  static const std::map<std::string_view, CompareOp> ops = {
      {"==", CompareOp::Eq}, {"!=", CompareOp::Ne}, {"<", CompareOp::Lt},
      {"<=", CompareOp::Le}, {">", CompareOp::Gt},  {">=", CompareOp::Ge}};
  return ops.at(s);
}

std::optional<std::int64_t> opt_int(const Value& v) {
  if (v.is_none() || v.is_undefined()) return std::nullopt;
  return v.as_int();
}

template <typename T>
Result<Value> wrap(Result<T> r) {
  if (!r) return r.error();
  return Value(*r);
}

Result<Value> run_case(const Value& c) {
  std::string_view op = field(c, "op").as_string();
  if (op == "repr") return Value(to_repr(decode(field(c, "value"))));
  if (op == "str") return Value(to_str(decode(field(c, "value"))));
  if (op == "binary")
    return binary_op(binary_of(field(c, "operator").as_string()), decode(field(c, "a")),
                     decode(field(c, "b")));
  if (op == "compare")
    return wrap(compare(compare_of(field(c, "operator").as_string()), decode(field(c, "a")),
                        decode(field(c, "b"))));
  if (op == "contains")
    return wrap(contains(decode(field(c, "container")), decode(field(c, "item"))));
  if (op == "getitem") return get_item(decode(field(c, "container")), decode(field(c, "key")));
  if (op == "slice")
    return slice(decode(field(c, "value")), opt_int(field(c, "start")), opt_int(field(c, "stop")),
                 opt_int(field(c, "step")));
  if (op == "len") {
    auto n = length(decode(field(c, "value")));
    if (!n) return n.error();
    return Value(static_cast<std::int64_t>(*n));
  }
  if (op == "truthy") return Value(truthy(decode(field(c, "value"))));
  if (op == "method") {
    std::vector<Value> args;
    for (const Value& a : field(c, "args").as_list()) args.push_back(decode(a));
    std::vector<NamedArg> kwargs;
    for (const auto& [k, v] : field(c, "kwargs").dict_entries())
      kwargs.push_back({k.as_string(), decode(v)});
    return call_method(decode(field(c, "self")), field(c, "name").as_string(), {args, kwargs});
  }
  if (op == "percent")
    return percent_format(field(c, "format").as_string(), decode(field(c, "args")));
  if (op == "formatspec") {
    std::string out;
    auto s = format_spec(out, decode(field(c, "value")), field(c, "spec").as_string());
    if (!s) return s.error();
    return Value(out);
  }
  if (op == "dumps") {
    JsonDumpOptions options;
    const Value& kw = field(c, "kwargs");
    if (const Value* v = kw.dict_find("ensure_ascii")) options.ensure_ascii = v->as_bool();
    if (const Value* v = kw.dict_find("sort_keys")) options.sort_keys = v->as_bool();
    if (const Value* v = kw.dict_find("allow_nan")) options.allow_nan = v->as_bool();
    if (const Value* v = kw.dict_find("indent")) {
      if (v->is_string())
        options.indent = std::string(v->as_string());
      else
        options.indent =
            std::string(static_cast<std::size_t>(std::max<std::int64_t>(0, v->as_int())), ' ');
    }
    if (const Value* v = kw.dict_find("separators")) {
      options.item_separator = std::string(v->as_list()[0].as_string());
      options.key_separator = std::string(v->as_list()[1].as_string());
    }
    auto s = to_json_string(decode(field(c, "value")), options);
    if (!s) return s.error();
    return Value(*s);
  }
  if (op == "loads") return parse_json(field(c, "text").as_string());
  Error e;
  e.type = "TestError";
  e.message = "unknown op " + std::string(op);
  return e;
}

TEST(PythonGoldens, EveryCaseMatchesPython) {
  std::ifstream in(std::string(CHATWIRE_DATA_DIR) + "/goldens/value/python.jsonl");
  ASSERT_TRUE(in) << "missing data/goldens/value/python.jsonl (scripts/regen-value-goldens)";
  std::string line;
  int total = 0, failed = 0;
  while (std::getline(in, line)) {
    auto parsed = parse_json(line);
    ASSERT_TRUE(parsed) << parsed.error().to_string();
    const Value& c = *parsed;
    ++total;
    Result<Value> got = run_case(c);
    std::string problem;
    if (const Value* err = c.dict_find("error")) {
      std::string want_message(field(c, "message").as_string());
      if (got)
        problem = "expected " + std::string(err->as_string()) + ": " + want_message + ", got " +
                  to_repr(*got);
      else if (got.error().type != err->as_string() || got.error().message != want_message)
        problem = "expected " + std::string(err->as_string()) + ": " + want_message + ", got " +
                  got.error().type + ": " + got.error().message;
    } else {
      std::string want_repr(field(c, "repr").as_string());
      std::string want_type(field(c, "type").as_string());
      // Documented limits of the value model: ints are 64-bit (beyond is an
      // OverflowError, never a wrapped value) and there are no complex numbers.
      bool beyond_int64 = want_type == "int" && !parse_json(want_repr);
      if (beyond_int64 || want_type == "complex") {
        std::string want_error = beyond_int64 ? "OverflowError" : "ValueError";
        if (got || got.error().type != want_error)
          problem = "expected " + want_error + " for " + want_repr;
      } else if (!got)
        problem = "expected " + want_repr + ", got " + got.error().to_string();
      else if (to_repr(*got) != want_repr || type_name(*got) != want_type)
        problem = "expected " + want_repr + " (" + want_type + "), got " + to_repr(*got) + " (" +
                  std::string(type_name(*got)) + ")";
    }
    if (!problem.empty()) {
      ++failed;
      ADD_FAILURE() << "case " << to_repr(field(c, "id")) << " " << line << "\n  " << problem;
    }
  }
  std::printf("python goldens: %d/%d cases match\n", total - failed, total);
  EXPECT_GT(total, 1000);
}

}  // namespace
}  // namespace chatwire
