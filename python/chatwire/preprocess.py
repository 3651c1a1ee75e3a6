"""Tokenize a JSON Lines file of conversations for training, on a Dask cluster.

    python3 -m chatwire.preprocess --model DIR --input data.jsonl --output out.jsonl \\
        [--scheduler tcp://host:port | --local-workers N | --single-process]

Each input line is a JSON object holding a conversation (``messages`` by default). The input
is cut into partitions of ``--partition-rows`` lines; each partition is tokenized on a worker by
chatwire.sft (the same code as the single-process path), and the result rows are written in
input order, one JSON line per non-blank input line:
``{"line": N, "input_ids": [...], "attention_mask": [...], "assistant_masks": [...],
"error": null}`` (plus ``labels`` with ``--labels``); ``line`` is the input line's number
(1-based), so rows join to their input although blank lines give none. A bad line (not JSON, no conversation, a template error)
gets empty lists and its error, and the job goes on.

``--scheduler`` connects to a running cluster (its workers must be able to import chatwire and
read DIR); ``--local-workers N`` starts N worker processes on this machine over loopback;
``--single-process`` runs the partitions one after the other here, without Dask.
"""

import argparse
import collections
import json
import os
import sys
import time


def tokenize_lines(lines, model_dir, options, line_numbers=None):
    """One partition: raw input lines (bytes) -> the output lines (one bytes string).
    Runs on the workers; every failure stays inside its row. ``line_numbers`` (the input line
    of each, 1-based) are written first in each row as ``line``."""
    from . import set_num_threads, sft

    set_num_threads(options.get("threads", 1))
    key = options.get("messages_key", "messages")
    tools_key = options.get("tools_key")
    documents_key = options.get("documents_key")
    rows, bad = [], {}
    for i, line in enumerate(lines):
        try:
            row = json.loads(line)
        except (ValueError, RecursionError) as e:  # not JSON, not UTF-8, nested too deep
            bad[i] = f"{type(e).__name__}: {e}"
            rows.append(None)
            continue
        if not isinstance(row, dict) or key not in row:
            bad[i] = f"KeyError: the line is not an object with a {key!r} field"
            rows.append(None)
            continue
        rows.append(row)
    good = [i for i, r in enumerate(rows) if r is not None]
    batch = {key: [rows[i][key] for i in good]}
    if tools_key:
        batch[tools_key] = [rows[i].get(tools_key) for i in good]
    if documents_key:
        batch[documents_key] = [rows[i].get(documents_key) for i in good]
    out = sft.tokenize_batch(batch, model_dir, key, tools_key=tools_key,
                             documents_key=documents_key, mode=options.get("mode", "training"),
                             labels=options.get("labels", False), error_column="error",
                             now=options.get("now"), chat_template=options.get("chat_template"),
                             template_kwargs=options.get("template_kwargs"),
                             validate=options.get("validate", True))
    names = [n for n in ("input_ids", "attention_mask", "assistant_masks", "labels") if n in out]
    result = [None] * len(rows)
    for j, i in enumerate(good):
        result[i] = {n: out[n][j] for n in names}
        result[i]["error"] = out["error"][j]
    for i, message in bad.items():
        result[i] = {n: [] for n in names}
        result[i]["error"] = message
    if line_numbers is not None:
        result = [{"line": number, **row} for number, row in zip(line_numbers, result)]
    text = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n"
                   for r in result)
    # A lone surrogate (JSON's "\ud800" is valid input, and a template may echo it into its
    # error) goes out as the same JSON escape, not as a UnicodeEncodeError that ends the job.
    return text.encode("utf-8", errors="backslashreplace")


def partitions(path, rows):
    """Non-blank lines of `path` in lists of `rows`, each with the lines' numbers (1-based):
    (numbers, lines). Blank lines are skipped, as the CLI batch skips them."""
    numbers, part = [], []
    with open(path, "rb") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            numbers.append(number)
            part.append(line)
            if len(part) == rows:
                yield numbers, part
                numbers, part = [], []
    if part:
        yield numbers, part


def run(args, log=sys.stderr):
    options = {"messages_key": args.messages_key, "tools_key": args.tools_key,
               "documents_key": args.documents_key, "mode": args.mode, "labels": args.labels,
               "now": args.now, "chat_template": args.chat_template, "threads": args.threads,
               "template_kwargs": args.template_kwargs, "validate": not args.no_validate}
    model_dir = os.path.abspath(args.model)
    start = time.perf_counter()
    n_rows = n_errors = n_parts = 0

    def write(out, data):
        nonlocal n_rows, n_errors
        out.write(data)
        for line in data.splitlines():
            n_rows += 1
            if not line.endswith(b'"error":null}'):
                n_errors += 1

    cluster = client = None
    with open(args.output, "wb") as out:
        if args.single_process:
            for numbers, part in partitions(args.input, args.partition_rows):
                n_parts += 1
                write(out, tokenize_lines(part, model_dir, options, numbers))
        else:
            from distributed import Client, LocalCluster

            if args.scheduler:
                client = Client(args.scheduler)
            else:
                cluster = LocalCluster(n_workers=args.local_workers, threads_per_worker=1,
                                       processes=True, host="127.0.0.1", protocol="tcp",
                                       dashboard_address=None)
                client = Client(cluster)
            try:
                workers = max(1, len(client.scheduler_info().get("workers", {})))
                window = args.window or 4 * workers  # partitions in flight: bounded memory
                pending = collections.deque()
                for numbers, part in partitions(args.input, args.partition_rows):
                    n_parts += 1
                    pending.append(client.submit(tokenize_lines, part, model_dir, options,
                                                 numbers, pure=False))
                    while len(pending) >= window:
                        write(out, pending.popleft().result())
                while pending:
                    write(out, pending.popleft().result())
            finally:
                client.close()
                if cluster is not None:
                    cluster.close()
    seconds = time.perf_counter() - start
    print(f"chatwire.preprocess: {n_rows} rows ({n_errors} with an error) in {n_parts} "
          f"partitions, {seconds:.2f} s", file=log)
    return 0


def json_object(text):
    """--template-kwargs: a JSON object, or an argparse error naming what it is."""
    try:
        value = json.loads(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"not JSON: {e}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("must be a JSON object of template variables")
    return value


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m chatwire.preprocess", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="checkpoint directory (template + tokenizer)")
    p.add_argument("--input", required=True, help="JSON Lines input, one conversation a line")
    p.add_argument("--output", required=True, help="JSON Lines output, one row per input line")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--scheduler", help="address of a running Dask scheduler (tcp://host:port)")
    where.add_argument("--local-workers", type=int, default=2,
                       help="start this many local worker processes (default 2)")
    where.add_argument("--single-process", action="store_true", help="no Dask: run here")
    p.add_argument("--partition-rows", type=int, default=2000, help="lines per partition")
    p.add_argument("--window", type=int, default=0,
                   help="partitions in flight (default 4 per worker)")
    p.add_argument("--threads", type=int, default=1,
                   help="chatwire threads per partition task (default 1: one per worker)")
    p.add_argument("--messages-key", default="messages")
    p.add_argument("--tools-key", default=None, help="per-row tools field")
    p.add_argument("--documents-key", default=None, help="per-row documents field")
    p.add_argument("--template-kwargs", default=None, type=json_object,
                   help='extra template variables for every row, a JSON object '
                        '(e.g. \'{"enable_thinking": false}\')')
    p.add_argument("--no-validate", action="store_true",
                   help="skip request validation (render what transformers would)")
    p.add_argument("--mode", choices=["training", "reply", "prefill"], default="training")
    p.add_argument("--chat-template", default=None, help="template name (or source)")
    p.add_argument("--labels", action="store_true", help="add labels (-100 outside assistant)")
    p.add_argument("--now", default=None, help="strftime_now's clock (ISO 8601)")
    args = p.parse_args(argv)
    if args.partition_rows < 1:
        p.error("--partition-rows must be at least 1")
    if args.labels and args.mode == "prefill":
        p.error("--labels needs assistant masks, which --mode prefill does not give")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
