// Tree-walking evaluator: expressions and statements with Jinja2's runtime rules
// (sandboxed attribute/item lookup, Undefined propagation, scoping of for/with/
// macro bodies, loop controls, generation tracking as transformers records it).
#include <algorithm>
#include <charconv>
#include <cstring>
#include <new>

#include "chatwire/value_print.hpp"
#include "jinja/compiled.hpp"
#include "jinja/objects.hpp"
#include "jinja/registry.hpp"
#include "jinja/small_vector.hpp"
#include "jinja/state.hpp"
#include "jinja/unicode.hpp"

namespace chatwire::jinja {

void raise(Error error) {
  throw RenderError{std::move(error)};
}
void raise(std::string type, std::string message) {
  throw RenderError{Error{std::move(type), std::move(message), 0, 0, {}}};
}

// ------------------------------------------------------------------ output

std::size_t Output::main_code_points() {
  std::string_view s = main().view();
  counted_points_ += utf8::code_points(s.substr(counted_bytes_));
  counted_bytes_ = s.size();
  return counted_points_;
}

void output_overflow(std::size_t max_bytes) {
  raise(limit_error("max_output_bytes", max_bytes));
}

// ------------------------------------------------------------------ state

RenderState::RenderState(const CompiledTemplate& t, const Value& ctx, const RenderOptions& opts)
    : tmpl(t), context(ctx), options(opts), lim(opts.limits) {
  limits.max_string_bytes = lim.max_string_bytes;
  limits.max_container_items = lim.max_container_items;
  out.max_bytes = lim.max_output_bytes;
  // The step after the last allowed one fails (no limit at all for the largest value).
  steps_left = lim.max_steps == UINT64_MAX ? UINT64_MAX : lim.max_steps + 1;
  std::size_t n = t.parsed.symbols.size();
  if (n <= kInlineSymbols) {
    outer = outer_inline;
    root_slots = reinterpret_cast<Value*>(root_inline);
  } else {
    outer_heap = std::make_unique<const Value*[]>(n);
    outer = outer_heap.get();
    root_heap = std::make_unique<unsigned char[]>(n * sizeof(Value));
    root_slots = reinterpret_cast<Value*>(root_heap.get());
  }
  std::fill_n(outer, n, nullptr);
}

RenderState::~RenderState() {
  for (SymbolId s : root_bound) root_slots[s].~Value();
}

const Value RenderState::kAbsent;

const Value* RenderState::resolve_outer_slow(SymbolId symbol) {
  const Value* v = context.is_dict()
                       ? context.dict_find(tmpl.parsed.symbols[symbol], tmpl.symbol_hashes[symbol])
                       : nullptr;
  if (!v && !tmpl.globals[symbol].is_undefined()) v = &tmpl.globals[symbol];
  return outer[symbol] = v ? v : &kAbsent;
}

void RenderState::bind_root(SymbolId symbol, Value value) {
  Value* slot = &root_slots[symbol];
  if (outer[symbol] == slot) {
    *slot = std::move(value);
    return;
  }
  root_bound.emplace_back(symbol);
  new (slot) Value(std::move(value));
  outer[symbol] = slot;
}

void RenderState::fuel_exhausted() {
  raise(limit_error("max_steps", lim.max_steps));
}

const Value* RenderState::lookup_outer(Frame* frame, SymbolId symbol) {
  for (Frame* f = frame; f && f != &root; f = f->parent)
    if (const Value* v = f->find_local(symbol)) return v;
  return resolve_outer(symbol);
}

Value RenderState::lookup(Frame* frame, SymbolId symbol) {
  if (const Value* v = lookup_ptr(frame, symbol)) return *v;
  return Value::undefined_variable(tmpl.parsed.symbols[symbol]);
}

Value RenderState::lookup_name(Frame* frame, std::string_view name) {
  const auto& symbols = tmpl.parsed.symbols;
  for (SymbolId i = 0; i < symbols.size(); ++i)
    if (symbols[i] == name) return lookup(frame, i);
  if (context.is_dict())
    if (const Value* v = context.dict_find(name)) return *v;
  return Value::undefined_variable(name);
}

namespace {

// Guards the C++ stack against hostile nesting (deep macro recursion through deep
// expressions): a LimitError instead of a crash. The base is the render call's frame.
constexpr std::size_t kStackBudget = 4u << 20;
[[noreturn]] void stack_exhausted() {
  raise(Error{
      "LimitError", "evaluation nested too deeply (C++ stack budget of 4 MiB exceeded)", 0, 0, {}});
}

enum class Flow : std::uint8_t { Normal, Break, Continue };

// Python dunder attributes every object has: the sandbox reports them as unsafe.
bool is_real_dunder(std::string_view name) {
  // Every entry is `__x__`: anything else is rejected before the table scan (this runs on
  // each attribute read of a non-dict value: loop.index0, ns.flag, text.strip, ...).
  if (name.size() < 5 || name[0] != '_' || name[1] != '_' || name.back() != '_') return false;
  static constexpr std::string_view kDunders[] = {"__class__",
                                                  "__doc__",
                                                  "__init__",
                                                  "__new__",
                                                  "__repr__",
                                                  "__str__",
                                                  "__hash__",
                                                  "__eq__",
                                                  "__ne__",
                                                  "__lt__",
                                                  "__le__",
                                                  "__gt__",
                                                  "__ge__",
                                                  "__dir__",
                                                  "__sizeof__",
                                                  "__reduce__",
                                                  "__reduce_ex__",
                                                  "__getattribute__",
                                                  "__setattr__",
                                                  "__delattr__",
                                                  "__format__",
                                                  "__subclasshook__",
                                                  "__init_subclass__",
                                                  "__len__",
                                                  "__getitem__",
                                                  "__iter__",
                                                  "__contains__",
                                                  "__add__",
                                                  "__mul__",
                                                  "__module__",
                                                  "__dict__",
                                                  "__globals__",
                                                  "__code__",
                                                  "__self__",
                                                  "__func__",
                                                  "__base__",
                                                  "__bases__",
                                                  "__mro__",
                                                  "__subclasses__",
                                                  "__builtins__"};
  for (auto d : kDunders)
    if (d == name) return true;
  return false;
}

}  // namespace

// ------------------------------------------------------------------ lookups

Value get_attribute(const Value& obj, std::string_view name, std::uint64_t hash) {
  switch (obj.kind()) {
    case Kind::Undefined:
      raise(obj.undefined_error());
    case Kind::Dict:
      if (has_method(Kind::Dict, name)) return bound_method(obj, name);
      if (is_unsafe_mutator(Kind::Dict, name) || (name[0] == '_' && is_real_dunder(name)))
        return Value::unsafe_attribute(name, obj);
      if (const Value* v = obj.dict_find(name, hash)) return *v;
      return Value::undefined_attribute(name, obj);
    case Kind::Object: {
      if (is_real_dunder(name)) return Value::unsafe_attribute(name, obj);
      return check(obj.as_object()->get_attr(name));
    }
    default:
      if (has_method(obj, name)) return bound_method(obj, name);
      if (is_unsafe_mutator(obj.kind(), name) || is_real_dunder(name))
        return Value::unsafe_attribute(name, obj);
      return Value::undefined_attribute(name, obj);
  }
}

Value get_subscript(const Value& obj, const Value& key) {
  if (obj.is_undefined()) raise(obj.undefined_error());
  if (obj.is_dict()) {
    if (const Value* v = obj.dict_find(key)) return *v;
  } else if (obj.is_object()) {
    auto r = obj.as_object()->get_item(key);
    if (r && !r.value().is_undefined()) return std::move(r.value());
  } else if (obj.is_sequence() || obj.is_string()) {
    auto r = get_item(obj, key);
    if (r) return std::move(r.value());
  }
  if (key.is_string()) {
    std::string_view name = key.as_string();
    if (obj.is_object()) {
      Value v = check(obj.as_object()->get_attr(name));
      if (!v.is_undefined()) return v;
    } else if (has_method(obj, name)) {
      return bound_method(obj, name);
    } else if (is_unsafe_mutator(obj.kind(), name) || is_real_dunder(name)) {
      return Value::unsafe_attribute(name, obj);
    }
  }
  return Value::undefined_item(key, obj);
}

Value call_value(RenderState& state, const Value& callee, const CallArgs& args) {
  state.step();
  if (callee.is_undefined()) raise(callee.undefined_error());
  if (callee.is_object() && callee.as_object()->is_callable())
    return check(callee.as_object()->call(args, state));
  std::string message(1, '\'');
  message += type_name(callee);
  message += "' object is not callable";
  raise("TypeError", std::move(message));
}

// ------------------------------------------------------------------ evaluator

namespace {

class Evaluator {
 public:
  explicit Evaluator(RenderState& s) : st_(s) {}

  static constexpr std::uint32_t kUncheckedHeight = 32;
  void check_stack() const {
    const char* here = static_cast<const char*>(__builtin_frame_address(0));
    if (here<st_.stack_base&& static_cast<std::size_t>(st_.stack_base - here)> kStackBudget)
      stack_exhausted();
  }

  // -------------------------------------------------------------- expressions

  // Evaluates `e` without copying when the value already lives somewhere stable for
  // the rest of the expression (a variable, a constant, an item of such a dict):
  // returns a reference to it, or to `tmp` holding a fresh value.
  CHATWIRE_INLINE const Value& ref(const Expr& e, Frame* f, Value& tmp) {
    if (e.kind == ExprKind::Const) return static_cast<const ConstExpr&>(e).value;
    if (e.kind == ExprKind::Name) {  // a defined variable: the most common read
      if (const Value* v = st_.lookup_ptr(f, static_cast<const NameExpr&>(e).symbol)) return *v;
    } else if (e.name_key) {
      bool missing = false;
      if (const Value* v = read_name_key(e, f, tmp, missing)) return *v;
    }
    return ref_general(e, f, tmp);
  }

  // A NameKey node (name.attr / name['key']) read from one variable lookup: the dict's
  // entry, or the attribute of a non-dict object (loop.index0, ns.flag) in `tmp`. nullptr
  // with `missing` set: a dict without the key; nullptr otherwise: the general rules
  // apply (an undefined variable, a subscript of a non-dict).
  CHATWIRE_INLINE const Value* read_name_key(const Expr& e, Frame* f, Value& tmp, bool& missing) {
    const NameKey& k = *e.name_key;
    const Value* obj = st_.lookup_ptr(f, k.symbol);
    if (!obj) return nullptr;
    if (obj->is_dict()) {
      const Value* v = obj->dict_find(k.key, k.hash);
      missing = v == nullptr;
      return v;
    }
    if (e.kind != ExprKind::Getattr) return nullptr;
    Value r = attribute_value(static_cast<const GetattrExpr&>(e), *obj);
    tmp = std::move(r);
    return &tmp;
  }

  const Value& ref_general(const Expr& e, Frame* f, Value& tmp) {
    switch (e.kind) {
      case ExprKind::Const:
        return static_cast<const ConstExpr&>(e).value;
      case ExprKind::Name: {
        const auto& n = static_cast<const NameExpr&>(e);
        if (const Value* v = st_.lookup_ptr(f, n.symbol)) return *v;
        tmp = Value::undefined_variable(n.name);
        return tmp;
      }
      case ExprKind::Getattr: {
        const auto& g = static_cast<const GetattrExpr&>(e);
        const Value& obj = object_ref(*g.object, f, tmp);
        if (obj.is_dict() && !g.dict_method && !g.dict_blocked) {
          if (const Value* v = obj.dict_find(g.attr, g.attr_hash)) return *v;
          tmp = Value::undefined_attribute(g.attr, obj);  // get_attribute's answer, directly
          return tmp;
        }
        // `r` first: `obj` may live in `tmp` (a computed object) and must outlive the read.
        Value r = attribute_value(g, obj);
        tmp = std::move(r);
        return tmp;
      }
      case ExprKind::Getitem: {
        const auto& g = static_cast<const GetitemExpr&>(e);
        if (g.index->kind == ExprKind::Const) {
          const Value& obj = object_ref(*g.object, f, tmp);
          const Value& key = static_cast<const ConstExpr&>(*g.index).value;
          if (obj.is_dict()) {
            if (const Value* v = obj.dict_find(key)) return *v;
          } else if (obj.is_sequence() && key.is_int()) {
            auto items = obj.as_list();
            std::int64_t i = key.as_int();
            if (i < 0) i += static_cast<std::int64_t>(items.size());
            if (i >= 0 && static_cast<std::size_t>(i) < items.size())
              return items[static_cast<std::size_t>(i)];
          }
          Value r = at(e, [&] { return get_subscript(obj, key); });
          tmp = std::move(r);
          return tmp;
        }
        tmp = eval(e, f);
        return tmp;
      }
      default:
        tmp = eval(e, f);
        return tmp;
    }
  }

  // ref() of an attribute's or subscript's object: a plain name (`message` in
  // message.role, the most common case) is looked up here, without another dispatch.
  const Value& object_ref(const Expr& o, Frame* f, Value& tmp) {
    if (o.kind == ExprKind::Name) {
      const auto& n = static_cast<const NameExpr&>(o);
      if (const Value* v = st_.lookup_ptr(f, n.symbol)) return *v;
      tmp = Value::undefined_variable(n.name);
      return tmp;
    }
    return ref(o, f, tmp);
  }

  // `obj.attr` on anything but a dict read as a plain key. The engine's own objects
  // answer common attributes without get_attribute's lookup chain: `loop.index0` reads a
  // field, `ns.flag` scans the namespace (dunders still go through the sandbox).
  Value attribute_value(const GetattrExpr& g, const Value& obj) {
    if (obj.is_object()) {
      const Object* o = obj.as_object();
      if (o->engine_tag == LoopObject::kTag && g.loop_attr != LoopAttr::None)
        return static_cast<const LoopObject*>(o)->attr(g.loop_attr);
      if (o->engine_tag == NamespaceObject::kTag && g.attr[0] != '_')
        if (const Value* v = static_cast<const NamespaceObject*>(o)->find(g.attr)) return *v;
    }
    return at(g, [&] { return get_attribute(obj, g.attr, g.attr_hash); });
  }

  // ref(), except that a key missing from a dict read as an attribute (`message.tool_calls`)
  // gives nullptr instead of building its Undefined: conditions and `is defined` only
  // need to know that it is missing.
  CHATWIRE_INLINE const Value* ref_or_missing(const Expr& e, Frame* f, Value& tmp) {
    if (e.name_key) {
      bool missing = false;
      if (const Value* v = read_name_key(e, f, tmp, missing)) return v;
      // A subscript's missing key falls back to the attribute: a dict method is defined.
      if (missing && (e.kind == ExprKind::Getattr || !has_method(Kind::Dict, e.name_key->key)))
        return nullptr;
    }
    return ref_or_missing_general(e, f, tmp);
  }
  const Value* ref_or_missing_general(const Expr& e, Frame* f, Value& tmp) {
    if (e.kind == ExprKind::Name)  // an undefined variable: no Undefined built either
      return st_.lookup_ptr(f, static_cast<const NameExpr&>(e).symbol);
    if (e.kind == ExprKind::Getattr) {
      const auto& g = static_cast<const GetattrExpr&>(e);
      if (!g.dict_method && !g.dict_blocked) {
        const Value& obj = object_ref(*g.object, f, tmp);
        if (obj.is_dict()) return obj.dict_find(g.attr, g.attr_hash);
        Value r = attribute_value(g, obj);
        tmp = std::move(r);
        return &tmp;
      }
    }
    if (e.kind == ExprKind::Getitem) {
      // x['key'] on a dict without that key: the subscript falls back to the attribute,
      // which is a dict method (defined) or Undefined (missing).
      const auto& g = static_cast<const GetitemExpr&>(e);
      if (g.index->kind == ExprKind::Const) {
        const Value& key = static_cast<const ConstExpr&>(*g.index).value;
        if (key.is_string()) {
          const Value& obj = object_ref(*g.object, f, tmp);
          if (obj.is_dict()) {
            if (const Value* v = obj.dict_find(key)) return v;
            if (!has_method(Kind::Dict, key.as_string())) return nullptr;
          }
          Value r = at(e, [&] { return get_subscript(obj, key); });  // before `tmp` changes
          tmp = std::move(r);
          return &tmp;
        }
      }
    }
    return &ref(e, f, tmp);
  }

  // truthy(eval(e)) without materialising `and`/`or`/`not` results or copying
  // operands (If conditions, loop filters, inline ifs).
  bool cond(const Expr& e, Frame* f) {
    // Tested in order of frequency with direct branches: a jump table's indirect jump
    // cost more here than the comparisons it saves.
    const ExprKind kind = e.kind;
    if (kind == ExprKind::Compare) {
      const auto& c = static_cast<const CompareExpr&>(e);
      const Expr& right = *c.rest[0].second;
      if (c.rest.size() == 1 && right.kind == ExprKind::Const) {  // message.role == 'user'
        Value tmp;
        return compare_once(c, c.rest[0].first, ref(*c.first, f, tmp),
                            static_cast<const ConstExpr&>(right).value);
      }
      return eval_compare(c, f);
    }
    if (kind == ExprKind::Test) return eval_test(static_cast<const TestExpr&>(e), f);
    if (kind == ExprKind::And) {
      const auto& b = static_cast<const BinaryExpr&>(e);
      return cond(*b.left, f) && cond(*b.right, f);
    }
    if (kind == ExprKind::Not) return !cond(*static_cast<const UnaryExpr&>(e).operand, f);
    if (kind == ExprKind::Or) {
      const auto& b = static_cast<const BinaryExpr&>(e);
      return cond(*b.left, f) || cond(*b.right, f);
    }
    Value tmp;
    const Value* v = ref_or_missing(e, f, tmp);
    return v && truthy(*v);  // a missing attribute is an Undefined: false
  }

  Value eval(const Expr& e, Frame* f) {
    // Recursion through macros and loops is checked in exec(); an expression's own depth is
    // its height, so only a tall one can carry eval() far from the last check.
    if (e.height > kUncheckedHeight) check_stack();
    // The most frequent kinds first, with direct branches (see cond()).
    if (e.kind == ExprKind::Name) return st_.lookup(f, static_cast<const NameExpr&>(e).symbol);
    if (e.kind == ExprKind::Const) return static_cast<const ConstExpr&>(e).value;
    if (e.kind == ExprKind::Getattr) {
      Value tmp;
      const Value& v = ref(e, f, tmp);
      if (&v == &tmp) return tmp;
      return v;
    }
    switch (e.kind) {
      case ExprKind::Const:
      case ExprKind::Name:
      case ExprKind::Getattr:
        break;  // above
      case ExprKind::Getitem:
        if (static_cast<const GetitemExpr&>(e).index->kind == ExprKind::Const) {
          Value tmp;
          const Value& v = ref(e, f, tmp);
          if (&v == &tmp) return tmp;
          return v;
        }
        return eval_getitem(static_cast<const GetitemExpr&>(e), f);
      case ExprKind::Call:
        return eval_call(static_cast<const CallExpr&>(e), f);
      case ExprKind::Filter:
        return eval_filter(static_cast<const FilterExpr&>(e), f, nullptr);
      case ExprKind::Test:
        return Value(eval_test(static_cast<const TestExpr&>(e), f));
      case ExprKind::Not:
        return Value(!cond(*static_cast<const UnaryExpr&>(e).operand, f));
      case ExprKind::Neg: {
        Value v = eval(*static_cast<const UnaryExpr&>(e).operand, f);
        return at(e, [&] { return check(negate(v)); });
      }
      case ExprKind::Pos: {
        Value v = eval(*static_cast<const UnaryExpr&>(e).operand, f);
        return at(e, [&] { return check(unary_plus(v)); });
      }
      case ExprKind::And: {
        const auto& b = static_cast<const BinaryExpr&>(e);
        Value tmp;
        const Value& left = ref(*b.left, f, tmp);
        if (!truthy(left)) return &left == &tmp ? std::move(tmp) : left;
        return eval(*b.right, f);
      }
      case ExprKind::Or: {
        const auto& b = static_cast<const BinaryExpr&>(e);
        Value tmp;
        const Value& left = ref(*b.left, f, tmp);
        if (truthy(left)) return &left == &tmp ? std::move(tmp) : left;
        return eval(*b.right, f);
      }
      case ExprKind::Binary: {
        const auto& b = static_cast<const BinaryExpr&>(e);
        Value ltmp, rtmp;
        const Value* left = &ref(*b.left, f, ltmp);
        const Value* right = &ref(*b.right, f, rtmp);
        if (left->is_int() && right->is_int()) {  // loop.index0 + 1, n % 2: no overflow, no call
          const std::int64_t x = left->as_int(), y = right->as_int();
          std::int64_t r;
          switch (b.op) {
            case BinaryOp::Add:
              if (!__builtin_add_overflow(x, y, &r)) return Value(static_cast<long long>(r));
              break;
            case BinaryOp::Sub:
              if (!__builtin_sub_overflow(x, y, &r)) return Value(static_cast<long long>(r));
              break;
            case BinaryOp::Mod:
              if (y > 0 && x >= 0) return Value(static_cast<long long>(x % y));
              break;
            default:
              break;
          }
        }
        return at(e, [&] { return check(binary_op(b.op, *left, *right, st_.limits)); });
      }
      case ExprKind::Concat: {
        if (st_.autoescape && !static_cast<const BinaryExpr&>(e).folds_to_str)
          return markup_join(e, f);
        std::string s;
        concat_into(s, e, f);
        return Value(std::move(s));
      }
      case ExprKind::Compare:
        return Value(eval_compare(static_cast<const CompareExpr&>(e), f));
      case ExprKind::CondExpr: {
        const auto& c = static_cast<const CondExpr&>(e);
        if (cond(*c.test, f)) return eval(*c.then, f);
        if (c.otherwise) return eval(*c.otherwise, f);
        return Value::undefined(Value(), {},
                                "the inline if-expression on line " + std::to_string(c.line) +
                                    " evaluated to false and no else section was defined.");
      }
      case ExprKind::List:
      case ExprKind::Tuple: {
        const auto& s = static_cast<const SequenceExpr&>(e);
        std::vector<Value> items;
        items.reserve(s.items.size());
        for (const auto& item : s.items) items.push_back(eval(*item, f));
        return e.kind == ExprKind::List ? Value::list(std::move(items))
                                        : Value::tuple(std::move(items));
      }
      case ExprKind::Dict: {
        const auto& d = static_cast<const DictExpr&>(e);
        std::vector<std::pair<Value, Value>> entries;
        entries.reserve(d.items.size());
        for (const auto& [k, v] : d.items) {
          Value key = eval(*k, f);
          entries.emplace_back(std::move(key), eval(*v, f));
        }
        return at(e, [&] { return check(Value::dict(std::move(entries))); });
      }
      case ExprKind::Slice:
        raise("TypeError", "a slice is only valid inside []");
    }
    return Value();
  }

  // Runs `fn`, attaching the position of `node` (an expression or a statement) to an
  // error raised without one.
  template <typename Node, typename Fn>
  auto at(const Node& node, Fn&& fn) -> decltype(fn()) {
    try {
      return fn();
    } catch (RenderError& err) {
      if (err.error.line == 0) {
        err.error.line = node.line;
        err.error.column = node.column;
      }
      throw;
    }
  }

  // The operands of a `~` chain, left to right, each as str() text:
  // `piece(is_markup, text)`.
  // Below a chain that folds to a str (BinaryExpr::folds_to_str) no piece counts as Markup.
  template <typename Piece>
  void each_concat_piece(const Expr& e, Frame* f, Piece&& piece, bool plain = false) {
    if (e.kind == ExprKind::Concat) {
      const auto& b = static_cast<const BinaryExpr&>(e);
      plain = plain || b.folds_to_str;
      each_concat_piece(*b.left, f, piece, plain);
      each_concat_piece(*b.right, f, piece, plain);
      return;
    }
    Value tmp;
    const Value& v = ref(e, f, tmp);
    if (v.is_string()) return piece(!plain && v.is_markup(), v.as_string());
    std::string text;
    append_str(text, v);
    piece(false, std::string_view(text));
  }

  // `~` joins str() of its operands, a plain str even for Markup operands (Jinja2's
  // str_join).
  void concat_into(std::string& s, const Expr& e, Frame* f) {
    each_concat_piece(
        e, f, [&](bool, std::string_view text) { check(append_checked(s, text, st_.limits)); });
  }

  // `~` while autoescaping is Jinja2's markup_join: with a Markup among the operands the
  // result is a Markup in which the other operands are escaped; without one, a plain str.
  Value markup_join(const Expr& e, Frame* f) {
    std::string plain, escaped_text;
    bool any_markup = false;
    each_concat_piece(e, f, [&](bool is_markup, std::string_view text) {
      any_markup = any_markup || is_markup;
      check(append_checked(plain, text, st_.limits));
      if (is_markup)
        escaped_text += text;
      else
        append_html_escaped(escaped_text, text);
      if (escaped_text.size() > st_.lim.max_string_bytes)
        raise(limit_error("max_string_bytes", st_.lim.max_string_bytes));
    });
    return any_markup ? Value::markup(std::move(escaped_text)) : Value(std::move(plain));
  }

  // {{ a ~ b ~ c }}: each piece is written to the output as it is evaluated, with no
  // joined string (a failed render discards its output, so the pieces written before an
  // error are never seen). Inside {% autoescape %} the join is Jinja2's markup_join:
  // pieces that are not Markup are HTML-escaped.
  void print_concat(const Expr& e, Frame* f) {
    std::size_t total = 0;
    each_concat_piece(e, f, [&](bool is_markup, std::string_view text) {
      total += text.size();
      if (total > st_.lim.max_string_bytes)
        raise(limit_error("max_string_bytes", st_.lim.max_string_bytes));
      if (st_.autoescape && !is_markup) {
        std::string escaped_text;
        append_html_escaped(escaped_text, text);
        st_.out.write(escaped_text);
      } else {
        st_.out.write(text);
      }
    });
  }

  CHATWIRE_INLINE std::optional<std::int64_t> slice_bound(const Expr* e, Frame* f) {
    if (!e) return std::nullopt;
    Value tmp;
    const Value& v = ref(*e, f, tmp);  // `messages[1:]`: the constant, without a copy
    if (v.is_none()) return std::nullopt;
    if (v.is_int() || v.is_bool()) return v.as_integer();
    raise("TypeError", "slice indices must be integers or None or have an __index__ method");
  }

  Value eval_getitem(const GetitemExpr& g, Frame* f) {
    Value obj_tmp;
    const Value& obj = ref(*g.object, f, obj_tmp);
    if (g.index->kind == ExprKind::Slice) {
      const auto& s = static_cast<const SliceExpr&>(*g.index);
      auto start = slice_bound(s.start.get(), f);
      auto stop = slice_bound(s.stop.get(), f);
      auto step = slice_bound(s.step.get(), f);
      // A slice is a direct Python subscript in compiled Jinja2: errors propagate.
      return at(g, [&]() -> Value {
        if (obj.is_undefined()) raise(obj.undefined_error());
        if (obj.is_string() || obj.is_sequence())
          return check(slice(obj, start, stop, step, st_.limits));
        if (obj.is_dict()) raise("TypeError", "unhashable type: 'slice'");
        if (obj.is_object() && dynamic_cast<const RangeObject*>(obj.as_object()))
          return check(slice(check(iterate(obj)), start, stop, step, st_.limits));
        raise("TypeError", "'" + std::string(type_name(obj)) + "' object is not subscriptable");
      });
    }
    Value key = eval(*g.index, f);
    return at(g, [&] { return get_subscript(obj, key); });
  }

  // Evaluated arguments of one call; NamedArg names point into the AST or into
  // `kw_source` (a ** dict) which this object keeps alive.
  struct Args {
    SmallVector<Value, 4> positional;
    SmallVector<NamedArg, 2> keyword;
    Value kw_source;
    CallArgs view() const { return CallArgs{positional, keyword}; }
  };

  void eval_args(const CallArguments& a, Frame* f, Args& out) {
    if (a.empty()) return;
    out.positional.reserve(a.args.size());
    for (const auto& e : a.args) out.positional.push_back(eval(*e, f));
    if (a.dyn_args) {
      Value extra = eval(*a.dyn_args, f);
      Value items = check(iterate(extra));
      for (const auto& v : items.as_list()) out.positional.push_back(v);
    }
    for (const auto& k : a.kwargs) out.keyword.push_back(NamedArg{k.name, eval(*k.value, f)});
    if (a.dyn_kwargs) {
      out.kw_source = eval(*a.dyn_kwargs, f);
      if (!out.kw_source.is_dict())
        raise("TypeError",
              "argument after ** must be a mapping, not " + std::string(type_name(out.kw_source)));
      for (const auto& [k, v] : out.kw_source.dict_entries()) {
        if (!k.is_string()) raise("TypeError", "keywords must be strings");
        out.keyword.push_back(NamedArg{k.as_string(), v});
      }
    }
  }

  Value eval_call(const CallExpr& c, Frame* f, const NamedArg* extra = nullptr) {
    Args args;
    if (c.callee->kind == ExprKind::Getattr) {
      const auto& g = static_cast<const GetattrExpr&>(*c.callee);
      Value obj_tmp;
      const Value& obj = ref(*g.object, f, obj_tmp);
      if (MethodFn method = g.method_for(obj.kind())) {
        eval_args(c.arguments, f, args);
        if (extra) args.keyword.push_back(*extra);
        st_.step();
        if (obj.is_markup())  // Markup's own versions of str's methods
          return at(c, [&] { return check(call_method(obj, g.attr, args.view(), st_.limits)); });
        return at(c, [&] { return check(method(obj, args.view(), st_.limits)); });
      }
      Value callee = at(g, [&] { return get_attribute(obj, g.attr, g.attr_hash); });
      eval_args(c.arguments, f, args);
      if (extra) args.keyword.push_back(*extra);
      return at(c, [&] { return call_value(st_, callee, args.view()); });
    }
    Value callee = eval(*c.callee, f);
    eval_args(c.arguments, f, args);
    if (extra) args.keyword.push_back(*extra);
    return at(c, [&] { return call_value(st_, callee, args.view()); });
  }

  // `{{ name(...) }}` where `name` is a macro: the body renders straight into the
  // current output, as if its returned string had been printed, without a capture buffer
  // and a string copy per call. Only for a plain name as callee (looking it up has no
  // side effects, so declining here and evaluating the call normally is safe). Not while
  // generation spans are tracked: their positions depend on what reached the top level.
  bool print_macro_call(const CallExpr& c, Frame* f) {
    if (c.callee->kind != ExprKind::Name) return false;
    const Value* fn = st_.lookup_ptr(f, static_cast<const NameExpr&>(*c.callee).symbol);
    if (!fn || !fn->is_object() || fn->as_object()->engine_tag != MacroObject::kTag) return false;
    Value callee = *fn;  // alive through the call
    Args args;
    eval_args(c.arguments, f, args);
    struct Reset {
      RenderState& s;
      ~Reset() { s.macro_print_in_place = false; }
    } reset{st_};
    st_.macro_print_in_place = true;
    at(c, [&] { return call_value(st_, callee, args.view()); });
    st_.out.write(std::string_view());  // Python yields the (possibly empty) result
    return true;
  }

  // The value a filter with an operand applies to: an inner filter's result (in `tmp`),
  // or the operand read where it lives. `body` goes to the innermost filter.
  const Value& filter_operand(const FilterExpr& fe, Frame* f, const Value* body, Value& tmp) {
    if (fe.operand->kind == ExprKind::Filter)
      return tmp = eval_filter(static_cast<const FilterExpr&>(*fe.operand), f, body);
    return ref(*fe.operand, f, tmp);
  }

  // `body` (non-null) replaces a missing innermost operand (filter blocks, set blocks).
  Value eval_filter(const FilterExpr& fe, Frame* f, const Value* body) {
    if (fe.special == FilterSpecial::Length && fe.arguments.empty() && fe.operand) {
      if (is_plain_trim(*fe.operand)) return trimmed_length(fe, f);  // `content | trim | length`
      if (fe.operand->kind != ExprKind::Filter) {  // `messages | length`: len() of a container
        Value operand_tmp;
        const Value& operand = ref(*fe.operand, f, operand_tmp);
        if (operand.is_string() || operand.is_sequence() || operand.is_dict()) {
          st_.step();
          return Value(static_cast<long long>(operand.is_string() ? operand.string_length()
                                              : operand.is_dict() ? operand.dict_size()
                                                                  : operand.as_list().size()));
        }
        Value r = at(fe, [&] {  // before operand_tmp goes: the operand may live there
          st_.step();
          return check(fe.filter->fn(st_, operand, CallArgs{}));
        });
        return r;
      }
    }
    Value operand_tmp;  // the operand when it is computed here (not borrowed)
    const Value& operand =
        fe.operand ? filter_operand(fe, f, body, operand_tmp) : (body ? *body : operand_tmp);
    if (fe.arguments.empty() && fe.filter) {  // `x | trim`: no argument list
      st_.step();
      return at(fe, [&] { return check(run_filter(*fe.filter, st_, operand, CallArgs{})); });
    }
    Args args;
    eval_args(fe.arguments, f, args);
    return at(fe, [&]() -> Value {
      if (!fe.filter) raise("TemplateRuntimeError", "No filter named '" + fe.name + "' found.");
      st_.step();
      return check(run_filter(*fe.filter, st_, operand, args.view()));
    });
  }

  // {{ x | tojson(...) }}: the JSON text goes to the output through a reused buffer,
  // without the string Value the filter would return (same steps, same errors).
  void print_tojson(const FilterExpr& fe, Frame* f) {
    Value operand_tmp;
    const Value& operand = filter_operand(fe, f, nullptr, operand_tmp);
    Args args;
    if (!fe.arguments.empty()) eval_args(fe.arguments, f, args);
    at(fe, [&] {
      st_.step();
      st_.scratch.clear();
      tojson_into(st_, operand, args.view(), st_.scratch);
    });
    st_.out.write(st_.scratch);
  }

  // A printed `x | trim` (no arguments, not Markup): when x is a string whose ends are
  // ASCII, its stripped text as a view of x, with no new string (true; `holder` keeps x
  // alive when it was computed). Otherwise the filter runs as usual and `holder` gets
  // its result (false).
  bool trim_view(const FilterExpr& fe, Frame* f, Value& holder, std::string_view& view) {
    const Value& operand = ref(*fe.operand, f, holder);
    // (A Markup's trim is a Markup, which a `+` treats differently: not a view.)
    if (operand.is_string() && !operand.is_markup() &&
        utf8::ascii_strip(operand.as_string(), view)) {
      st_.step();
      return true;
    }
    Value result = at(fe, [&] {
      st_.step();
      return check(run_filter(*fe.filter, st_, operand, CallArgs{}));
    });
    holder = std::move(result);
    return false;
  }
  // `x | trim | length`: the code points of the trimmed view, without the trimmed string
  // (the same two steps as the two filters).
  Value trimmed_length(const FilterExpr& fe, Frame* f) {
    Value holder;
    std::string_view view;
    const bool viewed = trim_view(static_cast<const FilterExpr&>(*fe.operand), f, holder, view);
    st_.step();  // the length filter's
    if (viewed) return Value(static_cast<long long>(utf8::code_points(view)));
    return at(fe, [&] { return check(fe.filter->fn(st_, holder, CallArgs{})); });
  }

  static bool is_plain_trim(const Expr& e) {
    if (e.kind != ExprKind::Filter) return false;
    const auto& fe = static_cast<const FilterExpr&>(e);
    return fe.special == FilterSpecial::Trim && fe.arguments.empty() && fe.operand;
  }

  bool eval_test(const TestExpr& te, Frame* f) {
    Value operand_tmp;
    const Value* operand_ptr;
    if (te.special != TestSpecial::None && te.special != TestSpecial::Escaped &&
        te.arguments.empty()) {  // defined, undefined and the type tests
      operand_ptr = ref_or_missing(*te.operand, f, operand_tmp);
      if (!operand_ptr) {  // a missing dict attribute: Undefined, without building it
        st_.step();        // (not a string, not None, not a mapping)
        return te.special == TestSpecial::Undefined;
      }
    } else {
      operand_ptr = &ref(*te.operand, f, operand_tmp);
    }
    const Value& operand = *operand_ptr;
    if (te.test && te.arguments.empty()) {  // `x is string`: no argument list to build
      switch (te.special) {         // type tests answered here (the table's functions say the same)
        case TestSpecial::Escaped:  // hasattr(value, "__html__")
          st_.step();
          return operand.is_markup();
        case TestSpecial::String:
          st_.step();
          return operand.is_string();
        case TestSpecial::NoneValue:
          st_.step();
          return operand.is_none();
        case TestSpecial::Mapping:
          st_.step();
          return operand.is_dict();
        default:
          break;
      }
      st_.step();
      return at(te, [&] { return check(te.test->fn(st_, operand, CallArgs{})); });
    }
    Args args;
    eval_args(te.arguments, f, args);
    if (te.special == TestSpecial::Escaped) return operand.is_markup();
    if (te.test && args.positional.size() + args.keyword.size() > te.test->arity) {
      std::size_t given = args.positional.size() + 1;
      raise(Error{"TypeError",
                  std::string(te.test->python_name) + "() takes " +
                      std::to_string(te.test->arity + 1) + " positional argument" +
                      (te.test->arity ? "s" : "") + " but " + std::to_string(given) + " were given",
                  te.line,
                  te.column,
                  {}});
    }
    bool result = false;
    at(te, [&]() -> Value {
      if (!te.test) raise("TemplateRuntimeError", "No test named '" + te.name + "' found.");
      st_.step();
      result = check(te.test->fn(st_, operand, args.view()));
      return Value();
    });
    return result;
  }

  bool eval_compare(const CompareExpr& c, Frame* f) {
    if (c.rest.size() == 1) {  // the common case: no copies of the operands
      Value ltmp, rtmp;
      const Value& l = ref(*c.first, f, ltmp);
      const Expr& right = *c.rest[0].second;
      const Value& r = right.kind == ExprKind::Const ? static_cast<const ConstExpr&>(right).value
                                                     : ref(right, f, rtmp);
      return compare_once(c, c.rest[0].first, l, r);
    }
    Value left = eval(*c.first, f);
    for (const auto& [op, operand] : c.rest) {
      Value right = eval(*operand, f);
      if (!compare_once(c, op, left, right)) return false;
      left = std::move(right);
    }
    return true;
  }

  static bool is_container(const Value& v) { return v.is_sequence() || v.is_dict(); }
  // Python's ==; nested containers go through compare(), which stops with RecursionError
  // past kMaxValueNesting levels instead of overflowing the stack.
  static bool equal_values(const Value& left, const Value& right) {
    if (!is_container(left)) return equals(left, right);
    return check(compare(CompareOp::Eq, left, right));
  }

  CHATWIRE_INLINE bool compare_once(const CompareExpr& c, CompareKind op, const Value& left,
                                    const Value& right) {
    switch (op) {
      case CompareKind::Eq:
      case CompareKind::Ne:
        if (left.is_string() && right.is_string())  // message.role == 'user'
          return detail::same_bytes(left.as_string(), right.as_string()) == (op == CompareKind::Eq);
        if (left.is_int() && right.is_int())
          return (left.as_int() == right.as_int()) == (op == CompareKind::Eq);
        if (!is_container(left)) return equals(left, right) == (op == CompareKind::Eq);
        break;
      case CompareKind::Lt:
      case CompareKind::LtEq:
      case CompareKind::Gt:
      case CompareKind::GtEq:
        if (left.is_int() && right.is_int()) {  // loop.index0 > ns.last_query_index
          const std::int64_t x = left.as_int(), y = right.as_int();
          return op == CompareKind::Lt     ? x < y
                 : op == CompareKind::LtEq ? x <= y
                 : op == CompareKind::Gt   ? x > y
                                           : x >= y;
        }
        break;
      case CompareKind::In:
      case CompareKind::NotIn:
        if (right.is_dict() && left.is_string())  // 'tool_calls' in message
          return (right.dict_find(left) != nullptr) == (op == CompareKind::In);
        if (right.is_string() && left.is_string())  // '</think>' in content: a substring
          return (right.as_string().find(left.as_string()) != std::string_view::npos) ==
                 (op == CompareKind::In);
        if (right.is_sequence() && left.is_string())  // role in ['user', 'system']
          return detail::contains_str(right.as_list(), left.as_string()) == (op == CompareKind::In);
        break;
    }
    return compare_general(c, op, left, right);
  }

  bool compare_general(const CompareExpr& c, CompareKind op, const Value& left,
                       const Value& right) {
    return at(c, [&]() -> bool {
      switch (op) {
        case CompareKind::Eq:
          return equal_values(left, right);
        case CompareKind::Ne:
          return !equal_values(left, right);
        case CompareKind::Lt:
          return check(compare(CompareOp::Lt, left, right));
        case CompareKind::LtEq:
          return check(compare(CompareOp::Le, left, right));
        case CompareKind::Gt:
          return check(compare(CompareOp::Gt, left, right));
        case CompareKind::GtEq:
          return check(compare(CompareOp::Ge, left, right));
        case CompareKind::In:
          return check(contains(right, left));
        case CompareKind::NotIn:
          return !check(contains(right, left));
      }
      return false;
    });
  }

  // -------------------------------------------------------------- assignment

  void assign(const Target& t, const Value& value, Frame* f) {
    switch (t.kind) {
      case Target::Kind::Name:
        st_.bind(f, t.symbol, value);
        return;
      case Target::Kind::NamespaceAttr: {
        const Value* ns = st_.lookup_ptr(f, t.symbol);
        auto* obj = ns && ns->is_object() && ns->as_object()->engine_tag == NamespaceObject::kTag
                        ? static_cast<NamespaceObject*>(ns->as_object())
                        : nullptr;
        if (!obj)
          raise(Error{"TemplateRuntimeError",
                      "cannot assign attribute on non-namespace object",
                      t.line,
                      t.column,
                      {}});
        obj->set_attr(t.attr, value);
        return;
      }
      case Target::Kind::Tuple: {
        if (!(value.is_sequence() || value.is_string() || value.is_dict() || value.is_undefined() ||
              value.is_object()))
          raise(Error{"TypeError",
                      "cannot unpack non-iterable " + std::string(type_name(value)) + " object",
                      t.line,
                      t.column,
                      {}});
        Value items = check(iterate(value));
        auto list = items.as_list();
        if (list.size() < t.items.size())
          raise(Error{"ValueError",
                      "not enough values to unpack (expected " + std::to_string(t.items.size()) +
                          ", got " + std::to_string(list.size()) + ")",
                      t.line,
                      t.column,
                      {}});
        if (list.size() > t.items.size())
          raise(Error{"ValueError",
                      "too many values to unpack (expected " + std::to_string(t.items.size()) + ")",
                      t.line,
                      t.column,
                      {}});
        for (std::size_t i = 0; i < list.size(); ++i) assign(t.items[i], list[i], f);
        return;
      }
    }
  }

  // -------------------------------------------------------------- statements

  // An OutputStmt the optimiser merged from several statements (OutputStmt::pieces): one
  // step per statement and one write, unless a limit is reached inside; then the pieces
  // one by one, so that the error (max_steps or max_output_bytes, and where) is the one the
  // statements raise unmerged.
  void write_pieces(const OutputStmt& o) {
    const std::size_t n = o.pieces.size();
    if (st_.steps_left > n && st_.out.total_bytes + o.text.size() <= st_.out.max_bytes) {
      st_.steps_left -= n;
      st_.out.write(o.text);
      return;
    }
    std::size_t begin = 0;
    for (const auto& piece : o.pieces) {
      st_.step();
      const std::string_view text = std::string_view(o.text).substr(begin, piece.end - begin);
      if (piece.printed)
        at(piece, [&] { st_.out.write(text); });
      else
        st_.out.write(text);
      begin = piece.end;
    }
  }

  Flow exec(const Body& body, Frame* f) {
    // Statements nest only through bodies (and macro bodies), all run from here: one stack
    // check per body instead of one per statement.
    check_stack();
    for (const auto& sp : body) {
      const Stmt& s = *sp;
      // Text, `{{ }}` and `if` (most statements run) are handled here, without a call into
      // exec_stmt_inner and its large frame.
      if (s.kind == StmtKind::Output) {
        const auto& o = static_cast<const OutputStmt&>(s);
        if (o.pieces.empty()) {
          st_.step();
          st_.out.write(o.text);
        } else {
          write_pieces(o);
        }
        continue;
      }
      Flow flow;
      if (s.kind == StmtKind::Print) {
        st_.step();
        at(s, [&] { print(static_cast<const PrintStmt&>(s), f); });
        continue;
      }
      if (s.kind == StmtKind::If) {
        st_.step();
        flow = at(s, [&] {
          const auto& i = static_cast<const IfStmt&>(s);
          if (i.subject) {
            const int taken = subject_branch(i, f);
            if (taken >= 0) return exec(i.branches[static_cast<std::size_t>(taken)].second, f);
            if (taken == kNoBranch)
              return i.otherwise.empty() ? Flow::Normal : exec(i.otherwise, f);
          }
          for (const auto& [test, branch] : i.branches)
            if (cond(*test, f)) return exec(branch, f);
          return i.otherwise.empty() ? Flow::Normal : exec(i.otherwise, f);
        });
      } else {
        flow = exec_stmt(s, f);
      }
      if (flow != Flow::Normal) return flow;
    }
    return Flow::Normal;
  }

  // An `if` chain on one dict entry (IfStmt::subject): the entry is read once and the
  // shaped tests compare it with their constants. The index of the branch taken,
  // kNoBranch when none is, or kGeneralTests when the entry is not a str of a dict (an
  // undefined name, a missing key, another type): the tests then run one by one as written.
  static constexpr int kNoBranch = -1, kGeneralTests = -2;
  int subject_branch(const IfStmt& i, Frame* f) {
    const NameKey& k = *i.subject;
    const Value* obj = st_.lookup_ptr(f, k.symbol);
    if (!obj || !obj->is_dict()) return kGeneralTests;
    const Value* entry = obj->dict_find(k.key, k.hash);
    if (!entry || !entry->is_string()) return kGeneralTests;
    const Value subject = *entry;  // its text stays alive while the tests run
    const std::string_view text = subject.as_string();
    for (std::size_t b = 0; b < i.branches.size(); ++b) {
      const SubjectTest& t = i.subject_tests[b];
      bool hit;
      if (t.kind == SubjectTest::Kind::None) {
        hit = cond(*i.branches[b].first, f);
      } else {
        hit = subject_matches(t, text);
        if (hit && t.rest) hit = cond(*t.rest, f);
      }
      if (hit) return static_cast<int>(b);
    }
    return kNoBranch;
  }
  // Python's str == constant, or `in` a list or tuple (== on each item: a str never
  // equals another type).
  static bool subject_matches(const SubjectTest& t, std::string_view text) {
    switch (t.kind) {
      case SubjectTest::Kind::Eq:
      case SubjectTest::Kind::Ne:
        return detail::same_bytes(text, t.constant->as_string()) ==
               (t.kind == SubjectTest::Kind::Eq);
      case SubjectTest::Kind::In:
      case SubjectTest::Kind::NotIn:
        return detail::contains_str(t.constant->as_list(), text) ==
               (t.kind == SubjectTest::Kind::In);
      case SubjectTest::Kind::None:
        break;
    }
    return false;
  }

  void write_value(const Value& v) {
    if (v.is_string()) {
      st_.out.write_string(v);
    } else if (v.is_int()) {  // {{ loop.index }}: str(int) is its decimal digits
      char digits[40];        // 20 suffice; more keeps GCC's -Warray-bounds quiet about the copy
      auto end = std::to_chars(digits, digits + 24, v.as_int()).ptr;
      st_.out.write(std::string_view(digits, static_cast<std::size_t>(end - digits)));
    } else {
      st_.scratch.clear();
      append_str(st_.scratch, v);
      st_.out.write(st_.scratch);
    }
  }

  // {{ a + b + c }}: while every operand is a string, write the operands straight to
  // the output instead of building each intermediate sum; on the first non-string
  // operand fall back to Python's `+` from the sum so far (same order, same errors).
  // The operands were collected at compile time (PrintStmt::sum).
  void print_sum(const std::vector<SumOperand>& sum, Frame* f) {
    const std::size_t n = sum.size();
    // Operands are borrowed where they live (variables, constants, dict items: nothing
    // in an expression can reassign them), so the common case copies no Value at all.
    // Computed operands move into `kept` (constructed on demand: most chains have none,
    // and a full array of Values would cost more than the sum itself).
    union Slot {
      Value v;
      Slot() {}
      ~Slot() {}
    };
    Slot kept[PrintStmt::kMaxSumOperands];
    struct Release {
      Slot* slots;
      std::size_t n = 0;
      ~Release() {
        for (std::size_t k = 0; k < n; ++k) slots[k].v.~Value();
      }
    } release{kept};
    Value scratch;
    // Left uninitialised (16 views zeroed per print cost more than a short sum).
    alignas(std::string_view) unsigned char
        operand_storage[PrintStmt::kMaxSumOperands * sizeof(std::string_view)];
    auto* operands = reinterpret_cast<std::string_view*>(operand_storage);
    std::size_t count = 0;
    std::size_t total = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const SumOperand& op = sum[i];
      if (op.is_text) {
        std::construct_at(&operands[count++], op.text);
        total += op.text.size();
        continue;
      }
      const Expr& operand = *op.expr;
      const Value* borrowed;
      std::string_view trimmed;
      bool is_trimmed = false;
      if (op.is_trim) {
        is_trimmed = trim_view(static_cast<const FilterExpr&>(operand), f, scratch, trimmed);
        borrowed = &scratch;
      } else {
        borrowed = &ref(operand, f, scratch);
      }
      // `scratch` may also hold a container the result points into (a subscript of a
      // computed dict), so whatever it holds is kept, not only the result itself.
      if (!scratch.same(Value())) {
        new (&kept[release.n].v) Value(std::move(scratch));
        if (borrowed == &scratch) borrowed = &kept[release.n].v;
        ++release.n;
      }
      if (is_trimmed) {  // a view of a string that stays alive (borrowed or kept)
        std::construct_at(&operands[count++], trimmed);
        total += trimmed.size();
        continue;
      }
      const Value& v = *borrowed;
      if (!v.is_string() || v.is_markup()) {  // Python's `+` from here (Markup escapes)
        if (count == 0) return write_value(eval_sum_from(Value(v), sum, i + 1, f));
        std::string joined;
        for (std::size_t k = 0; k < count; ++k)
          check(append_checked(joined, operands[k], st_.limits));
        Value acc(std::move(joined));
        acc = at(*op.plus, [&] { return check(binary_op(BinaryOp::Add, acc, v, st_.limits)); });
        return write_value(eval_sum_from(acc, sum, i + 1, f));
      }
      std::construct_at(&operands[count++], v.as_string());
      total += operands[count - 1].size();
    }
    if (total > st_.lim.max_string_bytes)
      raise(limit_error("max_string_bytes", st_.lim.max_string_bytes));
    st_.out.write_all(operands, count, total);
  }

  // Continues a `+` chain from `acc` with operands sum[from] ... sum[n-1].
  Value eval_sum_from(Value acc, const std::vector<SumOperand>& sum, std::size_t from, Frame* f) {
    for (std::size_t i = from; i < sum.size(); ++i) {
      Value v = sum[i].is_text ? Value(sum[i].text) : eval(*sum[i].expr, f);
      acc = at(*sum[i].plus, [&] { return check(binary_op(BinaryOp::Add, acc, v, st_.limits)); });
    }
    return acc;
  }

  // Inside {% autoescape true %}: values that are not Markup are HTML-escaped
  // (escape(value) of the Output node).
  void write_autoescaped(const Value& v) {
    if (v.is_markup()) return st_.out.write(v.as_string());
    std::string text;
    append_str(text, v);
    std::string out;
    append_html_escaped(out, text);
    st_.out.write(out);
  }

  // {{ ... }}
  void print(const PrintStmt& p, Frame* f) {
    const Expr& e = *p.expr;
    if (!p.sum.empty() && !st_.autoescape) {
      print_sum(p.sum, f);
    } else if (e.kind == ExprKind::Concat) {  // write the pieces straight to the output
      print_concat(e, f);
    } else if (e.kind == ExprKind::Call && !st_.autoescape && !st_.track_generation &&
               print_macro_call(static_cast<const CallExpr&>(e), f)) {
      // written in place
    } else if (st_.autoescape) {
      Value tmp;
      write_autoescaped(ref(e, f, tmp));
    } else if (e.kind == ExprKind::Filter &&
               static_cast<const FilterExpr&>(e).special == FilterSpecial::Tojson &&
               static_cast<const FilterExpr&>(e).operand) {
      print_tojson(static_cast<const FilterExpr&>(e), f);
    } else if (is_plain_trim(e)) {
      Value holder;
      std::string_view trimmed;
      if (trim_view(static_cast<const FilterExpr&>(e), f, holder, trimmed)) {
        st_.out.write(trimmed);
      } else {
        write_value(holder);
      }
    } else {
      Value tmp;
      write_value(ref(e, f, tmp));
    }
  }

  Flow exec_stmt(const Stmt& s, Frame* f) {
    st_.step();
    return at(s, [&] { return exec_stmt_inner(s, f); });
  }

  Flow exec_stmt_inner(const Stmt& s, Frame* f) {
    // The two most frequent kinds here, with direct branches (see cond()).
    if (s.kind == StmtKind::Print) {
      print(static_cast<const PrintStmt&>(s), f);
      return Flow::Normal;
    }
    if (s.kind == StmtKind::Set) {
      const auto& set = static_cast<const SetStmt&>(s);
      assign(set.target, eval(*set.value, f), f);
      return Flow::Normal;
    }
    switch (s.kind) {
      case StmtKind::Output:
      case StmtKind::If:
        break;  // run by exec() itself
      case StmtKind::Print:
        break;  // above
      case StmtKind::For:
        return exec_for(static_cast<const ForStmt&>(s), f);
      case StmtKind::Set:
        break;  // above
      case StmtKind::SetBlock: {
        const auto& set = static_cast<const SetBlockStmt&>(s);
        Value body = capture(set.body, f);
        if (set.filter) body = eval_filter(static_cast<const FilterExpr&>(*set.filter), f, &body);
        assign(set.target, body, f);
        return Flow::Normal;
      }
      case StmtKind::Macro: {
        const auto& m = static_cast<const MacroStmt&>(s);
        st_.bind(f, m.symbol, make_macro(m.def, f, false));
        return Flow::Normal;
      }
      case StmtKind::CallBlock: {
        const auto& c = static_cast<const CallBlockStmt&>(s);
        NamedArg caller{"caller", make_macro(c.caller, f, true)};
        write_value(eval_call(*c.call, f, &caller));
        return Flow::Normal;
      }
      case StmtKind::FilterBlock: {
        const auto& fb = static_cast<const FilterBlockStmt&>(s);
        Value body = capture(fb.body, f);
        write_value(eval_filter(static_cast<const FilterExpr&>(*fb.filter), f, &body));
        return Flow::Normal;
      }
      case StmtKind::With: {
        const auto& w = static_cast<const WithStmt&>(s);
        Frame inner;
        inner.parent = f;
        for (std::size_t i = 0; i < w.targets.size(); ++i)
          assign(w.targets[i], eval(*w.values[i], f), &inner);
        return exec(w.body, &inner);
      }
      case StmtKind::Break:
        return Flow::Break;
      case StmtKind::Continue:
        return Flow::Continue;
      case StmtKind::Generation:
        return exec_generation(static_cast<const BodyStmt&>(s), f);
      case StmtKind::Block: {
        const auto& block = static_cast<const BodyStmt&>(s);
        if (block.required)
          raise("TemplateRuntimeError", "Required block '" + block.name + "' not found");
        Frame inner;
        inner.parent = f;
        exec(static_cast<const BodyStmt&>(s).body, &inner);
        return Flow::Normal;
      }
      case StmtKind::Autoescape: {
        const auto& block = static_cast<const BodyStmt&>(s);
        bool saved = st_.autoescape;
        st_.autoescape = truthy(eval(*block.expr, f));
        Frame inner;  // a scoped block: assignments inside do not leak
        inner.parent = f;
        Flow flow;
        try {
          flow = exec(block.body, &inner);
        } catch (...) {
          st_.autoescape = saved;
          throw;
        }
        st_.autoescape = saved;
        return flow;
      }
      case StmtKind::Unsupported:
        raise("TypeError", "no loader for this environment specified");
    }
    return Flow::Normal;
  }

  // A block's text (set block, filter block); Markup(concat(...)) while autoescaping.
  Value capture(const Body& body, Frame* f) {
    if (st_.autoescape) return Value::as_markup(capture_text(body, f));
    return capture_text(body, f);
  }
  Value capture_text(const Body& body, Frame* f) {
    st_.out.begin_capture();
    try {
      exec(body, f);
    } catch (...) {
      st_.out.drop_capture();
      throw;
    }
    return st_.out.end_capture_value();
  }

  Flow exec_generation(const BodyStmt& g, Frame* f) {
    if (!st_.track_generation) return exec(g.body, f);
    // transformers renders the body through caller() and records the span only when
    // something was already yielded at the top level or a span exists.
    Value rv = capture(g.body, f);
    if (st_.out.yielded() || !st_.generation.empty()) {
      const std::size_t start = st_.out.main_code_points();
      const std::size_t start_byte = st_.out.main().size();
      st_.generation.push_back(
          {start, start + rv.string_length(), start_byte,
           st_.out.capturing() ? RenderState::kUnknownByte : start_byte + rv.as_string().size()});
    }
    st_.out.write(rv.as_string());
    return Flow::Normal;
  }

  Value make_macro(const std::shared_ptr<MacroDef>& def, Frame* f, bool is_caller) {
    auto* m = new MacroObject;
    m->def = def;
    m->is_caller = is_caller;
    m->autoescape = st_.autoescape;  // the body's, and whether it returns a Markup
    if (f == &st_.root) {
      m->closure = f;
    } else {
      // Snapshot the enclosing frames (they may end before the macro is called).
      m->owned_closure = std::make_shared<std::vector<std::unique_ptr<Frame>>>();
      Frame* prev = nullptr;
      for (Frame* cur = f; cur && cur != &st_.root; cur = cur->parent) {
        auto copy = std::make_unique<Frame>(*cur);
        if (prev) prev->parent = copy.get();
        prev = copy.get();
        m->owned_closure->push_back(std::move(copy));
      }
      if (prev) prev->parent = &st_.root;
      m->closure = m->owned_closure->empty() ? &st_.root : m->owned_closure->front().get();
    }
    return Value::adopt(m);
  }

  // `for k, v in d | items` (or `| dictsort`) over a dict: each entry's key and value are
  // bound directly, without the list of (key, value) tuples the filter or method would
  // build; dictsort's order is a list of entry positions.
  bool run_dict_items(const ForStmt& loop, const Expr& source, Frame* f) {
    Value holder;
    const Value& d = ref(source, f, holder);
    if (!d.is_dict()) return false;  // Undefined, errors, other mappings: the general path
    st_.step();                      // the filter or method call
    const Value keep = d;            // the body may rebind what `source` reads
    auto entries = keep.dict_entries();
    SortPositions positions(loop.dict_items_sorted ? entries.size() : 0);
    std::span<std::uint32_t> order = positions.span();
    if (loop.dict_items_sorted) at(*loop.iter, [&] { dictsort_positions(st_, keep, order); });
    // `loop` with plain attributes only: a LoopObject without items (see ForStmt).
    Value loop_value;
    LoopObject* loop_obj =
        loop.uses_loop ? new_loop_object(loop, f, {}, entries.size(), 0, loop_value) : nullptr;
    Frame iteration;
    iteration.parent = f;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const auto& [key, value] = entries[loop.dict_items_sorted ? order[i] : i];
      st_.step();
      iteration.vars.clear();
      assign(loop.target.items[0], key, &iteration);
      assign(loop.target.items[1], value, &iteration);
      if (loop_obj) {
        loop_obj->index0 = i;
        iteration.set(st_.tmpl.sym_loop, loop_value);
      }
      if (exec(loop.body, &iteration) == Flow::Break) break;
    }
    if (entries.empty()) run_else(loop, f);
    return true;
  }

  // A loop's `else` body, run when the loop ran no iteration; it has its own scope.
  void run_else(const ForStmt& loop, Frame* f) {
    if (loop.otherwise.empty()) return;
    Frame inner;
    inner.parent = f;
    exec(loop.otherwise, &inner);
  }

  // The `loop` object of one run of `loop` in scope `f`, owned by `holder`. `items` may be
  // empty when the body reads only plain attributes (ForStmt::loop_attrs_only).
  static LoopObject* new_loop_object(const ForStmt& loop, Frame* f, std::span<const Value> items,
                                     std::size_t iterations, std::size_t depth0, Value& holder) {
    auto* obj = new LoopObject;
    holder = Value::adopt(obj);
    obj->items = items;
    obj->iterations = iterations;
    obj->depth0 = depth0;
    obj->stmt = &loop;
    obj->frame = f;
    return obj;
  }

  // `[::-1]`
  static bool is_reverse_slice(const Expr& index) {
    if (index.kind != ExprKind::Slice) return false;
    const auto& sl = static_cast<const SliceExpr&>(index);
    if (sl.start || sl.stop || !sl.step || sl.step->kind != ExprKind::Const) return false;
    const Value& step = static_cast<const ConstExpr&>(*sl.step).value;
    return step.is_int() && step.as_int() == -1;
  }

  Flow exec_for(const ForStmt& loop, Frame* f) {
    if (loop.dict_items_source)
      if (run_dict_items(loop, *loop.dict_items_source, f)) return Flow::Normal;
    // `for x in seq[a:b]` over a list: iterate the window of the original list
    // instead of copying the slice (templates do this inside loops).
    if (loop.iter->kind == ExprKind::Getitem && !loop.recursive &&
        is_pure_read(*static_cast<const GetitemExpr&>(*loop.iter).object)) {
      const auto& g = static_cast<const GetitemExpr&>(*loop.iter);
      if (is_reverse_slice(*g.index)) {  // `for m in messages[::-1]`: the items, last first
        Value holder;
        const Value& obj = ref(*g.object, f, holder);
        if (obj.is_sequence()) {
          st_.step();  // the subscript
          Value keep = obj;
          auto all = keep.as_list();
          SmallVector<Value, 16> reversed;
          reversed.reserve(all.size());
          for (std::size_t i = all.size(); i-- > 0;) reversed.push_back(all[i]);
          run_items(loop, f, reversed, 0);
          return Flow::Normal;
        }
      }
      if (g.index->kind == ExprKind::Slice && !static_cast<const SliceExpr&>(*g.index).step) {
        const auto& sl = static_cast<const SliceExpr&>(*g.index);
        Value holder;
        const Value& obj = ref(*g.object, f, holder);
        if (obj.is_sequence()) {
          auto start = slice_bound(sl.start.get(), f);
          auto stop = slice_bound(sl.stop.get(), f);
          auto all = obj.as_list();
          auto clamp = [&](std::optional<std::int64_t> b, std::int64_t dflt) {
            std::int64_t n = static_cast<std::int64_t>(all.size());
            std::int64_t v = b ? *b : dflt;
            if (v < 0) v += n;
            return static_cast<std::size_t>(std::clamp<std::int64_t>(v, 0, n));
          };
          std::size_t a = clamp(start, 0);
          std::size_t b = clamp(stop, static_cast<std::int64_t>(all.size()));
          Value keep = obj;  // the window must outlive the loop
          run_items(loop, f, b > a ? all.subspan(a, b - a) : std::span<const Value>(), 0);
          return Flow::Normal;
        }
      }
    }
    Value holder;
    const Value& evaluated = ref(*loop.iter, f, holder);
    if (evaluated.is_sequence()) {   // `for m in messages`: its items, as iterate() gives them
      const Value keep = evaluated;  // the body may rebind what the expression read
      run_items(loop, f, keep.as_list(), 0);
      return Flow::Normal;
    }
    const Value iterable = evaluated;
    run_loop(loop, f, iterable, 0);
    return Flow::Normal;
  }

  // Shared by plain loops and recursive loop(...) calls.
  void run_loop(const ForStmt& loop, Frame* f, const Value& iterable, std::size_t depth0) {
    if (!loop.filter && !loop.uses_loop && iterable.is_object()) {
      if (auto* range = dynamic_cast<const RangeObject*>(iterable.as_object())) {
        // range() without `loop`: no list is built.
        Frame iteration;
        iteration.parent = f;
        for (std::size_t i = 0; i < range->count; ++i) {
          st_.step();
          iteration.vars.clear();
          assign(loop.target, Value(static_cast<long long>(range->at(i))), &iteration);
          if (exec(loop.body, &iteration) == Flow::Break) break;
        }
        if (range->count == 0) run_else(loop, f);
        return;
      }
    }
    const Value seq = at(*loop.iter, [&] { return check(iterate(iterable)); });
    run_items(loop, f, seq.as_list(), depth0);
  }

  // `for x in items if test` without `loop`: as Jinja2's generator runs it, the test of an
  // item runs right before its body, after the body of the item before (a body that
  // changes what the test reads, or a break before an item whose test would fail, is seen
  // as in Python). The test has its own scope, as Jinja2's test frame: what the body sets
  // is not visible to it. No list of the kept items is built.
  void run_filtered(const ForStmt& loop, Frame* f, std::span<const Value> items) {
    Frame test, iteration;
    test.parent = f;
    iteration.parent = f;
    bool ran = false;
    for (const auto& item : items) {
      st_.step();  // the test
      test.vars.clear();
      assign(loop.target, item, &test);
      if (!cond(*loop.filter, &test)) continue;
      ran = true;
      st_.step();  // the iteration
      iteration.vars.clear();
      assign(loop.target, item, &iteration);
      if (exec(loop.body, &iteration) == Flow::Break) break;
    }
    if (!ran) run_else(loop, f);
  }

  void run_items(const ForStmt& loop, Frame* f, std::span<const Value> items, std::size_t depth0) {
    Value filtered_holder;
    Frame iteration;
    iteration.parent = f;
    if (loop.filter && !loop.uses_loop) return run_filtered(loop, f, items);
    if (loop.filter) {
      // With `loop`, the items that pass are collected first (loop.length and loop.last
      // need them). Jinja2's LoopContext reads them lazily and peeks ahead when asked,
      // which differs only when the filter sees state that the body changes.
      std::vector<Value> kept;
      for (const auto& item : items) {
        st_.step();
        iteration.vars.clear();
        assign(loop.target, item, &iteration);
        if (cond(*loop.filter, &iteration)) kept.push_back(item);
      }
      filtered_holder = Value::list(std::move(kept));
      items = filtered_holder.as_list();
    }
    Value loop_value;
    LoopObject* loop_obj = nullptr;
    SymbolId loop_symbol = 0;
    if (loop.uses_loop) {
      loop_obj = new_loop_object(loop, f, items, items.size(), depth0, loop_value);
      loop_symbol = st_.tmpl.sym_loop;
    }
    struct AliveReset {
      LoopObject* obj;
      ~AliveReset() {
        if (obj) obj->alive = false;
      }
    } alive_reset{loop_obj};
    const bool simple_target =
        loop.target.kind == Target::Kind::Name && (!loop_obj || loop.target.symbol != loop_symbol);
    const std::size_t fresh_size = loop_obj ? 2 : 1;
    for (std::size_t i = 0; i < items.size(); ++i) {
      st_.step();
      // Each iteration starts from a fresh scope: the target (and `loop`). When the
      // previous iteration left exactly those, the target is overwritten in place.
      if (simple_target && iteration.vars.size() == fresh_size && i > 0 &&
          (!loop_obj || iteration.vars[1].second.same(loop_value))) {
        iteration.vars[0].second = items[i];
        if (loop_obj) loop_obj->index0 = i;
      } else {
        iteration.vars.clear();
        if (simple_target) {
          iteration.vars.emplace_back(loop.target.symbol, items[i]);
        } else {
          assign(loop.target, items[i], &iteration);
        }
        if (loop_obj) {
          loop_obj->index0 = i;
          iteration.set(loop_symbol, loop_value);
        }
      }
      Flow flow = exec(loop.body, &iteration);
      if (flow == Flow::Break) break;
    }
    if (items.empty()) run_else(loop, f);
  }

 private:
  RenderState& st_;
};

}  // namespace

// ------------------------------------------------------------------ macros

Value eval_expression(RenderState& state, const Expr& expr, Frame* frame) {
  Evaluator ev(state);
  return ev.eval(expr, frame);
}

Value render_macro(RenderState& state, const MacroDef& def, Frame& frame) {
  Evaluator ev(state);
  state.out.begin_capture();
  try {
    ev.exec(def.body, &frame);
  } catch (...) {
    state.out.drop_capture();
    throw;
  }
  return state.out.end_capture_value();
}

void render_macro_in_place(RenderState& state, const MacroDef& def, Frame& frame) {
  Evaluator ev(state);
  ev.exec(def.body, &frame);
}

std::string render_recursive_loop(RenderState& state, const ForStmt& stmt, Frame* frame,
                                  const Value& iterable, std::size_t depth0) {
  Evaluator ev(state);
  state.out.begin_capture();
  try {
    ev.run_loop(stmt, frame, iterable, depth0);
  } catch (...) {
    state.out.drop_capture();
    throw;
  }
  return state.out.end_capture();
}

// A larger top-level buffer is freed after its render instead of being kept for the next.
constexpr std::size_t kKeptOutputBytes = 4u << 20;

// Exposed to filters that call back into expressions (none today) and to the
// template entry point.
Result<RenderResult> render_template(const CompiledTemplate& tmpl, const Value& context,
                                     const RenderOptions& options) {
  // First, so that every value the render builds is gone before the scope ends.
  detail::RenderScope scope;
  RenderState state(tmpl, context, options);
  state.track_generation = tmpl.uses_generation && tmpl.parsed.uses_generation;
  state.stack_base = static_cast<const char*>(__builtin_frame_address(0));
  // The top-level buffer is kept per thread between renders: the next render starts with
  // room (no allocation, no growth), and the text is copied out into the result once. A
  // render nested in another on the same thread (from an Object's call) uses its own.
  static thread_local OutputBuffer kept_main;
  static thread_local bool kept_main_in_use = false;
  struct KeepMain {
    bool owner;
    ~KeepMain() {
      if (!owner) return;
      kept_main_in_use = false;
      if (kept_main.capacity() > kKeptOutputBytes) kept_main = OutputBuffer();
    }
  } keep_main{!kept_main_in_use};
  if (keep_main.owner) {
    kept_main_in_use = true;
    kept_main.clear();
    state.out.use_main(&kept_main);
  }
  state.out.main().reserve(
      std::min(tmpl.output_hint.load(std::memory_order_relaxed), options.limits.max_output_bytes));
  RenderResult result;
  result.uses_generation = tmpl.uses_generation;
  try {
    Evaluator ev(state);
    ev.exec(tmpl.parsed.body, &state.root);
  } catch (RenderError& err) {
    return std::move(err.error);
  } catch (NestingError& err) {  // repr/str of containers nested too deeply
    return std::move(err.error);
  } catch (const std::bad_alloc&) {
    return Error{"MemoryError", "out of memory while rendering", 0, 0, {}};
  }
  tmpl.output_hint.store(state.out.main().size(), std::memory_order_relaxed);
  result.output = std::string(state.out.main().view());
  if (result.uses_generation) {
    // Code point spans → byte spans of the output (clamped: the tracker's quirks can
    // produce spans that do not line up with the text).
    // A cursor walks the text forward from each span's begin, so no table per code point.
    std::string_view text(result.output);
    std::size_t cursor_points = 0, cursor_byte = 0;
    auto byte_of = [&](std::size_t points) {  // from the cursor forwards
      while (cursor_points < points && cursor_byte < text.size()) {
        if (points - cursor_points >= 8 && cursor_byte + 8 <= text.size()) {
          std::uint64_t w;  // eight ASCII bytes are eight code points
          std::memcpy(&w, text.data() + cursor_byte, 8);
          if (!(w & 0x8080808080808080ull)) {
            cursor_byte += 8;
            cursor_points += 8;
            continue;
          }
        }
        ++cursor_byte;
        while (cursor_byte < text.size() &&
               (static_cast<unsigned char>(text[cursor_byte]) & 0xC0) == 0x80)
          ++cursor_byte;
        ++cursor_points;
      }
      return cursor_byte;  // clamped to the end of the text
    };
    result.generation.reserve(state.generation.size());
    for (const auto& recorded : state.generation) {
      GenerationSpan span;
      span.begin = recorded.begin;
      span.end = recorded.end;
      // The begin was counted up to a known byte of the (append-only) top-level output;
      // an unknown end is found by walking forwards from there.
      span.begin_byte = recorded.begin_byte;
      cursor_points = recorded.begin;
      cursor_byte = recorded.begin_byte;
      span.end_byte = recorded.end_byte != RenderState::kUnknownByte ? recorded.end_byte
                                                                     : byte_of(recorded.end);
      result.generation.push_back(span);
    }
  }
  return result;
}

}  // namespace chatwire::jinja
