// The resolve pass: what the parsed tree means, independent of any optimisation. Names are
// interned to symbols (scopes compare integers), attribute names get their hash, the Python
// method they denote and their LoopAttr, filter and test names are bound to their table rows,
// scopes learn which implicit names they use (`loop`, `caller`, `varargs`, `kwargs`), and the
// `~` chains Jinja2's optimizer folds are marked (they make a plain str).
#include "jinja/resolve.hpp"

#include <string>
#include <unordered_map>

#include "jinja/fold.hpp"
#include "jinja/registry.hpp"

namespace chatwire::jinja {

namespace {

// Finds loads of `caller`, `varargs`, `kwargs`, `loop` in a body (Jinja2's
// find_undeclared, which also looks into nested macros and call blocks).
struct NameFinder {
  bool caller = false, varargs = false, kwargs = false, loop = false;
  bool loop_value = false;  // `loop` used other than as `loop.<LoopAttr>`
  void name(const std::string& n) {
    if (n == "caller") caller = true;
    if (n == "varargs") varargs = true;
    if (n == "kwargs") kwargs = true;
    if (n == "loop") loop = loop_value = true;
  }
  void args(const CallArguments& a) {
    for (const auto& e : a.args) expr(e.get());
    for (const auto& k : a.kwargs) expr(k.value.get());
    expr(a.dyn_args.get());
    expr(a.dyn_kwargs.get());
  }
  void expr(const Expr* e) {
    if (!e) return;
    switch (e->kind) {
      case ExprKind::Const:
        return;
      case ExprKind::Name:
        name(static_cast<const NameExpr*>(e)->name);
        return;
      case ExprKind::List:
      case ExprKind::Tuple:
        for (const auto& item : static_cast<const SequenceExpr*>(e)->items) expr(item.get());
        return;
      case ExprKind::Dict:
        for (const auto& [k, v] : static_cast<const DictExpr*>(e)->items) {
          expr(k.get());
          expr(v.get());
        }
        return;
      case ExprKind::Getattr: {
        const auto* g = static_cast<const GetattrExpr*>(e);
        if (g->loop_attr != LoopAttr::None && g->object->kind == ExprKind::Name &&
            static_cast<const NameExpr&>(*g->object).name == "loop") {
          loop = true;  // a plain attribute: loop_value stays as it is
          return;
        }
        expr(g->object.get());
        return;
      }
      case ExprKind::Getitem:
        expr(static_cast<const GetitemExpr*>(e)->object.get());
        expr(static_cast<const GetitemExpr*>(e)->index.get());
        return;
      case ExprKind::Slice: {
        auto* s = static_cast<const SliceExpr*>(e);
        expr(s->start.get());
        expr(s->stop.get());
        expr(s->step.get());
        return;
      }
      case ExprKind::Call:
        expr(static_cast<const CallExpr*>(e)->callee.get());
        args(static_cast<const CallExpr*>(e)->arguments);
        return;
      case ExprKind::Filter:
        expr(static_cast<const FilterExpr*>(e)->operand.get());
        args(static_cast<const FilterExpr*>(e)->arguments);
        return;
      case ExprKind::Test:
        expr(static_cast<const TestExpr*>(e)->operand.get());
        args(static_cast<const TestExpr*>(e)->arguments);
        return;
      case ExprKind::Not:
      case ExprKind::Neg:
      case ExprKind::Pos:
        expr(static_cast<const UnaryExpr*>(e)->operand.get());
        return;
      case ExprKind::And:
      case ExprKind::Or:
      case ExprKind::Binary:
      case ExprKind::Concat:
        expr(static_cast<const BinaryExpr*>(e)->left.get());
        expr(static_cast<const BinaryExpr*>(e)->right.get());
        return;
      case ExprKind::Compare:
        expr(static_cast<const CompareExpr*>(e)->first.get());
        for (const auto& [op, x] : static_cast<const CompareExpr*>(e)->rest) expr(x.get());
        return;
      case ExprKind::CondExpr: {
        auto* c = static_cast<const CondExpr*>(e);
        expr(c->test.get());
        expr(c->then.get());
        expr(c->otherwise.get());
        return;
      }
    }
  }
  void body(const Body& b) {
    for (const auto& s : b) stmt(s.get());
  }
  void stmt(const Stmt* s) {
    switch (s->kind) {
      case StmtKind::Output:
      case StmtKind::Break:
      case StmtKind::Continue:
        return;
      case StmtKind::Print:
        expr(static_cast<const PrintStmt*>(s)->expr.get());
        return;
      case StmtKind::If:
        for (const auto& [c, b] : static_cast<const IfStmt*>(s)->branches) {
          expr(c.get());
          body(b);
        }
        body(static_cast<const IfStmt*>(s)->otherwise);
        return;
      case StmtKind::For: {
        auto* f = static_cast<const ForStmt*>(s);
        expr(f->iter.get());
        // `loop` inside a nested for refers to the inner loop; other names count.
        bool outer_loop = loop, outer_loop_value = loop_value;
        expr(f->filter.get());
        body(f->body);
        loop = outer_loop;
        loop_value = outer_loop_value;
        body(f->otherwise);
        return;
      }
      case StmtKind::Set:
        expr(static_cast<const SetStmt*>(s)->value.get());
        return;
      case StmtKind::SetBlock:
        expr(static_cast<const SetBlockStmt*>(s)->filter.get());
        body(static_cast<const SetBlockStmt*>(s)->body);
        return;
      case StmtKind::Macro: {
        const auto& def = *static_cast<const MacroStmt*>(s)->def;
        for (const auto& p : def.params) expr(p.default_value.get());
        body(def.body);
        return;
      }
      case StmtKind::CallBlock: {
        auto* c = static_cast<const CallBlockStmt*>(s);
        expr(c->call.get());
        for (const auto& p : c->caller->params) expr(p.default_value.get());
        body(c->caller->body);
        return;
      }
      case StmtKind::FilterBlock:
        expr(static_cast<const FilterBlockStmt*>(s)->filter.get());
        body(static_cast<const FilterBlockStmt*>(s)->body);
        return;
      case StmtKind::With:
        for (const auto& v : static_cast<const WithStmt*>(s)->values) expr(v.get());
        body(static_cast<const WithStmt*>(s)->body);
        return;
      case StmtKind::Generation:
      case StmtKind::Block:
      case StmtKind::Autoescape:
        expr(static_cast<const BodyStmt*>(s)->expr.get());
        body(static_cast<const BodyStmt*>(s)->body);
        return;
      case StmtKind::Unsupported:
        expr(static_cast<const UnsupportedStmt*>(s)->template_name.get());
        return;
    }
  }
};

// Binds filter/test names to their table entries. Mirrors the compiler's "soft frame" rule:
// inside `if` statements and conditional expressions an unknown filter/test only fails when
// it is evaluated.
class Resolver {
 public:
  explicit Resolver(std::vector<std::string>& symbol_names) : symbol_names_(symbol_names) {}

  std::optional<Error> error;

  void body(Body& b, bool soft) {
    for (auto& s : b) stmt(s.get(), soft);
  }

 private:
  std::vector<std::string>& symbol_names_;
  std::unordered_map<std::string, SymbolId> symbols_;

  SymbolId intern(const std::string& name) {
    auto [it, inserted] = symbols_.try_emplace(name, static_cast<SymbolId>(symbol_names_.size()));
    if (inserted) symbol_names_.push_back(name);
    return it->second;
  }

  void fail(std::string type, std::string message, std::uint32_t line, std::uint32_t column) {
    if (!error) error = Error{std::move(type), std::move(message), line, column, {}};
  }

  void target(Target& t) {
    if (t.kind != Target::Kind::Tuple) t.symbol = intern(t.name);
    for (auto& item : t.items) target(item);
  }

  void args(CallArguments& a, bool soft) {
    for (auto& e : a.args) expr(e.get(), soft);
    for (auto& k : a.kwargs) expr(k.value.get(), soft);
    expr(a.dyn_args.get(), soft);
    expr(a.dyn_kwargs.get(), soft);
  }

  static void resolve_attribute(GetattrExpr& g) {
    const std::string& attr = g.attr;
    g.attr_value = Value(attr);
    g.attr_hash = hash_string(attr);
    g.dict_blocked = is_unsafe_mutator(Kind::Dict, attr) || attr[0] == '_';
    g.loop_attr = loop_attr_of(attr);
    g.str_method = find_method_fn(Kind::String, attr);
    g.list_method = find_method_fn(Kind::List, attr);
    g.tuple_method = find_method_fn(Kind::Tuple, attr);
    g.dict_method = find_method_fn(Kind::Dict, attr);
  }

  // BinaryExpr::folds_to_str on the node that ends a `~` chain: every operand of the chain
  // (the right operands down its left spine, and the leftmost one) is computed by Jinja2's
  // optimizer. The operands are resolved already (filters bound, inner chains marked).
  static void mark_folding_chain(BinaryExpr& end) {
    const Expr* cur = &end;
    while (cur->kind == ExprKind::Concat) {
      const auto& b = static_cast<const BinaryExpr&>(*cur);
      if (cur != &end && b.ends_chain) break;  // a parenthesized chain: one operand
      if (!computable_at_compile_time(*b.right)) return;
      cur = b.left.get();
    }
    end.folds_to_str = computable_at_compile_time(*cur);
  }

  void expr(Expr* e, bool soft) {
    if (!e) return;
    switch (e->kind) {
      case ExprKind::Const:
        return;
      case ExprKind::Name: {
        auto* n = static_cast<NameExpr*>(e);
        n->symbol = intern(n->name);
        return;
      }
      case ExprKind::List:
      case ExprKind::Tuple:
        for (auto& item : static_cast<SequenceExpr*>(e)->items) expr(item.get(), soft);
        return;
      case ExprKind::Dict:
        for (auto& [k, v] : static_cast<DictExpr*>(e)->items) {
          expr(k.get(), soft);
          expr(v.get(), soft);
        }
        return;
      case ExprKind::Getattr: {
        auto* g = static_cast<GetattrExpr*>(e);
        expr(g->object.get(), soft);
        resolve_attribute(*g);
        return;
      }
      case ExprKind::Getitem: {
        auto* g = static_cast<GetitemExpr*>(e);
        expr(g->object.get(), soft);
        expr(g->index.get(), soft);
        return;
      }
      case ExprKind::Slice: {
        auto* s = static_cast<SliceExpr*>(e);
        expr(s->start.get(), soft);
        expr(s->stop.get(), soft);
        expr(s->step.get(), soft);
        return;
      }
      case ExprKind::Call:
        expr(static_cast<CallExpr*>(e)->callee.get(), soft);
        args(static_cast<CallExpr*>(e)->arguments, soft);
        return;
      case ExprKind::Filter: {
        auto* f = static_cast<FilterExpr*>(e);
        f->filter = find_filter(f->name);
        if (!f->filter && !soft)
          fail("TemplateAssertionError", "No filter named '" + f->name + "'.", f->line, f->column);
        expr(f->operand.get(), soft);
        args(f->arguments, soft);
        return;
      }
      case ExprKind::Test: {
        auto* t = static_cast<TestExpr*>(e);
        t->test = find_test(t->name);
        if (!t->test && !soft)
          fail("TemplateAssertionError", "No test named '" + t->name + "'.", t->line, t->column);
        expr(t->operand.get(), soft);
        args(t->arguments, soft);
        return;
      }
      case ExprKind::Not:
      case ExprKind::Neg:
      case ExprKind::Pos:
        expr(static_cast<UnaryExpr*>(e)->operand.get(), soft);
        return;
      case ExprKind::And:
      case ExprKind::Or:
      case ExprKind::Binary:
      case ExprKind::Concat: {
        auto* b = static_cast<BinaryExpr*>(e);
        expr(b->left.get(), soft);
        expr(b->right.get(), soft);
        if (b->ends_chain) mark_folding_chain(*b);
        return;
      }
      case ExprKind::Compare:
        expr(static_cast<CompareExpr*>(e)->first.get(), soft);
        for (auto& [op, x] : static_cast<CompareExpr*>(e)->rest) expr(x.get(), soft);
        return;
      case ExprKind::CondExpr: {
        auto* c = static_cast<CondExpr*>(e);
        expr(c->test.get(), true);
        expr(c->then.get(), true);
        expr(c->otherwise.get(), true);
        return;
      }
    }
  }

  void macro(MacroDef& def) {
    for (auto& p : def.params) {
      p.symbol = intern(p.name);
      expr(p.default_value.get(), false);
    }
    body(def.body, false);
    NameFinder finder;
    finder.body(def.body);
    def.uses_caller = finder.caller;
    def.uses_varargs = finder.varargs;
    def.uses_kwargs = finder.kwargs;
  }

  // The first assignment target named `loop` in `b`, nested bodies included, in template
  // order (Jinja2's node.find_all over the loop).
  static const Target* loop_store(const Target& t) {
    if (t.kind == Target::Kind::Name) return t.name == "loop" ? &t : nullptr;
    for (const auto& item : t.items)
      if (const Target* found = loop_store(item)) return found;
    return nullptr;
  }
  static const Target* loop_store(const Body& b) {
    for (const auto& sp : b) {
      const Stmt& s = *sp;
      const Target* found = nullptr;
      if (s.kind == StmtKind::Set) found = loop_store(static_cast<const SetStmt&>(s).target);
      if (s.kind == StmtKind::SetBlock)
        found = loop_store(static_cast<const SetBlockStmt&>(s).target);
      if (s.kind == StmtKind::For) found = loop_store(static_cast<const ForStmt&>(s).target);
      for_each_body(s, [&](const Body& inner) {
        if (!found) found = loop_store(inner);
      });
      if (found) return found;
    }
    return nullptr;
  }

  void stmt(Stmt* s, bool soft) {
    switch (s->kind) {
      case StmtKind::Output:
      case StmtKind::Break:
      case StmtKind::Continue:
        return;
      case StmtKind::Print:
        expr(static_cast<PrintStmt*>(s)->expr.get(), soft);
        return;
      case StmtKind::If: {
        auto* i = static_cast<IfStmt*>(s);
        for (auto& [cond, b] : i->branches) {
          expr(cond.get(), true);
          body(b, true);
        }
        body(i->otherwise, true);
        return;
      }
      case StmtKind::For: {
        auto* f = static_cast<ForStmt*>(s);
        // Jinja2's code generator: the inline `if` first, then no store to `loop` anywhere
        // in the loop (`{% set loop = ... %}` in its body too), then the iterable.
        expr(f->filter.get(), false);
        const Target* store = loop_store(f->body);
        if (!store) store = loop_store(f->otherwise);
        if (store)
          fail("TemplateAssertionError", "Can't assign to special loop variable in for-loop target",
               store->line, store->column);
        expr(f->iter.get(), soft);
        target(f->target);
        body(f->body, false);
        body(f->otherwise, false);
        NameFinder finder;
        finder.body(f->body);
        finder.expr(f->filter.get());
        f->uses_loop = finder.loop || f->recursive;
        f->loop_attrs_only = f->uses_loop && !finder.loop_value && !f->recursive;
        return;
      }
      case StmtKind::Set:
        expr(static_cast<SetStmt*>(s)->value.get(), soft);
        target(static_cast<SetStmt*>(s)->target);
        return;
      case StmtKind::SetBlock:
        expr(static_cast<SetBlockStmt*>(s)->filter.get(), false);
        target(static_cast<SetBlockStmt*>(s)->target);
        body(static_cast<SetBlockStmt*>(s)->body, false);
        return;
      case StmtKind::Macro: {
        auto* m = static_cast<MacroStmt*>(s);
        m->symbol = intern(m->def->name);
        macro(*m->def);
        return;
      }
      case StmtKind::CallBlock: {
        auto* c = static_cast<CallBlockStmt*>(s);
        expr(c->call.get(), soft);
        macro(*c->caller);
        return;
      }
      case StmtKind::FilterBlock:
        expr(static_cast<FilterBlockStmt*>(s)->filter.get(), false);
        body(static_cast<FilterBlockStmt*>(s)->body, false);
        return;
      case StmtKind::With: {
        auto* w = static_cast<WithStmt*>(s);
        for (auto& v : w->values) expr(v.get(), soft);
        for (auto& t : w->targets) target(t);
        body(w->body, false);
        return;
      }
      case StmtKind::Generation:
      case StmtKind::Block:
      case StmtKind::Autoescape:
        expr(static_cast<BodyStmt*>(s)->expr.get(), soft);
        body(static_cast<BodyStmt*>(s)->body, false);
        return;
      case StmtKind::Unsupported:
        expr(static_cast<UnsupportedStmt*>(s)->template_name.get(), soft);
        return;
    }
  }
};

}  // namespace

std::optional<Error> resolve_template(ParsedTemplate& parsed) {
  Resolver resolver(parsed.symbols);
  resolver.body(parsed.body, false);
  return std::move(resolver.error);
}

}  // namespace chatwire::jinja
