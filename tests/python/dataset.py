"""A generated chat dataset (deterministic: seeded): conversations of 1 to 4 user/assistant
turns, some with a system message, with ASCII, accented, CJK and emoji words, as training
data looks. Used by the Dask test and bench/python_bench.py."""
import json
import random

WORDS = ("the model answers questions about weather travel code and food quickly "
         "café naïve résumé 東京 天気 こんにちは 🙂 🚀 tokens prompt assistant").split()


def conversation(rng):
    messages = []
    if rng.random() < 0.3:
        messages.append({"role": "system", "content": "You are helpful. " + sentence(rng, 5)})
    for _ in range(rng.randint(1, 4)):
        messages.append({"role": "user", "content": sentence(rng, rng.randint(3, 30))})
        messages.append({"role": "assistant", "content": sentence(rng, rng.randint(3, 60))})
    return messages


def sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def conversations(n, seed=18):
    rng = random.Random(seed)
    return [conversation(rng) for _ in range(n)]


def write_jsonl(path, n, seed=18, bad_lines=()):
    """n conversations as {"messages": [...]} lines; `bad_lines` maps a line index to the raw
    text written there instead (a bad row)."""
    bad = dict(bad_lines)
    with open(path, "w", encoding="utf-8") as f:
        for i, messages in enumerate(conversations(n, seed)):
            if i in bad:
                f.write(bad[i] + "\n")
            else:
                f.write(json.dumps({"id": i, "messages": messages}, ensure_ascii=False) + "\n")
