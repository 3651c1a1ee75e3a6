#!/usr/bin/env python3
"""The renderer half of bench/python_bench.py's reference pipeline, with CPU time.

Imports the reference renderer (scripts/oracle/hf_render.py: Jinja2 3.1.6 in transformers'
environment, AssistantTracker) and renders each request `repeat` times (compile cached, as in
hf_render.py --repeat and in transformers), timing both wall time and this thread's CPU time.
Run with a python3 that has jinja2 (bench/python_bench.py finds one).
  in : stdin, {"id", "model_dir", "chat", "now"} lines; argv: REPEAT
  out: one line per request {"id", "ok", "output", "generation", "us", "cpu_us"}
"""
import datetime
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "scripts", "oracle"))
import hf_render  # noqa: E402


def main():
    repeat = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        hf_render.FROZEN_NOW = datetime.datetime.fromisoformat(req["now"])
        templates, tokens = hf_render.load_model_dir(req["model_dir"])
        chat = dict(req["chat"])
        chat["special_tokens_map"] = dict(tokens, **chat.get("special_tokens_map", {}))
        source = hf_render.select_template(templates, chat.get("chat_template"), chat.get("tools"))
        out, gen = hf_render.render_chat(source, chat)  # compiles (cached)
        t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
        for _ in range(repeat):
            hf_render.render_chat(source, chat)
        c1, t1 = time.thread_time_ns(), time.perf_counter_ns()
        print(json.dumps({"id": req["id"], "ok": True, "output": out,
                          "generation": [list(s) for s in gen or []],
                          "us": (t1 - t0) / repeat / 1000, "cpu_us": (c1 - c0) / repeat / 1000},
                         ensure_ascii=False))


if __name__ == "__main__":
    main()
