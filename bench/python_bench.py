#!/usr/bin/env python3
"""Benchmark of the Python module (issue 18), not a test: ratios measured in one run.

1. apply_chat_template(conv, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
   per conversation, chatwire vs the reference pipeline run in the same invocation:
     - bench/python_bench_render.py: the reference renderer scripts/oracle/hf_render.py
       (Jinja2 3.1.6 with transformers' environment and AssistantTracker; run by the PATH
       python3 that has jinja2) imported and timed per render, wall and CPU time (compile
       cached, as transformers caches it): the text and generation spans;
     - bench/python_bench_tok.mjs: npm tokenizers@0.23.2 (Hugging Face's Rust tokenizers, the
       Node binding: the Python binding is not installable here) encoding the prompt with
       add_special_tokens=False plus transformers' mask loop over the spans, timed in-process.
   The reference time of a conversation is the sum of the two. The Node binding's encode is
   asynchronous (a thread-pool hop per call, which Python's synchronous binding does not pay),
   so the median time of encoding "" is subtracted from each encode: the "ratio" columns use
   that corrected reference; "uncorrected" keeps the raw sum. It leaves out transformers' own
   Python around them (argument handling, BatchEncoding, the per-span char_to_token calls from
   Python), so the real reference is slower than measured and the ratio is conservative.
   chatwire's time is the whole Python call (conversion of the messages, render, encode, masks,
   Python lists). Both sides' ids and masks are compared in the same run. Wall and CPU time
   are both reported: on the shared machine other processes take the cores, and CPU time is
   what stays comparable.
2. chatwire.Tokenizer.encode_batch on the rendered prompts with 1 and 2 threads.

  PYTHONPATH=build/python /usr/bin/python3 bench/python_bench.py [--n 1000] [--repeat 3]
Absolute times on the shared 2-core machine are noise; the ratios are what is reported.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))  # the generated dataset

import chatwire  # noqa: E402
from dataset import conversations  # noqa: E402

NOW = "2026-08-19T10:00:00"


def reference_python():
    # The PATH python3 with Jinja2 (Debian's /usr/bin/python3 has none).
    for candidate in (os.environ.get("ORACLE_PYTHON"), shutil.which("python3"), "python3"):
        if candidate and subprocess.run([candidate, "-c", "import jinja2"],
                                        capture_output=True).returncode == 0:
            return candidate
    sys.exit("no python3 with jinja2 for scripts/oracle/hf_render.py (set ORACLE_PYTHON)")


def bench_model(model, convs, repeat, oracle_modules, tmp):
    name = os.path.basename(model)
    # Reference renderer.
    requests = os.path.join(tmp, f"{name}.requests.jsonl")
    with open(requests, "w", encoding="utf-8") as f:
        for i, c in enumerate(convs):
            f.write(json.dumps({"id": i, "model_dir": model, "chat": {"messages": c},
                                "now": NOW}, ensure_ascii=False) + "\n")
    with open(requests, "rb") as f:
        rendered = subprocess.run([reference_python(), os.path.join(ROOT, "bench/python_bench_render.py"),
                                   str(repeat)], stdin=f, capture_output=True,
                                  check=True).stdout.decode("utf-8").splitlines()
    ref = [json.loads(line) for line in rendered]
    assert all(r["ok"] for r in ref), [r for r in ref if not r["ok"]][:1]
    # Reference tokenizer + mask loop.
    spans = os.path.join(tmp, f"{name}.spans.jsonl")
    with open(spans, "w", encoding="utf-8") as f:
        for r in ref:
            f.write(json.dumps({"text": r["output"], "generation": r.get("generation", [])},
                               ensure_ascii=False) + "\n")
    env = dict(os.environ, NODE_PATH=oracle_modules)
    with open(spans, "rb") as f:
        tok_out = subprocess.run(["node", os.path.join(ROOT, "bench/python_bench_tok.mjs"), model,
                                  str(repeat)], stdin=f, capture_output=True, env=env, check=True)
    tok_result = json.loads(tok_out.stdout)
    ref_tok, call_ns = tok_result["rows"], tok_result["call_ns"]
    call_cpu_ns = tok_result["call_cpu_ns"]

    # chatwire, the whole Python call per conversation.
    tok = chatwire.AutoTokenizer.from_pretrained(model, now=NOW)
    for c in convs[:20]:  # warm-up
        tok.apply_chat_template(c, return_dict=True, return_assistant_tokens_mask=True)
    ours, ours_cpu, mine = [], [], []
    clock, cpu = time.perf_counter_ns, time.thread_time_ns
    for c in convs:
        t0, c0 = clock(), cpu()
        for _ in range(repeat):
            out = tok.apply_chat_template(c, tokenize=True, return_dict=True,
                                          return_assistant_tokens_mask=True)
        c1, t1 = cpu(), clock()
        ours.append((t1 - t0) / repeat / 1000)
        ours_cpu.append((c1 - c0) / repeat / 1000)
        mine.append(out)
    texts, text_cpu = [], []
    for c in convs:  # the render alone (tokenize=False), to split the time
        c0 = cpu()
        for _ in range(repeat):
            text = tok.apply_chat_template(c, tokenize=False)
        text_cpu.append((cpu() - c0) / repeat / 1000)
        texts.append(text)
    same = sum(m["input_ids"] == r["input_ids"] and m["assistant_masks"] == r["assistant_masks"]
               and t == rr["output"] for m, r, t, rr in zip(mine, ref_tok, texts, ref))
    raw_us = [r["us"] + t["ns"] / 1000 for r, t in zip(ref, ref_tok)]
    ref_us = [r["us"] + max(0.0, t["ns"] - call_ns) / 1000 for r, t in zip(ref, ref_tok)]
    ref_cpu = [r["cpu_us"] + max(0.0, t["cpu_ns"] - call_cpu_ns) / 1000
               for r, t in zip(ref, ref_tok)]
    med = statistics.median
    return {
        "model": name, "conversations": len(convs), "identical": same,
        "reference_us": med(ref_us), "chatwire_us": med(ours),
        "median_ratio": med(a / b for a, b in zip(ref_us, ours)),
        "uncorrected_ratio": med(a / b for a, b in zip(raw_us, ours)),
        "render_cpu_us": med(r["cpu_us"] for r in ref),
        "tokenize_cpu_us": med(max(0.0, t["cpu_ns"] - call_cpu_ns) / 1000 for t in ref_tok),
        "call_cpu_us": call_cpu_ns / 1000,
        "reference_cpu_us": med(ref_cpu), "chatwire_cpu_us": med(ours_cpu),
        "cpu_ratio": med(a / b for a, b in zip(ref_cpu, ours_cpu)),
        "cpu_total_ratio": sum(ref_cpu) / sum(ours_cpu),
        "chatwire_text_cpu_us": med(text_cpu),
        "render_cpu_ratio": med(r["cpu_us"] / t for r, t in zip(ref, text_cpu)),
        "texts": texts,
    }


def bench_threads(model, texts, rounds=5):
    """Wall-time speed-up of 2 threads over 1 (best of `rounds`), and the process's CPU time
    over wall time with 2 threads: near 2 when both threads really run at once (the GIL is
    released), whatever share of the cores other processes take."""
    tok = chatwire.Tokenizer.from_file(os.path.join(model, "tokenizer.json"))
    best, parallel = {}, 0.0
    for threads in (1, 2, 1, 2):  # interleaved: load changes on a shared machine
        chatwire.set_num_threads(threads)
        tok.encode_batch(texts[:50])
        for _ in range(rounds):
            t0, c0 = time.perf_counter(), time.process_time()
            tok.encode_batch(texts)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            if wall < best.get(threads, float("inf")):
                best[threads] = wall
                if threads == 2:
                    parallel = cpu / wall
    return best[1] / best[2], parallel


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", action="append",
                    help="model directory (repeatable; default: the TRL training directories "
                         "qwen3-training and llama3_1-training)")
    ap.add_argument("--n", type=int, default=1000, help="conversations")
    ap.add_argument("--repeat", type=int, default=3, help="timed calls per conversation")
    ap.add_argument("--oracle-modules", default=os.path.join(ROOT, "tests/serve/node_modules"),
                    help="node_modules holding tokenizers@0.23.2 (default: the one `make "
                         "serve-test-deps` installs from tests/serve/package-lock.json)")
    args = ap.parse_args()
    models = args.model or [os.path.join(ROOT, "data/models/tokenized", m)
                            for m in ("qwen3-training", "llama3_1-training")]
    convs = conversations(args.n, seed=1)
    print(f"python_bench: {args.n} generated conversations (tests/python/dataset.py, seed 1), "
          f"{args.repeat} timed calls each; chatwire threads for encode_batch: 1 and 2\n")
    print("Wall time (µs per conversation; the reference's Node call cost subtracted):\n")
    wall = ["| model | identical (text, ids, masks) | reference | chatwire | median ratio "
            "| median ratio, Node call kept |", "|---|---|---|---|---|---|"]
    cpu = ["| model | reference render | reference encode + mask | Node call (subtracted) "
           "| reference | chatwire | **median ratio** | total ratio | chatwire render alone "
           "| render ratio |", "|---|---|---|---|---|---|---|---|---|---|"]
    threads = ["| model | encode_batch 2 threads / 1 (wall) | CPU/wall with 2 threads |",
               "|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            r = bench_model(os.path.abspath(model), convs, args.repeat, args.oracle_modules, tmp)
            texts = r["texts"] * max(1, 4000 // len(r["texts"]))
            speedup, parallel = bench_threads(os.path.abspath(model), texts)
            wall.append(f"| {r['model']} | {r['identical']}/{r['conversations']} "
                        f"| {r['reference_us']:.1f} | {r['chatwire_us']:.1f} "
                        f"| {r['median_ratio']:.1f}x | {r['uncorrected_ratio']:.1f}x |")
            cpu.append(f"| {r['model']} | {r['render_cpu_us']:.1f} | {r['tokenize_cpu_us']:.1f} "
                       f"| {r['call_cpu_us']:.1f} | {r['reference_cpu_us']:.1f} "
                       f"| {r['chatwire_cpu_us']:.1f} | **{r['cpu_ratio']:.1f}x** "
                       f"| {r['cpu_total_ratio']:.1f}x | {r['chatwire_text_cpu_us']:.1f} "
                       f"| {r['render_cpu_ratio']:.1f}x |")
            threads.append(f"| {r['model']} | {speedup:.2f}x | {parallel:.2f} |")
    print("\n".join(wall))
    print("\nCPU time (µs per conversation: this thread for chatwire and Jinja2, the whole Node "
          "process for tokenizers, whose encode runs on its thread pool):\n")
    print("\n".join(cpu))
    print("\nencode_batch on the rendered prompts (best of 5 rounds, interleaved):\n")
    print("\n".join(threads))
    print(f"\n(medians over conversations; load average at the end: "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
