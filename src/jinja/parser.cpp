// The parse pass (tokens -> syntax tree). Mirrors jinja2/parser.py: statement dispatch,
// parse_tuple / condexpr / or / and / not / compare / math1 / concat / math2 / pow / unary /
// primary / postfix / filter_expr, and the error messages of TokenStream.expect and
// fail_unknown_tag. The tree is the source's, node for node: names are bound by the resolve
// pass (resolve.cpp) and nothing is folded here (optimize.cpp).
#include "jinja/parser.hpp"

#include <algorithm>
// GCC 12 reports a false -Wrestrict inside std::string concatenation at -O3
// (GCC bug 105329); it is not a property of this code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include "jinja/lexer.hpp"

namespace chatwire::jinja {

namespace {

// Thrown only inside this file to unwind the recursive descent; parse_template
// catches it and returns the Error as a value.
struct ParseFailure {
  Error error;
};

std::string describe_expr(std::string_view expr) {
  // "name:endfor" -> "endfor"; a bare token type name -> its description.
  auto colon = expr.find(':');
  if (colon != std::string_view::npos) return std::string(expr.substr(colon + 1));
  return std::string(expr);
}

std::string quote(std::string_view s) {
  // Python repr of a plain string (enough for messages).
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char q = has_single && !has_double ? '"' : '\'';
  std::string out(1, q);
  for (char c : s) {
    if (c == q || c == '\\') out += '\\';
    out += c;
  }
  out += q;
  return out;
}

class Parser {
 public:
  Parser(std::string_view source, const Limits& limits) : tokens_(source), limits_(limits) {}

  ParsedTemplate run() {
    ParsedTemplate result;
    result.body = subparse({});
    result.uses_generation = uses_generation_;
    return result;
  }

 private:
  TokenStream tokens_;
  std::size_t index_ = 0;
  const Limits& limits_;
  std::uint32_t depth_ = 0;
  std::vector<std::string> tag_stack_;
  std::vector<std::vector<std::string>> end_token_stack_;
  bool uses_generation_ = false;
  std::vector<std::string> block_names_;
  int loop_depth_ = 0;  // for break/continue: Python's "outside loop" check

  // Depth guard for every recursive entry point.
  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser) : p(parser) {
      if (++p.depth_ > p.limits_.max_parse_depth)
        throw ParseFailure{Error{"LimitError",
                                 "template nesting too deep: max_parse_depth=" +
                                     std::to_string(p.limits_.max_parse_depth) + " exceeded",
                                 p.current().line,
                                 p.current().column,
                                 {}}};
    }
    ~DepthGuard() { --p.depth_; }
  };

  // Past the end, every index is the Eof token.
  const Token& token_at(std::size_t index) {
    const Token* token = tokens_.at(index);
    if (token == nullptr) throw ParseFailure{tokens_.error()};
    return *token;
  }
  const Token& current() { return token_at(index_); }
  const Token& look() { return token_at(index_ + 1); }
  const Token& next() {
    const Token& t = token_at(index_);
    if (t.type != Tok::Eof) ++index_;
    return t;
  }

  [[noreturn]] void fail(std::string message, const Token& at) const {
    throw ParseFailure{Error{"TemplateSyntaxError", std::move(message), at.line, at.column, {}}};
  }
  [[noreturn]] void fail(std::string message) { fail(std::move(message), current()); }

  static bool test(const Token& t, std::string_view expr) {
    // expr: a token type name ("block_end") or "name:value".
    auto colon = expr.find(':');
    if (colon != std::string_view::npos)
      return t.type == Tok::Name && t.text == expr.substr(colon + 1);
    return type_name(t.type) == expr;
  }

  static std::string_view type_name(Tok t) {
    switch (t) {
      case Tok::BlockEnd:
        return "block_end";
      case Tok::VariableEnd:
        return "variable_end";
      case Tok::Name:
        return "name";
      case Tok::RParen:
        return "rparen";
      case Tok::RBracket:
        return "rbracket";
      case Tok::RBrace:
        return "rbrace";
      case Tok::Colon:
        return "colon";
      case Tok::Comma:
        return "comma";
      case Tok::Assign:
        return "assign";
      case Tok::Eof:
        return "eof";
      default:
        return "";
    }
  }

  static std::string describe_type(Tok t) {
    switch (t) {
      case Tok::BlockEnd:
        return "end of statement block";
      case Tok::VariableEnd:
        return "end of print statement";
      case Tok::RParen:
        return ")";
      case Tok::RBracket:
        return "]";
      case Tok::RBrace:
        return "}";
      case Tok::LParen:
        return "(";
      case Tok::Colon:
        return ":";
      case Tok::Comma:
        return ",";
      case Tok::Assign:
        return "=";
      case Tok::Name:
        return "name";
      default:
        return "token";
    }
  }

  const Token& expect(Tok type) {
    if (current().type != type) {
      if (current().type == Tok::Eof)
        fail("unexpected end of template, expected " + quote(describe_type(type)) + ".");
      fail("expected token " + quote(describe_type(type)) + ", got " +
           quote(describe_token(current())));
    }
    return next();
  }
  const Token& expect_name(std::string_view name) {
    if (!(current().type == Tok::Name && current().text == name)) {
      if (current().type == Tok::Eof)
        fail("unexpected end of template, expected " + quote(name) + ".");
      fail("expected token " + quote(name) + ", got " + quote(describe_token(current())));
    }
    return next();
  }
  bool skip_if(Tok type) {
    if (current().type != type) return false;
    next();
    return true;
  }
  bool skip_if_name(std::string_view name) {
    if (!(current().type == Tok::Name && current().text == name)) return false;
    next();
    return true;
  }

  // Long flat chains (a + b + c ..., a.b.c ..., x|f|g ...) are built by loops, not
  // recursion, but evaluating them recurses: their height is bounded too.
  void set_height(Expr& node, std::initializer_list<const Expr*> children) {
    std::uint32_t h = 0;
    for (const Expr* c : children)
      if (c && c->height > h) h = c->height;
    bound_height(node, h);
  }

  // Sets node.height to one more than `child_height`, within the limit.
  void bound_height(Expr& node, std::uint32_t child_height) {
    node.height = child_height + 1;
    if (node.height > limits_.max_parse_depth)
      throw ParseFailure{Error{"LimitError",
                               "expression nested too deeply: max_parse_depth=" +
                                   std::to_string(limits_.max_parse_depth) + " exceeded",
                               node.line,
                               node.column,
                               {}}};
  }

  template <typename T>
  std::unique_ptr<T> make(const Token& at, T* node) {
    node->line = at.line;
    node->column = at.column;
    return std::unique_ptr<T>(node);
  }

  // ---------------------------------------------------------------- statements

  [[noreturn]] void fail_unknown_tag(const std::string* name, const Token& at) {
    std::vector<std::string> expected;
    for (const auto& exprs : end_token_stack_)
      for (const auto& e : exprs) expected.push_back(describe_expr(e));
    std::string currently_looking;
    if (!end_token_stack_.empty()) {
      for (const auto& e : end_token_stack_.back()) {
        if (!currently_looking.empty()) currently_looking += " or ";
        currently_looking += quote(describe_expr(e));
      }
    }
    std::string message =
        name ? "Encountered unknown tag " + quote(*name) + "." : "Unexpected end of template.";
    if (!currently_looking.empty()) {
      bool nesting = false;
      if (name)
        for (const auto& e : expected) nesting |= e == *name;
      if (nesting)
        message +=
            " You probably made a nesting mistake. Jinja is expecting this tag, but currently "
            "looking for " +
            currently_looking + ".";
      else
        message += " Jinja was looking for the following tags: " + currently_looking + ".";
    }
    if (!tag_stack_.empty())
      message +=
          " The innermost block that needs to be closed is " + quote(tag_stack_.back()) + ".";
    fail(message, at);
  }

  Body subparse(const std::vector<std::string>& end_tokens) {
    DepthGuard guard(*this);
    Body body;
    if (!end_tokens.empty()) end_token_stack_.push_back(end_tokens);
    while (current().type != Tok::Eof) {
      const Token& token = current();
      if (token.type == Tok::Data) {
        auto out = make(token, new OutputStmt);
        out->text = token.text;
        body.push_back(std::move(out));
        next();
      } else if (token.type == Tok::VariableBegin) {
        next();
        auto print = make(token, new PrintStmt);
        print->expr = parse_tuple(false, true, {}, false);
        expect(Tok::VariableEnd);
        body.push_back(std::move(print));
      } else if (token.type == Tok::BlockBegin) {
        next();
        for (const auto& e : end_tokens) {
          if (test(current(), e)) {
            end_token_stack_.pop_back();
            return body;
          }
        }
        StmtPtr stmt = parse_statement();
        if (stmt) body.push_back(std::move(stmt));
        expect(Tok::BlockEnd);
      } else {
        fail("internal parsing error");
      }
    }
    if (!end_tokens.empty()) end_token_stack_.pop_back();
    return body;
  }

  // parse_statements: optional colon, block_end, body up to one of end_tokens.
  Body parse_statements(const std::vector<std::string>& end_tokens, bool drop_needle) {
    skip_if(Tok::Colon);
    expect(Tok::BlockEnd);
    Body body = subparse(end_tokens);
    if (current().type == Tok::Eof) {
      // subparse has popped end_tokens; Jinja2's fail_eof names them again.
      end_token_stack_.push_back(end_tokens);
      fail_unknown_tag(nullptr, current());
    }
    if (drop_needle) next();
    return body;
  }

  StmtPtr parse_statement() {
    DepthGuard guard(*this);
    const Token& token = current();
    if (token.type != Tok::Name) fail("tag name expected", token);
    const std::string name = token.text;
    tag_stack_.push_back(name);
    StmtPtr result;
    if (name == "for") {
      result = parse_for();
    } else if (name == "if") {
      result = parse_if();
    } else if (name == "set") {
      result = parse_set();
    } else if (name == "macro") {
      result = parse_macro();
    } else if (name == "call") {
      result = parse_call_block();
    } else if (name == "filter") {
      result = parse_filter_block();
    } else if (name == "with") {
      result = parse_with();
    } else if (name == "print") {
      next();
      auto print = make(token, new PrintStmt);
      print->expr = parse_tuple(false, true, {}, false);
      result = std::move(print);
    } else if (name == "break" || name == "continue") {
      const Token& at = next();
      if (loop_depth_ == 0)
        throw ParseFailure{
            Error{"SyntaxError",
                  name == "break" ? "'break' outside loop" : "'continue' not properly in loop",
                  at.line,
                  at.column,
                  {}}};
      result = make(at, new SimpleStmt(name == "break" ? StmtKind::Break : StmtKind::Continue));
    } else if (name == "generation") {
      const Token& at = next();
      uses_generation_ = true;
      auto gen = make(at, new BodyStmt(StmtKind::Generation));
      int saved_loops = loop_depth_;
      loop_depth_ = 0;  // transformers renders the body through caller(): a function
      gen->body = parse_statements({"name:endgeneration"}, true);
      loop_depth_ = saved_loops;
      result = std::move(gen);
    } else if (name == "block") {
      result = parse_block();
    } else if (name == "include" || name == "import" || name == "from" || name == "extends") {
      result = parse_unsupported(name);
    } else if (name == "autoescape") {
      next();
      auto block = make(token, new BodyStmt(StmtKind::Autoescape));
      block->expr = parse_expression(true);
      block->body = parse_statements({"name:endautoescape"}, true);
      result = std::move(block);
    } else {
      tag_stack_.pop_back();
      fail_unknown_tag(&name, token);
    }
    tag_stack_.pop_back();
    return result;
  }

  StmtPtr parse_for() {
    const Token& at = expect_name("for");
    auto node = make(at, new ForStmt);
    node->target = parse_assign_target(true, false, {"name:in"}, false);
    check_not_loop(node->target);
    expect_name("in");
    node->iter = parse_tuple(false, false, {"name:recursive"}, false);
    if (skip_if_name("if")) node->filter = parse_expression(true);
    node->recursive = skip_if_name("recursive");
    ++loop_depth_;
    node->body = parse_statements({"name:endfor", "name:else"}, false);
    --loop_depth_;
    if (next().text != "endfor") {
      node->otherwise = parse_statements({"name:endfor"}, true);
    }
    return node;
  }

  void check_not_loop(const Target& t) {
    if (t.kind == Target::Kind::Name && t.name == "loop")
      throw ParseFailure{Error{"TemplateAssertionError",
                               "Can't assign to special loop variable in for-loop target",
                               t.line,
                               t.column,
                               {}}};
    for (const auto& item : t.items) check_not_loop(item);
  }

  StmtPtr parse_if() {
    const Token& at = expect_name("if");
    auto node = make(at, new IfStmt);
    while (true) {
      ExprPtr cond = parse_tuple(false, false, {}, false);
      Body body = parse_statements({"name:elif", "name:else", "name:endif"}, false);
      node->branches.emplace_back(std::move(cond), std::move(body));
      const Token& token = next();
      if (token.is_name("elif")) continue;
      if (token.is_name("else")) node->otherwise = parse_statements({"name:endif"}, true);
      break;
    }
    return node;
  }

  StmtPtr parse_set() {
    const Token& at = next();
    Target target = parse_assign_target(true, false, {}, true);
    if (skip_if(Tok::Assign)) {
      auto node = make(at, new SetStmt);
      node->target = std::move(target);
      node->value = parse_tuple(false, true, {}, false);
      return node;
    }
    auto node = make(at, new SetBlockStmt);
    node->target = std::move(target);
    node->filter = parse_filter(nullptr, false);
    node->body = parse_statements({"name:endset"}, true);
    return node;
  }

  std::shared_ptr<MacroDef> parse_signature(MacroDef& def) {
    expect(Tok::LParen);
    bool have_default = false;
    while (current().type != Tok::RParen) {
      if (!def.params.empty()) expect(Tok::Comma);
      const Token& name = expect(Tok::Name);
      MacroParam param;
      param.name = name.text;
      if (skip_if(Tok::Assign)) {
        param.default_value = parse_expression(true);
        have_default = true;
      } else if (have_default) {
        fail("non-default argument follows default argument");
      } else if (name.text == "caller") {
        throw ParseFailure{Error{"TemplateAssertionError",
                                 "When defining macros or call blocks the special \"caller\" "
                                 "argument must be omitted or be given a default.",
                                 name.line,
                                 name.column,
                                 {}}};
      }
      def.params.push_back(std::move(param));
    }
    expect(Tok::RParen);
    return nullptr;
  }

  StmtPtr parse_macro() {
    const Token& at = next();
    auto node = make(at, new MacroStmt);
    node->def = std::make_shared<MacroDef>();
    const Token& name = expect(Tok::Name);
    node->def->name = name.text;
    parse_signature(*node->def);
    int saved_loops = loop_depth_;
    loop_depth_ = 0;  // a macro is its own Python function
    node->def->body = parse_statements({"name:endmacro"}, true);
    loop_depth_ = saved_loops;
    return node;
  }

  StmtPtr parse_call_block() {
    const Token& at = next();
    auto node = make(at, new CallBlockStmt);
    node->caller = std::make_shared<MacroDef>();
    node->caller->name = "caller";
    if (current().type == Tok::LParen) parse_signature(*node->caller);
    ExprPtr call = parse_expression(true);
    if (call->kind != ExprKind::Call) fail("expected call", at);
    node->call.reset(static_cast<CallExpr*>(call.release()));
    int saved_loops = loop_depth_;
    loop_depth_ = 0;
    node->caller->body = parse_statements({"name:endcall"}, true);
    loop_depth_ = saved_loops;
    return node;
  }

  StmtPtr parse_filter_block() {
    const Token& at = next();
    auto node = make(at, new FilterBlockStmt);
    node->filter = parse_filter(nullptr, true);
    node->body = parse_statements({"name:endfilter"}, true);
    return node;
  }

  StmtPtr parse_with() {
    const Token& at = next();
    auto node = make(at, new WithStmt);
    while (current().type != Tok::BlockEnd) {
      if (!node->targets.empty()) expect(Tok::Comma);
      node->targets.push_back(parse_assign_target(true, false, {}, false));
      expect(Tok::Assign);
      node->values.push_back(parse_expression(true));
    }
    node->body = parse_statements({"name:endwith"}, true);
    return node;
  }

  StmtPtr parse_block() {
    const Token& at = next();
    auto node = make(at, new BodyStmt(StmtKind::Block));
    const Token& name = expect(Tok::Name);
    std::string block_name = name.text;
    for (const auto& seen : block_names_)
      if (seen == block_name)
        throw ParseFailure{Error{"TemplateAssertionError",
                                 "block '" + block_name + "' defined twice",
                                 name.line,
                                 name.column,
                                 {}}};
    block_names_.push_back(block_name);
    node->name = block_name;
    skip_if_name("scoped");
    node->required = skip_if_name("required");
    node->body = parse_statements({"name:endblock"}, true);
    if (node->required)
      for (const auto& st : node->body)
        if (st->kind != StmtKind::Output ||
            static_cast<const OutputStmt&>(*st).text.find_first_not_of(" \t\r\n") !=
                std::string::npos)
          fail("Required blocks can only contain comments or whitespace", at);
    if (current().type == Tok::Name) {
      if (current().text != block_name) fail("mismatching name of block '" + current().text + "'");
      next();
    }
    return node;
  }

  StmtPtr parse_unsupported(const std::string& tag) {
    const Token& at = next();
    auto node = make(at, new UnsupportedStmt);
    node->tag = tag;
    node->template_name = parse_expression(true);
    // Consume the rest of the tag (`as x`, `import a, b`, `with context`, ...).
    while (current().type != Tok::BlockEnd && current().type != Tok::Eof) next();
    return node;
  }

  // ---------------------------------------------------------------- targets

  Target to_target(const Expr& e) {
    Target t;
    t.line = e.line;
    t.column = e.column;
    if (e.kind == ExprKind::Name) {
      const auto& n = static_cast<const NameExpr&>(e);
      t.kind = Target::Kind::Name;
      t.name = n.name;
      return t;
    }
    if (e.kind == ExprKind::Tuple) {
      t.kind = Target::Kind::Tuple;
      for (const auto& item : static_cast<const SequenceExpr&>(e).items)
        t.items.push_back(to_target(*item));
      return t;
    }
    static const char* const kNodeNames[] = {"const",   "name",    "list",   "tuple",   "dict",
                                             "getattr", "getitem", "slice",  "call",    "filter",
                                             "test",    "not",     "neg",    "pos",     "and",
                                             "or",      "binexpr", "concat", "compare", "condexpr"};
    Token at;
    at.line = e.line;
    at.column = e.column;
    fail(std::string("can't assign to ") + quote(kNodeNames[static_cast<int>(e.kind)]), at);
  }

  // `set` targets: names, ns.attr references, and tuples of them (Jinja2 3.1.6).
  Target parse_namespace_target_item() {
    if (current().type == Tok::Name && look().type == Tok::Dot) {
      const Token& name = next();
      next();  // dot
      Target t;
      t.kind = Target::Kind::NamespaceAttr;
      t.line = name.line;
      t.column = name.column;
      t.name = name.text;
      t.attr = expect(Tok::Name).text;
      return t;
    }
    return to_target(*parse_primary());
  }

  Target parse_namespace_targets() {
    Target first = parse_namespace_target_item();
    if (current().type != Tok::Comma) return first;
    Target tuple;
    tuple.kind = Target::Kind::Tuple;
    tuple.line = first.line;
    tuple.column = first.column;
    tuple.items.push_back(std::move(first));
    while (skip_if(Tok::Comma)) {
      Tok t = current().type;
      if (t == Tok::Assign || t == Tok::BlockEnd || t == Tok::Pipe) break;
      tuple.items.push_back(parse_namespace_target_item());
    }
    return tuple;
  }

  Target parse_assign_target(bool with_tuple, bool name_only,
                             const std::vector<std::string>& extra_end_rules, bool with_namespace) {
    if (with_namespace && !name_only) return parse_namespace_targets();
    if (name_only) {
      const Token& name = expect(Tok::Name);
      Target t;
      t.line = name.line;
      t.column = name.column;
      t.name = name.text;
      if (!name_only) {
        next();  // dot
        t.kind = Target::Kind::NamespaceAttr;
        t.attr = expect(Tok::Name).text;
      }
      return t;
    }
    ExprPtr e = with_tuple ? parse_tuple(true, true, extra_end_rules, false) : parse_primary();
    return to_target(*e);
  }

  // ---------------------------------------------------------------- expressions

  ExprPtr parse_expression(bool with_condexpr) {
    return with_condexpr ? parse_condexpr() : parse_or();
  }

  ExprPtr parse_condexpr() {
    DepthGuard guard(*this);
    const Token* at = &current();
    ExprPtr expr1 = parse_or();
    while (skip_if_name("if")) {
      auto node = make(*at, new CondExpr);
      node->test = parse_or();
      if (skip_if_name("else")) node->otherwise = parse_condexpr();
      node->then = std::move(expr1);
      expr1 = std::move(node);
      at = &current();
    }
    return expr1;
  }

  ExprPtr parse_or() {
    const Token& at = current();
    ExprPtr left = parse_and();
    while (skip_if_name("or")) {
      auto node = make(at, new BinaryExpr(ExprKind::Or));
      node->left = std::move(left);
      node->right = parse_and();
      set_height(*node, {node->left.get(), node->right.get()});
      left = std::move(node);
    }
    return left;
  }

  ExprPtr parse_and() {
    const Token& at = current();
    ExprPtr left = parse_not();
    while (skip_if_name("and")) {
      auto node = make(at, new BinaryExpr(ExprKind::And));
      node->left = std::move(left);
      node->right = parse_not();
      set_height(*node, {node->left.get(), node->right.get()});
      left = std::move(node);
    }
    return left;
  }

  ExprPtr parse_not() {
    DepthGuard guard(*this);
    if (current().is_name("not")) {
      const Token& at = next();
      auto node = make(at, new UnaryExpr(ExprKind::Not));
      node->operand = parse_not();
      return node;
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    const Token& at = current();
    ExprPtr expr = parse_math1();
    std::vector<std::pair<CompareKind, ExprPtr>> ops;
    while (true) {
      Tok t = current().type;
      CompareKind kind;
      if (t == Tok::Eq) {
        kind = CompareKind::Eq;
      } else if (t == Tok::Ne) {
        kind = CompareKind::Ne;
      } else if (t == Tok::Lt) {
        kind = CompareKind::Lt;
      } else if (t == Tok::LtEq) {
        kind = CompareKind::LtEq;
      } else if (t == Tok::Gt) {
        kind = CompareKind::Gt;
      } else if (t == Tok::GtEq) {
        kind = CompareKind::GtEq;
      } else if (current().is_name("in")) {
        kind = CompareKind::In;
      } else if (current().is_name("not") && look().is_name("in")) {
        next();
        kind = CompareKind::NotIn;
      } else {
        break;
      }
      next();
      ExprPtr right = parse_math1();
      ops.emplace_back(kind, std::move(right));
    }
    if (ops.empty()) return expr;
    auto node = make(at, new CompareExpr);
    node->first = std::move(expr);
    node->rest = std::move(ops);
    std::uint32_t h = node->first->height;
    for (const auto& [k, e] : node->rest) h = std::max(h, e->height);
    bound_height(*node, h);
    return node;
  }

  ExprPtr binary(const Token& at, ExprKind kind, BinaryOp op, ExprPtr left, ExprPtr right) {
    auto node = make(at, new BinaryExpr(kind));
    node->op = op;
    node->left = std::move(left);
    node->right = std::move(right);
    set_height(*node, {node->left.get(), node->right.get()});
    return node;
  }

  ExprPtr parse_math1() {
    const Token& at = current();
    ExprPtr left = parse_concat();
    while (current().type == Tok::Add || current().type == Tok::Sub) {
      BinaryOp op = next().type == Tok::Add ? BinaryOp::Add : BinaryOp::Sub;
      left = binary(at, ExprKind::Binary, op, std::move(left), parse_concat());
    }
    return left;
  }

  ExprPtr parse_concat() {
    const Token& at = current();
    ExprPtr left = parse_math2();
    if (current().type != Tok::Tilde) return left;
    while (current().type == Tok::Tilde) {
      next();
      left = binary(at, ExprKind::Concat, BinaryOp::Add, std::move(left), parse_math2());
    }
    static_cast<BinaryExpr&>(*left).ends_chain = true;
    return left;
  }

  ExprPtr parse_math2() {
    const Token& at = current();
    ExprPtr left = parse_pow();
    while (true) {
      Tok t = current().type;
      BinaryOp op;
      if (t == Tok::Mul) {
        op = BinaryOp::Mul;
      } else if (t == Tok::Div) {
        op = BinaryOp::Div;
      } else if (t == Tok::FloorDiv) {
        op = BinaryOp::FloorDiv;
      } else if (t == Tok::Mod) {
        op = BinaryOp::Mod;
      } else {
        break;
      }
      next();
      left = binary(at, ExprKind::Binary, op, std::move(left), parse_pow());
    }
    return left;
  }

  ExprPtr parse_pow() {
    const Token& at = current();
    ExprPtr left = parse_unary(true);
    while (current().type == Tok::Pow) {
      next();
      left = binary(at, ExprKind::Binary, BinaryOp::Pow, std::move(left), parse_unary(true));
    }
    return left;
  }

  ExprPtr parse_unary(bool with_filter) {
    DepthGuard guard(*this);
    const Token& at = current();
    ExprPtr node;
    if (at.type == Tok::Sub || at.type == Tok::Add) {
      next();
      auto u = make(at, new UnaryExpr(at.type == Tok::Sub ? ExprKind::Neg : ExprKind::Pos));
      u->operand = parse_unary(false);
      node = std::move(u);
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_expr(std::move(node));
    return node;
  }

  ExprPtr parse_primary() {
    DepthGuard guard(*this);
    const Token& token = current();
    if (token.type == Tok::Name) {
      next();
      if (token.text == "true" || token.text == "false" || token.text == "True" ||
          token.text == "False") {
        auto c = make(token, new ConstExpr);
        c->value = Value(token.text == "true" || token.text == "True");
        return c;
      }
      if (token.text == "none" || token.text == "None") {
        auto c = make(token, new ConstExpr);
        c->value = Value::none();
        return c;
      }
      auto n = make(token, new NameExpr);
      n->name = token.text;
      return n;
    }
    if (token.type == Tok::String) {
      next();
      std::string text = token.text;
      while (current().type == Tok::String) text += next().text;
      auto c = make(token, new ConstExpr);
      c->value = Value(std::move(text));
      return c;
    }
    if (token.type == Tok::Integer || token.type == Tok::Float) {
      next();
      auto c = make(token, new ConstExpr);
      c->value = token.type == Tok::Integer ? Value(static_cast<long long>(token.int_value))
                                            : Value(token.float_value);
      return c;
    }
    if (token.type == Tok::LParen) {
      next();
      ExprPtr e = parse_tuple(false, true, {}, true);
      expect(Tok::RParen);
      return e;
    }
    if (token.type == Tok::LBracket) return parse_list();
    if (token.type == Tok::LBrace) return parse_dict();
    fail("unexpected " + quote(describe_token(token)), token);
  }

  bool is_tuple_end(const std::vector<std::string>& extra_end_rules) {
    Tok t = current().type;
    if (t == Tok::VariableEnd || t == Tok::BlockEnd || t == Tok::RParen) return true;
    for (const auto& rule : extra_end_rules)
      if (test(current(), rule)) return true;
    return false;
  }

  ExprPtr parse_tuple(bool simplified, bool with_condexpr,
                      const std::vector<std::string>& extra_end_rules, bool explicit_parens) {
    DepthGuard guard(*this);
    const Token& at = current();
    std::vector<ExprPtr> args;
    bool is_tuple = false;
    while (true) {
      if (!args.empty()) expect(Tok::Comma);
      if (is_tuple_end(extra_end_rules)) break;
      if (simplified)
        args.push_back(parse_primary());
      else
        args.push_back(parse_expression(with_condexpr));
      if (current().type == Tok::Comma)
        is_tuple = true;
      else
        break;
    }
    if (!is_tuple) {
      if (!args.empty()) return std::move(args[0]);
      if (!explicit_parens) fail("Expected an expression, got " + quote(describe_token(current())));
    }
    auto node = make(at, new SequenceExpr(ExprKind::Tuple));
    node->items = std::move(args);
    return node;
  }

  ExprPtr parse_list() {
    const Token& at = expect(Tok::LBracket);
    auto node = make(at, new SequenceExpr(ExprKind::List));
    while (current().type != Tok::RBracket) {
      if (!node->items.empty()) expect(Tok::Comma);
      if (current().type == Tok::RBracket) break;
      node->items.push_back(parse_expression(true));
    }
    expect(Tok::RBracket);
    return node;
  }

  ExprPtr parse_dict() {
    const Token& at = expect(Tok::LBrace);
    auto node = make(at, new DictExpr);
    while (current().type != Tok::RBrace) {
      if (!node->items.empty()) expect(Tok::Comma);
      if (current().type == Tok::RBrace) break;
      ExprPtr key = parse_expression(true);
      expect(Tok::Colon);
      ExprPtr value = parse_expression(true);
      node->items.emplace_back(std::move(key), std::move(value));
    }
    expect(Tok::RBrace);
    return node;
  }

  ExprPtr parse_postfix(ExprPtr node) {
    while (true) {
      Tok t = current().type;
      const Expr* inner = node.get();
      std::uint32_t inner_height = inner->height;
      if (t == Tok::Dot || t == Tok::LBracket) {
        node = parse_subscript(std::move(node));
      } else if (t == Tok::LParen) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
      bound_height(*node, std::max(node->height - 1, inner_height));
    }
  }

  ExprPtr parse_filter_expr(ExprPtr node) {
    while (true) {
      std::uint32_t inner_height = node->height;
      if (current().type == Tok::Pipe) {
        node = parse_filter(std::move(node), false);
      } else if (current().is_name("is")) {
        node = parse_test(std::move(node));
      } else if (current().type == Tok::LParen) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
      bound_height(*node, std::max(node->height - 1, inner_height));
    }
  }

  ExprPtr parse_subscript(ExprPtr node) {
    DepthGuard guard(*this);
    const Token& token = next();
    if (token.type == Tok::Dot) {
      const Token& attr = next();
      if (attr.type == Tok::Name) {
        auto g = make(token, new GetattrExpr);
        g->object = std::move(node);
        g->attr = attr.text;
        return g;
      }
      if (attr.type != Tok::Integer) fail("expected name or number", attr);
      auto g = make(token, new GetitemExpr);
      g->object = std::move(node);
      auto c = make(attr, new ConstExpr);
      c->value = Value(static_cast<long long>(attr.int_value));
      g->index = std::move(c);
      return g;
    }
    // '['
    std::vector<ExprPtr> args;
    while (current().type != Tok::RBracket) {
      if (!args.empty()) expect(Tok::Comma);
      args.push_back(parse_subscribed());
    }
    expect(Tok::RBracket);
    auto g = make(token, new GetitemExpr);
    g->object = std::move(node);
    if (args.size() == 1) {
      g->index = std::move(args[0]);
    } else {
      auto tuple = make(token, new SequenceExpr(ExprKind::Tuple));
      tuple->items = std::move(args);
      g->index = std::move(tuple);
    }
    return g;
  }

  ExprPtr parse_subscribed() {
    const Token& at = current();
    ExprPtr start;
    if (current().type == Tok::Colon) {
      next();
    } else {
      ExprPtr e = parse_expression(true);
      if (current().type != Tok::Colon) return e;
      next();
      start = std::move(e);
    }
    auto slice = make(at, new SliceExpr);
    slice->start = std::move(start);
    Tok t = current().type;
    if (t != Tok::Colon && t != Tok::RBracket && t != Tok::Comma)
      slice->stop = parse_expression(true);
    if (current().type == Tok::Colon) {
      next();
      t = current().type;
      if (t != Tok::RBracket && t != Tok::Comma) slice->step = parse_expression(true);
    }
    return slice;
  }

  void parse_call_args(CallArguments& out) {
    const Token& paren = expect(Tok::LParen);
    bool require_comma = false;
    auto ensure = [&](bool ok) {
      if (!ok) fail("invalid syntax for function call expression", paren);
    };
    while (current().type != Tok::RParen) {
      if (require_comma) {
        expect(Tok::Comma);
        if (current().type == Tok::RParen) break;
      }
      if (current().type == Tok::Mul) {
        ensure(!out.dyn_args && !out.dyn_kwargs);
        next();
        out.dyn_args = parse_expression(true);
      } else if (current().type == Tok::Pow) {
        ensure(!out.dyn_kwargs);
        next();
        out.dyn_kwargs = parse_expression(true);
      } else if (current().type == Tok::Name && look().type == Tok::Assign) {
        ensure(!out.dyn_kwargs);
        std::string key = next().text;
        next();
        out.kwargs.push_back(Keyword{std::move(key), parse_expression(true)});
      } else {
        ensure(!out.dyn_args && !out.dyn_kwargs && out.kwargs.empty());
        out.args.push_back(parse_expression(true));
      }
      require_comma = true;
    }
    expect(Tok::RParen);
  }

  ExprPtr parse_call(ExprPtr node) {
    DepthGuard guard(*this);
    const Token& at = current();
    auto call = make(at, new CallExpr);
    call->callee = std::move(node);
    parse_call_args(call->arguments);
    return call;
  }

  ExprPtr parse_filter(ExprPtr node, bool start_inline) {
    while (current().type == Tok::Pipe || start_inline) {
      if (!start_inline) next();
      const Token& token = expect(Tok::Name);
      auto f = make(token, new FilterExpr);
      f->name = token.text;
      while (current().type == Tok::Dot) {
        next();
        f->name += "." + expect(Tok::Name).text;
      }
      if (current().type == Tok::LParen) parse_call_args(f->arguments);
      if (node) bound_height(*f, node->height);
      f->operand = std::move(node);
      node = std::move(f);
      start_inline = false;
    }
    return node;
  }

  ExprPtr parse_test(ExprPtr node) {
    const Token& token = next();  // 'is'
    bool negated = skip_if_name("not");
    auto t = make(token, new TestExpr);
    t->name = expect(Tok::Name).text;
    while (current().type == Tok::Dot) {
      next();
      t->name += "." + expect(Tok::Name).text;
    }
    Tok c = current().type;
    if (c == Tok::LParen) {
      parse_call_args(t->arguments);
    } else if ((c == Tok::Name || c == Tok::String || c == Tok::Integer || c == Tok::Float ||
                c == Tok::LBracket || c == Tok::LBrace) &&
               !current().is_name("else") && !current().is_name("or") &&
               !current().is_name("and")) {
      if (current().is_name("is")) fail("You cannot chain multiple tests with is");
      ExprPtr arg = parse_postfix(parse_primary());
      t->arguments.args.push_back(std::move(arg));
    }
    t->operand = std::move(node);
    if (!negated) return t;
    auto n = make(token, new UnaryExpr(ExprKind::Not));
    n->operand = std::move(t);
    return n;
  }
};

}  // namespace

Result<ParsedTemplate> parse_template(std::string_view source, const Limits& limits) {
  try {
    Parser parser(source, limits);
    return parser.run();
  } catch (ParseFailure& failure) {
    return std::move(failure.error);
  } catch (const std::bad_alloc&) {
    return Error{"MemoryError", "out of memory while parsing the template", 0, 0, {}};
  }
}

}  // namespace chatwire::jinja
