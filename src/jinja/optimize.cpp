// The optimise pass: what makes a resolved tree fast, never what it means. Constant
// expressions are computed once, as Jinja2's optimizer computes them (fold.hpp), printed
// constants become template text, and nodes of the shapes the evaluator has fast paths for
// are marked (name_key, FilterExpr/TestExpr::special from the tables' fast_path columns,
// PrintStmt::sum, IfStmt::subject, ForStmt::dict_items_source). Each fast path falls back
// to the general rules at run time, so a tree rendered without this pass gives the same
// bytes and the same errors (CompileOptions::optimize; tests/jinja run every golden both
// ways).
#include "jinja/optimize.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "jinja/fold.hpp"
#include "jinja/registry.hpp"

namespace chatwire::jinja {

namespace {

class Optimizer {
 public:
  void body(Body& b) {
    for (auto& s : b) stmt(*s);
  }

 private:
  // Folds `e` when it is constant (its operands are folded first), then marks its shape.
  void expr(ExprPtr& e) {
    if (!e) return;
    children(*e);
    switch (e->kind) {
      case ExprKind::Binary:
      case ExprKind::Concat:
      case ExprKind::Neg:
      case ExprKind::Pos:
      case ExprKind::List:
      case ExprKind::Tuple:
      case ExprKind::Dict:
        if (auto value = constant_value(*e)) {
          auto c = std::make_unique<ConstExpr>();
          c->line = e->line;
          c->column = e->column;
          c->value = std::move(*value);
          e = std::move(c);
        }
        return;
      case ExprKind::Getattr: {
        auto& g = static_cast<GetattrExpr&>(*e);
        if (g.object->kind == ExprKind::Name && !g.dict_blocked && !g.dict_method) {
          g.direct = {static_cast<const NameExpr&>(*g.object).symbol, g.attr, g.attr_hash};
          g.name_key = &g.direct;
        }
        return;
      }
      case ExprKind::Getitem: {
        auto& g = static_cast<GetitemExpr&>(*e);
        if (g.object->kind == ExprKind::Name && g.index->kind == ExprKind::Const) {
          const Value& key = static_cast<const ConstExpr&>(*g.index).value;
          if (key.is_string()) {  // a dict key first, whatever the name (subscript rules)
            g.direct = {static_cast<const NameExpr&>(*g.object).symbol, key.as_string(),
                        key.string_hash()};
            g.name_key = &g.direct;
          }
        }
        return;
      }
      case ExprKind::Filter: {
        auto& f = static_cast<FilterExpr&>(*e);
        if (f.filter) f.special = f.filter->fast_path;
        return;
      }
      case ExprKind::Test: {
        auto& t = static_cast<TestExpr&>(*e);
        if (t.test) t.special = t.test->fast_path;
        return;
      }
      default:
        return;
    }
  }

  void args(CallArguments& a) {
    for (auto& e : a.args) expr(e);
    for (auto& k : a.kwargs) expr(k.value);
    expr(a.dyn_args);
    expr(a.dyn_kwargs);
  }

  void children(Expr& e) {
    switch (e.kind) {
      case ExprKind::Const:
      case ExprKind::Name:
        return;
      case ExprKind::List:
      case ExprKind::Tuple:
        for (auto& item : static_cast<SequenceExpr&>(e).items) expr(item);
        return;
      case ExprKind::Dict:
        for (auto& [k, v] : static_cast<DictExpr&>(e).items) {
          expr(k);
          expr(v);
        }
        return;
      case ExprKind::Getattr:
        expr(static_cast<GetattrExpr&>(e).object);
        return;
      case ExprKind::Getitem:
        expr(static_cast<GetitemExpr&>(e).object);
        expr(static_cast<GetitemExpr&>(e).index);
        return;
      case ExprKind::Slice: {
        auto& s = static_cast<SliceExpr&>(e);
        expr(s.start);
        expr(s.stop);
        expr(s.step);
        return;
      }
      case ExprKind::Call:
        expr(static_cast<CallExpr&>(e).callee);
        args(static_cast<CallExpr&>(e).arguments);
        return;
      case ExprKind::Filter:
        expr(static_cast<FilterExpr&>(e).operand);
        args(static_cast<FilterExpr&>(e).arguments);
        return;
      case ExprKind::Test:
        expr(static_cast<TestExpr&>(e).operand);
        args(static_cast<TestExpr&>(e).arguments);
        return;
      case ExprKind::Not:
      case ExprKind::Neg:
      case ExprKind::Pos:
        expr(static_cast<UnaryExpr&>(e).operand);
        return;
      case ExprKind::And:
      case ExprKind::Or:
      case ExprKind::Binary:
      case ExprKind::Concat:
        expr(static_cast<BinaryExpr&>(e).left);
        expr(static_cast<BinaryExpr&>(e).right);
        return;
      case ExprKind::Compare:
        expr(static_cast<CompareExpr&>(e).first);
        for (auto& [op, x] : static_cast<CompareExpr&>(e).rest) expr(x);
        return;
      case ExprKind::CondExpr: {
        auto& c = static_cast<CondExpr&>(e);
        expr(c.test);
        expr(c.then);
        expr(c.otherwise);
        return;
      }
    }
  }

  // PrintStmt::sum from the chain's operands.
  static void sum_operands(PrintStmt& p, const std::vector<const Expr*>& operands,
                           const std::vector<const Expr*>& pluses) {
    for (std::size_t i = 0; i < operands.size(); ++i) {
      const Expr* e = operands[i];
      SumOperand op;
      op.expr = e;
      op.plus = pluses[i];
      if (e->kind == ExprKind::Const && static_cast<const ConstExpr&>(*e).value.is_string()) {
        op.is_text = true;
        op.text = static_cast<const ConstExpr&>(*e).value.as_string();
        if (!p.sum.empty() && p.sum.back().is_text) {  // joined with the constant before
          p.joined_texts.push_back(std::string(p.sum.back().text) + std::string(op.text));
          p.sum.back().text = p.joined_texts.back();
          continue;
        }
      } else if (e->kind == ExprKind::Filter) {
        const auto& fe = static_cast<const FilterExpr&>(*e);
        op.is_trim = fe.special == FilterSpecial::Trim && fe.arguments.empty() && fe.operand;
      }
      p.sum.push_back(op);
    }
  }

  // IfStmt::subject: the shape of one branch test, and the name key it reads.
  static SubjectTest subject_test(const Expr& test, const NameKey*& key) {
    SubjectTest t;
    const Expr* compare = &test;
    if (test.kind == ExprKind::And) {
      const auto& b = static_cast<const BinaryExpr&>(test);
      compare = b.left.get();
      t.rest = b.right.get();
    }
    key = nullptr;
    if (compare->kind != ExprKind::Compare) return {};
    const auto& c = static_cast<const CompareExpr&>(*compare);
    if (c.rest.size() != 1 || !c.first->name_key) return {};
    const Expr& right = *c.rest[0].second;
    if (right.kind != ExprKind::Const) return {};
    const Value& constant = static_cast<const ConstExpr&>(right).value;
    switch (c.rest[0].first) {
      case CompareKind::Eq:
      case CompareKind::Ne:
        if (!constant.is_string()) return {};
        t.kind = c.rest[0].first == CompareKind::Eq ? SubjectTest::Kind::Eq : SubjectTest::Kind::Ne;
        break;
      case CompareKind::In:
      case CompareKind::NotIn:
        if (!constant.is_sequence()) return {};
        t.kind =
            c.rest[0].first == CompareKind::In ? SubjectTest::Kind::In : SubjectTest::Kind::NotIn;
        break;
      default:
        return {};
    }
    t.constant = &constant;
    key = c.first->name_key;
    return t;
  }
  static void find_subject(IfStmt& i) {
    std::vector<SubjectTest> tests;
    const NameKey* subject = nullptr;
    std::size_t shaped = 0;
    for (const auto& [cond, b] : i.branches) {
      const NameKey* key = nullptr;
      SubjectTest t = subject_test(*cond, key);
      if (key && subject && (key->symbol != subject->symbol || key->key != subject->key)) t = {};
      if (t.kind != SubjectTest::Kind::None) {
        if (!subject) subject = key;
        ++shaped;
      }
      tests.push_back(t);
    }
    if (shaped < 2) return;
    i.subject = subject;
    i.subject_tests = std::move(tests);
  }

  // ForStmt::dict_items_source.
  static const Expr* dict_items_source(ForStmt& loop) {
    if (loop.recursive || (loop.uses_loop && !loop.loop_attrs_only) || loop.filter ||
        loop.target.kind != Target::Kind::Tuple || loop.target.items.size() != 2 ||
        loop.target.items[0].kind != Target::Kind::Name ||
        loop.target.items[1].kind != Target::Kind::Name || loop.target.items[0].name == "loop" ||
        loop.target.items[1].name == "loop")
      return nullptr;
    const Expr* source = nullptr;
    if (loop.iter->kind == ExprKind::Filter) {
      const auto& fe = static_cast<const FilterExpr&>(*loop.iter);
      if ((fe.special == FilterSpecial::Items || fe.special == FilterSpecial::Dictsort) &&
          fe.arguments.empty()) {
        source = fe.operand.get();
        loop.dict_items_sorted = fe.special == FilterSpecial::Dictsort;
      }
    } else if (loop.iter->kind == ExprKind::Call) {
      const auto& c = static_cast<const CallExpr&>(*loop.iter);
      if (c.arguments.empty() && c.callee->kind == ExprKind::Getattr) {
        const auto& g = static_cast<const GetattrExpr&>(*c.callee);
        if (g.attr == "items" && g.dict_method) source = g.object.get();
      }
    }
    if (source && is_pure_read(*source)) return source;
    loop.dict_items_sorted = false;
    return nullptr;
  }

  void macro(MacroDef& def) {
    for (auto& p : def.params) expr(p.default_value);
    body(def.body);
  }

  void stmt(Stmt& s) {
    switch (s.kind) {
      case StmtKind::Output:
      case StmtKind::Break:
      case StmtKind::Continue:
        return;
      case StmtKind::Print: {
        auto& p = static_cast<PrintStmt&>(s);
        expr(p.expr);
        const Expr* cur = p.expr.get();
        if (cur->kind == ExprKind::Binary &&
            static_cast<const BinaryExpr*>(cur)->op == BinaryOp::Add) {
          std::vector<const Expr*> operands, pluses;
          while (cur->kind == ExprKind::Binary &&
                 static_cast<const BinaryExpr*>(cur)->op == BinaryOp::Add &&
                 operands.size() + 1 < PrintStmt::kMaxSumOperands) {
            operands.push_back(static_cast<const BinaryExpr*>(cur)->right.get());
            pluses.push_back(cur);
            cur = static_cast<const BinaryExpr*>(cur)->left.get();
          }
          operands.push_back(cur);
          pluses.push_back(nullptr);
          std::reverse(operands.begin(), operands.end());
          std::reverse(pluses.begin(), pluses.end());
          sum_operands(p, operands, pluses);
        }
        return;
      }
      case StmtKind::If: {
        auto& i = static_cast<IfStmt&>(s);
        for (auto& [cond, b] : i.branches) {
          expr(cond);
          body(b);
        }
        body(i.otherwise);
        find_subject(i);
        return;
      }
      case StmtKind::For: {
        auto& f = static_cast<ForStmt&>(s);
        expr(f.filter);
        expr(f.iter);
        body(f.body);
        body(f.otherwise);
        f.dict_items_source = dict_items_source(f);
        return;
      }
      case StmtKind::Set:
        expr(static_cast<SetStmt&>(s).value);
        return;
      case StmtKind::SetBlock:
        expr(static_cast<SetBlockStmt&>(s).filter);
        body(static_cast<SetBlockStmt&>(s).body);
        return;
      case StmtKind::Macro:
        macro(*static_cast<MacroStmt&>(s).def);
        return;
      case StmtKind::CallBlock: {
        auto& c = static_cast<CallBlockStmt&>(s);
        children(*c.call);  // the call itself stays a CallExpr
        macro(*c.caller);
        return;
      }
      case StmtKind::FilterBlock:
        expr(static_cast<FilterBlockStmt&>(s).filter);
        body(static_cast<FilterBlockStmt&>(s).body);
        return;
      case StmtKind::With: {
        auto& w = static_cast<WithStmt&>(s);
        for (auto& v : w.values) expr(v);
        body(w.body);
        return;
      }
      case StmtKind::Generation:
      case StmtKind::Block:
      case StmtKind::Autoescape:
        expr(static_cast<BodyStmt&>(s).expr);
        body(static_cast<BodyStmt&>(s).body);
        return;
      case StmtKind::Unsupported:
        expr(static_cast<UnsupportedStmt&>(s).template_name);
        return;
    }
  }
};

// Compile-time output folding, as Jinja2's code generator does it: `{{ 'text' }}` (a
// constant printed) is static text, and consecutive static texts are one write. Chat
// templates print many constant markers (`{{- '<|im_start|>' }}`); each was a statement
// to dispatch and a value to print. Skipped when the template uses {% autoescape %},
// where a printed constant may be escaped depending on the block it runs in.
struct StaticOutputFolder {
  bool autoescape = false;

  void find_autoescape(const Body& b) {
    for (const auto& s : b) {
      if (s->kind == StmtKind::Autoescape) autoescape = true;
      for_each_body(*s, [&](Body& inner) { find_autoescape(inner); });
    }
  }

  // `s` as the pieces of merged output (OutputStmt::pieces), its text starting at `offset`.
  static void append_pieces(std::vector<OutputPiece>& to, const OutputStmt& s, std::size_t offset) {
    if (s.pieces.empty()) to.push_back({offset + s.text.size(), false, s.line, s.column});
    for (const auto& p : s.pieces) to.push_back({offset + p.end, p.printed, p.line, p.column});
  }

  void fold(Body& b) {
    Body kept;
    kept.reserve(b.size());
    for (auto& s : b) {
      for_each_body(*s, [&](Body& inner) { fold(inner); });
      if (s->kind == StmtKind::Print) {
        const Expr& e = *static_cast<PrintStmt&>(*s).expr;
        if (e.kind == ExprKind::Const) {
          auto text = std::make_unique<OutputStmt>();
          text->line = s->line;
          text->column = s->column;
          append_str(text->text, static_cast<const ConstExpr&>(e).value);
          // A limit reached while writing it is reported at the `{{`, as the print's.
          text->pieces.push_back({text->text.size(), true, s->line, s->column});
          s = std::move(text);
        }
      }
      if (s->kind == StmtKind::Output && !kept.empty() && kept.back()->kind == StmtKind::Output) {
        auto& into = static_cast<OutputStmt&>(*kept.back());
        const auto& next = static_cast<const OutputStmt&>(*s);
        std::vector<OutputPiece> pieces;
        append_pieces(pieces, into, 0);
        append_pieces(pieces, next, into.text.size());
        into.pieces = std::move(pieces);
        into.text += next.text;
        continue;
      }
      kept.push_back(std::move(s));
    }
    b = std::move(kept);
  }
};

}  // namespace

void optimize_template(ParsedTemplate& parsed) {
  Optimizer optimizer;
  optimizer.body(parsed.body);
  StaticOutputFolder folder;
  folder.find_autoescape(parsed.body);
  if (!folder.autoescape) folder.fold(parsed.body);
}

}  // namespace chatwire::jinja
