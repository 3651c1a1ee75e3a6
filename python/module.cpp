// chatwire._chatwire: the C++ side of `import chatwire` (pybind11). It converts Python objects
// to chatwire Values once, releases the GIL while the library renders and tokenizes, and runs
// batches on threads. The transformers- and tokenizers-shaped API (argument checks, return
// shapes, exception classes) is in python/chatwire/__init__.py, which calls these functions.
//
// Errors: library failures are chatwire::Error values; they are thrown as PyFailure and turned
// into the Python exception chatwire.errors.make() builds from the Error's type name (so a
// template's UndefinedError becomes chatwire.UndefinedError, a TypeError a TypeError subclass).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "chatwire/adapt_json.hpp"
#include "chatwire/chat.hpp"
#include "chatwire/error.hpp"
#include "chatwire/probe_json.hpp"
#include "chatwire/response_json.hpp"
#include "chatwire/tokenize.hpp"
#include "chatwire/tokenized.hpp"
#include "chatwire/value.hpp"
#include "chatwire/value_json.hpp"
#include "convert.hpp"
#include "endpoint.hpp"

namespace py = pybind11;
using namespace chatwire;
using namespace chatwire::python;

namespace {

// ---------------------------------------------------------------------------------------
// Tokenizer and Encoding (tokenizers' Python API)
// ---------------------------------------------------------------------------------------

// One encoding, kept as C++ vectors; Python lists are made when an attribute is read, so a
// batch of encodings costs no Python objects until used.
struct PyEncoding {
  std::vector<std::uint32_t> ids;
  std::vector<std::pair<std::size_t, std::size_t>> offsets;  // code points, as tokenizers
  std::shared_ptr<const tokenize::Tokenizer> tokenizer;      // none in an unpickled copy, which
  std::vector<std::string> tokens;                           // carries its tokens and special mask
  std::vector<std::uint8_t> special;

  std::string token(std::size_t i) const {
    return tokenizer ? tokenizer->id_to_token(ids[i]).value_or("") : tokens[i];
  }
  std::uint8_t is_special(std::size_t i) const {
    return tokenizer ? tokenizer->is_special(ids[i]) : special[i];
  }
  // The pickled state (tokenizers' Encoding pickles too: a result crosses to a Dask or
  // multiprocessing worker): ids, offsets, tokens (bytes) and the special-tokens mask.
  py::tuple state() const {
    py::list token_list;
    std::vector<std::uint8_t> mask;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      token_list.append(py::bytes(token(i)));
      mask.push_back(is_special(i));
    }
    return py::make_tuple(ids, offsets, token_list, mask);
  }
  static PyEncoding from_state(const py::tuple& t) {
    if (t.size() != 4) throw std::runtime_error("Encoding: not a pickled state");
    PyEncoding e;
    e.ids = t[0].cast<std::vector<std::uint32_t>>();
    e.offsets = t[1].cast<std::vector<std::pair<std::size_t, std::size_t>>>();
    for (const auto& token : t[2].cast<py::list>()) e.tokens.push_back(token.cast<std::string>());
    e.special = t[3].cast<std::vector<std::uint8_t>>();
    if (e.tokens.size() != e.ids.size() || e.special.size() != e.ids.size() ||
        e.offsets.size() != e.ids.size())
      throw std::runtime_error("Encoding: not a pickled state");
    return e;
  }
};

// Byte offsets -> code point offsets, as the tokenizers binding converts them (the same rule
// chatwire's assistant mask uses): a start is the character holding its byte, an end the
// character holding its end byte, or the character count at the end of the text.
std::vector<std::pair<std::size_t, std::size_t>> char_offsets(
    std::string_view text, const std::vector<std::pair<std::size_t, std::size_t>>& bytes) {
  std::vector<std::size_t> char_of(text.size() + 1, 0);
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && i != 0) ++chars;
    char_of[i] = chars;
  }
  const std::size_t total = text.empty() ? 0 : chars + 1;
  char_of[text.size()] = total;
  std::vector<std::pair<std::size_t, std::size_t>> out;
  out.reserve(bytes.size());
  for (auto [b, e] : bytes) {
    b = std::min(b, text.size());
    e = std::min(e, text.size());
    out.emplace_back(char_of[b], e == b ? char_of[b] : char_of[e]);
  }
  return out;
}

class PyTokenizer {
 public:
  // `raw`: tokenizers' semantics (from_file/from_str), where decode never applies
  // transformers' clean_up_tokenization; otherwise (a directory, for AutoTokenizer) the
  // library's rule: tokenizer_config.json's clean_up_tokenization_spaces.
  PyTokenizer(tokenize::Tokenizer tok, bool raw)
      : tok_(std::make_shared<const tokenize::Tokenizer>(std::move(tok))), raw_(raw) {}

  static PyTokenizer from_file(const std::string& path) {
    std::string json = read_file(path);
    py::gil_scoped_release release;
    PyTokenizer t(unwrap(tokenize::Tokenizer::load_json(json)), true);
    t.origin_ = {"file", std::filesystem::absolute(path).string()};
    return t;
  }
  static PyTokenizer from_str(const std::string& json) {
    py::gil_scoped_release release;
    PyTokenizer t(unwrap(tokenize::Tokenizer::load_json(json)), true);
    t.origin_ = {"str", json};
    return t;
  }
  static PyTokenizer from_dir(const std::string& dir) {
    py::gil_scoped_release release;
    PyTokenizer t(unwrap(tokenize::Tokenizer::load_dir(dir)), false);
    t.origin_ = {"dir", std::filesystem::absolute(dir).string()};
    return t;
  }

  // Pickled as where it came from (a file or directory path, or the JSON text of from_str); the
  // other process loads it again (tokenizers pickles its JSON).
  std::pair<std::string, std::string> origin() const { return origin_; }
  static PyTokenizer from_origin(const std::pair<std::string, std::string>& o) {
    if (o.first == "file") return from_file(o.second);
    if (o.first == "str") return from_str(o.second);
    if (o.first == "dir") return from_dir(o.second);
    fail("ValueError", "not a pickled chatwire.Tokenizer");
  }

  PyEncoding encode_one(const std::string& text, bool add_special_tokens) const {
    tokenize::EncodeOptions options;
    options.add_special_tokens = add_special_tokens;
    options.with_offsets = true;
    auto enc = unwrap(tok_->encode(text, options));
    return PyEncoding{std::move(enc.ids), char_offsets(text, enc.offsets), tok_, {}, {}};
  }

  PyEncoding encode(py::str text, bool add_special_tokens) const {
    std::string s = py_str_bytes(text);
    py::gil_scoped_release release;
    return encode_one(s, add_special_tokens);
  }

  std::vector<std::string> texts_of(const py::iterable& input) const {
    std::vector<std::string> texts;
    for (py::handle t : input) {
      if (!PyUnicode_Check(t.ptr()))
        fail("TypeError", "TextEncodeInput must be a str, got " +
                              py::type::of(t).attr("__name__").cast<std::string>());
      texts.push_back(py_str_bytes(t));
    }
    return texts;
  }

  std::vector<PyEncoding> encode_batch(const py::iterable& input, bool add_special_tokens) const {
    std::vector<std::string> texts = texts_of(input);
    std::vector<std::variant<PyEncoding, Error>> out(texts.size(), Error{});
    {
      py::gil_scoped_release release;
      parallel_for(texts.size(), [&](std::size_t i) {
        tokenize::EncodeOptions options;
        options.add_special_tokens = add_special_tokens;
        options.with_offsets = true;
        auto enc = tok_->encode(texts[i], options);
        if (enc) {
          out[i] =
              PyEncoding{std::move(enc->ids), char_offsets(texts[i], enc->offsets), tok_, {}, {}};
        } else {
          out[i] = std::move(enc.error());
        }
      });
    }
    std::vector<PyEncoding> encodings;
    encodings.reserve(out.size());
    for (auto& r : out) {
      if (auto* e = std::get_if<Error>(&r)) fail(std::move(*e));
      encodings.push_back(std::move(std::get<PyEncoding>(r)));
    }
    return encodings;
  }

  // ids only, for transformers' encode/__call__ (no offsets needed).
  py::list encode_ids(py::str text, bool add_special_tokens) const {
    std::string s = py_str_bytes(text);
    std::vector<std::uint32_t> ids;
    {
      py::gil_scoped_release release;
      ids = unwrap(tok_->encode_ids(s, add_special_tokens));
    }
    return int_list(ids);
  }
  py::list encode_ids_batch(const py::iterable& input, bool add_special_tokens) const {
    std::vector<std::string> texts = texts_of(input);
    std::vector<Result<std::vector<std::uint32_t>>> out(texts.size(), Error{});
    {
      py::gil_scoped_release release;
      parallel_for(texts.size(),
                   [&](std::size_t i) { out[i] = tok_->encode_ids(texts[i], add_special_tokens); });
    }
    py::list lists;
    for (auto& r : out) lists.append(int_list(unwrap(std::move(r))));
    return lists;
  }

  py::str decode(py::handle ids, bool skip_special_tokens,
                 std::optional<bool> clean_up_tokenization_spaces) const {
    auto v = ids_from_py(ids);
    tokenize::DecodeOptions options;
    options.skip_special_tokens = skip_special_tokens;
    options.clean_up_tokenization_spaces = clean_up(clean_up_tokenization_spaces);
    std::string text;
    {
      py::gil_scoped_release release;
      text = unwrap(tok_->decode(v, options));
    }
    return make_str(text);
  }

  py::list decode_batch(const py::iterable& sequences, bool skip_special_tokens,
                        std::optional<bool> clean_up_tokenization_spaces) const {
    std::vector<std::vector<std::uint32_t>> all;
    for (py::handle s : sequences) all.push_back(ids_from_py(s));
    std::vector<Result<std::string>> out(all.size(), Error{});
    tokenize::DecodeOptions options;
    options.skip_special_tokens = skip_special_tokens;
    options.clean_up_tokenization_spaces = clean_up(clean_up_tokenization_spaces);
    {
      py::gil_scoped_release release;
      parallel_for(all.size(), [&](std::size_t i) { out[i] = tok_->decode(all[i], options); });
    }
    py::list texts;
    for (auto& r : out) texts.append(make_str(unwrap(std::move(r))));
    return texts;
  }

  std::optional<std::uint32_t> token_to_id(const std::string& token) const {
    return tok_->token_to_id(token);
  }
  std::optional<py::str> id_to_token(std::uint32_t id) const {
    auto t = tok_->id_to_token(id);
    if (!t) return std::nullopt;
    return make_str(*t);
  }
  std::size_t vocab_size(bool with_added_tokens) const {
    return with_added_tokens ? tok_->distinct_vocab_size() : tok_->model_vocab_size();
  }
  bool is_special(std::uint32_t id) const { return tok_->is_special(id); }

  const std::shared_ptr<const tokenize::Tokenizer>& shared() const { return tok_; }

 private:
  std::optional<bool> clean_up(std::optional<bool> asked) const {
    if (asked || !raw_) return asked;
    return false;
  }
  std::shared_ptr<const tokenize::Tokenizer> tok_;
  bool raw_ = true;
  std::pair<std::string, std::string> origin_;  // (file|str|dir, path or JSON text)
};

// tokenizers.decoders.DecodeStream: the tokenizer is given to each step(), as in tokenizers;
// the C++ stream is made at the first step.
class PyDecodeStream {
 public:
  explicit PyDecodeStream(bool skip_special_tokens) : skip_(skip_special_tokens) {}
  std::optional<py::str> step(const PyTokenizer& tokenizer, py::handle id) {
    if (!stream_) {
      tokenize::DecodeOptions options;
      options.skip_special_tokens = skip_;
      // tokenizers never applies transformers' clean-up; nor does its DecodeStream.
      options.clean_up_tokenization_spaces = false;
      stream_.emplace(*tokenizer.shared(), options);
    }
    std::vector<std::uint32_t> ids;
    if (is_scalar_id(id)) {
      ids = ids_from_py(py::make_tuple(id));
    } else {
      ids = ids_from_py(id);
    }
    std::string text = unwrap(stream_->push(ids));
    if (text.empty()) return std::nullopt;  // tokenizers: None until new text is complete
    return make_str(text);
  }
  // chatwire's addition: the text still held back once generation has ended (an incomplete
  // character becomes U+FFFD, as in decode); None when there is none.
  std::optional<py::str> finish() {
    if (!stream_) return std::nullopt;
    std::string text = unwrap(stream_->finish());
    if (text.empty()) return std::nullopt;
    return make_str(text);
  }

 private:
  bool skip_;
  std::optional<tokenize::DecodeStream> stream_;
};

// ---------------------------------------------------------------------------------------
// ChatModel: a checkpoint directory's templates (+ its tokenizer.json when present)
// ---------------------------------------------------------------------------------------

enum class Output { text, ids, dict, dict_mask };

struct RenderArgs {
  Value tools = Value::none();
  Value documents = Value::none();
  std::optional<std::string> chat_template;
  bool chat_template_is_source = false;
  bool add_generation_prompt = false;
  bool continue_final_message = false;
  Value kwargs = Value::empty_dict();
  Output output = Output::text;
};

struct RowResult {
  std::string text;
  std::vector<std::uint32_t> ids;
  std::vector<std::uint8_t> mask;
  std::vector<std::string> warnings;
};

class ChatModel {
 public:
  ChatModel(const std::string& dir, std::string now, bool validate) : now_(std::move(now)) {
    if (!now_.empty()) {
      // Checked here, once, rather than at the first template that calls strftime_now
      // (the engine parses the clock only then): ValueError "Invalid isoformat string".
      auto probe = unwrap(jinja::Template::compile("{{ strftime_now('%Y') }}"));
      jinja::RenderOptions options;
      options.now = now_;
      (void)unwrap(probe.render(Value::empty_dict(), options));
    }
    {
      py::gil_scoped_release release;
      model_ = std::make_shared<const chat::Model>(unwrap(chat::Model::load(dir)));
    }
    validate_ = validate;
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::path(dir) / "tokenizer.json", ec)) {
      tokenizer_ = PyTokenizer::from_dir(dir);
    }
  }

  bool has_tokenizer() const { return tokenizer_.has_value(); }
  const PyTokenizer& tokenizer() const {
    if (!tokenizer_)
      fail("ValueError",
           model_->directory().generic_string() + " has no tokenizer.json: cannot tokenize");
    return *tokenizer_;
  }
  py::object special_tokens() const { return value_to_py(model_->special_tokens()); }
  std::vector<std::string> template_names() const { return model_->template_names(); }
  bool has_template() const { return model_->has_template(); }
  py::object template_source(const std::string& name) const {
    return value_to_py(model_->template_source(name));
  }
  std::string directory() const { return model_->directory().generic_string(); }

  // Renders each conversation. With collect_errors false, the first failure (in input order)
  // is raised, as transformers raises; with true, each failure becomes that row's
  // "Type: message" string (sft.tokenize_batch's bad-row policy), including a row that cannot
  // be converted from Python.
  // With per_row, `tools` and `documents` are sequences holding one value per conversation.
  // With batched (the caller passed a list of conversations), a raised error's path starts at
  // the conversation: messages[1].content alone does not say which.
  py::list render(const py::sequence& conversations, py::handle tools, py::handle documents,
                  std::optional<std::string> chat_template, bool add_generation_prompt,
                  bool continue_final_message, py::handle kwargs, const std::string& output,
                  bool collect_errors, bool per_row, bool batched,
                  bool chat_template_is_source) const {
    RenderArgs args;
    if (!per_row) {
      args.tools = to_value_root(tools, "tools");
      args.documents = to_value_root(documents, "documents");
    }
    args.chat_template = std::move(chat_template);
    args.chat_template_is_source = chat_template_is_source;
    args.add_generation_prompt = add_generation_prompt;
    args.continue_final_message = continue_final_message;
    args.kwargs = to_value_root(kwargs, "kwargs");
    if (output == "text") {
      args.output = Output::text;
    } else if (output == "ids") {
      args.output = Output::ids;
    } else if (output == "dict") {
      args.output = Output::dict;
    } else if (output == "dict_mask") {
      args.output = Output::dict_mask;
    } else {
      fail("ValueError", "unknown output kind " + output);
    }
    if (args.output != Output::text) (void)tokenizer();  // fail early without a tokenizer

    const std::size_t n = py::len(conversations);
    std::vector<std::variant<RowResult, Error>> rows(n, Error{});
    std::vector<Value> messages(n);
    std::vector<Value> row_tools, row_documents;
    if (per_row) {
      if (py::len(tools) != n || py::len(documents) != n)
        fail("ValueError", "per-row tools and documents need one entry per conversation");
      row_tools.resize(n);
      row_documents.resize(n);
    }
    for (std::size_t i = 0; i < n; ++i) {
      py::handle conv = conversations[i];
      try {
        if (per_row) {
          row_tools[i] = to_value_root(tools[py::int_(i)], "tools");
          row_documents[i] = to_value_root(documents[py::int_(i)], "documents");
        }
        // Conversation objects with a `messages` attribute, as transformers accepts them.
        if (!PyList_Check(conv.ptr()) && !PyTuple_Check(conv.ptr()) &&
            py::hasattr(conv, "messages")) {
          messages[i] = to_value_root(conv.attr("messages"), "messages");
        } else if (PyTuple_Check(conv.ptr())) {
          // A tuple of messages is a conversation (transformers' batch test); the chat
          // layer's request checks want a list.
          messages[i] =
              to_value_root(py::list(py::reinterpret_borrow<py::object>(conv)), "messages");
        } else {
          messages[i] = to_value_root(conv, "messages");
        }
      } catch (PyFailure& f) {
        if (!collect_errors) throw;
        rows[i] = std::move(f.error);
      } catch (py::error_already_set& e) {
        // KeyboardInterrupt and SystemExit stop the batch; an exception a row's objects raise
        // (a Mapping, a tolist()) is that row's error, under its own type.
        if (!collect_errors || !e.matches(PyExc_Exception)) throw;
        rows[i] = Error{py::str(e.type().attr("__name__")).cast<std::string>(),
                        py::str(e.value()).cast<std::string>(), 0, 0, "messages"};
      }
    }
    {
      py::gil_scoped_release release;
      parallel_for(n, [&](std::size_t i) {
        if (messages[i].is_undefined()) return;  // conversion failed
        if (per_row) {
          RenderArgs row = args;
          row.tools = row_tools[i];
          row.documents = row_documents[i];
          rows[i] = render_one(messages[i], row);
        } else {
          rows[i] = render_one(messages[i], args);
        }
      });
    }
    py::list out;
    for (std::size_t i = 0; i < n; ++i) {
      if (auto* e = std::get_if<Error>(&rows[i])) {
        if (!collect_errors) {
          if (batched)
            e->path =
                "conversation[" + std::to_string(i) + "]" + (e->path.empty() ? "" : ".") + e->path;
          fail(std::move(*e));
        }
        out.append(py::make_tuple(false, make_str(e->to_string()), py::str(e->type)));
        continue;
      }
      auto& r = std::get<RowResult>(rows[i]);
      py::list warnings;
      for (const auto& w : r.warnings) warnings.append(make_str(w));
      py::object value;
      if (args.output == Output::text) {
        value = make_str(r.text);
      } else if (args.output == Output::dict_mask) {
        value = py::make_tuple(int_list(r.ids), int_list(r.mask));
      } else {
        value = int_list(r.ids);
      }
      out.append(py::make_tuple(true, value, warnings));
    }
    return out;
  }

 private:
  std::variant<RowResult, Error> render_one(const Value& messages, const RenderArgs& args) const {
    chat::ChatRequest request;
    request.messages = messages;
    request.tools = args.tools;
    request.documents = args.documents;
    request.chat_template = args.chat_template;
    request.chat_template_is_source = args.chat_template_is_source;
    request.add_generation_prompt = args.add_generation_prompt;
    request.continue_final_message = args.continue_final_message;
    request.kwargs = args.kwargs;
    chat::RenderOptions options;
    options.now = now_;
    options.validate = validate_;
    options.assistant_mask = args.output == Output::dict_mask;
    auto rendered = model_->render(request, options);
    if (!rendered) return std::move(rendered.error());
    RowResult row;
    row.warnings = std::move(rendered->warnings);
    if (args.output == Output::text) {
      row.text = std::move(rendered->text);
      return row;
    }
    const tokenize::Tokenizer& tok = *tokenizer_->shared();
    if (args.output == Output::dict_mask) {
      // The CLI's `render --tokenize` path: encode with offsets, transformers' mask loop.
      auto tokenized = chat::tokenize_rendered(std::move(*rendered), tok);
      if (!tokenized) return std::move(tokenized.error());
      row.ids = std::move(tokenized->input_ids);
      row.mask = std::move(tokenized->assistant_masks);
      for (auto& w : tokenized->chat.warnings) {
        if (std::find(row.warnings.begin(), row.warnings.end(), w) == row.warnings.end())
          row.warnings.push_back(std::move(w));
      }
      return row;
    }
    auto ids = tok.encode_ids(rendered->text, /*add_special_tokens=*/false);
    if (!ids) return std::move(ids.error());
    row.ids = std::move(*ids);
    return row;
  }

  std::shared_ptr<const chat::Model> model_;
  std::optional<PyTokenizer> tokenizer_;
  std::string now_;
  bool validate_ = true;
};

// ---------------------------------------------------------------------------------------
// probe and adapt
// ---------------------------------------------------------------------------------------

bool is_dir(const std::string& p) {
  std::error_code ec;
  return std::filesystem::is_directory(p, ec);
}
bool is_file(const std::string& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

py::object probe_path(const std::string& template_or_dir, std::optional<std::uint64_t> max_steps) {
  nlohmann::ordered_json json;
  {
    py::gil_scoped_release release;
    probe::Options options;
    if (max_steps) options.limits.max_steps = *max_steps;
    probe::Profile profile;
    if (is_dir(template_or_dir)) {
      profile = unwrap(probe::probe_model(template_or_dir, options));
    } else if (is_file(template_or_dir)) {
      profile = unwrap(probe::probe_file(template_or_dir, options));
    } else {
      profile = unwrap(probe::probe_source(template_or_dir, options));
    }
    json = probe::to_json(profile);
  }
  return json_to_py(json);
}

// transformers.utils.chat_parsing.parse_response(text, template, prefix=..., tools=...): the
// template a dict (as tokenizer.response_template holds it), the message a dict.
py::object parse_response_py(const std::string& text, py::handle tmpl, py::handle prefix,
                             py::handle tools) {
  const nlohmann::ordered_json spec = py_to_json(tmpl, "response_template");
  const nlohmann::ordered_json tools_json =
      tools.is_none() ? nlohmann::ordered_json() : py_to_json(tools, "tools");
  std::optional<std::string> prefix_text;
  if (!prefix.is_none()) prefix_text = py::cast<std::string>(prefix);
  nlohmann::ordered_json message;
  {
    py::gil_scoped_release release;
    const auto parsed = unwrap(response::Template::from_json(spec));
    message = unwrap(response::parse_response(text, parsed, prefix_text, tools_json));
  }
  return json_to_py(message);
}

py::object adapt_request(py::handle request, const std::string& template_or_dir,
                         const std::string& call_syntax, bool verify, py::handle special_tokens) {
  nlohmann::ordered_json req = py_to_json(request, "request");
  std::optional<nlohmann::ordered_json> tokens;
  if (!special_tokens.is_none()) {
    tokens = py_to_json(special_tokens, "special_tokens");
    if (!tokens->is_object()) fail("TypeError", "special_tokens: expected a dict");
  }
  nlohmann::ordered_json out;
  {
    py::gil_scoped_release release;
    adapt::Target target;
    if (is_dir(template_or_dir)) {
      target = unwrap(adapt::load_model_dir(template_or_dir));
    } else if (is_file(template_or_dir)) {
      target = unwrap(adapt::load_template_file(template_or_dir));
    } else {
      fail("FileNotFoundError", template_or_dir + " is neither a template file nor a directory");
    }
    adapt::Options options;
    options.call_syntax = call_syntax;
    // A file has no tokens of its own (the probe's stand-ins are no model's): the caller's.
    options.special_tokens = target.special_tokens;
    if (tokens) {
      if (is_dir(template_or_dir))
        fail("ValueError", "special_tokens: a checkpoint directory has its own");
      options.special_tokens = from_json(*tokens);
    }
    options.verify = verify;
    auto adapted = unwrap(adapt::adapt(req, target.profile, *target.tmpl, options));
    nlohmann::ordered_json adaptations = nlohmann::ordered_json::array();
    for (const auto& a : adapted.adaptations)
      adaptations.push_back({{"code", a.code}, {"finding", a.finding}, {"detail", a.detail}});
    out = {{"context", adapted.context},
           {"adaptations", adaptations},
           {"warnings", adapted.warnings},
           {"rendered", adapted.rendered}};
  }
  return json_to_py(out);
}

}  // namespace

PYBIND11_MODULE(_chatwire, m) {
  m.doc() = "chatwire's C++ core; use the `chatwire` package";

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const PyFailure& f) {
      py::object errors = py::module_::import("chatwire.errors");
      py::object exc = errors.attr("make")(f.error.type, f.error.message, f.error.line,
                                           f.error.column, f.error.path);
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    }
  });

  m.def(
      "set_num_threads", [](std::size_t n) { g_threads = std::max<std::size_t>(1, n); },
      py::arg("n"));
  m.def("get_num_threads", [] { return g_threads.load(); });

  py::class_<PyEncoding>(m, "Encoding")
      .def_property_readonly("ids", [](const PyEncoding& e) { return int_list(e.ids); })
      .def_property_readonly(
          "attention_mask",
          [](const PyEncoding& e) { return int_list(std::vector<std::uint8_t>(e.ids.size(), 1)); })
      .def_property_readonly(
          "type_ids",
          [](const PyEncoding& e) { return int_list(std::vector<std::uint8_t>(e.ids.size(), 0)); })
      .def_property_readonly("special_tokens_mask",
                             [](const PyEncoding& e) {
                               std::vector<std::uint8_t> mask;
                               for (std::size_t i = 0; i < e.ids.size(); ++i)
                                 mask.push_back(e.is_special(i));
                               return int_list(mask);
                             })
      .def_property_readonly("tokens",
                             [](const PyEncoding& e) {
                               py::list out;
                               for (std::size_t i = 0; i < e.ids.size(); ++i)
                                 out.append(make_str(e.token(i)));
                               return out;
                             })
      .def_property_readonly("offsets",
                             [](const PyEncoding& e) {
                               py::list out;
                               for (auto [b, end] : e.offsets) out.append(py::make_tuple(b, end));
                               return out;
                             })
      .def("__len__", [](const PyEncoding& e) { return e.ids.size(); })
      .def(py::pickle([](const PyEncoding& e) { return e.state(); },
                      [](const py::tuple& t) { return PyEncoding::from_state(t); }))
      .def("__repr__", [](const PyEncoding& e) {
        return "Encoding(num_tokens=" + std::to_string(e.ids.size()) + ")";
      });

  py::class_<PyTokenizer>(m, "Tokenizer")
      .def_static("from_file", &PyTokenizer::from_file, py::arg("path"))
      .def_static("from_str", &PyTokenizer::from_str, py::arg("json"))
      .def_static("from_dir", &PyTokenizer::from_dir, py::arg("dir"))
      // tokenizers' signature: encode(sequence, pair=None, is_pretokenized=False,
      // add_special_tokens=True); pairs and pre-tokenized input are refused, not misread.
      .def(
          "encode",
          [](const PyTokenizer& t, py::str sequence, py::object pair, bool is_pretokenized,
             bool add_special_tokens) {
            if (!pair.is_none())
              fail("NotImplementedError", "chatwire.Tokenizer.encode does not encode pairs");
            if (is_pretokenized)
              fail("NotImplementedError",
                   "chatwire.Tokenizer.encode does not take pre-tokenized input");
            return t.encode(std::move(sequence), add_special_tokens);
          },
          py::arg("sequence"), py::arg("pair") = py::none(), py::arg("is_pretokenized") = false,
          py::arg("add_special_tokens") = true)
      .def("encode_batch", &PyTokenizer::encode_batch, py::arg("input"),
           py::arg("add_special_tokens") = true)
      .def("encode_ids", &PyTokenizer::encode_ids, py::arg("text"),
           py::arg("add_special_tokens") = true)
      .def("encode_ids_batch", &PyTokenizer::encode_ids_batch, py::arg("texts"),
           py::arg("add_special_tokens") = true)
      .def("decode", &PyTokenizer::decode, py::arg("ids"), py::arg("skip_special_tokens") = true,
           py::arg("clean_up_tokenization_spaces") = py::none())
      .def("decode_batch", &PyTokenizer::decode_batch, py::arg("sequences"),
           py::arg("skip_special_tokens") = true,
           py::arg("clean_up_tokenization_spaces") = py::none())
      .def("token_to_id", &PyTokenizer::token_to_id, py::arg("token"))
      .def("id_to_token", &PyTokenizer::id_to_token, py::arg("id"))
      .def(
          "get_vocab_size",
          [](const PyTokenizer& t, bool with_added) { return t.vocab_size(with_added); },
          py::arg("with_added_tokens") = true)
      .def("is_special", &PyTokenizer::is_special, py::arg("id"))
      .def(py::pickle([](const PyTokenizer& t) { return t.origin(); },
                      [](const std::pair<std::string, std::string>& o) {
                        return PyTokenizer::from_origin(o);
                      }));

  py::class_<PyDecodeStream>(m, "DecodeStream")
      .def(py::init<bool>(), py::arg("skip_special_tokens") = false)
      .def("step", &PyDecodeStream::step, py::arg("tokenizer"), py::arg("id"))
      .def("finish", &PyDecodeStream::finish);

  py::class_<ChatModel>(m, "ChatModel")
      .def(py::init<const std::string&, std::string, bool>(), py::arg("dir"), py::arg("now") = "",
           py::arg("validate") = true)
      .def_property_readonly("has_tokenizer", &ChatModel::has_tokenizer)
      .def_property_readonly("tokenizer", &ChatModel::tokenizer, py::return_value_policy::copy)
      .def_property_readonly("special_tokens", &ChatModel::special_tokens)
      .def_property_readonly("template_names", &ChatModel::template_names)
      .def_property_readonly("has_template", &ChatModel::has_template)
      .def_property_readonly("directory", &ChatModel::directory)
      .def("template_source", &ChatModel::template_source, py::arg("name"))
      .def("render", &ChatModel::render, py::arg("conversations"), py::arg("tools"),
           py::arg("documents"), py::arg("chat_template"), py::arg("add_generation_prompt"),
           py::arg("continue_final_message"), py::arg("kwargs"), py::arg("output"),
           py::arg("collect_errors"), py::arg("per_row") = false, py::arg("batched") = false,
           py::arg("chat_template_is_source") = false);

  m.def("probe", &probe_path, py::arg("template_or_dir"), py::kw_only(),
        py::arg("max_steps") = py::none());
  m.def("sentinel_request", [] { return json_to_py(adapt::sentinel_request()); });
  m.def("parse_response", &parse_response_py, py::arg("text"), py::arg("response_template"),
        py::arg("prefix"), py::arg("tools"));
  m.def("adapt", &adapt_request, py::arg("request"), py::arg("template_or_dir"),
        py::arg("call_syntax") = "", py::arg("verify") = true,
        py::arg("special_tokens") = py::none());

  bind_endpoint(m);
}
