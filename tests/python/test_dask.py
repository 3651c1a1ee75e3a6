"""A real distributed run: a local Dask cluster of 2 worker processes over loopback
preprocesses a generated dataset of 20,000 conversations (plus bad lines) with
`python3 -m chatwire.preprocess --scheduler ...`; the output must equal the single-process path
row for row, and its rows must equal apply_chat_template (golden-checked elsewhere)."""
import json
import os
import re
import subprocess
import sys

import pytest
from distributed import Client, LocalCluster

import chatwire
from conftest import DATA, count, note
from dataset import conversations, write_jsonl

MODEL = str(DATA / "models/tokenized/qwen3-training")
NOW = "2026-08-19T10:00:00"
N = 20_000
BAD = {7: "{not json", 4_321: '{"no_messages": 1}', 19_999: '{"messages": [{"role": 3}]}'}


def preprocess(*args):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    done = subprocess.run([sys.executable, "-m", "chatwire.preprocess", "--model", MODEL,
                           "--now", NOW, "--labels", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    summary = re.search(r"(\d+) rows \((\d+) with an error\) in (\d+) partitions, ([\d.]+) s",
                        done.stderr)
    assert summary, done.stderr
    return summary


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      protocol="tcp", dashboard_address=None) as c, Client(c) as client:
        yield c, client


def test_dask_run_equals_single_process(tmp_path, cluster):
    local, client = cluster
    assert local.scheduler_address.startswith("tcp://127.0.0.1:")
    assert len(client.scheduler_info()["workers"]) == 2
    data = tmp_path / "data.jsonl"
    write_jsonl(data, N, bad_lines=BAD)
    single, distributed = tmp_path / "single.jsonl", tmp_path / "dask.jsonl"
    s = preprocess("--input", data, "--output", single, "--single-process")
    d = preprocess("--input", data, "--output", distributed, "--scheduler",
                   local.scheduler_address, "--partition-rows", 1000)
    assert int(d.group(1)) == int(s.group(1)) == N
    assert int(d.group(2)) == int(s.group(2)) == len(BAD)
    assert int(d.group(3)) == N // 1000
    # Reported, not asserted (the machine is shared): the summary shows the time ratio.
    t_single, t_dask = float(s.group(4)), float(d.group(4))
    note(f"Dask run, 2 local workers: {t_dask:.2f} s; single process: {t_single:.2f} s "
         f"(single/dask {t_single / t_dask:.2f})")

    single_rows = single.read_bytes().splitlines()
    dask_rows = distributed.read_bytes().splitlines()
    assert len(single_rows) == len(dask_rows) == N
    for a, b in zip(single_rows, dask_rows):
        assert a == b
        count("Dask run (2 workers, 20,000 conversations) equals single process", True)

    # Both workers did work: each loaded the model directory once.
    loaded = client.run(lambda: sorted(k[0] for k in __import__("chatwire.sft").sft._MODELS))
    assert len(loaded) == 2 and all(v == [MODEL] for v in loaded.values())

    # Rows in input order, equal to apply_chat_template; bad lines are error rows.
    tok = chatwire.AutoTokenizer.from_pretrained(MODEL, now=NOW)
    convs = conversations(N)
    for i in list(range(0, N, 997)) + sorted(BAD):
        row = json.loads(dask_rows[i])
        if i in BAD:
            assert row["error"] and row["input_ids"] == [] and row["labels"] == []
            continue
        want = tok.apply_chat_template(convs[i], return_dict=True,
                                       return_assistant_tokens_mask=True)
        assert row["input_ids"] == want["input_ids"]
        assert row["assistant_masks"] == want["assistant_masks"]
        assert row["labels"] == [t if m else -100
                                 for t, m in zip(want["input_ids"], want["assistant_masks"])]
        assert row["error"] is None
    # Each row names its input line (1-based; write_jsonl writes no blank lines).
    assert [json.loads(r)["line"] for r in dask_rows[:3]] == [1, 2, 3]
    assert json.loads(dask_rows[7])["error"].startswith("JSONDecodeError: ")
    assert json.loads(dask_rows[4321])["error"].startswith("KeyError: ")
    assert json.loads(dask_rows[19999])["error"].startswith("RequestError: messages[0].role")


def test_local_workers_option(tmp_path):
    # --local-workers starts its own cluster (2 processes, loopback).
    data = tmp_path / "small.jsonl"
    write_jsonl(data, 500, seed=5)
    single, distributed = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    preprocess("--input", data, "--output", single, "--single-process")
    d = preprocess("--input", data, "--output", distributed, "--local-workers", 2,
                   "--partition-rows", 100)
    assert int(d.group(1)) == 500 and int(d.group(3)) == 5
    assert single.read_bytes() == distributed.read_bytes()



def test_rows_name_their_input_lines_past_blank_ones(tmp_path):
    # Blank lines give no row, so rows are joined to the input by their "line", not their place.
    good = json.dumps({"messages": conversations(1)[0]})
    data = tmp_path / "blanks.jsonl"
    data.write_text("\n".join(["", good, "", "", good, "{bad", ""]) + "\n")
    out = tmp_path / "out.jsonl"
    summary = preprocess("--input", data, "--output", out, "--single-process",
                         "--partition-rows", 2)
    assert int(summary.group(1)) == 3
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["line"] for r in rows] == [2, 5, 6]
    assert rows[0]["error"] is None and rows[2]["error"].startswith("JSONDecodeError")
