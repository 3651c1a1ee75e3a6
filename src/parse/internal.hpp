// Internal pieces of the output parser: the dialect description (one row of the table in
// dialects.cpp), value helpers (schema coercion, Python literals, JSON quoting) and the engine.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/parse_json.hpp"
#include "util/tool_definition.hpp"

namespace chatwire::parse {

// What a Tools holds: the array as given (the engine reads parameter schemas and names from it).
struct ToolsData {
  Json json;
  // The function names the tools declare (Options::forward_unknown_tools checks calls against
  // them); empty when the tools name none.
  std::vector<std::string> function_names;
};

// How the calls of a dialect are written. Each kind is read by one family (engine_<family>.cpp;
// the table in engine.cpp says which).
enum class CallSyntax {
  kNone,        // no tool calls (reasoning only)
  kJsonObject,  // marker, then a JSON call object or an array of them ({"name", "arguments"})
  kHeaderJson,  // marker, name (and id) header, separator, JSON arguments, end marker
  kXmlParams,   // marker, name, then one element per parameter; values typed by the tool schema
  kPythonic,    // [f(a=1), g(b='x')] (bare at the start of the output, or inside markers)
  kKeyValue,    // call:f{a:<q>x<q>,b:1} inside markers, strings between quote tokens (Gemma 4)
  kHarmony,     // gpt-oss channels and recipients
};

// What surrounds an XML parameter value and is not part of it.
enum class ValueFraming {
  kVerbatim,         // the value is everything between the tags
  kStripOneNewline,  // one leading and one trailing "\n" are layout (Qwen3-Coder)
  kTrim,             // surrounding whitespace is layout
  // The value is written as JSON (`{{ value | tojson }}`, HyperCLOVAX SEED Think): surrounding
  // whitespace is layout, and a value that is valid JSON is that JSON value ("\"Seoul\"" is
  // "Seoul", 42 is 42) whatever the schema says; other text is read as kTrim's.
  kJson,
};

// How an XML parameter without a schema type is read.
enum class UntypedValues {
  kString,     // always a string
  kJsonGuess,  // a JSON literal if it parses as one (42, true, [1]), else a string
};

// A call wrapper of JSON dialects: open marker and (optional) close marker.
struct Section {
  std::string_view open;
  std::string_view close;
};

// Every field is also a row of a field table in syntax.cpp (its JSON form, and the copy a
// derived Syntax owns): a field missing there would point into freed memory.
struct Dialect {
  std::string_view name;
  std::string_view summary;

  // Reasoning.
  std::string_view think_open;  // "" = the dialect has no reasoning block
  std::string_view think_close;
  // Other reasoning blocks the model may open (K2 Horizon's lower efforts: <ifm|think_fast>,
  // <ifm|think_faster>). Any of the closes ends a block: the prompt may have opened any of them.
  std::vector<Section> think_alternates;
  // A label the block may begin with, markup rather than reasoning (Gemma 4 writes
  // `<|channel>thought\n..<channel|>`; vLLM's gemma4 parser removes the `thought\n`).
  std::string_view reasoning_label;
  bool starts_in_reasoning = false;  // default when neither prefilled nor enable_thinking
  // With neither given, the output is reasoning the prompt opened when a think_close comes
  // before any other marker, else content (as the family's reference parsers read a close with
  // no open); the text is held until that is known.
  bool reasoning_until_close = false;
  // A reasoning close with no block open is a control token, removed (with its stray_marker
  // warning) rather than kept as text: Mistral's [/THINK] (vLLM's Mistral reasoning parser
  // since 2025-12 and its parser engine drop it; the output starts as content).
  bool stray_close_dropped = false;
  // What begins the dialect's control tokens or frames (Kimi K3's <|open|> and <|close|>, PLaMo
  // 3's `<|plamo:`). At the end of the output, a frame the model had not yet written anything
  // into is removed with a stray_marker warning instead of kept as text, as vLLM's and SGLang's
  // kimi_k3 and vLLM's plamo3 parsers drop it (a control token is never text the model wrote):
  // text that is a proper prefix of one of the dialect's markers and starts with one of these
  // (`<|open|>tools`, a lone `<|close|>`, `<|plamo:end_`), and a block made only of the dialect's
  // markers, the last perhaps cut off (`<|open|>tools<|sep|><|open|>`). Once a name or any other
  // text is written, the block is the text the model wrote.
  std::vector<std::string_view> cut_frame_prefixes;
  // The newlines right after think_close are layout, not content (Granite's thinking models:
  // vLLM's granite_thinking and SGLang's Granite parsers both drop them).
  bool newlines_after_think_close = false;
  // The newlines at the start and at the end of the reasoning block are layout too (MiniMax-M1:
  // `<think>\n..\n</think>\n`, as vLLM's minimax_m1 reasoning parser reads it).
  bool reasoning_newlines_trimmed = false;
  // The whitespace right after think_open is layout (Cohere Command: ` i will call foo` after
  // <|START_THINKING|>, a tokenizer's leading space; Cohere's own output filter, which vLLM's
  // Cohere parsers run, strips it).
  bool reasoning_lead_trimmed = false;
  // One newline on each side of think_close is layout (Step-3.5: `..\n</think>\n`, as vLLM's
  // step3p5 reasoning parser reads it), also the reasoning's last newline when the output ends
  // inside the block.
  bool think_close_newline = false;
  // What the template writes before a plain answer (gpt-oss: `<|channel|>final<|message|>`
  // after the generation prompt's `<|start|>assistant`): layout where the output begins with it.
  std::string_view answer_open;
  // A recipient header the output may begin with (`to=get_weather<|message|>`): layout, since
  // the calls that follow name themselves.
  std::string_view recipient_open, recipient_close;
  // Messages routed by recipient (Muse Glimmer): a header that starts a new message anywhere in
  // the output (`<|start|>assistant to=`, then the recipient and recipient_close) is layout; a
  // message to `reasoning_recipient` ("self") is reasoning, any other (a function, "user") is
  // content and calls.
  std::string_view recipient_header, reasoning_recipient;
  // ... and a message to `answer_recipient` ("user") is the answer: call markers are calls only in
  // a message to any other recipient (a tool), and text in the answer, in the reasoning and in
  // output with no header (Muse Glimmer, as SGLang's and llama.cpp's parsers scope them). A
  // header without a recipient is the answer's, the output's first one (` <|message|>`) too.
  std::string_view answer_recipient;
  // A call name `ns.f` the request does not list is the listed function whose name (or its last
  // dotted segment) is `f`, when exactly one is (Muse Glimmer's template writes `f.f`).
  bool namespaced_names = false;
  // The text the format writes between the content and a call marker (DeepSeek V3.2/V4's
  // encoders: content, "\n\n", then the call block): layout where the content ends with it
  // right before a call, text where the marker turns out to be text. Held at the end of what has
  // come while a marker may follow.
  std::string_view layout_before_calls;
  bool call_ends_reasoning = true;        // a call marker inside reasoning closes it (Qwen3)
  std::vector<std::string_view> dropped;  // framing tokens removed from text wherever they appear
  // Tokens that end the turn (PLaMo 3's <|plamo:tag|>): a backend stops there, so what follows
  // the first is not part of the message; it is left out with an `after_end` warning. The token
  // itself is framing: it is removed from the text as the `dropped` tokens are, without being
  // listed there.
  std::vector<std::string_view> end_tokens;
  // A message opener (Inkling's <|message_model|>, also written by the prompt before the
  // output): a function name right after it (or at the output's start) that a call marker
  // follows is the message's header, layout; any other text there is content.
  std::string_view call_header_after;
  // A line of the content that starts with this prefix, is none of the markers, and is followed
  // (whitespace between) by a call marker is a damaged marker the model wrote before its calls
  // (DeepSeek V4: `<｜DSML｜toolcalls>`, `<｜DSML｜tool_calls-ok ...`): removed with a
  // malformed_call warning, as SGLang's V4 detector treats those bytes as protocol, not prose.
  std::string_view damaged_marker_prefix;
  // A call marker inside a Markdown code block, code span or blockquote line of the content is
  // text (DeepSeek V4 quotes its own DSML when it explains it; SGLang's V4 detector masks those
  // spans): parse/markdown_literals.hpp.
  bool markdown_literals = false;
  // A call to a function the request's tools do not declare is dropped (reported in a warning)
  // unless Options::forward_unknown_tools says otherwise: the family's reference parser drops it.
  bool drops_unknown_tools = false;

  CallSyntax syntax = CallSyntax::kNone;

  // kJsonObject: wrappers, bare JSON at the start of the content, and the keys of a call object.
  std::vector<Section> sections;
  bool bare_json = false;        // a call may start with '{' or '[' at the start of the content
  bool bare_anywhere = false;    // ... or anywhere in the content (Llama 3)
  bool bare_separators = false;  // ';' may separate bare calls (Llama 3)
  bool builtin_calls = false;    // `name.call(k=v)` after the open marker (Llama 3 python_tag)
  std::vector<std::string_view> name_keys = {"name"};
  std::vector<std::string_view> args_keys = {"arguments"};
  std::vector<std::string_view> id_keys;  // a native id key that may follow the arguments
  bool args_required = false;             // an object without arguments is not a call
  // A call object may be {"NAME": {arguments}}: its one key names the function (Apertus).
  bool name_as_key = false;
  // A call object may be a Python dict literal, `{'name': 'f', 'parameters': {'k': 'v'}}`, as
  // SGLang's Llama 3.2 detector reads one (Llama 3.2 writes them); read once it is complete.
  bool python_dicts = false;
  // Other wrappers a model of the family may put one call object in, as llama.cpp's Hermes 2 Pro
  // parser (e7e21164) accepts them: `<tools>{..}</tools>`, a ```json fence, `<function=NAME>{args}
  // </function>` (an open ending in '=' is followed by the name, up to '>', in optional quotes);
  // a fence may hold one of the others. Read in the content only (in reasoning they are text),
  // and only as a whole call: a name the request lists (any, when it lists none), object
  // arguments, no other key, complete and valid JSON, never streamed. Anything else there is
  // text, without a warning, since these are also what answers quote (code fences, XML).
  // The key-value engine reads them too: an open there is followed by `name{k:v}` with no close
  // (Gemma 4's `call:` written without <|tool_call>), a call only once its brace closes.
  std::vector<Section> loose_sections;
  bool loose_bare = false;  // ... and such a call object alone at the start of the content

  // kHeaderJson / kXmlParams: an optional section around the calls, and each call's markers.
  std::string_view section_open;
  std::string_view section_close;
  std::string_view call_open;
  std::string_view call_close;          // "" = the call ends with its arguments
  std::vector<std::string_view> noise;  // tokens between calls inside a section, skipped
  // The one of them that ends a call (step3's <｜tool_call_end｜>): the framing of what follows
  // it starts after it.
  std::string_view noise_call_end;

  // kHeaderJson.
  std::vector<std::string_view> header_end;  // ends the name header (first one that occurs)
  std::string_view id_marker;                // separates name and id in the header (Mistral)
  bool id_first = false;                     // ... id first, then the name (Solar Open)
  std::string_view type_separator;           // "function<sep>name": the name follows it
  // A label before the name, closed by this marker (CWM: `<tool: function>\nterminal ls`): the
  // label call_label is informational and the name is the first word after the marker; any other
  // label is the name, the text after the marker its input (`<tool: bash>\nls\n</tool>`, CWM's
  // own form); a label followed by a space instead (`<tool: python print(1) </tool>`) is the
  // name itself.
  std::string_view label_close;
  std::string_view call_label;  // the informational label (`function`)
  // Arguments that do not begin as JSON ('{' or '[') are the text of this one parameter
  // (Functionary's python calls: raw code, {"code": ..}; CWM: {"command": ..}); for every
  // function, or only for raw_args_function when it is set.
  std::string_view raw_args_key, raw_args_function;
  bool id_in_header = false;      // the header is the id "functions.name:0" (Kimi)
  bool fenced_args = false;       // arguments inside ```json ... ``` (DeepSeek V3)
  bool header_at_start = false;   // the output may begin with a header (Functionary)
  std::string_view content_name;  // a header naming content, not a call ("all")
  bool json_list_calls = false;   // the marker may also start a JSON call list
  // Mistral's header as backends and models garble it: it may end where its JSON object begins
  // (`name{..}`, `[ARGS]` stripped with the special tokens by the detokenizer), and text before
  // a `[{` call list is content (`[TOOL_CALLS] junk [{..}]`).
  bool header_recovery = false;

  // kXmlParams.
  std::vector<std::string_view> name_end;   // ends the function name (consumed)
  std::vector<std::string_view> name_stop;  // also ends the name, not consumed
  // The header attribute that names the function (`<invoke name="f">`) and the parameter; a
  // header without it is the name itself (`<function=f>`). Kimi K3 writes tool= and key=.
  std::string_view call_name_attr = "name";
  std::string_view param_name_attr = "name";
  // A parameter header's attribute naming its value's type (Kimi K3's type="object"): any type
  // but string marks a JSON value where the schema does not type it.
  std::string_view value_type_attr;
  std::string_view param_open;
  std::string_view param_name_end;
  std::string_view value_open;  // "" = the value starts right after param_name_end
  // An element between a parameter's name and its value_open naming the value's type
  // (`<ifm|arg_type>integer</ifm|arg_type>`, K2 Horizon's typed form): it types the value where
  // the schema does not, and picks the member of a union the schema allows (narrowed_types).
  std::string_view type_open, type_close;
  std::string_view value_close;
  ValueFraming framing = ValueFraming::kVerbatim;
  UntypedValues untyped = UntypedValues::kString;
  // Where a value ends when it may quote the markers themselves (code written by Qwen3-Coder),
  // as vLLM's qwen3_coder parser decides it: a value_close ends the value only when what follows
  // it (after whitespace) is a parameter of the function's schema, the call's or the section's
  // close, or the end of the output; parameter elements opened at the start of a line inside the
  // value nest (their closes pair with them); a parameter of the schema not yet given, opened at
  // a line start, a call close followed by the section's end, or a section close followed by
  // another section or the end, end a value missing its close; so does a misspelt close on a
  // line of its own (`</parameter1>`), which is dropped. Without it the first marker ends it.
  bool value_close_checked = false;
  // value_close_checked: a parameter written after a close ends the value whatever its name, not
  // only one of the schema's (GLM: the model writes keys the schema does not declare, and its
  // parsers read them); and a parameter element opened inside a line is read as one opened at a
  // line start (GLM-4.7 writes a call on one line; its markers are special tokens).
  bool value_close_any_param = false;
  // The value's close names its parameter (MiniMax M3: value_close `NS</`, then `city>`): a
  // parameter element `NS<city>` is closed by `NS</city>`, so elements nested in a value
  // (`NS<shipping>NS<city>..NS</city>NS</shipping>`) stay in it, read as an object (children
  // by name, a name repeated: a list) whose leaves are JSON literals when they parse.
  bool value_close_named = false;
  // A call's open inside an open call means the model left out its close (and the value's):
  // the open call ends there and the next begins; a parameter name cut by a marker is left out
  // (Solar Open 2, as vLLM's solar_open2 parser recovers them).
  bool call_open_restarts = false;
  // A call may be one JSON object, `{"name", "arguments"}` (name_keys, args_keys), where its
  // name would stand or, in a section, where a call would (dots.llm's and K2 Horizon's JSON
  // forms): read whole once its close comes, never streamed.
  bool json_call_body = false;
  // A value written as an XML CDATA section (`<![CDATA[a\nb]]>`) is its content (MiniCPM 5,
  // whose parsers read its calls as XML); read whole, not streamed.
  bool cdata_values = false;
  // value_close_checked: the slips SGLang's step3p5 detector repairs, each only where the schema
  // (or the request's tool list) declares the name so the boundary is known: a declared, not yet
  // given parameter opened inside a line ends the value (`Dallas<parameter=state>TX`); a repeated
  // open (`<parameter=parameter=city>`); a parameter header whose '>' was left out, ended by its
  // line (`<parameter=city\nDallas`); `<function f>` and `<functionf>` for a listed f. (A function
  // header without '>', `<function=f\n`, is the dialect's name_stop.) vLLM's qwen3coder parser
  // reads none of them (a mid-line open is text, a function header without '>' is dropped).
  bool repairs_tag_slips = false;
  // Inside a section, a call or parameter header whose open ends with '=' may be written in
  // attribute form: `<function name="f">`, `<function name='f' >`, `<function name = "f">`,
  // `<function = f>` (and the same for `<parameter=`), as vLLM's qwen3_xml parser reads them. The
  // name is quoted or ends at the header's end, so the boundary is known without a tool list.
  bool attr_headers = false;
  // Quoted attribute values (the call's `tool=`, a parameter's `key=`) are XML-escaped by the
  // template, so the reader unescapes them (Kimi K3's XTML, as vLLM's and SGLang's kimi_k3
  // parsers read `tool="a&amp;b"` as `a&b`).
  bool attr_entities = false;
  // The model may write a call block JSON-escaped, as the block would stand inside a JSON string
  // (`<tool_call>f\n<arg_key>k</arg_key>\n<arg_value>[{\"a\": 1}]</arg_value>`): a literal
  // backslash-n after the name and around the parameters is layout (GLM-4.5 as SGLang's detector
  // reads it; the value's escapes are undone by coerce_value, as for every schema-typed value no
  // type takes as written). A name holds no backslash, so a name line never loses text to it.
  bool escaped_layout = false;

  // kPythonic: wrappers ("" close = to the end); bare '[' at the start of the content.
  std::vector<Section> pythonic_sections;
  bool pythonic_bare = false;
  // A line of the content that is one whole Python call (`get_weather(city="Paris")`, only
  // whitespace around it) is a call, one per line, for a name the request lists (any name when
  // it lists none); any other line is text, quietly (Granite 3.3 and 4.0 as vLLM's
  // granite_pythonic parser reads them).
  bool pythonic_lines = false;

  // kKeyValue (sections in pythonic_sections): the text before the name and the string quote.
  std::string_view kv_prefix;  // "call:"
  std::string_view kv_quote;   // "<|\"|>", "<escape>"
};

const std::vector<Dialect>& dialect_table();
const Dialect* find_dialect(std::string_view name);

// The data behind a public Syntax: a dialect whose views point either at the static table's
// literals or at strings this object owns (a derived dialect's markers).
struct SyntaxData {
  Dialect dialect;
  std::string name, summary;
  std::deque<std::string> strings;  // a deque: growing it never moves the stored strings
  std::string_view keep(std::string_view text) { return strings.emplace_back(text); }
};
// Wraps a dialect whose views must stay valid: its strings are copied into the result.
Syntax make_syntax(const Dialect& dialect, std::string name, std::string summary);
std::string_view family_name(CallSyntax syntax) noexcept;

// ---- values (values.cpp) ----

// JSON string literal of `text` the way Python's json.dumps(ensure_ascii=False) writes it.
void append_json_quoted(std::string& out, std::string_view text);
void append_json_escaped(std::string& out, std::string_view text);  // without the quotes
// Room for `need` bytes in `s`, grown geometrically; a string growing to megabytes (one-shot: a
// whole output's content, reasoning or arguments) is advised to the kernel for transparent huge
// pages, so filling it faults once per 2 MB instead of once per 4 KB.
void reserve_growing(std::string& s, std::size_t need);
// A JSON value as Python's json.dumps(ensure_ascii=False) writes it (", " and ": " separators);
// nesting deeper than 256 is written compactly by nlohmann (no recursion here).
void append_python_json(std::string& out, const Json& value, int depth = 0);

// Numbers as Python reads them: a plain decimal integer; int(text) written as JSON; float(text)
// written as JSON (an integral value as an integer; NaN and infinities rejected).
bool is_integer_text(std::string_view s);
// Whether `s` is exactly one JSON string literal ("..." with valid escapes).
bool is_json_string(std::string_view s);
std::string integer_json(std::string_view s);
bool number_json(std::string_view s, std::string& out);

// The JSON types a tool's schema allows for one parameter; empty = unknown.
struct ParamTypes {
  bool known = false;
  bool string = false, integer = false, number = false, boolean = false, object = false,
       array = false, null = false;
  // The first non-null type the schema names: it decides the coercion (as vLLM's parsers do).
  bool ParamTypes::*first = nullptr;
  // The values of an `enum` the types were taken from (in the request's tools, which outlive
  // the parse): a value written as one of them is that value.
  const Json* members = nullptr;
  // The schema that made the value an object: a parsed object must hold its `required` keys, or
  // it is not that object (SGLang validates the value against the schema the same way).
  const Json* object_schema = nullptr;
  bool only_string() const {
    return known && string && !integer && !number && !boolean && !object && !array && !null;
  }
  // A string first and no other type to try: the value is the text as written (streamable).
  bool string_decides() const {
    return first == &ParamTypes::string && !integer && !number && !boolean && !object && !array;
  }
};
ParamTypes param_types(const Json& tools, std::string_view function, std::string_view param);
// The schemas that describe one part of a nested value (Dialect::value_close_named): a
// parameter's, then its members' and its items', each walk bounded as param_types's. Empty
// (root nullptr or no schema) means unknown.
struct SchemaSet {
  const Json* root = nullptr;  // the function's parameters schema, where $refs resolve
  std::vector<const Json*> schemas;
  SchemaSet property(std::string_view name) const;  // a member (or additionalProperties)
  SchemaSet items() const;                          // an array's element
  ParamTypes types() const;
};
// The `parameters` schema of a function in the request's tools (nullptr when the function is not
// declared or has no parameters object).
const Json* function_parameters(const Json& tools, std::string_view function);
// One tool definition of the request: its function object, name and parameters (one reader for
// every component, src/util/tool_definition.hpp).
using util::tool_function;
using util::tool_function_name;
using util::tool_parameters;
// Whether a parameters schema declares any property / the names it declares (sorted, once
// each): in its `properties`, or in those of the anyOf/oneOf/allOf branches at its root, local
// `$ref`s followed (one bounded walk).
bool schema_declares_properties(const Json& parameters);
std::vector<std::string> schema_property_names(const Json& parameters);

// The types a value's own type word names (K2 Horizon's `<ifm|arg_type>integer</ifm|arg_type>`,
// or an alias such as `int`): one type; `known` is false when the word names none.
ParamTypes named_types(std::string_view word);
// Whether a value's type word is `any` (any case): the value as written.
bool names_any_type(std::string_view word);
// The types a value is read by when the model named one (`named`, from named_types): the named
// type where the schema gives none, or where it allows several and the named one is among them
// (vLLM's and SGLang's K2 parsers narrow a union so); else the schema's, which decide.
ParamTypes narrowed_types(const ParamTypes& types, const ParamTypes& named);

// Whether an object value holds every key its object schema (types.object_schema) lists as
// `required`; true when there is no object schema.
bool holds_required(const Json& value, const ParamTypes& types);

// The JSON text for an XML parameter value under its schema types (raw string on failure).
std::string coerce_value(std::string_view raw, const ParamTypes& types, UntypedValues untyped,
                         bool* coerced_ok);

// ---- call lists: Python literals (python_literals.cpp); JSON and key-value (values.cpp) ----

// One whole Python literal (str, int, float, True/False/None, list, dict, tuple; nothing after
// it but whitespace) as JSON text.
bool python_literal_json(std::string_view text, std::size_t max_depth, std::string& json);
// Python call list: "[f(a=1), g(b='x')]", "f(a=1)\ng(b=2)" or "tool.call(query='x')". Returns
// false (and leaves `calls` partial) when the text is not such a list.
struct PyCall {
  std::string name;
  std::string arguments;      // JSON object text
  bool builtin_form = false;  // written `name.call(..)` (Llama 3's builtin tools); name without it
};
bool parse_python_calls(std::string_view text, std::vector<PyCall>& calls, std::string& error,
                        std::size_t max_depth);
// A JSON list of call objects `[{"name": "f", "arguments": {..}}, ..]` (or one object), as LFM2
// writes calls when its prompt lists the tools as JSON; false unless every element is one.
// `repeated_key`: set to a key an object in the list gives twice (the calls hold one value).
bool parse_json_call_list(std::string_view text, std::vector<PyCall>& calls, std::size_t max_depth,
                          std::string* repeated_key = nullptr);
// Whether a bare literal (a number, boolean or null written unquoted) given to a top-level
// argument of a function is that argument's text instead: its schema types it as a string.
using BareAsString =
    std::function<bool(std::string_view function, std::string_view argument, const Json& literal)>;
// One key-value call: `prefix name{key:value,...}`, values quoted by `quote` (strings), nested
// {..} / [..], or bare literals (true, 3, null; anything else is a string).
bool parse_key_value_call(std::string_view text, std::string_view prefix, std::string_view quote,
                          PyCall& call, std::string& error, std::size_t max_depth,
                          const BareAsString& bare_as_string = {});

}  // namespace chatwire::parse
