// The Endpoint: load a checkpoint once; prepare (validate -> adapt -> chat::render -> tokenize);
// generations (stream decode -> stop -> parse -> OpenAI deltas).
#include "chatwire/endpoint.hpp"

#include <algorithm>
#include <exception>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <utility>

#include "chatwire/adapt_json.hpp"
#include "chatwire/parse_json.hpp"
#include "chatwire/probe_json.hpp"
#include "chatwire/readback_json.hpp"
#include "chatwire/tokenized.hpp"
#include "endpoint/internal.hpp"
#include "parse/internal.hpp"
#include "util/json_text.hpp"
#include "util/utf8.hpp"

namespace chatwire::endpoint {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

constexpr std::string_view kWhitespace = " \t\r\n";

std::string_view strip(std::string_view s) {
  const auto b = s.find_first_not_of(kWhitespace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kWhitespace) - b + 1);
}

Error limit_error(const std::string& what, std::size_t limit, const std::string& path = {}) {
  return Error{"LimitError", what + " exceeds the limit (" + std::to_string(limit) + ")", 0, 0,
               path};
}

// A file of the model directory; nullopt when it does not exist.
Result<std::optional<std::string>> read_optional_file(const fs::path& file, std::size_t limit) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return std::optional<std::string>();
  const auto size = fs::file_size(file, ec);
  if (ec) return Error{"OSError", "cannot read " + file.string() + ": " + ec.message(), 0, 0, {}};
  if (size > limit) return limit_error(file.filename().string() + " size", limit);
  std::ifstream in(file, std::ios::binary);
  if (!in) return Error{"OSError", "cannot read " + file.string(), 0, 0, {}};
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return std::optional<std::string>(buffer.str());
}

// JSON text with a nesting limit; a syntax error names the byte position.
Result<json> parse_json_text(std::string_view text, std::size_t max_depth,
                             const std::string& what) {
  auto parsed = util::parse_bounded_json(text, max_depth);
  if (parsed.failure == util::BoundedJson::Failure::kTooDeep)
    return limit_error(what + " nesting", max_depth);
  if (!parsed)
    return Error{"JSONDecodeError", what + " is not valid JSON: " + parsed.what, 0, 0, {}};
  return std::move(parsed.value);
}

// generation_config.json's eos_token_id: an int or a list of ints; nullopt without the file or
// the key.
Result<std::optional<std::vector<std::uint32_t>>> read_generation_config(
    const fs::path& dir, const chat::InputLimits& limits) {
  using Ids = std::optional<std::vector<std::uint32_t>>;
  auto text = read_optional_file(dir / "generation_config.json", limits.max_file_bytes);
  if (!text) return text.error();
  if (!*text) return Ids();
  auto config = parse_json_text(**text, limits.max_json_depth, "generation_config.json");
  if (!config) return config.error();
  const auto bad = [](const std::string& path) {
    return Error{"ValueError",
                 "generation_config.json: eos_token_id must be a token id or a list of them", 0, 0,
                 path};
  };
  if (!config->is_object()) return bad("");
  auto it = config->find("eos_token_id");
  if (it == config->end() || it->is_null()) return Ids();
  std::vector<std::uint32_t> ids;
  const auto add = [&](const json& v, const std::string& path) -> Status {
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > 0xFFFFFFFFu) return bad(path);
    ids.push_back(static_cast<std::uint32_t>(v.get<std::uint64_t>()));
    return Status{std::monostate{}};
  };
  if (it->is_array()) {
    for (std::size_t i = 0; i < it->size(); ++i)
      if (auto s = add((*it)[i], "eos_token_id[" + std::to_string(i) + "]"); !s) return s.error();
  } else if (auto s = add(*it, "eos_token_id"); !s) {
    return s.error();
  }
  return Ids(std::move(ids));
}

template <typename T>
void add_unique(std::vector<T>& list, T value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(std::move(value));
}

Adaptation convert(const adapt::Adaptation& a) {
  return Adaptation{a.code, a.finding, a.detail};
}

}  // namespace

// ---------------------------------------------------------------------------------------
// The parser state.
// ---------------------------------------------------------------------------------------

// The marker that opens reasoning, for telling whether a prompt ends inside it: the one the probe
// measured around the current turn's reasoning; else, where the probe found that the generation
// prompt opens reasoning, the generation prompt's last marker (QwQ's "<|im_start|>assistant\n
// <think>\n"), unless that marker closes something ("...<think>\n\n</think>\n\n").
std::string reasoning_open_marker(const probe::Profile& profile) {
  if (profile.reasoning.open && !strip(*profile.reasoning.open).empty())
    return std::string(strip(*profile.reasoning.open));
  if (!profile.reasoning.prompt_opens || !profile.frame.generation_prompt) return "";
  const std::string_view prompt = strip(*profile.frame.generation_prompt);
  if (!prompt.ends_with('>')) return "";
  const auto open = prompt.rfind('<');
  if (open == std::string_view::npos || prompt.substr(open).starts_with("</")) return "";
  return std::string(prompt.substr(open));
}

// ---------------------------------------------------------------------------------------
// Endpoint
// ---------------------------------------------------------------------------------------

Endpoint::Endpoint(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

namespace {

// The probe's and the parser derivation's options: LoadOptions::probe_limits for each render.
probe::Options probe_options(const LoadOptions& options) {
  probe::Options out;
  if (options.probe_limits) out.limits = *options.probe_limits;
  return out;
}

}  // namespace

// The output parser: the dialect named by LoadOptions::dialect; else a cached choice
// (LoadOptions::parser_json); else derived from the template's own renders and proven by the
// round trip (readback::choose_parser, with the stop strings as end-of-turn markers). When the
// template's calls cannot be read back, the parser reads reasoning only (or nothing) and the
// Endpoint serves content, with the verdict as a warning: never a silent guess.
Status choose_parser(Endpoint::Impl& impl, const LoadOptions& options) {
  ParserChoice& parser = impl.parser;
  if (!options.dialect.empty()) {
    auto syntax = parse::Syntax::named(options.dialect);
    if (!syntax)
      return Error{"ValueError", "unknown dialect '" + options.dialect + "'", 0, 0, "dialect"};
    parser.syntax = std::move(*syntax);
    parser.calls_read_back = parser.syntax->has_tool_calls();
    parser.verdict = "named by LoadOptions::dialect";
    return Status{std::monostate{}};
  }
  if (!options.parser_json.empty()) {
    auto cached = parse_json_text(options.parser_json, options.input.max_json_depth, "parser");
    if (!cached) return cached.error();
    auto loaded = parser_from_json(*cached);
    if (!loaded) return loaded.error();
    parser = std::move(*loaded);
    return Status{std::monostate{}};
  }
  auto choice = readback::choose_parser(
      probe::template_renderer(*impl.tmpl, impl.model->special_tokens(), probe_options(options)),
      impl.profile, impl.stop_strings);
  parser.syntax = std::move(choice.syntax);
  parser.calls_read_back = choice.calls_read_back;
  parser.verdict = choice.verdict;
  if (choice.calls_rendered && !choice.calls_read_back) {
    parser.warning = choice.verdict.empty()
                         ? std::string("tool calls of this template cannot be read back")
                         : choice.verdict;
    if (choice.template_bug)
      parser.warning += " (template bug: " + choice.template_bug->cause + ": " +
                        choice.template_bug->evidence + ")";
    parser.warning += "; tool calls are served as content";
    impl.warnings.push_back(parser.warning);
  }
  return Status{std::monostate{}};
}

json parser_to_json(const ParserChoice& parser) {
  return {{"syntax", parser.syntax ? parse::to_json(*parser.syntax) : json(nullptr)},
          {"calls_read_back", parser.calls_read_back},
          {"verdict", parser.verdict},
          {"warning", parser.warning}};
}

Result<ParserChoice> parser_from_json(const json& j) {
  const auto bad = [](const std::string& path, const std::string& what) {
    return Error{"ValueError", "parser JSON: " + what, 0, 0, path};
  };
  if (!j.is_object()) return bad("", "must be an object");
  ParserChoice out;
  auto syntax = j.find("syntax");
  if (syntax == j.end()) return bad("syntax", "is missing");
  if (!syntax->is_null()) {
    auto loaded = parse::syntax_from_json(*syntax);
    if (!loaded) {
      Error e = loaded.error();
      e.path = e.path.empty() ? "syntax" : "syntax." + e.path;
      return e;
    }
    out.syntax = std::move(*loaded);
  }
  for (const char* key : {"verdict", "warning"}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return bad(key, "must be a string");
    (std::string_view(key) == "verdict" ? out.verdict : out.warning) = it->get<std::string>();
  }
  auto read_back = j.find("calls_read_back");
  if (read_back == j.end() || !read_back->is_boolean())
    return bad("calls_read_back", "must be a boolean");
  out.calls_read_back = read_back->get<bool>();
  return out;
}

Result<Endpoint> Endpoint::load(const fs::path& dir, const LoadOptions& options) {
  auto impl = std::make_shared<Impl>();
  auto model = chat::Model::load(dir, options.compile, options.input);
  if (!model) return model.error();
  impl->model.emplace(std::move(*model));
  auto tmpl = impl->model->select(options.template_name, /*tools_given=*/true);
  if (!tmpl) return tmpl.error();
  impl->tmpl = *tmpl;
  impl->input = options.input;

  if (!options.profile_json.empty()) {
    auto parsed = parse_json_text(options.profile_json, options.input.max_json_depth, "profile");
    if (!parsed) return parsed.error();
    auto profile = probe::profile_from_json(*parsed);
    if (!profile) return profile.error();
    impl->profile = std::move(*profile);
  } else {
    impl->profile =
        probe::probe_template(*impl->tmpl, impl->model->special_tokens(), probe_options(options));
    impl->profile.name = dir.filename().string();
  }
  const probe::Profile& profile = impl->profile;
  // A cached parser is checked before the (slow) tokenizer load, so a bad cache fails fast.
  if (!options.parser_json.empty() && options.dialect.empty()) {
    auto cached = parse_json_text(options.parser_json, options.input.max_json_depth, "parser");
    if (!cached) return cached.error();
    if (auto loaded = parser_from_json(*cached); !loaded) return loaded.error();
  }

  std::error_code ec;
  if (fs::is_regular_file(dir / "tokenizer.json", ec)) {
    auto tokenizer = tokenize::Tokenizer::load_dir(dir.string(), options.tokenizer);
    if (!tokenizer) return tokenizer.error();
    impl->tokenizer.emplace(std::move(*tokenizer));
  } else {
    impl->warnings.push_back("no tokenizer.json: prompts are text only and generations take text");
  }

  impl->open_marker = reasoning_open_marker(profile);
  impl->call_ids = !profile.accepts("long_call_id") && profile.accepts("short_call_id")
                       ? CallIdStyle::short9
                       : CallIdStyle::openai;

  // Stops: generation_config.json (or the tokenizer's EOS), then the measured end-of-turn marker.
  auto eos = read_generation_config(dir, options.input);
  if (!eos) return eos.error();
  const tokenize::Tokenizer* tokenizer = impl->tokenizer ? &*impl->tokenizer : nullptr;
  if (*eos) {
    for (auto id : **eos) add_unique(impl->stop_ids, id);
  } else if (tokenizer != nullptr) {
    if (auto token = tokenizer->eos_token())
      if (auto id = tokenizer->token_to_id(*token)) add_unique(impl->stop_ids, *id);
  }
  if (profile.frame.assistant_suffix) {
    const std::string marker(strip(*profile.frame.assistant_suffix));
    if (!marker.empty()) {
      impl->end_marker = marker;
      add_unique(impl->stop_strings, marker);
      if (tokenizer != nullptr)
        if (auto id = tokenizer->token_to_id(marker)) add_unique(impl->stop_ids, *id);
    }
  }
  if (tokenizer != nullptr)
    for (auto id : impl->stop_ids)
      if (auto token = tokenizer->id_to_token(id); token && tokenizer->is_special(id))
        add_unique(impl->stop_strings, *token);

  if (auto st = choose_parser(*impl, options); !st) return st.error();
  return Endpoint(std::move(impl));
}

const chat::Model& Endpoint::model() const noexcept {
  return *impl_->model;
}
const jinja::Template& Endpoint::chat_template() const noexcept {
  return *impl_->tmpl;
}
const tokenize::Tokenizer* Endpoint::tokenizer() const noexcept {
  return impl_->tokenizer ? &*impl_->tokenizer : nullptr;
}
const probe::Profile& Endpoint::profile() const noexcept {
  return impl_->profile;
}
std::string Endpoint::profile_json() const {
  return impl_->profile.to_json_text();
}
std::string_view Endpoint::dialect() const noexcept {
  return impl_->parser.syntax ? std::string_view(impl_->parser.syntax->name()) : std::string_view();
}
bool Endpoint::tool_calls_read_back() const noexcept {
  return impl_->parser.calls_read_back;
}
std::string Endpoint::parser_json() const {
  return parser_to_json(impl_->parser).dump();
}
CallIdStyle Endpoint::call_ids() const noexcept {
  return impl_->call_ids;
}
std::span<const std::uint32_t> Endpoint::stop_ids() const noexcept {
  return impl_->stop_ids;
}
std::span<const std::string> Endpoint::stop_strings() const noexcept {
  return impl_->stop_strings;
}
namespace {

// Whether `text` is the token of one of `stop_ids`.
bool is_stop_id_token(const Endpoint::Impl& impl, std::span<const std::uint32_t> stop_ids,
                      std::string_view text) {
  if (!impl.tokenizer) return false;
  const auto id = impl.tokenizer->token_to_id(text);
  return id && std::find(stop_ids.begin(), stop_ids.end(), *id) != stop_ids.end();
}

}  // namespace

bool Endpoint::stops_by_id(const Prompt& prompt, std::string_view text) const {
  return is_stop_id_token(*impl_, prompt.stop_ids, text);
}
const std::vector<std::string>& Endpoint::warnings() const noexcept {
  return impl_->warnings;
}

// ---------------------------------------------------------------------------------------
// prepare
// ---------------------------------------------------------------------------------------

namespace {

Error request_error(std::string path, std::string message) {
  return Error{"RequestError", std::move(message), 0, 0, std::move(path)};
}

// The request's enable_thinking (top level or chat_template_kwargs, as the template sees it).
std::optional<bool> enable_thinking(const Value& kwargs) {
  const Value* v = kwargs.is_dict() ? kwargs.dict_find(Value("enable_thinking")) : nullptr;
  if (v == nullptr || !v->is_bool()) return std::nullopt;
  return v->as_bool();
}

}  // namespace

Result<Prompt> prepare_json(const Endpoint::Impl& impl, const json& request,
                            const PrepareOptions& options) {
  if (!request.is_object()) return request_error("", "the request is not a JSON object");
  if (request.contains("chat_template"))
    return request_error("chat_template",
                         "an Endpoint serves one template, chosen when it is loaded "
                         "(LoadOptions::template_name)");
  if (auto tools = request.find("tools");
      tools != request.end() && tools->is_array() && tools->size() > options.max_tools)
    return limit_error("the number of tools", options.max_tools, "tools");

  Prompt prompt;
  // Checked before the render: a bad tool_choice costs nothing.
  if (auto forced = read_tool_choice(request, prompt); !forced) return forced.error();

  adapt::Options adapt_options;
  adapt_options.call_syntax = options.call_syntax;
  adapt_options.special_tokens = impl.model->special_tokens();
  adapt_options.verify = true;
  adapt_options.limits = options.limits;
  adapt_options.now = options.now;  // "" = the real clock
  adapt_options.mode = options.mode;
  adapt_options.assistant_mask = options.assistant_mask;
  auto adapted = adapt::adapt_request(request, impl.profile, *impl.tmpl, adapt_options);
  if (!adapted) return adapted.error();

  chat::ChatResult& rendered = *adapted->rendered;
  for (const auto& a : adapted->adaptations) prompt.adaptations.push_back(convert(a));
  prompt.warnings = std::move(adapted->warnings);
  for (auto& w : rendered.warnings) prompt.warnings.push_back(std::move(w));
  rendered.warnings.clear();

  const tokenize::Tokenizer* tokenizer = impl.tokenizer ? &*impl.tokenizer : nullptr;
  if ((options.tokenize || options.assistant_mask) && tokenizer == nullptr)
    prompt.warnings.push_back("no tokenizer.json: the prompt is not tokenized");
  if (tokenizer != nullptr && options.assistant_mask) {
    // transformers' apply_chat_template(tokenize=True, return_assistant_tokens_mask=True).
    auto tokenized = chat::tokenize_rendered(std::move(rendered), *tokenizer);
    if (!tokenized) return tokenized.error();
    prompt.text = std::move(tokenized->chat.text);
    prompt.generation = std::move(tokenized->chat.generation);
    prompt.ids = std::move(tokenized->input_ids);
    prompt.assistant_masks = std::move(tokenized->assistant_masks);
  } else {
    prompt.text = std::move(rendered.text);
    prompt.generation = std::move(rendered.generation);
    if (tokenizer != nullptr && options.tokenize) {
      // add_special_tokens=False, as transformers: the template writes its own BOS.
      auto ids = tokenizer->encode_ids(prompt.text, /*add_special_tokens=*/false);
      if (!ids) return ids.error();
      prompt.ids = std::move(*ids);
    }
  }

  prompt.stop_ids = impl.stop_ids;
  prompt.stop_strings = impl.stop_strings;
  for (const auto& s : prompt.stop_strings)
    if (!is_stop_id_token(impl, prompt.stop_ids, s)) prompt.engine_stop_strings.push_back(s);
  prompt.dialect = impl.parser.syntax ? impl.parser.syntax->name() : std::string();
  prompt.tool_calls_read_back = impl.parser.calls_read_back;
  if (!adapted->taught_call_syntax.empty()) {
    prompt.taught_dialect = adapt::call_syntax_dialect(adapted->taught_call_syntax);
    prompt.dialect = prompt.taught_dialect;
    prompt.tool_calls_read_back = true;
  }
  prompt.call_ids = impl.call_ids;
  prompt.enable_thinking = enable_thinking(adapted->request.kwargs);
  if (!impl.open_marker.empty() && prompt.enable_thinking != false)
    prompt.reasoning_prefilled = strip(prompt.text).ends_with(impl.open_marker);
  if (auto tools = request.find("tools");
      tools != request.end() && tools->is_array() && !tools->empty())
    prompt.tools_json = tools->dump();
  // response_format's JSON: the engine that honours it constrains the output.
  if (auto rf = request.find("response_format"); rf != request.end() && rf->is_object())
    if (auto type = rf->find("type");
        type != rf->end() && (*type == "json_object" || *type == "json_schema"))
      prompt.output_constrained = true;
  if (!impl.parser.warning.empty() && request.contains("tools"))
    prompt.warnings.push_back(impl.parser.warning);
  return prompt;
}

Result<Prompt> Endpoint::prepare(std::string_view openai_request,
                                 const PrepareOptions& options) const {
  const chat::InputLimits& limits = impl_->input;
  if (openai_request.size() > limits.max_request_bytes)
    return limit_error("the request size", limits.max_request_bytes);
  auto request = parse_json_text(openai_request, limits.max_json_depth, "the request");
  if (!request) return request.error();
  try {
    return prepare_json(*impl_, *request, options);
  } catch (const std::exception& e) {  // a shape the checks missed: an error, never a crash
    return Error{
        "RequestError", std::string("the request could not be read: ") + e.what(), 0, 0, {}};
  }
}

// ---------------------------------------------------------------------------------------
// Generation
// ---------------------------------------------------------------------------------------

namespace {

// Ids the parser makes up start with this (never a character a model writes in an id), so the
// Endpoint can tell them from the ids a model wrote itself (Mistral, Kimi), which are kept.
constexpr std::string_view kParserIdPrefix = "\x1f";

constexpr std::string_view kAlphanumerics =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

}  // namespace

struct Generation::Impl {
  std::optional<tokenize::DecodeStream> decoder;
  std::optional<parse::StreamParser> parser;  // nullopt: content only
  std::vector<std::uint32_t> stop_ids;
  std::vector<std::string> stop_strings;
  // Those of stop_strings that are a stop id's token: matched by the id where ids are pushed.
  std::vector<bool> by_id;
  bool ids_pushed = false;  // the text comes from push(ids)
  std::string held;         // a suffix that may still become a stop string
  bool stopped = false, finished = false;
  CallIdStyle style = CallIdStyle::openai;
  std::mt19937_64 random;
  std::vector<std::string> ids;  // by call index
  std::set<std::string> used_ids;
  parse::Message plain;  // the content-only message
  mutable Message message;
  mutable bool message_stale = true;
  std::vector<Warning> own_warnings;
  // tool_choice required / named (the prompt's forced_calls): the constrained JSON is read
  // here, not by the template's parser.
  ForcedCalls forced = ForcedCalls::none;
  std::string forced_name;
  std::string forced_text;  // required: the JSON list, read when the generation ends
  std::size_t max_depth = 512;
  // parallel_tool_calls false: the generation is cut where call `max_tool_calls` begins; what
  // was emitted before the cut is the message.
  std::size_t max_tool_calls = 0;
  bool cut = false;
  std::size_t emitted_content = 0, emitted_reasoning = 0;
  // For reasoning_tokens(): the reasoning markers (an empty close: the parser has no reasoning
  // block) and the ids pushed before a stop id.
  const tokenize::Tokenizer* tokenizer = nullptr;
  std::string think_open, think_close;
  std::vector<std::uint32_t> pushed;
  // Content only and a named call's arguments: a character cut by the end of a piece, held so no
  // delta splits it (the parser holds its own).
  std::string partial_char;

  std::string new_id() {
    for (;;) {
      std::string id = style == CallIdStyle::short9 ? std::string() : std::string("call_");
      const std::size_t n = style == CallIdStyle::short9 ? 9 : 24;
      std::uniform_int_distribution<std::size_t> pick(0, kAlphanumerics.size() - 1);
      for (std::size_t i = 0; i < n; ++i) id += kAlphanumerics[pick(random)];
      if (used_ids.insert(id).second) return id;
    }
  }
  // The id of call `index`: the model's own when it wrote one (and it is new), else a new one.
  const std::string& id_for(std::size_t index, const std::string& parser_id) {
    while (ids.size() <= index) {
      const std::string& source = ids.size() == index ? parser_id : std::string();
      if (!source.empty() && !source.starts_with(kParserIdPrefix) && used_ids.insert(source).second)
        ids.push_back(source);
      else
        ids.push_back(new_id());
    }
    return ids[index];
  }

  // Cuts `text` at the first stop string; holds back a suffix that may begin one. With `ids`
  // (the text was decoded from pushed ids) a stop string that is a stop id's token is left to
  // the id: the same characters in the text are other tokens, written by the model.
  std::string scan(std::string_view text, bool ids) {
    std::string buffer = std::move(held);
    held.clear();
    buffer.append(text);
    // The stop string that is complete first, as text arriving piece by piece meets it (the
    // match that ends first; "c" before "abcd" in "zabcd"), so the cut is the same whatever the
    // chunking; its start is where the message ends.
    std::size_t cut = std::string::npos, cut_end = std::string::npos;
    for (std::size_t i = 0; i < stop_strings.size(); ++i) {
      if (ids && by_id[i]) continue;
      const std::size_t at = buffer.find(stop_strings[i]);
      if (at == std::string::npos) continue;
      const std::size_t end = at + stop_strings[i].size();
      if (end < cut_end || (end == cut_end && at < cut)) {
        cut = at;
        cut_end = end;
      }
    }
    if (cut != std::string::npos) {
      stopped = true;
      buffer.resize(cut);
      return buffer;
    }
    std::size_t keep = 0;
    for (std::size_t i = 0; i < stop_strings.size(); ++i) {
      if (ids && by_id[i]) continue;
      const std::string& s = stop_strings[i];
      for (std::size_t k = std::min(s.size() - 1, buffer.size()); k > keep; --k)
        if (std::string_view(buffer).substr(buffer.size() - k) ==
            std::string_view(s).substr(0, k)) {
          keep = k;
          break;
        }
    }
    held = buffer.substr(buffer.size() - keep);
    buffer.resize(buffer.size() - keep);
    return buffer;
  }

  std::vector<Delta> convert(std::vector<parse::Delta> deltas) {
    std::vector<Delta> out;
    out.reserve(deltas.size());
    for (auto& d : deltas) {
      Delta e{std::move(d.content), std::move(d.reasoning_content), {}};
      for (auto& c : d.tool_calls) {
        ToolCallDelta t{c.index, {}, std::move(c.name), std::move(c.arguments)};
        if (!c.id.empty()) t.id = id_for(c.index, c.id);
        e.tool_calls.push_back(std::move(t));
      }
      out.push_back(std::move(e));
    }
    if (!out.empty()) message_stale = true;
    return out;
  }

  // Ends the generation at the first delta of call `max_tool_calls` (parallel_tool_calls
  // false): the rest of that delta and everything after it is not part of the message.
  std::vector<Delta> limit(std::vector<Delta> deltas) {
    for (std::size_t i = 0; i < deltas.size() && max_tool_calls != 0; ++i) {
      auto& calls = deltas[i].tool_calls;
      const auto over = std::find_if(calls.begin(), calls.end(), [&](const ToolCallDelta& c) {
        return c.index >= max_tool_calls;
      });
      if (over == calls.end()) continue;
      calls.erase(over, calls.end());
      const Delta& last = deltas[i];
      const bool empty =
          last.content.empty() && last.reasoning_content.empty() && last.tool_calls.empty();
      deltas.resize(empty ? i : i + 1);  // the cut call's delta held only that call
      cut = stopped = true;
    }
    for (const auto& d : deltas) {
      emitted_content += d.content.size();
      emitted_reasoning += d.reasoning_content.size();
    }
    return deltas;
  }

  // ForcedCalls::named: every generated byte is the one call's arguments.
  std::vector<Delta> feed_named(std::string_view text) {
    ToolCallDelta call{0, {}, {}, std::string(text)};
    if (plain.tool_calls.empty()) {
      plain.tool_calls.push_back({{}, forced_name, {}});
      call.id = id_for(0, {});
      call.name = forced_name;
    }
    plain.tool_calls[0].arguments.append(text);
    message_stale = true;
    return {Delta{{}, {}, {std::move(call)}}};
  }

  // ForcedCalls::required at the end: the JSON list of {"name", "parameters"} as calls. Output
  // that is not such a list (an engine that did not constrain, a cut-off generation) is kept as
  // content with a warning.
  std::vector<Delta> read_required() {
    auto parsed = util::parse_bounded_json(forced_text, max_depth);
    bool ok = parsed && parsed.value.is_array() && !parsed.value.empty();
    std::vector<parse::ToolCall> calls;
    for (std::size_t i = 0; ok && i < parsed.value.size(); ++i) {
      const json& item = parsed.value[i];
      auto name = item.is_object() ? item.find("name") : item.end();
      auto args = item.is_object() ? item.find("parameters") : item.end();
      ok = name != item.end() && name->is_string() && args != item.end() && args->is_object();
      if (ok)
        calls.push_back({{},
                         name->get<std::string>(),
                         args->dump(-1, ' ', false, json::error_handler_t::replace)});
    }
    message_stale = true;
    if (!ok) {
      own_warnings.push_back({"forced_calls_unreadable",
                              "tool_choice asked for calls, but the output is not a JSON list of "
                              "{\"name\", \"parameters\"} objects: kept as content",
                              0});
      plain.content = forced_text;
      return {Delta{forced_text, {}, {}}};
    }
    if (max_tool_calls != 0 && calls.size() > max_tool_calls) {
      // An engine that ignored the schema's maxItems (parallel_tool_calls false): the first calls
      // stand, as where the model writes calls itself; the rest is reported, not dropped quietly.
      own_warnings.push_back(
          {"call_limit",
           "parallel_tool_calls is false: " + std::to_string(calls.size() - max_tool_calls) +
               " further call(s) of the output left out",
           0});
      calls.resize(max_tool_calls);
      cut = stopped = true;
    }
    Delta d;
    for (std::size_t i = 0; i < calls.size(); ++i)
      d.tool_calls.push_back({i, id_for(i, {}), calls[i].name, calls[i].arguments});
    plain.tool_calls = std::move(calls);
    return {std::move(d)};
  }

  // `final`: nothing follows `text`, so a character it cuts is flushed as it is.
  std::vector<Delta> feed(std::string_view text, bool final) {
    if (cut) return {};
    if (forced == ForcedCalls::required) {
      forced_text.append(text);
      return {};
    }
    if (parser) return text.empty() ? std::vector<Delta>{} : limit(convert(parser->feed(text)));
    std::string whole = std::move(partial_char);
    whole.append(text);
    partial_char = whole.substr(final ? whole.size() : util::utf8::complete_prefix(whole));
    whole.resize(whole.size() - partial_char.size());
    if (whole.empty()) return {};
    if (forced == ForcedCalls::named) return feed_named(whole);
    plain.content.append(whole);
    message_stale = true;
    return {Delta{std::move(whole), {}, {}}};
  }

  // Text generated (`ids`: decoded from ids); `final` when nothing follows it (a stop id or
  // the end).
  std::vector<Delta> take(std::string_view text, bool final, bool ids) {
    std::string emitted = scan(text, ids);
    if (final || stopped) {
      emitted += held;  // what was held can no longer become a stop string
      held.clear();
    }
    return feed(emitted, final || stopped);
  }

  const parse::Message& parsed() const {
    return parser && forced == ForcedCalls::none ? parser->message() : plain;
  }
};

Generation::Generation(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Generation::Generation(Generation&&) noexcept = default;
Generation& Generation::operator=(Generation&&) noexcept = default;
Generation::~Generation() = default;

namespace {

Error finished_error() {
  return Error{"ValueError", "the generation has finished", 0, 0, {}};
}

void append(std::vector<Delta>& to, std::vector<Delta> from) {
  for (auto& d : from) to.push_back(std::move(d));
}

}  // namespace

Result<std::vector<Delta>> Generation::push(std::span<const std::uint32_t> ids) {
  Impl& g = *impl_;
  if (g.finished) return finished_error();
  if (!g.decoder)
    return Error{"ValueError", "the Endpoint has no tokenizer.json: use push_text", 0, 0, {}};
  if (g.stopped) return std::vector<Delta>{};
  // The ids before the first stop id, decoded at once: an id the tokenizer cannot decode is an
  // error that leaves the generation as it was (nothing decoded before it is lost).
  const auto stop =
      std::find_first_of(ids.begin(), ids.end(), g.stop_ids.begin(), g.stop_ids.end());
  const bool stop_id = stop != ids.end();
  auto piece = g.decoder->push(ids.first(static_cast<std::size_t>(stop - ids.begin())));
  if (!piece) return piece.error();
  std::string text = std::move(*piece);
  if (stop_id) {
    auto rest = g.decoder->finish();
    if (!rest) return rest.error();
    text += *rest;
  }
  g.ids_pushed = true;
  if (!g.think_close.empty()) g.pushed.insert(g.pushed.end(), ids.begin(), stop);
  auto deltas = g.take(text, stop_id, true);
  if (stop_id) g.stopped = true;
  return deltas;
}

Result<std::vector<Delta>> Generation::push_text(std::string_view text) {
  Impl& g = *impl_;
  if (g.finished) return finished_error();
  if (g.stopped) return std::vector<Delta>{};
  return g.take(text, false, false);
}

Result<std::vector<Delta>> Generation::finish() {
  Impl& g = *impl_;
  if (g.finished) return finished_error();
  std::vector<Delta> out;
  std::string rest;
  if (!g.stopped && g.decoder) {
    auto tail = g.decoder->finish();
    if (!tail) return tail.error();
    rest = std::move(*tail);
  }
  if (!g.stopped) append(out, g.take(rest, true, g.ids_pushed));
  if (g.forced == ForcedCalls::required) append(out, g.read_required());
  if (g.forced == ForcedCalls::named) {
    if (g.plain.tool_calls
            .empty())  // nothing generated: the call is still the answer, no arguments
      append(out, g.feed_named("{}"));
    // The engine was asked to constrain the output to the function's parameters; one that did
    // not (or was cut off) leaves arguments that are no JSON object: kept, and said.
    const std::string& arguments = g.plain.tool_calls[0].arguments;
    const auto parsed = util::parse_bounded_json(arguments, g.max_depth);
    if (!parsed || !parsed.value.is_object())
      g.own_warnings.push_back({"invalid_arguments",
                                "tool_choice named " + g.forced_name +
                                    ", but the output is not a JSON object of its arguments: kept "
                                    "as written",
                                0});
  }
  if (g.parser && g.forced == ForcedCalls::none && !g.cut)
    append(out, g.limit(g.convert(g.parser->finish())));
  g.finished = true;
  g.message_stale = true;
  return out;
}

const Message& Generation::message() const {
  Impl& g = *impl_;
  if (g.message_stale) {
    const parse::Message& m = g.parsed();
    g.message.content = m.content;
    g.message.reasoning_content = m.reasoning_content;
    g.message.tool_calls.clear();
    std::size_t calls = m.tool_calls.size();
    if (g.cut) {  // the parser read on past the cut: the message is what was emitted
      g.message.content.resize(std::min(g.message.content.size(), g.emitted_content));
      g.message.reasoning_content.resize(
          std::min(g.message.reasoning_content.size(), g.emitted_reasoning));
      calls = std::min(calls, g.max_tool_calls);
    }
    for (std::size_t i = 0; i < calls; ++i)
      g.message.tool_calls.push_back(
          {g.id_for(i, m.tool_calls[i].id), m.tool_calls[i].name, m.tool_calls[i].arguments});
    g.message_stale = false;
  }
  return g.message;
}

std::vector<Warning> Generation::warnings() const {
  std::vector<Warning> out = impl_->own_warnings;
  if (impl_->parser)
    for (const auto& w : impl_->parser->warnings()) out.push_back({w.code, w.message, w.offset});
  return out;
}

bool Generation::stopped() const {
  return impl_->stopped;
}

std::size_t Generation::reasoning_tokens() const {
  const Impl& g = *impl_;
  if (g.think_close.empty() || g.pushed.empty() || !g.tokenizer) return 0;
  // An empty block (`<think>\n\n</think>`, thinking off) is no reasoning: the message has none.
  if (impl_->parsed().reasoning_content.empty()) return 0;
  // Each id's place in the text, decoded again one id at a time, without transformers' clean-up
  // (which holds text back after a space, so a place would lag behind its id).
  tokenize::DecodeOptions exact;
  exact.clean_up_tokenization_spaces = false;
  tokenize::DecodeStream decoder(*g.tokenizer, exact);
  std::string text;
  std::vector<std::size_t> starts;
  starts.reserve(g.pushed.size());
  for (const std::uint32_t id : g.pushed) {
    starts.push_back(text.size());
    auto piece = decoder.push(id);
    if (!piece) return 0;  // cannot happen: the generation decoded the same ids
    text += *piece;
  }
  // The blocks: [after the opener, before the close's first marker).
  std::vector<std::pair<std::size_t, std::size_t>> blocks;
  const std::size_t first_open = g.think_open.empty() ? std::string::npos : text.find(g.think_open);
  const std::size_t first_close = text.find(g.think_close);
  std::size_t at = 0;
  if (first_open == std::string::npos || first_close < first_open) {
    // A block the prompt opened, or one whose opener the model skipped and the parser still read
    // (Dialect::reasoning_until_close).
    blocks.emplace_back(0, std::min(first_close, text.size()));
    at = first_close == std::string::npos ? text.size() : first_close + g.think_close.size();
  }
  while (!g.think_open.empty() && at < text.size()) {  // gpt-oss: an analysis message per step
    const std::size_t open = text.find(g.think_open, at);
    if (open == std::string::npos) break;
    const std::size_t start = open + g.think_open.size();
    const std::size_t close = text.find(g.think_close, start);
    blocks.emplace_back(start, std::min(close, text.size()));
    at = close == std::string::npos ? text.size() : close + g.think_close.size();
  }
  // Both lists are in text order: one pass over the two.
  std::size_t count = 0, b = 0;
  for (const std::size_t s : starts) {
    while (b < blocks.size() && blocks[b].second <= s) ++b;
    if (b == blocks.size()) break;
    count += s >= blocks[b].first;
  }
  return count;
}

bool Generation::call_limit_reached() const {
  return impl_->cut;
}

bool arguments_are_whole(std::string_view arguments) {
  return arguments.empty() || json::parse(arguments, nullptr, false).is_object();
}

bool calls_are_whole(const Message& message) {
  return !message.tool_calls.empty() &&
         std::all_of(message.tool_calls.begin(), message.tool_calls.end(),
                     [](const ToolCall& call) { return arguments_are_whole(call.arguments); });
}

std::string_view Generation::finish_reason() const {
  if (calls_are_whole(message())) return "tool_calls";
  return impl_->stopped ? "stop" : "length";
}

Result<Generation> Endpoint::start(const Prompt& prompt) const {
  auto g = std::make_unique<Generation::Impl>();
  if (impl_->tokenizer) g->decoder.emplace(*impl_->tokenizer);
  g->stop_ids = prompt.stop_ids;
  g->stop_strings.clear();
  for (const auto& s : prompt.stop_strings)
    if (!s.empty()) {
      g->stop_strings.push_back(s);
      g->by_id.push_back(stops_by_id(prompt, s));
    }
  g->style = prompt.call_ids;
  g->forced = prompt.forced_calls;
  g->forced_name = prompt.forced_name;
  g->max_tool_calls = prompt.max_tool_calls;
  g->max_depth = impl_->input.max_json_depth;
  std::random_device seed;
  g->random.seed((static_cast<std::uint64_t>(seed()) << 32) ^ seed());
  // The Endpoint's parser (a prompt is prepared by its Endpoint), or the calls the prompt taught
  // inside the template's framing.
  std::optional<parse::Syntax> taught;
  if (!prompt.taught_dialect.empty()) {
    auto row = parse::Syntax::named(prompt.taught_dialect);
    if (!row) return row.error();
    taught = impl_->parser.syntax ? parse::Syntax::with_calls(*impl_->parser.syntax, *row)
                                  : std::move(*row);
  }
  const parse::Syntax* syntax = taught                 ? &*taught
                                : impl_->parser.syntax ? &*impl_->parser.syntax
                                                       : nullptr;
  std::optional<parse::Syntax> without;
  if (syntax && !prompt.tool_calls_allowed)
    if ((without = parse::Syntax::without_calls(*syntax))) syntax = &*without;
  std::optional<parse::Syntax> constrained;
  if (syntax && prompt.output_constrained && !syntax->data().dialect.think_close.empty()) {
    parse::Dialect d = syntax->data().dialect;
    d.starts_in_reasoning = false;
    d.reasoning_until_close = true;
    constrained = parse::make_syntax(d, syntax->name(), syntax->summary() + " output_constrained");
    syntax = &*constrained;
  }
  if (syntax && prompt.forced_calls == ForcedCalls::none) {
    json tools = json::array();
    if (!prompt.tools_json.empty()) {
      auto parsed = parse_json_text(prompt.tools_json, impl_->input.max_json_depth, "tools");
      if (!parsed) return parsed.error();
      tools = std::move(*parsed);
    }
    parse::Options options;
    options.reasoning_prefilled = prompt.reasoning_prefilled && !constrained;
    if (prompt.enable_thinking == false) options.enable_thinking = false;
    options.id_prefix = std::string(kParserIdPrefix);
    // A call to a function the request did not declare is returned, whatever the dialect's
    // reference parser does: an OpenAI response has no field for parser warnings, so a dropped
    // call would vanish from the gateway's answer without a trace.
    options.forward_unknown_tools = true;
    auto parser = parse::stream_parser(*syntax, tools, options);
    if (!parser) return parser.error();
    g->parser.emplace(std::move(*parser));
    // The reasoning markers, to count reasoning tokens as vLLM does.
    const parse::Dialect& dialect = syntax->data().dialect;
    // The close's first marker: what ends the block whatever follows it (a derived gpt-oss
    // parser's close is `<|end|><|start|>assistant<|channel|>final<|message|>`, and an analysis
    // message may end before a call instead).
    std::string_view close = strip(dialect.think_close);
    if (!close.empty() && (close[0] == '<' || close[0] == '['))
      if (const auto end = close.find(close[0] == '<' ? '>' : ']'); end != std::string_view::npos)
        close = close.substr(0, end + 1);
    if (impl_->tokenizer && !close.empty()) {
      g->tokenizer = &*impl_->tokenizer;
      g->think_open = strip(dialect.think_open);
      g->think_close = close;
    }
  }
  return Generation(std::move(g));
}

}  // namespace chatwire::endpoint
