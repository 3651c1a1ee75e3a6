"""chatwire.Endpoint from Python: the whole path on the Endpoint's goldens
(data/goldens/endpoint/cases.jsonl, scripts/regen-endpoint-goldens; the C++ suite is
tests/endpoint/endpoint_test.cpp): an OpenAI request -> prompt text and ids equal to the
reference -> the ids (or text) a model trained on the template generates -> the OpenAI message,
the same for every chunking, with the deltas adding up to it. Then the options, the batch form,
the forced tool_choice path and every error path."""
import gc
import json
import re
import threading

import pytest

import chatwire
from conftest import DATA, count, read_jsonl

MODELS = DATA / "models" / "endpoint"
CASES = read_jsonl(DATA / "goldens" / "endpoint" / "cases.jsonl")
_loaded = {}


def endpoint(model, dialect=""):
    key = (model, dialect)
    if key not in _loaded:
        _loaded[key] = chatwire.Endpoint(MODELS / model, dialect=dialect)
    return _loaded[key]


def case_id(c):
    return f"{c['model']}/{c['case']}"


class Assembled:
    """The deltas of one generation put together as an OpenAI client assembles a stream."""

    def __init__(self):
        self.content, self.reasoning, self.calls = "", "", []

    def add(self, deltas):
        for d in deltas:
            assert d, "an empty delta was sent"
            self.content += d.get("content") or ""
            self.reasoning += d.get("reasoning_content") or ""
            for c in d.get("tool_calls", []):
                while len(self.calls) <= c["index"]:
                    self.calls.append({"id": "", "name": "", "arguments": ""})
                call = self.calls[c["index"]]
                call["id"] = c.get("id") or call["id"]
                call["name"] = c.get("function", {}).get("name") or call["name"]
                call["arguments"] += c.get("function", {}).get("arguments") or ""


def expect_message(message, expected):
    # As the C++ test: text compared without the whitespace the template frames it with.
    assert message["role"] == "assistant"
    assert (message.get("content") or "").strip() == (expected.get("content") or "")
    assert (message.get("reasoning_content") or "").strip() == expected.get(
        "reasoning_content", "")
    calls = message.get("tool_calls", [])
    want = expected.get("tool_calls", [])
    assert [c["function"]["name"] for c in calls] == [c["function"]["name"] for c in want]
    for got, exp in zip(calls, want):
        assert json.loads(got["function"]["arguments"]) == json.loads(
            exp["function"]["arguments"])
        assert got["type"] == "function"
        if "id" in exp:
            assert got["id"] == exp["id"]


def expect_stream(assembled, message):
    assert assembled.content == (message.get("content") or "")
    assert assembled.reasoning == (message.get("reasoning_content") or "")
    calls = message.get("tool_calls", [])
    assert [(c["id"], c["name"], c["arguments"]) for c in assembled.calls] == [
        (c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls]


def well_formed_id(call_id, style):
    if style == "short9":
        return re.fullmatch(r"[A-Za-z0-9]{9}", call_id) is not None
    return re.fullmatch(r"call_[A-Za-z0-9]{24}", call_id) is not None


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_prompt_equals_reference(case):
    ep = endpoint(case["model"], case.get("dialect", ""))
    prompt = ep.prepare(case["request"], now=case["now"])
    count("endpoint prompt text", prompt.text == case["prompt"]["text"])
    count("endpoint prompt ids", prompt.ids == case["prompt"]["ids"])
    assert prompt.text == case["prompt"]["text"]
    assert prompt.ids == case["prompt"]["ids"]
    assert [a["code"] for a in prompt.adaptations] == case["adaptations"]
    assert case["generated"]["ids"][-1] in prompt.stop_ids
    assert case["generated"]["stop"] in prompt.stop_strings
    assert prompt.stop_ids == ep.stop_ids
    # JSON text is the same request.
    again = ep.prepare(json.dumps(case["request"]), now=case["now"])
    assert (again.text, again.ids) == (prompt.text, prompt.ids)
    assert again.to_dict() == prompt.to_dict()
    assert prompt.to_dict()["ids"] == prompt.ids


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_generated_ids_read_back(case):
    ep = endpoint(case["model"], case.get("dialect", ""))
    prompt = ep.prepare(case["request"], now=case["now"])
    generated = case["generated"]["ids"]
    gen = ep.start(prompt)
    whole = Assembled()
    whole.add(gen.push(generated + [generated[0]]))  # an id after the stop id is ignored
    whole.add(gen.finish())
    assert gen.stopped
    one_shot = gen.message
    expect_message(one_shot, case["expected"])
    expect_stream(whole, one_shot)
    calls = one_shot.get("tool_calls", [])
    assert gen.finish_reason == ("tool_calls" if calls else "stop")
    # Reasoning tokens (vLLM's count, as the gateway's usage reports it): some where the reply
    # reasons, none where it does not, fewer than the reply's tokens.
    assert (gen.reasoning_tokens > 0) == bool(case["expected"].get("reasoning_content"))
    assert gen.reasoning_tokens < len(generated)
    assert len({c["id"] for c in calls}) == len(calls)
    for c, exp in zip(calls, case["expected"].get("tool_calls", [])):
        if "id" not in exp:
            assert well_formed_id(c["id"], prompt.parser["call_ids"]), c["id"]
    ok = True
    for k in list(range(1, 6)) + [len(generated)]:
        gen = ep.start(prompt)
        s = Assembled()
        for i in range(0, len(generated), k):
            chunk = generated[i:i + k]
            s.add(gen.push(chunk[0] if len(chunk) == 1 else chunk))  # an int or a list
        s.add(gen.finish())
        expect_message(gen.message, case["expected"])
        expect_stream(s, gen.message)
        ok = ok and gen.stopped
    count("endpoint generated ids read back", ok)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_generated_text_read_back(case):
    ep = endpoint(case["model"], case.get("dialect", ""))
    prompt = ep.prepare(case["request"], now=case["now"])
    text = case["generated"]["text"] + case["generated"]["stop"] + "ignored after the stop"
    for k in (1, 2, 3, 7, 16, len(text)):
        gen = ep.start(prompt)
        s = Assembled()
        for i in range(0, len(text), k):
            s.add(gen.push_text(text[i:i + k]))
        s.add(gen.finish())
        assert gen.stopped
        expect_message(gen.message, case["expected"])
        expect_stream(s, gen.message)
    count("endpoint generated text read back", True)


def test_goldens_cover_the_five_families():
    assert {c["model"] for c in CASES} == {"qwen3", "llama3_1", "gpt-oss", "mistral-v0.3",
                                           "deepseek-r1"}


def test_batch_equals_one_at_a_time():
    case = CASES[0]
    ep = endpoint(case["model"])
    requests = [c["request"] for c in CASES if c["model"] == case["model"]] * 8
    one = [ep.prepare(r, now=case["now"]) for r in requests]
    batch = ep.prepare_batch(requests, now=case["now"])
    assert [p.to_dict() for p in batch] == [p.to_dict() for p in one]


def test_batch_errors_in_place_or_raised_in_order():
    case = CASES[0]
    ep = endpoint(case["model"])
    bad1 = {"messages": [{"role": "user", "content": 5}]}
    bad2 = {"messages": "no"}
    requests = [case["request"], bad1, case["request"], bad2, {1, 2}]
    out = ep.prepare_batch(requests, now=case["now"], return_errors=True)
    assert isinstance(out[0], chatwire.Prompt) and isinstance(out[2], chatwire.Prompt)
    assert out[0].ids == case["prompt"]["ids"]
    assert isinstance(out[1], chatwire.RequestError) and out[1].path == "messages[0].content"
    assert isinstance(out[3], chatwire.RequestError) and out[3].path == "messages"
    assert isinstance(out[4], TypeError) and isinstance(out[4], chatwire.Error)
    with pytest.raises(chatwire.RequestError) as e:
        ep.prepare_batch(requests, now=case["now"])
    assert e.value.path == "messages[0].content"  # the first failure in input order


def test_generation_outlives_its_endpoint():
    case = CASES[0]
    ep = chatwire.Endpoint(MODELS / case["model"])
    prompt = ep.prepare(case["request"], now=case["now"])
    gen = ep.start(prompt)
    del ep
    gc.collect()
    gen.push(case["generated"]["ids"])
    gen.finish()
    expect_message(gen.message, case["expected"])


def test_cached_profile_and_parser_give_the_same_endpoint():
    for case in CASES:
        ep = endpoint(case["model"], case.get("dialect", ""))
        cached = chatwire.Endpoint(MODELS / case["model"], profile=ep.profile_json(),
                                   parser=json.loads(ep.parser_json()))
        assert cached.dialect == ep.dialect
        assert cached.profile == ep.profile
        prompt = cached.prepare(case["request"], now=case["now"])
        assert prompt.ids == case["prompt"]["ids"]
        if not case.get("dialect"):
            gen = cached.start(prompt)
            gen.push(case["generated"]["ids"])
            gen.finish()
            expect_message(gen.message, case["expected"])


def test_endpoint_properties():
    ep = endpoint("qwen3")
    assert ep.has_tokenizer
    assert ep.dialect == "derived" and ep.tool_calls_read_back
    assert ep.call_ids == "openai"
    assert "<|im_end|>" in ep.stop_strings
    prompt = ep.prepare({"messages": [{"role": "user", "content": "hi"}]})
    # The marker is a stop id's token: an engine that stops at the ids needs no stop string for it.
    assert ep.stops_by_id(prompt, "<|im_end|>") and not ep.stops_by_id(prompt, "<|im")
    assert "<|im_end|>" in prompt.stop_strings and prompt.engine_stop_strings == []
    assert prompt.to_dict()["engine_stop_strings"] == []
    assert isinstance(ep.profile, dict) and ep.profile == chatwire.probe(MODELS / "qwen3")
    assert ep.directory.endswith("qwen3")
    # The probe's step limit while loading: too few steps for the template's renders.
    tight = chatwire.Endpoint(MODELS / "qwen3", probe_max_steps=10)
    assert not tight.profile["renders"] and "max_steps=10" in tight.profile["baseline"]["error"]
    assert endpoint("deepseek-r1", "deepseek_r1").dialect == "deepseek_r1"


def test_modes_and_masks():
    ep = endpoint("qwen3")
    tok = chatwire.AutoTokenizer.from_pretrained(MODELS / "qwen3", now="2026-01-15T10:00:00")
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]
    request = {"model": "qwen3", "messages": messages}
    training = ep.prepare(request, mode="training", now="2026-01-15T10:00:00",
                          assistant_mask=True)
    want = tok.apply_chat_template(messages, return_dict=True,
                                   return_assistant_tokens_mask=True)
    assert training.text == tok.apply_chat_template(messages, tokenize=False)
    assert training.ids == want["input_ids"]
    assert training.assistant_masks == want["assistant_masks"]
    prefill = ep.prepare(request, mode="prefill", now="2026-01-15T10:00:00")
    assert prefill.text == tok.apply_chat_template(messages, tokenize=False,
                                                   continue_final_message=True)
    assert prefill.assistant_masks is None
    untokenized = ep.prepare(request, tokenize=False)
    assert untokenized.ids == [] and untokenized.text
    with pytest.raises(ValueError, match="mode must be"):
        ep.prepare(request, mode="chat")


WEATHER = {"type": "function", "function": {
    "name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}


def test_named_tool_choice_constrains_and_reads_json():
    ep = endpoint("qwen3")
    request = {"model": "qwen3", "messages": [{"role": "user", "content": "Weather?"}],
               "tools": [WEATHER],
               "tool_choice": {"type": "function", "function": {"name": "get_weather"}}}
    prompt = ep.prepare(request)
    assert prompt.parser["forced_calls"] == "named"
    assert prompt.parser["forced_name"] == "get_weather"
    assert prompt.constraint_schema == WEATHER["function"]["parameters"]
    gen = ep.start(prompt)
    s = Assembled()
    for piece in ('{"city": ', '"Paris"}'):
        s.add(gen.push_text(piece))
    s.add(gen.finish())
    calls = gen.message["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["get_weather"]
    assert json.loads(calls[0]["function"]["arguments"]) == {"city": "Paris"}
    assert gen.finish_reason == "tool_calls"
    expect_stream(s, gen.message)


def test_parallel_tool_calls_false_ends_at_the_second_call():
    ep = endpoint("qwen3")
    request = {"model": "qwen3", "messages": [{"role": "user", "content": "Weather?"}],
               "tools": [WEATHER], "parallel_tool_calls": False}
    prompt = ep.prepare(request)
    assert prompt.parser["max_tool_calls"] == 1
    gen = ep.start(prompt)
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "%s"}}\n</tool_call>'
    gen.push_text(call % "Paris" + "\n" + call % "Rome")
    gen.finish()
    assert gen.call_limit_reached and gen.stopped
    assert [json.loads(c["function"]["arguments"])["city"]
            for c in gen.message["tool_calls"]] == ["Paris"]


def test_threads_share_one_endpoint():
    case = CASES[0]
    ep = endpoint(case["model"])
    results, failures = [], []

    def work():
        try:
            for _ in range(20):
                p = ep.prepare(case["request"], now=case["now"])
                gen = ep.start(p)
                gen.push(case["generated"]["ids"])
                gen.finish()
                results.append((p.ids == case["prompt"]["ids"], gen.message["tool_calls"][1]
                                ["function"]["arguments"]))
        except Exception as e:  # noqa: BLE001 (reported below)
            failures.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    assert len(results) == 80 and all(ok for ok, _ in results)
    assert len({args for _, args in results}) == 1


# ----- errors: the exception transformers' users expect, naming the field -----------------

def test_request_errors_name_the_field():
    ep = endpoint("qwen3")
    with pytest.raises(chatwire.RequestError) as e:
        ep.prepare({"messages": [{"role": "user", "content": "a"},
                                 {"role": "assistant", "tool_calls": [
                                     {"id": "c", "type": "function",
                                      "function": {"name": "f", "arguments": "{"}}]}]})
    assert e.value.path == "messages[1].tool_calls[0].function.arguments"
    assert isinstance(e.value, ValueError)
    with pytest.raises(chatwire.RequestError) as e:
        ep.prepare({"messages": [{"role": "user", "content": 5}]})
    assert e.value.path == "messages[0].content" and "messages[0].content" in str(e.value)
    with pytest.raises(ValueError, match="not valid JSON"):
        ep.prepare('{"messages": [')
    with pytest.raises(TypeError) as e:
        ep.prepare({"messages": [{"role": "user", "content": object()}]})
    assert e.value.path == "messages[0].content"
    with pytest.raises(chatwire.Error):
        ep.prepare({"messages": [{"role": "user", "content": "x"}], "tools": [WEATHER],
                    "tool_choice": {"type": "function", "function": {"name": "nope"}}})


def test_response_format_output_is_read_with_or_without_reasoning_before_it():
    """An engine honouring response_format writes JSON from its first token, or after a
    reasoning block (vLLM, SGLang with a reasoning parser): both read, where DeepSeek R1's
    parser would take JSON without a close for reasoning."""
    ep = endpoint("deepseek-r1", dialect="deepseek_r1")
    base = {"messages": [{"role": "user", "content": "json please"}]}
    constrained = dict(base, response_format={"type": "json_object"})
    for request, text, want in (
            (base, '{"a": 1}', {"reasoning_content": '{"a": 1}'}),
            (constrained, '{"a": 1}', {"content": '{"a": 1}'}),
            (constrained, 'R.</think>{"a": 1}', {"reasoning_content": "R.",
                                                "content": '{"a": 1}'})):
        gen = ep.start(ep.prepare(request))
        gen.push_text(text)
        gen.finish()
        got = {k: v for k, v in gen.message.items() if k in ("content", "reasoning_content") and v}
        assert got == want, (request, text, gen.message)


def test_generation_takes_numpy_scalars():
    np = pytest.importorskip("numpy")
    ep = endpoint("qwen3")
    request = {"messages": [{"role": "user", "content": "x"}]}
    tok = chatwire.AutoTokenizer.from_pretrained(MODELS / "qwen3")
    ids = tok.encode("Hello there", add_special_tokens=False)
    for one in (np.int64, np.array):
        gen = ep.start(ep.prepare(request))
        for i in ids:
            gen.push(one(i))
        gen.finish()
        assert gen.message["content"] == "Hello there"
    stream = chatwire.DecodeStream()
    assert "".join(stream.step(tok.tokenizer, np.int64(i)) or "" for i in ids) == "Hello there"


def test_generation_errors():
    ep = endpoint("qwen3")
    gen = ep.start(ep.prepare({"messages": [{"role": "user", "content": "x"}]}))
    with pytest.raises(chatwire.Error):
        gen.push([2 ** 31])  # not in the vocabulary
    with pytest.raises(OverflowError):
        gen.push([-1])
    with pytest.raises(TypeError):
        gen.push(["a"])
    with pytest.raises(TypeError):
        gen.push_text(b"bytes")


def test_load_errors():
    with pytest.raises(chatwire.Error, match="nonexistent"):
        chatwire.Endpoint(MODELS / "nonexistent")
    with pytest.raises(chatwire.Error):
        chatwire.Endpoint(MODELS / "qwen3", dialect="no-such-dialect")
    with pytest.raises(chatwire.Error):
        chatwire.Endpoint(MODELS / "qwen3", profile="{not json")
    with pytest.raises(TypeError):
        chatwire.Endpoint(42)


def test_one_generation_shared_by_threads_does_not_crash():
    # The library's Generation belongs to one thread; the binding locks it, so Python code
    # that shares one gets some interleaving of the pushes, never a crash.
    case = CASES[0]
    ep = endpoint(case["model"])
    gen = ep.start(ep.prepare(case["request"], now=case["now"]))
    ids = case["generated"]["ids"][:-1]  # without the stop id: every push is read

    def work():
        for i in ids:
            gen.push(i)
            gen.message

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    gen.finish()
    assert gen.message["role"] == "assistant"
