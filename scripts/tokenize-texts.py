#!/usr/bin/env python3
"""Writes data/goldens/tokenize/texts.json: the varied text set the tokenizer goldens are made from.

Written for this project (multilingual, emoji and combining marks, whitespace runs, code, numbers,
contractions, chat prompts with special tokens, edge cases), plus the 83 inputs of
data/tokenizers/_golden/multilingual/inputs.json. Run: python3 scripts/tokenize-texts.py
"""
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

texts = [
    "",
    " ",
    "  ",
    "\n",
    "\n\n\n",
    "Hello world",
    " Hello world",
    "Hello  world   with    runs     of spaces",
    "trailing spaces   ",
    "   leading spaces",
    "tabs\tand\t\ttabs\t",
    "line one\nline two\r\nline three\rline four\n\n\nafter blank lines",
    "mixed \t \n  \r\n  whitespace \u00a0nbsp\u3000ideographic\u2003em space\u200bzero width",
    "I'm sure you're right, they've said it's John's and we'll see; I'd not. DON'T SHOUT, I'M HERE 'S 'T",
    "rock'n'roll o'clock 'quoted' \"double\" `back`",
    "The year 2024 had 365 days; 1234567890 and 3.14159 and 1,000,000.00 and -42 and +7e10",
    "phone: +1 (555) 123-4567, ISBN 978-3-16-148410-0, v1.2.3-beta.4",
    "١٢٣ ٤٥٦ (Arabic digits) ۱۲۳ (Persian) १२३ (Devanagari) ½ ¾ ⅓ Ⅻ ① ²³",
    "Le cœur a ses raisons que la raison ne connaît point. Ça va? Où est l'hôtel?",
    "Größere Übungen für Äpfel und Öl; straße STRASSE ß ẞ",
    "Él dijo: «¿Dónde está la biblioteca?» ¡Increíble!",
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "Γαζέες καὶ μυρτιὲς δὲν θὰ βρῶ πιὰ στὸ χρυσαφὶ ξέφωτο.",
    "我能吞下玻璃而不伤身体。今天天气很好，我们去公园散步吧！",
    "日本語のテキスト：ひらがな、カタカナ、漢字を混ぜた文章です。ｶﾀｶﾅ半角も。",
    "한국어 문장입니다. 안녕하세요, 만나서 반갑습니다!",
    "مرحبا بالعالم! هذا نص عربي مع أرقام 123 وعلامات ترقيم.",
    "שלום עולם, זה טקסט בעברית.",
    "नमस्ते दुनिया, यह एक हिंदी वाक्य है।",
    "สวัสดีชาวโลก นี่คือภาษาไทย",
    "Xin chào thế giới, tiếng Việt có nhiều dấu: ầ ẩ ẫ ấ ậ ỳ ỷ ỹ ý ỵ",
    "Ελληνικά, ქართული, Հայերեն, አማርኛ, ᏣᎳᎩ, ꦗꦮ",
    "emoji: 😀😃😄 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇫🇷🇯🇵 ❤️ ✨🚀 🤖 and text",
    "combining: e\u0301 a\u0300 o\u0308 n\u0303 (decomposed) vs é à ö ñ (composed); Z\u0351\u0354\u0300a\u0300\u0301l\u0302g\u0303o\u0304",
    "Hangul jamo: \u1100\u1161\u11a8 vs 각; compatibility: ﬁ ﬂ ℌ ① ｆｕｌｌｗｉｄｔｈ ㎞ ™ ㈱",
    "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n\nprint([fib(i) for i in range(10)])\n",
    "#include <stdio.h>\nint main(void) {\n\tprintf(\"%d\\n\", 42);\n\treturn 0;\n}\n",
    '{"name": "chatwire", "version": 1, "tags": ["a", "b"], "nested": {"x": null, "y": true}}',
    "SELECT id, name FROM users WHERE age >= 18 AND name LIKE '%son' ORDER BY id DESC;",
    "const f = (x) => x ** 2; // arrow\nlet s = `template ${f(3)}`;   /* comment */",
    "<html><head><title>Test</title></head><body><table><tr><td>cell</td></tr></table></body></html>",
    "https://example.com/path/to/page?query=1&other=two#frag and mailto:someone@example.org",
    "Math: ∀x∈ℝ, x² ≥ 0; ∑_{i=1}^{n} i = n(n+1)/2; α+β=γ; ∞ ≠ ∅; √2 ≈ 1.414",
    "Punctuation!!! ??? ... --- ___ *** ### @@@ $$$ %%% ^^^ &&& ((( ))) [[[ ]]] {{{ }}} ||| ~~~",
    "a" * 300,
    "ab " * 200,
    "!" * 100 + " " + "\n" * 40 + " " * 70 + "end",
    "word\u180eword U+180E mongolian vowel separator, \ufeffBOM, \u2028line sep\u2029para sep",
    "newer letters: \u1c89 \ua7cc \U000105c0 \U00010d40 \U0002ebf0 and Unicode 15: \U0001f6dc \U00011f00",
    "control chars: \x01\x02\x1b[31mred\x1b[0m \x7f end",
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n<think>\nEasy.\n</think>\n\n4<|im_end|>\n",
    "<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>",
    "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi there!<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
    "<s>[INST] What is your favourite condiment? [/INST]Well, I'm quite partial to a good squeeze of fresh lemon juice.</s> [INST] Do you have mayonnaise recipes? [/INST]",
    "<s>[INST] <<SYS>>\nYou are helpful.\n<</SYS>>\n\nHello <s> world</s> and <unk> too [/INST]",
    "<bos><start_of_turn>user\nWrite a poem about the sea.<end_of_turn>\n<start_of_turn>model\nThe sea, the sea...<end_of_turn>\n",
    "<|endoftext|>Document one.<|endoftext|><|endoftext|>Document two<|endoftext|>",
    "special tokens glued:<|im_end|><|im_start|>x<|im_end|>y</s>z<s>w<|eot_id|>v",
    "partial specials: <|im_ <|im_start <|im_end| <s <s/> </ s> <|begin_of_text| |>",
    "<｜begin▁of▁sentence｜>You are DeepSeek.<｜User｜>Hi<｜Assistant｜><think>\n</think>Hello<｜end▁of▁sentence｜>",
    "<|start|>system<|message|>You are ChatGPT.<|end|><|start|>user<|message|>Hi<|end|><|start|>assistant<|channel|>final<|message|>Hello<|return|>",
    "▁already▁has▁metaspace ▁ ▁▁ ▁▁▁▁",
    "ĠĊ byte-level lookalikes Ġhello âĢĶ",
    "<0x41> <0xE2> literal byte tokens",
    "multi\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\nnewlines",
    "   \n   \n\t\n",
    "mixed 中文 and English 混合 text with 数字123 and emoji 🎉 together",
    "ALL CAPS SENTENCE WITH NUMBERS 123ABC abc123 a1b2c3 CamelCaseWord snake_case_word kebab-case-word",
    "The quick brown fox jumps over the lazy dog. " * 5,
    # added-token flags (data/tokenizers/synthetic_flags) and small pipelines (synthetic_*)
    " <mask> hi a <mask>b x<mask>   <mask>   end",
    "<R>   next a <R>\n\n b <R>",
    "<LR> and   <LR>   x<LR>y",
    "word a word here words sword word_ x word. word,word 1word word1 éword",
    "[SW] x x[SW] y [SW]z  [SW]  ",
    "Hello HELLO hello Héllo ﬁ Hello",
    "<think>x</think> <th <thin <think",
    "hello world 123 4567 ... Hello, World! It's 2 a.m. e.g. v1.2.3",
    "Ünïcödé café NAÏVE   multiple   spaces  here  ",
    "chat wire CHAT, wire. unknown words ?! 42",
]

inputs_path = os.path.join(ROOT, "data/tokenizers/_golden/multilingual/inputs.json")
with open(inputs_path, encoding="utf-8") as f:
    for entry in json.load(f):
        texts.append(entry["text"])

out = os.path.join(ROOT, "data/goldens/tokenize/texts.json")
with open(out, "w", encoding="utf-8") as f:
    json.dump(texts, f, ensure_ascii=False, indent=0)
    f.write("\n")
print(f"{len(texts)} texts -> {out}")
