"""Shared helpers for the suite extractors and scripts/regen-suite-goldens.

A suite file (data/suites/<suite>.jsonl) holds one case per line:
  {"id", "source": "<repo>@<commit>:<file>:<line or name>", "template",
   "context", "now", "notes"?, "oracle": {...}}
Only inputs (facts taken from the public test suites) and the oracle's results are
stored; the suites' own expected outputs are never kept.

The oracle is scripts/oracle/hf_render.py (Jinja2 3.1.6 with transformers'
environment). It runs in a child process so a case that hangs or eats memory is
recorded as such instead of stopping the run.
"""
import json
import os
import re
import resource
import select
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ORACLE = os.path.join(REPO, "scripts", "oracle", "hf_render.py")
SUITES_DIR = os.path.join(REPO, "data", "suites")

# strftime_now sees this local time (the date HF.js's e2e tests mock).
FIXED_NOW = "2025-07-10T12:00:00"
# A case the oracle has not answered after this many seconds is recorded as a hang.
ORACLE_TIMEOUT_SECONDS = 5.0
# Address-space cap of the oracle process: memory bombs become MemoryError.
ORACLE_MEMORY_BYTES = 2 << 30

# Field order of a case line (stable diffs).
CASE_FIELDS = ("id", "source", "template", "context", "now", "notes", "oracle")


def dump_line(obj):
    """One JSON line, UTF-8 where possible; lone surrogates stay \\u escapes."""
    text = json.dumps(obj, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(obj, ensure_ascii=True)
    return text


def ordered_case(case):
    out = {k: case[k] for k in CASE_FIELDS if k in case}
    for k, v in case.items():
        if k not in out:
            out[k] = v
    return out


def read_suite(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_suite(path, cases):
    ids = set()
    for c in cases:
        if c["id"] in ids:
            raise ValueError(f"duplicate case id {c['id']!r} in {path}")
        ids.add(c["id"])
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for c in cases:
            f.write(dump_line(ordered_case(c)) + "\n")


def unique_id(seen, base):
    """base, or base#2, base#3 ... when the suite reuses a name."""
    n, cid = 1, base
    while cid in seen:
        n += 1
        cid = f"{base}#{n}"
    seen.add(cid)
    return cid


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (ORACLE_MEMORY_BYTES, ORACLE_MEMORY_BYTES))


class Oracle:
    """hf_render.py in a child process, one request at a time, with a timeout."""

    def __init__(self):
        self.proc = None

    def _start(self):
        self.proc = subprocess.Popen(
            [sys.executable, ORACLE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, preexec_fn=_limit_memory)
        self._buf = b""

    def _stop(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait()
            self.proc = None

    def run(self, template, context, now):
        if self.proc is None:
            self._start()
        req = {"id": 0, "template": template, "context": context, "now": now}
        try:
            self.proc.stdin.write((dump_line(req) + "\n").encode("utf-8", "surrogatepass"))
            self.proc.stdin.flush()
        except BrokenPipeError:
            self._stop()
            return {"ok": False, "error_type": "OracleCrash", "message": "the oracle process died"}
        fd = self.proc.stdout.fileno()
        import time
        deadline = time.monotonic() + ORACLE_TIMEOUT_SECONDS
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            ready = select.select([fd], [], [], max(left, 0))[0] if left > 0 else []
            if not ready:
                self._stop()
                return {"ok": False, "timeout": True, "error_type": "OracleTimeout",
                        "message": f"the oracle did not finish within {ORACLE_TIMEOUT_SECONDS:g} s"}
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                self._stop()
                return {"ok": False, "error_type": "OracleCrash",
                        "message": "the oracle process died (likely out of memory)"}
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        res = json.loads(line.decode("utf-8"))
        if res.get("ok"):
            out = {"ok": True, "output": res["output"]}
            if "generation" in res:
                out["generation"] = res["generation"]
            return out
        return {"ok": False, "error_type": res["error_type"], "message": res["message"]}


# Extra renders of every case the oracle renders, to find outputs that are not a function
# of the input (object addresses in reprs, the random filter).
ORACLE_REPEATS = 4
ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
# A Python default repr ("<generator object do_items at 0x7f...>"): its address can repeat
# between renders in one process, so it is recognised by its shape, not by repetition.
ADDRESS_REPR = re.compile(r" at 0x[0-9a-fA-F]+>")


def run_oracle(cases, progress=None):
    """Fills case["oracle"] for every case (in place). When repeated renders of a case
    differ, oracle["compare"] says how far the output can be compared:
    "mask_addresses" (equal once every 0x... address is masked) or "success_only"."""
    oracle = Oracle()
    try:
        for i, c in enumerate(cases):
            c["now"] = c.get("now", FIXED_NOW)
            c["oracle"] = oracle.run(c["template"], c["context"], c["now"])
            if progress and (i + 1) % 100 == 0:
                progress(f"{i + 1}/{len(cases)}")
        for c in cases:
            if c["oracle"]["ok"] and ADDRESS_REPR.search(c["oracle"]["output"]):
                c["oracle"]["compare"] = "mask_addresses"
                c["oracle"]["output"] = ADDRESS.sub("0x", c["oracle"]["output"])
        for _ in range(ORACLE_REPEATS):
            for c in cases:
                first = c["oracle"]
                if not first["ok"] or first.get("compare") == "success_only":
                    continue
                again = oracle.run(c["template"], c["context"], c["now"])
                if first.get("compare") == "mask_addresses" and again.get("output") is not None:
                    again["output"] = ADDRESS.sub("0x", again["output"])
                if again.get("output") == first["output"]:
                    continue
                masked = (again.get("output") is not None and
                          ADDRESS.sub("0x", again["output"]) == ADDRESS.sub("0x", first["output"]))
                first["compare"] = "mask_addresses" if masked else "success_only"
                # Stored masked, or not at all, so that regenerating gives the same file.
                if masked:
                    first["output"] = ADDRESS.sub("0x", first["output"])
                else:
                    del first["output"]
    finally:
        oracle.close()
    return cases


def summary(cases):
    ok = sum(1 for c in cases if c["oracle"]["ok"])
    hang = sum(1 for c in cases if c["oracle"].get("timeout"))
    return f"{len(cases)} cases: {ok} oracle-ok, {len(cases) - ok - hang} oracle-error, {hang} oracle-timeout"


def jinja2_outcome(env, template, context):
    """("ok", output) or ("error", exception type) of rendering with a Jinja2 environment
    the caller built (the upstream suite's settings), with transformers' tojson so that
    only the settings differ from the oracle. Used to mark cases whose result depends on
    settings the oracle does not use."""
    env.filters["tojson"] = lambda x, **kw: json.dumps(x, ensure_ascii=False, **kw)
    try:
        return ("ok", env.from_string(template).render(**context))
    except Exception as e:  # noqa: BLE001 - any failure is an outcome to compare
        return ("error", type(e).__name__)
