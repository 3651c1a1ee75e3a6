// The engine's own Object kinds: builtin functions (globals), namespace(), the loop
// object, macros (and `caller`), cycler and joiner.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "chatwire/value.hpp"
#include "jinja/ast.hpp"
#include "jinja/state.hpp"

namespace chatwire::jinja {

// A global function such as range() or raise_exception().
using BuiltinFn = Result<Value> (*)(RenderState& state, const CallArgs& args);

class BuiltinFunction : public Object {
 public:
  BuiltinFunction(std::string name, BuiltinFn fn) : name_(std::move(name)), fn_(fn) {}
  std::string_view type_name() const override { return "function"; }
  bool is_callable() const override { return true; }
  Result<Value> call(const CallArgs& args, CallContext& context) const override;
  void repr(std::string& out) const override {
    out += "<function " + name_ + " at 0x7f0000000000>";
  }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  BuiltinFn fn_;
};

// jinja2.utils.Namespace: the only object templates may assign attributes on.
class NamespaceObject : public Object {
 public:
  static constexpr std::uint8_t kTag = 1;
  NamespaceObject() { engine_tag = kTag; }
  ~NamespaceObject() override {
    if (names_ != names_inline_) delete[] names_;
  }

  // namespace(a=..., b=...) is built at every render with a handful of attributes: their
  // values and names live inside the object, which is small enough for the payload block
  // cache (256 bytes, core.cpp). Names are offsets into one byte buffer rather than
  // std::strings: a 24-byte slot instead of 48 keeps six of them within that size.
  struct Attr {
    Value value;
    std::uint32_t offset;  // into the name bytes
    std::uint32_t size;
  };
  SmallVector<Attr, 6> attrs;

  std::string_view name(const Attr& a) const { return {names_ + a.offset, a.size}; }
  const Value* find(std::string_view name) const {
    for (const Attr& a : attrs)
      if (a.size == name.size() && detail::same_bytes(this->name(a), name)) return &a.value;
    return nullptr;
  }

  std::string_view type_name() const override { return "Namespace"; }
  Result<Value> get_attr(std::string_view name) const override;
  void set_attr(std::string_view name, Value value);
  void repr(std::string& out) const override;

 private:
  static constexpr std::uint32_t kInlineNameBytes = 56;
  char* names_ = names_inline_;
  std::uint32_t names_size_ = 0;
  std::uint32_t names_capacity_ = kInlineNameBytes;
  char names_inline_[kInlineNameBytes];
};
static_assert(sizeof(NamespaceObject) <= 256, "fits the payload block cache");

// jinja2.runtime.LoopContext.
class LoopObject : public Object {
 public:
  static constexpr std::uint8_t kTag = 2;
  LoopObject() { engine_tag = kTag; }
  // The items, for previtem / nextitem; empty when the loop binds a dict's entries
  // directly and uses only plain attributes (ForStmt::loop_attrs_only).
  std::span<const Value> items;
  std::size_t iterations = 0;  // loop.length
  std::size_t index0 = 0;
  std::size_t depth0 = 0;
  Value last_changed;  // Undefined = never called
  bool has_last_changed = false;
  // For `recursive` loops: the loop statement and its scope, valid while `alive`.
  const ForStmt* stmt = nullptr;
  Frame* frame = nullptr;
  bool alive = true;

  // A plain-value attribute (`which` is not LoopAttr::None).
  Value attr(LoopAttr which) const {
    const std::size_t n = iterations;
    auto count = [](std::size_t v) { return Value(static_cast<long long>(v)); };
    switch (which) {
      case LoopAttr::Index:
        return count(index0 + 1);
      case LoopAttr::Index0:
        return count(index0);
      case LoopAttr::Revindex:
        return count(n - index0);
      case LoopAttr::Revindex0:
        return count(n - index0 - 1);
      case LoopAttr::First:
        return Value(index0 == 0);
      case LoopAttr::Last:
        return Value(index0 + 1 == n);
      case LoopAttr::Length:
        return count(n);
      case LoopAttr::Depth:
        return count(depth0 + 1);
      case LoopAttr::Depth0:
        return count(depth0);
      case LoopAttr::None:
        break;
    }
    return Value();
  }
  std::string_view type_name() const override { return "LoopContext"; }
  Result<Value> get_attr(std::string_view name) const override;
  // Callable: a loop without `recursive` fails when called, with Jinja2's message.
  bool is_callable() const override { return true; }
  Result<Value> call(const CallArgs& args, CallContext& context) const override;
  void repr(std::string& out) const override;
  Result<std::size_t> length() const override { return items.size(); }
  // Iterating the loop object yields the items not reached yet.
  Result<Value> iterate() const override {
    return Value::list(std::vector<Value>(
        items.begin() + static_cast<std::ptrdiff_t>(std::min(index0 + 1, items.size())),
        items.end()));
  }
};

// Python's range object from the sandboxed range(): lazy, prints as "range(0, 3)".
class RangeObject : public Object {
 public:
  RangeObject(std::int64_t start, std::int64_t stop, std::int64_t step, std::size_t count)
      : start(start), stop(stop), step(step), count(count) {}
  std::int64_t start, stop, step;
  std::size_t count;

  std::int64_t at(std::size_t i) const { return start + static_cast<std::int64_t>(i) * step; }
  std::string_view type_name() const override { return "range"; }
  void repr(std::string& out) const override {
    out += "range(" + std::to_string(start) + ", " + std::to_string(stop);
    if (step != 1) out += ", " + std::to_string(step);
    out += ")";
  }
  bool truthy() const override { return count != 0; }
  Result<std::size_t> length() const override { return count; }
  Result<Value> iterate() const override {
    std::vector<Value> items;
    items.reserve(count);
    for (std::size_t i = 0; i < count; ++i) items.emplace_back(static_cast<long long>(at(i)));
    return Value::list(std::move(items));
  }
  Result<Value> get_item(const Value& key) const override {
    if (!(key.is_int() || key.is_bool()))
      return Error{
          "TypeError",
          "range indices must be integers or slices, not " + std::string(chatwire::type_name(key)),
          0,
          0,
          {}};
    std::int64_t i = key.as_integer();
    if (i < 0) i += static_cast<std::int64_t>(count);
    if (i < 0 || static_cast<std::size_t>(i) >= count)
      return Error{"IndexError", "range object index out of range", 0, 0, {}};
    return Value(static_cast<long long>(at(static_cast<std::size_t>(i))));
  }
  Result<bool> contains(const Value& item) const override {
    if (!(item.is_int() || item.is_bool() || item.is_float())) return false;
    for (std::size_t i = 0; i < count; ++i)
      if (equals(Value(static_cast<long long>(at(i))), item)) return true;
    return false;
  }
};

// groupby's _GroupTuple(grouper, list): a 2-tuple with named fields.
class GroupTuple : public Object {
 public:
  GroupTuple(Value grouper, Value list) : grouper_(std::move(grouper)), list_(std::move(list)) {}
  std::string_view type_name() const override { return "_GroupTuple"; }
  Result<Value> get_attr(std::string_view name) const override {
    if (name == "grouper") return grouper_;
    if (name == "list") return list_;
    return Value::undefined(Value(name), "_GroupTuple object", {});
  }
  Result<Value> get_item(const Value& key) const override {
    if (key.is_int() || key.is_bool()) {
      std::int64_t i = key.as_integer();
      if (i == 0 || i == -2) return grouper_;
      if (i == 1 || i == -1) return list_;
      return Error{"IndexError", "tuple index out of range", 0, 0, {}};
    }
    return Error{"TypeError", "tuple indices must be integers or slices", 0, 0, {}};
  }
  // Jinja2 gives _GroupTuple the plain tuple repr and str: "(grouper, [items])".
  void repr(std::string& out) const override {
    out += "(";
    append_repr(out, grouper_);
    out += ", ";
    append_repr(out, list_);
    out += ")";
  }
  Result<std::size_t> length() const override { return std::size_t{2}; }
  Result<Value> iterate() const override { return Value::list({grouper_, list_}); }
  bool json_serializable() const override { return true; }
  Value json_value() const override { return Value::list({grouper_, list_}); }

 private:
  Value grouper_, list_;
};

// A method of an engine object bound to it (loop.cycle, cycler.next, ...).
class BoundObjectMethod : public Object {
 public:
  using Fn = Result<Value> (*)(const Value& self, const CallArgs& args, RenderState& state);
  BoundObjectMethod(Value self, std::string name, Fn fn)
      : self_(std::move(self)), name_(std::move(name)), fn_(fn) {}
  std::string_view type_name() const override { return "method"; }
  bool is_callable() const override { return true; }
  Result<Value> call(const CallArgs& args, CallContext& context) const override;
  void repr(std::string& out) const override;

 private:
  Value self_;
  std::string name_;
  Fn fn_;
};

// A {% macro %} or the `caller` of a {% call %} block.
class MacroObject : public Object {
 public:
  static constexpr std::uint8_t kTag = 3;
  MacroObject() { engine_tag = kTag; }
  std::shared_ptr<const MacroDef> def;
  Frame* closure = nullptr;  // the root frame or a snapshot owned by `owned_closure`
  std::shared_ptr<std::vector<std::unique_ptr<Frame>>> owned_closure;
  bool is_caller = false;
  bool autoescape = false;  // defined inside {% autoescape true %}: its result is a Markup

  std::string_view type_name() const override { return "Macro"; }
  bool is_callable() const override { return true; }
  Result<Value> call(const CallArgs& args, CallContext& context) const override;
  Result<Value> get_attr(std::string_view name) const override;
  void repr(std::string& out) const override { out += "<Macro '" + def->name + "'>"; }
};

class CyclerObject : public Object {
 public:
  std::vector<Value> items;
  std::size_t pos = 0;
  std::string_view type_name() const override { return "Cycler"; }
  Result<Value> get_attr(std::string_view name) const override;
  void repr(std::string& out) const override {
    out += "<jinja2.utils.Cycler object at 0x7f0000000000>";
  }
};

class JoinerObject : public Object {
 public:
  Value sep;
  bool used = false;
  std::string_view type_name() const override { return "Joiner"; }
  bool is_callable() const override { return true; }
  Result<Value> call(const CallArgs& args, CallContext& context) const override;
  void repr(std::string& out) const override {
    out += "<jinja2.utils.Joiner object at 0x7f0000000000>";
  }
};

// A Python generator/iterator returned by lazy filters (select, map, unique, batch,
// reverse of a list, ...): iterable once, no len(), not JSON serializable, prints as
// "<generator object select_or_reject>". `type` and `function` are string literals: a
// generator is made per filter call (`for k, v in d|items`), so it copies no names and
// keeps no Error unless it has one.
class GeneratorObject : public Object {
 public:
  GeneratorObject(Value items, std::string_view type, std::string_view function)
      : items_(std::move(items)), type_(type), function_(function) {}
  // A generator whose first iteration raises `error` (e.g. do_items on a non-mapping).
  static Value failing(Error error, std::string_view function) {
    auto* g = new GeneratorObject(Value::empty_list(), "generator", function);
    g->error_ = std::make_unique<Error>(std::move(error));
    return Value::adopt(g);
  }
  std::string_view type_name() const override { return type_; }
  void repr(std::string& out) const override {
    // CPython prints an address; a fixed one keeps output deterministic.
    out += '<';
    out += type_;
    out += " object";
    if (!function_.empty()) {
      out += ' ';
      out += function_;
    }
    out += " at 0x7f0000000000>";
  }
  Result<Value> iterate() const override {
    if (error_ && !consumed_) {
      consumed_ = true;
      return *error_;
    }
    if (consumed_) return Value::empty_list();
    consumed_ = true;
    return items_;
  }
  Result<std::size_t> length() const override {
    return Error{"TypeError", "object of type '" + std::string(type_) + "' has no len()", 0, 0, {}};
  }

 private:
  Value items_;
  std::string_view type_, function_;
  std::unique_ptr<Error> error_;
  mutable bool consumed_ = false;
};

inline Value make_generator(Value items, const char* function) {
  return Value::make_object<GeneratorObject>(std::move(items), "generator", function);
}

// Global functions by name (globals.cpp); nullptr when not a global.
BuiltinFn find_global(std::string_view name);

// Calls any callable value (engine Object or Python bound method).
Value call_value(RenderState& state, const Value& callee, const CallArgs& args);

// Attribute and item lookup with Jinja2's sandboxed fallback rules.
Value get_attribute(const Value& object, std::string_view name, std::uint64_t hash);
Value get_subscript(const Value& object, const Value& key);

// Evaluates one expression in `frame` (macro defaults).
Value eval_expression(RenderState& state, const Expr& expr, Frame* frame);
// Renders a macro body with the given frame; used by MacroObject::call.
Value render_macro(RenderState& state, const MacroDef& def, Frame& frame);
// The macro body written straight to the current output (for `{{ macro(...) }}`).
void render_macro_in_place(RenderState& state, const MacroDef& def, Frame& frame);
// Runs a recursive loop body over `iterable` at `depth0` and returns its output.
std::string render_recursive_loop(RenderState& state, const ForStmt& stmt, Frame* frame,
                                  const Value& iterable, std::size_t depth0);

}  // namespace chatwire::jinja
