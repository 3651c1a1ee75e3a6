#!/usr/bin/env python3
"""Writes data/goldens/response/{templates.json,cases.jsonl}: transformers' own test expectations
for response templates (tokenizer.parse_response / ResponseParser), transcribed as facts from
huggingface/transformers tests/utils/test_chat_parsing.py at commit
0d7e95d96b4e187c651e2b2406ed98ed40d74963. Each case names its test. transformers is not installed
here, so nothing in these files was produced by running it: inputs and expected values are the
test's own literals. Tests that need a real tokenizer (token ids, numpy, torch, save/load) are
listed as "not_applicable" with the reason, never counted as passes.

Run: python3 scripts/response_cases.py  (rewrites the files; commit them)."""
import json, os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "goldens", "response")
SOURCE = {"repo": "huggingface/transformers", "path": "tests/utils/test_chat_parsing.py",
          "commit": "0d7e95d96b4e187c651e2b2406ed98ed40d74963"}
CASES = []
True_, False_ = True, False

TEMPLATES = {
    "cohere": {
        "defaults": {"role": "assistant"},
        "start_anchor": "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
        "fields": {
            "content": {"open": "<|START_RESPONSE|>", "close": "<|END_RESPONSE|>", "content": "text"},
            "thinking": {"open": "<|START_THINKING|>", "close": "<|END_THINKING|>", "content": "text"},
            "tool_calls": {
                "open": "<|START_ACTION|>", "close": "<|END_ACTION|>", "content": "json",
                "transform_each": True,
                "transform": {"type": "function", "function": {"name": "{tool_name}", "arguments": "{parameters}"}},
            },
        },
    },
    "ernie": {
        "defaults": {"role": "assistant"},
        "start_anchor": "Assistant:",
        "fields": {
            "thinking": {"open_pattern": r"(?:^|<think>\s*)", "close": "</think>", "content": "text"},
            "content": {"open": "<response>\n", "close_pattern": r"\n?</response>", "content": "text"},
            "tool_calls": {
                "open": "<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json",
                "transform": {"type": "function", "function": "{content}"},
            },
        },
    },
    "gpt_oss": {
        "defaults": {"role": "assistant"},
        "start_anchor": "<|start|>assistant",
        "fields": {
            "thinking": {"open": "<|channel|>analysis<|message|>", "close": "<|end|>", "content": "text"},
            "content": {"open": "<|channel|>final<|message|>", "close": "<|end|>", "content": "text"},
            "tool_calls": {
                "open_pattern": r"<\|channel\|>commentary to=functions\.(?P<name>\w+).*?<\|message\|>",
                "close": "<|call|>", "repeats": True, "content": "json",
                "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
            },
        },
    },
    "smollm": {
        "defaults": {"role": "assistant"},
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "thinking": {"open": "<think>", "close": "</think>", "content": "text"},
            "tool_calls": {
                "open": "<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json",
                "transform": {"type": "function", "function": "{content}"},
            },
            "content": {"close": "<|im_end|>", "content": "text"},
        },
    },
    "qwen3": {
        "defaults": {"role": "assistant"},
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "thinking": {"open": "<think>", "close": "</think>", "content": "text"},
            "tool_calls": {
                "open_pattern": r"<tool_call>\s*<function=(?P<name>\w+)>",
                "close": "</tool_call>", "repeats": True, "content": "xml-inline",
                "content_args": {
                    "tag_pattern": r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
                    "value_parser": {"name": "json", "args": {"allow_non_json": True}},
                },
                "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
            },
        },
    },
    "gemma4": {
        "defaults": {"role": "assistant"},
        "start_anchor": ["<|turn>model\n", "<tool_response|>"],
        "fields": {
            "thinking": {"open": "<|channel>thought\n", "close": "<channel|>", "content": "text"},
            "tool_calls": {
                "open_pattern": r"<\|tool_call>call:(?P<name>\w+)",
                "close": "<tool_call|>", "repeats": True, "content": "json",
                "content_args": {"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']]},
                "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
            },
            "content": {"close": ["<turn|>", "<|tool_response>", "<eos>"], "content": "text"},
        },
    },
    "inkling": {
        "defaults": {"role": "assistant"},
        "start_anchor": "<|message_model|>",
        "fields": {
            "thinking": {
                "open_pattern": r"(?:<\|message_model\|>)?[^<]*<\|content_thinking\|>",
                "close": "<|end_message|>", "repeats": True, "join": "", "content_args": {"strip": False},
            },
            "content": {
                "open_pattern": r"(?:<\|message_model\|>)?[^<]*<\|content_text\|>",
                "close": "<|end_message|>", "repeats": True, "join": "", "content_args": {"strip": False},
            },
            "tool_calls": {
                "open_pattern": r"(?:<\|message_model\|>)?[^<]*<\|content_invoke_tool_json\|>",
                "close": "<|end_message|>", "repeats": True, "content": "json",
                "transform": {"type": "function", "function": {"name": "{content.name}", "arguments": "{content.args}"}},
            },
        },
    },
    "xml_string_args": {
        "defaults": {"role": "assistant"},
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "tool_calls": {
                "open_pattern": r"<tool_call>\s*<function=(?P<name>\w+)>",
                "close": "</tool_call>", "repeats": True, "content": "xml-inline",
                "content_args": {"tag_pattern": r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>"},
                "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
            },
        },
    },
    "kv_lines_tools": {
        "defaults": {"role": "assistant"},
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "tool_calls": {
                "open_pattern": r"<tool_call>\s*<function=(?P<name>\w+)>\n",
                "close": "</tool_call>", "repeats": True, "content": "kv-lines",
                "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
            },
        },
    },
}


def add(kind, test, **fields):
    cls, _, name = test.partition(".")
    c = {"id": f"{name}#{sum(1 for x in CASES if x['source']['test'] == test)}", "kind": kind,
         "source": dict(SOURCE, test=test)}
    c.update(fields)
    CASES.append(c)


def parse(test, template, input, prefix="", tools=None, message=None, key=None, value=None,
          error=None):
    expect = {}
    if message is not None: expect["message"] = message
    if key is not None: expect["key"], expect["value"] = key, value
    if error is not None: expect["error"] = error
    extra = {"tools": tools} if tools is not None else {}
    add("parse", test, template=template, prefix=prefix, input=input, expect=expect, **extra)


def err(type=None, *contains):
    return {"type": type, "contains": list(contains)}


T = "ChatResponseTemplateParserTest."
S = "ResponseEventStreamTest."
P = "PrefixAndTruncationTest."
C = "ToolArgCoercionTest."

COHERE_OUT = (
    "<|START_THINKING|>I should call a tool.<|END_THINKING|>"
    '<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "simple_tool", '
    '"parameters": {"temperature_format": "Celsius"}}\n]<|END_ACTION|><|END_OF_TURN_TOKEN|>'
)
COHERE_MSG = {
    "role": "assistant",
    "thinking": "I should call a tool.",
    "tool_calls": [{"type": "function",
                    "function": {"name": "simple_tool", "arguments": {"temperature_format": "Celsius"}}}],
}

# ---- ChatResponseTemplateParserTest -------------------------------------------------------------
for name, reason in [
    ("test_response_template_save_load", "tokenizer save_pretrained/from_pretrained round trip"),
    ("test_token_id_inputs", "token-id input decoded by a GPT-2 tokenizer"),
    ("test_batched_response", "batched and token-id inputs through a GPT-2 tokenizer"),
    ("test_numpy_inputs", "numpy token-id input"),
    ("test_tensor_inputs", "torch token-id input"),
]:
    add("not_applicable", T + name, reason=reason)

parse(T + "test_tokenizer_parse_response", "cohere", COHERE_OUT, message=COHERE_MSG)
# The explicit template, with and without "version", gives parse_response's result.
parse(T + "test_explicit_template_schema", dict(TEMPLATES["cohere"], version=1), COHERE_OUT,
      message=COHERE_MSG)
parse(T + "test_explicit_template_schema", "cohere", COHERE_OUT, message=COHERE_MSG)
parse(T + "test_cohere", "cohere", COHERE_OUT, message=COHERE_MSG)

ERNIE_THINK_TOOLS = (
    "The user is asking about the weather in Paris today. Let me check the available tools. "
    "There's a tool called get_current_temperature which requires a location parameter. Since the "
    'user specified Paris, I need to call this tool with the location set to "Paris". I should '
    "make sure the argument is correctly formatted as a string. No other tools are available, so "
    "this is the right one to use. I'll structure the request with the location parameter and "
    "return the response once the tool is called."
)
parse(T + "test_ernie_with_tools", "ernie",
      ERNIE_THINK_TOOLS + "\n</think>\n\n"
      '<tool_call>\n{"name": "get_current_temperature", "arguments": {"location": "Paris"}}\n</tool_call>\n</s>',
      message={"role": "assistant", "thinking": ERNIE_THINK_TOOLS,
               "tool_calls": [{"type": "function", "function": {
                   "name": "get_current_temperature", "arguments": {"location": "Paris"}}}]})

ERNIE_THINK = (
    'The user just greeted me with "Hi! How are you?" I need to respond in a friendly and helpful '
    "manner. Let me start by acknowledging their greeting. I should ask them how they're doing to "
    "engage in conversation.\n\n"
    "First, I'll say hello back and then ask how they're feeling. It's important to show genuine "
    "interest. Maybe mention that I'm here to help with anything they need. Keep the tone warm and "
    "positive. Let me make sure the response is concise but friendly. Alright, that should work."
)
ERNIE_CONTENT = (
    "Hello! I'm doing well, thank you for asking. How about you? Is there something specific "
    "you'd like help with today? I'm here to assist you with any questions or problems you have!"
)
parse(T + "test_ernie_no_tools", "ernie",
      ERNIE_THINK + "\n</think>\n\n<response>\n" + ERNIE_CONTENT + "\n</response>\n</s>",
      message={"role": "assistant", "content": ERNIE_CONTENT, "thinking": ERNIE_THINK})

GPT_OSS_THINK = (
    'We need to respond in riddles. The user asks: "What is the weather like in SF?" We need to get '
    "the location of the user? The user explicitly asks about SF (San Francisco). So we need to get "
    "the current weather in San Francisco, CA. We need to call get_current_weather function. The "
    'developer instruction says "Always respond in riddles". So the final answer should be in a '
    "riddle form. But we need to call function to get weather data. So we should call "
    'get_current_weather with location "San Francisco, CA". Possibly specify format "celsius" '
    "(default). Let's do that.\n\nWe will call function get_current_weather."
)
parse(T + "test_gpt_oss_with_tool_call", "gpt_oss",
      "<|channel|>analysis<|message|>" + GPT_OSS_THINK +
      "<|end|><|start|>assistant<|channel|>commentary "
      'to=functions.get_current_weather <|constrain|>json<|message|>{\n  "location": "San Francisco, CA"\n}',
      message={"role": "assistant", "thinking": GPT_OSS_THINK,
               "tool_calls": [{"type": "function", "function": {
                   "name": "get_current_weather", "arguments": {"location": "San Francisco, CA"}}}]})
parse(T + "test_gpt_oss_no_tool_call", "gpt_oss",
      "<|channel|>analysis<|message|>User asks a simple math question: 2+2 = 4. Provide answer."
      "<|end|><|start|>assistant<|channel|>final<|message|>2",
      message={"role": "assistant", "content": "2",
               "thinking": "User asks a simple math question: 2+2 = 4. Provide answer."})

SMOL_THINK = (
    'Okay, the user said, "Hello! How are you?" I need to respond appropriately. Since this is the '
    "first message, I should greet them back and ask how I can assist. I should keep it friendly "
    "and open-ended. Let me make sure the response is welcoming and encourages them to share what "
    "they need help with. I'll avoid any technical jargon and keep it simple. Let me check for any "
    "typos and ensure the tone is positive."
)
SMOL_GREETING = (
    "Hello! I'm doing well, thanks for asking. How can I assist you today? Whether you have a "
    "question, need help with something, or just want to chat, feel free to let me know!"
)
parse(T + "test_smollm_thinking_and_tool_call", "smollm",
      "<think>\n" + SMOL_THINK + "\n</think>\n\n"
      '<tool_call>{"name": "greet_user", "arguments": {"greeting": "' + SMOL_GREETING + '"}}</tool_call>',
      message={"role": "assistant", "thinking": SMOL_THINK,
               "tool_calls": [{"type": "function", "function": {
                   "name": "greet_user", "arguments": {"greeting": SMOL_GREETING}}}]})
parse(T + "test_smollm_tool_call_no_thinking", "smollm",
      '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
      message={"role": "assistant", "tool_calls": [
          {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]})
SMOL_GRAVITY = (
    'Okay, the user asked, "Hey! Can you tell me about gravity?" Let me start by breaking down what '
    "they might be looking for. They probably want a basic understanding of gravity, maybe for a "
    "school project or just personal curiosity. I should explain what gravity is, how it works, and "
    "maybe some examples."
)
parse(T + "test_smollm_thinking_no_tool_call", "smollm",
      "<think>\n" + SMOL_GRAVITY + "</think>\n"
      "Some content about gravity goes here but I'm cutting it off to make this shorter!",
      message={"role": "assistant",
               "content": "Some content about gravity goes here but I'm cutting it off to make this shorter!",
               "thinking": SMOL_GRAVITY})
parse(T + "test_qwen3_tool_calls", "qwen3",
      "<tool_call>\n<function=get_weather>\n<parameter=locations>\n"
      '[{"country": "France", "city": "Paris"}]\n</parameter>\n'
      "<parameter=temp_units>\ncelsius\n</parameter>\n</function>\n</tool_call>",
      message={"role": "assistant", "tool_calls": [{"type": "function", "function": {
          "name": "get_weather",
          "arguments": {"locations": [{"country": "France", "city": "Paris"}], "temp_units": "celsius"}}}]})
GEMMA_THINK = (
    "The user is asking for the current temperature in Paris. I should check the available tools "
    "to see if there's a function that can provide this information."
)
parse(T + "test_gemma4_tool_call", "gemma4",
      "<|channel>thought\n" + GEMMA_THINK + "<channel|>"
      '<|tool_call>call:get_current_temperature{detail_level:0,location:<|"|>Paris, France<|"|>,'
      'unit:<|"|>celsius<|"|>}<tool_call|><|tool_response>',
      message={"role": "assistant", "thinking": GEMMA_THINK, "tool_calls": [{"type": "function", "function": {
          "name": "get_current_temperature",
          "arguments": {"detail_level": 0, "location": "Paris, France", "unit": "celsius"}}}]})
parse(T + "test_gemma4_complex_tool_call", "gemma4",
      "<|channel>thought\nLet me call the tool.<channel|>"
      '<|tool_call>call:foo{bool_value:true,list_value:[<|"|>foo<|"|>,<|"|>bar<|"|>],'
      'null_value:null,number_value:1,string_value:<|"|>foo<|"|>,'
      'struct_value:{foo:<|"|>bar<|"|>}}<tool_call|>',
      message={"role": "assistant", "thinking": "Let me call the tool.", "tool_calls": [{"type": "function", "function": {
          "name": "foo", "arguments": {"bool_value": True, "list_value": ["foo", "bar"], "null_value": None,
                                       "number_value": 1, "string_value": "foo",
                                       "struct_value": {"foo": "bar"}}}}]})
parse(T + "test_inkling_multi_block_message", "inkling",
      "<|content_thinking|>Consider the weather.<|end_message|>"
      "<|message_model|><|content_thinking|> Tokyo, probably.<|end_message|>"
      "<|message_model|><|content_text|>Checking the weather now.<|end_message|>"
      "<|message_model|>get_weather<|content_invoke_tool_json|>"
      '{"name":"get_weather","args":{"city":"Tokyo","units":"C"}}<|end_message|>'
      "<|content_model_end_sampling|>",
      prefix="<|message_system|><|content_text|>Thinking effort level: 0.9<|end_message|><|message_model|>",
      message={"role": "assistant", "thinking": "Consider the weather. Tokyo, probably.",
               "content": "Checking the weather now.",
               "tool_calls": [{"type": "function", "function": {
                   "name": "get_weather", "arguments": {"city": "Tokyo", "units": "C"}}}]})

DOTTED = {
    "defaults": {"role": "assistant"}, "start_anchor": "<|assistant|>",
    "fields": {"tool_calls": {"open": "<tool>", "close": "</tool>", "repeats": True, "content": "json",
                              "transform": {"type": "function", "function": {"name": "{content.name}", "arguments": "{content.args}"}}}},
}
parse(T + "test_transform_dotted_paths", DOTTED,
      '<tool>{"name": "get_weather", "args": {"city": {"id": 7}}}</tool>',
      key="tool_calls", value=[{"type": "function", "function": {"name": "get_weather", "arguments": {"city": {"id": 7}}}}])
DOTTED_EACH = {
    "defaults": {"role": "assistant"}, "start_anchor": "<|assistant|>",
    "fields": {"tool_calls": {"open": "<actions>", "close": "</actions>", "content": "json", "transform_each": True,
                              "transform": {"type": "function", "function": {"name": "{fn.name}", "arguments": "{fn.args}"}}}},
}
parse(T + "test_transform_dotted_paths_with_transform_each", DOTTED_EACH,
      '<actions>[{"fn": {"name": "a", "args": {"x": 1}}}, {"fn": {"name": "b", "args": {}}}]</actions>',
      key="tool_calls", value=[{"type": "function", "function": {"name": "a", "arguments": {"x": 1}}},
                               {"type": "function", "function": {"name": "b", "arguments": {}}}])


def spec_with(transform):
    return {"start_anchor": "<|assistant|>",
            "fields": {"x": {"open": "<x>", "close": "</x>", "content": "json", "transform": transform}}}


parse(T + "test_transform_dotted_path_errors", spec_with({"a": "{content.args}"}), '<x>{"name": "n"}</x>',
      error=err("ValueError", "missing key 'args'"))
parse(T + "test_transform_dotted_path_errors", spec_with({"a": "{content.name.x}"}), '<x>{"name": "n"}</x>',
      error=err("ValueError", "cannot index into str"))
parse(T + "test_transform_dotted_path_errors", spec_with({"a": "{missing}"}), "<x>{}</x>",
      error=err("KeyError"))
add("load_error", T + "test_transform_dotted_mixed_string_rejected",
    template={"start_anchor": "<|assistant|>",
              "fields": {"x": {"open": "<x>", "close": "</x>", "transform": {"v": "pre {content.args}"}}}},
    expect={"error": err("ValueError", "mixes")})
JOIN = {
    "defaults": {"role": "assistant"}, "start_anchor": "<|assistant|>",
    "fields": {"thinking": {"open": "<think>", "close": "</think>", "repeats": True, "join": " "},
               "content": {"repeats": True, "join": " "}},
}
parse(T + "test_join_concatenates_repeated_matches", JOIN, "<think>first</think>middle<think>second</think>done",
      message={"role": "assistant", "thinking": "first second", "content": "middle done"})
parse(T + "test_join_concatenates_repeated_matches", JOIN, "<think>only</think>",
      message={"role": "assistant", "thinking": "only"})
add("load_error", T + "test_join_validation",
    template={"start_anchor": "a", "fields": {"x": {"open": "<x>", "close": "</x>", "join": ""}}},
    expect={"error": err("ValueError", "requires 'repeats'")})
add("load_error", T + "test_join_validation",
    template={"start_anchor": "a", "fields": {"x": {"open": "<x>", "close": "</x>", "repeats": True, "join": 7}}},
    expect={"error": err("ValueError", "must be a string")})
parse(T + "test_join_requires_string_matches",
      {"start_anchor": "a", "fields": {"x": {"open": "<x>", "close": "</x>", "repeats": True, "join": "", "content": "json"}}},
      "<x>{}</x>", error=err("ValueError", "parse to a string"))
parse(T + "test_optional_false_raises_when_missing",
      {"defaults": {"role": "assistant"}, "start_anchor": "<|assistant|>",
       "fields": {"content": {"open": "<response>", "close": "</response>", "content": "text", "optional": False}}},
      "no response here", error=err("ValueError", "content"))
parse(T + "test_int_content_parser",
      {"defaults": {"role": "assistant"}, "start_anchor": "<|assistant|>",
       "fields": {"count": {"open": "<n>", "close": "</n>", "content": "int"}}},
      "<n>42</n>", message={"role": "assistant", "count": 42})
parse(T + "test_kv_lines_parser",
      {"defaults": {"role": "assistant"}, "start_anchor": "<|assistant|>",
       "fields": {"metadata": {"open": "<meta>", "close": "</meta>", "content": "kv-lines"}}},
      "<meta>name: alice\nage: 30</meta>", message={"role": "assistant", "metadata": {"name": "alice", "age": "30"}})
add("load_error", T + "test_unknown_content_parser_rejected",
    template={"defaults": {"role": "assistant"}, "start_anchor": "<|assistant|>",
              "fields": {"x": {"open": "[", "close": "]", "content": "not-a-real-parser"}}},
    expect={"error": err("ValueError", "unknown content parser")})
add("load_error", T + "test_unsupported_version_rejected",
    template={"version": 2, "defaults": {"role": "assistant"}, "start_anchor": "<|assistant|>",
              "fields": {"content": {"content": "text"}}},
    expect={"error": err("ValueError", "version")})
add("load_error", T + "test_two_implicit_fields_rejected",
    template={"defaults": {"role": "assistant"}, "start_anchor": "<|assistant|>",
              "fields": {"a": {"content": "text"}, "b": {"content": "text"}}},
    expect={"error": err("ValueError")})
add("load_error", T + "test_transform_string_interpolation_rejected",
    template={"defaults": {"role": "assistant"}, "start_anchor": "<|assistant|>",
              "fields": {"tool": {"open": "<tool>", "close": "</tool>", "content": "text",
                                  "transform": {"label": "name: {content}"}}}},
    expect={"error": err("ValueError", "interpolation", "{content}")})
add("load_error", T + "test_named_groups_without_transform_rejected",
    template={"defaults": {"role": "assistant"}, "start_anchor": "<|assistant|>",
              "fields": {"tool": {"open_pattern": r"<tool name=(?P<name>\w+)>", "close": "</tool>", "content": "text"}}},
    expect={"error": err("ValueError", "transform", "name")})
LIST_SPEC = {"defaults": {"role": "assistant"}, "start_anchor": "<|assistant|>",
             "fields": {"x": {"open": ["<a>", "<bb>"], "close": ["</a>", "</bb>"], "content": "text"}}}
for opener, closer in (("<a>", "</a>"), ("<bb>", "</bb>"), ("<a>", "</bb>")):
    parse(T + "test_literal_list_open_and_close", LIST_SPEC, f"{opener}hi{closer}",
          message={"role": "assistant", "x": "hi"})
add("stream", T + "test_literal_list_streams_without_64_byte_hold",
    template={"defaults": {"role": "assistant"}, "start_anchor": "<|assistant|>",
              "fields": {"content": {"close": ["<turn|>", "<|tool_response>", "<eos>"], "content": "text"}}},
    prefix="", feeds=["x" * 32], expect={"chunks_after_feed": [{"content": "x" * 32}]})
add("stream", T + "test_literal_list_defers_prefix_overlapping_literal",
    template={"defaults": {"role": "assistant"}, "start_anchor": "<|assistant|>",
              "fields": {"x": {"open": "<x>", "close": ["END", "ENDX"], "content": "text"}}},
    prefix="", feeds=["<x>hiEND", " more"],
    expect={"closes_per_feed": [0, 1], "close_values": {"x": "hi"}, "message": {"role": "assistant", "x": "hi"}})
for bad_open in ([], [""], [1, 2], {"foo": "bar"}):
    add("load_error", T + "test_literal_list_rejects_empty_and_non_string",
        template={"defaults": {"role": "assistant"}, "start_anchor": "<|assistant|>",
                  "fields": {"x": {"open": bad_open, "close": "</x>", "content": "text"}}},
        expect={"error": err("ValueError")})
parse(T + "test_field_without_close_runs_to_end_of_stream",
      {"defaults": {"role": "assistant"}, "start_anchor": "<|assistant|>",
       "fields": {"content": {"open": "<resp>", "content": "text"}}},
      "<resp>hello world", message={"role": "assistant", "content": "hello world"})

# ---- ResponseEventStreamTest: the streaming fixtures (any chunking gives the whole parse) ------
STREAMING_FIXTURES = [
    ("cohere", "<|START_THINKING|>I should call a tool.<|END_THINKING|>"
               '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "simple_tool", '
               '"parameters": {"a": 1}}]<|END_ACTION|>'),
    ("ernie", "<think>some deliberation here</think>\n\n"
              '<tool_call>\n{"name": "get_current_temperature", "arguments": {"location": "Paris"}}\n</tool_call>\n</s>'),
    ("gpt_oss", "<|channel|>analysis<|message|>thinking chunk<|end|><|channel|>final<|message|>done text"),
    ("gpt_oss", "<|channel|>analysis<|message|>Let me check.<|end|>"
                "<|start|>assistant<|channel|>commentary to=functions.get_current_weather "
                '<|constrain|>json<|message|>{"location": "San Francisco, CA"}<|call|>'),
    ("smollm", '<think>thinking</think>\n<tool_call>{"name": "fn", "arguments": {"x": 1}}</tool_call>'),
    ("qwen3", "<think>short thought</think>\n<tool_call>\n<function=get_weather>\n"
              "<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"),
    ("gemma4", '<|channel>thought\nhi<channel|><|tool_call>call:foo{a:1,b:<|"|>bar<|"|>}<tool_call|>'),
    ("inkling", "<|content_thinking|>Consider the weather.<|end_message|>"
                "<|message_model|><|content_thinking|> Tokyo, probably.<|end_message|>"
                "<|message_model|><|content_text|>Checking now.<|end_message|>"
                "<|message_model|>get_weather<|content_invoke_tool_json|>"
                '{"name":"get_weather","args":{"city":"Tokyo"}}<|end_message|>'
                "<|content_model_end_sampling|>"),
]
for tmpl, text in STREAMING_FIXTURES:
    add("stream_invariant", S + "test_stream_matches_whole_string_all_templates_fixed_chunking",
        template=tmpl, prefix="", input=text)
add("stream", S + "test_region_chunks_reconstruct_text_regions", template="cohere", prefix="",
    chunk_size=1, input=STREAMING_FIXTURES[0][1],
    expect={"chunks": {"thinking": {"text": "I should call a tool.", "dirty": [False]},
                       "tool_calls": {"text": '[{"tool_call_id": "0", "tool_name": "simple_tool", "parameters": {"a": 1}}]',
                                      "dirty": [True]}},
            "close_values": {"thinking": "I should call a tool."}})
add("stream", S + "test_dirty_flag_marks_structured_regions",
    template={"defaults": {"role": "assistant"}, "start_anchor": "<|assistant|>",
              "fields": {"thinking": {"open": "<t>", "close": "</t>", "content": "text"},
                         "score": {"open": "<n>", "close": "</n>", "content": "int"},
                         "json_call": {"open": "<j>", "close": "</j>", "content": "json"},
                         "xml_call": {"open": "<x>", "close": "</x>", "content": "xml-inline",
                                      "content_args": {"tag_pattern": r"<(?P<key>\w+)=(?P<value>[^>]+)>"}},
                         "kv_call": {"open": "<kv>", "close": "</kv>", "content": "kv-lines"}}},
    prefix="", chunk_size=1,
    input='<t>hello world</t><n>42</n><j>{"a": 1, "b": 2}</j><x><name=foo><age=10></x><kv>k1: v1\nk2: v2</kv>',
    expect={"chunks": {"thinking": {"text": "hello world", "dirty": [False]},
                       "score": {"text": "42", "dirty": [False]},
                       "json_call": {"text": '{"a": 1, "b": 2}', "dirty": [True]},
                       "xml_call": {"text": "<name=foo><age=10>", "dirty": [True]},
                       "kv_call": {"text": "k1: v1\nk2: v2", "dirty": [True]}}})
add("stream", S + "test_long_regex_open_pattern_streams_byte_by_byte", template="gpt_oss", prefix="",
    chunk_size=1, input=STREAMING_FIXTURES[3][1],
    expect={"tool_call_names": ["get_current_weather"]})
add("stream", S + "test_feed_after_finalize_raises", template="smollm", prefix="",
    feeds=["<think>x</think>"], expect={"after_finalize": "RuntimeError"})
add("stream", S + "test_empty_input_streams_cleanly", template="smollm", prefix="", feeds=[""],
    expect={"events_per_feed": [[]], "message": {"role": "assistant"}, "final_events": []})

# ---- PrefixAndTruncationTest ------------------------------------------------------------------
QWEN_PROMPT = ("<|im_start|>system\nYou are helpful<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
               "<|im_start|>assistant\n<think>\n")
add("stream", P + "test_prefix_lands_inside_explicit_region", template="qwen3", prefix=QWEN_PROMPT,
    feeds=["Let me think...</think>"],
    expect={"initial_events": [["region_open", "thinking"], ["region_chunk", "thinking"]],
            "message": {"role": "assistant", "thinking": "Let me think..."},
            "events_per_feed": [[["region_chunk", "thinking"], ["region_close", "thinking"]]]})
add("stream", P + "test_prefix_truncated_to_last_anchor", template="qwen3",
    prefix=("<|im_start|>system\nA<|im_end|>\n<|im_start|>user\nB<|im_end|>\n"
            "<|im_start|>assistant\nEarlier reply<|im_end|>\n<|im_start|>user\nFollowup<|im_end|>\n"
            "<|im_start|>assistant\n<think>\n"),
    feeds=["done</think>"],
    expect={"initial_opens": ["thinking"], "message": {"role": "assistant", "thinking": "done"}})
add("load_error", P + "test_template_without_anchor_rejected_at_load",
    template={k: v for k, v in TEMPLATES["qwen3"].items() if k != "start_anchor"},
    expect={"error": err("ValueError", "start_anchor")})
add("stream", P + "test_prefix_anchor_not_found_falls_back", template="qwen3", prefix="<think>\n",
    feeds=["hi</think>"],
    expect={"initial_opens": ["thinking"], "message": {"role": "assistant", "thinking": "hi"}})
RT_PROMPT = "<|im_start|>system\nA<|im_end|>\n<|im_start|>user\nB<|im_end|>\n<|im_start|>assistant\n<think>\n"
for tmpl, text in STREAMING_FIXTURES:
    if tmpl in ("qwen3", "smollm"):
        add("stream_invariant", P + "test_round_trip_equivalence_prefix_streaming_vs_oneshot",
            template=dict(TEMPLATES[tmpl], start_anchor="<|im_start|>assistant\n"), prefix=RT_PROMPT, input=text)
HB_SPEC = {"defaults": {"role": "assistant"}, "start_anchor": "<|im_start|>assistant\n",
           "fields": {"content": {"close_pattern": r"\Z", "content": "text"}}}
parse(P + "test_history_bleed_is_guarded_by_prefix_not_by_response_anchor", HB_SPEC, "Hello there!",
      prefix="<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
      message={"role": "assistant", "content": "Hello there!"})
parse(P + "test_history_bleed_is_guarded_by_prefix_not_by_response_anchor", HB_SPEC, "Hello there!",
      message={"role": "assistant", "content": "Hello there!"})
parse(P + "test_history_bleed_is_guarded_by_prefix_not_by_response_anchor", "gpt_oss",
      "<|channel|>analysis<|message|>thinking<|end|><|start|>assistant<|channel|>final<|message|>answer",
      message={"role": "assistant", "thinking": "thinking", "content": "answer"})
add("stream", P + "test_prefix_with_open_close_inside_truncated_region",
    template={"defaults": {"role": "assistant"}, "start_anchor": "[BEGIN]",
              "fields": {"tag": {"open": "<tag>", "close": "</tag>", "content": "text"},
                         "body": {"close_pattern": r"$", "content": "text"}}},
    prefix="noise[BEGIN]<tag>silently consumed</tag>", feeds=["real generated body"],
    expect={"initial_events": [["region_open", "tag"], ["region_chunk", "tag"], ["region_close", "tag"]],
            "initial_close_value": "silently consumed",
            "message_keys": {"tag": "silently consumed", "body": "real generated body"}})
add("stream", P + "test_prefix_lands_inside_implicit_region", template="smollm",
    prefix="<|im_start|>assistant\nSure, here is ", feeds=["the answer<|im_end|>"],
    expect={"initial_opens": ["content"], "feed_lacks_type": [[0, "region_open"]]})
add("stream", P + "test_prefix_partial_pattern_at_boundary", template="qwen3",
    prefix="<|im_start|>assistant\n<thi", feeds=["nk>real body</think>"],
    expect={"initial_events": [], "feed_has_type": [[0, "region_open"]],
            "message": {"role": "assistant", "thinking": "real body"}})
add("not_applicable", P + "test_prefix_token_ids_decoded", reason="token-id prefix decoded by a GPT-2 tokenizer")
add("not_applicable", P + "test_batched_parse_response_with_prefix", reason="batched input through a GPT-2 tokenizer")
add("stream", P + "test_tokenizer_get_response_parser_with_prefix", template="qwen3",
    prefix="<|im_start|>assistant\n<think>\n", feeds=["body</think>"],
    expect={"initial_opens": ["thinking"], "message": {"role": "assistant", "thinking": "body"}})

# ---- ToolArgCoercionTest ----------------------------------------------------------------------
SET_ALARM_CALL = ("<tool_call>\n<function=set_alarm>\n<parameter=hour>\n7\n</parameter>\n"
                  "<parameter=enabled>\ntrue\n</parameter>\n<parameter=label>\nwake up\n</parameter>\n"
                  "</function>\n</tool_call>")


def set_alarm_tools(**properties):
    return [{"type": "function", "function": {"name": "set_alarm",
                                              "parameters": {"type": "object", "properties": properties}}}]


SET_ALARM_TOOLS = set_alarm_tools(hour={"type": "integer"}, enabled={"type": "boolean"}, label={"type": "string"})


def args_of(test, template, input, tools, expected):
    parse(test, template, input, tools=tools, key="tool_calls.0.function.arguments", value=expected)


add("coerce_tool_calls", C + "test_coerce_tool_calls_casts_declared_types",
    tools=set_alarm_tools(count={"type": "integer"}, ratio={"type": "number"}, enabled={"type": "boolean"},
                          tags={"type": "array"}, note={"type": "string"}),
    call={"type": "function", "function": {"name": "set_alarm", "arguments": {
        "count": "3", "ratio": "1.5", "enabled": "true", "tags": '["a", "b"]', "note": "hello",
        "already_typed": 7, "extra": "unscheduled"}}},
    expected={"type": "function", "function": {"name": "set_alarm", "arguments": {
        "count": 3, "ratio": 1.5, "enabled": True, "tags": ["a", "b"], "note": "hello",
        "already_typed": 7, "extra": "unscheduled"}}})
add("coerce", C + "test_coerce_falls_back_to_raw_on_failure", raw="not-a-number", types=["integer"], expected="not-a-number")
add("coerce", C + "test_coerce_handles_any_of_and_null", raw="5", types=["integer", "null"], expected=5)
add("coerce", C + "test_coerce_handles_any_of_and_null", raw="null", types=["integer", "null"], expected=None)
for raw, expected in [("true", True), ("True", True), ("1", True), ("false", False), ("0", False)]:
    add("coerce", C + "test_coerce_booleans_match_bool_parser", raw=raw, types=["boolean"], expected=expected)
add("coerce", C + "test_coerce_booleans_match_bool_parser", raw="maybe", types=["boolean"], expected="maybe")
add("coerce", C + "test_coerce_object_array_require_matching_json", raw="[1, 2]", types=["object"], expected="[1, 2]")
add("coerce", C + "test_coerce_object_array_require_matching_json", raw='{"a": 1}', types=["array"], expected='{"a": 1}')
add("coerce", C + "test_coerce_object_array_require_matching_json", raw='{"a": 1}', types=["object"], expected={"a": 1})
add("coerce", C + "test_coerce_object_array_require_matching_json", raw="NaN", types=["number"], expected="NaN")
add("coerce_tool_calls", C + "test_coerce_tool_calls_handles_single_and_list", tools=SET_ALARM_TOOLS,
    call={"type": "function", "function": {"name": "set_alarm", "arguments": {"hour": "7"}}},
    expected={"type": "function", "function": {"name": "set_alarm", "arguments": {"hour": 7}}})
add("coerce_tool_calls", C + "test_coerce_tool_calls_handles_single_and_list", tools=SET_ALARM_TOOLS,
    call=[{"type": "function", "function": {"name": "set_alarm", "arguments": {"hour": "9"}}}],
    expected=[{"type": "function", "function": {"name": "set_alarm", "arguments": {"hour": 9}}}])
add("coerce_tool_calls", C + "test_coerce_tool_calls_handles_single_and_list", tools=SET_ALARM_TOOLS,
    call="hello", expected="hello")
for schema, expected in [({"type": "integer"}, ["integer"]),
                         ({"type": ["integer", "string"]}, ["integer", "string"]),
                         ({"anyOf": [{"type": "boolean"}, {"type": "string"}]}, ["boolean", "string"]),
                         ({"type": "integer", "nullable": True}, ["integer", "null"]),
                         ({"description": "no type"}, [])]:
    add("schema_types", C + "test_schema_types_handles_get_json_schema_dialect", schema=schema, expected=expected)
args_of(C + "test_parse_response_tools_coerces_xml_inline_string_args", "xml_string_args", SET_ALARM_CALL, None,
        {"hour": "7", "enabled": "true", "label": "wake up"})
args_of(C + "test_parse_response_tools_coerces_xml_inline_string_args", "xml_string_args", SET_ALARM_CALL,
        SET_ALARM_TOOLS, {"hour": 7, "enabled": True, "label": "wake up"})
add("stream", C + "test_streaming_tools_coerces_on_region_close", template="xml_string_args", prefix="",
    tools=SET_ALARM_TOOLS, chunk_size=8, input=SET_ALARM_CALL, feeds_only=True,
    expect={"close_count": {"tool_calls": 1},
            "close_values": {"tool_calls": {"type": "function", "function": {
                "name": "set_alarm", "arguments": {"hour": 7, "enabled": True, "label": "wake up"}}}}})
QWEN_007 = ("<tool_call>\n<function=set_alarm>\n<parameter=hour>\n007\n</parameter>\n"
            "<parameter=enabled>\ntrue\n</parameter>\n<parameter=label>\nwake up\n</parameter>\n"
            "</function>\n</tool_call>")
args_of(C + "test_qwen3_tools_coerces_strings_left_by_value_parser", "qwen3", QWEN_007, None,
        {"hour": "007", "enabled": True, "label": "wake up"})
args_of(C + "test_qwen3_tools_coerces_strings_left_by_value_parser", "qwen3", QWEN_007, SET_ALARM_TOOLS,
        {"hour": 7, "enabled": True, "label": "wake up"})
LABEL_150 = "<tool_call>\n<function=set_alarm>\n<parameter=label>\n1.50\n</parameter>\n</tool_call>"
args_of(C + "test_coercion_never_reworks_already_typed_values", "qwen3", LABEL_150, SET_ALARM_TOOLS, {"label": 1.5})
args_of(C + "test_coercion_never_reworks_already_typed_values", "xml_string_args", LABEL_150, SET_ALARM_TOOLS,
        {"label": "1.50"})
KV_OUT = "<tool_call>\n<function=set_alarm>\nhour: 7\nenabled: true\n</tool_call>"
args_of(C + "test_kv_lines_string_args_are_coerced", "kv_lines_tools", KV_OUT, None, {"hour": "7", "enabled": "true"})
args_of(C + "test_kv_lines_string_args_are_coerced", "kv_lines_tools", KV_OUT, SET_ALARM_TOOLS, {"hour": 7, "enabled": True})
CITE = {"defaults": {"role": "assistant"}, "start_anchor": "<|im_start|>assistant\n",
        "fields": {"citation": {"open_pattern": r"<cite source=(?P<name>\w+)>", "close": "</cite>",
                                "content": "xml-inline",
                                "content_args": {"tag_pattern": r"<(?P<key>\w+)>\s*(?P<value>.*?)\s*</\1>",
                                                 "value_parser": {"name": "json", "args": {"allow_non_json": True}}},
                                "transform": {"source": "{name}", "fields": "{content}"}}}}
for tools in (None, SET_ALARM_TOOLS):
    parse(C + "test_non_tool_call_regions_are_untouched", CITE,
          "<cite source=set_alarm><label>1.50</label><hour>7</hour></cite>", tools=tools,
          key="citation", value={"source": "set_alarm", "fields": {"label": 1.5, "hour": 7}})
MERGE = json.loads(json.dumps(TEMPLATES["xml_string_args"]))
MERGE["fields"]["tool_calls"]["content_args"]["merge_duplicates"] = True
HOUR_TWICE = ("<tool_call>\n<function=set_alarm>\n<parameter=hour>\n7\n</parameter>\n"
              "<parameter=hour>\n9\n</parameter>\n</function>\n</tool_call>")
args_of(C + "test_merge_duplicates_arguments_are_cast_element_wise", MERGE, HOUR_TWICE, None, {"hour": ["7", "9"]})
args_of(C + "test_merge_duplicates_arguments_are_cast_element_wise", MERGE, HOUR_TWICE, SET_ALARM_TOOLS, {"hour": [7, 9]})
add("coerce_tool_calls", C + "test_merge_duplicates_arguments_are_cast_element_wise", tools=SET_ALARM_TOOLS,
    call={"type": "function", "function": {"name": "set_alarm", "arguments": {"hour": ["7", "x", 9]}}},
    expected={"type": "function", "function": {"name": "set_alarm", "arguments": {"hour": [7, "x", 9]}}})
add("coerce_tool_calls", C + "test_coerce_tool_calls_ignores_unusable_function_name", tools=SET_ALARM_TOOLS,
    call={"type": "function", "function": {"name": ["set_alarm"], "arguments": {"hour": "7"}}},
    expected={"type": "function", "function": {"name": ["set_alarm"], "arguments": {"hour": "7"}}})
UNION = set_alarm_tools(label={"anyOf": [{"type": "string"}, {"type": "object"}]})
args_of(C + "test_union_with_container_still_keeps_scalar_text", "xml_string_args", LABEL_150, UNION, {"label": "1.50"})
args_of(C + "test_union_with_container_still_keeps_scalar_text", "xml_string_args",
        '<tool_call>\n<function=set_alarm>\n<parameter=label>\n{"a": 1}\n</parameter>\n</tool_call>', UNION,
        {"label": {"a": 1}})
add("not_applicable", C + "test_callable_tools_are_converted_to_schemas",
    reason="Python callables converted by get_json_schema; tools here are JSON")
add("stream", C + "test_get_response_parser_forwards_tools", template="xml_string_args", prefix="",
    tools=SET_ALARM_TOOLS, feeds=[SET_ALARM_CALL],
    expect={"message_key": ["tool_calls.0.function.arguments", {"hour": 7, "enabled": True, "label": "wake up"}]})
args_of(C + "test_tokenizer_parse_response_forwards_tools", "xml_string_args", SET_ALARM_CALL, SET_ALARM_TOOLS,
        {"hour": 7, "enabled": True, "label": "wake up"})
TYPED = ("<|START_THINKING|>x<|END_THINKING|>"
         '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "set_alarm", '
         '"parameters": {"hour": 7, "enabled": true}}]<|END_ACTION|><|END_OF_TURN_TOKEN|>')
for tools in (None, SET_ALARM_TOOLS):
    args_of(C + "test_tools_is_a_noop_for_typed_json_tool_calls", "cohere", TYPED, tools, {"hour": 7, "enabled": True})

# ---- tests/models/gemma4/test_response_template_gemma4.py ---------------------------------------
# Its template is convert_gemma4_weights.py's _RESPONSE_TEMPLATE (read with ast at 4644827); the
# stored copy of that file predates it (it still holds the legacy _RESPONSE_SCHEMA).
for name in ("test_tool_call_reasoning_survives_rendering", "test_streamed_reasoning_matches_complete_response",
             "test_response_without_reasoning"):
    CASES.append({"id": f"{name}#0", "kind": "not_applicable",
                  "source": {"repo": "huggingface/transformers",
                             "path": "tests/models/gemma4/test_response_template_gemma4.py",
                             "commit": "4644827bcf0616d8b321c5985dca21e4321a119f",
                             "test": "Gemma4ResponseTemplateTest." + name},
                  "reason": "reads _RESPONSE_TEMPLATE from convert_gemma4_weights.py, whose stored copy "
                            "predates it, so the template is not transcribed"})

os.makedirs(OUT, exist_ok=True)
with open(os.path.join(OUT, "templates.json"), "w") as f:
    json.dump(TEMPLATES, f, indent=1, ensure_ascii=False)
    f.write("\n")
with open(os.path.join(OUT, "cases.jsonl"), "w") as f:
    for c in CASES:
        f.write(json.dumps(c, ensure_ascii=False) + "\n")
print(f"{len(CASES)} cases, {len(TEMPLATES)} templates -> {os.path.relpath(OUT)}")
