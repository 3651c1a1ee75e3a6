"""AutoTokenizer.apply_chat_template against the reference goldens the C++ tests use:

- data/goldens/tokenized/goldens.jsonl (scripts/regen-tokenized-goldens: hf_render.py + npm
  tokenizers@0.23.2 + transformers' mask loop): text, ids and assistant masks on the 8
  tokenized model directories in reply, prefill and training;
- data/goldens/chat/ (scripts/regen-chat-goldens: hf_render.py): the rendered text of every
  model_dir chat request over the bundled model directories, and the oracle's error types.
"""
import functools

import pytest

import chatwire
from conftest import DATA, count, read_jsonl

TOKENIZED = read_jsonl(DATA / "goldens/tokenized/goldens.jsonl")
CHAT_REQUESTS = read_jsonl(DATA / "goldens/chat/requests.jsonl")
# Result lines are in request order (some ids are not strings).
CHAT_RESULTS = read_jsonl(DATA / "goldens/chat/results.jsonl")
assert len(CHAT_RESULTS) == len(CHAT_REQUESTS)
MODEL_DIR_CHATS = [(r, want) for r, want in zip(CHAT_REQUESTS, CHAT_RESULTS)
                   if "model_dir" in r and "chat" in r]
# Training-mode goldens of one directory given by messages alone (for the batched forms).
MESSAGES_ONLY = [c for c in TOKENIZED if c["ok"] and c["model_dir"].endswith("qwen3-training")
                 and set(c["chat"]) <= {"messages", "add_generation_prompt"}]


@functools.lru_cache(maxsize=None)
def tokenizer(model_dir, now):
    return chatwire.AutoTokenizer.from_pretrained(str(DATA / model_dir), now=now)


def mode_flags(mode):
    return {"add_generation_prompt": mode == "reply", "continue_final_message": mode == "prefill"}


def call(case, **options):
    tok = tokenizer(case["model_dir"], case["now"])
    chat = case["chat"]
    kwargs = {**chat.get("special_tokens_map", {}), **chat.get("kwargs", {})}
    flags = {"add_generation_prompt": chat.get("add_generation_prompt", False),
             "continue_final_message": chat.get("continue_final_message", False)}
    if "mode" in case:
        flags = mode_flags(case["mode"])
    return tok.apply_chat_template(chat["messages"], tools=chat.get("tools"),
                                   documents=chat.get("documents"),
                                   chat_template=chat.get("chat_template"), **flags, **options,
                                   **kwargs)


def test_the_goldens_cover_every_mode():
    modes = {c["mode"] for c in TOKENIZED}
    assert modes == {"reply", "prefill", "training"}
    assert any(c["ok"] and any(c["assistant_masks"]) for c in TOKENIZED)
    assert any(not c["ok"] for c in TOKENIZED)


@pytest.mark.parametrize("case", TOKENIZED, ids=[c["id"] for c in TOKENIZED])
def test_tokenized_golden(case):
    if not case["ok"]:
        # Every form fails with the oracle's exception type.
        for options in ({"tokenize": False}, {"tokenize": True},
                        {"return_dict": True}):
            with pytest.raises(chatwire.Error) as info:
                call(case, **options)
            assert info.value.type == case["error_type"], str(info.value)
            assert type(info.value).__name__ == case["error_type"]
        count("tokenized goldens: oracle errors with the same type", True)
        return
    text = call(case, tokenize=False)
    assert text == case["output"]
    count("tokenized goldens: text (tokenize=False)", True)
    ids = call(case)  # tokenize=True, return_dict=False: list[int]
    assert isinstance(ids, list) and ids == case["input_ids"]
    count("tokenized goldens: ids (tokenize=True)", True)
    if case["mode"] == "prefill":
        out = call(case, return_dict=True)
        assert out["input_ids"] == case["input_ids"]
        assert out["attention_mask"] == [1] * len(ids)
        assert "assistant_masks" not in out
        # transformers refuses masks with continue_final_message (its ValueError).
        with pytest.raises(ValueError, match="continue_final_message is not compatible"):
            call(case, return_dict=True, return_assistant_tokens_mask=True)
        count("tokenized goldens: prefill dict (ids, no masks: ValueError as transformers)",
              True)
        return
    out = call(case, return_dict=True, return_assistant_tokens_mask=True)
    assert isinstance(out, dict)
    assert out["input_ids"] == case["input_ids"]
    assert out["attention_mask"] == [1] * len(ids)
    assert out["assistant_masks"] == case["assistant_masks"]
    assert out.input_ids is out["input_ids"]  # BatchEncoding-style attribute access
    count("tokenized goldens: ids + assistant masks (return_dict, masks)", True)


@pytest.mark.parametrize("case, want", MODEL_DIR_CHATS,
                         ids=[str(c["id"]) for c, _ in MODEL_DIR_CHATS])
def test_chat_golden_text(case, want):
    if want["ok"]:
        assert call(case, tokenize=False) == want["output"]
        count("chat goldens (model_dir requests): text", True)
        return
    with pytest.raises(chatwire.Error) as info:
        call(case, tokenize=False)
    assert info.value.type == want["error_type"], str(info.value)
    if "chatwire_message_contains" in case:
        assert case["chatwire_message_contains"] in str(info.value)
    elif want["error_type"] in ("TemplateError", "ValueError"):
        assert info.value.message == want["message"]
    count("chat goldens (model_dir requests): oracle errors with the same type", True)


def test_batched_form_is_transformers_batched_form():
    cases = [c for c in MESSAGES_ONLY if c["mode"] == "training"]
    assert len(cases) >= 3
    tok = tokenizer(cases[0]["model_dir"], cases[0]["now"])
    convs = [c["chat"]["messages"] for c in cases]
    assert tok.apply_chat_template(convs, tokenize=False) == [c["output"] for c in cases]
    assert tok.apply_chat_template(convs) == [c["input_ids"] for c in cases]
    out = tok.apply_chat_template(convs, return_dict=True, return_assistant_tokens_mask=True)
    assert out["input_ids"] == [c["input_ids"] for c in cases]
    assert out["assistant_masks"] == [c["assistant_masks"] for c in cases]
    assert out["attention_mask"] == [[1] * len(c["input_ids"]) for c in cases]
    # Tuples of conversations are batches too; one conversation as a tuple of messages is not.
    assert tok.apply_chat_template(tuple(convs), tokenize=False) == [c["output"] for c in cases]
    assert tok.apply_chat_template(tuple(convs[0]), tokenize=False) == cases[0]["output"]


def test_batched_form_raises_the_first_bad_conversation():
    case = next(c for c in MESSAGES_ONLY if c["mode"] == "training")
    tok = tokenizer(case["model_dir"], case["now"])
    good = case["chat"]["messages"]
    with pytest.raises(chatwire.RequestError) as info:
        tok.apply_chat_template([good, [{"role": "user", "content": 5}]], tokenize=False)
    # The path starts at the conversation argument: messages[0].content alone names no row.
    assert info.value.path == "conversation[1].messages[0].content"
    # A batch of one is a batch: the path names its conversation too.
    with pytest.raises(chatwire.RequestError) as one:
        tok.apply_chat_template([[{"role": "user", "content": 5}]], tokenize=False)
    assert one.value.path == "conversation[0].messages[0].content"


def test_conversation_objects_with_messages_are_accepted():
    case = next(c for c in MESSAGES_ONLY if c["mode"] == "training")
    tok = tokenizer(case["model_dir"], case["now"])

    class Conversation:
        def __init__(self, messages):
            self.messages = messages

    conv = Conversation(case["chat"]["messages"])
    assert tok.apply_chat_template([conv, conv], tokenize=False) == [case["output"]] * 2
