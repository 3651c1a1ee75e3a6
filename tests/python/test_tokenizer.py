"""chatwire.Tokenizer (tokenizers' API) and AutoTokenizer's encode/decode/__call__ against the
tokenizer goldens (data/goldens/tokenize/*.json: npm tokenizers@0.23.2 ids, decodes by
scripts/regen-tokenize-goldens) for every tokenizer bundled in data/tokenizers/ (the large
ones that scripts/fetch-tokenizers downloads are tested by the C++ suite when present)."""
import json

import pytest

import chatwire
from conftest import DATA, count

TEXTS = json.loads((DATA / "goldens/tokenize/texts.json").read_text(encoding="utf-8"))
BUNDLED = sorted(p.stem for p in (DATA / "goldens/tokenize").glob("*.json")
                 if p.stem != "texts" and (DATA / "tokenizers" / p.stem / "tokenizer.json").exists())


def golden(name):
    return json.loads((DATA / "goldens/tokenize" / f"{name}.json").read_text(encoding="utf-8"))


def test_bundled_tokenizers_are_found():
    assert {"gpt2", "llama2", "llama3_1", "mistral7b_v01", "qwen3"} <= set(BUNDLED)


@pytest.fixture(scope="module", params=BUNDLED)
def named(request):
    name = request.param
    directory = DATA / "tokenizers" / name
    return (name, chatwire.Tokenizer.from_file(str(directory / "tokenizer.json")),
            chatwire.AutoTokenizer.from_pretrained(directory), golden(name))


def test_encode_ids_equal_the_goldens(named):
    name, tok, auto, g = named
    cases = [e for e in g["encode"] if "ids" in e]
    assert cases
    for e in cases:
        text, special = TEXTS[e["text"]], e["add_special_tokens"]
        got = tok.encode(text, add_special_tokens=special).ids
        assert got == e["ids"], (name, e["text"], special)
        assert auto.encode(text, add_special_tokens=special) == e["ids"]
        assert auto(text, add_special_tokens=special)["input_ids"] == e["ids"]
        count("tokenizer goldens: encode ids (Tokenizer and AutoTokenizer)", True)


def test_encode_batch_equals_the_goldens(named):
    name, tok, auto, g = named
    for special in (False, True):
        cases = [e for e in g["encode"] if "ids" in e and e["add_special_tokens"] == special]
        texts = [TEXTS[e["text"]] for e in cases]
        for threads in (1, 2):
            chatwire.set_num_threads(threads)
            got = [enc.ids for enc in tok.encode_batch(texts, add_special_tokens=special)]
            assert got == [e["ids"] for e in cases]
        out = auto(texts, add_special_tokens=special)
        assert out["input_ids"] == [e["ids"] for e in cases]
        assert out["attention_mask"] == [[1] * len(e["ids"]) for e in cases]
        count("tokenizer goldens: encode_batch (1 and 2 threads)", True)
    chatwire.set_num_threads(2)


def test_decode_equals_the_goldens(named):
    name, tok, auto, g = named
    cases = [d for d in g["decode"] if "text" in d]
    assert cases
    for d in cases:
        # AutoTokenizer.decode reads tokenizer_config.json (clean_up_tokenization_spaces) as
        # the goldens' decoder did.
        assert auto.decode(d["ids"], skip_special_tokens=d["skip_special_tokens"]) == d["text"]
        count("tokenizer goldens: decode", True)
    for skip in (False, True):
        batch = [d for d in cases if d["skip_special_tokens"] == skip]
        assert auto.batch_decode([d["ids"] for d in batch], skip_special_tokens=skip) == \
            [d["text"] for d in batch]


def test_decode_stream_concatenates_to_decode(named):
    # tokenizers' DecodeStream: step() returns new text or None; with finish() (chatwire's
    # addition for what is held back at the end) the pieces are decode() of all ids.
    name, tok, auto, g = named
    for skip in (False, True):
        cases = [d for d in g["decode"] if "text" in d and d["skip_special_tokens"] == skip]
        assert cases
        for d in cases:
            stream = chatwire.DecodeStream(skip_special_tokens=skip)
            pieces = [stream.step(tok, i) for i in d["ids"]] + [stream.finish()]
            assert all(p is None or p != "" for p in pieces)
            assert "".join(p for p in pieces if p is not None) == \
                tok.decode(d["ids"], skip_special_tokens=skip), (name, d["ids"])


def test_tokenizers_defaults():
    tok = chatwire.Tokenizer.from_file(str(DATA / "tokenizers/llama2/tokenizer.json"))
    # tokenizers: encode adds special tokens and decode skips them by default.
    enc = tok.encode("Hello world")
    assert enc.ids[0] == tok.token_to_id("<s>")
    assert enc.special_tokens_mask[0] == 1 and enc.special_tokens_mask[1:] == [0] * (len(enc) - 1)
    assert tok.decode(enc.ids) == "Hello world"
    assert tok.decode(enc.ids, skip_special_tokens=False) == "<s> Hello world"
    assert tok.decode_batch([enc.ids, enc.ids]) == ["Hello world"] * 2
    assert enc.attention_mask == [1] * len(enc)
    assert enc.tokens[1:] == ["▁Hello", "▁world"]
    assert tok.id_to_token(enc.ids[1]) == "▁Hello"
    assert tok.get_vocab_size() == 32000


def test_offsets_are_code_points():
    tok = chatwire.Tokenizer.from_file(str(DATA / "tokenizers/gpt2/tokenizer.json"))
    text = "héllo wörld"
    enc = tok.encode(text, add_special_tokens=False)
    assert enc.offsets[0][0] == 0 and enc.offsets[-1][1] == len(text)
    assert "".join(text[b:e] for b, e in enc.offsets) == text


def test_auto_tokenizer_special_tokens():
    auto = chatwire.AutoTokenizer.from_pretrained(DATA / "models/tokenized/llama3_1")
    assert auto.bos_token == "<|begin_of_text|>"
    assert auto.bos_token_id == 128000
    assert auto.eos_token_id == auto.convert_tokens_to_ids(auto.eos_token)
    assert auto.special_tokens_map["bos_token"] == auto.bos_token
    assert isinstance(auto.chat_template, str) and "{%" in auto.chat_template
    assert auto.decode(auto.encode("Hi there")) == "<|begin_of_text|>Hi there"
    assert auto.decode(auto.encode("Hi there"), skip_special_tokens=True) == "Hi there"


def test_named_templates_are_a_dict():
    auto = chatwire.AutoTokenizer.from_pretrained(DATA / "models/jinja-additional")
    templates = auto.chat_template
    assert isinstance(templates, dict) and len(templates) >= 2
    assert all(isinstance(v, str) for v in templates.values())
    # An assigned template replaces the named ones, as in transformers (the setter replaces the
    # dict): it renders, and so does any chat_template string then, as template source.
    conv = [{"role": "user", "content": "hi"}]
    auto.chat_template = "CUSTOM {{ messages[0].content }}"
    assert auto.apply_chat_template(conv, tokenize=False) == "CUSTOM hi"
    assert auto.apply_chat_template(conv, tokenize=False, chat_template="X{{ 1 }}") == "X1"


VOCAB_SIZES = json.loads((DATA / "goldens/vocab_sizes/vocab_sizes.json").read_text())["sizes"]


@pytest.mark.parametrize("name", sorted(VOCAB_SIZES))
def test_vocab_sizes_equal_tokenizers(name):
    # get_vocab_size(False) is transformers' vocab_size, (True) its len(tokenizer): an added
    # token already in the vocabulary counts once (npm tokenizers@0.23.2, regenerated by
    # scripts/regen-vocab-size-goldens). The fetched tokenizers are in the repository's data
    # after scripts/fetch-tokenizers, which make test runs first.
    path = DATA / "tokenizers" / name / "tokenizer.json"
    assert path.exists(), f"{path}: run scripts/fetch-tokenizers"
    tok = chatwire.Tokenizer.from_file(str(path))
    want = VOCAB_SIZES[name]
    assert tok.get_vocab_size(with_added_tokens=False) == want["without_added"]
    assert tok.get_vocab_size(with_added_tokens=True) == want["with_added"]
    assert tok.get_vocab_size() == want["with_added"]
    count("tokenizer vocab sizes (with and without added tokens)", True)


def test_auto_tokenizer_members_a_training_script_uses():
    import pickle

    auto = chatwire.AutoTokenizer.from_pretrained(DATA / "models/tokenized/llama3_1")
    assert auto.vocab_size == VOCAB_SIZES["llama3_1"]["without_added"] == 128000
    assert len(auto) == 128256
    vocab = auto.get_vocab()
    assert len(vocab) == len(auto) and vocab["<|begin_of_text|>"] == 128000
    # Unknown tokens are the unk token's id (None without one), None stays None.
    assert auto.convert_tokens_to_ids("notatoken_xyz") is None  # Llama 3 has no unk token
    assert auto.convert_tokens_to_ids(None) is None
    llama2 = chatwire.AutoTokenizer.from_pretrained(DATA / "tokenizers/llama2")
    assert llama2.convert_tokens_to_ids(["notatoken_xyz", "<s>"]) == [llama2.unk_token_id, 1]
    # numpy and plain int scalars as ids; a flat list to batch_decode is one id per sequence.
    np = pytest.importorskip("numpy")
    ids = auto.encode("Hello world", add_special_tokens=False)
    assert auto.decode(np.array(ids)) == auto.decode([np.int64(i) for i in ids]) == "Hello world"
    assert auto.decode(np.int64(ids[0])) == auto.decode(ids[0]) == "Hello"
    assert auto.batch_decode(ids) == ["Hello", " world"]
    assert auto.convert_ids_to_tokens(np.int64(ids[0])) == "Hello"
    assert auto.convert_ids_to_tokens([128000] + ids, skip_special_tokens=True) == ["Hello",
                                                                                   "Ġworld"]
    # skip_special_tokens leaves out all_special_ids only, as transformers: Llama 3's header
    # tokens are added tokens marked special in tokenizer.json, not special tokens of the map.
    header = auto.convert_tokens_to_ids(["<|start_header_id|>", "<|end_header_id|>"])
    assert auto.convert_ids_to_tokens([128000, header[0]] + ids + [header[1]],
                                      skip_special_tokens=True) == [
        "<|start_header_id|>", "Hello", "Ġworld", "<|end_header_id|>"]
    # A lone surrogate in a message comes back as that surrogate, as jinja2 renders it.
    surrogate = auto.apply_chat_template([{"role": "user", "content": "a\udcffb"}],
                                         tokenize=False)
    assert "a\udcffb" in surrogate
    assert auto.tokenize("Hello world") == ["Hello", "Ġworld"]
    assert auto.is_fast and auto.padding_side == "right"
    assert auto.all_special_ids == auto.convert_tokens_to_ids(auto.all_special_tokens)
    assert "<|begin_of_text|>" in auto.all_special_tokens
    # Assigned special tokens and template reach the template and survive pickling.
    auto.pad_token = auto.eos_token
    assert auto.pad_token_id == auto.eos_token_id
    auto.chat_template = "{{ pad_token }}|{% for m in messages %}{{ m.content }}{% endfor %}"
    rendered = auto.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False)
    assert rendered == auto.pad_token + "|hi"
    again = pickle.loads(pickle.dumps(auto))
    assert again.pad_token == auto.pad_token and again.chat_template == auto.chat_template
    assert again.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False) == rendered
    # transformers' no-ops are accepted: max_length without truncation, padding one conversation.
    auto.chat_template = None
    plain = auto.apply_chat_template([{"role": "user", "content": "hi"}])
    assert auto.apply_chat_template([{"role": "user", "content": "hi"}], max_length=4,
                                    padding=True) == plain
    with pytest.raises(NotImplementedError):
        auto.apply_chat_template([{"role": "user", "content": "hi"}], truncation=True,
                                 max_length=4)
    # chatwire.Tokenizer pickles too (its file, directory or JSON text; tokenizers pickles its
    # JSON), whichever way it was made.
    raw = auto.tokenizer
    for made in (raw, chatwire.Tokenizer.from_file(str(DATA / "tokenizers/gpt2/tokenizer.json")),
                 chatwire.Tokenizer.from_str(
                     (DATA / "tokenizers/gpt2/tokenizer.json").read_text(encoding="utf-8"))):
        copy = pickle.loads(pickle.dumps(made))
        assert copy.encode("Hello world").ids == made.encode("Hello world").ids
        assert copy.get_vocab_size() == made.get_vocab_size()
    # So does an Encoding (tokenizers' does: encode_batch results come back from Dask or
    # multiprocessing workers), with every field, its tokens and special mask carried along.
    for encoding in [raw.encode("<|begin_of_text|>Hello wörld 😀")] + raw.encode_batch(["a", ""]):
        copy = pickle.loads(pickle.dumps(encoding))
        for field in ("ids", "tokens", "offsets", "special_tokens_mask", "attention_mask",
                      "type_ids"):
            assert getattr(copy, field) == getattr(encoding, field), field
        assert len(copy) == len(encoding)
    # tokenizers' encode(sequence, pair=None, ...): None is no pair, not add_special_tokens.
    assert raw.encode("hi", None).ids == raw.encode("hi").ids
    with pytest.raises(NotImplementedError):
        raw.encode("hi", "there")


def test_pickled_auto_tokenizer_loads_from_another_working_directory(tmp_path, monkeypatch):
    # A relative directory is pickled as the directory it was loaded from (a Dask or Ray worker
    # runs elsewhere); name_or_path stays as given.
    import pickle
    model = DATA / "models/tokenized"
    monkeypatch.chdir(model)
    auto = chatwire.AutoTokenizer.from_pretrained("qwen3-training")
    data = pickle.dumps(auto)
    monkeypatch.chdir(tmp_path)
    again = pickle.loads(data)
    assert again.name_or_path == "qwen3-training"
    assert again("hello").input_ids == auto("hello").input_ids


def test_call_accepts_transformers_no_ops():
    auto = chatwire.AutoTokenizer.from_pretrained(str(DATA / "models/tokenized/qwen3-training"))
    ids = auto("hello world").input_ids
    assert auto("hello world", truncation="do_not_truncate").input_ids == ids
    assert auto("hello world", truncation=False, max_length=1).input_ids == ids  # truncation off
    with pytest.raises(NotImplementedError, match="max_length=1"):
        auto("hello world", max_length=1)  # transformers truncates here: refused, not ignored
    assert "attention_mask" not in auto("hello world", return_attention_mask=False)
    with pytest.raises(NotImplementedError, match="tokenizer call does not implement truncation"):
        auto("hello world", truncation=True, max_length=1)


def test_offsets_through_normalization_equal_the_oracle():
    # npm tokenizers' offsets (code points) where normalization decomposes, reorders, composes or
    # replaces characters (data/goldens/offsets/, scripts/regen-offset-goldens): each output
    # character keeps the alignment HF's NormalizedString gives it, not its chunk's whole span.
    path = DATA / "goldens/offsets/offsets.jsonl"
    cases = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    tokenizers = {}
    for case in cases:
        name = case["tokenizer"]
        if name not in tokenizers:
            tokenizers[name] = chatwire.Tokenizer.from_file(
                str(DATA / "tokenizers" / name / "tokenizer.json"))
        encoding = tokenizers[name].encode(case["text"], add_special_tokens=False)
        same = (list(encoding.ids) == case["ids"] and
                [list(o) for o in encoding.offsets] == case["offsets"])
        count("tokenizer offsets through normalization (10 tokenizers)", same)
        assert same, (name, case["text"], [list(o) for o in encoding.offsets], case["offsets"])
    assert len(tokenizers) == 10
