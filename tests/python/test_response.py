"""chatwire.parse_response and AutoTokenizer.parse_response against transformers' own test
expectations (data/goldens/response, transcribed by scripts/response_cases.py from
tests/utils/test_chat_parsing.py), plus the tokenizer-level cases the C++ suite cannot run:
token-id responses and prefixes, batches."""
import json
import shutil

import pytest

import chatwire
from conftest import DATA, read_jsonl

GOLDENS = DATA / "goldens/response"
TEMPLATES = json.loads((GOLDENS / "templates.json").read_text(encoding="utf-8"))
PARSE = [c for c in read_jsonl(GOLDENS / "cases.jsonl") if c["kind"] == "parse"]


def template_of(case):
    t = case["template"]
    return TEMPLATES[t] if isinstance(t, str) else t


def at_path(value, path):
    for part in path.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def strictly_equal(a, b):
    """== with int, float and bool told apart (the goldens say which one Python holds)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strictly_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(strictly_equal(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.parametrize("case", PARSE, ids=[c["id"] for c in PARSE])
def test_parse_response_matches_transformers_tests(case):
    expect = case["expect"]
    call = dict(prefix=case["prefix"], tools=case.get("tools"))
    if "error" in expect:
        with pytest.raises(chatwire.Error) as info:
            chatwire.parse_response(case["input"], template_of(case), **call)
        if expect["error"]["type"]:
            assert info.value.type == expect["error"]["type"]
        for text in expect["error"]["contains"]:
            assert text in str(info.value)
        return
    message = chatwire.parse_response(case["input"], template_of(case), **call)
    if "message" in expect:
        assert strictly_equal(message, expect["message"]), message
    if "key" in expect:
        assert strictly_equal(at_path(message, expect["key"]), expect["value"]), message


def test_prefix_is_required():
    with pytest.raises(ValueError):
        chatwire.parse_response("x", TEMPLATES["smollm"])


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    """A real checkpoint's tokenizer with the qwen3 response template in its config."""
    model = tmp_path_factory.mktemp("response") / "qwen3"
    shutil.copytree(DATA / "models/endpoint/qwen3", model)
    config_path = model / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["response_template"] = TEMPLATES["qwen3"]
    config_path.write_text(json.dumps(config), encoding="utf-8")
    return chatwire.AutoTokenizer.from_pretrained(model)


def test_tokenizer_reads_the_directory_template(tokenizer):
    assert tokenizer.response_template == TEMPLATES["qwen3"]


def test_token_ids_and_batches(tokenizer):
    # transformers: test_token_id_inputs, test_batched_parse_response_with_prefix,
    # test_prefix_token_ids_decoded (the same assertions, with this checkpoint's tokenizer).
    prefix = "<|im_start|>assistant\n<think>\n"
    gen_a, gen_b = "thinking A</think>answer A", "thinking B</think>answer B"
    single_a = tokenizer.parse_response(gen_a, prefix=prefix)
    single_b = tokenizer.parse_response(gen_b, prefix=prefix)
    assert single_a == {"role": "assistant", "thinking": "thinking A"}
    assert single_a != single_b
    ids = tokenizer.encode(gen_a, add_special_tokens=False)
    assert tokenizer.parse_response(ids, prefix=prefix) == single_a
    prefix_ids = tokenizer.encode(prefix, add_special_tokens=False)
    assert tokenizer.parse_response(gen_a, prefix=prefix_ids) == single_a
    assert tokenizer.parse_response([gen_a, gen_b], prefix=prefix) == [single_a, single_b]
    assert tokenizer.parse_response([gen_a, gen_b], prefix=[prefix, prefix]) == [single_a, single_b]
    assert tokenizer.parse_response([gen_a], prefix=prefix) == [single_a]
    with pytest.raises(ValueError):
        tokenizer.parse_response([gen_a, gen_b], prefix=[prefix])


def test_explicit_schema_and_missing_template(tokenizer):
    out = "<|START_THINKING|>x<|END_THINKING|>"
    schema = dict(TEMPLATES["cohere"], version=1)
    assert tokenizer.parse_response(out, schema, prefix="") == {"role": "assistant", "thinking": "x"}
    bare = chatwire.AutoTokenizer.from_pretrained(DATA / "models/endpoint/qwen3")
    assert bare.response_template is None
    with pytest.raises(AttributeError):
        bare.parse_response("x", prefix="")
