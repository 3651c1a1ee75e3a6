#!/usr/bin/env python3
"""Writes small synthetic tokenizer.json files that exercise what the real corpus files do not:
added-token flags (lstrip, rstrip, single_word, normalized), normalizers (NFKC, Lowercase, Strip,
Replace with a regex), pre-tokenizers (Digits, Punctuation, Metaspace prepend_scheme=first,
WhitespaceSplit, Split Contiguous/MergedWithNext/Removed+invert), decoders (Metaspace, Strip,
WordPiece-free BPE), BPE with continuing_subword_prefix/end_of_word_suffix, WordLevel.
Goldens for them come from the oracle like every other tokenizer (scripts/regen-tokenize-goldens).
Run: python3 scripts/make-tokenize-synthetic.py
"""
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "data/tokenizers")


def byte_level_alphabet():
    bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def added(id_, content, special=False, normalized=False, lstrip=False, rstrip=False, single_word=False):
    return {"id": id_, "content": content, "single_word": single_word, "lstrip": lstrip, "rstrip": rstrip,
            "normalized": normalized, "special": special}


def write(name, tok, config):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False, indent=1)
    with open(os.path.join(d, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, ensure_ascii=False, indent=1)
    with open(os.path.join(d, "SOURCE.txt"), "w") as f:
        f.write("synthetic, written by scripts/make-tokenize-synthetic.py for this project\n")


def flags_tokenizer():
    # Byte-level BPE over the 256 byte symbols plus a few merges, with flagged added tokens.
    alpha = byte_level_alphabet()
    vocab = {alpha[b]: b for b in range(256)}
    merges = []
    for a, b in [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n"), ("Ġ", "w"), ("o", "r"), ("Ġw", "or"),
                 ("Ġwor", "d"), ("w", "or"), ("wor", "d"), ("Ġ", "Ġ"), ("ĠĠ", "ĠĠ"), ("Ċ", "Ċ")]:
        vocab.setdefault(a + b, len(vocab))
        merges.append(f"{a} {b}")
    n = len(vocab)
    # Ids as HF assigns them when loading (a content already in the vocab keeps its vocab id), so
    # that the file is consistent for every reader.
    tokens = [
        added(n, "<|endoftext|>", special=True),
        added(n + 1, "<mask>", special=True, lstrip=True),
        added(n + 2, "<R>", special=True, rstrip=True),
        added(vocab["word"], "word", single_word=True),
        added(n + 3, "<LR>", special=True, lstrip=True, rstrip=True),
        added(n + 4, "[SW]", special=False, single_word=True, lstrip=True),
        added(n + 5, "Hello", special=False, normalized=True),
        added(n + 6, "<think>", special=False),
        added(n + 7, "<th", special=False),
        # Whitespace added tokens (CodeGen's and phi-2's space runs): "\n" is not the vocab's
        # "Ċ", though both are the byte 0x0A, so HF gives it an id of its own.
        added(n + 8, "\n", special=False),
        added(n + 9, "    ", special=False),
    ]
    tok = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": tokens,
        "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFKC"}]},
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": "<R>", "type_id": 0}}],
                           "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
                           "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [n], "tokens": ["<|endoftext|>"]},
                                              "<R>": {"id": "<R>", "ids": [n + 2], "tokens": ["<R>"]}}},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": merges},
    }
    write("synthetic_flags", tok, {"clean_up_tokenization_spaces": True, "bos_token": "<|endoftext|>"})


def metaspace_tokenizer():
    # SentencePiece-style BPE with Metaspace(first), byte_fallback, fuse_unk, lowercase + regex replace.
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for c in "▁abcdefghijklmnopqrstuvwxyz0123456789.,!?'-éü":
        vocab.setdefault(c, len(vocab))
    merges = []
    for a, b in [("▁", "t"), ("h", "e"), ("▁t", "he"), ("i", "n"), ("▁", "a"), ("e", "r"), ("o", "n"),
                 ("▁", "w"), ("o", "r"), ("l", "d"), ("▁w", "or"), ("▁wor", "ld"), ("▁", "h"), ("e", "l"),
                 ("▁h", "el"), ("l", "o"), ("▁hel", "lo")]:
        vocab.setdefault(a + b, len(vocab))
        merges.append([a, b])
    tok = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added(0, "<unk>", special=True), added(1, "<s>", special=True),
                         added(2, "</s>", special=True)],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Strip", "strip_left": False, "strip_right": True},
            {"type": "Lowercase"},
            {"type": "Replace", "pattern": {"Regex": "\\s{2,}"}, "content": " "}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": True},
            {"type": "Punctuation", "behavior": "Isolated"},
            {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": True}]},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
                           "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]},
                                              "</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Metaspace", "replacement": "▁",
                                                                                  "prepend_scheme": "first", "split": True}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": merges},
    }
    write("synthetic_metaspace", tok, {"clean_up_tokenization_spaces": False})
    # Same with byte_fallback and splits by Split behaviours.
    tok = json.loads(json.dumps(tok))
    tok["model"]["byte_fallback"] = True
    tok["normalizer"] = {"type": "NFD"}
    tok["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "\\p{N}+"}, "behavior": "Contiguous", "invert": False},
        {"type": "Split", "pattern": {"String": "."}, "behavior": "MergedWithNext", "invert": False},
        {"type": "Split", "pattern": {"Regex": "[\\p{L}\\p{M}]+|[^\\s\\p{L}\\p{M}]+"}, "behavior": "Removed", "invert": True},
        {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": False}]}
    write("synthetic_bytefallback", tok, {"clean_up_tokenization_spaces": True})


def wordlevel_tokenizer():
    words = ["[UNK]", "hello", "world", "the", "a", ",", ".", "!", "?", "123", "chat", "wire"]
    tok = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added(0, "[UNK]", special=True)],
        "normalizer": {"type": "Lowercase"},
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": None,
        "decoder": None,
        "model": {"type": "WordLevel", "vocab": {w: i for i, w in enumerate(words)}, "unk_token": "[UNK]"},
    }
    write("synthetic_wordlevel", tok, {"clean_up_tokenization_spaces": False})


def no_unk_tokenizer():
    # BPE without unk_token and without byte_fallback: an unknown character is dropped, and the
    # characters around it merge as if adjacent (HF), across any word cut a reader might make.
    vocab = {c: i for i, c in enumerate("abcdef ")}
    merges = []
    for a, b in [("a", "b"), ("c", "d"), ("ab", "cd"), ("a", "a"), ("e", "f")]:
        vocab.setdefault(a + b, len(vocab))
        merges.append(f"{a} {b}")
    tok = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
        "normalizer": None, "pre_tokenizer": None, "post_processor": None, "decoder": None,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": merges},
    }
    write("synthetic_nounk", tok, {"clean_up_tokenization_spaces": False})


flags_tokenizer()
no_unk_tokenizer()
metaspace_tokenizer()
wordlevel_tokenizer()
print("wrote synthetic tokenizers under data/tokenizers/")
