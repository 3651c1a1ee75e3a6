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
import json
import os
import re
import subprocess
import sys
import tempfile

import suitelib

REPO = "ggml-org/llama.cpp"
DEFAULT_COMMIT = "01eac57fe149a36e9560978a783dba7ad76a0861"
FILE = "tests/test-jinja.cpp"

CALL = re.compile(r"^\s*test_template\(\s*t\s*,", re.M)
GROUP = re.compile(r"^static void (test_\w+)\(testing & t\) \{", re.M)


def split_call_args(src, start):
    """Splits the argument list of the call whose '(' precedes `start` at top-level
    commas, honouring string/char literals and nesting. Returns (args, end)."""
    args, depth, i, cur = [], 0, start, start
    while i < len(src):
        ch = src[i]
        if ch in "\"'":
            quote = ch
            i += 1
            while src[i] != quote:
                i += 2 if src[i] == "\\" else 1
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                args.append(src[cur:i].strip())
                return args, i
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(src[cur:i].strip())
            cur = i + 1
        i += 1
    raise ValueError("unterminated call")


def find_calls(src):
    # Comment lines ("// test_template(...)") are blanked, keeping offsets and lines.
    masked = re.sub(r"^\s*//.*$", lambda m: " " * len(m.group(0)), src, flags=re.M)
    groups = [(m.start(), m.group(1)) for m in GROUP.finditer(masked)]
    calls = []
    for m in CALL.finditer(masked):
        args, _ = split_call_args(masked, m.end())
        if len(args) != 4:
            raise ValueError(f"unexpected arity at offset {m.start()}: {args}")
        line = src.count("\n", 0, m.start() + len(m.group(0)) - len(m.group(0).lstrip())) + 1
        group = [g for pos, g in groups if pos < m.start()][-1]
        calls.append({"line": line, "group": group, "name": args[0], "template": args[1],
                      "vars": args[2]})
    return calls


def evaluate(calls):
    """Compiles the C++ expressions into a scratch program that prints them as JSON."""
    body = []
    for c in calls:
        body.append("  {\n"
                    f"    std::string name = {c['name']};\n"
                    f"    std::string tmpl = {c['template']};\n"
                    f"    json vars = {c['vars']};\n"
                    "    std::cout << json({{\"name\", name}, {\"template\", tmpl}, "
                    "{\"vars\", vars}}).dump() << \"\\n\";\n"
                    "  }\n")
    program = ("#include <iostream>\n#include <string>\n#include <nlohmann/json.hpp>\n"
               "using json = nlohmann::ordered_json;\nint main() {\n" + "".join(body) +
               "  return 0;\n}\n")
    with tempfile.TemporaryDirectory() as tmp:
        cpp, exe = os.path.join(tmp, "eval.cpp"), os.path.join(tmp, "eval")
        with open(cpp, "w", encoding="utf-8") as f:
            f.write(program)
        subprocess.run(["g++", "-std=c++20", "-O0", "-o", exe, cpp], check=True)
        out = subprocess.run([exe], check=True, capture_output=True).stdout.decode("utf-8")
    return [json.loads(line) for line in out.splitlines()]


def main(argv):
    path = argv[1]
    commit = argv[2] if len(argv) > 2 else DEFAULT_COMMIT
    with open(path, encoding="utf-8") as f:
        src = f.read()
    calls = find_calls(src)
    values = evaluate(calls)
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
