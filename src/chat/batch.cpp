// The oracle's JSON Lines protocol (scripts/oracle/hf_render.py `main`): one request line in,
// one result line out, formatted as Python's json.dumps(result, ensure_ascii=False), so that
// chatwire and the oracle can be compared line by line.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "chat/internal.hpp"
#include "chatwire/chat.hpp"

namespace chatwire::chat {

using detail::make_error;

namespace fs = std::filesystem;

namespace {

// Python's str.strip() on a line: a blank line is skipped by the oracle.
bool blank(std::string_view line) {
  for (char c : line)
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f') return false;
  return true;
}

// json.dumps writes lone surrogates only with ensure_ascii=True; the oracle then re-dumps
// the whole line that way. In WTF-8 a surrogate is ED A0..BF xx.
// Every result line is checked, so the lead byte is found with memchr (vectorised in libc)
// rather than by a loop over every byte of the output.
bool has_lone_surrogate(std::string_view s) {
  const char* p = s.data();
  const char* end = p + s.size();
  while (p < end) {
    const auto* lead =
        static_cast<const char*>(std::memchr(p, 0xED, static_cast<std::size_t>(end - p)));
    if (lead == nullptr || lead + 1 >= end) return false;
    if ((static_cast<unsigned char>(lead[1]) & 0xE0) == 0xA0) return true;
    p = lead + 1;
  }
  return false;
}

std::string dump_result(const Value& result) {
  JsonDumpOptions options;
  options.ensure_ascii = false;
  std::string text;
  if (auto s = dump_json(text, result, options); !s) {
    return R"({"id": null, "ok": false, "error_type": "TypeError", "message": "result not serializable"})";
  }
  if (has_lone_surrogate(text)) {
    text.clear();
    options.ensure_ascii = true;
    (void)dump_json(text, result, options);
  }
  return text;
}

std::string error_line(const Value& id, const Error& error) {
  std::string message = error.message;
  if (!error.path.empty()) message = error.path + ": " + message;
  return dump_result(Value::dict_unchecked({{Value("id"), id},
                                            {Value("ok"), Value(false)},
                                            {Value("error_type"), Value(error.type)},
                                            {Value("message"), Value(message)}}));
}

Value spans_value(const std::vector<jinja::GenerationSpan>& spans) {
  std::vector<Value> items;
  items.reserve(spans.size());
  for (const auto& span : spans) {
    items.push_back(Value::list(
        {Value(static_cast<long long>(span.begin)), Value(static_cast<long long>(span.end))}));
  }
  return Value::list(std::move(items));
}

// One successful render, whichever kind of request produced it.
struct Rendered {
  std::string output;
  bool uses_generation = false;
  std::vector<jinja::GenerationSpan> spans;
};

// `us` (mean microseconds of one repeated render) comes right after the id, as in the oracle.
std::string ok_line_as_value(const Value& id, Rendered rendered, std::optional<double> us) {
  std::vector<std::pair<Value, Value>> entries{{Value("id"), id}};
  if (us) entries.emplace_back(Value("us"), Value(*us));
  entries.emplace_back(Value("ok"), Value(true));
  entries.emplace_back(Value("output"), Value(std::move(rendered.output)));
  if (rendered.uses_generation)
    entries.emplace_back(Value("generation"), spans_value(rendered.spans));
  return dump_result(Value::dict_unchecked(std::move(entries)));
}

// The same line written piece by piece: the output (the bulk of the line) is escaped straight
// from the render's text, without a String value whose flags would need a scan of it first
// and without a dict to build and free per line. The rare lines that need another form (a
// lone surrogate: the whole line in ensure_ascii; over dump_json's size limit) are left to
// ok_line_as_value, so that they stay exactly what it writes.
std::string ok_line(const Value& id, Rendered rendered, std::optional<double> us) {
  JsonDumpOptions options;
  options.ensure_ascii = false;
  std::string text;
  text.reserve(rendered.output.size() + rendered.output.size() / 8 + 64);
  text += "{\"id\": ";
  if (!dump_json(text, id, options)) return ok_line_as_value(id, std::move(rendered), us);
  if (us) {
    text += ", \"us\": ";
    (void)dump_json(text, Value(*us), options);
  }
  text += ", \"ok\": true, \"output\": ";
  append_json_string(text, rendered.output, false);
  if (rendered.uses_generation) {
    text += ", \"generation\": ";
    (void)dump_json(text, spans_value(rendered.spans), options);
  }
  text += '}';
  if (text.size() > ValueLimits{}.max_string_bytes || has_lone_surrogate(text))
    return ok_line_as_value(id, std::move(rendered), us);
  return text;
}

}  // namespace

struct BatchRenderer::Impl {
  BatchOptions options;
  // model_dir requests: each directory's loaded Model (or load error) with the identity of the
  // files it was read from, checked on every line or once per I/O epoch as template files
  // are: the oracle reads the directory again on every line.
  struct CachedModel {
    detail::ModelFilesIdentity files_identity;
    Result<std::shared_ptr<const Model>> loaded;
    std::uint64_t checked_in_epoch = 0;
  };
  std::unordered_map<std::string, CachedModel> models;
  std::unordered_map<std::string, std::shared_ptr<const jinja::Template>> sources;
  // template_file requests: the compiled template of each path with the file's identity when it
  // was read. A check costs one stat() while the file is unchanged, not an open, a read, a UTF-8
  // check and a hash of the whole source (a fifth of a batch of fresh requests); a file that
  // changes (inode, size or modification time in nanoseconds) is read again, as the oracle
  // reads it on every line. The check runs on every line, or once per I/O epoch
  // (BatchOptions::check_files_per_io_epoch): the stat() alone was a quarter of a short fresh
  // request's render.
  struct CachedFile {
    detail::FileIdentity identity;
    std::shared_ptr<const jinja::Template> tmpl;
    std::uint64_t checked_in_epoch = 0;
  };
  std::uint64_t io_epoch = 1;  // a new one per line unless the caller marks them
  // Keyed by the path as the request spells it (base_dir is fixed for the batch, so it always
  // resolves to the same file name) and looked up by view: a line builds no path object and
  // no key string, which were a tenth of what a fresh request's template_file line cost
  // beyond the render.
  struct ViewHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };
  std::unordered_map<std::string, CachedFile, ViewHash, std::equal_to<>> template_files;
  std::string stat_path;  // the NUL-terminated name handed to stat(), reused

  // A template is read from a regular file only; anything else is read (and fails) every time.
  static std::optional<detail::FileIdentity> identity_of(const char* path) {
    auto identity = detail::file_identity(path);
    if (!identity || !identity->regular) return std::nullopt;
    return identity;
  }

  bool used_as_given(std::string_view shown) const {
    return options.base_dir.empty() || (!shown.empty() && shown.front() == '/');
  }

  Result<std::shared_ptr<const jinja::Template>> compile_file(std::string_view shown) {
    auto cached = template_files.find(shown);
    if (cached != template_files.end() && cached->second.checked_in_epoch == io_epoch)
      return cached->second.tmpl;
    std::optional<detail::FileIdentity> identity;
    if (used_as_given(shown)) {
      stat_path.assign(shown);
      identity = identity_of(stat_path.c_str());
    } else {
      identity = identity_of(resolve(shown).c_str());
    }
    if (identity && cached != template_files.end() && cached->second.identity == *identity) {
      cached->second.checked_in_epoch = io_epoch;
      return cached->second.tmpl;
    }
    const fs::path path = resolve(shown);
    auto source = detail::read_file(path, shown, options.input.max_file_bytes, true);
    if (!source) return source.error();
    auto tmpl = compile(*source);
    if (!tmpl) return tmpl.error();
    if (identity) {
      if (template_files.size() >= options.input.max_cached_sources) template_files.clear();
      template_files.insert_or_assign(std::string(shown), CachedFile{*identity, *tmpl, io_epoch});
    }
    return tmpl;
  }
  static constexpr std::size_t kMaxCachedModels = 64;

  fs::path resolve(std::string_view path) const {
    fs::path p{std::string(path)};
    if (p.is_relative() && !options.base_dir.empty()) return options.base_dir / p;
    return p;
  }

  jinja::CompileOptions compile_options() const {
    jinja::CompileOptions compile;
    compile.limits = options.limits;
    return compile;
  }

  Result<std::shared_ptr<const jinja::Template>> compile(const std::string& source) {
    if (auto it = sources.find(source); it != sources.end()) return it->second;
    auto compiled = jinja::Template::compile(source, compile_options());
    if (!compiled) return compiled.error();
    auto shared = std::make_shared<const jinja::Template>(std::move(*compiled));
    if (sources.size() >= options.input.max_cached_sources) sources.clear();
    sources.emplace(source, shared);
    return shared;
  }

  Result<std::shared_ptr<const Model>> model(const std::string& path) {
    auto cached = models.find(path);
    if (cached != models.end() && cached->second.checked_in_epoch == io_epoch)
      return cached->second.loaded;
    detail::ModelFilesIdentity files_identity = detail::model_files_identity(resolve(path));
    if (cached != models.end() && cached->second.files_identity == files_identity) {
      cached->second.checked_in_epoch = io_epoch;
      return cached->second.loaded;
    }
    Result<std::shared_ptr<const Model>> loaded = Error{};
    auto model = Model::load(resolve(path), compile_options(), options.input);
    if (model) {
      loaded = std::make_shared<const Model>(std::move(*model));
    } else {
      Error e = model.error();
      // Name the directory as the request did, not as resolved against base_dir.
      std::string resolved = resolve(path).generic_string();
      if (resolved != path) {
        for (std::size_t at = e.message.find(resolved); at != std::string::npos;
             at = e.message.find(resolved, at + path.size()))
          e.message.replace(at, resolved.size(), path);
      }
      loaded = std::move(e);
    }
    if (models.size() >= kMaxCachedModels) models.clear();
    models.insert_or_assign(path, CachedModel{std::move(files_identity), loaded, io_epoch});
    return loaded;
  }

  std::string last_valid_now;
  std::optional<jinja::Template> clock_probe;

  Status check_now(const std::string& now) {
    if (!clock_probe) {
      auto compiled = jinja::Template::compile("{{ strftime_now('') }}");
      if (!compiled) return compiled.error();
      clock_probe = std::move(*compiled);
    }
    jinja::RenderOptions probe_options;
    probe_options.now = now;
    auto rendered = clock_probe->render(Value::empty_dict(), probe_options);
    if (!rendered) return rendered.error();
    return ok_status();
  }

  std::string handle(const Value& request, const Value& id) {
    RenderOptions render_options;
    render_options.limits = options.limits;
    render_options.validate = options.validate;
    if (const Value* now = request.dict_find(std::string_view("now"));
        now != nullptr && truthy(*now)) {
      if (!now->is_string())
        return error_line(id, make_error("TypeError", "fromisoformat: argument must be str"));
      render_options.now = std::string(now->as_string());
      // The oracle parses "now" before anything else, used or not; the engine parses it only
      // when strftime_now is called. Checking it with a one-call template gives the same error.
      if (render_options.now != last_valid_now) {
        if (auto s = check_now(render_options.now); !s) return error_line(id, s.error());
        last_valid_now = render_options.now;
      }
    }

    if (request.dict_find(std::string_view("model_dir")) != nullptr) {
      const Value& dir = *request.dict_find(std::string_view("model_dir"));
      if (!dir.is_string())
        return error_line(id, make_error("TypeError", "model_dir must be a string path"));
      const Value* chat = request.dict_find(std::string_view("chat"));
      if (chat == nullptr) return error_line(id, make_error("KeyError", "'chat'"));
      auto loaded = model(std::string(dir.as_string()));
      if (!loaded) return error_line(id, loaded.error());
      auto chat_request = request_from_value(*chat);
      if (!chat_request) return error_line(id, chat_request.error());
      std::shared_ptr<const Model> model_ptr = *loaded;
      return finish(id, [&]() -> Result<Rendered> {
        auto result = model_ptr->render(*chat_request, render_options);
        if (!result) return result.error();
        return Rendered{std::move(result->text), result->uses_generation,
                        std::move(result->generation)};
      });
    }

    Result<std::shared_ptr<const jinja::Template>> tmpl = Error{};
    if (const Value* source = request.dict_find(std::string_view("template"))) {
      if (!source->is_string())
        return error_line(id, make_error("TypeError", "template must be a string"));
      tmpl = compile(std::string(source->as_string()));
    } else {
      const Value* file = request.dict_find(std::string_view("template_file"));
      if (file == nullptr) return error_line(id, make_error("KeyError", "'template_file'"));
      if (!file->is_string())
        return error_line(id, make_error("TypeError", "template_file must be a string path"));
      tmpl = compile_file(file->as_string());
    }
    if (!tmpl) return error_line(id, tmpl.error());

    if (const Value* chat = request.dict_find(std::string_view("chat"))) {
      auto chat_request = request_from_value(*chat);
      if (!chat_request) return error_line(id, chat_request.error());
      return finish(id, [&]() -> Result<Rendered> {
        auto result = chat::render(**tmpl, *chat_request, Value::empty_dict(), render_options);
        if (!result) return result.error();
        return Rendered{std::move(result->text), result->uses_generation,
                        std::move(result->generation)};
      });
    }
    const Value* context = request.dict_find(std::string_view("context"));
    Value variables = context != nullptr ? *context : Value::empty_dict();
    if (!variables.is_dict()) {
      return error_line(id, make_error("TypeError", "argument after ** must be a mapping, not " +
                                                        std::string(type_name(variables))));
    }
    jinja::RenderOptions jinja_options;
    jinja_options.limits = options.limits;
    jinja_options.now = render_options.now;
    return finish(id, [&]() -> Result<Rendered> {
      auto result = (*tmpl)->render(variables, jinja_options);
      if (!result) return result.error();
      return Rendered{std::move(result->output), result->uses_generation,
                      std::move(result->generation)};
    });
  }

  // Renders once for the result; with `repeat`, renders that many more times and reports the
  // mean time of one render (compile excluded: templates and models are cached by then).
  template <typename RenderOnce>
  std::string finish(const Value& id, RenderOnce&& render_once) {
    auto first = render_once();
    if (!first) return error_line(id, first.error());
    std::optional<double> us;
    if (options.repeat > 0) {
      auto start = std::chrono::steady_clock::now();
      for (std::size_t i = 0; i < options.repeat; ++i) (void)render_once();
      std::chrono::duration<double, std::micro> elapsed = std::chrono::steady_clock::now() - start;
      us = elapsed.count() / static_cast<double>(options.repeat);
    }
    return ok_line(id, std::move(*first), us);
  }
};

BatchRenderer::BatchRenderer(BatchOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}
BatchRenderer::~BatchRenderer() = default;
BatchRenderer::BatchRenderer(BatchRenderer&&) noexcept = default;
BatchRenderer& BatchRenderer::operator=(BatchRenderer&&) noexcept = default;

void BatchRenderer::next_io_epoch() {
  ++impl_->io_epoch;
}

std::string BatchRenderer::render_line(std::string_view line) {
  if (!impl_->options.check_files_per_io_epoch) ++impl_->io_epoch;
  if (blank(line)) return {};
  if (line.size() > impl_->options.input.max_request_bytes) {
    return error_line(Value::none(),
                      limit_error("max_request_bytes", impl_->options.input.max_request_bytes));
  }
  detail::Utf8Problem problem;
  if (!detail::valid_utf8(line, problem)) {
    return error_line(Value::none(),
                      make_error("UnicodeDecodeError", "request line is not valid UTF-8 at byte " +
                                                           std::to_string(problem.offset)));
  }
  JsonParseOptions parse_options;
  parse_options.max_depth = impl_->options.input.max_json_depth;
  parse_options.max_string_bytes = impl_->options.input.max_request_bytes;
  // The request is parsed, rendered and released here, on this thread, and nothing of it is
  // kept: its payloads can be local (counted without atomics).
  auto request = [&] {
    chatwire::detail::LocalBuildScope local;
    return parse_json(line, parse_options);
  }();
  if (!request) return error_line(Value::none(), request.error());
  if (!request->is_dict()) {
    return error_line(Value::none(),
                      make_error("TypeError", "a request line must be a JSON object, got " +
                                                  detail::json_kind(*request)));
  }
  const Value* id = request->dict_find(std::string_view("id"));
  return impl_->handle(*request, id != nullptr ? *id : Value::none());
}

}  // namespace chatwire::chat
