"""Every error path of the Python API: the exception class transformers would raise (jinja2's
names under chatwire.TemplateError, Python's builtins), with the template line or field path.
Messages of transformers' own checks are transformers' (tokenization_utils_base.py)."""
import pickle

import pytest

import chatwire
from conftest import DATA

MODEL = DATA / "models/tokenized/qwen3-training"
NOW = "2026-08-19T10:00:00"
HELLO = [{"role": "user", "content": "Hello"}]


@pytest.fixture(scope="module")
def tok():
    return chatwire.AutoTokenizer.from_pretrained(MODEL, now=NOW)


def test_syntax_error_is_template_syntax_error_with_line(tok):
    with pytest.raises(chatwire.TemplateSyntaxError) as info:
        tok.apply_chat_template(HELLO, chat_template="line one\n{% if %}", tokenize=False)
    assert isinstance(info.value, chatwire.TemplateError)
    assert info.value.lineno == 2
    assert "line 2" in str(info.value)


def test_undefined_error(tok):
    with pytest.raises(chatwire.UndefinedError) as info:
        tok.apply_chat_template(HELLO, chat_template="{{ messages[0].nope.deeper }}",
                                tokenize=False)
    assert isinstance(info.value, chatwire.TemplateRuntimeError)
    assert "has no attribute 'nope'" in info.value.message
    assert info.value.lineno == 1


def test_raise_exception_is_template_error(tok):
    with pytest.raises(chatwire.TemplateError) as info:
        tok.apply_chat_template(HELLO, chat_template="{{ raise_exception('no system role') }}",
                                tokenize=False)
    assert type(info.value) is chatwire.TemplateError
    assert info.value.message == "no system role"


def test_security_error(tok):
    with pytest.raises(chatwire.SecurityError):
        tok.apply_chat_template(HELLO, chat_template="{{ messages.append(1) }}", tokenize=False)


def test_python_errors_are_builtin_subclasses(tok):
    with pytest.raises(TypeError) as info:
        tok.apply_chat_template(HELLO, chat_template="{{ 'a' + 1 }}", tokenize=False)
    assert isinstance(info.value, chatwire.Error)
    assert info.value.lineno == 1
    with pytest.raises(ZeroDivisionError):
        tok.apply_chat_template(HELLO, chat_template="{{ 1 // 0 }}", tokenize=False)


def test_limit_error_names_the_limit(tok):
    with pytest.raises(chatwire.LimitError, match="max_string_bytes"):
        tok.apply_chat_template(HELLO, chat_template="{{ 'a' * 100000000 }}", tokenize=False)


def test_request_error_names_the_field(tok):
    with pytest.raises(chatwire.RequestError) as info:
        tok.apply_chat_template([{"role": "user", "content": "hi"}, {"content": "no role"}],
                                tokenize=False)
    assert isinstance(info.value, ValueError)
    assert info.value.path == "messages[1].role"
    assert str(info.value).startswith("messages[1].role: ")


def test_unconvertible_object_is_type_error_with_path(tok):
    with pytest.raises(TypeError) as info:
        tok.apply_chat_template([{"role": "user", "content": object()}], tokenize=False)
    assert info.value.path == "messages[0].content"
    with pytest.raises(OverflowError) as info:
        tok.apply_chat_template([{"role": "user", "content": "x", "n": 2**70}], tokenize=False)
    assert info.value.path == "messages[0].n"


def test_validation_can_be_turned_off_as_transformers_renders():
    tok = chatwire.AutoTokenizer.from_pretrained(MODEL, now=NOW, validate=False)
    text = tok.apply_chat_template([{"role": "user", "content": "hi", "extra": 1},
                                    {"role": "user", "content": None}],
                                   chat_template="{% for m in messages %}{{ m.content }}|{% endfor %}",
                                   tokenize=False)
    assert text == "hi|None|"


@pytest.mark.parametrize("options, message", [
    ({"tokenize": False, "return_dict": True},
     "`return_dict=True` is incompatible with `tokenize=False`, because there is no dict of "
     "tokenizer outputs to return."),
    ({"return_assistant_tokens_mask": True},
     "`return_assistant_tokens_mask=True` is incompatible with `return_dict=False`"),
    ({"continue_final_message": True, "add_generation_prompt": True},
     "continue_final_message and add_generation_prompt are not compatible. Use "
     "continue_final_message when you want the model to continue the final message, and "
     "add_generation_prompt when you want to add a header that will prompt it to start a new "
     "assistant message instead."),
    ({"continue_final_message": True, "return_dict": True, "return_assistant_tokens_mask": True},
     "continue_final_message is not compatible with return_assistant_tokens_mask."),
])
def test_transformers_argument_checks(tok, options, message):
    conv = HELLO + [{"role": "assistant", "content": "Hi"}]
    with pytest.raises(ValueError) as info:
        tok.apply_chat_template(conv, **options)
    assert str(info.value) == message


def test_unsupported_transformers_options_are_refused(tok):
    with pytest.raises(NotImplementedError, match="padding"):
        tok.apply_chat_template([HELLO, HELLO], padding=True)  # a batch would be padded
    with pytest.raises(NotImplementedError, match="padding"):
        tok.apply_chat_template(HELLO, padding="max_length", max_length=64)
    with pytest.raises(NotImplementedError, match="return_tensors"):
        tok.apply_chat_template(HELLO, return_tensors="pt")


def test_continue_final_message_rules(tok):
    # As transformers: any final message can be continued (the output is cut after it) ...
    text = tok.apply_chat_template(HELLO, continue_final_message=True, tokenize=False)
    assert text.endswith("Hello")
    # ... but a template that drops the final message cannot continue it (ValueError).
    with pytest.raises(ValueError):
        tok.apply_chat_template(HELLO, continue_final_message=True, tokenize=False,
                                chat_template="{{ 'nothing' }}")


def test_directory_problems():
    # Download-only arguments change nothing for a local directory; others are refused.
    assert chatwire.AutoTokenizer.from_pretrained(MODEL, use_fast=True, trust_remote_code=False)
    # transformers' attributes may be set as it sets them; an unknown argument is refused.
    left = chatwire.AutoTokenizer.from_pretrained(MODEL, padding_side="left", model_max_length=8)
    assert left.padding_side == "left" and left.model_max_length == 8
    with pytest.raises(TypeError, match="pading_side"):
        chatwire.AutoTokenizer.from_pretrained(MODEL, pading_side="left")
    with pytest.raises(ValueError):  # the oracle's type (data/goldens/chat: missing-dir)
        chatwire.AutoTokenizer.from_pretrained(DATA / "models/does-not-exist")
    with pytest.raises(ValueError, match="Invalid isoformat string"):
        chatwire.AutoTokenizer.from_pretrained(MODEL, now="19/08/2026")
    no_template = chatwire.AutoTokenizer.from_pretrained(DATA / "models/no-template")
    assert no_template.chat_template is None
    with pytest.raises(ValueError, match="has no chat template"):
        no_template.apply_chat_template(HELLO, tokenize=False)
    # A directory without tokenizer.json renders text but cannot tokenize.
    text_only = chatwire.AutoTokenizer.from_pretrained(DATA / "models/jinja-file", now=NOW)
    assert isinstance(text_only.apply_chat_template(HELLO, tokenize=False), str)
    with pytest.raises(ValueError, match="no tokenizer.json"):
        text_only.apply_chat_template(HELLO)
    with pytest.raises(chatwire.Error) as info:
        chatwire.AutoTokenizer.from_pretrained(DATA / "models/bad-config-json")
    assert isinstance(info.value, ValueError)
    assert info.value.type == "JSONDecodeError"


def test_bad_chat_template_argument_type(tok):
    with pytest.raises(TypeError):
        tok.apply_chat_template(HELLO, chat_template=["not", "a", "str"], tokenize=False)


def test_errors_survive_pickling(tok):
    # Dask and multiprocessing send exceptions between processes.
    with pytest.raises(chatwire.UndefinedError) as info:
        tok.apply_chat_template(HELLO, chat_template="\n{{ nope.x }}", tokenize=False)
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is chatwire.UndefinedError
    assert (again.message, again.lineno, str(again)) == (info.value.message, 2, str(info.value))


def test_tokenizer_errors():
    tok = chatwire.Tokenizer.from_file(str(DATA / "tokenizers/gpt2/tokenizer.json"))
    with pytest.raises(TypeError):
        tok.encode(5)
    with pytest.raises(TypeError):
        tok.encode_batch(["ok", 5])
    with pytest.raises(chatwire.Error):
        tok.decode([10**9])  # unknown id
    with pytest.raises(FileNotFoundError):
        chatwire.Tokenizer.from_file(str(DATA / "tokenizers/nope.json"))
    with pytest.raises(chatwire.TokenizerError):
        chatwire.Tokenizer.from_str('{"model": {"type": "Nope"}}')


def test_a_batch_the_system_gives_fewer_threads_still_completes():
    """Threads the system will not start (here a 3 GB address-space limit against 2,000 thread
    stacks) leave the batch to those that did, where the interpreter used to abort
    (std::terminate on an unjoined thread)."""
    import os
    import subprocess
    import sys
    script = (
        "import chatwire\n"
        f"raw = chatwire.Tokenizer.from_file({str(DATA / 'tokenizers/qwen3/tokenizer.json')!r})\n"
        "chatwire.set_num_threads(2000)\n"
        "print(len(raw.encode_batch(['hello world'] * 2000)))\n")
    run = subprocess.run(["bash", "-c", 'ulimit -v 3000000; exec "$0" -c "$1"', sys.executable,
                          script], capture_output=True, text=True, env=dict(os.environ),
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "2000"


def test_template_errors_are_jinja2s_classes_too():
    """transformers raises jinja2's exceptions (raise_exception: TemplateError); code written for
    it, such as lm-evaluation-harness's retry without the system role, catches those."""
    import jinja2

    tok = chatwire.AutoTokenizer.from_pretrained(DATA / "models/tokenized/llama3_1")
    tok.chat_template = "{{ raise_exception('no system role') }}"
    with pytest.raises(jinja2.exceptions.TemplateError) as info:
        tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False)
    assert isinstance(info.value, chatwire.Error) and info.value.message == "no system role"
    tok.chat_template = "{% if %}"
    with pytest.raises(jinja2.exceptions.TemplateSyntaxError) as syntax:
        tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False)
    assert syntax.value.lineno == 1 and syntax.value.filename is None
    tok.chat_template = "{{ messages.nope.deeper }}"
    with pytest.raises(jinja2.exceptions.UndefinedError):
        tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False)
    again = pickle.loads(pickle.dumps(info.value))
    assert isinstance(again, jinja2.exceptions.TemplateError) and again.message == "no system role"
