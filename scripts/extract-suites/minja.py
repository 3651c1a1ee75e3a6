#!/usr/bin/env python3
"""Extracts the cases of google/minja's tests/test-syntax.cpp into
data/suites/minja.jsonl (inputs only), then runs the oracle over them.

Usage: minja.py /tmp/suites/minja-test-syntax.cpp COMMIT

Each `render(template, bindings, options)` call is located (cpplib); template and
bindings are C++ expressions evaluated by a throw-away program compiled against the
system's nlohmann-json (`std::string x = ...;` helper variables of the test are placed
before them). `options` names one of the test's whitespace settings ({} = minja's
defaults: no trim_blocks, no lstrip_blocks); it is kept as upstream_settings. Upstream
checks its cases against plain `jinja2.Environment` (not sandboxed) in its Python mode;
cases guarded by `if (!getenv("USE_JINJA2"))` are checked only against minja upstream
and are noted. Expected outputs are not used.
"""
import os
import re
import sys

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

import cpplib
import suitelib

REPO = "google/minja"
FILE = "tests/test-syntax.cpp"
OPTIONS = {  # the test's named minja::Options
    "{}": {"trim_blocks": False, "lstrip_blocks": False},
    "lstrip_blocks": {"trim_blocks": False, "lstrip_blocks": True},
    "trim_blocks": {"trim_blocks": True, "lstrip_blocks": False},
    "lstrip_trim_blocks": {"trim_blocks": True, "lstrip_blocks": True},
}
CALL = re.compile(r"(?<![\w>.])render\(")
STRING_DECL = re.compile(r"^\s*std::string (\w+) =", re.M)
MINJA_ONLY = 'if (!getenv("USE_JINJA2")) {'


def block_ranges(src, opener):
    """[start, end) offsets of the brace blocks opened by `opener`."""
    ranges = []
    for m in re.finditer(re.escape(opener), src):
        _, end = cpplib.split_call_args(src, m.end())  # scans to the matching '}'
        ranges.append((m.start(), end))
    return ranges


def main(argv):
    path, commit = argv[1], argv[2]
    with open(path, encoding="utf-8") as f:
        src = cpplib.blank_line_comments(f.read())
    minja_only = block_ranges(src, MINJA_ONLY)
    # Helper strings the test body declares (e.g. `std::string trim_tmpl = ...;`).
    body_start = src.index("TEST(")
    prelude = []
    for m in STRING_DECL.finditer(src, body_start):
        prelude.append("  " + src[m.start():cpplib.statement_end(src, m.end())].strip() + ";\n")
    calls = []
    for m in CALL.finditer(src):
        if src[max(0, m.start() - 12):m.start()].endswith("std::string "):
            continue  # the helper's own definition
        args, _ = cpplib.split_call_args(src, m.end())
        if len(args) != 3:
            raise ValueError(f"line {cpplib.line_of(src, m.start())}: unexpected arguments {args}")
        if args[2] not in OPTIONS:
            raise ValueError(f"unknown options {args[2]!r}")
        calls.append({"line": cpplib.line_of(src, m.start()), "template": args[0], "bindings": args[1],
                      "options": args[2],
                      "minja_only": any(a <= m.start() < b for a, b in minja_only)})
    values = cpplib.evaluate(calls, {"template": "std::string", "bindings": "json"}, "".join(prelude))
    seen, cases = set(), []
    for c, v in zip(calls, values):
        bindings = v["bindings"] if isinstance(v["bindings"], dict) else {}
        case = {"id": suitelib.unique_id(seen, f"minja/SimpleCases/line{c['line']}"),
                "source": f"{REPO}@{commit}:{FILE}:{c['line']}",
                "template": v["template"], "context": bindings,
                "upstream_settings": dict(OPTIONS[c["options"]], keep_trailing_newline=False)}
        if c["minja_only"]:
            case["notes"] = "upstream checks this case against minja only (not in its Jinja2 mode)"
        cases.append(case)
    suitelib.run_oracle(cases)
    for case in cases:
        if (case["oracle"].get("timeout") or case["oracle"].get("error_type") == "MemoryError"
                or "compare" in case["oracle"]):
            case["depends_on_settings"] = None  # unknown: a resource bomb, or output not a function of input
            continue
        s = case["upstream_settings"]
        upstream_env = jinja2.Environment(trim_blocks=s["trim_blocks"], lstrip_blocks=s["lstrip_blocks"],
                                          extensions=[jinja2.ext.loopcontrols])
        hf_env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                              extensions=[jinja2.ext.loopcontrols])
        up = suitelib.jinja2_outcome(upstream_env, case["template"], case["context"])
        hf = suitelib.jinja2_outcome(hf_env, case["template"], case["context"])
        case["depends_on_settings"] = up != hf
        if up != hf:
            note = ("Jinja2 renders this differently in upstream's environment (plain Environment, "
                    "see upstream_settings); recorded as HF renders it")
            case["notes"] = f"{case['notes']}; {note}" if "notes" in case else note
    suitelib.write_suite(os.path.join(suitelib.SUITES_DIR, "minja.jsonl"), cases)
    dep = sum(bool(c["depends_on_settings"]) for c in cases)
    print(f"minja: {suitelib.summary(cases)}; {dep} depend on settings")


if __name__ == "__main__":
    main(sys.argv)
