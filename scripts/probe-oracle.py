#!/usr/bin/env python3
"""The independent sentinel measurement of chat templates, made with the oracle.

This is the reference for chatwire's C++ probe (src/probe/): the same sentinel
conversation, the same baseline search over input conventions, the same one-axis
flips and the same classification rules, but rendered by the reference renderer
(scripts/oracle/hf_render.py: Jinja2 + transformers' chat-template environment).
Its output, one JSON profile per template, is committed as the goldens
data/goldens/probe/<template>.json that tests/probe/ compares the C++ probe with.

Nothing here is keyed on a template's name or hash: every finding is read from
rendered output.

Usage (standard library + Jinja2, from anywhere):
  scripts/probe-oracle.py                       # regenerate data/goldens/probe/ (data/templates/ and
                                                # the crafted test templates in data/goldens/probe/crafted/,
                                                # the model directories of data/models/ -> models/)
  scripts/probe-oracle.py FILE.jinja|DIR...     # print the profiles of these templates / model dirs
  scripts/probe-oracle.py --out DIR DIR_OR_FILE...
"""
import html
import itertools
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "oracle"))
import hf_render  # noqa: E402
from jinja2 import nodes  # noqa: E402

PROFILE_VERSION = 1
FROZEN_NOW = "2026-01-15T10:00:00"
OTHER_NOW = "2031-07-04T22:30:00"  # the second clock of the date measurement
SPECIAL_TOKENS = {"bos_token": "<s>", "eos_token": "</s>"}

# Sentinels: unique strings that cannot occur in a template by accident. Upper-case
# letters only (and one identifier for the function name), so escaping, JSON
# encoding and quoting leave them intact.
S = {
    "system": "ZXSYSTEMXZ",
    "question": "ZXQUESTIONXZ",
    "reasoning_content": "ZXREASONXZ",
    "thinking": "ZXTHINKXZ",
    "call_name": "get_zxweather",
    "call_argument": "ZXCITYXZ",
    "result": "ZXRESULTXZ",
    "answer": "ZXANSWERXZ",
    "question2": "ZXFOLLOWUPXZ",
    "tool_description": "ZXTOOLDESCXZ",
    "parameter_description": "ZXPARAMDESCXZ",
    "prefill": "ZXPREFILLXZ",
    "answer2": "ZXANSWERTWOXZ",
    "document_title": "ZXDOCTITLEXZ",
    "document_text": "ZXDOCTEXTXZ",
    "bos": "ZXBOSXZ",
    "date": "ZXDATEXZ",
}
ARGUMENT_KEY = "zxcity"
LONG_CALL_ID = "call_ZXLONGID0123456789abcdef"  # OpenAI style: call_ + 24 characters
SHORT_CALL_ID = "ZXCALLID9"  # 9 alphanumerics, what older Mistral templates demand
TEXT_PART_LEAK = "'type': 'text'"  # a content list printed as a Python repr

# Sentinels that count when choosing the baseline (the more kept, the better).
# Reasoning is excluded on purpose: dropping past reasoning is the desired behaviour.
SCORED = ["system", "question", "call_argument", "result", "answer", "question2",
          "tool_description"]
# Sentinels compared between a flip and the baseline to call a flip lossy.
COMPARED = SCORED + ["parameter_description", "call_name", "reasoning_content", "thinking"]

# What markupsafe's escape writes for & < > ' " (and the common named form of ").
HTML_ENTITIES = ["&#34;", "&#39;", "&quot;", "&lt;", "&gt;", "&amp;"]
# Sentinels that the call syntax and the tool definitions put between quotes.
QUOTED_SENTINELS = [S["call_name"], ARGUMENT_KEY, S["call_argument"], S["tool_description"]]
# The messages' own text (not the call syntax or the tool definitions).
CONTENT_SENTINELS = [S["system"], S["question"], S["result"], S["answer"], S["question2"]]


def html_escaped(text, sentinels):
    return any(e + s in text or s + e in text for s in sentinels for e in HTML_ENTITIES)


# The probe axes: one row per input convention: (axis, values, concerns tool
# messages). The first value of each axis is preferred when several combinations keep
# equally many sentinels. Each value names the convention key the profile reports it
# under. An axis about tool messages is reported as an error when the template cannot
# render tool messages at all.
AXES = [
    ("arguments", [("dict", "arguments_dict"), ("string", "arguments_string")], True),
    ("call_id", [("long", "long_call_id"), ("short", "short_call_id")], True),
    ("tools", [("nested", "nested_tools"), ("flat", "flat_tools")], False),
    ("content", [("string", "string_content"), ("parts", "content_parts")], False),
    ("call_content", [("empty", "empty_call_content"), ("null", "null_call_content")], True),
]

# Conversation shapes tried in order until one renders with some convention
# combination: the full tool conversation first, then without the system message,
# then without tool traffic (which still measures where definitions go).
LADDER = [
    ("full", {"system": True, "tool_messages": True}),
    ("no_system", {"system": False, "tool_messages": True}),
    ("no_tool_messages", {"system": True, "tool_messages": False}),
    ("no_system_no_tool_messages", {"system": False, "tool_messages": False}),
]

# Turn families, recognised by a marker in the assistant frame (user suffix +
# assistant prefix). First match wins, so more specific markers come first.
FAMILIES = [
    ("Harmony", "<|start|>assistant"),
    ("ChatML", "<|im_start|>assistant"),
    ("Llama 3", "<|start_header_id|>assistant<|end_header_id|>"),
    ("Llama 4", "<|header_start|>assistant<|header_end|>"),
    ("Gemma 4", "<|turn>model"),
    ("Gemma", "<start_of_turn>model"),
    ("Granite", "<|start_of_role|>assistant<|end_of_role|>"),
    ("Kimi", "<|im_assistant|>"),
    ("DeepSeek", "<｜Assistant｜>"),
    ("Command-R", "<|CHATBOT_TOKEN|>"),
    ("Seed", "<seed:bos>assistant"),
    ("MiniMax", "]~b]ai"),
    ("EXAONE", "[|assistant|]"),
    ("Mistral", "[/INST]"),
    ("pipe role", "<|assistant|>"),
    ("Alpaca", "### Response"),
    ("plain text", "assistant"),
    ("plain text", "Assistant"),
    ("plain text", "ASSISTANT"),
]
# The family of a frame whose markers match no row above but exist (the template has turn
# markers of its own); "unknown" is left for frames with no assistant marker at all.
OTHER_FAMILY = "other"

# Reasoning openers looked for in the generation prompt when the template shows no
# reasoning markers of its own.
REASONING_OPENERS = ["<think>", "<seed:think>", "[THINK]", "<|channel|>analysis", "<|START_THINKING|>",
                     "<|channel>thought"]
# ... and the closers, for the same purpose.
REASONING_CLOSERS = ["</think>", "</seed:think>", "[/THINK]", "<|end|>", "<|END_THINKING|>",
                     "<channel|>"]

# Names the thinking-control measurement never flips: what the renderer passes anyway and
# the environment's own globals.
NOT_FLIPPED = {"messages", "tools", "documents", "add_generation_prompt", "bos_token",
               "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token",
               "additional_special_tokens", "range", "dict", "lipsum", "cycler", "joiner",
               "namespace", "raise_exception", "strftime_now", "loop", "caller", "varargs",
               "kwargs", "self"}
# The error of a template reading a variable nobody passed; render_variant passes it empty.
UNDEFINED_RE = r"UndefinedError: '([A-Za-z_][A-Za-z0-9_]*)' is undefined"
MAX_UNDEFINED = 3
# The values each candidate variable is flipped to (JSON key, value).
FLIP_VALUES = [("true", True), ("false", False), ("string", "ZXVALUEXZ")]

# Content part types of the multimodal measurement: (type, the part as sent).
PART_TYPES = [
    ("image", {"type": "image"}),
    ("image_url", {"type": "image_url", "image_url": {"url": "https://example.com/zx.png"}}),
    ("audio", {"type": "audio"}),
    ("input_audio", {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}),
    ("video", {"type": "video"}),
]

# A literal marker: <...>, </...>, <｜...｜> or [UPPER_CASE] (used to compare the
# markers a template's instructions teach with those it renders in history).
MARKER_RE = r"<[^<> \t\n\r\f\v]{1,64}>|\[[A-Z_]{2,32}\]"
# Characters stripped from a marker to get its core word.
MARKER_BRACKETS = "<>[]|｜"
# The role word of a header, in a pattern derived from the user prefix.
ROLE_RE = r"([A-Za-z_][A-Za-z0-9_.\-]*)(?: [^\n]{0,80}?)?"


# ---------------------------------------------------------------------------
# The sentinel conversation


def tool_definition(shape):
    function = {
        "name": S["call_name"],
        "description": S["tool_description"] + " Get the current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {ARGUMENT_KEY: {"type": "string",
                                          "description": S["parameter_description"] + " City name"}},
            "required": [ARGUMENT_KEY],
        },
    }
    return {"type": "function", "function": function} if shape == "nested" else function


def text(value, shape):
    return [{"type": "text", "text": value}] if shape == "parts" else value


def conversation(conv, shape):
    """The sentinel conversation for one combination of conventions."""
    call_id = LONG_CALL_ID if conv["call_id"] == "long" else SHORT_CALL_ID
    arguments = {ARGUMENT_KEY: S["call_argument"]}
    if conv["arguments"] == "string":
        arguments = json.dumps(arguments)
    messages = []
    if shape["system"]:
        messages.append({"role": "system",
                         "content": text(S["system"] + " You are a helpful assistant.", conv["content"])})
    messages.append({"role": "user",
                     "content": text(S["question"] + " What is the weather in Paris?", conv["content"])})
    if shape["tool_messages"]:
        messages.append({
            "role": "assistant",
            "content": None if conv["call_content"] == "null" else "",
            "tool_calls": [{"id": call_id, "type": "function",
                            "function": {"name": S["call_name"], "arguments": arguments}}],
            "reasoning_content": S["reasoning_content"] + " The user wants the weather.",
            "thinking": S["thinking"] + " I should call the tool.",
        })
        messages.append({"role": "tool", "tool_call_id": call_id, "name": S["call_name"],
                         "content": S["result"] + " 22C and sunny"})
    messages.append({"role": "assistant", "content": S["answer"] + " It is 22C and sunny."})
    messages.append({"role": "user", "content": text(S["question2"] + " And tomorrow?", conv["content"])})
    return {"messages": messages, "tools": [tool_definition(conv["tools"])],
            "add_generation_prompt": True}


def plain(*turns, generation_prompt=False, tools=None):
    """A small conversation without tools: turns are (role, sentinel key) pairs."""
    return {"messages": [{"role": role, "content": S[key]} for role, key in turns],
            "tools": tools, "add_generation_prompt": generation_prompt}


# ---------------------------------------------------------------------------
# Rendering through the oracle


class Renderer:
    def __init__(self, source, special_tokens):
        self.source = source
        self.special_tokens = special_tokens
        self.count = 0

    def render(self, chat):
        """(output, None) or (None, "ErrorType: message"). The chat may carry "kwargs"
        (template variables), "documents" and "now" (strftime_now's clock); the
        {% generation %} spans of the last render are left in self.generation (a list of
        (start, end), empty when none were recorded)."""
        self.count += 1
        chat = dict(chat, special_tokens_map=self.special_tokens)
        now = chat.pop("now", FROZEN_NOW)
        hf_render.FROZEN_NOW = hf_render.datetime.datetime.fromisoformat(now)
        self.generation = []
        try:
            out, gen = hf_render.render_chat(self.source, chat)
            self.generation = list(gen or [])
            return out, None
        except Exception as e:  # every failure is a measurement
            return None, f"{type(e).__name__}: {e}"

    def render_plain(self, chat):
        out, err, _ = self.render_variant(chat)
        return out, err

    def render_variant(self, chat):
        """Renders a small conversation: as given; when that fails or loses a message's text,
        with the sentinel tool (some templates iterate over `tools` unconditionally), with
        it flat, and with every content as text parts (some index content[0]['text']). The
        first variant that keeps every message's text wins, else the first that renders,
        else the first error: (output, error, the variant rendered)."""
        first = None
        for variant in plain_variants(chat):
            out, err = self.render(variant)
            # A variable the template needs but transformers does not pass (e.g. `functions`):
            # given as an empty string, up to MAX_UNDEFINED of them.
            for _ in range(MAX_UNDEFINED):
                m = re.fullmatch(UNDEFINED_RE, err or "")
                if m is None:
                    break
                variant = dict(variant, kwargs=dict(variant.get("kwargs", {}), **{m.group(1): ""}))
                out, err = self.render(variant)
            if out is not None and all(t in out for t in message_texts(variant)):
                return out, None, variant
            if first is None or (first[0] is None and out is not None):
                first = (out, err, variant, self.generation)
        self.generation = first[3]
        return first[:3]


def as_parts(messages):
    """The messages with every string content as one text part."""
    return [dict(m, content=[{"type": "text", "text": m["content"]}])
            if isinstance(m.get("content"), str) else m for m in messages]


def plain_variants(chat):
    variants = [chat]
    if chat.get("tools") is None:
        variants.append(dict(chat, tools=[tool_definition("nested")]))
        variants.append(dict(chat, tools=[tool_definition("flat")]))
    variants.append(dict(chat, messages=as_parts(chat["messages"])))
    return variants


def message_texts(chat):
    """The text of every message (string content, or its text parts)."""
    texts = []
    for m in chat["messages"]:
        content = m.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return texts


# ---------------------------------------------------------------------------
# Text helpers (mirrored by src/probe/)


WHITESPACE = " \t\n\r\f\v"  # ASCII only, so that the C++ probe strips the same


def strip(text_):
    return text_.strip(WHITESPACE)


def is_word_char(c):
    return c.isascii() and (c.isalnum() or c == "_")


def kept(output, keys):
    return [k for k in keys if S[k] in output]


def tokens(text_):
    """Offsets where the atoms of text_ start: a whole marker (MARKER_RE) or one character."""
    starts = []
    i = 0
    pattern = re.compile(MARKER_RE)
    while i < len(text_):
        starts.append(i)
        m = pattern.match(text_, i)
        i = m.end() if m else i + 1
    return starts


def diff_region(a, b):
    """The differing region of a and b after removing their common prefix and suffix,
    counted in atoms so that a marker is never cut in two: (start, end_in_a, end_in_b)."""
    ta, tb = tokens(a) + [len(a)], tokens(b) + [len(b)]
    na, nb = len(ta) - 1, len(tb) - 1

    def atom(t, s, i):
        return s[t[i]:t[i + 1]]

    n = min(na, nb)
    p = 0
    while p < n and atom(ta, a, p) == atom(tb, b, p):
        p += 1
    q = 0
    while q < n - p and atom(ta, a, na - 1 - q) == atom(tb, b, nb - 1 - q):
        q += 1
    return ta[p], ta[na - q], tb[nb - q]


def markers(text_):
    return re.findall(MARKER_RE, text_)


def marker_core(marker):
    return marker.strip(MARKER_BRACKETS)


def header_pattern(user_prefix):
    """A regex for a turn header with any role, derived from the user-turn prefix:
    the word "user" becomes a capture, and the text before it is cut back to the
    marker or line that opens the header (a prefix may start with the previous
    turn's end marker). None when the prefix names no role."""
    pieces = re.split(r"(?i)user", user_prefix)
    if len(pieces) < 2:
        return None
    lead = pieces[0]
    ends = [m.end() for m in re.finditer(MARKER_RE, lead)]
    if ends and ends[-1] == len(lead):  # the header opens with a whole marker
        starts = [m.start() for m in re.finditer(MARKER_RE, lead)]
        lead = lead[starts[-1]:]
    else:  # a partial marker such as "<|" or "<|im_", or plain text after a newline
        cut = max(lead.rfind("<"), lead.rfind("["), lead.rfind("\n") + 1 if "\n" in lead else 0)
        lead = lead[max(cut, 0):]
    pieces[0] = lead
    return lead, re.compile(ROLE_RE.join(re.escape(p) for p in pieces))


def last_header(pattern, output, lo, hi):
    """The header that starts last in [lo, hi) and ends at or before hi: tried at each
    occurrence of its opening text, from the last one back."""
    if pattern is None:
        return None
    lead, regex = pattern
    start = hi
    while True:
        start = output.rfind(lead, lo, start) if lead else start - 1
        if start < lo:
            return None
        if not lead and start > 0 and is_word_char(output[start - 1]):
            continue  # a role word starts a word
        m = regex.match(output, start, hi)
        if m:
            return m


def role_word(match):
    return match.group(1).replace(S["call_name"], "{name}")


# ---------------------------------------------------------------------------
# The probe


def measure_frame(r):
    """Turn frame, system support and alternation from small plain conversations."""
    frame = {"generation_prompt": None, "assistant_prefix": None, "assistant_suffix": None,
             "user_prefix": None, "user_suffix": None, "family": "unknown"}
    u_gen, err_gen = r.render_plain(plain(("user", "question"), generation_prompt=True))
    u, _ = r.render_plain(plain(("user", "question")))
    ua, _ = r.render_plain(plain(("user", "question"), ("assistant", "answer")))
    uau, _ = r.render_plain(plain(("user", "question"), ("assistant", "answer"), ("user", "question2")))
    if u_gen is not None and u is not None:
        p, end_a, _ = diff_region(u_gen, u)
        frame["generation_prompt"] = u_gen[p:end_a]
    if ua is not None and S["answer"] in ua:
        frame["assistant_suffix"] = ua[ua.index(S["answer"]) + len(S["answer"]):]
    # The prefix of an assistant turn in history (the final turn may be rendered
    # differently, e.g. with an empty reasoning block).
    history = uau if uau is not None and S["question2"] in uau else ua
    between = None
    if history is not None and S["question"] in history and S["answer"] in history:
        q_end = history.index(S["question"]) + len(S["question"])
        a_pos = history.find(S["answer"], q_end)
        between = history[q_end:a_pos] if a_pos >= 0 else None
    if between is not None:
        gp = frame["generation_prompt"]
        split = between.rfind(gp) if gp else -1
        if split < 0 and gp:
            # The prompt may open more than a history turn shows (e.g. "<think>\n"): try it
            # shortened by whole atoms, longest first.
            for end in reversed(tokens(gp)[1:] + [len(gp)]):
                candidate = gp[:end].strip(WHITESPACE)
                if candidate and between.rfind(candidate) >= 0:
                    split = between.rfind(candidate)
                    break
        if split < 0:
            split = 0
        frame["user_suffix"] = between[:split]
        frame["assistant_prefix"] = between[split:]
    if uau is not None and S["answer"] in uau and S["question2"] in uau:
        a_end = uau.index(S["answer"]) + len(S["answer"])
        q2 = uau.find(S["question2"], a_end)
        between = uau[a_end:q2] if q2 >= 0 else ""
        suffix = frame["assistant_suffix"] or ""
        frame["user_prefix"] = between[len(suffix):] if suffix and between.startswith(suffix) else between
    elif u is not None and S["question"] in u:
        frame["user_prefix"] = u[:u.index(S["question"])]
    look = (frame["user_suffix"] or "") + (frame["assistant_prefix"] or frame["generation_prompt"] or "")
    for family, marker in FAMILIES:
        if marker in look:
            frame["family"] = family
            break
    else:
        if strip(frame["assistant_prefix"] or frame["generation_prompt"] or ""):
            frame["family"] = OTHER_FAMILY
    if u_gen is None:
        frame["error"] = err_gen

    system = {"supported": False}
    su, err = r.render_plain(plain(("system", "system"), ("user", "question")))
    if su is None:
        system["error"] = err
    elif S["system"] not in su:
        system["error"] = "renders but drops the system message"
    else:
        system["supported"] = True

    alternation = {"required": False}
    uu, err = r.render_plain(plain(("user", "question"), ("user", "question2")))
    # Two user turns that fail say alternation is required only where one user turn renders
    # (a template that renders no plain conversation fails for another reason).
    if uu is None and u is not None:
        alternation["required"] = True
        alternation["error"] = err
    return frame, system, alternation


def read_reasoning_markers(out, frame, example, result):
    """Whether the rendered `out` shows a reasoning field's text between the assistant header
    (after the question) and the answer, and with which markers around it (into `result`)."""
    for field in ("reasoning_content", "thinking"):
        if S[field] in out:
            result["field"] = field
            break
    if result["field"] is None or S["answer"] not in out:
        return result["field"] is not None
    q_end = out.index(S["question"]) + len(S["question"]) if S["question"] in out else 0
    r_pos = out.index(S[result["field"]], q_end)
    a_pos = out.find(S["answer"], r_pos)
    if a_pos < 0:
        return True
    # The reasoning opens after the assistant header: the history prefix, else the prompt's.
    open_from, header = q_end, ""
    for candidate in ((frame["assistant_prefix"] or "").strip(WHITESPACE),
                      (frame["generation_prompt"] or "").strip(WHITESPACE)):
        hit = out.rfind(candidate, q_end, r_pos) if candidate else -1
        if hit >= 0:
            open_from, header = hit + len(candidate), candidate
            break
    if not header:
        # No whole header before the reasoning (Poolside Laguna: the prompt's header closes an
        # empty block, the history's opens one): the turn starts after the user turn's suffix,
        # and the part of the header the two share, up to a marker's or a line's end, is the
        # header.
        span = out[q_end:r_pos]
        user_end = (frame["user_suffix"] or "").strip(WHITESPACE)
        rest = span.lstrip(WHITESPACE)
        if user_end and rest.startswith(user_end):
            rest = rest[len(user_end):].lstrip(WHITESPACE)
            prefix = (frame["assistant_prefix"] or "").strip(WHITESPACE)
            common = 0
            while common < len(prefix) and common < len(rest) and prefix[common] == rest[common]:
                common += 1
            # Back to a marker's or a line's end, leaving the opener at least one marker.
            while common > 0 and (prefix[common - 1] not in ">\n"
                                  or not rest[common:].strip(WHITESPACE)):
                common -= 1
            open_from = r_pos - len(rest) + common
            header = prefix[:common].strip(WHITESPACE)
    opener = out[open_from:r_pos]
    closer = out[r_pos + len(S[result["field"]]):a_pos]
    # A tool loop's turn may write its calls before its text (Gemma 4): the reasoning closes
    # before the call.
    if example and example in closer:
        closer = closer[:closer.index(example)]
    result["open"] = opener.strip(WHITESPACE)
    result["close"] = closer.strip(WHITESPACE)
    # A new assistant header between reasoning and answer: reasoning is a message of its own.
    result["style"] = "channel" if header and header in closer else "tags"
    return True


def tool_loop(chat):
    """The baseline conversation cut after its tool result, as a tool loop renders it for the
    next step: the question bare, the call turn with the answer as its text and both reasoning
    fields."""
    messages = []
    for m in chat["messages"]:
        m = dict(m)
        if m["role"] == "user":
            m["content"] = text(S["question"], "parts" if isinstance(m["content"], list) else "string")
        elif m["role"] == "assistant":
            m.update(content=S["answer"], reasoning_content=S["reasoning_content"], thinking=S["thinking"])
        messages.append(m)
        if m["role"] == "tool":
            break
    return dict(chat, messages=messages)


def measure_reasoning_markers(r, frame, example, tool_chat):
    """Markers around the reasoning of an assistant turn: on the final answer (its reasoning
    field), on a tool loop's turn, and, where no field renders, on reasoning written in a past
    turn's content between known markers, which the template takes out."""
    chat = {"messages": [
        {"role": "user", "content": S["question"]},
        {"role": "assistant", "content": S["answer"],
         "reasoning_content": S["reasoning_content"], "thinking": S["thinking"]}],
        "tools": None, "add_generation_prompt": False}
    out, _ = r.render_plain(chat)
    result = {"style": "none", "field": None, "open": None, "close": None}
    if out is None:
        return result
    if read_reasoning_markers(out, frame, example, result):
        return result
    if tool_chat is not None:
        loop, _ = r.render(tool_loop(tool_chat))
        if loop is not None and read_reasoning_markers(loop, frame, example, result):
            return result
    for opener, closer in zip(REASONING_OPENERS, REASONING_CLOSERS):
        past = plain(("user", "question"), ("assistant", "answer"), ("user", "question2"),
                     generation_prompt=True)
        past["messages"][1]["content"] = opener + S["reasoning_content"] + closer + S["answer"]
        # As given, not through the variants, which take a text the template removes for a
        # failure.
        taken, _ = r.render(past)
        if taken is not None and S["answer"] in taken and S["reasoning_content"] not in taken:
            result.update(style="content", open=opener, close=closer)
            return result
    return result


def baseline_search(r):
    """The combination of conventions that keeps the most sentinels, on the first
    conversation shape of the ladder that renders at all."""
    combos = [dict(zip([a for a, _, _ in AXES], values))
              for values in itertools.product(*[[v for v, _ in vals] for _, vals, _ in AXES])]
    first_error = None
    full_error = None
    for shape_name, shape in LADDER:
        best = None
        results = {}
        for conv in combos:
            out, err = r.render(conversation(conv, shape))
            key = tuple(conv.values())
            results[key] = (out, err)
            if out is None:
                first_error = first_error or err
                continue
            score = len(kept(out, SCORED))
            if best is None or score > best[0]:
                best = (score, conv, out)
        if best is not None:
            return shape_name, shape, best[1], best[2], dict(results, error=full_error)
        full_error = full_error or first_error
    return None, None, None, None, {"error": full_error}


def classify_location(output, pos, pattern, frame, lo=0):
    """Where a sentinel at pos lands: the role of the turn header before it, or
    own_section when it sits outside any turn."""
    turn_ends = [m for m in ((frame["user_suffix"] or "").strip(WHITESPACE),
                             (frame["assistant_suffix"] or "").strip(WHITESPACE)) if m]
    header = last_header(pattern, output, lo, pos)
    if header is not None:
        between = output[header.end():pos]
        if any(end in between for end in turn_ends):
            return "own_section", header
        return role_word(header), header
    return None, None


def definitions_location(output, no_tools_output, pattern, frame, key="tool_description"):
    """Where the sentinel `key` (the tool description, a document's text) lands, and the
    block its input adds to the prompt (the difference from the render without it)."""
    pos = output.find(S[key])
    if pos < 0:
        return "not_rendered", None
    block = None
    if no_tools_output is not None:
        start, end, _ = diff_region(output, no_tools_output)
        block = output[start:end]
    role, _ = classify_location(output, pos, pattern, frame)
    if role is not None:
        mapping = {"system": "system", "developer": "developer", "user": "user"}
        if role == "own_section":
            return "own_section", block
        return mapping.get(role.lower(), "own_turn"), block
    # No role headers to go by: a block that starts a turn of its own is a section;
    # otherwise the tools sit in the turn of the next message sentinel.
    if block is not None:
        start, end, _ = diff_region(output, no_tools_output)
        after = output[end:].lstrip(WHITESPACE)
        starts = [p.strip(WHITESPACE) for p in (frame["user_prefix"], frame["assistant_prefix"]) if p and p.strip(WHITESPACE)]
        if any(after.startswith(p) for p in starts) or not output[:start].strip(WHITESPACE) or \
                any(output[:start].rstrip(WHITESPACE).endswith(e.strip(WHITESPACE)) for e in
                    (frame["assistant_suffix"], frame["user_suffix"]) if e and e.strip(WHITESPACE)):
            return "own_section", block
    following = [(output.find(S[k], pos), k) for k in ("system", "question", "question2")]
    following = sorted((p, k) for p, k in following if p >= 0)
    if following:
        return ("system" if following[0][1] == "system" else "user"), block
    return "own_section", block


def result_role(output, pattern, frame):
    pos = output.find(S["result"])
    if pos < 0:
        return None, None
    lo = 0
    for key in ("call_argument", "question"):
        p = output.find(S[key])
        if 0 <= p < pos:
            lo = p + len(S[key])
            break
    role, header = classify_location(output, pos, pattern, frame, lo)
    if role is not None and role != "own_section":
        return role, header.group(0).replace(S["call_name"], "{name}")
    between = output[lo:pos]
    # Without a usable header pattern, the frame's own prefixes tell user from assistant.
    best = None
    for name, prefix in (("user", frame["user_prefix"]), ("assistant", frame["assistant_prefix"])):
        prefix = (prefix or "").strip(WHITESPACE)
        if prefix and prefix in between:
            at = between.rfind(prefix)
            if best is None or at > best[0]:
                best = (at, name, prefix)
    if best is not None:
        return best[1], best[2]
    return "section", None


def call_example(r, conv, shape, baseline_out):
    """The call as rendered: the difference an assistant tool call makes to a
    conversation that ends with it."""
    base = conversation(conv, shape)
    head = [m for m in base["messages"] if m["role"] in ("system", "user")][:2 if shape["system"] else 1]
    call = next(m for m in base["messages"] if m.get("tool_calls"))
    call = {k: v for k, v in call.items() if k not in ("reasoning_content", "thinking")}
    empty = {"role": "assistant", "content": call["content"]}
    with_call, _ = r.render(dict(base, messages=head + [call], add_generation_prompt=False))
    without, _ = r.render(dict(base, messages=head + [empty], add_generation_prompt=False))
    if with_call is None or without is None or S["call_argument"] not in with_call:
        return None
    start, end, _ = diff_region(with_call, without)
    return with_call[start:end]


def measure_prefill(r, frame):
    """Whether continue_final_message leaves a final assistant message open, what precedes
    its text (the user turn's end and the assistant header, as rendered), and whether that is
    exactly where a generated reply starts (the measured generation prompt)."""
    text = S["prefill"] + " The weather in Paris is"
    chat = plain(("user", "question"), ("assistant", "prefill"))
    chat["messages"][1]["content"] = text
    chat["continue_final_message"] = True
    out, err = r.render_plain(chat)
    prefill = {"supported": False, "prefix": None, "matches_generation_prompt": False,
               "error": err}
    if out is None:
        return prefill
    prefill["error"] = None
    if not out.endswith(text) or S["question"] not in out:
        return prefill
    at = out.index(S["question"]) + len(S["question"])
    prefix = out[at:len(out) - len(text)]
    prefill["supported"] = True
    prefill["prefix"] = prefix
    gp = frame["generation_prompt"]
    prefill["matches_generation_prompt"] = bool(gp) and prefix.endswith(gp)
    return prefill


def duplicate_system_block(r, tools, frame):
    """The caller's one system message becomes a second system block after the one the
    template writes for the tool definitions (Hermes 3 style): the header right before the
    system text (after the previous end-of-turn marker) appears twice before the user's
    question."""
    end = (frame["user_suffix"] or "").strip()
    if tools["definitions_location"] != "system" or not end:
        return None
    out, _ = r.render({"messages": [
        {"role": "system", "content": S["system"] + " You are a helpful assistant."},
        {"role": "user", "content": S["question"] + " What is the weather in Paris?"}],
        "tools": [tool_definition("nested")], "add_generation_prompt": True})
    if out is None or S["system"] not in out or S["question"] not in out:
        return None
    at = out.index(S["system"])
    cut = out.rfind(end, 0, at)
    if cut < 0:
        return None
    header = out[cut + len(end):at].strip()
    head = out[:out.index(S["question"])]
    if not header or head.count(header) < 2:
        return None
    return {"kind": "duplicate_system_block", "header": header, "rendered": head}


RESULT_TEXT = S["result"] + " 22C and sunny"


def user_message_read_as_tool_result(r, out, results, frame):
    """Tool results go in user turns, wrapped in markers; a user message that the caller wrapped
    in the same markers changes how the rest of the conversation renders (Qwen3 takes it for a
    tool result when it looks for the last user query, and keeps the reasoning before it).
    Measured: a follow-up question plain and wrapped as the template wraps results; the two
    renders must differ only in the question's text."""
    end = (frame["user_suffix"] or "").strip()
    if out is None or results["role"] != "user" or not results["header"] or not end:
        return None
    at = out.find(RESULT_TEXT)
    opened = out.rfind(results["header"], 0, at) if at >= 0 else -1
    if opened < 0:
        return None
    closed = out.find(end, at + len(RESULT_TEXT))
    if closed < 0:
        return None
    wrap_open = out[opened + len(results["header"]):at]
    wrap_close = out[at + len(RESULT_TEXT):closed]
    if not wrap_open.strip() and not wrap_close.strip():
        return None
    follow = S["question2"] + " And tomorrow?"
    wrapped = wrap_open + follow + wrap_close

    def chat(content):
        return {"messages": [
            {"role": "user", "content": S["question"] + " What is the weather in Paris?"},
            {"role": "assistant", "content": S["answer"] + " It is 22C and sunny.",
             "reasoning_content": S["reasoning_content"] + " The user wants the weather."},
            {"role": "user", "content": content}], "tools": None, "add_generation_prompt": True}
    as_text, _ = r.render(chat(follow))
    as_result, _ = r.render(chat(wrapped))
    if as_text is None or as_result is None:
        return None
    if as_text.replace(follow, "") == as_result.replace(wrapped, ""):
        return None
    return {"kind": "user_message_read_as_tool_result", "wrapped": wrapped,
            "as_text": as_text, "as_result": as_result}


# ---------------------------------------------------------------------------
# The capability axes of issue 21 (each measured by rendering)


def covered(spans, lo, hi):
    """Whether every position of [lo, hi) lies in some {% generation %} span."""
    pos = lo
    while pos < hi:
        nxt = max((b for a, b in spans if a <= pos < b), default=None)
        if nxt is None:
            return False
        pos = nxt
    return True


def covered_text(out, spans, text_, start=0):
    """None when text_ is not rendered (at or after start), else whether it is covered."""
    pos = out.find(text_, start)
    if pos < 0:
        return None
    return covered(spans, pos, pos + len(text_))


def measure_masks(r, frame, tool_chat):
    """Assistant masks: whether {% generation %} blocks exist and cover exactly the assistant
    content in training mode, and which parts they miss (content, reasoning, tool calls, the
    end-of-turn marker). tool_chat: the baseline tool conversation, or None."""
    chat = {"messages": [
        {"role": "user", "content": S["question"]},
        {"role": "assistant", "content": S["answer"]},
        {"role": "user", "content": S["question2"]},
        {"role": "assistant", "content": S["answer2"],
         "reasoning_content": S["reasoning_content"], "thinking": S["thinking"]}],
        "tools": None, "add_generation_prompt": False}
    masks = {"generation_blocks": False, "content_covered": None, "only_assistant": None,
             "missed": [], "includes": [], "masked": []}
    out, _ = r.render_plain(chat)
    spans = r.generation
    if out is None or not spans:
        return masks
    masks["generation_blocks"] = True
    masks["masked"] = [out[a:b] for a, b in spans]
    content = [covered_text(out, spans, S[k]) for k in ("answer", "answer2")]
    masks["content_covered"] = all(c is True for c in content)
    others = [covered_text(out, spans, S[k]) for k in ("question", "question2")]
    missed = []
    if not masks["content_covered"]:
        missed.append("content")
    if any(covered_text(out, spans, S[k]) is False for k in ("reasoning_content", "thinking")):
        missed.append("reasoning")
    if tool_chat is not None:
        t_out, _ = r.render(dict(tool_chat, add_generation_prompt=False))
        t_spans = r.generation
        if t_out is not None:
            if covered_text(t_out, t_spans, S["call_argument"]) is False:
                missed.append("tool_calls")
            others += [covered_text(t_out, t_spans, S[k]) for k in ("system", "result")]
    end = strip(frame["assistant_suffix"] or "")
    a2 = out.find(S["answer2"])
    if end and a2 >= 0 and covered_text(out, spans, end, a2 + len(S["answer2"])) is False:
        missed.append("end_of_turn")
    masks["only_assistant"] = not any(o is True for o in others)
    masks["missed"] = missed
    # Covered beyond the content: the assistant header before the final answer.
    header = strip(frame["assistant_prefix"] or "")
    q2 = out.find(S["question2"])
    at = out.rfind(header, q2, a2) if header and 0 <= q2 < a2 else -1
    masks["includes"] = ["header"] if at >= 0 and covered(spans, at, at + len(header)) else []
    return masks


def template_names(source):
    """Every name the template's expressions and targets mention (the C++ engine's
    Template::names()), sorted."""
    env, _ = hf_render.compile_template(source)
    tree = env.parse(source)
    names = {n.name for n in tree.find_all(nodes.Name)}
    names |= {n.name for n in tree.find_all(nodes.Macro)}
    names |= {n.name for n in tree.find_all(nodes.NSRef)}
    return sorted(names)


def reasoning_state(out, reasoning):
    """The prompt's reasoning after the follow-up question: "open" (the prompt opens a
    reasoning block), "closed" (it writes an opened and closed, i.e. skipped, block) or
    "none"."""
    at = out.rfind(S["question2"])
    tail = out[at + len(S["question2"]):] if at >= 0 else out
    tags = reasoning["style"] == "tags"
    opens = [reasoning["open"]] if tags and reasoning["open"] else REASONING_OPENERS
    closes = [reasoning["close"]] if tags and reasoning["close"] else REASONING_CLOSERS
    ends = [tail.rfind(o) + len(o) for o in opens if o in tail]
    if not ends:
        return "none"
    return "closed" if any(c in tail[max(ends):] for c in closes) else "open"


def measure_thinking_controls(r, names, reasoning):
    """Which template variables change the rendering, flipped one at a time (to true, to
    false) from the template's own variable names, and what each does to reasoning: opens
    or closes it in the prompt, keeps or drops past reasoning. Variables that change the
    rendering otherwise are listed by name."""
    chat = {"messages": [
        {"role": "user", "content": S["question"]},
        {"role": "assistant", "content": S["answer"],
         "reasoning_content": S["reasoning_content"], "thinking": S["thinking"]},
        {"role": "user", "content": S["question2"]}], "tools": None, "add_generation_prompt": True}
    candidates = [n for n in names if n not in NOT_FLIPPED]
    result = {"candidates": candidates, "prompt": None, "past_reasoning": None, "controls": [],
              "other_variables": []}
    base, _, variant = r.render_variant(chat)
    if base is None:
        return result

    def state(out):
        return reasoning_state(out, reasoning), S["reasoning_content"] in out or S["thinking"] in out

    base_state = state(base)
    result["prompt"], result["past_reasoning"] = base_state
    for name in candidates:
        values, where, effect, raised = {}, None, False, False
        for key, value in FLIP_VALUES:
            out, err = r.render(dict(variant, kwargs=dict(variant.get("kwargs", {}), **{name: value})))
            if out is None:
                values[key] = {"error": err}
                raised = True
                continue
            st = state(out)
            values[key] = {"changed": out != base, "prompt": st[0], "past_reasoning": st[1]}
            if out != base and where is None:
                where = change_site(base, out)
            effect = effect or st != base_state
        if effect:
            result["controls"].append({"name": name, "values": values})
        elif where is not None or raised:
            result["other_variables"].append({"name": name, "where": where or "raises"})
    return result


def change_site(base, out):
    """Where a render first differs from the base render: "preamble" (before the first
    question), "history" (up to the follow-up question) or "prompt" (after it)."""
    start, _, _ = diff_region(out, base)
    q, q2 = base.find(S["question"]), base.rfind(S["question2"])
    if q < 0 or start < q:
        return "preamble"
    return "prompt" if q2 >= 0 and start >= q2 + len(S["question2"]) else "history"


def measure_documents(r, pattern, frame):
    """Documents (RAG): whether `documents` are rendered (text, title) and where."""
    chat = plain(("user", "question"), generation_prompt=True)
    base, _, variant = r.render_variant(chat)
    docs = [{"title": S["document_title"], "text": S["document_text"]}]
    out, err = r.render(dict(variant, documents=docs))
    result = {"rendered": False, "title_rendered": False, "location": "not_rendered",
              "block": None, "error": err}
    if out is None:
        return result
    result["rendered"] = S["document_text"] in out
    result["title_rendered"] = S["document_title"] in out
    if result["rendered"]:
        result["location"], result["block"] = definitions_location(out, base, pattern, frame,
                                                                   key="document_text")
    return result


def measure_multimodal(r):
    """Which content part types render (as what placeholder, in place of the part or moved),
    which are dropped silently and which raise: a user message of two text parts with the
    part between them, against the same message without it."""
    q = {"type": "text", "text": S["question"]}
    q2 = {"type": "text", "text": S["question2"]}

    def chat(parts):
        return {"messages": [{"role": "user", "content": parts}], "tools": None,
                "add_generation_prompt": True}
    base, err, variant = r.render_variant(chat([q, q2]))
    result = {"text_parts": base is not None and S["question"] in base and S["question2"] in base,
              "error": err, "parts": {}}
    for name, part in PART_TYPES:
        out, e = r.render(dict(variant, messages=[{"role": "user", "content": [q, part, q2]}]))
        if out is None:
            entry = {"status": "error", "error": e}
        elif base is None:
            entry = {"status": "rendered"}
        elif out == base:
            entry = {"status": "dropped"}
        else:
            start, end, _ = diff_region(out, base)
            placeholder = out[start:end]
            qa, qb = out.find(S["question"]), out.find(S["question2"])
            # A part written out as data (a Python repr or JSON of the part), not a placeholder.
            printed = "'type'" in placeholder or '"type"' in placeholder
            entry = {"status": "printed" if printed else "placeholder",
                     "placeholder": placeholder,
                     "in_place": qa >= 0 and qb >= 0 and qa + len(S["question"]) <= start and end <= qb}
        result["parts"][name] = entry
    return result


def measure_date(r):
    """Whether the prompt depends on the clock (strftime_now), rendered at two clocks, with
    the differing text at each; and whether a `date_string` variable is written."""
    chat = plain(("user", "question"), generation_prompt=True, tools=[tool_definition("nested")])
    a, _ = r.render(chat)
    if a is None:
        a, _, chat = r.render_variant(dict(chat, tools=None))
    result = {"depends_on_clock": False, "rendered": None, "date_string": False}
    if a is None:
        return result
    b, _ = r.render(dict(chat, now=OTHER_NOW))
    if b is not None and b != a:
        start, end_a, end_b = diff_region(a, b)
        # Widened to whole words, so that "January" and "July" are not cut to "anuary"/"uly".
        while start > 0 and is_word_char(a[start - 1]):
            start -= 1
        while end_a < len(a) and is_word_char(a[end_a]):
            end_a += 1
        while end_b < len(b) and is_word_char(b[end_b]):
            end_b += 1
        result["depends_on_clock"] = True
        result["rendered"] = [a[start:end_a], b[start:end_b]]
    c, _ = r.render(dict(chat, kwargs=dict(chat.get("kwargs", {}), date_string=S["date"])))
    result["date_string"] = c is not None and S["date"] in c
    return result


def measure_bos(r):
    """Whether the template writes bos_token itself (then the tokenizer must not add it
    again): a prompt rendered with bos_token set to a sentinel."""
    chat = plain(("user", "question"), generation_prompt=True)
    out, _, _ = r.render_variant(dict(chat, kwargs={"bos_token": S["bos"]}))
    n = out.count(S["bos"]) if out is not None else 0
    return {"writes_bos_token": n > 0, "at_start": out is not None and out.startswith(S["bos"]),
            "count": n}


def tool_result_without_role(out, results, frame, tool_aware):
    """Tool results written with no role at all: the template has turn markers, and the
    result follows the end of the previous turn with nothing but whitespace or punctuation
    between (no header, no marker)."""
    if out is None or not tool_aware or results["role"] != "section":
        return None
    pos = out.find(S["result"])
    ends = [strip(e) for e in (frame["assistant_suffix"], frame["user_suffix"]) if e and strip(e)]
    if pos < 0 or not ends or not strip(frame["assistant_prefix"] or ""):
        return None
    found = [(out.rfind(e, 0, pos), e) for e in ends if out.rfind(e, 0, pos) >= 0]
    call = out.find(S["call_argument"])
    if not found or call < 0:
        return None
    at, end = max(found, key=lambda f: f[0] + len(f[1]))
    lo = at + len(end)
    if lo < call:
        return None
    lead = out[lo:pos]
    if re.search(MARKER_RE, lead) or any(c.isascii() and c.isalnum() for c in lead):
        return None
    # The evidence: the previous turn's end marker, then the result as rendered.
    return {"kind": "tool_result_without_role", "rendered": out[at:pos + len(RESULT_TEXT)]}



# The capability axes (issue 21): one row per axis, (profile key, measurement), each measured by
# rendering after the frame, the baseline and the reasoning markers. The same rows are
# kCapabilityAxes in src/probe/probe.cpp.
CAPABILITY_AXES = [
    ("assistant_masks", lambda r, m: measure_masks(r, m["frame"], m["tool_chat"])),
    ("thinking_controls", lambda r, m: measure_thinking_controls(r, m["names"], m["reasoning"])),
    ("documents", lambda r, m: measure_documents(r, m["pattern"], m["frame"])),
    ("multimodal", lambda r, m: measure_multimodal(r)),
    ("date", lambda r, m: measure_date(r)),
    ("bos_token", lambda r, m: measure_bos(r)),
]

def probe_template(source, special_tokens=SPECIAL_TOKENS):
    r = Renderer(source, special_tokens)
    names = template_names(source)
    profile = {"profile_version": PROFILE_VERSION}
    frame, system, alternation = measure_frame(r)
    pattern = header_pattern(frame["user_prefix"] or "")

    shape_name, shape, conv, out, results = baseline_search(r)
    profile["renders"] = out is not None
    baseline = {"conversation": shape_name, "conventions": conv, "kept": [], "lost": []}
    if out is None:
        baseline["error"] = results.get("error")
    else:
        present = [k for k in COMPARED if (shape["system"] or k != "system") and
                   (shape["tool_messages"] or k not in ("call_argument", "result", "reasoning_content", "thinking"))]
        baseline["kept"] = kept(out, present)
        baseline["lost"] = [k for k in present if k not in baseline["kept"]]
        if shape_name != LADDER[0][0]:
            baseline["full_conversation_error"] = results["error"]
    profile["baseline"] = baseline

    # One axis at a time, flipped from the baseline.
    conventions = {}
    for axis, values, about_tool_messages in AXES:
        for value, key in values:
            if conv is None:
                conventions[key] = {"status": "error", "error": baseline.get("error")}
                continue
            if about_tool_messages and not shape["tool_messages"]:
                conventions[key] = {"status": "error", "error": results["error"]}
                continue
            flipped = dict(conv, **{axis: value})
            f_out, f_err = results[tuple(flipped.values())]
            if f_out is None:
                conventions[key] = {"status": "error", "error": f_err}
                continue
            lost = [k for k in baseline["kept"] if S[k] not in f_out]
            if value == "parts" and TEXT_PART_LEAK in f_out:
                lost.append("text_parts_printed_as_repr")
            # Arguments in a form no model emits: a dict printed as Python's repr, or a JSON
            # string written into JSON as a string, its quotes escaped.
            if axis == "arguments" and value == "dict" and \
                    f"'{ARGUMENT_KEY}': '{S['call_argument']}'" in f_out:
                lost.append("arguments_printed_as_repr")
            if axis == "arguments" and value == "string" and \
                    f'\\"{ARGUMENT_KEY}\\": \\"{S["call_argument"]}' in f_out:
                lost.append("arguments_double_encoded")
            conventions[key] = {"status": "lossy", "lost": lost} if lost else {"status": "ok"}
    profile["conventions"] = conventions

    # Tools: definitions.
    tools = {"definitions_rendered": False, "definitions_location": "not_rendered", "definitions_block": None}
    if out is not None:
        no_tools, _ = r.render(dict(conversation(conv, shape), tools=None))
        location, block = definitions_location(out, no_tools, pattern, frame)
        tools["definitions_rendered"] = location != "not_rendered"
        tools["definitions_location"] = location
        tools["definitions_block"] = block if tools["definitions_rendered"] else None
    # Whether the template needs a description on every parameter (some read it unguarded,
    # and OpenAI tools may omit it): the baseline again without the parameter's description.
    tools["parameter_description_required"] = None
    if out is not None and tools["definitions_rendered"]:
        bare = conversation(conv, shape)
        for tool in bare["tools"]:
            function = tool.get("function", tool)
            del function["parameters"]["properties"][ARGUMENT_KEY]["description"]
        _, error = r.render(bare)
        if error is not None:
            tools["parameter_description_required"] = error
    profile["tools"] = tools

    calls = {"rendered": False, "example": None, "id_rendered": False}
    results_ = {"rendered": False, "role": None, "header": None}
    if out is not None and shape["tool_messages"]:
        calls["rendered"] = S["call_argument"] in out
        calls["id_rendered"] = (LONG_CALL_ID if conv["call_id"] == "long" else SHORT_CALL_ID) in out
        if calls["rendered"]:
            calls["example"] = call_example(r, conv, shape, out)
        results_["rendered"] = S["result"] in out
        if results_["rendered"]:
            results_["role"], results_["header"] = result_role(out, pattern, frame)
    profile["tool_calls"] = calls
    profile["tool_results"] = results_

    tool_chat = conversation(conv, shape) if out is not None and shape["tool_messages"] else None
    reasoning = measure_reasoning_markers(r, frame, calls["example"], tool_chat)
    reasoning["history_kept"] = bool(out is not None and shape["tool_messages"] and
                                     (S["reasoning_content"] in out or S["thinking"] in out))
    gp = frame["generation_prompt"] or ""
    openers = [reasoning["open"]] if reasoning["style"] == "tags" and reasoning["open"] else REASONING_OPENERS
    reasoning["prompt_opens"] = any(o in gp for o in openers)
    # A template that writes no reasoning of any turn but whose generation prompt opens a block
    # with a known opener (OLMo 3 Think): style "prompt", the prompt's last known opener and
    # its pair's closer.
    if reasoning["style"] == "none" and reasoning["prompt_opens"]:
        last = None
        for opener, closer in zip(REASONING_OPENERS, REASONING_CLOSERS):
            at = gp.rfind(opener)
            if at < 0 or (last is not None and at < last):
                continue
            last = at
            reasoning["open"], reasoning["close"] = opener, closer
        reasoning["style"] = "prompt"
    profile["reasoning"] = {k: reasoning[k] for k in
                            ("history_kept", "style", "field", "open", "close", "prompt_opens")}
    profile["system"] = system
    profile["alternation"] = alternation
    profile["frame"] = frame
    profile["prefill"] = measure_prefill(r, frame)
    measured = {"frame": frame, "pattern": pattern, "reasoning": reasoning, "names": names,
                "tool_chat": conversation(conv, shape) if out is not None and shape["tool_messages"]
                else None}
    for key, measure in CAPABILITY_AXES:
        profile[key] = measure(r, measured)

    silent = []
    if out is not None:
        if tools["definitions_rendered"] and shape["tool_messages"] and not calls["rendered"]:
            silent.append("tool_calls_dropped")
        if not tools["definitions_rendered"] and calls["rendered"]:
            silent.append("tools_ignored")
        if shape["tool_messages"] and not results_["rendered"]:
            silent.append("tool_results_dropped")
        if reasoning["history_kept"]:
            silent.append("reasoning_replayed")
    if not tools["definitions_rendered"] and not calls["rendered"]:
        silent.append("no_tool_support")
    profile["silent_failures"] = silent

    bugs = []
    if tools["definitions_block"] and calls["example"]:
        taught = markers(tools["definitions_block"])
        taught_cores = {marker_core(m) for m in taught}
        for m in markers(calls["example"]):
            if m not in taught and marker_core(m) in taught_cores:
                bugs.append({"kind": "instruction_history_marker_mismatch", "rendered": m,
                             "taught": sorted({t for t in taught if marker_core(t) == marker_core(m)})})
    tool_aware = tools["definitions_rendered"] or calls["rendered"]
    if tool_aware and results_["role"] is not None and results_["role"].lower() == "assistant":
        # The evidence: the result as rendered, from its header on.
        pos = out.find(RESULT_TEXT)
        at = out.rfind(results_["header"], 0, pos) if pos >= 0 and results_["header"] else -1
        bugs.append({"kind": "tool_result_under_assistant", "header": results_["header"],
                     "rendered": out[at:pos + len(RESULT_TEXT)] if at >= 0 else ""})
    # The template HTML-escapes its own call syntax or tool definitions (e.g. a plain str +
    # a |safe value, which Python's Markup.__radd__ escapes): a sentinel next to an entity
    # where the JSON around it had a quote.
    for kind, text in (("html_escaped_call", calls["example"]),
                       ("html_escaped_tools", tools["definitions_block"])):
        if text and html_escaped(text, QUOTED_SENTINELS):
            bugs.append({"kind": kind, "rendered": text, "decoded": html.unescape(text)})
    dup = duplicate_system_block(r, tools, frame)
    if dup is not None:
        bugs.append(dup)
    no_role = tool_result_without_role(out, results_, frame, tool_aware)
    if no_role is not None:
        bugs.append(no_role)
    read_as_result = user_message_read_as_tool_result(r, out, results_, frame)
    if read_as_result is not None:
        bugs.append(read_as_result)
    # The same for the messages' own text: the first line of the conversation as rendered
    # where a message sentinel touches an entity.
    if out is not None:
        for line in out.split("\n"):
            if html_escaped(line, CONTENT_SENTINELS):
                bugs.append({"kind": "html_escaped_content", "rendered": line,
                             "decoded": html.unescape(line)})
                break
    profile["template_bugs"] = bugs
    profile["renders_used"] = r.count
    return profile


MODEL_FILES = ("tokenizer_config.json", "chat_template.jinja", "chat_template.json")


def is_model_dir(path):
    return os.path.isdir(path) and any(os.path.exists(os.path.join(path, f)) for f in MODEL_FILES)


def probe_path(path):
    """The profile of a .jinja file, or of a model directory's template (the one
    transformers picks when tools are given) with the directory's special tokens; a
    template that cannot be loaded or compiled gives {"error": ...}."""
    try:
        if is_model_dir(path):
            templates, tokens = hf_render.load_model_dir(path)
            source = hf_render.select_template(templates, None, [tool_definition("nested")])
        else:
            with open(path, encoding="utf-8") as f:
                source = f.read()
            tokens = SPECIAL_TOKENS
        hf_render.compile_template(source)
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"}
    return probe_template(source, tokens)


def probe_files(files, out_dir):
    for n, path in enumerate(files, 1):
        name = os.path.basename(path.rstrip("/"))
        profile = dict({"template": name}, **probe_path(path))
        text_ = json.dumps(profile, ensure_ascii=False, indent=1) + "\n"
        if out_dir:
            stem = name[:-len(".jinja")] if name.endswith(".jinja") else name
            with open(os.path.join(out_dir, stem + ".json"), "w", encoding="utf-8") as f:
                f.write(text_)
            print(f"[{n}/{len(files)}] {name}", file=sys.stderr)
        else:
            sys.stdout.write(text_)


def jinja_files(directory):
    """The .jinja files and model directories directly under directory, sorted."""
    if is_model_dir(directory):
        return [directory]
    return sorted(os.path.join(directory, f) for f in os.listdir(directory)
                  if f.endswith(".jinja") or is_model_dir(os.path.join(directory, f)))


def main(argv):
    out_dir = None
    if "--out" in argv:
        i = argv.index("--out")
        out_dir = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if not argv and out_dir is None:
        # The goldens: every bundled template, and the probe's own crafted test templates
        # (kept next to their profiles in data/goldens/probe/crafted/).
        goldens = os.path.join(ROOT, "data", "goldens", "probe")
        crafted = os.path.join(goldens, "crafted")
        os.makedirs(goldens, exist_ok=True)
        probe_files(jinja_files(os.path.join(ROOT, "data", "templates")), goldens)
        probe_files(jinja_files(crafted), crafted)
        # The chat layer's model directories: templates found and special tokens read as
        # transformers does.
        models = os.path.join(goldens, "models")
        os.makedirs(models, exist_ok=True)
        probe_files(jinja_files(os.path.join(ROOT, "data", "models")), models)
        return
    files = []
    for path in argv:
        files += jinja_files(path) if os.path.isdir(path) else [path]
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
    probe_files(files, out_dir)


if __name__ == "__main__":
    main(sys.argv[1:])
