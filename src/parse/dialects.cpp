// The dialect table: one row per model family's output syntax. To add a dialect, add a row here
// (markers and flags of an existing CallSyntax) and a data/parse/<dialect>.jsonl file of cases.
#include "parse/internal.hpp"

namespace chatwire::parse {

namespace {

Dialect think_tags(Dialect d) {
  d.think_open = "<think>";
  d.think_close = "</think>";
  return d;
}

// Marker pairs more than one dialect writes.
constexpr Section kFunctionTag{"<function=", "</function>"};  // <function=name>..</function>
constexpr Section kParameterTag{"<parameter=", "</parameter>"};
constexpr Section kDeepSeekSection{"<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"};
constexpr Section kDeepSeekCall{"<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>"};
constexpr Section kDsmlInvoke{"<｜DSML｜invoke", "</｜DSML｜invoke>"};  // DeepSeek V3.2, V4
constexpr Section kDsmlParameter{"<｜DSML｜parameter", "</｜DSML｜parameter>"};

// XML calls whose function and parameter names end at '>' (`<function=f>`, `<invoke name="f">`):
// `section`, then calls `call.open name>` .. `call.close`, each parameter
// `param.open name>value param.close`.
Dialect xml_params(Dialect d, Section section, Section call, Section param) {
  d.syntax = CallSyntax::kXmlParams;
  d.section_open = section.open;
  d.section_close = section.close;
  d.call_open = call.open;
  d.call_close = call.close;
  d.name_end = {">"};
  d.param_open = param.open;
  d.param_name_end = ">";
  d.value_close = param.close;
  return d;
}

// GLM's argument pairs, `<arg_key>k</arg_key><arg_value>v</arg_value>` after the function name
// in `call` (`<tool_call>..</tool_call>`); a value the schema does not type is JSON when it parses.
// Calls as a name, then key and value elements: `call.open name key.open k key.close
// value.open v value.close .. call.close` (a value with no opening element: value.open "").
Dialect key_value_elements(Dialect d, Section call, Section key, Section value) {
  d.syntax = CallSyntax::kXmlParams;
  d.call_open = call.open;
  d.call_close = call.close;
  d.name_stop = {key.open, call.close};
  d.param_open = key.open;
  d.param_name_end = key.close;
  d.value_open = value.open;
  d.value_close = value.close;
  return d;
}

// GLM's key/value elements in `call`.
Dialect arg_pairs(Dialect d, Section call = {"<tool_call>", "</tool_call>"}) {
  d = key_value_elements(d, call, {"<arg_key>", "</arg_key>"}, {"<arg_value>", "</arg_value>"});
  d.untyped = UntypedValues::kJsonGuess;
  return d;
}

// Header + JSON calls: `section`, then calls `call.open header<header_end>{..} call.close`.
Dialect header_json(Dialect d, Section section, Section call, std::string_view header_end) {
  d.syntax = CallSyntax::kHeaderJson;
  d.section_open = section.open;
  d.section_close = section.close;
  d.call_open = call.open;
  d.call_close = call.close;
  d.header_end = {header_end};
  return d;
}

std::vector<Dialect> build_table() {
  std::vector<Dialect> t;

  {  // Reasoning only. Starts in reasoning, as vLLM's reasoning parsers assume thinking is on.
    Dialect d = think_tags({});
    d.name = "think";
    d.summary = "<think>reasoning</think> then content; no tool calls";
    d.starts_in_reasoning = true;
    t.push_back(d);
    // Kimi's thinking models before K2 (Kimi-VL-Thinking, k1.5): the same block written with
    // ◁think▷..◁/think▷; no tool calls. An answer without the block is content (SGLang's kimi
    // detector does not assume thinking).
    d.name = "kimi_think";
    d.summary = "◁think▷reasoning◁/think▷ then content; no tool calls (Kimi-VL-Thinking)";
    d.think_open = "◁think▷";
    d.think_close = "◁/think▷";
    d.starts_in_reasoning = false;
    t.push_back(d);
  }
  {
    Dialect d = think_tags({});
    d.name = "hermes";
    d.summary =
        "<tool_call>{\"name\", \"arguments\"}</tool_call> (Hermes, Qwen2.5/3, Granite 4, EXAONE, "
        "Ling)";
    d.syntax = CallSyntax::kJsonObject;
    d.sections = {{"<tool_call>", "</tool_call>"}};
    d.args_keys = {"arguments", "parameters"};
    d.loose_sections = {{"<tool>", "</tool>"},
                        {"<tools>", "</tools>"},
                        {"<response>", "</response>"},
                        {"<json>", "</json>"},
                        {"<JSON>", "</JSON>"},
                        {"<xml>", "</xml>"},
                        {"<function_call>", "</function_call>"},
                        {"<function=", "</function>"},
                        {"<function name=", "</function>"},
                        {"```json", "```"},
                        {"```xml", "```"},
                        {"```", "```"}};
    d.loose_bare = true;
    // The turn ends its model's templates write after an assistant turn (ChatML's <|im_end|>
    // for Qwen and Hermes, Granite 4's <|end_of_text|>, EXAONE 4's [|endofturn|]): left in the
    // text by a backend that keeps special tokens, they end the output.
    d.end_tokens = {"<|im_end|>", "<|end_of_text|>", "[|endofturn|]"};
    t.push_back(d);
  }
  {
    Dialect d =
        xml_params(think_tags({}), {"<tool_call>", "</tool_call>"}, kFunctionTag, kParameterTag);
    d.name = "qwen3_coder";
    d.summary =
        "<tool_call><function=name><parameter=p>v</parameter></function></tool_call> (Qwen3-Coder, "
        "Qwen3.5)";
    d.framing = ValueFraming::kStripOneNewline;
    d.value_close_checked = true;
    // A call quoted in a Markdown code block or span is text (vLLM's Qwen3 parser engine masks
    // fenced examples, tests/parser/engine/test_qwen3_fenced_examples.py).
    d.markdown_literals = true;
    d.attr_headers = true;          // `<function name="f">` (vLLM's qwen3_xml parser)
    d.end_tokens = {"<|im_end|>"};  // the turn end its templates write, ChatML's
    t.push_back(d);
    d.markdown_literals = false;
    d.attr_headers = false;
    // Step-3.5's turn end is qwen3_coder's <|im_end|> too (llama.cpp's StepFun3.5-Flash and
    // 3.7-Flash templates write it), kept from that row.
    // Step-3.5-Flash: Qwen3-Coder's calls; its prompt opens the reasoning block, which it closes
    // as `..\n</think>\n` (vLLM's step3p5 parsers).
    d.name = "step3p5";
    d.summary =
        "reasoning (opened by the prompt) ..\\n</think>\\n, then Qwen3-Coder's <tool_call> calls "
        "(Step-3.5)";
    d.starts_in_reasoning = true;
    d.think_close_newline = true;
    d.repairs_tag_slips = true;  // as SGLang's step3p5 detector
    d.name_stop = {"\n"};        // `<function=f\n`: a name holds no newline
    t.push_back(d);
  }
  {
    Dialect d = think_tags({});
    d.name = "llama3_json";
    d.summary =
        "bare {\"name\", \"parameters\"} objects (';'-separated), <|python_tag|> builtin calls "
        "(Llama 3.1-3.3)";
    d.syntax = CallSyntax::kJsonObject;
    d.sections = {{"<|python_tag|>", ""}};
    d.bare_json = true;
    d.bare_anywhere = true;
    d.bare_separators = true;
    d.builtin_calls = true;
    d.args_keys = {"parameters", "arguments"};
    d.args_required = true;
    d.python_dicts = true;
    // Llama 3.1's eos set (its generation config): the template ends a turn of calls with
    // <|eom_id|> and any other with <|eot_id|>. Left in the text by a backend that keeps special
    // tokens, they end the output; text after one is reported, not joined to the message.
    d.end_tokens = {"<|eom_id|>", "<|eot_id|>", "<|end_of_text|>", "<|eom|>",
                    "<|eot|>"};  // and Llama 4's (vLLM's llama4_json template)
    t.push_back(d);
  }
  {
    Dialect d = think_tags({});
    d.name = "pythonic";
    d.summary =
        "[f(a=1), g(b='x')] bare, in <|python_start|>..<|python_end|> (Llama 4) or "
        "<|tool_call_start|>..<|tool_call_end|> (LFM2)";
    d.syntax = CallSyntax::kPythonic;
    d.pythonic_bare = true;
    d.bare_anywhere = true;
    d.pythonic_sections = {{"<|python_start|>", "<|python_end|>"},
                           {"<|tool_call_start|>", "<|tool_call_end|>"}};
    // Llama 4's turn ends (its template writes <|eom|> after calls, <|eot|> otherwise): they end
    // the output, as llama3_json's do; so do LFM2's ChatML turn end and Llama 3.2's (vLLM's
    // llama3.2_pythonic and ToolACE templates end a turn with <|eot_id|>).
    d.end_tokens = {"<|eom|>", "<|eot|>", "<|im_end|>", "<|eot_id|>", "<|eom_id|>"};
    d.drops_unknown_tools = true;  // SGLang's pythonic and LFM2 detectors
    t.push_back(d);
  }
  {
    Dialect d = think_tags({});
    d.name = "olmo3";
    d.summary = "<function_calls>f(a=1)\\ng(b=2)</function_calls> (Olmo 3)";
    d.syntax = CallSyntax::kPythonic;
    d.pythonic_sections = {{"<function_calls>", "</function_calls>"}};
    d.end_tokens = {"<|im_end|>"};  // its template's turn end (data/templates/trl--olmo3.jinja)
    t.push_back(d);
  }
  {
    Dialect d;
    d.name = "mistral_v03";
    d.summary = "[TOOL_CALLS] [{\"name\", \"arguments\", \"id\"?}] (Mistral 7B v0.3, Nemo)";
    d.syntax = CallSyntax::kJsonObject;
    d.sections = {{"[TOOL_CALLS]", ""}};
    d.id_keys = {"id"};
    d.header_end = {"[ARGS]"};  // the v11 form after the same marker
    d.header_recovery = true;
    d.id_marker = "[CALL_ID]";
    d.end_tokens = {"</s>"};  // Mistral's eos token: the end of the output
    t.push_back(d);
  }
  {
    Dialect d;
    d.name = "mistral_v11";
    d.summary =
        "[TOOL_CALLS]name[CALL_ID]id[ARGS]{..} or [TOOL_CALLS]name[ARGS]{..}; [THINK]..[/THINK] "
        "(Mistral Small 3.2, Magistral, Devstral)";
    d.think_open = "[THINK]";
    d.think_close = "[/THINK]";
    d.stray_close_dropped = true;  // a control token, as vLLM's Mistral parsers drop it
    d = header_json(d, {}, {"[TOOL_CALLS]", ""}, "[ARGS]");
    d.id_marker = "[CALL_ID]";
    d.json_list_calls = true;  // the v0.3 form after the same marker
    d.header_recovery = true;
    d.id_keys = {"id"};
    d.end_tokens = {"</s>"};
    t.push_back(d);
  }
  {
    Dialect d;
    d.name = "harmony";
    d.summary = "gpt-oss channels: analysis = reasoning, final = content, to=functions.x = call";
    d.syntax = CallSyntax::kHarmony;
    d.dropped = {"<|end|>", "<|return|>", "<|call|>", "<|message|>"};
    t.push_back(d);
  }
  {
    Dialect d = xml_params(think_tags({}), {"<minimax:tool_call>", "</minimax:tool_call>"},
                           {"<invoke", "</invoke>"}, {"<parameter", "</parameter>"});
    d.name = "minimax_m2";
    d.summary =
        "<minimax:tool_call><invoke name=\"f\"><parameter "
        "name=\"p\">v</parameter></invoke></minimax:tool_call>";
    // The template writes a value between its tags with no layout, so what is there is the value
    // (vLLM's minimax_m2 parser keeps " hi " so since 2026).
    d.framing = ValueFraming::kVerbatim;
    d.drops_unknown_tools = true;  // SGLang's MiniMax M2 detector
    d.end_tokens = {"[e~["};       // MiniMax-M2's eos token, which its template writes after a turn
    t.push_back(d);
  }
  {  // Muse Glimmer: harmony-like messages routed by recipient, no channels, ATEM XML calls.
    Dialect d =
        xml_params({}, {"<atem:function_calls>", "</atem:function_calls>"},
                   {"<atem:invoke", "</atem:invoke>"}, {"<atem:parameter", "</atem:parameter>"});
    d.name = "glimmer";
    d.summary =
        "messages <|start|>assistant to=R<|message|>..<|eom|>: to=self reasoning, to=user the "
        "answer, to a tool <atem:function_calls><atem:invoke name=\"f\"><atem:parameter "
        "name=\"k\">v</atem:parameter></atem:invoke></atem:function_calls>; <|eot|> ends the "
        "output (Muse Glimmer)";
    d.untyped = UntypedValues::kJsonGuess;  // a value the schema does not type: JSON, else text
    // The generation prompt ends with `<|start|>assistant`: the output begins with the recipient.
    d.recipient_open = "to=";
    d.recipient_close = "<|message|>";
    d.recipient_header = "<|start|>";  // then the role, ` to=R` and <|message|>
    d.reasoning_recipient = "self";
    d.answer_recipient = "user";
    d.call_ends_reasoning = false;
    d.namespaced_names = true;
    d.dropped = {"<|eom|>"};
    d.end_tokens = {"<|eot|>", "<|end_of_text|>"};
    t.push_back(d);
  }
  {
    Dialect d = xml_params(think_tags({}), {"<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"},
                           {"<steptml:invoke", "</steptml:invoke>"},
                           {"<steptml:parameter", "</steptml:parameter>"});
    d.name = "step3";
    d.summary =
        "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke "
        "name=\"f\"><steptml:parameter name=\"p\">v</steptml:parameter></steptml:invoke>...";
    d.noise = {"<｜tool_call_begin｜>", "function<｜tool_sep｜>", "<｜tool_sep｜>",
               "<｜tool_call_end｜>"};
    d.noise_call_end = "<｜tool_call_end｜>";
    d.untyped = UntypedValues::kJsonGuess;
    d.drops_unknown_tools = true;  // SGLang's Step3 detector
    t.push_back(d);
  }
  {
    Dialect d;
    d.name = "seed_oss";
    d.summary =
        "<seed:think>..</seed:think>, "
        "<seed:tool_call><function=f><parameter=p>v</parameter></function></seed:tool_call>";
    d.think_open = "<seed:think>";
    d.think_close = "</seed:think>";
    d.call_ends_reasoning = false;  // Seed quotes the call format while thinking
    d = xml_params(d, {"<seed:tool_call>", "</seed:tool_call>"}, kFunctionTag, kParameterTag);
    // One leading and one trailing newline of a value are layout (vLLM's seed_oss parser, adapted
    // from qwen3_coder's, removes them; llama.cpp's seed-oss parser trims the value).
    d.framing = ValueFraming::kStripOneNewline;
    d.end_tokens = {"<seed:eos>"};
    t.push_back(d);
  }
  {
    Dialect d = arg_pairs(think_tags({}));
    d.name = "glm45";
    d.summary =
        "<tool_call>name\\n<arg_key>k</arg_key>\\n<arg_value>v</arg_value></tool_call> "
        "(GLM-4.5/4.6/4.7)";
    // A literal backslash-n ends the name too: a block written JSON-escaped (escaped_layout).
    d.name_end = {"\n", "\\n"};
    d.escaped_layout = true;
    // GLM's templates write a string value as it is, so a value may quote the markers: an
    // </arg_value> ends it only where an <arg_key> (of any name), </tool_call> or the end
    // follows (as vLLM's GLM-4.7 parser engine decides).
    d.value_close_checked = true;
    d.value_close_any_param = true;
    {
      // GLM's end-of-generation tokens (its generation config's eos set), left in the text by a
      // backend that keeps special tokens, end the output: the model writes <|observation|> right
      // after its calls (TRL's GLM-4.5 training template puts it in the assistant's span) and
      // <|user|> after an answer. The rows built from this one below have their own.
      Dialect glm = d;
      glm.end_tokens = {"<|observation|>", "<|user|>", "<|endoftext|>"};
      t.push_back(glm);
    }
    // Ling 3 (inclusionAI): GLM-4.5's calls and <think>; its end-of-turn token <|role_end|>, left
    // in the text by a backend that keeps special tokens, ends the output (llama.cpp's Ling 3
    // parser removes it).
    Dialect ling = d;
    ling.name = "ling3";
    ling.summary =
        "<tool_call>name\\n<arg_key>k</arg_key>\\n<arg_value>v</arg_value></tool_call>, "
        "<think>; <|role_end|> ends the output (Ling 3)";
    ling.end_tokens = {"<|role_end|>"};
    // HyperCLOVAX SEED Think: GLM's markers with JSON-written values, and, where a backend forces
    // tool_choice=required with a JSON schema, a bare [{"name", "parameters"}] list or object
    // (vLLM's hyperclovax_seed_think parser reads both). Its template writes `</think>\n\n`.
    d.name = "hyperclovax";
    d.summary =
        "<tool_call>name\\n<arg_key>k</arg_key>\\n<arg_value>JSON</arg_value></tool_call>, or a "
        "bare [{\"name\", \"parameters\"}] list (HyperCLOVAX SEED Think)";
    d.framing = ValueFraming::kJson;
    d.bare_json = true;
    d.args_keys = {"parameters", "arguments"};
    d.newlines_after_think_close = true;
    d.dropped = {"<|im_end|>"};
    t.push_back(d);
    t.push_back(ling);
  }
  {
    Dialect d = think_tags({});
    d.name = "kimi_k2";
    d.summary =
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{."
        ".}<|tool_call_end|>...";
    d = header_json(d, {"<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"},
                    {"<|tool_call_begin|>", "<|tool_call_end|>"}, "<|tool_call_argument_begin|>");
    d.id_in_header = true;
    d.end_tokens = {"<|im_end|>"};  // Kimi K2's eos token, written after every turn
    t.push_back(d);
  }
  {
    Dialect d = think_tags({});
    d.name = "deepseek_r1";
    d.summary =
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\\n```json\\n{..}\\n```<"
        "｜tool▁call▁end｜>... (DeepSeek V3, R1); starts in reasoning";
    d.starts_in_reasoning = true;
    d = header_json(d, kDeepSeekSection, kDeepSeekCall, "\n");
    d.type_separator = "<｜tool▁sep｜>";
    d.fenced_args = true;
    d.end_tokens = {"<｜end▁of▁sentence｜>"};
    t.push_back(d);
  }
  {
    Dialect d = think_tags({});
    d.name = "deepseek_v31";
    d.summary =
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{..}<｜tool▁call▁end｜>... "
        "(DeepSeek V3.1)";
    d = header_json(d, kDeepSeekSection, kDeepSeekCall, "<｜tool▁sep｜>");
    d.end_tokens = {"<｜end▁of▁sentence｜>"};
    t.push_back(d);
  }
  {
    Dialect d = think_tags({});
    d.name = "deepseek_v32";
    d.summary =
        "<｜DSML｜function_calls><｜DSML｜invoke name=\"f\"><｜DSML｜parameter name=\"p\" "
        "string=\"true\">v</｜DSML｜parameter>... (DeepSeek V3.2)";
    d = xml_params(d, {"<｜DSML｜function_calls>", "</｜DSML｜function_calls>"}, kDsmlInvoke,
                   kDsmlParameter);
    d.end_tokens = {"<｜end▁of▁sentence｜>"};
    // DeepSeek's encoder writes the content, a blank line, then the block: the blank line is the
    // format's (the encoder's own parser and SGLang's detector strip it).
    d.layout_before_calls = "\n\n";
    t.push_back(d);
  }
  {  // DeepSeek V4: V3.2's DSML with the block named tool_calls.
    Dialect d = think_tags({});
    d.name = "deepseek_v4";
    d.summary =
        "<｜DSML｜tool_calls><｜DSML｜invoke name=\"f\"><｜DSML｜parameter name=\"p\" "
        "string=\"true\">v</｜DSML｜parameter>... (DeepSeek V4)";
    d = xml_params(d, {"<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>"}, kDsmlInvoke,
                   kDsmlParameter);
    d.damaged_marker_prefix = "<｜DSML｜";
    d.markdown_literals = true;
    // The newlines before a DSML block that ends the reasoning are layout (vLLM's DeepSeek V4
    // parser engine strips them).
    d.reasoning_newlines_trimmed = true;
    d.end_tokens = {"<｜end▁of▁sentence｜>"};
    d.layout_before_calls = "\n\n";  // the encoder's blank line before the block, as V3.2's
    t.push_back(d);
    // DeepSeek V4.1: V4's DSML with every tag name spaced and the block named ` calls`, as
    // SGLang's deepseekv41 detector and vLLM's deepseek_v41 parser read it; V4's unspaced tags
    // are text here.
    Dialect v41 = xml_params(d, {"<｜DSML｜ calls>", "</｜DSML｜ calls>"},
                             {"<｜DSML｜ invoke", "</｜DSML｜ invoke>"},
                             {"<｜DSML｜ parameter", "</｜DSML｜ parameter>"});
    v41.name = "deepseek_v41";
    v41.summary =
        "<｜DSML｜ calls><｜DSML｜ invoke name=\"f\"><｜DSML｜ parameter name=\"p\" "
        "string=\"true\">v</｜DSML｜ parameter>... (DeepSeek V4.1)";
    t.push_back(v41);
  }
  {
    Dialect d = think_tags({});
    d.name = "nemotron";
    d.summary =
        "<TOOLCALL>[{\"name\", \"arguments\"}]</TOOLCALL>; <SPECIAL_12> ends the output "
        "(Nemotron Nano v2)";
    d.syntax = CallSyntax::kJsonObject;
    d.sections = {{"<TOOLCALL>", "</TOOLCALL>"}};
    // Its end-of-turn token (the template closes every turn with it), left in the text by a
    // backend that keeps special tokens, ends the output (llama.cpp's Nemotron v2 parser); so does
    // Llama 3's <|eot_id|>, the turn end of the Llama-based Nemotron Super 49B v1.5's template.
    d.end_tokens = {"<SPECIAL_12>", "<|eot_id|>"};
    t.push_back(d);
  }
  {
    Dialect d = think_tags({});
    d.name = "granite";
    d.summary = "<|tool_call|>[{\"name\", \"arguments\"}] (Granite 3.x)";
    d.syntax = CallSyntax::kJsonObject;
    // Granite 3.1 writes its marker as the text `<tool_call>` (vLLM's granite parser reads both).
    d.sections = {{"<|tool_call|>", ""}, {"<tool_call>", ""}};
    d.dropped = {"<response>", "</response>"};
    // Granite's thinking models write `</think>\n`: the references agree the newlines are not
    // part of the answer (vLLM's granite_thinking parser, SGLang's Granite parity tests).
    d.newlines_after_think_close = true;
    d.end_tokens = {"<|end_of_text|>"};  // Granite's eos token, its templates' turn end
    t.push_back(d);
    // Granite 3.3 and 4.0 served with vLLM's example tool template write Python calls, one per
    // line, among prose lines (vLLM's granite_pythonic parser); their own lists are read too.
    Dialect lines = d;
    lines.name = "granite_pythonic";
    lines.summary =
        "get_weather(city=\"Paris\") alone on its line, one call per line, among prose; "
        "<|tool_call|>[..] too (Granite 3.3/4.0 as vLLM's granite_pythonic parser reads them)";
    lines.pythonic_lines = true;
    t.push_back(lines);
    // Granite 3.2 thinks in plain text: its template's thinking prompt asks for the two headers
    // below, which vLLM's granite reasoning parser reads. A dialect of its own, chosen by name,
    // so that the words in a Granite 3.3 answer stay words.
    d.name = "granite_3_2";
    d.summary =
        "Here is (or Here's) my thought process:..Here is my response:.., <|tool_call|>[{\"name\", "
        "\"arguments\"}] (Granite 3.2)";
    d.think_open = "Here is my thought process:";
    d.think_close = "Here is my response:";
    // Granite 3.2 also writes "Here's" (IBM's granite-io recordings of granite3.2:2b have it);
    // vLLM's granite parser takes either word in either header.
    d.think_alternates = {{"Here's my thought process:", "Here's my response:"}};
    d.newlines_after_think_close = false;  // vLLM's granite parser keeps what follows the header
    t.push_back(d);
  }
  {
    Dialect d;
    d.name = "functionary_v3_1";
    d.summary = "<function=name>{..}</function> (Functionary v3.1, Llama 3.1 style)";
    d = header_json(d, {}, kFunctionTag, ">");
    // Its template ends a turn of calls with <|eom_id|>, any other with <|eot_id|>: the end.
    d.end_tokens = {"<|eom_id|>", "<|eot_id|>"};
    t.push_back(d);
  }
  {
    Dialect d;
    d.name = "functionary_v3_2";
    d.summary =
        ">>>name\\n{..} (first header without >>>; 'all' = content; python\\ncode is "
        "{\"code\"}) (Functionary v3.2)";
    d = header_json(d, {}, {">>>", ""}, "\n");
    d.header_at_start = true;
    d.content_name = "all";
    // Its python tool takes raw code, not JSON (the code_interpreter convention): {"code": ..}.
    d.raw_args_key = "code";
    d.raw_args_function = "python";
    d.end_tokens = {"<|eot_id|>"};  // its template ends every assistant turn with it
    t.push_back(d);
  }
  {
    Dialect d;
    d.name = "command_r7b";
    d.summary =
        "<|START_THINKING|>..<|END_THINKING|>, <|START_ACTION|>[{\"tool_call_id\", \"tool_name\", "
        "\"parameters\"}]<|END_ACTION|>";
    d.think_open = "<|START_THINKING|>";
    d.think_close = "<|END_THINKING|>";
    d.reasoning_lead_trimmed = true;  // ` i will ..`: Cohere's output filter strips the space
    d.syntax = CallSyntax::kJsonObject;
    d.sections = {{"<|START_ACTION|>", "<|END_ACTION|>"}};
    d.name_keys = {"tool_name", "name"};
    d.args_keys = {"parameters", "arguments"};
    d.id_keys = {"tool_call_id"};
    // Command R7B frames its answer with START/END_RESPONSE; Command A Reasoning (Cohere's
    // Command 4 templates) with START/END_TEXT.
    d.dropped = {"<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|START_TEXT|>", "<|END_TEXT|>"};
    // Cohere's eos token: left in the text by a backend that keeps special tokens, it ends the
    // output (text after it is reported, not read as more of the answer).
    d.end_tokens = {"<|END_OF_TURN_TOKEN|>"};
    t.push_back(d);
  }
  {
    Dialect d = think_tags({});
    d.name = "xlam";
    d.summary =
        "bare [{\"name\", \"arguments\"}] list, also in ```json fences, after [TOOL_CALLS] or in "
        "<tool_call> (xLAM)";
    d.syntax = CallSyntax::kJsonObject;
    d.sections = {{"```json", "```"}, {"[TOOL_CALLS]", ""}, {"<tool_call>", "</tool_call>"}};
    d.bare_json = true;
    d.args_required = true;
    // SGLang's JSON-array parser (its xLAM reading) takes "parameters" for "arguments".
    d.args_keys = {"arguments", "parameters"};
    d.end_tokens = {"<|eot_id|>", "<|im_end|>"};  // its Llama and Qwen templates' turn ends
    t.push_back(d);
  }
  {  // LongCat-Flash: Hermes' JSON call object in LongCat's own tags (vLLM's longcat parser), or
     // GLM's key/value elements in them, as Meituan's own example trajectory for
     // LongCat-Flash-Thinking-2601 writes its calls (examples/search_tool_trajectory.txt); the
     // thinking models' block is <longcat_think>..</longcat_think> (vLLM's longcat reasoning
     // parser: an output without it is content).
    Dialect d;
    d.name = "longcat";
    d.summary =
        "<longcat_think>..</longcat_think>, <longcat_tool_call>{\"name\", \"arguments\"} or "
        "name\\n<longcat_arg_key>k</longcat_arg_key>\\n<longcat_arg_value>v</longcat_arg_value>.."
        "</longcat_tool_call>; </longcat_s> ends the output (LongCat-Flash)";
    d.think_open = "<longcat_think>";
    d.think_close = "</longcat_think>";
    d = key_value_elements(d, {"<longcat_tool_call>", "</longcat_tool_call>"},
                           {"<longcat_arg_key>", "</longcat_arg_key>"},
                           {"<longcat_arg_value>", "</longcat_arg_value>"});
    d.name_end = {"\n"};
    d.untyped = UntypedValues::kJsonGuess;
    d.json_call_body = true;  // <longcat_tool_call>{"name", "arguments"}</longcat_tool_call>
    // The end of the turn, which the vendor's examples show in the text even with
    // skip_special_tokens: the output ends there.
    d.end_tokens = {"</longcat_s>"};
    t.push_back(d);
  }
  {  // InternLM2/2.5: one call object after the plugin action header (vLLM's internlm parser).
    // Intern-S1 thinks in <think>..</think> first (vLLM's intern_s1 reasoning parser).
    Dialect d = think_tags({});
    d.name = "internlm2";
    d.summary =
        "<|action_start|><|plugin|>{\"name\", \"parameters\"}<|action_end|> (InternLM2, "
        "InternLM2.5); <think> (Intern-S1)";
    d.syntax = CallSyntax::kJsonObject;
    // Intern-S1 may write a space or a newline between the two tokens (vLLM's intern_s1 parser).
    d.sections = {{"<|action_start|><|plugin|>", "<|action_end|>"},
                  {"<|action_start|> <|plugin|>", "<|action_end|>"},
                  {"<|action_start|>\n<|plugin|>", "<|action_end|>"}};
    d.args_keys = {"parameters", "arguments"};
    d.drops_unknown_tools = true;   // vLLM's internlm2 parser
    d.end_tokens = {"<|im_end|>"};  // its template's turn end
    t.push_back(d);
  }
  {  // Phi-4-mini: the word `functools` before a JSON call list (vLLM's phi4_mini_json parser).
    Dialect d;
    d.name = "phi4_mini";
    d.summary = "functools[{\"name\", \"arguments\"}] (Phi-4-mini)";
    d.syntax = CallSyntax::kJsonObject;
    // The list's '[' is part of the marker, so the word in prose (`functools.partial`) is text.
    d.sections = {{"functools[", ""}};
    d.args_keys = {"arguments", "parameters"};
    d.end_tokens = {"<|end|>"};  // the turn end Phi-4-mini's templates write
    t.push_back(d);
  }
  {  // Jamba 1.5/1.6: a JSON call list between <tool_calls> tokens (vLLM's jamba parser).
    Dialect d;
    d.name = "jamba";
    d.summary = "<tool_calls>[{\"name\", \"arguments\"}]</tool_calls> (AI21 Jamba)";
    d.syntax = CallSyntax::kJsonObject;
    d.sections = {{"<tool_calls>", "</tool_calls>"}};
    d.end_tokens = {"<|eom|>"};  // Jamba's turn end, which its templates write
    t.push_back(d);
  }
  {  // Apriel 1.6 Thinker: Jamba's call list after a reasoning block its prompt opens with the
     // plain text `Here are my reasoning steps:\n` and the model closes with
     // `\n[BEGIN FINAL RESPONSE]\n` (its template writes both; llama.cpp reads it so).
    Dialect d;
    d.name = "apriel16";
    d.summary =
        "reasoning (opened by the prompt) ..\\n[BEGIN FINAL RESPONSE]\\n, then "
        "<tool_calls>[{\"name\", "
        "\"arguments\"}]</tool_calls>; <|end|> ends the output (Apriel 1.6)";
    d.syntax = CallSyntax::kJsonObject;
    d.sections = {{"<tool_calls>", "</tool_calls>"}};
    d.think_open = "Here are my reasoning steps:\n";
    d.think_close = "[BEGIN FINAL RESPONSE]";
    d.starts_in_reasoning = true;
    d.think_close_newline = true;
    d.end_tokens = {"<|end|>"};
    t.push_back(d);
  }
  {  // Hunyuan-A13B: Jamba's call list; <think>..</think> then the answer in <answer>..</answer>.
    Dialect d = think_tags({});
    d.name = "hunyuan_a13b";
    d.summary =
        "<think>..</think><answer>..</answer>, <tool_calls>[{\"name\", "
        "\"arguments\"}]</tool_calls> (Hunyuan-A13B)";
    d.syntax = CallSyntax::kJsonObject;
    d.sections = {{"<tool_calls>", "</tool_calls>"}};
    // The model writes `<think>\n..\n</think>\n<answer>\n..\n</answer>`: those newlines are
    // layout (vLLM's hunyuan_a13b reasoning parser strips them); the longer marker wins.
    d.reasoning_newlines_trimmed = true;
    d.newlines_after_think_close = true;
    d.dropped = {"<answer>\n", "\n</answer>", "<answer>", "</answer>"};
    d.end_tokens = {"<|eos|>"};  // Hunyuan A13B's turn end, which its templates write
    t.push_back(d);
  }
  {  // ERNIE-4.5 Thinking: its prompt opens the thinking block, so the output starts in reasoning
     // (vLLM's ernie45 reasoning parser); Hermes-style calls; the answer may stand in
     // <response>..</response>; the newlines after </think> are layout.
    Dialect d = think_tags({});
    d.name = "ernie45";
    d.summary =
        "reasoning..</think> then <tool_call>{\"name\", \"arguments\"}</tool_call> or "
        "<response>..</response> (ERNIE-4.5 Thinking); starts in reasoning";
    d.starts_in_reasoning = true;
    d.newlines_after_think_close = true;
    d.syntax = CallSyntax::kJsonObject;
    d.sections = {{"<tool_call>", "</tool_call>"}};
    d.dropped = {"<response>", "</response>"};
    // ERNIE's eos token, written after every turn (the model's output in vLLM's response-template
    // tests ends with it): it ends the output.
    d.end_tokens = {"</s>"};
    t.push_back(d);
  }
  {  // MiniMax-M1: call objects one per line between <tool_calls> tokens (vLLM's minimax parser).
    Dialect d = think_tags({});
    d.name = "minimax_m1";
    d.summary = "<tool_calls>\\n{\"name\", \"arguments\"}\\n{..}\\n</tool_calls> (MiniMax-M1)";
    d.syntax = CallSyntax::kJsonObject;
    d.sections = {{"<tool_calls>", "</tool_calls>"}};
    // `<think>\n..\n</think>\n`: the newlines around the reasoning are layout (vLLM's
    // minimax_m1 reasoning parser).
    d.reasoning_newlines_trimmed = true;
    d.newlines_after_think_close = true;
    d.end_tokens = {"<end_of_sentence>"};  // MiniMax-M1's turn end, as its template writes it
    t.push_back(d);
  }
  {  // Qwen2.5-Coder: JSON call objects, or a list of them, in <tools> (vLLM's qwen25_coder).
    Dialect d = think_tags({});
    d.name = "qwen25_coder";
    d.summary = "<tools>{\"name\", \"arguments\"} or [..]</tools> (Qwen2.5-Coder)";
    d.syntax = CallSyntax::kJsonObject;
    d.sections = {{"<tools>", "</tools>"}};
    d.args_keys = {"arguments", "parameters"};
    d.end_tokens = {"<|im_end|>"};  // ChatML's turn end
    t.push_back(d);
  }
  {  // Hunyuan (HY): GLM's <arg_key>/<arg_value> pairs after `name<tool_sep>`, in a <tool_calls>
     // section (SGLang's hunyuan detector, which drops calls to undeclared functions).
    Dialect d = arg_pairs(think_tags({}));
    d.name = "hunyuan";
    d.summary =
        "<tool_calls><tool_call>name<tool_sep><arg_key>k</arg_key><arg_value>v</arg_value>"
        "</tool_call></tool_calls> (Hunyuan)";
    d.section_open = "<tool_calls>";
    d.section_close = "</tool_calls>";
    d.name_end = {"<tool_sep>"};
    d.drops_unknown_tools = true;
    t.push_back(d);
    // HY4 and Hy3: the same calls written with their ':opensource' tokens, the name ended by
    // <tool_sep:opensource> (Hy3's template writes it; vLLM's hy_v3 parser reads it) or by the
    // first argument key (SGLang's hunyuan detector reads HY4's so).
    d.name = "hunyuan_v4";
    d.summary =
        "<tool_calls:opensource><tool_call:opensource>name[<tool_sep:opensource>]"
        "<arg_key:opensource>k</arg_key:opensource><arg_value:opensource>v"
        "</arg_value:opensource>.. (HY4, Hy3)";
    d.name_end = {"<tool_sep:opensource>"};
    d.think_open = "<think:opensource>";
    d.think_close = "</think:opensource>";
    d.section_open = "<tool_calls:opensource>";
    d.section_close = "</tool_calls:opensource>";
    d.call_open = "<tool_call:opensource>";
    d.call_close = "</tool_call:opensource>";
    d.name_stop = {"<arg_key:opensource>", "</tool_call:opensource>"};
    d.param_open = "<arg_key:opensource>";
    d.param_name_end = "</arg_key:opensource>";
    d.value_open = "<arg_value:opensource>";
    d.value_close = "</arg_value:opensource>";
    // Hy3's template ends the assistant's turn with its eos token, after the calls too; left in
    // the text by a backend that keeps special tokens, it ends the output.
    d.end_tokens = {"<｜hy_eos:opensource｜>"};
    t.push_back(d);
  }
  {  // Granite-20B-FunctionCalling: `<function_call> {"name", "arguments"}`, one per call, nothing
     // closing it (vLLM's granite-20b-fc parser).
    Dialect d;
    d.name = "granite_20b_fc";
    d.summary = "<function_call> {\"name\", \"arguments\"} per call (Granite-20B-FunctionCalling)";
    d.syntax = CallSyntax::kJsonObject;
    d.sections = {{"<function_call>", ""}};
    d.end_tokens = {"<|endoftext|>"};  // its template's turn end
    t.push_back(d);
  }
  {  // Apertus: a JSON list of {"NAME": {arguments}} objects between its tool-call tokens
     // (vLLM's apertus parser).
    Dialect d;
    d.name = "apertus";
    d.summary =
        "<|tools_prefix|>[{\"name\": {arguments}}]<|tools_suffix|>; "
        "<|inner_prefix|>..<|inner_suffix|> (Apertus)";
    d.think_open = "<|inner_prefix|>";  // its deliberation block (vLLM's apertus reasoning parser)
    d.think_close = "<|inner_suffix|>";
    d.syntax = CallSyntax::kJsonObject;
    d.sections = {{"<|tools_prefix|>", "<|tools_suffix|>"}};
    d.name_as_key = true;
    // The end of the assistant's turn in its template (tool outputs are written inside the turn,
    // so it comes only before the next user turn).
    d.end_tokens = {"<|assistant_end|>"};
    t.push_back(d);
  }
  {  // Gemma 4: `call:name{key:value}` with strings quoted <|"|>..<|"|>, as its template writes
     // them; reasoning in the `thought` channel (vLLM's gemma4 parsers).
    Dialect d;
    d.name = "gemma4";
    d.summary =
        "<|channel>thought\\nreasoning<channel|>, <|tool_call>call:name{k:<|\"|>v<|\"|>,n:1}"
        "<tool_call|> (Gemma 4)";
    d.think_open = "<|channel>";
    d.think_close = "<channel|>";
    d.reasoning_label = "thought\n";
    d.syntax = CallSyntax::kKeyValue;
    d.pythonic_sections = {{"<|tool_call>", "<tool_call|>"}};
    d.kv_prefix = "call:";
    d.kv_quote = "<|\"|>";
    // The end of a turn, and the tool-response opener a backend may leave after a call: what
    // follows either (or <eos>) is not the model's message.
    d.end_tokens = {"<turn|>", "<|tool_response>", "<eos>"};
    // A call the model writes without its markers (`call:f{..}` after prose or a stray
    // <channel|>, `<call>f{..}`), read as vLLM's gemma4 parser reads it outside strict mode.
    d.loose_sections = {{"call:", ""}, {"<call>", ""}};
    t.push_back(d);
    // FunctionGemma: the same calls between <start_function_call> tokens, strings in <escape>.
    d = {};
    d.name = "functiongemma";
    d.summary =
        "<start_function_call>call:name{k:<escape>v<escape>}<end_function_call> (FunctionGemma)";
    d.syntax = CallSyntax::kKeyValue;
    d.pythonic_sections = {{"<start_function_call>", "<end_function_call>"}};
    d.kv_prefix = "call:";
    d.kv_quote = "<escape>";
    d.end_tokens = {"<end_of_turn>", "<start_function_response>"};
    t.push_back(d);
  }
  {  // IQuest-Coder V2: GLM's argument pairs in its own call tokens; thinking on by default.
    Dialect d = arg_pairs(think_tags({}), {"<iquestcoder_tool_call>", "</iquestcoder_tool_call>"});
    d.name = "iquest_coder_v2";
    d.summary =
        "<iquestcoder_tool_call>name\\n<arg_key>k</arg_key>\\n<arg_value>v</arg_value>"
        "</iquestcoder_tool_call>; starts in reasoning (IQuest-Coder V2)";
    d.name_end = {"\n"};
    d.starts_in_reasoning = true;
    // The newlines around the reasoning and after its close are layout (vLLM's iquest reasoning
    // parsers strip them).
    d.reasoning_newlines_trimmed = true;
    d.newlines_after_think_close = true;
    t.push_back(d);
    // IQuest-Q1: the same calls in <iquest_tool_call>, the reasoning as written (SGLang's
    // iquest_q1 parsers keep the newlines around </think>), and <|iquest_end|> / <|endoftext|>
    // end the turn.
    Dialect q1 = arg_pairs(d, {"<iquest_tool_call>", "</iquest_tool_call>"});
    q1.name = "iquest_q1";
    q1.summary =
        "<iquest_tool_call>name\\n<arg_key>k</arg_key>\\n<arg_value>v</arg_value>"
        "</iquest_tool_call>; starts in reasoning; <|iquest_end|> ends the output (IQuest-Q1)";
    q1.reasoning_newlines_trimmed = false;
    q1.newlines_after_think_close = false;
    q1.end_tokens = {"<|iquest_end|>", "<|endoftext|>"};
    t.push_back(q1);
  }
  {  // Solar Open 2: one call per start token, the name on its line, then key/value pairs.
    Dialect d;
    d.name = "solar_open2";
    d.summary =
        "<|tool_call:start|>name\\n<|tool_arg:start|>k<|tool_arg:value|>v<|tool_arg:end|>.."
        "<|tool_call:end|>; <|think:start|>..<|think:end|>, starts in reasoning (Solar Open 2)";
    d.think_open = "<|think:start|>";
    d.think_close = "<|think:end|>";
    d.starts_in_reasoning = true;
    d = key_value_elements(d, {"<|tool_call:start|>", "<|tool_call:end|>"},
                           {"<|tool_arg:start|>", "<|tool_arg:value|>"}, {"", "<|tool_arg:end|>"});
    d.name_end = {"\n"};
    d.call_open_restarts = true;
    t.push_back(d);
  }
  {  // PLaMo 3: every marker is a `<|plamo:..:plamo|>` text sequence; arguments are JSON.
    Dialect d;
    d.name = "plamo3";
    d.summary =
        "<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_"
        "name:plamo|>f<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|>[<|plamo:"
        "constrain|>json]<|plamo:msg|>{..}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_"
        "request:plamo|>..; starts in reasoning (PLaMo 3)";
    d.think_open = "<|plamo:begin_think:plamo|>";
    d.think_close = "<|plamo:end_think:plamo|>";
    d.starts_in_reasoning = true;
    // A marker cut off by the end of the output (`Answer<|plamo:begin_`) is a control token a
    // detokenizer left half written, not text (vLLM's plamo3 parser removes it).
    d.cut_frame_prefixes = {"<|plamo:"};
    d = header_json(
        d, {"<|plamo:begin_tool_requests:plamo|>", "<|plamo:end_tool_requests:plamo|>"},
        {"<|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>",
         "<|plamo:end_tool_arguments:plamo|>"},
        "<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>"
        "json<|plamo:msg|>");
    // PLaMo's API writes the arguments without the constrain part: OpenClaw's provider for
    // plamo-3.0-prime-beta reads its responses so (extensions/plamo, PR #62893).
    d.header_end.push_back(
        "<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:msg|>");
    d.noise = {"<|plamo:end_tool_request:plamo|>"};  // after each call's arguments
    d.noise_call_end = "<|plamo:end_tool_request:plamo|>";
    d.end_tokens = {"<|plamo:tag|>"};  // the end of the turn
    t.push_back(d);
  }
  {  // Command R+: a ```json list of {"tool_name", "parameters"} after `Action:`; the answer
     // between <|CHATBOT_TOKEN|> and <|END_OF_TURN_TOKEN|> (llama.cpp's Command R+ parser).
    Dialect d;
    d.name = "command_r_plus";
    d.summary =
        "Action:\\n```json\\n[{\"tool_name\", \"parameters\"}]\\n```, the answer in "
        "<|CHATBOT_TOKEN|>..<|END_OF_TURN_TOKEN|> (Command R+)";
    d.syntax = CallSyntax::kJsonObject;
    d.sections = {{"Action:\n```json", "```"}};
    d.name_keys = {"tool_name"};
    d.args_keys = {"parameters"};
    d.dropped = {"<|CHATBOT_TOKEN|>"};
    d.end_tokens = {"<|END_OF_TURN_TOKEN|>"};  // Cohere's eos token, as command_r7b's
    t.push_back(d);
  }
  {  // GigaChat 3: one call object after a `function call` role header, to the end of the output.
    Dialect d;
    d.name = "gigachat3";
    d.summary =
        "<|message_sep|>\\n\\nfunction call<|role_sep|>\\n{\"name\", \"arguments\"} or "
        "<|function_call|>{..} (GigaChat 3, 3.1)";
    d.syntax = CallSyntax::kJsonObject;
    d.sections = {{"<|message_sep|>\n\nfunction call<|role_sep|>\n", ""},
                  {"function call<|role_sep|>\n", ""},
                  {"<|function_call|>", ""}};
    d.args_required = true;
    // Without its role tokens (`function call{..}`, as vLLM's first GigaChat 3 parser read it):
    // only a whole call, since the words are also prose.
    d.loose_sections = {{"function call", ""}};
    d.dropped = {"<|message_sep|>"};
    d.end_tokens = {"</s>"};
    t.push_back(d);
  }
  {  // GigaChat 3.5: DeepSeek V3.2's markup under the GCML name (fullwidth bars).
    Dialect d = think_tags({});
    d.name = "gigachat35";
    d.summary =
        "<｜GCML｜tool_calls><｜GCML｜invoke name=\"f\"><｜GCML｜parameter name=\"p\" "
        "string=\"true\">v</｜GCML｜parameter>... (GigaChat 3.5)";
    d = xml_params(d, {"<｜GCML｜tool_calls>", "</｜GCML｜tool_calls>"},
                   {"<｜GCML｜invoke", "</｜GCML｜invoke>"},
                   {"<｜GCML｜parameter", "</｜GCML｜parameter>"});
    d.end_tokens = {"</s>"};
    t.push_back(d);
  }
  {  // MiniCPM 5: bare XML function elements; a value the schema does not type is JSON if it
     // parses.
    Dialect d = think_tags({});
    d.name = "minicpm5";
    d.summary =
        "<function name=\"f\"><param name=\"k\">v</param></function>, no section (MiniCPM 5)";
    d = xml_params(d, {}, {"<function", "</function>"}, {"<param", "</param>"});
    d.framing = ValueFraming::kTrim;
    d.untyped = UntypedValues::kJsonGuess;
    d.cdata_values = true;
    d.end_tokens = {"<|im_end|>"};  // the turn end of its template (llama.cpp's MiniCPM5-1B copy)
    t.push_back(d);
  }
  {  // K2 Horizon: GLM-style pairs in `<ifm|..>` tokens, a key optionally followed by its type.
    Dialect d;
    d.name = "k2_horizon";
    d.summary =
        "<ifm|tool_calls><ifm|tool_call>name<ifm|arg_key>k</ifm|arg_key>[<ifm|arg_type>t</ifm|arg_"
        "type>]<ifm|arg_value>v</ifm|arg_value></ifm|tool_call></ifm|tool_calls>; <ifm|think> "
        "(or _fast, _faster), "
        "starts in reasoning (K2 Horizon)";
    d.think_open = "<ifm|think>";
    d.think_close = "</ifm|think>";
    // The template opens one of three blocks by reasoning_effort: high, medium, low; K2-Think-V2,
    // its predecessor, writes them without the ifm| namespace (<think_fast>), read too.
    d.think_alternates = {{"<ifm|think_fast>", "</ifm|think_fast>"},
                          {"<ifm|think_faster>", "</ifm|think_faster>"},
                          {"<think>", "</think>"},
                          {"<think_fast>", "</think_fast>"},
                          {"<think_faster>", "</think_faster>"}};
    d.starts_in_reasoning = true;
    d = key_value_elements(d, {"<ifm|tool_call>", "</ifm|tool_call>"},
                           {"<ifm|arg_key>", "</ifm|arg_key>"},
                           {"<ifm|arg_value>", "</ifm|arg_value>"});
    d.section_open = "<ifm|tool_calls>";
    d.section_close = "</ifm|tool_calls>";
    d.name_end = {"\n"};
    d.type_open = "<ifm|arg_type>";
    d.type_close = "</ifm|arg_type>";
    d.json_call_body = true;  // its JSON format: <ifm|tool_call>{"name", "arguments"}
    // The turn end of its template (a llama.cpp fork's copy, models/templates/k2-horizon.jinja).
    d.end_tokens = {"<|ifm|im_end|>"};
    t.push_back(d);
  }
  {  // Kimi K3: XTML, elements built from the <|open|>, <|close|> and <|sep|> tokens.
    Dialect d;
    d.name = "kimi_k3";
    d.summary =
        "<|open|>tools<|sep|><|open|>call tool=\"f\" index=\"1\"<|sep|><|open|>argument key=\"k\" "
        "type=\"string\"<|sep|>v<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>"
        "; <|open|>think<|sep|>..<|close|>think<|sep|> (Kimi K3)";
    d.think_open = "<|open|>think<|sep|>";
    d.think_close = "<|close|>think<|sep|>";
    d.reasoning_until_close = true;  // the prompt may have opened the block (vLLM's kimi_k3)
    // The think channel also ends at a close missing its separator, and where the response
    // channel opens (SGLang's kimi_k3 reasoning parser); in the content that open is framing.
    d.think_alternates = {{"<|open|>think", "<|close|>think"},
                          {"<|open|>think", "<|open|>response<|sep|>"}};
    d = xml_params(d, {"<|open|>tools<|sep|>", "<|close|>tools<|sep|>"},
                   {"<|open|>call", "<|close|>call<|sep|>"},
                   {"<|open|>argument", "<|close|>argument<|sep|>"});
    d.name_end = {"<|sep|>"};  // headers end at the separator token, not at '>'
    d.param_name_end = "<|sep|>";
    d.call_name_attr = "tool";
    d.cut_frame_prefixes = {"<|open|>", "<|close|>"};
    d.param_name_attr = "key";
    d.value_type_attr = "type";
    d.attr_entities = true;  // tool="a&amp;b" names a&b (both references unescape attributes)
    // The answer's channel markers and the end of the message are framing, also without their
    // separator (the longer marker wins), and with the spaces a detokenizer that puts spaces
    // between special tokens writes around the channel name (vLLM's kimi_k3 parser reads them).
    d.dropped = {
        "<|open|>response<|sep|>",   "<|close|>response<|sep|>",   "<|close|>message<|sep|>",
        "<|open|>response",          "<|close|>response",          "<|close|>message",
        "<|open|> response <|sep|>", "<|close|> response <|sep|>", "<|close|> message <|sep|>"};
    d.end_tokens = {"<|end_of_msg|>"};  // the turn end of its template (llama.cpp's Kimi-K3 copy)
    t.push_back(d);
  }
  {  // dots.llm: MiniMax-M2's invoke elements in <dots_function_call> blocks, values trimmed.
    Dialect d = think_tags({});
    d.name = "dots";
    d.summary =
        "<dots_function_call><invoke name=\"f\"><parameter name=\"k\">v</parameter></invoke>"
        "</dots_function_call> (dots.llm)";
    d = xml_params(d, {"<dots_function_call>", "</dots_function_call>"}, {"<invoke", "</invoke>"},
                   {"<parameter", "</parameter>"});
    d.framing = ValueFraming::kTrim;
    d.json_call_body = true;  // <dots_function_call>{"name", "arguments"}</dots_function_call>
    d.args_keys = {"arguments", "parameters"};
    t.push_back(d);
  }
  {  // MiniMax M3: every tag behind the namespace token `]<]minimax[>[`; a parameter is an
     // element named by its key.
    Dialect d;
    d.name = "minimax_m3";
    d.summary =
        "]<]minimax[>[<tool_call>]<]minimax[>[<invoke name=\"f\">]<]minimax[>[<k>v]<]minimax[>"
        "[</k>..]<]minimax[>[</invoke>]<]minimax[>[</tool_call>; <mm:think> (MiniMax M3)";
    d.think_open = "<mm:think>";
    d.think_close = "</mm:think>";
    d = xml_params(d, {"]<]minimax[>[<tool_call>", "]<]minimax[>[</tool_call>"},
                   {"]<]minimax[>[<invoke", "]<]minimax[>[</invoke>"},
                   {"]<]minimax[>[<", "]<]minimax[>[</"});
    d.value_close_named = true;  // untyped values are strings, as both references keep them
    // A turn without reasoning begins with the close alone (llama.cpp's MiniMax-M3 tests).
    d.answer_open = "</mm:think>";
    d.end_tokens = {"[e~["};  // the eos token its template writes after a turn, as MiniMax-M2's
    t.push_back(d);
  }
  {  // CWM (Meta's Code World Model): `<tool: name>` then a free-text payload.
    Dialect d = think_tags({});
    d.name = "cwm";
    d.summary =
        "<tool: name>\\npayload\\n</tool> (the payload is {\"command\": ..} unless it is JSON; "
        "<tool: function>\\nname payload\\n</tool> and <tool: name payload </tool> too); <think> "
        "(CWM)";
    d = header_json(d, {}, {"<tool:", "</tool>"}, "");
    d.header_end = {};
    d.label_close = ">";
    d.call_label = "function";
    d.raw_args_key = "command";
    t.push_back(d);
  }
  {  // RWKV: a Markdown heading, then the call object in a JSON code fence.
    Dialect d = think_tags({});
    d.name = "rwkv";
    d.summary = "**Tool Call:**\\n```json\\n{\"name\", \"arguments\"}\\n``` (RWKV)";
    d.reasoning_until_close = true;
    d.syntax = CallSyntax::kJsonObject;
    d.sections = {{"**Tool Call:**\n```json", "```"}, {"<tool_call>", "</tool_call>"}};
    d.python_dicts = true;  // its earlier form: <tool_call>\n{'name': .., 'arguments': ..}
    d.loose_sections = {{"```json", "```"}};
    t.push_back(d);
  }
  {  // HyperCLOVAX SEED Think 14B: a JSON call list in a `-> tool/function_call` turn; the
     // reasoning ends where the prompt's assistant turn is closed and a new one opened.
    Dialect d;
    d.name = "hyperclovax_14b";
    d.summary =
        "reasoning<|im_end|>\\n<|im_start|>assistant -> tool/function_call\\n[{\"name\", "
        "\"arguments\"}]<|im_end|> (HyperCLOVAX SEED Think 14B)";
    d.think_open = "/think\n";
    d.think_close = "<|im_end|>\n<|im_start|>assistant";
    d.reasoning_until_close = true;
    d.newlines_after_think_close = true;
    d.syntax = CallSyntax::kJsonObject;
    d.sections = {{" -> tool/function_call\n", "<|im_end|>"}};
    // An answer before the calls is a turn of its own: its end and the call turn's start are
    // layout (the reasoning close's text, read as a close only inside a reasoning block).
    d.layout_before_calls = "<|im_end|>\n<|im_start|>assistant";
    // The model card's example writes the arguments as "input".
    d.args_keys = {"arguments", "parameters", "input"};
    d.bare_json = true;
    d.dropped = {"<|im_end|>", "<|stop|>", "<|endofturn|>"};
    t.push_back(d);
  }
  {  // Inkling: typed blocks, each opened by its kind's token and ended by <|end_message|>.
    Dialect d;
    d.name = "inkling";
    d.summary =
        "<|content_thinking|>..<|end_message|>, <|content_text|>..<|end_message|>, "
        "<|content_invoke_tool_json|>{\"name\", \"args\"}<|end_message|>, each block after "
        "<|message_model|> (Inkling)";
    d.think_open = "<|content_thinking|>";
    d.think_close = "<|end_message|>";
    d.syntax = CallSyntax::kJsonObject;
    d.sections = {{"<|content_invoke_tool_json|>", "<|end_message|>"}};
    d.args_keys = {"args"};
    d.call_header_after = "<|message_model|>";  // <|message_model|>get_weather<|content_invoke..
    d.dropped = {"<|message_model|>",      "<|content_text|>", "<|content_invoke_tool_text|>",
                 "<|content_tool_error|>", "<|end_message|>",  "<|content_model_end_sampling|>"};
    t.push_back(d);
  }
  return t;
}

}  // namespace

const std::vector<Dialect>& dialect_table() {
  static const std::vector<Dialect> table = build_table();
  return table;
}

const Dialect* find_dialect(std::string_view name) {
  for (const auto& d : dialect_table())
    if (d.name == name) return &d;
  return nullptr;
}

}  // namespace chatwire::parse
