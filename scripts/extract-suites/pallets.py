#!/usr/bin/env python3
"""Extracts render cases from pallets/jinja's pytest suite into
data/suites/pallets.jsonl, then runs the oracle over them.

Usage: pallets.py <checkout>/tests COMMIT

The test modules are parsed with Python's `ast` (never imported or run). In each
test function, in source order:
  - `X = <env>.from_string(<expr>)` and `X = Template(<expr>)` bind a template;
  - `X.render(...)`, `<env>.from_string(<expr>).render(...)` and
    `pytest.raises(E, X.render, ...)` are render cases;
  - `pytest.raises(E, <env>.from_string, <expr>)` and `from_string` inside
    `with pytest.raises(...)` are compile-only cases (rendered with no variables).
Template sources and render arguments are taken only where they are literals (or
f-strings over @pytest.mark.parametrize values, `list(range(n))`, `dict(k=v)`) and
JSON can express them; tuples become JSON lists (noted). Environments: the `env`
fixture (plain `Environment()`), module fixtures returning `Environment(...)`, and
`Environment`/`SandboxedEnvironment`/`ImmutableSandboxedEnvironment(...)` built
in the test with literal settings. Anything else (loaders, custom filters,
extensions other than loopcontrols/do, Python objects in the context, async) is
skipped and counted in pallets.skipped.tsv.

The oracle always renders with HF's environment; "upstream_settings" records the
environment the upstream test used and "depends_on_settings" says whether Jinja2
renders the case differently there (checked here by building that environment).
The upstream assertions (expected outputs) are not used.
"""
import ast
import re
import os
import sys

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEnvironment

import suitelib

REPO = "pallets/jinja"
MODULES = ("test_core_tags", "test_filters", "test_tests", "test_lexnparse", "test_security",
           "test_ext", "test_regression")
ENV_CLASSES = ("Environment", "SandboxedEnvironment", "ImmutableSandboxedEnvironment")
# Environment keyword arguments a case may carry as plain settings.
SETTING_KWARGS = ("autoescape", "trim_blocks", "lstrip_blocks", "keep_trailing_newline",
                  "block_start_string", "block_end_string", "variable_start_string",
                  "variable_end_string", "comment_start_string", "comment_end_string",
                  "line_statement_prefix", "line_comment_prefix", "newline_sequence",
                  "extensions", "undefined")
# Environment's leading positional parameters, in order.
POSITIONAL_SETTINGS = ("block_start_string", "block_end_string", "variable_start_string",
                       "variable_end_string", "comment_start_string", "comment_end_string",
                       "line_statement_prefix", "line_comment_prefix", "trim_blocks", "lstrip_blocks",
                       "newline_sequence", "keep_trailing_newline")
EXTENSIONS = {"jinja2.ext.loopcontrols": jinja2.ext.loopcontrols, "jinja2.ext.do": jinja2.ext.do}
UNDEFINEDS = {"Undefined": jinja2.Undefined, "StrictUndefined": jinja2.StrictUndefined,
              "DebugUndefined": jinja2.DebugUndefined, "ChainableUndefined": jinja2.ChainableUndefined}


class Unsupported(Exception):
    """A construct this extractor does not turn into a case (the reason is the message)."""


class Tuple(list):
    """A Python tuple given to a template; stored as a JSON list."""


def evaluate(node, names):
    """Evaluates a literal-ish expression; `names` holds parametrize values."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bytes):
            raise Unsupported("bytes value")
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(part.value)
            else:
                value = evaluate(part.value, names)
                conv = {-1: lambda v: v, 115: str, 114: repr, 97: ascii}[part.conversion]
                spec = evaluate(part.format_spec, names) if part.format_spec else ""
                out.append(format(conv(value), spec))
        return "".join(out)
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        if node.id in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.id]
        raise Unsupported(f"non-literal name {node.id}")
    if isinstance(node, ast.List):
        return [evaluate(e, names) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return Tuple(evaluate(e, names) for e in node.elts)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise Unsupported("dict unpacking")
        return {evaluate(k, names): evaluate(v, names) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -evaluate(node.operand, names)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult, ast.Mod)):
        left, right = evaluate(node.left, names), evaluate(node.right, names)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Mult):
            return left * right
        return left % right
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        fn = node.func.id
        if fn == "list" and len(node.args) == 1 and not node.keywords:
            inner = node.args[0]
            if (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name)
                    and inner.func.id == "range" and not inner.keywords):
                return list(range(*[evaluate(a, names) for a in inner.args]))
            value = evaluate(inner, names)
            if isinstance(value, (list, str)):
                return list(value)
        if fn == "dict" and not node.args:
            return {k.arg: evaluate(k.value, names) for k in node.keywords if k.arg}
    raise Unsupported(f"non-literal expression {ast.unparse(node)[:60]!r}")


def to_json(value, where):
    """JSON form of a context value, and whether a tuple became a list."""
    if value is None or isinstance(value, (bool, int, str)):
        return value, False
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise Unsupported(f"{where} is not a finite float")
        return value, False
    if isinstance(value, list):
        items = [to_json(v, f"{where}[{i}]") for i, v in enumerate(value)]
        return [v for v, _ in items], isinstance(value, Tuple) or any(t for _, t in items)
    if isinstance(value, dict):
        out, tup = {}, False
        for k, v in value.items():
            if not isinstance(k, str):
                raise Unsupported(f"{where} has a non-string key {k!r}")
            out[k], t = to_json(v, f"{where}[{k!r}]")
            tup = tup or t
        return out, tup
    raise Unsupported(f"{where} is a {type(value).__name__}")


def env_settings(call, names):
    """Settings of `Environment(...)`-like constructor calls with literal arguments."""
    if len(call.args) > len(POSITIONAL_SETTINGS):
        raise Unsupported("too many positional Environment arguments")
    settings = {"class": call.func.id}
    for name, arg in zip(POSITIONAL_SETTINGS, call.args):
        settings[name] = evaluate(arg, names)
    for kw in call.keywords:
        if kw.arg not in SETTING_KWARGS:
            raise Unsupported(f"Environment({kw.arg}=...)")
        if kw.arg == "undefined":
            if not (isinstance(kw.value, ast.Name) and kw.value.id in UNDEFINEDS):
                raise Unsupported("custom undefined")
            settings["undefined"] = kw.value.id
            continue
        value = evaluate(kw.value, names)
        if kw.arg == "extensions":
            if any(e not in EXTENSIONS for e in value):
                raise Unsupported(f"extensions {value}")
            value = list(value)
        settings[kw.arg] = value
    return settings


def build_env(settings):
    """A real Jinja2 environment with the upstream settings (HF's globals kept)."""
    kw = {k: v for k, v in settings.items() if k not in ("class", "extensions", "undefined")}
    cls = {"Environment": jinja2.Environment, "SandboxedEnvironment": SandboxedEnvironment,
           "ImmutableSandboxedEnvironment": ImmutableSandboxedEnvironment}[settings["class"]]
    env = cls(extensions=[EXTENSIONS[e] for e in settings.get("extensions", [])],
              undefined=UNDEFINEDS[settings.get("undefined", "Undefined")], **kw)
    return env


HF_SETTINGS = {"class": "ImmutableSandboxedEnvironment", "trim_blocks": True, "lstrip_blocks": True,
               "extensions": ["jinja2.ext.loopcontrols"]}


def outcome(settings, template, context):
    return suitelib.jinja2_outcome(build_env(settings), template, context)


def parametrizations(func):
    """The list of name->value bindings of a test's @pytest.mark.parametrize decorators."""
    combos = [{}]
    for deco in func.decorator_list:
        if not (isinstance(deco, ast.Call) and ast.unparse(deco.func) == "pytest.mark.parametrize"):
            if ast.unparse(deco).startswith("pytest.mark.skip"):
                raise Unsupported("skipped upstream")
            continue
        argnames = evaluate(deco.args[0], {})
        argnames = [a.strip() for a in argnames.split(",")] if isinstance(argnames, str) else list(argnames)
        rows = []
        for elt in deco.args[1].elts if isinstance(deco.args[1], (ast.List, ast.Tuple)) else []:
            if isinstance(elt, ast.Call) and ast.unparse(elt.func) == "pytest.param":
                elt = ast.Tuple(elts=elt.args)
            try:
                values = evaluate(elt, {})
                values = list(values) if len(argnames) > 1 else [values]
                rows.append(dict(zip(argnames, values)))
            except Unsupported as e:  # one parameter row that is not literal
                rows.append(Unsupported(f"parametrize row {len(rows)}: {e}"))
        if not rows:
            raise Unsupported("non-literal parametrize")
        combos = [r if isinstance(r, Unsupported) else c if isinstance(c, Unsupported) else dict(c, **r)
                  for c in combos for r in rows]
    return combos


class FunctionExtractor:
    """Walks one test function body in source order and collects cases."""

    def __init__(self, func, names, fixtures, module):
        self.func, self.names, self.module = func, names, module
        self.envs = {}  # variable -> settings, or an Unsupported reason string
        for arg in func.args.args:
            if arg.arg == "env":
                self.envs["env"] = {"class": "Environment"}
            elif arg.arg in fixtures:
                self.envs[arg.arg] = fixtures[arg.arg]
        self.templates = {}  # variable -> (source, settings, line)
        self.cases, self.skips = [], []
        self.consumed = set()

    def env_of(self, node):
        """Settings of the environment expression `node` (a name or a constructor call)."""
        if isinstance(node, ast.Name) and node.id in self.envs:
            env = self.envs[node.id]
            if isinstance(env, str):
                raise Unsupported(env)
            return env
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ENV_CLASSES:
            return env_settings(node, self.names)
        raise Unsupported(f"environment {ast.unparse(node)[:40]!r}")

    def template_of(self, node):
        """(source, settings, line) for a template expression, or None if not one."""
        if isinstance(node, ast.Name) and node.id in self.templates:
            t = self.templates[node.id]
            if isinstance(t, str):
                raise Unsupported(t)
            return t
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "from_string":
            self.consumed.add(id(node))
            if len(node.args) != 1 or node.keywords:
                raise Unsupported("from_string with globals")
            source = evaluate(node.args[0], self.names)
            return source, self.env_of(node.func.value), node.lineno
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Template":
            self.consumed.add(id(node))
            if len(node.args) != 1:
                raise Unsupported("Template() with settings")
            settings = env_settings(ast.Call(func=ast.Name(id="Environment"), args=[], keywords=node.keywords), self.names)
            return evaluate(node.args[0], self.names), settings, node.lineno
        return None

    def add_case(self, template, args, keywords, line):
        source, settings, _ = template
        context = {}
        for a in args:
            value = evaluate(a.value if isinstance(a, ast.Starred) else a, self.names)
            if not isinstance(value, dict):
                raise Unsupported("positional render argument")
            context.update(value)
        if not isinstance(source, str):
            raise Unsupported("template source is not a string")
        dropped = []
        for kw in keywords:
            try:
                value = to_json(evaluate(kw.value, self.names), kw.arg or "**kwargs")[0]
            except Unsupported:
                # A Python object the template never names can be left out.
                if kw.arg is None or re.search(rf"\b{re.escape(kw.arg)}\b", source):
                    raise
                dropped.append(kw.arg)
                continue
            if kw.arg is None:
                context.update(evaluate(kw.value, self.names))
            else:
                context[kw.arg] = evaluate(kw.value, self.names)
        context, had_tuple = to_json(context, "context")
        self.cases.append({"template": source, "context": context, "settings": settings,
                           "line": line, "tuple": had_tuple, "dropped": dropped})

    def guarded(self, fn, node):
        try:
            fn()
        except Unsupported as e:
            self.skips.append((node.lineno, str(e)))

    def visit(self, node, in_raises=False):
        if isinstance(node, ast.With):
            raises = any(isinstance(i.context_expr, ast.Call) and ast.unparse(i.context_expr.func) == "pytest.raises"
                         for i in node.items)
            for stmt in node.body:
                self.visit(stmt, in_raises or raises)
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            if ast.walk(node) and any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                                      and n.func.attr in ("render", "from_string") for n in ast.walk(node)):
                self.skips.append((node.lineno, "render inside a nested function or class"))
            return
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, value = node.targets[0].id, node.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ENV_CLASSES:
                try:
                    self.envs[name] = env_settings(value, self.names)
                except Unsupported as e:
                    self.envs[name] = str(e)
                return
            if name in self.envs:
                self.envs[name] = f"environment from {ast.unparse(value)[:40]!r}"
            # A local bound to a literal (e.g. `users = [{...}]`) can feed render().
            self.names = dict(self.names)
            try:
                self.names[name] = evaluate(value, self.names)
            except Unsupported:
                self.names.pop(name, None)
            try:
                t = self.template_of(value)
                if t is not None:
                    self.templates[name] = t
                    return
                self.templates[name] = f"{name} bound to {ast.unparse(value)[:40]!r}"
            except Unsupported as e:
                self.templates[name] = str(e)
                return
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            for target in getattr(node, "targets", [getattr(node, "target", None)]):
                base = target
                while isinstance(base, (ast.Attribute, ast.Subscript)):
                    base = base.value
                if isinstance(base, ast.Name) and base.id in self.envs and base is not target:
                    self.envs[base.id] = "environment customised in the test"
        if isinstance(node, ast.Call):
            self.visit_call(node, in_raises)
        for child in ast.iter_child_nodes(node):
            self.visit(child, in_raises)

    def visit_call(self, node, in_raises):
        func = node.func
        # env.filters.update(...), env.globals["x"] = ... style customisation
        chain, base = [], func
        while isinstance(base, (ast.Attribute, ast.Subscript)):
            if isinstance(base, ast.Attribute):
                chain.append(base.attr)
            base = base.value
        if isinstance(base, ast.Name) and base.id in self.envs and \
                set(chain) & {"filters", "globals", "tests", "policies", "add_extension", "extend"}:
            self.envs[base.id] = "environment customised in the test"
        # X.render(...) / env.from_string(...).render(...)
        if isinstance(func, ast.Attribute) and func.attr == "render":
            def render():
                t = self.template_of(func.value)
                if t is None:
                    raise Unsupported(f"render on {ast.unparse(func.value)[:40]!r}")
                self.add_case(t, node.args, node.keywords, node.lineno)
            self.guarded(render, node)
            return
        if isinstance(func, ast.Attribute) and func.attr in ("render_async", "generate", "stream",
                                                            "make_module", "get_template"):
            self.skips.append((node.lineno, f"uses {func.attr}()"))
            return
        if ast.unparse(func) == "pytest.raises" and len(node.args) >= 2:
            target = node.args[1]
            if isinstance(target, ast.Attribute) and target.attr == "render":
                def raises_render():
                    t = self.template_of(target.value)
                    if t is None:
                        raise Unsupported("render on a non-template")
                    self.add_case(t, node.args[2:], node.keywords, node.lineno)
                self.guarded(raises_render, node)
            elif isinstance(target, ast.Attribute) and target.attr == "from_string":
                def raises_compile():
                    source = evaluate(node.args[2], self.names)
                    self.add_case((source, self.env_of(target.value), node.lineno), [], [], node.lineno)
                self.guarded(raises_compile, node)
            elif isinstance(target, ast.Name) and target.id == "Template":
                self.guarded(lambda: self.add_case((evaluate(node.args[2], self.names), {"class": "Environment"},
                                                    node.lineno), [], [], node.lineno), node)
            return
        if in_raises and isinstance(func, ast.Attribute) and func.attr == "from_string" and id(node) not in self.consumed:
            def compile_only():
                t = self.template_of(node)
                self.add_case(t, [], [], node.lineno)
            self.guarded(compile_only, node)


def extract_module(path, commit):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    module = os.path.basename(path)[:-3]
    fixtures = {}
    for node in tree.body:  # module-level fixtures returning an Environment(...)
        if isinstance(node, ast.FunctionDef) and any("fixture" in ast.unparse(d) for d in node.decorator_list):
            ret = [s for s in node.body if isinstance(s, ast.Return)]
            if ret and isinstance(ret[0].value, ast.Call) and isinstance(ret[0].value.func, ast.Name) \
                    and ret[0].value.func.id in ENV_CLASSES:
                try:
                    fixtures[node.name] = env_settings(ret[0].value, {})
                except Unsupported as e:
                    fixtures[node.name] = str(e)
    functions = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            functions += [(f"{node.name}.{f.name}", f) for f in node.body
                          if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name.startswith("test_")]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_"):
            functions.append((node.name, node))
    cases, skipped, stats = [], [], {"functions": len(functions), "with_cases": 0, "skipped_calls": 0}
    for qualname, func in functions:
        where = f"{REPO}@{commit}:tests/{module}.py:{func.lineno}"
        if isinstance(func, ast.AsyncFunctionDef):
            skipped.append((f"pallets/{module}/{qualname}", where, "async test"))
            continue
        try:
            combos = parametrizations(func)
        except Unsupported as e:
            skipped.append((f"pallets/{module}/{qualname}", where, str(e)))
            continue
        found, skips = [], []
        for i, names in enumerate(combos):
            if isinstance(names, Unsupported):
                skips.append((func.lineno, str(names)))
                continue
            fx = FunctionExtractor(func, names, fixtures, module)
            for stmt in func.body:
                fx.visit(stmt)
            suffix = f"[{i}]" if len(combos) > 1 else ""
            for case in fx.cases:
                case["base"] = f"pallets/{module}/{qualname}{suffix}"
            found += fx.cases
            skips += fx.skips
        if found:
            stats["with_cases"] += 1
        stats["skipped_calls"] += len(skips)
        for line, reason in dict.fromkeys(skips):
            skipped.append((f"pallets/{module}/{qualname}", f"{REPO}@{commit}:tests/{module}.py:{line}", reason))
        if not found and not skips:
            skipped.append((f"pallets/{module}/{qualname}", where, "no template rendered through from_string/render"))
        for case in found:
            case["source"] = f"{REPO}@{commit}:tests/{module}.py:{case['line']}"
        cases += found
    return cases, skipped, stats


def main(argv):
    tests_dir, commit = argv[1], argv[2]
    all_cases, all_skipped, report = [], [], []
    for module in MODULES:
        cases, skipped, stats = extract_module(os.path.join(tests_dir, module + ".py"), commit)
        report.append(f"{module}: {stats['functions']} test functions, {stats['with_cases']} with cases, "
                      f"{len(cases)} cases, {stats['skipped_calls']} render calls skipped")
        all_cases += cases
        all_skipped += skipped
    seen, out = set(), []
    for c in all_cases:
        case = {"id": suitelib.unique_id(seen, c["base"]), "source": c["source"], "template": c["template"],
                "context": c["context"], "upstream_settings": c["settings"]}
        notes = []
        if c["tuple"]:
            notes.append("upstream passed a tuple; given here as a JSON list")
        if c["dropped"]:
            notes.append(f"left out render argument(s) the template does not use: {', '.join(c['dropped'])}")
        if notes:
            case["notes"] = "; ".join(notes)
        out.append(case)
    suitelib.run_oracle(out)
    for case in out:
        if (case["oracle"].get("timeout") or case["oracle"].get("error_type") == "MemoryError"
                or "compare" in case["oracle"]):
            case["depends_on_settings"] = None  # unknown: a resource bomb, or output not a function of input
            continue
        up = outcome(case["upstream_settings"], case["template"], case["context"])
        hf = outcome(HF_SETTINGS, case["template"], case["context"])
        case["depends_on_settings"] = up != hf
        if case["depends_on_settings"]:
            note = ("Jinja2 renders this differently in the upstream test's environment "
                    "(see upstream_settings); recorded as HF renders it")
            case["notes"] = f"{case['notes']}; {note}" if "notes" in case else note
    suitelib.write_suite(os.path.join(suitelib.SUITES_DIR, "pallets.jsonl"), out)
    with open(os.path.join(suitelib.SUITES_DIR, "pallets.skipped.tsv"), "w", encoding="utf-8") as f:
        f.write("id\tsource\treason\n")
        for s in all_skipped:
            f.write("\t".join(s) + "\n")
    print("\n".join(report))
    dep = sum(bool(c["depends_on_settings"]) for c in out)
    print(f"pallets: {suitelib.summary(out)}; {dep} depend on settings; {len(all_skipped)} skip records")


if __name__ == "__main__":
    main(sys.argv)
