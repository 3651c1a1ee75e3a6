"""chatwire.sft.tokenize_batch: the same ids and masks as apply_chat_template (itself checked
against the goldens), labels, the bad-row policy, and the batch shapes the engines pass
(dict of lists as datasets/Ray, numpy columns as Ray's default, pandas as Spark/Dask)."""
import collections.abc

import numpy as np
import pandas as pd
import pytest

import chatwire
from chatwire import sft
from conftest import DATA, read_jsonl

MODEL = str(DATA / "models/tokenized/qwen3-training")
NOW = "2026-08-19T10:00:00"
GOLDENS = [c for c in read_jsonl(DATA / "goldens/tokenized/goldens.jsonl")
           if c["model_dir"].endswith("qwen3-training")]
# Conversations given as messages only (no tools, documents or template variables).
GOLDENS = [c for c in GOLDENS if set(c["chat"]) <= {"messages", "add_generation_prompt",
                                                    "continue_final_message"}]
TRAINING = [c for c in GOLDENS if c["mode"] == "training" and c["ok"]]


def test_rows_equal_the_goldens():
    batch = {"messages": [c["chat"]["messages"] for c in TRAINING]}
    out = sft.tokenize_batch(batch, MODEL, now=NOW)
    assert out["input_ids"] == [c["input_ids"] for c in TRAINING]
    assert out["assistant_masks"] == [c["assistant_masks"] for c in TRAINING]
    assert out["attention_mask"] == [[1] * len(c["input_ids"]) for c in TRAINING]
    assert out["chatwire_error"] == [None] * len(TRAINING)
    assert "labels" not in out


def test_reply_mode_equals_the_goldens():
    reply = [c for c in GOLDENS if c["mode"] == "reply" and c["ok"]]
    out = sft.tokenize_batch({"m": [c["chat"]["messages"] for c in reply]}, MODEL, "m",
                             mode="reply", now=NOW)
    assert out["input_ids"] == [c["input_ids"] for c in reply]
    assert out["assistant_masks"] == [c["assistant_masks"] for c in reply]


def test_prefill_mode_has_ids_and_zero_masks():
    prefill = [c for c in GOLDENS if c["mode"] == "prefill" and c["ok"]]
    out = sft.tokenize_batch({"messages": [c["chat"]["messages"] for c in prefill]}, MODEL,
                             mode="prefill", now=NOW)
    assert out["input_ids"] == [c["input_ids"] for c in prefill]
    assert out["assistant_masks"] == [[0] * len(c["input_ids"]) for c in prefill]


def test_labels():
    out = sft.tokenize_batch({"messages": [c["chat"]["messages"] for c in TRAINING]}, MODEL,
                             labels=True, now=NOW)
    for c, labels, error in zip(TRAINING, out["labels"], out["chatwire_error"]):
        if any(c["assistant_masks"]):
            assert error is None
            assert labels == [t if m else -100
                              for t, m in zip(c["input_ids"], c["assistant_masks"])]
        else:  # nothing to train on: the row's error (see the test below)
            assert labels == [] and error.startswith("ValueError: no assistant tokens")
    assert any(l != -100 for row in out["labels"] for l in row)


def test_bad_rows_get_an_error_entry_and_the_batch_goes_on():
    good = TRAINING[0]["chat"]["messages"]
    batch = {"messages": [good, [{"role": "user", "content": 5}], "not a list", None,
                          [{"role": "user", "content": object()}], good]}
    out = sft.tokenize_batch(batch, MODEL, now=NOW)
    assert out["input_ids"][0] == out["input_ids"][5] == TRAINING[0]["input_ids"]
    errors = out["chatwire_error"]
    assert errors[0] is None and errors[5] is None
    assert errors[1].startswith("RequestError: messages[0].content:")
    assert errors[2].startswith("RequestError: ") and errors[3].startswith("RequestError: ")
    assert errors[4].startswith("TypeError: messages[0].content:")
    for i in (1, 2, 3, 4):
        assert out["input_ids"][i] == [] and out["assistant_masks"][i] == []


def test_a_template_error_row():
    out = sft.tokenize_batch({"messages": [TRAINING[0]["chat"]["messages"]]}, MODEL,
                             chat_template="{{ raise_exception('bad row ' ~ messages|length) }}")
    n = len(TRAINING[0]["chat"]["messages"])
    assert out["chatwire_error"] == [f"TemplateError: bad row {n} (line 1, column 19)"]


def test_per_row_tools():
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "ZTOOLZ",
                                               "parameters": {"type": "object"}}}]
    convs = [TRAINING[0]["chat"]["messages"]] * 2
    out = sft.tokenize_batch({"messages": convs, "tools": [tools, None]}, MODEL,
                             tools_key="tools", now=NOW)
    tok = chatwire.AutoTokenizer.from_pretrained(MODEL, now=NOW)
    assert out["input_ids"][0] == tok.apply_chat_template(convs[0], tools=tools)
    assert out["input_ids"][1] == tok.apply_chat_template(convs[1])
    assert out["input_ids"][0] != out["input_ids"][1]


def test_numpy_and_pandas_batches():
    convs = [c["chat"]["messages"] for c in TRAINING]
    want = sft.tokenize_batch({"messages": convs}, MODEL, now=NOW)
    column = np.empty(len(convs), dtype=object)  # Ray Data's numpy batch format
    column[:] = convs
    assert sft.tokenize_batch({"messages": column}, MODEL, now=NOW) == want
    frame = pd.DataFrame({"messages": convs, "other": range(len(convs))}, index=range(5, 5 + len(convs)))
    got = sft.tokenize_batch(frame, MODEL, now=NOW)  # Spark mapInPandas, Dask map_partitions
    assert isinstance(got, pd.DataFrame) and list(got.index) == list(frame.index)
    assert got["input_ids"].tolist() == want["input_ids"]
    assert got["assistant_masks"].tolist() == want["assistant_masks"]


def test_bad_mode_is_refused():
    with pytest.raises(ValueError):
        sft.tokenize_batch({"messages": []}, MODEL, mode="nope")


def test_labels_refuse_rows_with_nothing_to_train_on():
    # A template without {% generation %} blocks leaves every mask zero: with labels, each row is
    # an error (TRL's assistant_only_loss refuses such rows), not all -100 reported as fine, and
    # the render's warning is issued once.
    plain = str(DATA / "models/endpoint/qwen3")
    conversation = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    with pytest.warns(UserWarning, match="no {% generation %} blocks"):
        out = sft.tokenize_batch({"messages": [conversation] * 3}, plain, labels=True)
    assert out["labels"] == [[], [], []]
    assert all(e.startswith("ValueError: no assistant tokens to train on") for e in
               out["chatwire_error"])
    # Without labels the rows stay (the masks are what the template gives), the warning issued.
    with pytest.warns(UserWarning, match="no {% generation %} blocks"):
        kept = sft.tokenize_batch({"messages": [conversation]}, plain)
    assert kept["chatwire_error"] == [None] and kept["input_ids"][0]
    # Prefill gives no masks (transformers refuses them there): labels would all be -100, a NaN
    # or zero loss for every row, so the combination is refused before any row is read.
    with pytest.raises(ValueError, match="mode='prefill'"):
        sft.tokenize_batch({"messages": [conversation]}, MODEL, labels=True, mode="prefill",
                           now=NOW)
    # A row of a template with generation blocks whose assistant turn is absent: an error too.
    out = sft.tokenize_batch({"messages": [[{"role": "user", "content": "Hi"}]]}, MODEL,
                             labels=True, now=NOW)
    assert out["chatwire_error"][0].startswith("ValueError: no assistant tokens to train on")


def test_preprocess_line_nested_too_deep_is_its_rows_error():
    # json.loads raises RecursionError (not a ValueError) on deep nesting: that line's error,
    # and the partition goes on.
    import json
    from chatwire.preprocess import tokenize_lines
    good = json.dumps({"messages": TRAINING[0]["chat"]["messages"]}).encode()
    deep = b'{"messages": ' + b"[" * 100000 + b"]" * 100000 + b"}"
    out = tokenize_lines([good, deep, good], MODEL, {"now": NOW}).decode().splitlines()
    rows = [json.loads(line) for line in out]
    assert len(rows) == 3
    assert rows[0]["error"] is None and rows[2]["error"] is None
    assert rows[1]["error"].startswith("RecursionError") and rows[1]["input_ids"] == []


def test_preprocess_error_with_a_lone_surrogate_stays_in_its_row():
    # JSON's "\ud800" is valid input, and a template may echo it into its error: the row's error
    # goes out as the same JSON escape (it raised UnicodeEncodeError, which ended the whole job).
    import json
    from chatwire.preprocess import tokenize_lines
    template = ("{% for m in messages %}{% if m.role != 'user' %}"
                "{{ raise_exception('Unknown role: ' + m.role) }}{% endif %}{{ m.content }}"
                "{% endfor %}")
    good = json.dumps({"messages": [{"role": "user", "content": "ok"}]}).encode()
    bad = b'{"messages": [{"role": "\\ud800", "content": "x"}]}'
    out = tokenize_lines([good, bad, good], MODEL, {"now": NOW, "chat_template": template})
    rows = [json.loads(line) for line in out.decode("utf-8").splitlines()]
    assert [r["error"] is None for r in rows] == [True, False, True]
    assert "Unknown role: \ud800" in rows[1]["error"] and rows[1]["input_ids"] == []


def test_preprocess_reaches_the_batch_options():
    # --template-kwargs, --documents-key and --no-validate reach tokenize_batch, as in-process.
    import json
    import subprocess
    import sys
    import tempfile
    from chatwire.preprocess import tokenize_lines
    dict_tool = {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"},
                              {"role": "tool", "content": {"temp": 22}},
                              {"role": "assistant", "content": "b"}]}
    line = json.dumps(dict_tool).encode()
    refused = json.loads(tokenize_lines([line], MODEL, {"now": NOW}))
    assert refused["error"].startswith("RequestError: messages[2].content")
    taken = json.loads(tokenize_lines([line], MODEL, {"now": NOW, "validate": False}))
    expected = sft.tokenize_batch({"messages": [dict_tool["messages"]]}, MODEL, now=NOW,
                                  validate=False)
    assert taken["error"] is None and taken["input_ids"] == expected["input_ids"][0]
    think = {"messages": TRAINING[0]["chat"]["messages"]}
    kwargs = {"enable_thinking": False, "zx_variable": 1}
    row = json.loads(tokenize_lines([json.dumps(think).encode()], MODEL,
                                    {"now": NOW, "template_kwargs": kwargs}))
    assert row["input_ids"] == sft.tokenize_batch({"messages": [think["messages"]]}, MODEL,
                                                  now=NOW, template_kwargs=kwargs)["input_ids"][0]
    with tempfile.TemporaryDirectory() as d:
        run = subprocess.run([sys.executable, "-m", "chatwire.preprocess", "--model", MODEL,
                              "--input", f"{d}/in", "--output", f"{d}/out", "--single-process",
                              "--template-kwargs", "[1]"], capture_output=True, text=True)
        assert run.returncode == 2 and "JSON object" in run.stderr
        run = subprocess.run([sys.executable, "-m", "chatwire.preprocess", "--model", MODEL,
                              "--input", f"{d}/in", "--output", f"{d}/out", "--single-process",
                              "--labels", "--mode", "prefill"], capture_output=True, text=True)
        assert run.returncode == 2 and "--labels" in run.stderr


class _Raising(collections.abc.Mapping):
    """A message whose items raise, as a misbehaving Mapping or Arrow scalar can."""

    def __init__(self, error):
        self._error = error

    def __getitem__(self, key):
        raise self._error

    def __iter__(self):
        raise self._error

    def __len__(self):
        return 2


def test_an_exception_of_a_rows_objects_is_its_error_under_its_type():
    good = TRAINING[0]["chat"]["messages"]
    out = sft.tokenize_batch({"messages": [good, [_Raising(RuntimeError("boom"))], good]}, MODEL,
                             now=NOW)
    assert out["chatwire_error"][0] is None and out["chatwire_error"][2] is None
    assert out["chatwire_error"][1].startswith("RuntimeError: ")
    assert "boom" in out["chatwire_error"][1]
    # An interrupt is not a row's error: it stops the batch.
    with pytest.raises(KeyboardInterrupt):
        sft.tokenize_batch({"messages": [good, [_Raising(KeyboardInterrupt())]]}, MODEL, now=NOW)
