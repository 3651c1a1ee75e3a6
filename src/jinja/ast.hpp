// The syntax tree the parser builds and the evaluator walks. Node kinds follow
// jinja2/nodes.py. Names are interned to small integer ids at compile time so
// that scopes compare integers, and constant attribute names keep their hash.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "chatwire/value.hpp"
#include "jinja/registry.hpp"

namespace chatwire::jinja {

using SymbolId = std::uint32_t;

enum class ExprKind : std::uint8_t {
  Const,
  Name,
  List,
  Tuple,
  Dict,
  Getattr,
  Getitem,
  Slice,
  Call,
  Filter,
  Test,
  Not,
  Neg,
  Pos,
  And,
  Or,
  Binary,  // + - * / // % **
  Concat,  // ~
  Compare,
  CondExpr,
};

enum class CompareKind : std::uint8_t { Eq, Ne, Lt, LtEq, Gt, GtEq, In, NotIn };

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Keyword {
  std::string name;
  ExprPtr value;
};

// `name.attr` / `name['key']` with a constant key that a dict answers with its entry
// (not a dict method, not a name the sandbox blocks), resolved at compile time: the
// evaluator reads it with one variable lookup and one dict probe (message.role,
// message['content']). Anything else (not a dict, key missing) takes the general path.
struct NameKey {
  SymbolId symbol = 0;
  std::string_view key;
  std::uint64_t hash = 0;
};

struct Expr {
  ExprKind kind;
  std::uint32_t height = 1;  // of the subtree; bounded by Limits::max_parse_depth
  std::uint32_t line = 0, column = 0;
  const NameKey* name_key = nullptr;  // set on Getattr / Getitem nodes of that shape
  explicit Expr(ExprKind k) : kind(k) {}
  virtual ~Expr() = default;
};

struct ConstExpr : Expr {
  Value value;
  ConstExpr() : Expr(ExprKind::Const) {}
};

struct NameExpr : Expr {
  std::string name;
  SymbolId symbol = 0;
  NameExpr() : Expr(ExprKind::Name) {}
};

// List, Tuple
struct SequenceExpr : Expr {
  std::vector<ExprPtr> items;
  explicit SequenceExpr(ExprKind k) : Expr(k) {}
};

struct DictExpr : Expr {
  std::vector<std::pair<ExprPtr, ExprPtr>> items;
  DictExpr() : Expr(ExprKind::Dict) {}
};

// The attributes of jinja2's LoopContext that are plain values, recognised at compile
// time so that `loop.index0` reads a field instead of comparing names.
enum class LoopAttr : std::uint8_t {
  None,
  Index,
  Index0,
  Revindex,
  Revindex0,
  First,
  Last,
  Length,
  Depth,
  Depth0
};
LoopAttr loop_attr_of(std::string_view name);

struct GetattrExpr : Expr {
  ExprPtr object;
  std::string attr;
  Value attr_value;  // the name as a string Value (hash cached) for dict lookups
  std::uint64_t attr_hash = 0;
  // Resolved at compile time: on a dict, a method name wins over a key, and the
  // sandbox blocks mutators and dunders, so only other names may read the key directly.
  bool dict_blocked = false;
  LoopAttr loop_attr = LoopAttr::None;
  // The Python method this name denotes on str, list, tuple and dict values (nullptr:
  // none), resolved once so that `text.strip()` does not search the method tables.
  MethodFn str_method = nullptr, list_method = nullptr, tuple_method = nullptr,
           dict_method = nullptr;
  MethodFn method_for(Kind k) const {
    switch (k) {
      case Kind::String:
        return str_method;
      case Kind::List:
        return list_method;
      case Kind::Tuple:
        return tuple_method;
      case Kind::Dict:
        return dict_method;
      default:
        return nullptr;
    }
  }
  NameKey direct;  // what name_key points to, when set
  GetattrExpr() : Expr(ExprKind::Getattr) {}
};

struct GetitemExpr : Expr {
  ExprPtr object;
  ExprPtr index;   // may be a SliceExpr
  NameKey direct;  // what name_key points to, when set
  GetitemExpr() : Expr(ExprKind::Getitem) {}
};

struct SliceExpr : Expr {
  ExprPtr start, stop, step;  // each may be null
  SliceExpr() : Expr(ExprKind::Slice) {}
};

// Arguments of calls, filters and tests.
struct CallArguments {
  std::vector<ExprPtr> args;
  std::vector<Keyword> kwargs;
  ExprPtr dyn_args, dyn_kwargs;
  bool empty() const { return args.empty() && kwargs.empty() && !dyn_args && !dyn_kwargs; }
};

struct CallExpr : Expr {
  ExprPtr callee;
  CallArguments arguments;
  CallExpr() : Expr(ExprKind::Call) {}
};

struct FilterExpr : Expr {
  ExprPtr operand;  // null inside filter blocks / set blocks: the body is the operand
  std::string name;
  const FilterEntry* filter = nullptr;          // null: unknown, fails when evaluated
  FilterSpecial special = FilterSpecial::None;  // filter->fast_path, set by the optimiser
  CallArguments arguments;
  FilterExpr() : Expr(ExprKind::Filter) {}
};

struct TestExpr : Expr {
  ExprPtr operand;
  std::string name;
  const TestEntry* test = nullptr;
  TestSpecial special = TestSpecial::None;  // test->fast_path, set by the optimiser
  CallArguments arguments;
  TestExpr() : Expr(ExprKind::Test) {}
};

struct UnaryExpr : Expr {
  ExprPtr operand;
  explicit UnaryExpr(ExprKind k) : Expr(k) {}
};

// And, Or, Binary, Concat
struct BinaryExpr : Expr {
  BinaryOp op = BinaryOp::Add;  // for ExprKind::Binary
  // The last node of a `~` chain as written: Jinja2 has one n-ary Concat node per chain,
  // and a parenthesized chain inside another is one operand of it (set by the parser).
  bool ends_chain = false;
  // A `~` chain whose operands are all constants or filters of constants: Jinja2's
  // optimizer folds it to str.join of their str() (a plain str, even with a Markup among
  // them, which markup_join would keep while autoescaping). Set by the resolve pass on the
  // node that ends the chain, whether chatwire's optimiser runs or not.
  bool folds_to_str = false;
  ExprPtr left, right;
  explicit BinaryExpr(ExprKind k) : Expr(k) {}
};

struct CompareExpr : Expr {
  ExprPtr first;
  std::vector<std::pair<CompareKind, ExprPtr>> rest;
  CompareExpr() : Expr(ExprKind::Compare) {}
};

struct CondExpr : Expr {
  ExprPtr test, then, otherwise;  // otherwise may be null (Undefined)
  CondExpr() : Expr(ExprKind::CondExpr) {}
};

// ---------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------

enum class StmtKind : std::uint8_t {
  Output,  // template data
  Print,   // {{ expr }}
  If,
  For,
  Set,
  SetBlock,
  Macro,
  CallBlock,
  FilterBlock,
  With,
  Break,
  Continue,
  Generation,
  Block,
  Autoescape,   // {% autoescape expr %}: prints escape non-Markup values while it is true
  Unsupported,  // include / import / from / extends: fail at render time like Jinja2
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Stmt {
  StmtKind kind;
  std::uint32_t line = 0, column = 0;
  explicit Stmt(StmtKind k) : kind(k) {}
  virtual ~Stmt() = default;
};

// One of the statements the optimiser merged into an OutputStmt: template data, or a
// printed constant (`{{ '<|im_start|>' }}`) with the position of its `{{`.
struct OutputPiece {
  std::size_t end = 0;  // where the piece ends in OutputStmt::text
  bool printed = false;
  std::uint32_t line = 0, column = 0;
};

struct OutputStmt : Stmt {
  std::string text;
  // Empty for one statement of the source. Otherwise the statements the optimiser merged,
  // in order: the evaluator counts a step for each, and when a limit is reached inside the
  // text, writes them one by one so that the error is the one the unmerged statements raise.
  std::vector<OutputPiece> pieces;
  OutputStmt() : Stmt(StmtKind::Output) {}
};

// An operand of a printed `+` chain (PrintStmt::sum).
struct SumOperand {
  const Expr* expr = nullptr;  // the operand (the first one of joined constants)
  // The `+` node that adds this operand to the ones before it (null for the first): an
  // error of that addition is reported at its position, as the general path reports it.
  const Expr* plus = nullptr;
  // A str constant: its text, ready to write. Adjacent str constants are joined into one
  // text: while the sum so far is a str, `s + 'a' + 'b'` is `s + 'ab'`, and once it is
  // not, both raise the same TypeError (or UndefinedError) at the first constant.
  std::string_view text;
  bool is_text = false;
  bool is_trim = false;  // a plain `x | trim` (no arguments, not Markup): written as a view
};

struct PrintStmt : Stmt {
  ExprPtr expr;
  // When `expr` is a `+` chain that is not Markup (`'<|im_start|>' + role + '\n'`): its
  // operands left to right, collected at compile time for the evaluator's print_sum (a
  // chain longer than kMaxSumOperands keeps its leftmost part as one operand).
  static constexpr std::size_t kMaxSumOperands = 16;
  std::vector<SumOperand> sum;
  std::deque<std::string> joined_texts;  // storage of joined constant texts
  PrintStmt() : Stmt(StmtKind::Print) {}
};

// A branch test of an `if` chain on one dict entry (IfStmt::subject): the entry compared
// with a constant (`message.role == 'user'`, `message.role in ['user', 'system']`),
// alone or as the first operand of an `and` whose other operand is `rest`.
struct SubjectTest {
  enum class Kind : std::uint8_t {
    None,
    Eq,
    Ne,
    In,
    NotIn
  } kind = Kind::None;              // None: not of that shape
  const Value* constant = nullptr;  // a str for Eq / Ne, a list or tuple for In / NotIn
  const Expr* rest = nullptr;       // the `and`'s second operand, or null
};

struct IfStmt : Stmt {
  std::vector<std::pair<ExprPtr, Body>> branches;  // if + elifs
  Body otherwise;
  // Set at compile time when two or more branch tests compare the same `name.key` with
  // constants: when that entry is a str, it is read once for the whole chain instead of
  // once per test (nothing a test evaluates can rebind the name or change a dict).
  const NameKey* subject = nullptr;
  std::vector<SubjectTest> subject_tests;  // per branch, when subject is set
  IfStmt() : Stmt(StmtKind::If) {}
};

// Assignment target: a name, a tuple of targets, or namespace attribute (ns.attr).
struct Target {
  enum class Kind : std::uint8_t { Name, Tuple, NamespaceAttr } kind = Kind::Name;
  SymbolId symbol = 0;
  std::string name;
  std::string attr;  // NamespaceAttr
  std::vector<Target> items;
  std::uint32_t line = 0, column = 0;
};

struct ForStmt : Stmt {
  Target target;
  ExprPtr iter;
  ExprPtr filter;  // may be null
  bool recursive = false;
  bool uses_loop = true;  // the body or filter refers to `loop`
  // ... and only to read its plain-value attributes (`loop.last`, `loop.index0`: LoopAttr):
  // never as a value, call or other attribute (`loop.previtem`, `loop.cycle(...)`).
  bool loop_attrs_only = false;
  // `for k, v in d | items` / `d.items()` / `d | dictsort` with a side-effect-free `d`, no
  // filter, not recursive, and `loop` used for its plain attributes only, if at all (the
  // rest of it would need the list of (key, value) tuples): the expression of `d`, whose
  // entries the evaluator binds directly when it is a dict. Set at compile time.
  const Expr* dict_items_source = nullptr;
  bool dict_items_sorted = false;  // the source is `d | dictsort` (no arguments)
  Body body, otherwise;
  ForStmt() : Stmt(StmtKind::For) {}
};

struct SetStmt : Stmt {
  Target target;
  ExprPtr value;
  SetStmt() : Stmt(StmtKind::Set) {}
};

struct SetBlockStmt : Stmt {
  Target target;
  ExprPtr filter;  // FilterExpr chain with a null innermost operand, or null
  Body body;
  SetBlockStmt() : Stmt(StmtKind::SetBlock) {}
};

struct MacroParam {
  SymbolId symbol = 0;
  std::string name;
  ExprPtr default_value;  // may be null
};

struct MacroDef {
  std::string name;
  std::vector<MacroParam> params;
  Body body;
  bool uses_caller = false, uses_varargs = false, uses_kwargs = false;
};

struct MacroStmt : Stmt {
  SymbolId symbol = 0;
  std::shared_ptr<MacroDef> def;
  MacroStmt() : Stmt(StmtKind::Macro) {}
};

struct CallBlockStmt : Stmt {
  std::unique_ptr<CallExpr> call;
  std::shared_ptr<MacroDef> caller;  // the body as the `caller` macro
  CallBlockStmt() : Stmt(StmtKind::CallBlock) {}
};

struct FilterBlockStmt : Stmt {
  ExprPtr filter;  // FilterExpr chain with a null innermost operand
  Body body;
  FilterBlockStmt() : Stmt(StmtKind::FilterBlock) {}
};

struct WithStmt : Stmt {
  std::vector<Target> targets;
  std::vector<ExprPtr> values;
  Body body;
  WithStmt() : Stmt(StmtKind::With) {}
};

struct SimpleStmt : Stmt {  // Break, Continue
  explicit SimpleStmt(StmtKind k) : Stmt(k) {}
};

struct BodyStmt : Stmt {  // Generation, Block, Autoescape
  Body body;
  ExprPtr expr;           // Autoescape: the flag
  std::string name;       // Block
  bool required = false;  // Block: `required` blocks fail when rendered
  explicit BodyStmt(StmtKind k) : Stmt(k) {}
};

struct UnsupportedStmt : Stmt {
  std::string tag;  // include, import, from, extends
  ExprPtr template_name;
  UnsupportedStmt() : Stmt(StmtKind::Unsupported) {}
};

// Calls fn(body) for each body nested directly in `s` (branches, loop bodies and else, macro
// and call-block bodies, block bodies), in template order. `S` is Stmt or const Stmt.
template <typename T, typename From>
using ConstLike = std::conditional_t<std::is_const_v<From>, const T, T>;
template <typename S, typename Fn>
void for_each_body(S& s, Fn&& fn) {
  switch (s.kind) {
    case StmtKind::If: {
      auto& i = static_cast<ConstLike<IfStmt, S>&>(s);
      for (auto& [cond, b] : i.branches) fn(b);
      fn(i.otherwise);
      return;
    }
    case StmtKind::For:
      fn(static_cast<ConstLike<ForStmt, S>&>(s).body);
      fn(static_cast<ConstLike<ForStmt, S>&>(s).otherwise);
      return;
    case StmtKind::SetBlock:
      fn(static_cast<ConstLike<SetBlockStmt, S>&>(s).body);
      return;
    case StmtKind::Macro:
      fn(static_cast<ConstLike<MacroStmt, S>&>(s).def->body);
      return;
    case StmtKind::CallBlock:
      fn(static_cast<ConstLike<CallBlockStmt, S>&>(s).caller->body);
      return;
    case StmtKind::FilterBlock:
      fn(static_cast<ConstLike<FilterBlockStmt, S>&>(s).body);
      return;
    case StmtKind::With:
      fn(static_cast<ConstLike<WithStmt, S>&>(s).body);
      return;
    case StmtKind::Generation:
    case StmtKind::Block:
    case StmtKind::Autoescape:
      fn(static_cast<ConstLike<BodyStmt, S>&>(s).body);
      return;
    default:
      return;
  }
}

// An expression that reads without side effects (a name, a constant, attribute and
// constant-subscript reads of those): a fast path may evaluate it, give up, and let the
// general path evaluate it again.
inline bool is_pure_read(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Name:
    case ExprKind::Const:
      return true;
    case ExprKind::Getattr:
      return is_pure_read(*static_cast<const GetattrExpr&>(e).object);
    case ExprKind::Getitem: {
      const auto& g = static_cast<const GetitemExpr&>(e);
      return g.index->kind == ExprKind::Const && is_pure_read(*g.object);
    }
    default:
      return false;
  }
}

}  // namespace chatwire::jinja
