// Focused tests of the value API the engine and the chat layer use. Expected strings
// for Jinja2-specific behaviour come from data/goldens/value/jinja.jsonl (the oracle).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "chatwire/value_json.hpp"
#include "value/internal.hpp"

namespace chatwire {
namespace detail {
bool method_tables_sorted();
}
namespace {

Value parse(std::string_view text) {
  auto v = parse_json(text);
  EXPECT_TRUE(v) << v.error().to_string();
  return v ? *v : Value();
}

TEST(Value, LayoutAndKinds) {
  EXPECT_EQ(sizeof(Value), 16u);
  EXPECT_TRUE(Value().is_undefined());
  EXPECT_TRUE(Value::none().is_none());
  EXPECT_EQ(Value(true).kind(), Kind::Bool);
  EXPECT_EQ(Value(3).kind(), Kind::Int);
  EXPECT_EQ(Value(3.0).kind(), Kind::Float);
  EXPECT_EQ(Value("x").kind(), Kind::String);
  EXPECT_EQ(type_name(Value::none()), "NoneType");
  EXPECT_EQ(type_name(Value::tuple({})), "tuple");
}

TEST(Value, CopiesShareThePayload) {
  Value a = parse(R"({"messages": [{"role": "user", "content": "hi"}]})");
  Value b = a;
  EXPECT_TRUE(a.same(b));
  const Value* messages = b.dict_find("messages");
  ASSERT_TRUE(messages);
  EXPECT_EQ(messages->as_list()[0].dict_find("role")->as_string(), "user");
}

TEST(Value, StringsCountCodePoints) {
  Value s("héllo😀");
  EXPECT_FALSE(s.string_is_ascii());
  EXPECT_EQ(s.string_length(), 6u);
  EXPECT_EQ(*length(s), 6u);
  EXPECT_TRUE(Value("abc").string_is_ascii());
  EXPECT_EQ(s.string_hash(), hash_string(s.as_string()));
}

TEST(Value, DictKeysFollowPythonEquality) {
  auto d = Value::dict({{Value(1), Value("int")},
                        {Value(1.0), Value("float")},
                        {Value(true), Value("bool")},
                        {Value("a"), Value(1)}});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->dict_size(), 2u);
  EXPECT_EQ(to_repr(*d), "{1: 'bool', 'a': 1}");  // first position, last value
  EXPECT_EQ(d->dict_find(Value(1.0))->as_string(), "bool");
  auto bad = Value::dict({{Value::list({}), Value(1)}});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().to_string(), "TypeError: unhashable type: 'list'");
}

TEST(Value, LargeDictsUseTheIndex) {
  std::vector<std::pair<Value, Value>> entries;
  auto key_of = [](int i) {
    std::string key = "k";  // built by appending: GCC 12's -Wrestrict misfires on "k" + s
    key += std::to_string(i);
    return key;
  };
  for (int i = 0; i < 1000; ++i) entries.emplace_back(Value(key_of(i)), Value(i));
  Value d = Value::dict_unchecked(std::move(entries));
  for (int i = 0; i < 1000; i += 37) {
    std::string key = key_of(i);
    ASSERT_TRUE(d.dict_find(key)) << key;
    EXPECT_EQ(d.dict_find(key, hash_string(key))->as_int(), i);
  }
  EXPECT_EQ(d.dict_find("missing"), nullptr);
}

TEST(Value, DuplicateJsonKeysKeepFirstPositionLastValue) {
  EXPECT_EQ(to_repr(parse(R"({"a": 1, "b": 2, "a": 3})")), "{'a': 3, 'b': 2}");
}

// Jinja2's Undefined messages (data/goldens/value/jinja.jsonl).
TEST(Undefined, Messages) {
  Value d = parse(R"({"a": 1})");
  EXPECT_EQ(Value::undefined_variable("u").undefined_error().to_string(),
            "UndefinedError: 'u' is undefined");
  EXPECT_EQ(Value::undefined_attribute("zz", d).undefined_message(),
            "'dict object' has no attribute 'zz'");
  EXPECT_EQ(Value::undefined_attribute("zz", Value::none()).undefined_message(),
            "'None' has no attribute 'zz'");
  EXPECT_EQ(Value::undefined_item(Value(5), parse("[1]")).undefined_message(),
            "list object has no element 5");
  EXPECT_EQ(Value::undefined_item(Value(5), d).undefined_message(), "dict object has no element 5");
  Value unsafe = Value::unsafe_attribute("append", parse("[1]"));
  EXPECT_TRUE(unsafe.undefined_has_error());
  EXPECT_EQ(unsafe.undefined_error().to_string(),
            "SecurityError: access to attribute 'append' of 'list' object is unsafe.");
  EXPECT_EQ(Value().undefined_message(), "None is undefined");
}

TEST(Undefined, DefaultSemantics) {
  Value u = Value::undefined_variable("u");
  EXPECT_FALSE(truthy(u));
  EXPECT_EQ(*length(u), 0u);
  EXPECT_EQ(to_str(u), "");
  EXPECT_EQ(to_repr(Value::list({u})), "[Undefined]");
  EXPECT_EQ(iterate(u)->as_list().size(), 0u);
  EXPECT_FALSE(*contains(u, Value("x")));
  auto sum = binary_op(BinaryOp::Add, u, Value(1));
  ASSERT_FALSE(sum);
  EXPECT_EQ(sum.error().to_string(), "UndefinedError: 'u' is undefined");
  auto json = to_json_string(u);
  ASSERT_FALSE(json);
  EXPECT_EQ(json.error().to_string(),
            "TypeError: Object of type Undefined is not JSON serializable");
  EXPECT_TRUE(equals(u, Value()));
  // str % anything goes through str.__mod__ first, so '%s' % u is '' (jinja.jsonl).
  EXPECT_EQ(to_str(*binary_op(BinaryOp::Mod, Value("%s|"), u)), "|");
  EXPECT_EQ(binary_op(BinaryOp::Mod, Value("%d"), u).error().to_string(),
            "UndefinedError: 'u' is undefined");
  EXPECT_EQ(contains(Value("abc"), u).error().to_string(),
            "TypeError: 'in <string>' requires string as left operand, not Undefined");
}

TEST(Methods, TableAndSandbox) {
  EXPECT_TRUE(detail::method_tables_sorted());
  Value list = parse("[1, 2, 3]");
  Value dict = parse(R"({"a": 1, "_x": 2})");
  EXPECT_TRUE(has_method(Value("s"), "strip"));
  EXPECT_FALSE(has_method(Value("s"), "nope"));
  EXPECT_TRUE(has_method(list, "index"));
  EXPECT_TRUE(has_method(dict, "items"));
  EXPECT_FALSE(has_method(list, "append"));
  EXPECT_TRUE(is_unsafe_mutator(Kind::List, "append"));
  EXPECT_TRUE(is_unsafe_mutator(Kind::List, "pop"));
  EXPECT_TRUE(is_unsafe_mutator(Kind::List, "clear"));
  EXPECT_TRUE(is_unsafe_mutator(Kind::Dict, "update"));
  EXPECT_TRUE(is_unsafe_mutator(Kind::Dict, "setdefault"));
  EXPECT_FALSE(is_unsafe_mutator(Kind::Dict, "items"));
  EXPECT_FALSE(is_unsafe_mutator(Kind::String, "append"));
  std::vector<Value> args{Value(1)};
  auto r = call_method(list, "append", {args, {}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            "SecurityError: access to attribute 'append' of 'list' object is unsafe.");
  auto pop = call_method(dict, "pop", {args, {}});
  EXPECT_EQ(pop.error().to_string(),
            "SecurityError: access to attribute 'pop' of 'dict' object is unsafe.");
}

TEST(Methods, DictViews) {
  Value dict = parse(R"({"a": 1, "_x": 2})");
  auto items = call_method(dict, "items", {});
  ASSERT_TRUE(items);
  EXPECT_EQ(to_str(*items), "dict_items([('a', 1), ('_x', 2)])");
  EXPECT_EQ(to_str(*call_method(dict, "keys", {})), "dict_keys(['a', '_x'])");
  EXPECT_EQ(to_str(*call_method(dict, "values", {})), "dict_values([1, 2])");
  EXPECT_EQ(to_str(*iterate(*items)), "[('a', 1), ('_x', 2)]");
  EXPECT_EQ(*length(*items), 2u);
  EXPECT_TRUE(*contains(*call_method(dict, "keys", {}), Value("a")));
}

TEST(Methods, BoundMethodCalls) {
  Value m = bound_method(Value("  hi  "), "strip");
  ASSERT_TRUE(m.is_object());
  EXPECT_TRUE(m.as_object()->is_callable());
  CallContext context;
  auto r = m.as_object()->call({}, context);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->as_string(), "hi");
}

TEST(Methods, KeywordArguments) {
  std::vector<NamedArg> kwargs{{"maxsplit", Value(1)}};
  auto r = call_method(Value("a b c"), "split", {{}, kwargs});
  ASSERT_TRUE(r);
  EXPECT_EQ(to_repr(*r), "['a', 'b c']");
}

// str.format as Jinja2's SandboxedFormatter resolves fields (jinja.jsonl).
TEST(Format, SandboxedFields) {
  Value d = parse(R"({"a": 1, "_x": 2})");
  std::vector<Value> args{d};
  auto fmt = [&](std::string_view f) { return str_format(f, {args, {}}); };
  EXPECT_EQ(fmt("{0._x}")->as_string(), "2");
  EXPECT_EQ(fmt("{0.a}")->as_string(), "1");
  EXPECT_EQ(fmt("{0[a]}")->as_string(), "1");
  EXPECT_EQ(fmt("{0.zz}|")->as_string(), "|");
  EXPECT_EQ(fmt("{0.__class__}|")->as_string(), "|");
  auto r = fmt("{0.zz:>5}");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            "TypeError: unsupported format string passed to Undefined.__format__");
}

TEST(Json, SurrogatesSurviveAsWtf8) {
  Value s = parse(R"("a\ud800b")");
  EXPECT_EQ(s.string_length(), 3u);
  EXPECT_EQ(s.as_string(),
            "a\xED\xA0\x80"
            "b");
  EXPECT_EQ(*to_json_string(s), R"("a\ud800b")");
  EXPECT_EQ(to_repr(s), "'a\\ud800b'");
  Value pair = parse(R"("\ud83d\ude00")");
  EXPECT_EQ(pair.as_string(), "\xF0\x9F\x98\x80");
  EXPECT_EQ(*to_json_string(pair), R"("\ud83d\ude00")");
}

TEST(Json, ErrorsNameThePosition) {
  auto r = parse_json("{\n  \"a\": [1,\n   x]}");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().type, "JSONDecodeError");
  EXPECT_EQ(r.error().line, 3u);
  EXPECT_EQ(r.error().column, 4u);
  EXPECT_EQ(r.error().message, "Expecting value: line 3 column 4 (char 16)");
  auto bad_utf8 = parse_json("\"\xC3\x28\"");
  ASSERT_FALSE(bad_utf8);
  EXPECT_EQ(bad_utf8.error().type, "JSONDecodeError");
  auto overlong = parse_json("\"\xC0\x80\"");
  EXPECT_FALSE(overlong);
  auto encoded_surrogate = parse_json("\"\xED\xA0\x80\"");
  EXPECT_FALSE(encoded_surrogate);
}

TEST(Json, BigIntegers) {
  auto r = parse_json("[18446744073709551616]");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().type, "OverflowError");
  JsonParseOptions as_float;
  as_float.big_int = JsonParseOptions::BigInt::Float;
  auto f = parse_json("18446744073709551616", as_float);
  ASSERT_TRUE(f);
  EXPECT_EQ(to_repr(*f), "1.8446744073709552e+19");
  EXPECT_EQ(to_repr(*parse_json("-9223372036854775808")), "-9223372036854775808");
}

TEST(Json, Limits) {
  JsonParseOptions options;
  options.max_depth = 3;
  auto deep = parse_json("[[[[1]]]]", options);
  ASSERT_FALSE(deep);
  EXPECT_EQ(deep.error().type, "LimitError");
  options = {};
  options.max_container_items = 2;
  EXPECT_EQ(parse_json("[1, 2, 3]", options).error().type, "LimitError");
  options = {};
  options.max_string_bytes = 3;
  EXPECT_EQ(parse_json("\"abcd\"", options).error().type, "LimitError");
  std::string deep_text(100000, '[');
  EXPECT_EQ(parse_json(deep_text).error().type, "LimitError");  // no stack overflow
}

TEST(Json, TransformersToJsonDefaults) {
  Value tool = parse(
      R"({"type": "function", "function": {"name": "f", "description": "é \"q\"", "parameters": {}}})");
  JsonDumpOptions hf;  // transformers' tojson: ensure_ascii=False
  hf.ensure_ascii = false;
  EXPECT_EQ(
      *to_json_string(tool, hf),
      R"({"type": "function", "function": {"name": "f", "description": "é \"q\"", "parameters": {}}})");
  hf.indent = std::string(4, ' ');
  EXPECT_EQ(*to_json_string(parse(R"({"a": [1, {}]})"), hf),
            "{\n    \"a\": [\n        1,\n        {}\n    ]\n}");
}

TEST(Json, NlohmannRoundTrip) {
  auto j = nlohmann::ordered_json::parse(
      R"({"z": 1, "a": [true, null, 2.5, "é"], "big": 18446744073709551615})");
  Value v = from_json(j);
  EXPECT_EQ(to_repr(v), "{'z': 1, 'a': [True, None, 2.5, 'é'], 'big': 1.8446744073709552e+19}");
  auto back = to_json(parse(R"({"z": 1, "a": [true, null, 2.5, "é"]})"));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->dump(), R"({"z":1,"a":[true,null,2.5,"é"]})");
  auto tuple_key = Value::dict({{Value(1), Value::tuple({Value(2)})}});
  EXPECT_EQ(to_json(*tuple_key)->dump(), R"({"1":[2]})");
  EXPECT_FALSE(to_json(Value()));
}

TEST(Limits, StringsAndContainers) {
  ValueLimits small{16, 4};
  auto rep = binary_op(BinaryOp::Mul, Value("abcd"), Value(1000000000000LL), small);
  ASSERT_FALSE(rep);
  EXPECT_EQ(rep.error().to_string(), "LimitError: max_string_bytes=16 exceeded");
  auto lst = binary_op(BinaryOp::Mul, parse("[1, 2]"), Value(3), small);
  ASSERT_FALSE(lst);
  EXPECT_EQ(lst.error().to_string(), "LimitError: max_container_items=4 exceeded");
  auto cat = binary_op(BinaryOp::Add, Value("0123456789"), Value("0123456789"), small);
  EXPECT_FALSE(cat);
  std::vector<Value> args{Value(100)};
  EXPECT_FALSE(call_method(Value("x"), "center", {args, {}}, small));
  std::string out = "0123456789";
  EXPECT_FALSE(append_checked(out, "0123456789", small));
  std::vector<Value> tab_args{Value(1000000000)};
  EXPECT_EQ(call_method(Value("a\tb"), "expandtabs", {tab_args, {}}, small).error().type,
            "LimitError");
  EXPECT_EQ(percent_format("%999999999d", Value(1), small).error().type, "LimitError");
  EXPECT_EQ(percent_format("%.999999999f", Value(1.0), small).error().type, "LimitError");
  EXPECT_EQ(percent_format("%*d", Value::tuple({Value(1000000000), Value(1)}), small).error().type,
            "LimitError");
  std::string formatted;
  EXPECT_EQ(format_spec(formatted, Value(1), "999999999").error().type, "LimitError");
  EXPECT_EQ(format_spec(formatted, Value(1.0), ".999999999f").error().type, "LimitError");
  EXPECT_EQ(iterate(Value("abcdef"), small).error().type, "LimitError");
}

TEST(Ops, PythonResults) {
  EXPECT_EQ(binary_op(BinaryOp::FloorDiv, Value(7), Value(-2))->as_int(), -4);
  EXPECT_EQ(binary_op(BinaryOp::Mod, Value(-7), Value(3))->as_int(), 2);
  EXPECT_EQ(to_repr(*binary_op(BinaryOp::Div, Value(7), Value(2))), "3.5");
  EXPECT_EQ(binary_op(BinaryOp::Pow, Value(2), Value(10))->as_int(), 1024);
  EXPECT_EQ(binary_op(BinaryOp::Div, Value(1), Value(0)).error().to_string(),
            "ZeroDivisionError: division by zero");
  EXPECT_EQ(compare(CompareOp::Lt, Value(1), Value("a")).error().to_string(),
            "TypeError: '<' not supported between instances of 'int' and 'str'");
  EXPECT_EQ(binary_op(BinaryOp::Add, Value(9223372036854775807LL), Value(1)).error().type,
            "OverflowError");
  EXPECT_EQ(to_str(*binary_op(BinaryOp::Mod, Value("%05d"), Value(3))), "00003");
  // A list is one argument (only tuples spread), as in Python.
  EXPECT_EQ(binary_op(BinaryOp::Mod, Value("%s and %s"), parse("[1, 2]")).error().to_string(),
            "TypeError: not enough arguments for format string");
}

// Values are immutable and refcounts atomic: many threads may read one context.
TEST(Threads, SharedContextReadConcurrently) {
  Value context =
      parse(R"({"messages": [{"role": "user", "content": "hé"}, {"role": "assistant"}]})");
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        Value copy = context;
        const Value* messages = copy.dict_find("messages");
        Value first = messages->as_list()[0];
        std::string s;
        append_repr(s, first);
        if (s == "{'role': 'user', 'content': 'hé'}" && first.dict_find("role")->string_hash())
          ok.fetch_add(1);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 8000);
}

// Inside a RenderScope, values built outside it are not counted and values built inside
// are counted without atomics. Both must balance: outside values survive the scope and are
// freed once by their owner; inside values are freed when the scope's last copy goes (the
// sanitizer run reports a leak, a double free or a use after free otherwise).
TEST(RenderScope, OutsideValuesSurviveInsideValuesAreFreed) {
  Value context = parse(R"({"messages": [{"role": "user", "content": "a long enough text"}]})");
  const Value* messages = context.dict_find("messages");
  std::string kept;
  {
    chatwire::detail::RenderScope scope;
    std::vector<Value> built;
    for (int i = 0; i < 100; ++i) {
      Value copy = messages->as_list()[0];  // an outside value, copied inside
      built.push_back(Value::list({copy, Value("inside " + std::to_string(i)), *messages}));
    }
    Value nested = Value::list(built);  // inside values holding inside and outside ones
    built.clear();
    append_repr(kept, nested.as_list()[99]);
  }
  EXPECT_EQ(kept,
            "[{'role': 'user', 'content': 'a long enough text'}, 'inside 99', "
            "[{'role': 'user', 'content': 'a long enough text'}]]");
  // Outside the scope the outside values are counted again, atomically.
  Value message = messages->as_list()[0];
  context = Value();
  std::string after;
  append_repr(after, message);
  EXPECT_EQ(after, "{'role': 'user', 'content': 'a long enough text'}");
}

// A LocalBuildScope makes what is built in it local (counted without atomics), as a render's
// own values are, while values parsed outside it on the same thread stay shared: their object
// keys come from another table, so a tree handed to another thread never shares a local key
// block. Both kinds are released where they are last dropped (the sanitizer run reports a
// leak, a double free or a use after free otherwise).
TEST(LocalBuildScope, BuildsLocalTreesAndKeepsSharedOnesShared) {
  auto is_local = [](const Value& v) {
    return (ValueAccess::dict(v)->refs.load() & chatwire::detail::RefCounted::kLocal) != 0;
  };
  std::vector<Value> local, shared;
  for (int i = 0; i < 300; ++i) {  // more keys than one key block holds: the table refills
    const std::string text =
        "{\"k" + std::to_string(i % 250) +
        R"(": "user", "content": "a long enough text", "n": [1, {"role": "x"}]})";
    {
      chatwire::detail::LocalBuildScope scope;
      local.push_back(parse(text));
    }
    shared.push_back(parse(text));
    ASSERT_TRUE(is_local(local.back()));
    ASSERT_FALSE(is_local(shared.back()));
  }
  // The shared trees go to another thread, which copies and releases them while this one
  // renders copies of the local trees and releases them.
  std::thread other([moved = std::move(shared)]() mutable {
    std::string s;
    for (const Value& v : moved) append_repr(s, Value(v));
    EXPECT_NE(s.find("'k249': 'user'"), std::string::npos);
    moved.clear();
  });
  std::string kept;
  {
    chatwire::detail::RenderScope scope;
    Value all = Value::list(local);
    append_repr(kept, all.as_list()[299]);
  }
  local.clear();
  other.join();
  EXPECT_EQ(kept, "{'k49': 'user', 'content': 'a long enough text', 'n': [1, {'role': 'x'}]}");
}

}  // namespace
}  // namespace chatwire
