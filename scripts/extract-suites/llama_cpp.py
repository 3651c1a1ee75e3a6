#!/usr/bin/env python3
"""Extracts the inline cases of llama.cpp's tests/test-jinja.cpp into
data/suites/llama_cpp.jsonl (inputs only), then runs the oracle over them.

Usage: llama_cpp.py /tmp/suites/llama/test-jinja.cpp [COMMIT]

Each `test_template(t, name, template, vars, expect)` call is located; its name,
template and vars arguments are C++ expressions (string literals, nlohmann
initializer lists), so they are evaluated by a throw-away C++ program that this
script writes into a scratch directory and compiles against the system's
nlohmann-json; that program prints them as JSON. The `expect` argument is ignored:
expected results come from the oracle only.
"""
import os
import re
import sys

import cpplib
import suitelib

REPO = "ggml-org/llama.cpp"
DEFAULT_COMMIT = "01eac57fe149a36e9560978a783dba7ad76a0861"
FILE = "tests/test-jinja.cpp"

CALL = re.compile(r"^\s*test_template\(\s*t\s*,", re.M)
GROUP = re.compile(r"^static void (test_\w+)\(testing & t\) \{", re.M)


def find_calls(src):
    # Comment lines ("// test_template(...)") are blanked, keeping offsets and lines.
    masked = cpplib.blank_line_comments(src)
    groups = [(m.start(), m.group(1)) for m in GROUP.finditer(masked)]
    calls = []
    for m in CALL.finditer(masked):
        args, _ = cpplib.split_call_args(masked, m.end())
        if len(args) != 4:
            raise ValueError(f"unexpected arity at offset {m.start()}: {args}")
        line = cpplib.line_of(src, m.start() + len(m.group(0)) - len(m.group(0).lstrip()))
        group = [g for pos, g in groups if pos < m.start()][-1]
        calls.append({"line": line, "group": group, "name": args[0], "template": args[1],
                      "vars": args[2]})
    return calls


def main(argv):
    path = argv[1]
    commit = argv[2] if len(argv) > 2 else DEFAULT_COMMIT
    with open(path, encoding="utf-8") as f:
        src = f.read()
    calls = find_calls(src)
    values = cpplib.evaluate(calls, {"name": "std::string", "template": "std::string", "vars": "json"})
    seen, cases = set(), []
    for c, v in zip(calls, values):
        group = c["group"][len("test_"):]
        cases.append({
            "id": suitelib.unique_id(seen, f"llama_cpp/{group}/{v['name']}"),
            "source": f"{REPO}@{commit}:{FILE}:{c['line']}",
            "template": v["template"],
            "context": v["vars"] if isinstance(v["vars"], dict) else {},
            "notes": None if isinstance(v["vars"], dict) else f"vars was not an object: {v['vars']!r}",
        })
        if cases[-1]["notes"] is None:
            del cases[-1]["notes"]
    suitelib.run_oracle(cases)
    out = os.path.join(suitelib.SUITES_DIR, "llama_cpp.jsonl")
    suitelib.write_suite(out, cases)
    print(f"llama_cpp: {suitelib.summary(cases)}")


if __name__ == "__main__":
    main(sys.argv)
