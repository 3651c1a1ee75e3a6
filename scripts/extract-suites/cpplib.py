"""Reading test cases out of C++ test files (llama.cpp, minja) without running them.

Call arguments are located by a small scanner that knows C++ string, raw-string and
character literals; the argument expressions themselves (string literal concatenation,
escapes, nlohmann::ordered_json initializer lists) are evaluated by compiling a
throw-away program against the system's nlohmann-json, so their meaning is exactly
C++'s.
"""
import json
import os
import re
import subprocess
import tempfile

RAW_STRING = re.compile(r'R"([^()\\ ]{0,16})\(')


def blank_line_comments(src):
    """`// ...` comment lines become spaces (offsets and line numbers are kept)."""
    return re.sub(r"^\s*//.*$", lambda m: " " * len(m.group(0)), src, flags=re.M)


def skip_literal(src, i):
    """If a string/char/raw-string literal starts at i, returns the index after it."""
    m = RAW_STRING.match(src, i)
    if m and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
        end = src.index(")" + m.group(1) + '"', m.end())
        return end + len(m.group(1)) + 2
    if src[i] in "\"'":
        quote, i = src[i], i + 1
        while src[i] != quote:
            i += 2 if src[i] == "\\" else 1
        return i + 1
    return None


def split_call_args(src, start):
    """Splits the arguments of the call whose '(' ends just before `start` at top-level
    commas. Returns (list of argument texts, index of the closing ')')."""
    args, depth, i, cur = [], 0, start, start
    while i < len(src):
        after = skip_literal(src, i)
        if after is not None:
            i = after
            continue
        ch = src[i]
        if ch in "([{":
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


def statement_end(src, start):
    """Index of the ';' ending the statement that starts at `start` (literals skipped)."""
    i = start
    while src[i] != ";":
        after = skip_literal(src, i)
        i = after if after is not None else i + 1
    return i


def line_of(src, offset):
    return src.count("\n", 0, offset) + 1


def evaluate(cases, fields, prelude=""):
    """Evaluates C++ expressions. `cases` is a list of dicts; `fields` maps a field name to
    its C++ type ("std::string" or "json"); each case[field] holds the expression text.
    `prelude` is C++ placed before the cases (constants they refer to). Returns one dict
    of JSON values per case."""
    body = []
    for c in cases:
        decls = "".join(f"    {ctype} f_{name} = {c[name]};\n" for name, ctype in fields.items())
        items = ", ".join(f'{{"{name}", f_{name}}}' for name in fields)
        body.append("  {\n" + decls + f"    std::cout << json({{{items}}}).dump() << \"\\n\";\n  }}\n")
    program = ("#include <iostream>\n#include <string>\n#include <nlohmann/json.hpp>\n"
               "using json = nlohmann::ordered_json;\nint main() {\n" + prelude + "".join(body) +
               "  return 0;\n}\n")
    with tempfile.TemporaryDirectory() as tmp:
        cpp, exe = os.path.join(tmp, "eval.cpp"), os.path.join(tmp, "eval")
        with open(cpp, "w", encoding="utf-8") as f:
            f.write(program)
        subprocess.run(["g++", "-std=c++20", "-O0", "-w", "-o", exe, cpp], check=True)
        out = subprocess.run([exe], check=True, capture_output=True).stdout.decode("utf-8")
    return [json.loads(line) for line in out.splitlines()]
