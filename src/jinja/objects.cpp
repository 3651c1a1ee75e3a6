// Engine objects: namespace(), loop, macros and caller, cycler, joiner, builtins.
#include "jinja/objects.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "jinja/compiled.hpp"
#include "jinja/state.hpp"

namespace chatwire::jinja {

namespace {
constexpr int kMacroCallSteps = 5;

RenderState& render_state(CallContext& context) {
  return static_cast<RenderState&>(context);
}

void recursion_enter(RenderState& state) {
  if (++state.depth > state.lim.max_recursion) {
    --state.depth;
    raise(limit_error("max_recursion", state.lim.max_recursion));
  }
}
}  // namespace

// ------------------------------------------------------------------ builtins

Result<Value> BuiltinFunction::call(const CallArgs& args, CallContext& context) const {
  return fn_(render_state(context), args);
}

Result<Value> BoundObjectMethod::call(const CallArgs& args, CallContext& context) const {
  return fn_(self_, args, render_state(context));
}

void BoundObjectMethod::repr(std::string& out) const {
  out += "<bound method " + name_ + ">";
}

// ------------------------------------------------------------------ namespace

Result<Value> NamespaceObject::get_attr(std::string_view name) const {
  if (const Value* v = find(name)) return *v;
  return Value::undefined_attribute(name, Value::adopt([this] {
                                      // The Undefined message names the object ("'Namespace' object
                                      // has no attribute").
                                      this->add_ref();
                                      return const_cast<NamespaceObject*>(this);
                                    }()));
}

void NamespaceObject::set_attr(std::string_view name, Value value) {
  for (Attr& a : attrs) {
    if (a.size == name.size() && detail::same_bytes(this->name(a), name)) {
      a.value = std::move(value);
      return;
    }
  }
  if (name.size() > std::numeric_limits<std::uint32_t>::max() - names_size_)
    raise(limit_error("max_string_bytes", std::numeric_limits<std::uint32_t>::max()));
  const auto size = static_cast<std::uint32_t>(name.size());
  if (names_capacity_ - names_size_ < size) {
    std::size_t wanted =
        std::max<std::size_t>(std::size_t{names_size_} + size, 2 * std::size_t{names_capacity_});
    const auto capacity = static_cast<std::uint32_t>(
        std::min<std::size_t>(wanted, std::numeric_limits<std::uint32_t>::max()));
    char* fresh = new char[capacity];
    std::memcpy(fresh, names_, names_size_);
    if (names_ != names_inline_) delete[] names_;
    names_ = fresh;
    names_capacity_ = capacity;
  }
  if (size != 0) std::memcpy(names_ + names_size_, name.data(), size);
  attrs.emplace_back(Attr{std::move(value), names_size_, size});
  names_size_ += size;
}

void NamespaceObject::repr(std::string& out) const {
  out += "<Namespace {";
  bool first = true;
  for (const Attr& a : attrs) {
    if (!first) out += ", ";
    first = false;
    append_repr(out, Value(name(a)));
    out += ": ";
    append_repr(out, a.value);
  }
  out += "}>";
}

// ------------------------------------------------------------------ loop

namespace {
Result<Value> loop_cycle(const Value& self, const CallArgs& args, RenderState&) {
  auto* loop = static_cast<LoopObject*>(self.as_object());
  if (args.positional.empty()) return Error{"TypeError", "no items for cycling given", 0, 0, {}};
  return args.positional[loop->index0 % args.positional.size()];
}

Result<Value> loop_changed(const Value& self, const CallArgs& args, RenderState&) {
  auto* loop = static_cast<LoopObject*>(self.as_object());
  Value current = Value::tuple(std::vector<Value>(args.positional.begin(), args.positional.end()));
  if (loop->has_last_changed && equals(loop->last_changed, current)) return Value(false);
  loop->last_changed = current;
  loop->has_last_changed = true;
  return Value(true);
}
}  // namespace

LoopAttr loop_attr_of(std::string_view name) {
  static constexpr std::pair<std::string_view, LoopAttr> kNames[] = {
      {"index", LoopAttr::Index},       {"index0", LoopAttr::Index0},
      {"revindex", LoopAttr::Revindex}, {"revindex0", LoopAttr::Revindex0},
      {"first", LoopAttr::First},       {"last", LoopAttr::Last},
      {"length", LoopAttr::Length},     {"depth", LoopAttr::Depth},
      {"depth0", LoopAttr::Depth0}};
  for (const auto& [text, which] : kNames)
    if (text == name) return which;
  return LoopAttr::None;
}

Result<Value> LoopObject::get_attr(std::string_view name) const {
  const std::size_t n = items.size();  // previtem / nextitem: bounded by the items there are
  if (LoopAttr which = loop_attr_of(name); which != LoopAttr::None) return attr(which);
  auto self = [this] {
    this->add_ref();
    return Value::adopt(const_cast<LoopObject*>(this));
  };
  if (name == "previtem") {
    if (index0 == 0 || index0 > n)
      return Value::undefined(Value("previtem"), {}, "there is no previous item");
    return items[index0 - 1];
  }
  if (name == "nextitem") {
    if (index0 + 1 >= n) return Value::undefined(Value("nextitem"), {}, "there is no next item");
    return items[index0 + 1];
  }
  if (name == "cycle") return Value::make_object<BoundObjectMethod>(self(), "cycle", loop_cycle);
  if (name == "changed")
    return Value::make_object<BoundObjectMethod>(self(), "changed", loop_changed);
  return Value::undefined_attribute(name, self());
}

void LoopObject::repr(std::string& out) const {
  out += "<LoopContext " + std::to_string(index0 + 1) + "/" + std::to_string(iterations) + ">";
}

Result<Value> LoopObject::call(const CallArgs& args, CallContext& context) const {
  RenderState& state = render_state(context);
  if (!stmt || !stmt->recursive)
    return Error{"TypeError",
                 "The loop must have the 'recursive' marker to be called recursively.",
                 0,
                 0,
                 {}};
  if (!alive)  // kept past its loop (jinja2 would render it again; not supported here)
    return Error{
        "TypeError", "the loop has ended and cannot be called recursively any more", 0, 0, {}};
  if (args.positional.size() != 1 || !args.keyword.empty())
    return Error{"TypeError", "loop() takes exactly one argument", 0, 0, {}};
  recursion_enter(state);
  std::string text;
  try {
    text = render_recursive_loop(state, *stmt, frame, args.positional[0], depth0 + 1);
  } catch (...) {
    --state.depth;
    throw;
  }
  --state.depth;
  if (state.autoescape) return Value::markup(std::move(text));  // Markup(concat(...))
  return Value(std::move(text));
}

// ------------------------------------------------------------------ macros

Result<Value> MacroObject::get_attr(std::string_view name) const {
  if (name == "name") return is_caller ? Value::none() : Value(def->name);
  if (name == "arguments") {
    std::vector<Value> names;
    for (const auto& p : def->params) names.emplace_back(p.name);
    return Value::tuple(std::move(names));
  }
  if (name == "catch_kwargs") return Value(def->uses_kwargs);
  if (name == "catch_varargs") return Value(def->uses_varargs);
  if (name == "caller") return Value(def->uses_caller);
  return Value::undefined(Value(name), "Macro object", {});
}

namespace {
// Enters the macro (recursion depth, fuel), binds its scope with `bind`, and renders the
// body in place or as the call's string value.
// The body runs with the autoescaping of the place the macro was defined in (Jinja2
// decides it when compiling the body).
template <typename Bind>
Value run_macro(RenderState& state, const MacroDef& d, bool autoescape, Frame& frame, bool in_place,
                Bind bind) {
  recursion_enter(state);
  struct DepthRestore {
    RenderState& s;
    bool autoescape;
    ~DepthRestore() {
      --s.depth;
      s.autoescape = autoescape;
    }
  } restore{state, state.autoescape};
  // Macro.__call__ takes the caller's eval context: the result is a Markup when the call
  // site autoescapes, whatever the body did.
  const bool markup_result = state.autoescape;
  state.autoescape = autoescape;
  // A macro call allocates a scope and an output buffer: it costs more fuel than a
  // plain statement. Charged at once: running out at any of the steps or at the last is
  // the same error.
  state.steps(kMacroCallSteps);
  bind();
  if (in_place) {
    render_macro_in_place(state, d, frame);
    return Value();
  }
  if (markup_result) return Value::as_markup(render_macro(state, d, frame));
  return render_macro(state, d, frame);
}
}  // namespace

Result<Value> MacroObject::call(const CallArgs& args, CallContext& context) const {
  RenderState& state = render_state(context);
  // Taken before anything else runs: default arguments may call other macros.
  const bool in_place = std::exchange(state.macro_print_in_place, false);
  const MacroDef& d = *def;
  const std::string& name = d.name;
  Frame frame;
  frame.parent = closure;
  std::size_t count = d.params.size();
  // The usual call, every parameter by position and no caller, varargs or kwargs: no
  // argument matching.
  if (args.keyword.empty() && args.positional.size() == count && !d.uses_caller && !d.uses_kwargs &&
      !d.uses_varargs) {
    return run_macro(state, d, autoescape, frame, in_place, [&] {
      frame.vars.reserve(count);
      for (std::size_t i = 0; i < count; ++i) frame.set(d.params[i].symbol, args.positional[i]);
    });
  }
  // Small fixed buffers: most macros take a handful of arguments.
  constexpr std::size_t kInline = 16;
  const Value* bound_inline[kInline];
  bool used_inline[kInline];
  std::vector<const Value*> bound_heap;
  std::vector<char> used_heap;
  const Value** bound = bound_inline;
  bool* used_kw = used_inline;
  if (count > kInline) {
    bound_heap.assign(count, nullptr);
    bound = bound_heap.data();
  }
  if (args.keyword.size() > kInline) {
    used_heap.assign(args.keyword.size(), 0);
    used_kw = reinterpret_cast<bool*>(used_heap.data());
  }
  std::size_t positional = std::min(count, args.positional.size());
  for (std::size_t i = 0; i < positional; ++i) bound[i] = &args.positional[i];
  for (std::size_t i = positional; i < count; ++i) bound[i] = nullptr;
  for (std::size_t i = 0; i < args.keyword.size(); ++i) used_kw[i] = false;
  // Exactly the variables bound below: a spare slot would move a 4-parameter macro's
  // scope to the heap.
  frame.vars.reserve(count + (d.uses_caller ? 1 : 0) + (d.uses_kwargs ? 1 : 0) +
                     (d.uses_varargs ? 1 : 0));
  bool found_caller = false;
  if (positional != count) {
    for (std::size_t i = positional; i < count; ++i) {
      for (std::size_t k = 0; k < args.keyword.size(); ++k) {
        if (!used_kw[k] && args.keyword[k].name == d.params[i].name) {
          bound[i] = &args.keyword[k].value;
          used_kw[k] = true;
          break;
        }
      }
      if (d.params[i].name == "caller") found_caller = true;
    }
  }
  Value caller;
  bool have_caller = false;
  if (d.uses_caller && !found_caller) {
    for (std::size_t k = 0; k < args.keyword.size(); ++k) {
      if (!used_kw[k] && args.keyword[k].name == "caller") {
        caller = args.keyword[k].value;
        used_kw[k] = true;
        have_caller = true;
        break;
      }
    }
    if (!have_caller || caller.is_none())
      caller = Value::undefined(Value("caller"), {}, "No caller defined");
  }
  std::vector<std::pair<Value, Value>> extra_kwargs;
  for (std::size_t k = 0; k < args.keyword.size(); ++k) {
    if (used_kw[k]) continue;
    if (!d.uses_kwargs) {
      for (std::size_t j = k; j < args.keyword.size(); ++j)
        if (!used_kw[j] && args.keyword[j].name == "caller")
          return Error{"TypeError",
                       "macro '" + name +
                           "' was invoked with two values for the special caller argument. This "
                           "is most likely a bug.",
                       0,
                       0,
                       {}};
      return Error{"TypeError",
                   "macro '" + name + "' takes no keyword argument '" +
                       std::string(args.keyword[k].name) + "'",
                   0,
                   0,
                   {}};
    }
    extra_kwargs.emplace_back(Value(args.keyword[k].name), args.keyword[k].value);
  }
  if (!d.uses_varargs && args.positional.size() > count)
    return Error{
        "TypeError",
        "macro '" + name + "' takes not more than " + std::to_string(count) + " argument(s)",
        0,
        0,
        {}};
  return run_macro(state, d, autoescape, frame, in_place, [&] {
    // Bind parameters in order; defaults see the parameters before them.
    for (std::size_t i = 0; i < count; ++i) {
      const MacroParam& p = d.params[i];
      if (bound[i]) {
        frame.set(p.symbol, *bound[i]);
      } else if (p.default_value) {
        frame.set(p.symbol, eval_expression(state, *p.default_value, &frame));
      } else {
        frame.set(p.symbol, Value::undefined(Value(p.name), {},
                                             "parameter '" + p.name + "' was not provided"));
      }
    }
    const CompiledTemplate& tmpl = state.tmpl;
    if (d.uses_caller && !found_caller) frame.set(tmpl.sym_caller, caller);
    if (d.uses_kwargs) frame.set(tmpl.sym_kwargs, Value::dict_unchecked(std::move(extra_kwargs)));
    if (d.uses_varargs) {
      std::vector<Value> rest;
      for (std::size_t i = count; i < args.positional.size(); ++i)
        rest.push_back(args.positional[i]);
      frame.set(tmpl.sym_varargs, Value::tuple(std::move(rest)));
    }
  });
}

// ------------------------------------------------------------------ cycler / joiner

namespace {
Result<Value> cycler_next(const Value& self, const CallArgs&, RenderState&) {
  auto* c = static_cast<CyclerObject*>(self.as_object());
  if (c->items.empty()) return Value();
  Value v = c->items[c->pos];
  c->pos = (c->pos + 1) % c->items.size();
  return v;
}
Result<Value> cycler_reset(const Value& self, const CallArgs&, RenderState&) {
  static_cast<CyclerObject*>(self.as_object())->pos = 0;
  return Value::none();
}
}  // namespace

Result<Value> CyclerObject::get_attr(std::string_view name) const {
  auto self = [this] {
    this->add_ref();
    return Value::adopt(const_cast<CyclerObject*>(this));
  };
  if (name == "current") return items.empty() ? Value() : items[pos];
  if (name == "next") return Value::make_object<BoundObjectMethod>(self(), "next", cycler_next);
  if (name == "reset") return Value::make_object<BoundObjectMethod>(self(), "reset", cycler_reset);
  return Value::undefined_attribute(name, self());
}

Result<Value> JoinerObject::call(const CallArgs&, CallContext&) const {
  auto* self = const_cast<JoinerObject*>(this);
  if (!self->used) {
    self->used = true;
    return Value("");
  }
  return sep;
}

}  // namespace chatwire::jinja
