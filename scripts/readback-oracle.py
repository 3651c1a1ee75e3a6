#!/usr/bin/env python3
"""The round-trip texts of every bundled template, rendered by the reference renderer.

For each data/templates/*.jinja whose probe golden (data/goldens/probe/) says it renders (the
plain-answer trip for every one; the calls, reasoning and content-beside-a-call trips where it
renders those) (and each crafted data/readback/crafted/*.jinja, probed here by
scripts/probe-oracle.py's algorithm), builds the same conversations as src/readback/roundtrip.cpp (keep the two
in step) and writes data/goldens/readback/<name>.json: per round trip its kind, the number of
calls, the id rule, and the prompt and full renders (or the template's error); crafted ones go
to data/goldens/readback/crafted/.
tests/readback/ checks that chatwire renders the same texts and reads every one back.

  python3 scripts/readback-oracle.py        # PATH python3 with Jinja2 (scripts/oracle/)
"""
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "oracle"))
import hf_render  # noqa: E402

FROZEN_NOW = "2026-01-15T10:00:00"  # the probe's clock (probe::Options::now)
SPECIAL_TOKENS = {"bos_token": "<s>", "eos_token": "</s>"}
SYSTEM = "You are a helpful assistant."
QUESTION = "What is the weather in São Paulo, and set my alarm?"
REASONING = "The user wants the forecast, then the alarm."
ANSWER = "It will be sunny for three days."
NAMES = ["get_weather", "set_alarm"]
ARGUMENT_TEXTS = ['{"city": "São Paulo \\"SP\\"", "days": 3}', '{"enabled": true}']
LONG_IDS = ["call_ABCDEFGHIJKLMNOPQRSTUVWX", "call_BCDEFGHIJKLMNOPQRSTUVWXY"]
SHORT_IDS = ["A1b2C3d4E", "F5g6H7i8J"]
TOOLS = [
    {"type": "function", "function": {"name": "get_weather",
     "description": "Get the weather forecast for a city.",
     "parameters": {"type": "object", "properties": {
         "city": {"type": "string", "description": "City name"},
         "days": {"type": "integer", "description": "Number of days"}},
         "required": ["city", "days"]}}},
    {"type": "function", "function": {"name": "set_alarm",
     "description": "Turn the alarm on or off.",
     "parameters": {"type": "object", "properties": {
         "enabled": {"type": "boolean", "description": "On or off"}},
         "required": ["enabled"]}}},
]


def call_id(rule, i):
    if rule == "named":
        return f"functions.{NAMES[i]}:{i}"
    return SHORT_IDS[i] if rule == "short" else LONG_IDS[i]


def render(source, chat):
    hf_render.FROZEN_NOW = hf_render.datetime.datetime.fromisoformat(FROZEN_NOW)
    try:
        out, _ = hf_render.render_chat(source, dict(chat, special_tokens_map=SPECIAL_TOKENS))
        return out, None
    except Exception as e:  # the template's error is part of the measurement
        return None, f"{type(e).__name__}: {e}"


def trip(source, profile, kind, turn):
    conv = profile["baseline"]["conversation"]
    messages = []
    if conv in ("full", "no_tool_messages"):
        messages.append({"role": "system", "content": SYSTEM})
    messages.append({"role": "user", "content": QUESTION})
    # The tools in the shape the baseline conversation renders with (flat where the template reads
    # no "function" wrapper), as roundtrip.cpp passes them.
    flat = profile["baseline"].get("conventions", {}).get("tools", "nested") == "flat"
    tools = [t["function"] for t in TOOLS] if flat else TOOLS
    prompt, e1 = render(source, {"messages": messages, "tools": tools, "add_generation_prompt": True})
    full, e2 = render(source, {"messages": messages + [turn], "tools": tools,
                               "add_generation_prompt": False})
    return {"kind": kind, "prompt": prompt, "full": full, "error": e1 or e2}


def calls_turn(profile, calls, rule):
    conventions = profile["baseline"].get("conventions", {})
    string_args = conventions.get("arguments", "dict") == "string"
    turn = {"role": "assistant",
            "content": None if conventions.get("call_content", "empty") == "null" else "",
            "tool_calls": [{"id": call_id(rule, i), "type": "function",
                            "function": {"name": NAMES[i],
                                         "arguments": ARGUMENT_TEXTS[i] if string_args
                                         else json.loads(ARGUMENT_TEXTS[i])}}
                           for i in range(calls)]}
    if profile["reasoning"]["style"] in ("tags", "channel"):
        turn[profile["reasoning"].get("field") or "reasoning_content"] = REASONING
    return turn


def generated(t):
    """What follows the prompt, or (when the prompt is not a prefix) what follows the longest
    prefix the two renders share; None when either failed."""
    if t["error"]:
        return None
    prompt, full = t["prompt"], t["full"]
    if full.startswith(prompt):
        return full[len(prompt):]
    # A template that moves text when the turn follows: the turn starts after the question and
    # the prompt's own text after it, where the conversation has them (roundtrip.cpp).
    q_prompt, q_full = prompt.rfind(QUESTION), full.rfind(QUESTION)
    if q_prompt >= 0 and q_full >= 0:
        tail = prompt[q_prompt:]
        if full[q_full:q_full + len(tail)] == tail:
            return full[q_full + len(tail):]
    common = 0
    while common < len(prompt) and common < len(full) and prompt[common] == full[common]:
        common += 1
    if common < len(prompt):  # back to the start of the marker or word they diverge in
        while common > 0 and common < len(full) and not (
                full[common] in "<[" or full[common - 1] in " \n\t>]"):
            common -= 1
    return full[common:]


def round_trips(source, profile):
    out = []
    if profile["tool_calls"]["rendered"]:
        rule = profile["baseline"].get("conventions", {}).get("call_id", "long")
        for calls in (2, 1):
            t = trip(source, profile, "calls", calls_turn(profile, calls, rule))
            g = generated(t)
            if g is not None and NAMES[0] not in g and call_id(rule, 0) in g:
                rule = "named"
                t = trip(source, profile, "calls", calls_turn(profile, calls, rule))
                g = generated(t)
            t.update(calls=calls, id_rule=rule)
            # The prefix test is on the whole render; the C++ side also cuts at end markers,
            # which never removes the second name when this one keeps it.
            if g is not None and calls == 2 and NAMES[1] not in g:
                continue
            if g is not None or calls == 1:
                break
        out.append(t)
    reasoning = profile["reasoning"]
    if reasoning["style"] in ("content", "prompt"):
        # The template takes reasoning from the content, or renders none of its own (only its
        # generation prompt opens a block): written in the content between its markers.
        out.append(trip(source, profile, "reasoning",
                        {"role": "assistant",
                         "content": (reasoning["open"] or "") + REASONING + (reasoning["close"] or "") + ANSWER}))
    elif reasoning["style"] != "none":
        field = reasoning.get("field") or "reasoning_content"
        out.append(trip(source, profile, "reasoning",
                        {"role": "assistant", "content": ANSWER, field: REASONING}))
    # A plain answer, no reasoning and no calls.
    out.append(trip(source, profile, "answer", {"role": "assistant", "content": ANSWER}))
    # Content beside a call (measured with the parser the other trips chose).
    if profile["tool_calls"]["rendered"]:
        rule = out[0]["id_rule"]
        turn = calls_turn(profile, 1, rule)
        turn["content"] = ANSWER
        t = trip(source, profile, "content_calls", turn)
        t.update(calls=1, id_rule=rule)
        out.append(t)
    return out


def write_golden(path, name, source, profile):
    trips = round_trips(source, profile) if profile.get("renders") else []
    if not trips:
        if os.path.exists(path):
            os.remove(path)
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"template": name + ".jinja", "trips": trips},
                           ensure_ascii=False, indent=1) + "\n")


def main():
    templates = os.path.join(ROOT, "data", "templates")
    out_dir = os.path.join(ROOT, "data", "goldens", "readback")
    os.makedirs(out_dir, exist_ok=True)
    names = sorted(f[:-len(".jinja")] for f in os.listdir(templates) if f.endswith(".jinja"))
    for name in names:
        with open(os.path.join(ROOT, "data", "goldens", "probe", name + ".json"), encoding="utf-8") as f:
            profile = json.load(f)
        with open(os.path.join(templates, name + ".jinja"), encoding="utf-8") as f:
            source = f.read()
        write_golden(os.path.join(out_dir, name + ".json"), name, source, profile)
    # Crafted templates: probed by the oracle probe, since they have no probe golden.
    spec = importlib.util.spec_from_file_location("probe_oracle", os.path.join(HERE, "probe-oracle.py"))
    probe_oracle = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe_oracle)
    crafted = os.path.join(ROOT, "data", "readback", "crafted")
    crafted_out = os.path.join(out_dir, "crafted")
    os.makedirs(crafted_out, exist_ok=True)
    for f in sorted(os.listdir(crafted)):
        if not f.endswith(".jinja"):
            continue
        path = os.path.join(crafted, f)
        with open(path, encoding="utf-8") as src:
            source = src.read()
        write_golden(os.path.join(crafted_out, f[:-len(".jinja")] + ".json"), f[:-len(".jinja")],
                     source, probe_oracle.probe_path(path))
    print(f"round-trip goldens in {out_dir}", file=sys.stderr)


if __name__ == "__main__":
    main()
