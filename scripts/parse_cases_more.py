# Included by scripts/parse_cases.py: more reference cases (same helpers: case, tool).

# ---------------------------------------------------------------- llama3_json
L3 = "vllm-project/vllm@1e499e36:tests/tool_parsers/test_llama3_json_tool_parser.py"
case("llama3_json", "simple_in_prose", L3 + "::test_extract_tool_calls_simple",
     'Here is the result: {"name": "getOpenIncidentsTool", "parameters": {}} Would you like to know more?',
     "Here is the result:  Would you like to know more?", calls=[("getOpenIncidentsTool", {})],
     note="upstream drops the prose (content None); we keep it (lossless, docs/parse.md)")
case("llama3_json", "with_arguments", L3 + "::test_extract_tool_calls_with_arguments",
     '{"name": "searchTool", "parameters": {"query": "test query", "limit": 10}}',
     calls=[("searchTool", {"query": "test query", "limit": 10})])
case("llama3_json", "no_json", L3 + "::test_extract_tool_calls_no_json",
     "This is just some text without any tool calls", "This is just some text without any tool calls")
case("llama3_json", "invalid_json", L3 + "::test_extract_tool_calls_invalid_json",
     '{"name": "invalidTool", "parameters": {invalid json}', '{"name": "invalidTool", "parameters": {invalid json}')
case("llama3_json", "arguments_key", L3 + "::test_extract_tool_calls_with_arguments_key",
     '{"name": "searchTool", "arguments": {"query": "test"}}', calls=[("searchTool", {"query": "test"})])
three = [("searchTool", {"query": "test1"}), ("getOpenIncidentsTool", {}), ("searchTool", {"query": "test2"})]
case("llama3_json", "multiple_json", L3 + "::test_extract_tool_calls_multiple_json",
     '{"name": "searchTool", "parameters": {"query": "test1"}}; {"name": "getOpenIncidentsTool", "parameters": {}}; {"name": "searchTool", "parameters": {"query": "test2"}}',
     calls=three)
case("llama3_json", "multiple_json_ws", L3 + "::test_extract_tool_calls_multiple_json_with_whitespace",
     '{"name": "searchTool", "parameters": {"query": "test1"}} ; {"name": "getOpenIncidentsTool", "parameters": {}} ; {"name": "searchTool", "parameters": {"query": "test2"}}',
     calls=three)
case("llama3_json", "multiple_json_prose", L3 + "::test_extract_tool_calls_multiple_json_with_surrounding_text",
     'Here are the results: {"name": "searchTool", "parameters": {"query": "test1"}}; {"name": "getOpenIncidentsTool", "parameters": {}}; {"name": "searchTool", "parameters": {"query": "test2"}} Would you like to know more?',
     "Here are the results:  Would you like to know more?", calls=three, compare="strip",
     note="upstream content None; lossless here")
case("llama3_json", "deeply_nested", L3 + "::test_extract_tool_calls_deeply_nested_json",
     '{"name": "complexTool", "parameters": {"level1": {"level2": {"level3": {"level4": {"value": "deep"}}}}}}',
     calls=[("complexTool", {"level1": {"level2": {"level3": {"level4": {"value": "deep"}}}}})])
case("llama3_json", "multiple_deep", L3 + "::test_extract_tool_calls_multiple_with_deep_nesting",
     '{"name": "simpleTool", "parameters": {"value": "test"}}; {"name": "complexTool", "parameters": {"config": {"database": {"connection": {"pool": {"size": 10}}}}}}',
     calls=[("simpleTool", {"value": "test"}), ("complexTool", {"config": {"database": {"connection": {"pool": {"size": 10}}}}})])
case("llama3_json", "brackets_in_strings", L3 + "::test_extract_tool_calls_with_quotes_and_brackets_in_string",
     '{"name": "searchTool", "parameters": {"query": "test {value} [complex]","nested": {"inner": "more {brackets}"}}}',
     calls=[("searchTool", {"query": "test {value} [complex]", "nested": {"inner": "more {brackets}"}})])
case("llama3_json", "escaped_quotes", L3 + "::test_extract_tool_calls_with_escaped_quotes_in_nested_json",
     '{"name": "parserTool", "parameters": {"text": "He said \\"Hello {world}\\""}}',
     calls=[("parserTool", {"text": 'He said "Hello {world}"'})])
case("llama3_json", "missing_name", L3 + "::test_extract_tool_calls_missing_name_key", '{"parameters": {}}', '{"parameters": {}}')
case("llama3_json", "missing_parameters", L3 + "::test_extract_tool_calls_missing_parameters_and_arguments_key",
     '{"name": "toolWithoutParams"}', '{"name": "toolWithoutParams"}')
case("llama3_json", "brace_in_trailing_text", L3 + "::test_extract_tool_calls_brace_in_trailing_text",
     '{"name": "searchTool", "parameters": {"query": "test"}} I used {searchTool} for this.',
     " I used {searchTool} for this.", calls=[("searchTool", {"query": "test"})])
case("llama3_json", "json_fragment_in_trailing_text", L3 + "::test_extract_tool_calls_json_fragment_in_trailing_text",
     '{"name": "searchTool", "parameters": {"query": "test"}} The arguments I passed were {"query": "test"}',
     ' The arguments I passed were {"query": "test"}', calls=[("searchTool", {"query": "test"})])
for i, sep in enumerate(["; ", ";", ";\n", "\n"]):
    case("llama3_json", f"parallel_separator_{i}", L3 + "::test_extract_tool_calls_streaming_parallel_separators",
         '{"name": "searchTool", "parameters": {"query": "test1"}}' + sep + '{"name": "getOpenIncidentsTool", "parameters": {}}',
         calls=[("searchTool", {"query": "test1"}), ("getOpenIncidentsTool", {})])
case("llama3_json", "regex_timeout_input", L3 + "::test_regex_timeout_handling",
     "{hello world[A(A=" + "\t)A(A=,\t" * 2, "{hello world[A(A=" + "\t)A(A=,\t" * 2)

# ---------------------------------------------------------------- pythonic
PY = "vllm-project/vllm@0716d268:tests/tool_parsers/test_pythonic_tool_parser.py"
SIMPLE = "get_weather(city='San Francisco', metric='celsius')"
SIMPLE_C = ("get_weather", {"city": "San Francisco", "metric": "celsius"})
MORE = "register_user(name='John Doe', age=37, address={'city': 'San Francisco', 'state': 'CA'}, role=None, passed_test=True, aliases=['John', 'Johnny'])"
MORE_C = ("register_user", {"name": "John Doe", "age": 37, "address": {"city": "San Francisco", "state": "CA"},
                            "role": None, "passed_test": True, "aliases": ["John", "Johnny"]})
case("pythonic", "no_tool_call", PY + "::test_no_tool_call", "How can I help you today?", "How can I help you today?")
case("pythonic", "simple", PY + "::simple_nonstreaming", f"[{SIMPLE}]", calls=[SIMPLE_C])
case("pythonic", "more_types", PY + "::more_types_nonstreaming", f"[{MORE}]", calls=[MORE_C])
case("pythonic", "parameterless", PY + "::parameterless_nonstreaming", "[get_weather()]", calls=[("get_weather", {})])
case("pythonic", "empty_dict", PY + "::empty_dict_nonstreaming", "[do_something_cool(additional_data={})]",
     calls=[("do_something_cool", {"additional_data": {}})])
case("pythonic", "empty_list", PY + "::empty_list_nonstreaming", "[do_something_cool(steps=[])]",
     calls=[("do_something_cool", {"steps": []})])
case("pythonic", "escaped_string", PY + "::escaped_string_nonstreaming",
     r"[get_weather(city='Martha\'s Vineyard', metric='\"cool units\"')]",
     calls=[("get_weather", {"city": "Martha's Vineyard", "metric": '"cool units"'})])
case("pythonic", "parallel", PY + "::parallel_calls_nonstreaming", f"[{SIMPLE}, {MORE}]", calls=[SIMPLE_C, MORE_C])
case("pythonic", "large_steps", PY + "::test_streaming_tool_call_with_large_steps",
     f"[get_weather(city='San Francisco', metric='celsius'), get_weather(), do_something_cool(steps=[])]",
     calls=[SIMPLE_C, ("get_weather", {}), ("do_something_cool", {"steps": []})])
case("pythonic", "regex_timeout_input", PY + "::test_regex_timeout_handling",
     "hello world[A(A=" + "\t)A(A=,\t" * 2, "hello world[A(A=" + "\t)A(A=,\t" * 2)
case("pythonic", "bad_sibling", PY + "::test_bad_sibling_call_does_not_drop_good_calls",
     f"[bad(x=b'z'), {SIMPLE}]", calls=[SIMPLE_C], warnings=["invalid_call"])
case("pythonic", "non_finite", PY + "::test_non_finite_argument_rejected", f"[calc(x=1e999), {SIMPLE}]",
     calls=[SIMPLE_C], warnings=["invalid_call"])
case("pythonic", "unrecoverable", PY + "::test_unrecoverable_block_still_reports_no_tool_call",
     "[f(a='x 'y' 'z), g(b='p 'q' 'r)]", "[f(a='x 'y' 'z), g(b='p 'q' 'r)]")
case("pythonic", "mismatched_brackets", PY + "::test_streaming_mismatched_brackets_reported_once",
     "[foo(x=1])]", "[foo(x=1])]")

# ---------------------------------------------------------------- kimi_k2
KIMI = "vllm-project/vllm@0825a6c3:tests/tool_parsers/test_kimi_k2_tool_parser.py"
SB, SE, TB, TE, AB = ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
                      "<|tool_call_end|>", "<|tool_call_argument_begin|>")
def ktool(i, a): return f"{TB}{i} {AB}{a}{TE}"
def kwrap(*t): return SB + "".join(t) + SE
case("kimi_k2", "no_tools", KIMI + "::test_no_tools", "This is a test", "This is a test")
case("kimi_k2", "single", KIMI + "::single_tool_call", "I'll check. " + kwrap(ktool("functions.get_weather:0", '{"city": "Beijing"}')),
     "I'll check. ", calls=[("get_weather", {"city": "Beijing"}, "functions.get_weather:0")])
case("kimi_k2", "parallel", KIMI + "::parallel_tool_calls", "Compare weather. " + kwrap(
    ktool("functions.get_weather:0", '{"city": "Beijing"}'), ktool("functions.get_weather:1", '{"city": "Shanghai"}')),
     "Compare weather. ", calls=[("get_weather", {"city": "Beijing"}, "functions.get_weather:0"),
                                 ("get_weather", {"city": "Shanghai"}, "functions.get_weather:1")])
case("kimi_k2", "three", KIMI + "::three_tool_calls", "Multiple tasks. " + kwrap(
    ktool("functions.get_weather:0", '{"city": "New York"}'), ktool("functions.get_news:1", '{"topic": "technology"}'),
    ktool("functions.send_email:2", '{"to": "user@example.com", "subject": "Daily Update"}')),
     "Multiple tasks. ", calls=[("get_weather", {"city": "New York"}), ("get_news", {"topic": "technology"}),
                                ("send_email", {"to": "user@example.com", "subject": "Daily Update"})])
case("kimi_k2", "angle_brackets", KIMI + "::angle_brackets_in_json", "Process HTML. " + kwrap(
    ktool("functions.process_html:0", '{"html": "<div>content</div>"}')), "Process HTML. ",
     calls=[("process_html", {"html": "<div>content</div>"})])
case("kimi_k2", "multiline_json", KIMI + "::multiline_json", "Formatted. " + kwrap(
    ktool("functions.process_data:0", '{\n  "name": "test",\n  "value": 123\n}')), "Formatted. ",
     calls=[("process_data", {"name": "test", "value": 123})])
case("kimi_k2", "no_prefix", KIMI + "::no_functions_prefix", "No prefix. " + kwrap(ktool("get_weather:0", '{"city": "Tokyo"}')),
     "No prefix. ", calls=[("get_weather", {"city": "Tokyo"}, "get_weather:0")])
case("kimi_k2", "empty_args", KIMI + "::empty_arguments", "Empty args. " + kwrap(ktool("functions.test:0", "{}")),
     "Empty args. ", calls=[("test", {})])
case("kimi_k2", "invalid_json_kept", KIMI + "::test_invalid_json_still_extracted", "Help. " + SB +
     ktool("functions.bad:0", '{"city": "Beijing"') + ktool("functions.good:1", '{"city": "Shanghai"}') + SE,
     "Help. ", calls=[("bad", '{"city": "Beijing"'), ("good", {"city": "Shanghai"})], warnings=["invalid_arguments"])
case("kimi_k2", "native_id", KIMI + "::test_native_id_extracted", "Checking weather. " + kwrap(ktool("functions.get_weather:0", '{"city": "Tokyo"}')),
     "Checking weather. ", calls=[("get_weather", {"city": "Tokyo"}, "functions.get_weather:0")])

# ---------------------------------------------------------------- qwen3_coder
Q3C = "vllm-project/vllm@049d8df2:tests/tool_parsers/test_qwen3coder_tool_parser.py"
WEATHER_PARAMS = {"type": "object", "properties": {
    "city": {"type": "string", "description": "The city name"}, "state": {"type": "string", "description": "The state code"},
    "unit": {"type": "string", "enum": ["fahrenheit", "celsius"]}}, "required": ["city", "state"]}
AREA_PARAMS = {"type": "object", "properties": {"shape": {"type": "string"}, "dimensions": {"type": "object"},
                                                "precision": {"type": "integer"}}}
Q3TOOLS = [{"type": "function", "function": {"name": "get_current_weather", "description": "Get the current weather", "parameters": WEATHER_PARAMS}},
           {"type": "function", "function": {"name": "calculate_area", "description": "Calculate area of a shape", "parameters": AREA_PARAMS}}]
def q3call(name, params):
    return "<tool_call>\n<function=%s>\n" % name + "".join("<parameter=%s>\n%s\n</parameter>\n" % kv for kv in params) + "</function>\n</tool_call>"
W_DALLAS = q3call("get_current_weather", [("city", "Dallas"), ("state", "TX"), ("unit", "fahrenheit")])
W_DALLAS_C = ("get_current_weather", {"city": "Dallas", "state": "TX", "unit": "fahrenheit"})
case("qwen3_coder", "no_tools", Q3C + "::test_extract_tool_calls_no_tools", "This is a test response without any tool calls",
     "This is a test response without any tool calls", tools=Q3TOOLS)
case("qwen3_coder", "single_tool", Q3C + "::test_extract_tool_calls[single_tool]", W_DALLAS, calls=[W_DALLAS_C], tools=Q3TOOLS)
case("qwen3_coder", "single_tool_with_content", Q3C + "::test_extract_tool_calls[single_tool_with_content]",
     "Sure! Let me check the weather for you." + W_DALLAS, "Sure! Let me check the weather for you.", calls=[W_DALLAS_C], tools=Q3TOOLS)
case("qwen3_coder", "multiline_param", Q3C + "::test_extract_tool_calls[single_tool_multiline_param]",
     q3call("calculate_area", [("shape", "rectangle"), ("dimensions", '{"width": 10, \n "height": 20}'), ("precision", "2")]),
     calls=[("calculate_area", {"shape": "rectangle", "dimensions": {"width": 10, "height": 20}, "precision": 2})], tools=Q3TOOLS)
case("qwen3_coder", "parallel_tools", Q3C + "::test_extract_tool_calls[parallel_tools]",
     W_DALLAS + "\n" + q3call("get_current_weather", [("city", "Orlando"), ("state", "FL"), ("unit", "fahrenheit")]),
     calls=[W_DALLAS_C, ("get_current_weather", {"city": "Orlando", "state": "FL", "unit": "fahrenheit"})], tools=Q3TOOLS)
case("qwen3_coder", "typed_params", Q3C + "::test_extract_tool_calls[tool_with_typed_params]",
     "Let me calculate that area for you." + q3call("calculate_area", [("shape", "circle"), ("dimensions", '{"radius": 15.5}'), ("precision", "3")]),
     "Let me calculate that area for you.",
     calls=[("calculate_area", {"shape": "circle", "dimensions": {"radius": 15.5}, "precision": 3})], tools=Q3TOOLS)
case("qwen3_coder", "fallback_no_tags", Q3C + "::test_extract_tool_calls_fallback_no_tags",
     "<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n</function>",
     calls=[("get_current_weather", {"city": "Dallas", "state": "TX"})], tools=Q3TOOLS)
TT = [{"type": "function", "function": {"name": "test_types", "parameters": {"type": "object", "properties": {
    "int_param": {"type": "integer"}, "float_param": {"type": "float"}, "bool_param": {"type": "boolean"},
    "str_param": {"type": "string"}, "obj_param": {"type": "object"}}}}}]
case("qwen3_coder", "type_conversion", Q3C + "::test_extract_tool_calls_type_conversion",
     q3call("test_types", [("int_param", "42"), ("float_param", "3.14"), ("bool_param", "true"), ("str_param", "hello world"), ("obj_param", '{"key": "value"}')]),
     calls=[("test_types", {"int_param": 42, "float_param": 3.14, "bool_param": True, "str_param": "hello world", "obj_param": {"key": "value"}})], tools=TT)
ANY = [{"type": "function", "function": {"name": "test_anyof", "parameters": {"type": "object", "properties": {
    "anyof_int": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": 5},
    "anyof_str": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    "anyof_array": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
    "anyof_obj": {"anyOf": [{"type": "object"}, {"type": "null"}]},
    "type_as_array": {"type": ["integer", "null"]},
    "multi_non_null": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}}}}}]
case("qwen3_coder", "anyof_conversion", Q3C + "::test_extract_tool_calls_anyof_type_conversion",
     q3call("test_anyof", [("anyof_int", "5"), ("anyof_str", "hello"), ("anyof_array", '["a", "b", "c"]'), ("anyof_obj", '{"key": "value"}'),
                           ("type_as_array", "42"), ("multi_non_null", "some text")]),
     calls=[("test_anyof", {"anyof_int": 5, "anyof_str": "hello", "anyof_array": ["a", "b", "c"], "anyof_obj": {"key": "value"},
                            "type_as_array": 42, "multi_non_null": "some text"})], tools=ANY)
SW = [{"type": "function", "function": {"name": "search_web", "parameters": {"type": "object", "properties": {
    "query": {"anyOf": [{"type": "string"}, {"type": "null"}]}, "count": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": 5},
    "verbose": {"anyOf": [{"type": "boolean"}, {"type": "null"}]}}}}}]
case("qwen3_coder", "anyof_streaming", Q3C + "::test_extract_tool_calls_anyof_type_conversion_streaming",
     q3call("search_web", [("query", "vllm tool parser"), ("count", "10"), ("verbose", "true")]),
     calls=[("search_web", {"query": "vllm tool parser", "count": 10, "verbose": True})], tools=SW)
case("qwen3_coder", "missing_closing_parameter", Q3C + "::test_extract_tool_calls_missing_closing_parameter_tag",
     "Let me check the weather for you:\n<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n<parameter=state>\nTX\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>",
     "Let me check the weather for you:\n", calls=[W_DALLAS_C], tools=Q3TOOLS, warnings=["missing_marker"])
case("qwen3_coder", "incremental", Q3C + "::test_extract_tool_calls_streaming_incremental",
     "I'll check the weather.<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n</function>\n</tool_call>",
     "I'll check the weather.", calls=[("get_current_weather", {"city": "Dallas", "state": "TX"})], tools=Q3TOOLS)
case("qwen3_coder", "no_schema_strings", Q3C + "::single_tool (request without tools)", W_DALLAS, calls=[W_DALLAS_C])

# ---------------------------------------------------------------- glm45
G = "vllm-project/vllm@024364d6:tests/tool_parsers/test_glm4_moe_tool_parser.py"
GT = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
def gcall(name, kv, ind="    "):
    return "<tool_call>" + name + "\n" + "".join(f"{ind}<arg_key>{k}</arg_key>\n{ind}<arg_value>{v}</arg_value>\n" for k, v in kv) + ind + "</tool_call>"
DAL = [("city", "Dallas"), ("state", "TX"), ("unit", "fahrenheit")]
case("glm45", "no_tools", G + "::test_extract_tool_calls_no_tools", "This is a test", "This is a test", tools=GT)
case("glm45", "single", G + "::single_tool_call", gcall("get_current_weather", DAL),
     calls=[("get_current_weather", dict(DAL))], tools=GT)
case("glm45", "multiple", G + "::multiple_tool_calls", gcall("get_current_weather", DAL) + "\n    " +
     gcall("get_current_weather", [("city", "Orlando"), ("state", "FL"), ("unit", "fahrenheit")]),
     calls=[("get_current_weather", dict(DAL)), ("get_current_weather", {"city": "Orlando", "state": "FL", "unit": "fahrenheit"})], tools=GT)
case("glm45", "content_before", G + "::tool_call_with_content_before", "I'll help you check the weather. " +
     gcall("get_current_weather", [("city", "Seattle"), ("state", "WA"), ("unit", "celsius")]), "I'll help you check the weather. ",
     calls=[("get_current_weather", {"city": "Seattle", "state": "WA", "unit": "celsius"})], tools=GT)
case("glm45", "mixed_args", G + "::tool_call_with_mixed_args", gcall("get_current_weather", [("city", "New York"), ("state", "NY"), ("unit", "celsius")]),
     calls=[("get_current_weather", {"city": "New York", "state": "NY", "unit": "celsius"})], tools=GT)
case("glm45", "date_value", G + "::tool_call_with_chinese_content", "I will help you get the weather." +
     gcall("get_weather", [("city", "Beijing"), ("date", "2025-08-01")]), "I will help you get the weather.",
     calls=[("get_weather", {"city": "Beijing", "date": "2025-08-01"})], tools=GT)
case("glm45", "thinking_tags", G + "::test_extract_tool_calls_with_thinking_tags",
     "<think>I want to get the weather.</think>\n\nI will help you get the weather.\n" + gcall("get_weather", [("city", "Beijing"), ("date", "2025-08-01")], ""),
     "\n\nI will help you get the weather.\n", "I want to get the weather.",
     calls=[("get_weather", {"city": "Beijing", "date": "2025-08-01"})], tools=GT,
     note="upstream tool parser alone leaves the think block in content; the reasoning split is ours")
case("glm45", "empty_arguments", G + "::test_extract_tool_calls_empty_arguments", "<tool_call>get_current_time\n</tool_call>",
     calls=[("get_current_time", {})], tools=GT)
case("glm45", "mixed_content", G + "::test_extract_tool_calls_mixed_content",
     "I will help you get the weather info.\n\n" + gcall("get_weather", [("city", "Beijing"), ("date", "2025-08-01")], "") +
     "\n\nmeaningwhile, I will also check the weather in Shanghai.\n\n" + gcall("get_weather", [("city", "Shanghai"), ("date", "2025-08-01")], ""),
     "I will help you get the weather info.\n\n\n\nmeaningwhile, I will also check the weather in Shanghai.\n\n",
     calls=[("get_weather", {"city": "Beijing", "date": "2025-08-01"}), ("get_weather", {"city": "Shanghai", "date": "2025-08-01"})], tools=GT,
     compare="strip", note="upstream keeps only the prefix; prose between calls is content here (lossless)")
case("glm45", "special_characters", G + "::test_extract_tool_calls_special_characters",
     gcall("send_message", [("recipient", "Amy"), ("message", "It is a nice day"), ("priority", "high")], ""),
     calls=[("send_message", {"recipient": "Amy", "message": "It is a nice day", "priority": "high"})], tools=GT)
case("glm45", "zero_arg_compact", "llama.cpp@0042e207:tests/test-chat.cpp::GLM zero-arg", "<tool_call>get_time</tool_call>",
     calls=[("get_time", {})])
case("glm45", "untyped_scalars", "research parsers.md::GLM schema-less scalar typing (42, 3.14, true)",
     "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>42</arg_value>\n<arg_key>b</arg_key>\n<arg_value>3.14</arg_value>\n<arg_key>c</arg_key>\n<arg_value>true</arg_value>\n<arg_key>d</arg_key>\n<arg_value>天气</arg_value>\n</tool_call>",
     calls=[("f", {"a": 42, "b": 3.14, "c": True, "d": "天气"})])

# ---------------------------------------------------------------- seed_oss
S = "vllm-project/vllm@0f120751:tests/tool_parsers/test_seed_oss_tool_parser.py"
ST = [{"type": "function", "function": {"name": "get_weather", "description": "Get current temperature for a given location.",
       "parameters": {"type": "object", "properties": {"location": {"type": "string"}, "unit": {"type": "string"}}, "required": ["location"]}}}]
BARCA = "<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n</function>\n</seed:tool_call>"
case("seed_oss", "no_tools", S + "::test_extract_tool_calls_no_tools", "This is a test response without any tool calls",
     "This is a test response without any tool calls", tools=ST)
case("seed_oss", "budget_0", S + "::tool_call_0_thinking_budget", BARCA, calls=[("get_weather", {"location": "Barcelona, Spain"})], tools=ST)
THINK512 = ("The user's current thinking budget is 512.</seed:cot_budget_reflect>\nLet me analyze the question. "
            "\n<seed:cot_budget_reflect>I have used 131 tokens.</seed:cot_budget_reflect>\n The unit parameter can be omitted since it's optional.")
case("seed_oss", "budget_512", S + "::tool_call_512_thinkg_budget (reasoning shortened)",
     "<seed:think>" + THINK512 + "</seed:think>\n" + BARCA, None, THINK512,
     calls=[("get_weather", {"location": "Barcelona, Spain"})], tools=ST,
     note="upstream tool parser leaves the think block in content; split here")
case("seed_oss", "unlimited", S + "::tool_call_unlimited_thinking_budget (reasoning shortened)",
     "<seed:think>\nThe format is <seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n</function>\n</seed:tool_call>. Let me go with that.</seed:think>"
     "<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n<parameter=unit>celsius</parameter>\n</function>\n</seed:tool_call>",
     None, "\nThe format is <seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n</function>\n</seed:tool_call>. Let me go with that.",
     calls=[("get_weather", {"location": "Barcelona, Spain", "unit": "celsius"})], tools=ST)

# ---------------------------------------------------------------- minimax_m2
MM = "vllm-project/vllm@0c927c34:tests/tool_parsers/test_minimax_m2_tool_parser.py"
def minv(name, kv):
    return f'<invoke name="{name}">' + "".join(f'<parameter name="{k}">{v}</parameter>' for k, v in kv) + "</invoke>"
MS, ME = "<minimax:tool_call>", "</minimax:tool_call>"
case("minimax_m2", "plain_content", MM + "::test_plain_content", "Hello world", "Hello world")
case("minimax_m2", "content_before", MM + "::test_content_before_tool_call", "Let me check. " + MS + minv("get_weather", [("city", "Seattle")]) + ME,
     "Let me check. ", calls=[("get_weather", {"city": "Seattle"})])
case("minimax_m2", "multiple_params", MM + "::test_multiple_params", MS + minv("get_weather", [("city", "Seattle"), ("days", "5")]) + ME,
     calls=[("get_weather", {"city": "Seattle", "days": "5"})])
case("minimax_m2", "two_invokes", MM + "::test_two_invokes_incremental", MS + minv("search_web", [("query", "OpenAI")]) + minv("search_web", [("query", "Gemini")]) + ME,
     calls=[("search_web", {"query": "OpenAI"}), ("search_web", {"query": "Gemini"})])
case("minimax_m2", "different_functions", MM + "::test_different_functions", MS + minv("get_weather", [("city", "NYC")]) + minv("get_stock", [("ticker", "AAPL")]) + ME,
     calls=[("get_weather", {"city": "NYC"}), ("get_stock", {"ticker": "AAPL"})])
case("minimax_m2", "typed_by_schema", MM + "::TestAnyOfNullableParam (shape)", MS + minv("get_weather", [("city", "Seattle"), ("days", "5")]) + ME,
     calls=[("get_weather", {"city": "Seattle", "days": 5})],
     tools=[tool("get_weather", {"city": {"type": "string"}, "days": {"anyOf": [{"type": "integer"}, {"type": "null"}]}})])
case("minimax_m2", "prefilled_think", "research parsers.md::MiniMax prompt ends in <think>",
     "The user wants weather.</think>\n\n" + MS + "\n" + minv("get_weather", [("city", "Paris")]) + "\n" + ME, None, "The user wants weather.",
     calls=[("get_weather", {"city": "Paris"})], options={"reasoning_prefilled": True})
case("minimax_m2", "empty_invoke", "research parsers.md::MiniMax empty invoke -> {}", MS + '<invoke name="get_time"></invoke>' + ME,
     calls=[("get_time", {})])

# ---------------------------------------------------------------- harmony (gpt-oss)
OA = "vllm-project/vllm@15c99cb1:tests/tool_parsers/test_openai_tool_parser.py"
ANALYSIS = 'User asks: "What is the weather in Tokyo?" We need to use get_current_weather tool.'
def hcall(name, body, ctype=" json", end="<|call|>"):
    return f"<|start|>assistant to=functions.{name}<|channel|>commentary{ctype}<|message|>{body}{end}"
case("harmony", "no_tools", OA + "::test_extract_tool_calls_no_tools", "<|channel|>final<|message|>This is a test<|return|>", "This is a test")
for i, args in enumerate(['{"location": "Tokyo"}', '{\n"location": "Tokyo"\n}']):
    case("harmony", f"single_tool_{i}", OA + "::test_extract_tool_calls_single_tool",
         f"<|channel|>analysis<|message|>{ANALYSIS}<|end|>" + hcall("get_current_weather", args), None, ANALYSIS,
         calls=[("get_current_weather", {"location": "Tokyo"})])
MULTI_A = 'User asks: "What is the weather in Tokyo?" based on their location. We need to use get_current_weather tool and get_user_location tool.'
case("harmony", "multiple_tools", OA + "::test_extract_tool_calls_multiple_tools",
     f"<|channel|>analysis<|message|>{MULTI_A}<|end|>" + hcall("get_current_weather", '{"location": "Tokyo"}') +
     hcall("get_user_location", '{"location": "Tokyo"}') + hcall("no_content_type", '{"location": "Tokyo"}', "") +
     hcall("not_json_no_content_type", "foo", "") + hcall("empty_args", "{}") + hcall("no_args", ""),
     None, MULTI_A, calls=[("get_current_weather", {"location": "Tokyo"}), ("get_user_location", {"location": "Tokyo"}),
                           ("no_content_type", {"location": "Tokyo"}), ("not_json_no_content_type", "foo"),
                           ("empty_args", {}), ("no_args", {})],
     note="upstream gives no_args arguments ''; zero-argument calls are {} here (issue 6)")
case("harmony", "with_content", OA + "::test_extract_tool_calls_with_content",
     f"<|channel|>analysis<|message|>{MULTI_A}<|end|>" + hcall("get_current_weather", '{"location": "Tokyo"}') +
     "<|start|>assistant<|channel|>final<|message|>This tool call will get the weather.<|return|>",
     "This tool call will get the weather.", MULTI_A, calls=[("get_current_weather", {"location": "Tokyo"})])
case("harmony", "recipient_in_channel", "research parsers.md::harmony recipient in channel header",
     "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>",
     None, "Need weather.", calls=[("get_weather", {"city": "Paris"})])
case("harmony", "preamble", "research parsers.md::commentary without recipient = preamble content",
     "<|channel|>commentary<|message|>Let me look that up.<|end|>" + hcall("search", '{"q": "x"}'),
     "Let me look that up.", calls=[("search", {"q": "x"})])
case("harmony", "no_call_terminator", "research parsers.md::missing <|call|> (stop token stripped)",
     "<|channel|>analysis<|message|>Thinking.<|end|>" + hcall("get_weather", '{"city": "Oslo"}', end=""),
     None, "Thinking.", calls=[("get_weather", {"city": "Oslo"})])

# ---------------------------------------------------------------- deepseek_v31 / deepseek_r1 (V3 format) / deepseek_v32
D31 = "vllm-project/vllm@100fe7e0:tests/tool_parsers/test_deepseekv31_tool_parser.py"
CB, CE, TB1, TS, TE1 = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>"
case("deepseek_v31", "with_tool", D31 + "::test_extract_tool_calls_with_tool",
     "normal text" + CB + TB1 + 'foo' + TS + '{"x":1}' + TE1 + CE, "normal text", calls=[("foo", {"x": 1})])
case("deepseek_v31", "multiple_tools", D31 + "::test_extract_tool_calls_with_multiple_tools",
     "some prefix text" + CB + TB1 + "foo" + TS + '{"x":1}' + TE1 + TB1 + "bar" + TS + '{"y":2}' + TE1 + CE + " some suffix text",
     "some prefix text some suffix text", calls=[("foo", {"x": 1}), ("bar", {"y": 2})],
     note="upstream content is the prefix only; the suffix is kept here (lossless)")
case("deepseek_v31", "unparsable_cut_off", D31 + "::test_extract_tool_calls_unparsable_block[0]",
     "Let me look that up." + CB + "get_weather", "Let me look that up." + CB + "get_weather")
case("deepseek_v31", "unparsable_no_call_markers", D31 + "::test_extract_tool_calls_unparsable_block[1]",
     CB + 'foo' + TS + '{"x":1}' + CE, CB + 'foo' + TS + '{"x":1}' + CE)
case("deepseek_v31", "thinking_then_call", "llama.cpp@0042e207:tests/test-chat.cpp::DeepSeek V3.1 reasoning + call",
     "I'm\nthinking</think>Hello" + CB + TB1 + "special_function" + TS + '{"arg1": 1}' + TE1 + CE,
     "Hello", "I'm\nthinking", calls=[("special_function", {"arg1": 1})], options={"reasoning_prefilled": True})
case("deepseek_r1", "v3_call", "llama.cpp@0042e207:tests/test-chat.cpp::DeepSeek R1 tool call (V3 fenced format)",
     "I'm\nthinking</think>\n\n" + CB + TB1 + "function" + TS + "special_function\n```json\n{\"arg1\": 1}\n```" + TE1 + CE,
     None, "I'm\nthinking", calls=[("special_function", {"arg1": 1})])
case("deepseek_r1", "v3_two_calls", "research parsers.md::DeepSeek V3 parallel calls",
     "</think>" + CB + TB1 + "function" + TS + "get_weather\n```json\n{\"city\": \"Tokyo\"}\n```" + TE1 + "\n" +
     TB1 + "function" + TS + "get_time\n```json\n{}\n```" + TE1 + CE,
     None, None, calls=[("get_weather", {"city": "Tokyo"}), ("get_time", {})])

D32 = "vllm-project/vllm@00816550:tests/tool_parsers/test_deepseekv32_tool_parser.py"
FCS, FCE, INV, INVE, PAR, PARE = "<｜DSML｜function_calls>", "</｜DSML｜function_calls>", '<｜DSML｜invoke name="', "</｜DSML｜invoke>", '<｜DSML｜parameter name="', "</｜DSML｜parameter>"
def dsml(name, params, string="true"):
    ps = "".join(f'{PAR}{k}" string="{string}">{v}{PARE}' for k, v in params)
    return f'{FCS}\n{INV}{name}">\n{ps}\n{INVE}\n{FCE}'
case("deepseek_v32", "no_tool_call", D32 + "::test_no_tool_call", "just some text", "just some text")
case("deepseek_v32", "no_params", D32 + "::test_single_tool_no_params", f'{FCS}\n{INV}get_time">\n{INVE}\n{FCE}', calls=[("get_time", {})])
case("deepseek_v32", "with_params", D32 + "::test_single_tool_with_params", dsml("get_weather", [("location", "SF"), ("date", "2024-01-16")]),
     calls=[("get_weather", {"location": "SF", "date": "2024-01-16"})])
case("deepseek_v32", "content_before", D32 + "::test_content_before_tool_call", "Sure, let me check! " + dsml("get_weather", [("location", "NYC")]),
     "Sure, let me check! ", calls=[("get_weather", {"location": "NYC"})])
case("deepseek_v32", "multiple", D32 + "::test_multiple_tools",
     f'{FCS}\n{INV}get_weather">\n{PAR}location" string="true">SF{PARE}\n{INVE}\n{INV}get_weather">\n{PAR}location" string="true">NYC{PARE}\n{INVE}\n{FCE}',
     calls=[("get_weather", {"location": "SF"}), ("get_weather", {"location": "NYC"})])
case("deepseek_v32", "type_conversion", D32 + "::test_type_conversion_in_non_streaming",
     dsml("toggle", [("enabled", "true"), ("count", "42")], "false"), calls=[("toggle", {"enabled": True, "count": 42})],
     tools=[tool("toggle", {"enabled": {"type": "boolean"}, "count": {"type": "integer"}})])
case("deepseek_v32", "string_true_schema_int", D32 + "::test_string_attr_true_coerced_by_schema", dsml("score", [("value", "42")]),
     calls=[("score", {"value": 42})], tools=[tool("score", {"value": {"type": "integer"}})])
case("deepseek_v32", "string_false_schema_int", D32 + "::test_string_attr_false_allows_schema_conversion", dsml("score", [("value", "42")], "false"),
     calls=[("score", {"value": 42})], tools=[tool("score", {"value": {"type": "integer"}})])
case("deepseek_v32", "composed_schema", D32 + "::test_composed_schema_converts_object_and_array_params",
     dsml("set_timer", [("wait", '{"type":"for","minutes":2880}'), ("patches", '[{"op":"replace","path":"/schedule","value":"quiet"}]')], "false"),
     calls=[("set_timer", {"wait": {"type": "for", "minutes": 2880}, "patches": [{"op": "replace", "path": "/schedule", "value": "quiet"}]})],
     tools=[tool("set_timer", {"wait": {"anyOf": [{"type": "object", "properties": {"type": {"const": "until"}}}, {"type": "object"}]},
                               "patches": {"oneOf": [{"type": "array", "items": {"type": "object"}}, {"type": "null"}]}})])
case("deepseek_v32", "string_true_composed_object", D32 + "::test_string_attr_true_coerced_by_composed_schema",
     dsml("set_timer", [("wait", '{"type":"for","minutes":2880}')]), calls=[("set_timer", {"wait": {"type": "for", "minutes": 2880}})],
     tools=[tool("set_timer", {"wait": {"anyOf": [{"type": "object"}, {"type": "null"}]}})])
case("deepseek_v32", "object_and_array", D32 + "::test_object_and_array_params",
     dsml("update", [("tags", '["a", "b"]'), ("meta", '{"k": 1}')], "false"), calls=[("update", {"tags": ["a", "b"], "meta": {"k": 1}})],
     tools=[tool("update", {"tags": {"type": "array"}, "meta": {"type": "object"}})])
case("deepseek_v32", "no_schema_string_false", "research parsers.md::DSML string=false -> JSON value",
     dsml("f", [("n", "-3.5"), ("b", "false"), ("a", "[1, 2]")], "false"), calls=[("f", {"n": -3.5, "b": False, "a": [1, 2]})])

# ---------------------------------------------------------------- olmo3
O3 = "vllm-project/vllm@2aac44dc:tests/tool_parsers/test_olmo3_tool_parser.py"
MORE_JSONLIT = "register_user(name='John Doe', age=37, address={'city': 'San Francisco', 'state': 'CA'}, role=null, passed_test=true, aliases=['John', 'Johnny'])"
def fc(x): return f"<function_calls>{x}</function_calls>"
case("olmo3", "no_tool_call", O3 + "::test_no_tool_call", "How can I help you today?", "How can I help you today?")
case("olmo3", "simple", O3 + "::simple_nonstreaming", fc(SIMPLE), calls=[SIMPLE_C])
case("olmo3", "more_types", O3 + "::more_types_nonstreaming", fc(MORE), calls=[MORE_C])
case("olmo3", "json_literals", O3 + "::more_types_nonstreaming_json_literals", fc(MORE_JSONLIT), calls=[MORE_C])
case("olmo3", "parameterless", O3 + "::parameterless_nonstreaming", fc("get_weather()"), calls=[("get_weather", {})])
case("olmo3", "empty_dict", O3 + "::empty_dict_nonstreaming", fc("do_something_cool(additional_data={})"), calls=[("do_something_cool", {"additional_data": {}})])
case("olmo3", "empty_list", O3 + "::empty_list_nonstreaming", fc("do_something_cool(steps=[])"), calls=[("do_something_cool", {"steps": []})])
case("olmo3", "escaped", O3 + "::escaped_string_nonstreaming", fc(r"get_weather(city='Martha\'s Vineyard', metric='\"cool units\"')"),
     calls=[("get_weather", {"city": "Martha's Vineyard", "metric": '"cool units"'})])
case("olmo3", "parallel", O3 + "::parallel_calls_nonstreaming", fc(SIMPLE + "\n" + MORE), calls=[SIMPLE_C, MORE_C])
case("olmo3", "large_steps", O3 + "::test_streaming_tool_call_with_large_steps",
     fc(SIMPLE + "\nget_weather()\ndo_something_cool(steps=[])"), calls=[SIMPLE_C, ("get_weather", {}), ("do_something_cool", {"steps": []})])
case("olmo3", "regex_timeout_input", O3 + "::test_regex_timeout_handling", "hello world[A(A=" + "\t)A(A=,\t" * 2, "hello world[A(A=" + "\t)A(A=,\t" * 2)
case("olmo3", "bad_sibling", O3 + "::test_bad_sibling_call_does_not_drop_good_calls", fc("bad(x=b'z')\n" + SIMPLE), calls=[SIMPLE_C], warnings=["invalid_call"])
case("olmo3", "non_finite", O3 + "::test_non_finite_argument_rejected", fc("calc(x=1e999)\n" + SIMPLE), calls=[SIMPLE_C], warnings=["invalid_call"])
case("olmo3", "mismatched_brackets", O3 + "::test_streaming_mismatched_brackets_reported_once", fc("foo(x=1])"), fc("foo(x=1])"),
     warnings=["not_a_call"])

# ---------------------------------------------------------------- xlam
X = "vllm-project/vllm@10a67515:tests/tool_parsers/test_xlam_tool_parser.py"
XD = '{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}'
XD_C = ("get_current_weather", {"city": "Dallas", "state": "TX", "unit": "fahrenheit"})
XO = '{"name": "get_current_weather", "arguments": {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}}'
case("xlam", "no_tools", X + "::test_extract_tool_calls_no_tools", "This is a test", "This is a test")
case("xlam", "parallel", X + "::parallel_tool_calls", f"[{XD}, {XO}]", calls=[XD_C, ("get_current_weather", {"city": "Orlando", "state": "FL", "unit": "fahrenheit"})])
case("xlam", "think_tag", X + "::single_tool_with_think_tag", f"<think>I'll help you with that.</think>[{XD}]", None, "I'll help you with that.",
     calls=[XD_C], note="upstream keeps the think block in content; split here")
case("xlam", "json_code_block", X + "::single_tool_with_json_code_block", f"I'll help you with that.\n```json\n[{XD}]\n```",
     "I'll help you with that.", calls=[XD_C], compare="strip")
case("xlam", "tool_calls_tag", X + "::single_tool_with_tool_calls_tag", f"I'll check the weather for you.[TOOL_CALLS][{XD}]",
     "I'll check the weather for you.", calls=[XD_C])
case("xlam", "tool_call_xml_tags", X + "::single_tool_with_tool_call_xml_tags", f"I'll help you check the weather.<tool_call>[{XD}]</tool_call>",
     "I'll help you check the weather.", calls=[XD_C])
case("xlam", "list_structure", X + "::list_structured_tool_call",
     '[{"name": "get_current_weather", "arguments": {"city": "Seattle", "state": "WA", "unit": "celsius"}}]',
     calls=[("get_current_weather", {"city": "Seattle", "state": "WA", "unit": "celsius"})])

# ---------------------------------------------------------------- SGLang pythonic / mistral
SG = "sgl-project/sglang@03400a9e:test/srt/test_function_call_parser.py"
case("pythonic", "sg_no_brackets", SG + "::TestPythonicDetector.test_parse_streaming_no_brackets",
     "This is just normal text without any tool calls.", "This is just normal text without any tool calls.")
case("pythonic", "sg_complete_call", SG + "::TestPythonicDetector.test_parse_streaming_complete_tool_call",
     "Here's a tool call: [get_weather(location='New York', unit='celsius')]", "Here's a tool call: ",
     calls=[("get_weather", {"location": "New York", "unit": "celsius"})])
case("pythonic", "sg_text_before", SG + "::TestPythonicDetector.test_parse_streaming_text_before_tool_call",
     "This is some text before [get_weather(location='London')]", "This is some text before ", calls=[("get_weather", {"location": "London"})])
case("pythonic", "sg_partial", SG + "::TestPythonicDetector.test_parse_streaming_partial_tool_call",
     "Let me check the weather: [get_weather(location='Paris')]", "Let me check the weather: ", calls=[("get_weather", {"location": "Paris"})])
case("pythonic", "sg_no_text_before", SG + "::TestPythonicDetector.test_parse_streaming_bracket_without_text_before",
     "[search(query='python programming')]", calls=[("search", {"query": "python programming"})])
case("pythonic", "sg_text_after", SG + "::TestPythonicDetector.test_parse_streaming_text_after_tool_call",
     "[get_weather(location='Tokyo')] Here's the forecast:", " Here's the forecast:", calls=[("get_weather", {"location": "Tokyo"})])
case("pythonic", "sg_multiple", SG + "::TestPythonicDetector.test_parse_streaming_multiple_tool_calls",
     "[get_weather(location='Berlin')] and [search(query='restaurants')]", " and ",
     calls=[("get_weather", {"location": "Berlin"}), ("search", {"query": "restaurants"})])
case("pythonic", "sg_opening_bracket_only", SG + "::TestPythonicDetector.test_parse_streaming_opening_bracket_only",
     "Let's try this: [", "Let's try this: [")
case("pythonic", "sg_nested_brackets", SG + "::TestPythonicDetector.test_parse_streaming_nested_brackets",
     "[get_weather(location='New York', unit='celsius', data=[1, 2, 3])]",
     calls=[("get_weather", {"location": "New York", "unit": "celsius", "data": [1, 2, 3]})])
case("pythonic", "sg_nested_dict", SG + "::TestPythonicDetector.test_parse_streaming_nested_brackets_dict",
     "[search(query='test', config={'options': [1, 2], 'nested': {'key': 'value'}})]",
     calls=[("search", {"query": "test", "config": {"options": [1, 2], "nested": {"key": "value"}}})])
case("pythonic", "sg_multiple_nested", SG + "::TestPythonicDetector.test_parse_streaming_multiple_tools_with_nested_brackets",
     "[get_weather(location='Paris', data=[10, 20]), search(query='test', filters=['a', 'b'])]",
     calls=[("get_weather", {"location": "Paris", "data": [10, 20]}), ("search", {"query": "test", "filters": ["a", "b"]})])
case("pythonic", "sg_partial_nested", SG + "::TestPythonicDetector.test_parse_streaming_partial_nested_brackets",
     "Here's a call: [get_weather(location='Tokyo', data=[1, 2, 3])]", "Here's a call: ",
     calls=[("get_weather", {"location": "Tokyo", "data": [1, 2, 3]})])
case("pythonic", "sg_python_start_end", SG + "::TestPythonicDetector.test_parse_streaming_with_python_start_and_end_token",
     "Here's a call: <|python_start|>[get_weather(location='Tokyo', data=[1, 2, 3])]<|python_end|>", "Here's a call: ",
     calls=[("get_weather", {"location": "Tokyo", "data": [1, 2, 3]})])
case("pythonic", "sg_python_tokens_text_after", SG + "::TestPythonicDetector.test_detect_and_parse_with_python_start_and_end_token",
     "User wants to get the weather in Mars. <|python_start|>[get_weather(location='Mars', unit='celsius')]<|python_end|> In this way we will get the weather in Mars.",
     "User wants to get the weather in Mars.  In this way we will get the weather in Mars.",
     calls=[("get_weather", {"location": "Mars", "unit": "celsius"})])
case("pythonic", "lfm2_markers", "research parsers.md::LFM2 <|tool_call_start|>[..]<|tool_call_end|>",
     "<|tool_call_start|>[get_candidate_status(candidate_id=\"12345\")]<|tool_call_end|>Checking the status.",
     "Checking the status.", calls=[("get_candidate_status", {"candidate_id": "12345"})])

MIST_LONG = "```\\nTOOL: Access a weather API or service\\nOBSERVATION: Retrieve the current weather data for the top 5 populated cities in the US\\nANSWER: The weather in the top 5 populated cities in the US is as follows: [City Name] - [Weather Conditions] - [Temperature]\\n```"
case("mistral_v03", "sg_nested_brackets", SG + "::TestMistralDetector.test_detect_and_parse_with_nested_brackets_in_content",
     '[TOOL_CALLS] [{"name":"make_next_step_decision", "arguments":{"decision":"","content":"' + MIST_LONG + '"}}]',
     calls=[("make_next_step_decision", {"decision": "", "content": json.loads('"' + MIST_LONG + '"')})])
case("mistral_v03", "sg_simple", SG + "::TestMistralDetector.test_detect_and_parse_simple_case",
     '[TOOL_CALLS] [{"name":"make_next_step_decision", "arguments":{"decision":"TOOL", "content":"Use weather API"}}]',
     calls=[("make_next_step_decision", {"decision": "TOOL", "content": "Use weather API"})])
case("mistral_v03", "sg_no_tool_calls", SG + "::TestMistralDetector.test_detect_and_parse_no_tool_calls",
     "This is just normal text without any tool calls.", "This is just normal text without any tool calls.")
case("mistral_v03", "sg_text_before", SG + "::TestMistralDetector.test_detect_and_parse_with_text_before_tool_call",
     'Here is some text before the tool call: [TOOL_CALLS] [{"name":"make_next_step_decision", "arguments":{"decision":"ANSWER", "content":"The answer is 42"}}]',
     "Here is some text before the tool call: ", calls=[("make_next_step_decision", {"decision": "ANSWER", "content": "The answer is 42"})],
     compare="strip")
SGM = "sgl-project/sglang@c3df60d2:test/srt/function_call/test_mistral_detector.py"
case("mistral_v03", "sg_canonical", SGM + "::test_canonical_format", '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}]',
     calls=[("get_weather", {"city": "Paris"})])
case("mistral_v03", "sg_compact", SGM + "::test_compact_format", '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
     calls=[("get_weather", {"city": "Paris"})])
case("mistral_v11", "sg_compact", SGM + "::test_compact_format", '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
     calls=[("get_weather", {"city": "Paris"})])
case("mistral_v11", "sg_canonical", SGM + "::test_canonical_format", '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}]',
     calls=[("get_weather", {"city": "Paris"})])
case("mistral_v03", "native_id", "research parsers.md::Mistral 9-character id preserved",
     '[TOOL_CALLS] [{"name": "add", "arguments": {"a": 3, "b": 4}, "id": "123456789"}, {"id": "abcDEF123", "name": "mul", "arguments": {"a": 1}}]',
     calls=[("add", {"a": 3, "b": 4}, "123456789"), ("mul", {"a": 1}, "abcDEF123")])
case("mistral_v03", "args_before_name", "research parsers.md::Mistral args-before-name key order",
     '[TOOL_CALLS] [{"arguments": {"city": "Paris"}, "name": "get_weather"}]', calls=[("get_weather", {"city": "Paris"})])
case("mistral_v11", "call_ids", "research parsers.md::Mistral v11 repeated [TOOL_CALLS] with ids",
     'Sure.[TOOL_CALLS]add[CALL_ID]abc123XYZ[ARGS]{"a": 1, "b": 2}[TOOL_CALLS]mul[CALL_ID]def456UVW[ARGS]{"a": 3}',
     "Sure.", calls=[("add", {"a": 1, "b": 2}, "abc123XYZ"), ("mul", {"a": 3}, "def456UVW")])
case("mistral_v11", "think", "research parsers.md::Magistral [THINK]..[/THINK]",
     '[THINK]Let me add.[/THINK]The sum is coming.[TOOL_CALLS]add[ARGS]{"a": 1}', "The sum is coming.", "Let me add.",
     calls=[("add", {"a": 1})])

# ---------------------------------------------------------------- fuzz findings (fuzz/parse_stream.cpp)
case("harmony", "fuzz_empty_recipient", "chatwire fuzz/parse_stream.cpp finding: recipient 'functions.' with no name",
     "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.<|constrain|>json<|message|>{\"city\": 1}<|call|>",
     '{"city": 1}', "Need weather.", warnings=["not_a_call"])
case("hermes", "fuzz_empty_name", "chatwire fuzz/parse_stream.cpp: a call object whose name is empty is not a call",
     '<tool_call>{"name": "", "arguments": {"a": 1}}</tool_call>', '<tool_call>{"name": "", "arguments": {"a": 1}}</tool_call>',
     warnings=["not_a_call"])

# ---------------------------------------------------------------- step3
S3 = "vllm-project/vllm@04b590e6:tests/tool_parsers/test_step3_tool_parser.py"
B3, E3, CB3, CE3 = "<｜tool_calls_begin｜>", "<｜tool_calls_end｜>", "<｜tool_call_begin｜>", "<｜tool_call_end｜>"
def s3inv(name, kv): return f'<steptml:invoke name="{name}">' + "".join(f'<steptml:parameter name="{k}">{v}</steptml:parameter>' for k, v in kv) + "</steptml:invoke>"
case("step3", "no_tool_calls", S3 + "::no_tool_calls_output", "This is a regular response without any tool calls.",
     "This is a regular response without any tool calls.")
case("step3", "single", S3 + "::single_tool_call_output", B3 + CB3 + s3inv("get_weather", [("city", "Tokyo")]) + CE3 + E3,
     calls=[("get_weather", {"city": "Tokyo"})], note="upstream marks this xfail (parser bugs); expected per the format")
case("step3", "parallel", S3 + "::parallel_tool_calls_output", B3 + CB3 + s3inv("get_weather", [("city", "Tokyo")]) + CE3 + "<｜tool_sep｜>" +
     CB3 + s3inv("get_time", [("timezone", "Asia/Tokyo")]) + CE3 + E3,
     calls=[("get_weather", {"city": "Tokyo"}), ("get_time", {"timezone": "Asia/Tokyo"})])
case("step3", "various_types_no_schema", S3 + "::various_data_types_output", B3 + CB3 + s3inv("test_function", [
    ("string_field", "hello"), ("int_field", "42"), ("float_field", "3.14"), ("bool_field", "true"), ("null_field", "null"),
    ("array_field", '["a", "b", "c"]'), ("object_field", '{"nested": "value"}')]) + CE3 + E3,
     calls=[("test_function", {"string_field": "hello", "int_field": 42, "float_field": 3.14, "bool_field": True, "null_field": None,
                               "array_field": ["a", "b", "c"], "object_field": {"nested": "value"}})])
case("step3", "empty_arguments", S3 + "::empty_arguments_output", B3 + CB3 + '<steptml:invoke name="refresh"></steptml:invoke>' + CE3 + E3,
     calls=[("refresh", {})])
case("step3", "surrounding_text", S3 + "::surrounding_text_output", "Let me check the weather for you.\n\n" + B3 + CB3 +
     s3inv("get_weather", [("city", "Tokyo")]) + CE3 + E3 + "\n\nI'll get that information.",
     "Let me check the weather for you.\n\n\n\nI'll get that information.", calls=[("get_weather", {"city": "Tokyo"})])
case("step3", "escaped_strings", S3 + "::escaped_strings_output", B3 + CB3 + s3inv("test_function", [
    ("quoted", 'He said "hello"'), ("path", "C:\\Users\\file.txt"), ("newline", "line1\nline2")]) + CE3 + E3,
     calls=[("test_function", {"quoted": 'He said "hello"', "path": "C:\\Users\\file.txt", "newline": "line1\nline2"})],
     tools=[tool("test_function", {"quoted": {"type": "string"}, "path": {"type": "string"}, "newline": {"type": "string"}})])
WS_TOOLS = [tool("edit_file", {"old_string": {"type": "string"}, "indent": {"type": "integer"}, "enabled": {"type": "boolean"}})]
for i, v in enumerate(["    if x:", "return 1\n", "    if x:\n        return 1\n", "hello ", "hello\u00a0", "hello"]):
    case("step3", f"whitespace_{i}", S3 + "::TestStep3ParameterWhitespace.test_string_value_preserved",
         B3 + CB3 + "function<｜tool_sep｜>edit_file\n" + s3inv("edit_file", [("old_string", v), ("indent", " 4 "), ("enabled", " true ")]) + CE3 + E3,
         calls=[("edit_file", {"old_string": v, "indent": 4, "enabled": True})], tools=WS_TOOLS)

# ---------------------------------------------------------------- command_r7b
LC = "ggml-org/llama.cpp@0042e207:tests/test-chat.cpp"
case("command_r7b", "thoughts_call", LC + "::Command R7B thoughts + call (message_assist_thoughts_call_idx)",
     "<|START_THINKING|>I'm\nthinking<|END_THINKING|><|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"special_function\", \"parameters\": {\"arg1\": 1}}\n]<|END_ACTION|>",
     None, "I'm\nthinking", calls=[("special_function", {"arg1": 1}, "0")])
case("command_r7b", "thoughts_response", LC + "::Command R7B thoughts + response",
     "<|START_THINKING|>I'm\nthinking<|END_THINKING|><|START_RESPONSE|>Hello, world!\nWhat's up?<|END_RESPONSE|>",
     "Hello, world!\nWhat's up?", "I'm\nthinking")
TF = "huggingface/transformers@0d7e95d:tests/utils/test_chat_parsing.py"
case("command_r7b", "cohere_template", TF + "::test_cohere_template",
     '<|START_THINKING|>I should call a tool.<|END_THINKING|><|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "simple_tool", "parameters": {"temperature_format": "Celsius"}}\n]<|END_ACTION|><|END_OF_TURN_TOKEN|>',
     None, "I should call a tool.", calls=[("simple_tool", {"temperature_format": "Celsius"}, "0")])
case("command_r7b", "two_calls", "ollama-style cohere parser test (TestCohereParseToolCall)",
     '<|START_THINKING|>plan<|END_THINKING|><|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}},\n    {"tool_call_id": "1", "tool_name": "get_time", "parameters": {}}\n]<|END_ACTION|>',
     None, "plan", calls=[("get_weather", {"city": "Paris"}, "0"), ("get_time", {}, "1")])

# ---------------------------------------------------------------- nemotron / granite / functionary (llama.cpp format tests)
case("nemotron", "call", LC + "::NVIDIA-Nemotron-Nano-v2 tool call",
     '<TOOLCALL>[{"name": "special_function", "arguments": {"arg1": 1}}]</TOOLCALL>', calls=[("special_function", {"arg1": 1})])
case("nemotron", "think_content_calls", LC + "::NVIDIA-Nemotron-Nano-v2 reasoning + parallel calls",
     '<think>I\'m\nthinking</think>\nSure.<TOOLCALL>[{"name": "special_function", "arguments": {"arg1": 1}}, {"name": "special_function_with_opt", "arguments": {"arg1": 1, "arg2": 2}}]</TOOLCALL>',
     "\nSure.", "I'm\nthinking", calls=[("special_function", {"arg1": 1}), ("special_function_with_opt", {"arg1": 1, "arg2": 2})])
case("nemotron", "content_only", LC + "::NVIDIA-Nemotron-Nano-v2 content", "Hello, world!\nWhat's up?", "Hello, world!\nWhat's up?")
case("granite", "call", LC + "::granite-3.3 tool call", '<|tool_call|>[{"name": "special_function", "arguments": {"arg1": 1}}]',
     calls=[("special_function", {"arg1": 1})])
case("granite", "think_response", LC + "::granite-3.3 thoughts + response",
     "<think>I'm\nthinking</think><response>Hello, world!\nWhat's up?</response>", "Hello, world!\nWhat's up?", "I'm\nthinking")
case("granite", "content_then_calls", LC + "::granite-3.3 content + parallel calls",
     'Calling.<|tool_call|>[{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}]', "Calling.",
     calls=[("a", {"x": 1}), ("b", {})])
case("functionary_v3_1", "call", LC + "::functionary v3.1 (Llama 3.1) tool call",
     '<function=special_function>{"arg1": 1}</function>', calls=[("special_function", {"arg1": 1})])
case("functionary_v3_1", "content_then_call", LC + "::functionary v3.1 content + call",
     'Hello, world!<function=special_function>{"arg1": 1}</function>', "Hello, world!", calls=[("special_function", {"arg1": 1})])
case("functionary_v3_1", "content_only", LC + "::functionary v3.1 content", "Hello, world!\nWhat's up?", "Hello, world!\nWhat's up?")
case("functionary_v3_2", "first_call_without_marker", LC + "::functionary v3.2 tool call",
     'special_function\n{"arg1": 1}', calls=[("special_function", {"arg1": 1})])
case("functionary_v3_2", "all_content", LC + "::functionary v3.2 content", "all\nHello, world!\nWhat's up?", "Hello, world!\nWhat's up?")
case("functionary_v3_2", "content_then_call", LC + "::functionary v3.2 content + call",
     'all\nHello, world!\n>>>special_function\n{"arg1": 1}', "Hello, world!\n", calls=[("special_function", {"arg1": 1})])
case("functionary_v3_2", "two_calls", LC + "::functionary v3.2 parallel calls",
     'special_function\n{"arg1": 1}>>>special_function_with_opt\n{"arg1": 1, "arg2": 2}',
     calls=[("special_function", {"arg1": 1}), ("special_function_with_opt", {"arg1": 1, "arg2": 2})])

# ---------------------------------------------------------------- kimi_k2 ids (bare counters, malformed)
WEATHER_T = tool("get_weather", {"city": {"type": "string"}, "unit": {"type": "string"}})
READ_T = tool("read_file", {"path": {"type": "string"}})
FLIGHT_T = tool("book_flight", {"city": {"type": "string"}})
case("kimi_k2", "malformed_id_skipped", KIMI + "::test_invalid_funcall_id_skipped", "Help. " + SB +
     ktool("functions.invalid.0", '{"city": "Beijing"}') + ktool("functions.valid:1", '{"city": "Shanghai"}') + SE,
     "Help. " + SB + TB + "functions.invalid.0 " + AB + '{"city": "Beijing"}' + TE + SE, calls=[("valid", {"city": "Shanghai"})],
     warnings=["not_a_call"], note="upstream checks only the calls; the malformed call's text stays content here")
case("kimi_k2", "bare_counter", KIMI + "::test_bare_counter", "Let me check. " + kwrap(ktool("0", '{"city": "Tokyo", "unit": "celsius"}')),
     "Let me check. ", calls=[("get_weather", {"city": "Tokyo", "unit": "celsius"}, "0")], tools=[WEATHER_T])
case("kimi_k2", "bare_counter_invalid_json", KIMI + "::test_bare_counter_single_tool_invalid_json_still_extracted",
     "Let me check. " + kwrap(ktool("0", '{"city": "Tokyo"')), "Let me check. ", calls=[("get_weather", '{"city": "Tokyo"', "0")],
     tools=[WEATHER_T])
case("kimi_k2", "bare_counter_infers_by_args", KIMI + "::test_bare_counter_multiple_tools_infers_by_args",
     "Let me check. " + kwrap(ktool("0", '{"city": "Tokyo", "unit": "celsius"}')), "Let me check. ",
     calls=[("get_weather", {"city": "Tokyo", "unit": "celsius"}, "0")], tools=[READ_T, WEATHER_T])
case("kimi_k2", "bare_counter_ambiguous", KIMI + "::test_bare_counter_multiple_tools_skips_unsafe_inference[ambiguous]",
     "Let me check. " + kwrap(ktool("0", '{"city": "Tokyo"}')), "Let me check. " + kwrap(ktool("0", '{"city": "Tokyo"}')), tools=[WEATHER_T, FLIGHT_T],
     warnings=["not_a_call"], note="upstream drops the call; its arguments stay content here")
case("kimi_k2", "bare_counter_malformed", KIMI + "::test_bare_counter_multiple_tools_skips_unsafe_inference[malformed_json]",
     "Let me check. " + kwrap(ktool("0", '{"city": "Tokyo"')), "Let me check. " + kwrap(ktool("0", '{"city": "Tokyo"')), tools=[WEATHER_T, FLIGHT_T],
     warnings=["not_a_call"])

# ---------------------------------------------------------------- step3p5
S35 = ("chatwire: the step3p5 dialect (Step-3.5-Flash; vLLM's step3p5 reasoning parser reads one "
       "newline on each side of </think> as layout, its tool parser is Qwen3-Coder's)")
S35_T = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
    "city": {"type": "string"}, "days": {"type": "integer"}}}}}]
case("step3p5", "reasoning_then_call", S35,
     "The user wants the weather.\n</think>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n"
     "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
     None, "The user wants the weather.", calls=[("get_weather", {"city": "Oslo", "days": 3})], tools=S35_T)
case("step3p5", "only_one_newline_is_layout", S35 + ": of three newlines before </think> and two after, one on each side is layout",
     "Think.\n\n\n</think>\n\nAnswer.", "\nAnswer.", "Think.\n\n")
case("step3p5", "newline_inside_reasoning_kept", S35 + ": a newline not before </think> is reasoning",
     "<think>a\nb</think>Answer", "Answer", "a\nb")
case("step3p5", "truncated_reasoning_last_newline",
     S35 + ": the output ends inside the block; its last newline is layout (vLLM: 'still thinking\\n' reads 'still thinking')",
     "<think>still thinking\n", None, "still thinking")
case("step3p5", "thinking_off", S35 + ": thinking disabled, the answer is content", "Hello.\n", "Hello.\n",
     options={"enable_thinking": False})

# ---------------------------------------------------------------- chatwire's own cases added to the files
# by hand at earlier stops, kept here so that regenerating the files keeps them
CASES['granite'].append(json.loads("{\"id\": \"granite_think_newlines_then_call\", \"dialect\": \"granite\", \"source\": \"chatwire: the newlines after </think> are layout (vLLM granite_thinking, SGLang Granite parity), also before a call\", \"input\": \"<think>check the weather</think>\\n\\n<|tool_call|>[{\\\"name\\\": \\\"get_weather\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Bern\\\"}}]\", \"expected\": {\"content\": null, \"reasoning_content\": \"check the weather\", \"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Bern\"}}]}}"))
CASES['granite'].append(json.loads("{\"id\": \"granite_think_newlines_inside_answer_kept\", \"dialect\": \"granite\", \"source\": \"chatwire: only the newlines right after </think> are layout; the answer's own newlines and a leading space stay\", \"input\": \"<think>r</think>\\n \\nanswer\\n\\nmore\", \"expected\": {\"content\": \" \\nanswer\\n\\nmore\", \"reasoning_content\": \"r\", \"tool_calls\": []}}"))
CASES['harmony'].append(json.loads("{\"id\": \"harmony_recipient_at_output_start\", \"dialect\": \"harmony\", \"source\": \"chatwire: the prompt ends with <|start|>assistant (gpt-oss's generation prompt), so a direct call begins inside the header with its recipient, as openai/harmony's parser reads a message after a prefilled role\", \"input\": \" to=functions.get_weather<|channel|>commentary json<|message|>{\\\"city\\\": \\\"Paris\\\"}<|call|>\", \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Paris\\\"}\"}]}}"))
CASES['harmony'].append(json.loads("{\"id\": \"harmony_text_starting_with_to\", \"dialect\": \"harmony\", \"source\": \"chatwire: only `to=` right at the start opens a header; other text stays content\", \"input\": \"toast is ready<|return|>\", \"expected\": {\"content\": \"toast is ready\", \"reasoning_content\": null, \"tool_calls\": []}}"))
CASES['llama3_json'].append(json.loads("{\"id\": \"llama3_json_builtin_bad_sibling\", \"dialect\": \"llama3_json\", \"source\": \"chatwire: a builtin call whose argument JSON cannot hold (1e999) is dropped with a warning, never silently; its sibling is kept\", \"input\": \"<|python_tag|>brave_search.call(query=1e999), wolfram_alpha.call(query=\\\"x\\\")\", \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"wolfram_alpha\", \"arguments\": {\"query\": \"x\"}}]}, \"warnings\": [\"invalid_call\"]}"))
CASES['pythonic'].append(json.loads("{\"id\": \"pythonic_set_is_array\", \"dialect\": \"pythonic\", \"source\": \"chatwire: a Python set (as LFM2 writes tags) becomes a JSON array; an empty {} stays an object\", \"input\": \"[label(tags={'urgent', 'bug'}, meta={})]\", \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"label\", \"arguments\": {\"tags\": [\"urgent\", \"bug\"], \"meta\": {}}}]}}"))
CASES['pythonic'].append(json.loads("{\"id\": \"pythonic_raw_newline_in_string\", \"dialect\": \"pythonic\", \"source\": \"chatwire: a raw newline in a one-line string is the newline (vLLM's LFM2 tests)\", \"input\": \"[run(code='a = 1\\nprint(a)')]\", \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"run\", \"arguments\": {\"code\": \"a = 1\\nprint(a)\"}}]}}"))

# ---------------------------------------------------------------- dialects whose cases were written
# by hand when the dialect was added (deepseek_v4 .. phi4_mini), kept here as they stand
CASES['deepseek_v4'].append(json.loads("{\"id\": \"deepseek_v4_content\", \"dialect\": \"deepseek_v4\", \"source\": \"ggml-org/llama.cpp@0042e207:tests/test-chat.cpp::deepseek-ai-DeepSeek-V4 pure content (non-thinking mode)\", \"input\": \"Hello, world!\\nWhat's up?\", \"options\": {\"enable_thinking\": false}, \"expected\": {\"content\": \"Hello, world!\\nWhat's up?\", \"reasoning_content\": null, \"tool_calls\": []}}"))
CASES['deepseek_v4'].append(json.loads("{\"id\": \"deepseek_v4_thinking_call\", \"dialect\": \"deepseek_v4\", \"source\": \"ggml-org/llama.cpp@0042e207:tests/test-chat.cpp::deepseek-ai-DeepSeek-V4 thinking + tool call (single, string param)\", \"input\": \"Let me check the time</think>\\n\\n<｜DSML｜tool_calls>\\n<｜DSML｜invoke name=\\\"get_time\\\">\\n<｜DSML｜parameter name=\\\"city\\\" string=\\\"true\\\">Tokyo</｜DSML｜parameter>\\n</｜DSML｜invoke>\\n</｜DSML｜tool_calls>\", \"options\": {\"reasoning_prefilled\": true}, \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"get_time\", \"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}, \"required\": [\"city\"]}}}], \"expected\": {\"content\": null, \"reasoning_content\": \"Let me check the time\", \"tool_calls\": [{\"name\": \"get_time\", \"arguments\": {\"city\": \"Tokyo\"}}]}}"))
CASES['deepseek_v4'].append(json.loads("{\"id\": \"deepseek_v4_parallel_mixed\", \"dialect\": \"deepseek_v4\", \"source\": \"ggml-org/llama.cpp@0042e207:tests/test-chat.cpp::deepseek-ai-DeepSeek-V4 multiple parallel tool calls with reasoning / multiple params (mixed types)\", \"input\": \"Calling both</think>\\n\\n<｜DSML｜tool_calls>\\n<｜DSML｜invoke name=\\\"get_time\\\">\\n<｜DSML｜parameter name=\\\"city\\\" string=\\\"true\\\">Paris</｜DSML｜parameter>\\n</｜DSML｜invoke>\\n<｜DSML｜invoke name=\\\"magic_int\\\">\\n<｜DSML｜parameter name=\\\"ref\\\" string=\\\"false\\\">42</｜DSML｜parameter>\\n<｜DSML｜parameter name=\\\"name\\\" string=\\\"true\\\">foo bar</｜DSML｜parameter>\\n</｜DSML｜invoke>\\n</｜DSML｜tool_calls>\", \"options\": {\"reasoning_prefilled\": true}, \"expected\": {\"content\": null, \"reasoning_content\": \"Calling both\", \"tool_calls\": [{\"name\": \"get_time\", \"arguments\": {\"city\": \"Paris\"}}, {\"name\": \"magic_int\", \"arguments\": {\"ref\": 42, \"name\": \"foo bar\"}}]}}"))
CASES['deepseek_v4'].append(json.loads("{\"id\": \"deepseek_v4_leading_newlines\", \"dialect\": \"deepseek_v4\", \"source\": \"ggml-org/llama.cpp@0042e207:tests/test-chat.cpp::deepseek-ai-DeepSeek-V4-Flash-0731 the DSML separator belongs to the tool call block\", \"input\": \"\\n\\n<｜DSML｜tool_calls>\\n<｜DSML｜invoke name=\\\"special_function\\\">\\n<｜DSML｜parameter name=\\\"arg1\\\" string=\\\"false\\\">1</｜DSML｜parameter>\\n</｜DSML｜invoke>\\n</｜DSML｜tool_calls>\", \"options\": {\"enable_thinking\": false}, \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}]}}"))
CASES['ernie45'].append(json.loads("{\"id\": \"ernie45_reasoning_then_calls\", \"dialect\": \"ernie45\", \"source\": \"vllm-project/vllm@0a26f84c:tests/tool_parsers/test_ernie45_moe_tool_parser.py::test_extract_tool_calls[tool_call_with_content_before]\", \"input\": \"I need to call two tools to handle these two issues separately.\\n</think>\\n\\n<tool_call>\\n{\\\"name\\\": \\\"get_current_temperature\\\", \\\"arguments\\\": {\\\"location\\\": \\\"Beijing\\\"}}\\n</tool_call>\\n<tool_call>\\n{\\\"name\\\": \\\"get_temperature_unit\\\", \\\"arguments\\\": {\\\"location\\\": \\\"Guangzhou\\\", \\\"unit\\\": \\\"c\\\"}}\\n</tool_call>\\n\", \"expected\": {\"content\": null, \"reasoning_content\": \"I need to call two tools to handle these two issues separately.\\n\", \"tool_calls\": [{\"name\": \"get_current_temperature\", \"arguments\": {\"location\": \"Beijing\"}}, {\"name\": \"get_temperature_unit\", \"arguments\": {\"location\": \"Guangzhou\", \"unit\": \"c\"}}]}, \"note\": \"the output starts in reasoning (the prompt opened it), as vLLM's ernie45 reasoning parser reads it\"}"))
CASES['ernie45'].append(json.loads("{\"id\": \"ernie45_calls_thinking_off\", \"dialect\": \"ernie45\", \"source\": \"vllm-project/vllm@0a26f84c:tests/tool_parsers/test_ernie45_moe_tool_parser.py::test_extract_tool_calls[multiple_tool_calls]\", \"input\": \"<tool_call>\\n{\\\"name\\\": \\\"get_current_temperature\\\", \\\"arguments\\\": {\\\"location\\\": \\\"Beijing\\\"}}\\n</tool_call>\\n<tool_call>\\n{\\\"name\\\": \\\"get_temperature_unit\\\", \\\"arguments\\\": {\\\"location\\\": \\\"Guangzhou\\\", \\\"unit\\\": \\\"c\\\"}}\\n</tool_call>\\n\", \"options\": {\"enable_thinking\": false}, \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"get_current_temperature\", \"arguments\": {\"location\": \"Beijing\"}}, {\"name\": \"get_temperature_unit\", \"arguments\": {\"location\": \"Guangzhou\", \"unit\": \"c\"}}]}}"))
CASES['ernie45'].append(json.loads("{\"id\": \"ernie45_reasoning_then_response\", \"dialect\": \"ernie45\", \"source\": \"chatwire: ERNIE-4.5 Thinking's answer in <response> tags (the format vLLM's ernie45 reasoning parser documents)\", \"input\": \"Simple arithmetic.\\n</think>\\n\\n<response>\\nIt is 4.\\n</response>\\n\", \"expected\": {\"content\": \"\\nIt is 4.\\n\\n\", \"reasoning_content\": \"Simple arithmetic.\\n\", \"tool_calls\": []}, \"note\": \"the newlines after </think> are layout; the response tags are removed, the text between and after them kept\"}"))
CASES['ernie45'].append(json.loads("{\"id\": \"ernie45_reasoning_then_answer\", \"dialect\": \"ernie45\", \"source\": \"chatwire: ERNIE-4.5 Thinking's plain answer after </think>\", \"input\": \"Simple arithmetic.\\n</think>\\n\\nIt is 4.\", \"expected\": {\"content\": \"It is 4.\", \"reasoning_content\": \"Simple arithmetic.\\n\", \"tool_calls\": []}}"))
CASES['ernie45'].append(json.loads("{\"id\": \"ernie45_unclosed_reasoning\", \"dialect\": \"ernie45\", \"source\": \"chatwire: no </think>: all reasoning (truncated), as vLLM's ernie45 reasoning parser reads it\", \"input\": \"Still thinking\", \"expected\": {\"content\": null, \"reasoning_content\": \"Still thinking\", \"tool_calls\": []}}"))
CASES['hunyuan_a13b'].append(json.loads("{\"id\": \"hunyuan_a13b_call\", \"dialect\": \"hunyuan_a13b\", \"source\": \"vllm-project/vllm@10a67515:tests/tool_parsers/test_hunyuan_a13b_tool_parser.py::test_hunyuan_a13b_tool_parser_extract\", \"input\": \"<tool_calls>[{\\\"name\\\": \\\"get_weather\\\", \\\"arguments\\\": {\\\"city\\\": \\\"San Francisco\\\", \\\"metric\\\": \\\"celsius\\\"}}]</tool_calls>\", \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"San Francisco\", \"metric\": \"celsius\"}}]}}"))
CASES['hunyuan_a13b'].append(json.loads("{\"id\": \"hunyuan_a13b_text_before\", \"dialect\": \"hunyuan_a13b\", \"source\": \"vllm-project/vllm@10a67515:tests/tool_parsers/test_hunyuan_a13b_tool_parser.py::test_hunyuan_a13b_tool_parser_extract\", \"input\": \"I will call the tool now. <tool_calls>[{\\\"name\\\": \\\"get_weather\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Boston\\\"}}]</tool_calls>\", \"expected\": {\"content\": \"I will call the tool now. \", \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Boston\"}}]}}"))
CASES['hunyuan_a13b'].append(json.loads("{\"id\": \"hunyuan_a13b_think_answer\", \"dialect\": \"hunyuan_a13b\", \"source\": \"chatwire: Hunyuan-A13B's reasoning block and answer tags (the format vLLM's hunyuan_a13b reasoning parser reads)\", \"input\": \"<think>\\nThe user greets me.\\n</think>\\n<answer>\\nHello! How can I help?\\n</answer>\", \"expected\": {\"content\": \"\\n\\nHello! How can I help?\\n\", \"reasoning_content\": \"\\nThe user greets me.\\n\", \"tool_calls\": []}, \"note\": \"the answer tags are removed; the text between them is kept byte-exact\"}"))
CASES['hunyuan_a13b'].append(json.loads("{\"id\": \"hunyuan_a13b_think_then_call\", \"dialect\": \"hunyuan_a13b\", \"source\": \"chatwire: a reasoning block, then the call list inside the answer\", \"input\": \"<think>Need the weather.</think>\\n<answer>\\n<tool_calls>[{\\\"name\\\": \\\"get_weather\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Boston\\\"}}]</tool_calls>\\n</answer>\", \"expected\": {\"content\": null, \"reasoning_content\": \"Need the weather.\", \"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Boston\"}}]}}"))
CASES['internlm2'].append(json.loads("{\"id\": \"internlm2_call\", \"dialect\": \"internlm2\", \"source\": \"vllm-project/vllm@06617993:tests/tool_parsers/test_internlm2_tool_parser.py::TestInternLM2ToolParser.test_single_tool_call_simple_args\", \"input\": \"<|action_start|><|plugin|>{\\\"name\\\": \\\"get_weather\\\", \\\"parameters\\\": {\\\"city\\\": \\\"Tokyo\\\"}}<|action_end|>\", \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}]}}"))
CASES['internlm2'].append(json.loads("{\"id\": \"internlm2_text_before\", \"dialect\": \"internlm2\", \"source\": \"vllm-project/vllm@06617993:tests/tool_parsers/test_internlm2_tool_parser.py::TestInternLM2ToolParser.test_surrounding_text\", \"input\": \"Let me check the weather for you. <|action_start|><|plugin|>{\\\"name\\\": \\\"get_weather\\\", \\\"parameters\\\": {\\\"city\\\": \\\"Tokyo\\\"}}<|action_end|>\", \"expected\": {\"content\": \"Let me check the weather for you. \", \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}]}}"))
CASES['internlm2'].append(json.loads("{\"id\": \"internlm2_arguments_key\", \"dialect\": \"internlm2\", \"source\": \"chatwire: vLLM's internlm parser also reads an \\\"arguments\\\" key\", \"input\": \"<|action_start|><|plugin|>{\\\"name\\\": \\\"get_weather\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Tokyo\\\"}}<|action_end|>\", \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}]}}"))
CASES['internlm2'].append(json.loads("{\"id\": \"internlm2_empty_parameters\", \"dialect\": \"internlm2\", \"source\": \"vllm-project/vllm@06617993:tests/tool_parsers/test_internlm2_tool_parser.py::TestInternLM2ToolParser.test_empty_arguments\", \"input\": \"<|action_start|><|plugin|>{\\\"name\\\": \\\"refresh\\\", \\\"parameters\\\": {}}<|action_end|>\", \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"refresh\", \"arguments\": {}}]}}"))
CASES['internlm2'].append(json.loads("{\"id\": \"internlm2_not_json\", \"dialect\": \"internlm2\", \"source\": \"vllm-project/vllm@06617993:tests/tool_parsers/test_internlm2_tool_parser.py::TestInternLM2ToolParser.test_malformed_input\", \"input\": \"<|action_start|><|plugin|>not json<|action_end|>\", \"expected\": {\"content\": \"<|action_start|><|plugin|>not json<|action_end|>\", \"reasoning_content\": null, \"tool_calls\": []}, \"warnings\": [\"not_a_call\"], \"note\": \"vLLM asserts only that it does not raise (xfail: it raises); chatwire: not a call, kept as content with a warning\"}"))
CASES['internlm2'].append(json.loads("{\"id\": \"internlm2_interpreter_is_text\", \"dialect\": \"internlm2\", \"source\": \"chatwire: only the plugin action is a call; the code interpreter action is not a function call\", \"input\": \"<|action_start|><|interpreter|>print(1)<|action_end|>\", \"expected\": {\"content\": \"<|action_start|><|interpreter|>print(1)<|action_end|>\", \"reasoning_content\": null, \"tool_calls\": []}}"))
CASES['jamba'].append(json.loads("{\"id\": \"jamba_call\", \"dialect\": \"jamba\", \"source\": \"vllm-project/vllm@045d7575:tests/tool_parsers/test_jamba_tool_parser.py::test_extract_tool_calls[single_tool]\", \"input\": \" <tool_calls>[\\n    {\\\"name\\\": \\\"get_current_weather\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Dallas\\\", \\\"state\\\": \\\"TX\\\", \\\"unit\\\": \\\"fahrenheit\\\"}}\\n]</tool_calls>\", \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"get_current_weather\", \"arguments\": {\"city\": \"Dallas\", \"state\": \"TX\", \"unit\": \"fahrenheit\"}}]}, \"note\": \"the leading space alone is no content\"}"))
CASES['jamba'].append(json.loads("{\"id\": \"jamba_text_before\", \"dialect\": \"jamba\", \"source\": \"vllm-project/vllm@045d7575:tests/tool_parsers/test_jamba_tool_parser.py::test_extract_tool_calls[single_tool_with_content]\", \"input\": \" Sure! let me call the tool for you.<tool_calls>[\\n    {\\\"name\\\": \\\"get_current_weather\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Dallas\\\", \\\"state\\\": \\\"TX\\\", \\\"unit\\\": \\\"fahrenheit\\\"}}\\n]</tool_calls>\", \"expected\": {\"content\": \" Sure! let me call the tool for you.\", \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"get_current_weather\", \"arguments\": {\"city\": \"Dallas\", \"state\": \"TX\", \"unit\": \"fahrenheit\"}}]}}"))
CASES['jamba'].append(json.loads("{\"id\": \"jamba_two_calls\", \"dialect\": \"jamba\", \"source\": \"vllm-project/vllm@045d7575:tests/tool_parsers/test_jamba_tool_parser.py::test_extract_tool_calls[parallel_tools]\", \"input\": \" <tool_calls>[\\n    {\\\"name\\\": \\\"get_current_weather\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Dallas\\\", \\\"state\\\": \\\"TX\\\", \\\"unit\\\": \\\"fahrenheit\\\"}},\\n    {\\\"name\\\": \\\"get_current_weather\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Orlando\\\", \\\"state\\\": \\\"FL\\\", \\\"unit\\\": \\\"fahrenheit\\\"}}\\n]</tool_calls>\", \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"get_current_weather\", \"arguments\": {\"city\": \"Dallas\", \"state\": \"TX\", \"unit\": \"fahrenheit\"}}, {\"name\": \"get_current_weather\", \"arguments\": {\"city\": \"Orlando\", \"state\": \"FL\", \"unit\": \"fahrenheit\"}}]}}"))
CASES['jamba'].append(json.loads("{\"id\": \"jamba_no_call\", \"dialect\": \"jamba\", \"source\": \"vllm-project/vllm@045d7575:tests/tool_parsers/test_jamba_tool_parser.py::test_extract_tool_calls_no_tools\", \"input\": \"This is a test\", \"expected\": {\"content\": \"This is a test\", \"reasoning_content\": null, \"tool_calls\": []}}"))
CASES['kimi_think'].append(json.loads("{\"id\": \"kimi_think_block\", \"dialect\": \"kimi_think\", \"source\": \"chatwire: Kimi-VL-Thinking's reasoning block\", \"input\": \"◁think▷The user asks for 6*7.◁/think▷It is 42.\", \"expected\": {\"content\": \"It is 42.\", \"reasoning_content\": \"The user asks for 6*7.\", \"tool_calls\": []}}"))
CASES['kimi_think'].append(json.loads("{\"id\": \"kimi_think_none\", \"dialect\": \"kimi_think\", \"source\": \"chatwire: without the block the answer is content\", \"input\": \"It is 42.\", \"expected\": {\"content\": \"It is 42.\", \"reasoning_content\": null, \"tool_calls\": []}}"))
CASES['kimi_think'].append(json.loads("{\"id\": \"kimi_think_unclosed\", \"dialect\": \"kimi_think\", \"source\": \"chatwire: a block the output never closes is reasoning (truncated)\", \"input\": \"◁think▷Still thinking\", \"expected\": {\"content\": null, \"reasoning_content\": \"Still thinking\", \"tool_calls\": []}}"))
CASES['kimi_think'].append(json.loads("{\"id\": \"kimi_think_prefilled\", \"dialect\": \"kimi_think\", \"options\": {\"reasoning_prefilled\": true}, \"source\": \"chatwire: the prompt opened the block\", \"input\": \"thinking◁/think▷answer\", \"expected\": {\"content\": \"answer\", \"reasoning_content\": \"thinking\", \"tool_calls\": []}}"))
CASES['kimi_think'].append(json.loads("{\"id\": \"kimi_think_ascii_tags_are_text\", \"dialect\": \"kimi_think\", \"source\": \"chatwire: <think> is not Kimi's marker, it stays text\", \"input\": \"<think>x</think>y\", \"expected\": {\"content\": \"<think>x</think>y\", \"reasoning_content\": null, \"tool_calls\": []}}"))
CASES['longcat'].append(json.loads("{\"id\": \"longcat_call\", \"dialect\": \"longcat\", \"source\": \"vllm-project/vllm@41c5903d:tests/tool_parsers/test_longcat_tool_parser.py::TestLongCatToolParser.test_single_tool_call_simple_args\", \"input\": \"<longcat_tool_call>{\\\"name\\\": \\\"get_weather\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Tokyo\\\"}}</longcat_tool_call>\", \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}]}}"))
CASES['longcat'].append(json.loads("{\"id\": \"longcat_two_calls\", \"dialect\": \"longcat\", \"source\": \"vllm-project/vllm@41c5903d:tests/tool_parsers/test_longcat_tool_parser.py::TestLongCatToolParser.test_parallel_tool_calls\", \"input\": \"<longcat_tool_call>{\\\"name\\\": \\\"get_weather\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Tokyo\\\"}}</longcat_tool_call>\\n<longcat_tool_call>{\\\"name\\\": \\\"get_time\\\", \\\"arguments\\\": {\\\"timezone\\\": \\\"Asia/Tokyo\\\"}}</longcat_tool_call>\", \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}, {\"name\": \"get_time\", \"arguments\": {\"timezone\": \"Asia/Tokyo\"}}]}}"))
CASES['longcat'].append(json.loads("{\"id\": \"longcat_text_around\", \"dialect\": \"longcat\", \"source\": \"vllm-project/vllm@41c5903d:tests/tool_parsers/test_longcat_tool_parser.py::TestLongCatToolParser.test_surrounding_text\", \"input\": \"Let me check the weather for you.\\n<longcat_tool_call>{\\\"name\\\": \\\"get_weather\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Tokyo\\\"}}</longcat_tool_call>\\nHere is the result.\", \"expected\": {\"content\": \"Let me check the weather for you.\\n\\nHere is the result.\", \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}]}, \"note\": \"the text around the call is content, byte-exact\"}"))
CASES['longcat'].append(json.loads("{\"id\": \"longcat_not_json\", \"dialect\": \"longcat\", \"source\": \"vllm-project/vllm@41c5903d:tests/tool_parsers/test_longcat_tool_parser.py::TestLongCatToolParser.test_malformed_input\", \"input\": \"Some text with <longcat_tool_call>invalid json\", \"expected\": {\"content\": \"Some text with <longcat_tool_call>invalid json\", \"reasoning_content\": null, \"tool_calls\": []}, \"warnings\": [\"not_a_call\"], \"note\": \"vLLM asserts only that it does not raise; chatwire: not a call, the text is content with a warning\"}"))
CASES['longcat'].append(json.loads("{\"id\": \"longcat_think_then_call\", \"dialect\": \"longcat\", \"source\": \"chatwire: LongCat-Flash-Thinking's <longcat_think> block (as vLLM's longcat reasoning parser reads it), then a call\", \"input\": \"<longcat_think>Need the weather.</longcat_think>\\n<longcat_tool_call>{\\\"name\\\": \\\"get_weather\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Tokyo\\\"}}</longcat_tool_call>\", \"expected\": {\"content\": null, \"reasoning_content\": \"Need the weather.\", \"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}]}}"))
CASES['minimax_m1'].append(json.loads("{\"id\": \"minimax_m1_call\", \"dialect\": \"minimax_m1\", \"source\": \"vllm-project/vllm@41c5903d:tests/tool_parsers/test_minimax_tool_parser.py::test_extract_tool_calls[single_tool_call]\", \"input\": \"<tool_calls>\\n{\\\"name\\\": \\\"get_current_weather\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Dallas\\\", \\\"state\\\": \\\"TX\\\", \\\"unit\\\": \\\"fahrenheit\\\"}}\\n</tool_calls>\", \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"get_current_weather\", \"arguments\": {\"city\": \"Dallas\", \"state\": \"TX\", \"unit\": \"fahrenheit\"}}]}}"))
CASES['minimax_m1'].append(json.loads("{\"id\": \"minimax_m1_two_calls\", \"dialect\": \"minimax_m1\", \"source\": \"vllm-project/vllm@41c5903d:tests/tool_parsers/test_minimax_tool_parser.py::test_extract_tool_calls[multiple_tool_calls]\", \"input\": \"<tool_calls>\\n{\\\"name\\\": \\\"get_current_weather\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Dallas\\\", \\\"state\\\": \\\"TX\\\", \\\"unit\\\": \\\"fahrenheit\\\"}}\\n{\\\"name\\\": \\\"get_current_weather\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Orlando\\\", \\\"state\\\": \\\"FL\\\", \\\"unit\\\": \\\"fahrenheit\\\"}}\\n</tool_calls>\", \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"get_current_weather\", \"arguments\": {\"city\": \"Dallas\", \"state\": \"TX\", \"unit\": \"fahrenheit\"}}, {\"name\": \"get_current_weather\", \"arguments\": {\"city\": \"Orlando\", \"state\": \"FL\", \"unit\": \"fahrenheit\"}}]}}"))
CASES['minimax_m1'].append(json.loads("{\"id\": \"minimax_m1_unclosed\", \"dialect\": \"minimax_m1\", \"source\": \"vllm-project/vllm@41c5903d:tests/tool_parsers/test_minimax_tool_parser.py::test_extract_tool_calls[tool_call_incomplete_tag]\", \"input\": \"<tool_calls>\\n{\\\"name\\\": \\\"get_current_weather\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Boston\\\", \\\"state\\\": \\\"MA\\\"}}\", \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"get_current_weather\", \"arguments\": {\"city\": \"Boston\", \"state\": \"MA\"}}]}}"))
CASES['minimax_m1'].append(json.loads("{\"id\": \"minimax_m1_call_in_think\", \"dialect\": \"minimax_m1\", \"source\": \"vllm-project/vllm@41c5903d:tests/tool_parsers/test_minimax_tool_parser.py::test_extract_tool_calls_with_thinking_tags\", \"input\": \"<think>I should use a tool. <tool_calls>\\n{\\\"name\\\": \\\"ignored_tool\\\", \\\"arguments\\\": {\\\"should\\\": \\\"ignore\\\"}}\\n</tool_calls></think>\\n\\nLet me help you with the weather. <tool_calls>\\n{\\\"name\\\": \\\"get_current_weather\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Miami\\\", \\\"state\\\": \\\"FL\\\", \\\"unit\\\": \\\"fahrenheit\\\"}}\\n</tool_calls>\", \"expected\": {\"content\": \"Let me help you with the weather. \", \"reasoning_content\": \"I should use a tool. <tool_calls>\\n{\\\"name\\\": \\\"ignored_tool\\\", \\\"arguments\\\": {\\\"should\\\": \\\"ignore\\\"}}\\n</tool_calls>\", \"tool_calls\": [{\"name\": \"get_current_weather\", \"arguments\": {\"city\": \"Miami\", \"state\": \"FL\", \"unit\": \"fahrenheit\"}}]}, \"note\": \"a call written inside the closed think block is reasoning; the newlines after </think> are layout (vLLM's minimax_m1 reasoning parser); vLLM's tool-parser test runs the tool parser alone (think block in its content)\"}"))
CASES['minimax_m1'].append(json.loads("{\"id\": \"minimax_m1_multiline_object\", \"dialect\": \"minimax_m1\", \"source\": \"vllm-project/vllm@41c5903d:tests/tool_parsers/test_minimax_tool_parser.py::test_extract_tool_calls_multiline_json_not_supported\", \"input\": \"<tool_calls>\\n{\\n  \\\"name\\\": \\\"get_current_weather\\\",\\n  \\\"arguments\\\": {\\n    \\\"city\\\": \\\"New York\\\",\\n    \\\"state\\\": \\\"NY\\\",\\n    \\\"unit\\\": \\\"celsius\\\"\\n  }\\n}\\n</tool_calls>\", \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"get_current_weather\", \"arguments\": {\"city\": \"New York\", \"state\": \"NY\", \"unit\": \"celsius\"}}]}, \"note\": \"vLLM reads one object per line and reports no call here (a limitation its test states); chatwire reads the JSON object whatever its layout\"}"))
CASES['minimax_m1'].append(json.loads("{\"id\": \"minimax_m1_bad_line_between_calls\", \"dialect\": \"minimax_m1\", \"source\": \"chatwire: a line of the section that is not a call object is content (not_a_call warning) and the calls after it are read (vLLM's test_extract_tool_calls_invalid_json)\", \"input\": \"<tool_calls>\\n{\\\"name\\\": \\\"a\\\", \\\"arguments\\\": {\\\"x\\\": 1}}\\n{invalid json here}\\n{\\\"name\\\": \\\"b\\\", \\\"arguments\\\": {}}\\n</tool_calls>\", \"expected\": {\"content\": \"{invalid json here}\\n\", \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"a\", \"arguments\": {\"x\": 1}}, {\"name\": \"b\", \"arguments\": {}}]}}"))
CASES['minimax_m1'].append(json.loads("{\"id\": \"minimax_m1_bad_last_line\", \"dialect\": \"minimax_m1\", \"source\": \"chatwire: a bad last element is content up to the close marker, which is removed\", \"input\": \"<tool_calls>\\n{\\\"name\\\": \\\"a\\\", \\\"arguments\\\": {\\\"x\\\": 1}}\\n{\\\"arguments\\\": {}}\\n</tool_calls>\", \"expected\": {\"content\": \"{\\\"arguments\\\": {}}\\n\", \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"a\", \"arguments\": {\"x\": 1}}]}}"))
CASES['minimax_m1'].append(json.loads("{\"id\": \"minimax_m1_reasoning_newlines\", \"dialect\": \"minimax_m1\", \"source\": \"chatwire: the newlines at the start and end of MiniMax-M1's reasoning block and after it are layout; newlines inside stay\", \"input\": \"<think>\\nA\\n\\nB\\n\\n</think>\\n\\nC\\n\", \"expected\": {\"content\": \"C\\n\", \"reasoning_content\": \"A\\n\\nB\", \"tool_calls\": []}}"))
CASES['phi4_mini'].append(json.loads("{\"id\": \"phi4_mini_call\", \"dialect\": \"phi4_mini\", \"source\": \"vllm-project/vllm@2471a1c1:tests/tool_parsers/test_phi4mini_tool_parser.py::TestPhi4MiniToolParser.test_single_tool_call_simple_args\", \"input\": \"functools[{\\\"name\\\": \\\"get_weather\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Tokyo\\\"}}]\", \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}]}}"))
CASES['phi4_mini'].append(json.loads("{\"id\": \"phi4_mini_two_calls\", \"dialect\": \"phi4_mini\", \"source\": \"vllm-project/vllm@2471a1c1:tests/tool_parsers/test_phi4mini_tool_parser.py::TestPhi4MiniToolParser.test_parallel_tool_calls\", \"input\": \"functools[\\n  {\\\"name\\\": \\\"get_weather\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Tokyo\\\"}},\\n  {\\\"name\\\": \\\"get_time\\\", \\\"arguments\\\": {\\\"timezone\\\": \\\"Asia/Tokyo\\\"}}\\n]\", \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}, {\"name\": \"get_time\", \"arguments\": {\"timezone\": \"Asia/Tokyo\"}}]}}"))
CASES['phi4_mini'].append(json.loads("{\"id\": \"phi4_mini_text_around\", \"dialect\": \"phi4_mini\", \"source\": \"vllm-project/vllm@2471a1c1:tests/tool_parsers/test_phi4mini_tool_parser.py::TestPhi4MiniToolParser.test_surrounding_text\", \"input\": \"Let me check the weather for you.\\nfunctools[{\\\"name\\\": \\\"get_weather\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Tokyo\\\"}}]\\nWould you like to know more?\", \"expected\": {\"content\": \"Let me check the weather for you.\\n\\nWould you like to know more?\", \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}]}, \"note\": \"vLLM drops the text around the list (content None); chatwire keeps it\"}"))
CASES['phi4_mini'].append(json.loads("{\"id\": \"phi4_mini_parameters_key\", \"dialect\": \"phi4_mini\", \"source\": \"chatwire: vLLM's phi4_mini_json parser also reads a \\\"parameters\\\" key\", \"input\": \"functools[{\\\"name\\\": \\\"get_weather\\\", \\\"parameters\\\": {\\\"city\\\": \\\"Tokyo\\\"}}]\", \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}]}}"))
CASES['phi4_mini'].append(json.loads("{\"id\": \"phi4_mini_word_in_prose\", \"dialect\": \"phi4_mini\", \"source\": \"chatwire: the word functools in prose is content without a warning: the marker is `functools[`, the list's '[' included\", \"input\": \"Use functools.partial to bind the argument.\", \"expected\": {\"content\": \"Use functools.partial to bind the argument.\", \"reasoning_content\": null, \"tool_calls\": []}, \"warnings\": []}"))
CASES['phi4_mini'].append(json.loads("{\"id\": \"phi4_mini_empty_list\", \"dialect\": \"phi4_mini\", \"source\": \"chatwire: an empty call list is no call (as in the other JSON dialects)\", \"input\": \"functools[]\", \"expected\": {\"content\": null, \"reasoning_content\": null, \"tool_calls\": []}}"))
