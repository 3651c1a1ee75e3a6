"""chatwire.probe and chatwire.adapt against the oracle goldens the C++ tests use:
data/goldens/probe/ (scripts/probe-oracle.py: the same sentinel measurement run through the
reference renderer) and data/goldens/adapt/oracle_check.jsonl (scripts/check-adapt-oracle:
chatwire's adapted sentinel request rendered by the reference renderer)."""
import json

import pytest

import chatwire
from conftest import DATA, count, read_jsonl

PROBE = DATA / "goldens/probe"
CASES = sorted([(p.stem, DATA / "templates" / f"{p.stem}.jinja", p) for p in PROBE.glob("*.json")]
               + [(p.stem, p.with_suffix(".jinja"), p) for p in (PROBE / "crafted").glob("*.json")]
               + [("model_" + p.stem, DATA / "models" / p.stem, p)
                  for p in (PROBE / "models").glob("*.json")])
ADAPT = read_jsonl(DATA / "goldens/adapt/oracle_check.jsonl")


def test_every_bundled_template_has_a_probe_golden():
    templates = {p.stem for p in (DATA / "templates").glob("*.jinja")}
    assert templates and templates <= {c[0] for c in CASES}


@pytest.mark.parametrize("name, target, golden_file", CASES, ids=[c[0] for c in CASES])
def test_probe_equals_the_oracle_measurement(name, target, golden_file):
    golden = json.loads(golden_file.read_text(encoding="utf-8"))
    if "error" in golden:  # the oracle could not probe it either
        with pytest.raises(chatwire.Error):
            chatwire.probe(target)
        count("probe goldens: not probeable, as for the oracle", True)
        return
    mine = chatwire.probe(target)
    assert isinstance(mine, dict)
    for key in ("renders", "tools", "tool_calls", "tool_results", "reasoning",
                "silent_failures", "template_bugs"):
        assert mine[key] == golden[key], key
    for key in ("conversation", "conventions", "kept"):
        assert mine["baseline"][key] == golden["baseline"][key], key
    for key, value in golden["conventions"].items():
        assert mine["conventions"][key]["status"] == value["status"], key
        if "lost" in value:
            assert mine["conventions"][key]["lost"] == value["lost"], key
    assert mine["system"]["supported"] == golden["system"]["supported"]
    assert mine["alternation"]["required"] == golden["alternation"]["required"]
    frame, golden_frame = dict(mine["frame"]), dict(golden["frame"])
    frame.pop("error", None)
    golden_frame.pop("error", None)
    assert frame == golden_frame
    count("probe goldens: profile equals the oracle measurement", True)


def test_probe_accepts_template_source():
    source = (DATA / "templates" / f"{CASES[0][0]}.jinja").read_text(encoding="utf-8")
    assert chatwire.probe(source)["renders"] == chatwire.probe(CASES[0][1])["renders"]
    with pytest.raises(chatwire.TemplateSyntaxError):
        chatwire.probe("{% if %}")


SENTINELS = {"system": "QXSYSTEMQX", "question": "QXQUESTIONQX",
             "tool_description": "QXTOOLDESCQX", "call_name": "get_qxweather",
             "call_argument": "QXCITYQX", "result": "QXRESULTQX", "answer": "QXANSWERQX",
             "question2": "QXQUESTION2QX"}
PAST = ("QXPASTREASONQX", "QXPASTTHINKQX")


@pytest.mark.parametrize("golden", ADAPT, ids=[g["template"] for g in ADAPT])
def test_adapt_equals_the_oracle_check(golden):
    request = chatwire.sentinel_request()
    assert SENTINELS["system"] in request["messages"][0]["content"]
    template = DATA / "templates" / golden["template"]
    # The oracle check renders with the probe's stand-in tokens (scripts/check-adapt-oracle).
    tokens = {"bos_token": "<s>", "eos_token": "</s>"}
    if golden["adapted"] == "refused":
        with pytest.raises(chatwire.CannotRepresent) as info:
            chatwire.adapt(request, template, special_tokens=tokens)
        assert isinstance(info.value, ValueError)
        assert f"CannotRepresent: {info.value}" == golden["reason"]
        count("adapt goldens: refused with a reason, as recorded", True)
        return
    out = chatwire.adapt(request, template, special_tokens=tokens)
    assert [a["code"] for a in out["adaptations"]] == golden["adaptations"]
    assert golden["adapted"] == "pass"
    # The oracle rendered this context with every sentinel; chatwire's verification render
    # (the same context) must hold them too, and no past reasoning.
    for text in SENTINELS.values():
        assert text in out["rendered"], text
    for text in PAST:
        assert text not in out["rendered"]
    count("adapt goldens: same adaptations, every sentinel rendered", True)


def test_adapt_errors():
    with pytest.raises(chatwire.RequestError) as info:
        chatwire.adapt({"messages": [{"role": "user", "content": 5}]}, DATA / "models/jinja-file")
    assert info.value.path
    with pytest.raises(FileNotFoundError):
        chatwire.adapt(chatwire.sentinel_request(), DATA / "templates/nope.jinja")


def test_probe_step_limit():
    """The probe's renders have their own step limit (chatwire probe --max-steps): a template
    that spins meets it, and the profile says so instead of the load taking minutes."""
    spins = ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
             "{% for m in messages %}{{ m.content }}{% endfor %}")
    profile = chatwire.probe(spins, max_steps=1000)
    assert not profile["renders"]
    assert "max_steps=1000" in profile["baseline"]["error"]
    assert chatwire.probe("{% for m in messages %}{{ m.content }}{% endfor %}",
                          max_steps=1000)["renders"]


def test_adapt_template_file_takes_the_special_tokens_given():
    # A file has no model: none by default (the probe's stand-in <s> is no model's), the
    # caller's when given; a checkpoint directory has its own.
    request = {"messages": [{"role": "user", "content": "hi"}]}
    llama = DATA / "templates" / "meta-llama--Llama-3.1-8B-Instruct.jinja"
    bare = chatwire.adapt(request, llama)
    assert bare["rendered"].startswith("<|start_header_id|>system")
    assert "bos_token" not in bare["context"]
    given = chatwire.adapt(request, llama, special_tokens={"bos_token": "<|begin_of_text|>"})
    assert given["rendered"].startswith("<|begin_of_text|><|start_header_id|>system")
    assert given["context"]["bos_token"] == "<|begin_of_text|>"
    with pytest.raises(ValueError):
        chatwire.adapt(request, DATA / "models/jinja-file", special_tokens={"bos_token": "x"})
    with pytest.raises(TypeError):
        chatwire.adapt(request, llama, special_tokens=["<s>"])
