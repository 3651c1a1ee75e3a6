#!/usr/bin/env python3
"""Extracts minijinja's template test inputs (minijinja/tests/inputs/*.txt|html:
a JSON context, a line `---`, then the template) into data/suites/minijinja.jsonl,
then runs the oracle over them.

Usage: minijinja.py <checkout>/minijinja/tests/inputs COMMIT [<checkout>/minijinja-contrib/tests/pycompat.rs]

With the third argument, the Python-method expressions of minijinja-contrib's pycompat
tests are added as "{{ expression }}" cases.

minijinja renders these with its own settings: trim_blocks=false,
lstrip_blocks=false, keep_trailing_newline=false, lenient undefined unless the JSON
has "$settings" (e.g. {"undefined": "strict"}), HTML auto-escaping for *.html, and
the templates of inputs/refs/ loadable by name. The oracle always uses HF's
environment, so each case records what HF renders; "upstream_settings" keeps
minijinja's settings and "depends_on_settings" says whether Jinja2 itself renders the
case differently under them (checked here with a plain Jinja2 environment).
Cases whose context needs minijinja's host objects (one_shot_iterator, get_args) are
skipped and listed in minijinja.skipped.tsv. Upstream snapshots are not used.
"""
import json
import os
import re
import sys

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

import suitelib

REPO = "mitsuhiko/minijinja"
DIR = "minijinja/tests/inputs"
# Names the upstream harness injects as Rust objects; JSON cannot express them.
HOST_OBJECTS = ("one_shot_iterator", "get_args")


def upstream_settings(name, settings):
    s = {"trim_blocks": False, "lstrip_blocks": False, "keep_trailing_newline": False,
         "undefined": "lenient", "autoescape": name.endswith(".html")}
    s.update(settings)
    return s


def render_jinja2(template, context, s, refs):
    """The case rendered by Jinja2 with minijinja's settings (HF's globals kept)."""
    env = ImmutableSandboxedEnvironment(
        trim_blocks=s["trim_blocks"], lstrip_blocks=s["lstrip_blocks"],
        keep_trailing_newline=s["keep_trailing_newline"], autoescape=s["autoescape"],
        undefined=jinja2.StrictUndefined if s["undefined"] == "strict" else jinja2.Undefined,
        loader=jinja2.DictLoader(refs), extensions=[jinja2.ext.loopcontrols])
    return suitelib.jinja2_outcome(env, template, context)


# minijinja-contrib/tests/pycompat.rs evaluates Python-method expressions with
# eval_expr("...") / eval_err_expr("..."); each becomes the template "{{ <expr> }}".
PYCOMPAT_FILE = "minijinja-contrib/tests/pycompat.rs"
EVAL_CALL = re.compile(r'\beval(?:_err)?_expr\(\s*"((?:[^"\\]|\\.)*)"\s*\)', re.S)
RUST_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "'": "'", "0": "\0"}


def rust_string(body):
    """Value of a Rust "..." literal body (simple escapes and \\u{...})."""
    out, i = [], 0
    while i < len(body):
        if body[i] != "\\":
            out.append(body[i])
            i += 1
        elif body[i + 1] == "u":
            end = body.index("}", i)
            out.append(chr(int(body[i + 3:end], 16)))
            i = end + 1
        else:
            out.append(RUST_ESCAPES[body[i + 1]])
            i += 2
    return "".join(out)


def pycompat_cases(path, commit):
    with open(path, encoding="utf-8") as fh:
        src = fh.read()
    cases = []
    for m in EVAL_CALL.finditer(src):
        line = src.count("\n", 0, m.start()) + 1
        cases.append({"id": f"minijinja/pycompat/line{line}",
                      "source": f"{REPO}@{commit}:{PYCOMPAT_FILE}:{line}",
                      "template": "{{ " + rust_string(m.group(1)) + " }}", "context": {},
                      "upstream_settings": {"expression": True, "unknown_method_callback": "pycompat"},
                      "notes": "an expression upstream evaluates with compile_expression(); "
                               "rendered here as {{ expression }}"})
    return cases


def pycompat_skipped(path, commit):
    """Expressions the pycompat tests evaluate with a host function registered."""
    with open(path, encoding="utf-8") as fh:
        src = fh.read()
    return [(f"minijinja/pycompat/line{src.count(chr(10), 0, m.start()) + 1}",
             f"{REPO}@{commit}:{PYCOMPAT_FILE}:{src.count(chr(10), 0, m.start()) + 1}",
             "uses a Rust host function registered with add_global")
            for m in re.finditer(r'\.compile_expression\(\s*"', src)]


def main(argv):
    inputs, commit = argv[1], argv[2]
    pycompat = argv[3] if len(argv) > 3 else None
    refs = {}
    for f in sorted(os.listdir(os.path.join(inputs, "refs"))):
        with open(os.path.join(inputs, "refs", f), encoding="utf-8") as fh:
            refs[f] = fh.read()
    cases, skipped = [], []
    for name in sorted(os.listdir(inputs)):
        path = os.path.join(inputs, name)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        head, sep, template = text.partition("\n---\n")
        if not sep:
            raise ValueError(f"{name}: no --- separator")
        line = head.count("\n") + 3  # first line of the template
        source = f"{REPO}@{commit}:{DIR}/{name}:{line}"
        cid = f"minijinja/{name.rsplit('.', 1)[0]}" + ("" if name.endswith(".txt") else f".{name.rsplit('.', 1)[1]}")
        used = [h for h in HOST_OBJECTS if h in template]
        if used:
            skipped.append((cid, source, f"uses the upstream harness's Rust host object(s) {', '.join(used)}"))
            continue
        context = json.loads(head)
        settings = upstream_settings(name, context.pop("$settings", {}))
        case = {"id": cid, "source": source, "template": template, "context": context,
                "upstream_settings": settings}
        cases.append(case)
    if pycompat:
        cases += pycompat_cases(pycompat, commit)
        skipped += pycompat_skipped(pycompat, commit)
    suitelib.run_oracle(cases)
    hf_settings = {"trim_blocks": True, "lstrip_blocks": True, "keep_trailing_newline": False,
                   "undefined": "lenient", "autoescape": False}
    for case in cases:
        if "expression" in case["upstream_settings"]:
            case["depends_on_settings"] = False  # no template settings apply to an expression
            continue
        if (case["oracle"].get("timeout") or case["oracle"].get("error_type") == "MemoryError"
                or "compare" in case["oracle"]):
            case["depends_on_settings"] = None  # unknown: a resource bomb, or output not a function of input
            continue
        hf = render_jinja2(case["template"], case["context"], hf_settings, refs)
        up = render_jinja2(case["template"], case["context"], case["upstream_settings"], refs)
        case["depends_on_settings"] = hf != up
        notes = []
        if case["depends_on_settings"]:
            notes.append("Jinja2 renders this differently under minijinja's settings "
                         "(see upstream_settings); recorded as HF renders it")
        if any(r in case["template"] for r in refs):
            notes.append("refers to upstream templates in inputs/refs/, which HF's environment "
                         "(no loader) cannot load")
        if notes:
            case["notes"] = "; ".join(notes)
    suitelib.write_suite(os.path.join(suitelib.SUITES_DIR, "minijinja.jsonl"), cases)
    with open(os.path.join(suitelib.SUITES_DIR, "minijinja.skipped.tsv"), "w", encoding="utf-8") as f:
        f.write("id\tsource\treason\n")
        for s in skipped:
            f.write("\t".join(s) + "\n")
    dep = sum(bool(c["depends_on_settings"]) for c in cases)
    print(f"minijinja: {suitelib.summary(cases)}; {dep} depend on settings; {len(skipped)} skipped")


if __name__ == "__main__":
    main(sys.argv)
