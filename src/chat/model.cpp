// Model directories: finding the chat templates and special tokens of a checkpoint exactly as
// transformers' tokenizer loading does, compiling them once, and choosing one per request as
// get_chat_template does.
#include <algorithm>
#include <map>
#include <mutex>
#include <system_error>
#include <unordered_map>

#include "chat/internal.hpp"
#include "chatwire/chat.hpp"

namespace chatwire::chat {

using detail::make_error;

namespace fs = std::filesystem;

namespace {

// The special-token attributes transformers exposes as template variables, in its order.
constexpr std::string_view kSpecialTokenKeys[] = {
    "bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"};
constexpr std::string_view kAdditionalSpecialTokens = "additional_special_tokens";

// File names transformers reads, in the order it gives them priority.
constexpr std::string_view kTemplateFile = "chat_template.jinja";
constexpr std::string_view kTemplateDir = "additional_chat_templates";
constexpr std::string_view kTemplateSuffix = ".jinja";
constexpr std::string_view kTokenizerConfig = "tokenizer_config.json";
constexpr std::string_view kTemplateJson = "chat_template.json";
constexpr std::string_view kSpecialTokensMap = "special_tokens_map.json";

struct NamedTemplate {
  std::string name;  // "" for a directory's single template
  Value source;      // as read (a string; another type when the config is malformed)
  Result<std::shared_ptr<const jinja::Template>> compiled =
      make_error("ValueError", "not compiled");
};

// A string, or an AddedToken object's "content" (None when it has none), as transformers
// turns special tokens into template variables.
Value token_text(const Value& token) {
  if (token.is_dict()) {
    const Value* content = token.dict_find(std::string_view("content"));
    return content != nullptr ? *content : Value::none();
  }
  return token;
}

Result<Value> token_texts(const Value& tokens, const std::string& where) {
  if (!tokens.is_sequence()) {
    return make_error("TypeError", where + ": additional_special_tokens must be a list, got " +
                                       std::string(type_name(tokens)));
  }
  std::vector<Value> texts;
  for (const Value& t : tokens.as_list()) texts.push_back(token_text(t));
  return Value::list(std::move(texts));
}

std::string shown_path(const fs::path& dir, std::string_view file) {
  return (dir / std::string(file)).generic_string();
}

Result<Value> read_json_file(const fs::path& dir, std::string_view file,
                             const InputLimits& limits) {
  std::string shown = shown_path(dir, file);
  auto bytes = detail::read_file(dir / std::string(file), shown, limits.max_file_bytes, true);
  if (!bytes) return bytes.error();
  JsonParseOptions options;
  options.big_int = JsonParseOptions::BigInt::Float;  // model_max_length is often 1e30
  options.max_depth = limits.max_json_depth;
  options.max_string_bytes = limits.max_file_bytes;
  auto parsed = parse_json(*bytes, options);
  if (!parsed) {
    Error e = parsed.error();
    e.message = shown + ": " + e.message;
    return e;
  }
  return parsed;
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec) && !ec;
}

}  // namespace

struct Model::Impl {
  fs::path dir;
  jinja::CompileOptions compile;
  InputLimits limits;
  enum class Shape { none, single, named } shape = Shape::none;
  std::vector<NamedTemplate> templates;  // one entry (single) or sorted by name (named)
  std::vector<std::string> names;        // sorted; only for Shape::named
  Value special_tokens = Value::empty_dict();
  Error invalid;  // set (type non-empty) when the config's chat_template is of a wrong type

  // Explicit template sources (a name given to a single-template directory) compiled on demand.
  mutable std::mutex source_mutex;
  mutable std::unordered_map<std::string, std::shared_ptr<const jinja::Template>> sources;

  Result<std::shared_ptr<const jinja::Template>> compile_source(const std::string& source) const {
    {
      std::lock_guard lock(source_mutex);
      if (auto it = sources.find(source); it != sources.end()) return it->second;
    }
    auto compiled = jinja::Template::compile(source, compile);
    if (!compiled) return compiled.error();
    auto shared = std::make_shared<const jinja::Template>(std::move(*compiled));
    std::lock_guard lock(source_mutex);
    if (sources.size() >= limits.max_cached_sources) sources.clear();
    sources.emplace(source, shared);
    return shared;
  }

  const NamedTemplate* find(std::string_view name) const {
    for (const auto& t : templates)
      if (t.name == name) return &t;
    return nullptr;
  }

  std::string names_repr() const {
    std::vector<Value> items(names.begin(), names.end());
    return to_repr(Value::list(std::move(items)));  // Python's str(sorted(names))
  }
};

Model::Model(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

detail::ModelFilesIdentity detail::model_files_identity(const fs::path& dir) {
  ModelFilesIdentity identity;
  auto add = [&identity](const fs::path& path) {
    identity.emplace_back(path.filename().string(), file_identity(path.c_str()));
  };
  add(dir);
  for (std::string_view name : {kTokenizerConfig, kTemplateFile, kTemplateJson, kSpecialTokensMap})
    add(dir / std::string(name));
  const fs::path extra_dir = dir / std::string(kTemplateDir);
  add(extra_dir);
  std::error_code ec;
  if (fs::is_directory(extra_dir, ec)) {
    // A file edited in place changes its own time, not the directory's.
    std::vector<fs::path> extras;
    for (const auto& entry : fs::directory_iterator(extra_dir, ec))
      if (entry.path().filename().string().ends_with(kTemplateSuffix))
        extras.push_back(entry.path());
    std::sort(extras.begin(), extras.end());
    for (const auto& path : extras) add(path);
  }
  return identity;
}

Result<Model> Model::load(const fs::path& dir, const jinja::CompileOptions& compile,
                          const InputLimits& limits) {
  auto impl = std::make_shared<Impl>();
  impl->dir = dir;
  impl->compile = compile;
  impl->limits = limits;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return make_error("ValueError",
                      dir.generic_string() + " has no chat template: it is not a directory");
  }

  // tokenizer_config.json
  Value config = Value::empty_dict();
  if (is_file(dir / std::string(kTokenizerConfig))) {
    auto parsed = read_json_file(dir, kTokenizerConfig, limits);
    if (!parsed) return parsed.error();
    if (!parsed->is_dict()) {
      return make_error("AttributeError", shown_path(dir, kTokenizerConfig) +
                                              " must hold a JSON object, got " +
                                              detail::json_kind(*parsed));
    }
    config = std::move(*parsed);
  }

  // Templates: .jinja files first, then the config's entry, then chat_template.json.
  std::map<std::string, std::string> files;  // name -> source; "default" from chat_template.jinja
  std::vector<std::string> file_order;
  auto add_file = [&](const std::string& name, std::string source) {
    if (!files.count(name)) file_order.push_back(name);
    files[name] = std::move(source);
  };
  const fs::path template_file = dir / std::string(kTemplateFile);
  if (is_file(template_file)) {
    auto source = detail::read_file(template_file, shown_path(dir, kTemplateFile),
                                    limits.max_file_bytes, true);
    if (!source) return source.error();
    add_file("default", std::move(*source));
  }
  const fs::path extra_dir = dir / std::string(kTemplateDir);
  if (fs::is_directory(extra_dir, ec)) {
    std::vector<fs::path> extras;
    for (const auto& entry : fs::directory_iterator(extra_dir, ec)) {
      std::string file = entry.path().filename().string();
      // glob("*.jinja"): hidden files do not match.
      if (file.size() > kTemplateSuffix.size() && file.front() != '.' &&
          file.ends_with(kTemplateSuffix))
        extras.push_back(entry.path());
    }
    std::sort(extras.begin(), extras.end());
    if (extras.size() > limits.max_templates) {
      Error e = limit_error("max_templates", limits.max_templates);
      e.message = extra_dir.generic_string() + ": " + e.message;
      return e;
    }
    for (const auto& path : extras) {
      std::string file = path.filename().string();
      auto source = detail::read_file(path, path.generic_string(), limits.max_file_bytes, true);
      if (!source) return source.error();
      add_file(file.substr(0, file.size() - kTemplateSuffix.size()), std::move(*source));
    }
  }

  std::vector<std::pair<std::string, Value>> named;  // from the config or chat_template.json
  Value single_source;                               // a string template, or None
  bool from_files = !files.empty();
  if (!from_files) {
    const Value* entry = config.dict_find(std::string_view("chat_template"));
    Value templates = entry != nullptr ? *entry : Value::none();
    if (templates.is_none() && is_file(dir / std::string(kTemplateJson))) {
      auto parsed = read_json_file(dir, kTemplateJson, limits);
      if (!parsed) return parsed.error();
      if (!parsed->is_dict()) {
        return make_error("AttributeError", shown_path(dir, kTemplateJson) +
                                                " must hold a JSON object, got " +
                                                detail::json_kind(*parsed));
      }
      const Value* inner = parsed->dict_find(std::string_view("chat_template"));
      templates = inner != nullptr ? *inner : Value::none();
    } else if (templates.is_list()) {
      // The legacy list of {name, template} becomes named templates.
      std::size_t index = 0;
      for (const Value& item : templates.as_list()) {
        std::string where =
            shown_path(dir, kTokenizerConfig) + ": chat_template[" + std::to_string(index++) + "]";
        if (!item.is_dict())
          return make_error("TypeError", where + " must be an object with name and template");
        const Value* name = item.dict_find(std::string_view("name"));
        const Value* source = item.dict_find(std::string_view("template"));
        if (name == nullptr) return make_error("KeyError", where + " has no 'name'");
        if (source == nullptr) return make_error("KeyError", where + " has no 'template'");
        if (!name->is_string()) return make_error("TypeError", where + ".name must be a string");
        auto it = std::find_if(named.begin(), named.end(),
                               [&](const auto& p) { return p.first == name->as_string(); });
        if (it != named.end()) {
          it->second = *source;
        } else {
          named.emplace_back(std::string(name->as_string()), *source);
        }
      }
      if (named.size() > limits.max_templates)
        return limit_error("max_templates", limits.max_templates);
      templates = Value::none();
    }
    if (templates.is_dict()) {
      // A mapping of name -> template (in tokenizer_config.json or chat_template.json) is
      // chosen from like the named set it is.
      for (const auto& [name, source] : templates.dict_entries()) {
        if (!name.is_string()) {
          return make_error("TypeError",
                            dir.generic_string() + ": chat template names must be strings");
        }
        named.emplace_back(std::string(name.as_string()), source);
      }
      if (named.size() > limits.max_templates)
        return limit_error("max_templates", limits.max_templates);
      templates = Value::none();
    }
    if (named.empty()) single_source = templates;
  }

  auto compile_entry = [&](std::string name, const Value& source) {
    NamedTemplate t;
    t.name = std::move(name);
    t.source = source;
    if (!source.is_string()) {
      t.compiled = make_error(
          "TypeError", "chat template" + (t.name.empty() ? std::string() : " '" + t.name + "'") +
                           " in " + dir.generic_string() + " must be a string, got " +
                           std::string(type_name(source)));
    } else {
      auto compiled = jinja::Template::compile(source.as_string(), compile);
      if (compiled) {
        t.compiled = std::make_shared<const jinja::Template>(std::move(*compiled));
      } else {
        t.compiled = compiled.error();
      }
    }
    impl->templates.push_back(std::move(t));
  };

  if (from_files) {
    if (files.size() == 1 && files.count("default")) {
      impl->shape = Impl::Shape::single;
      compile_entry("", Value(files["default"]));
    } else {
      impl->shape = Impl::Shape::named;
      for (const auto& name : file_order) compile_entry(name, Value(files[name]));
    }
  } else if (!named.empty()) {
    impl->shape = Impl::Shape::named;
    for (auto& [name, source] : named) compile_entry(name, source);
  } else if (!single_source.is_none()) {
    impl->shape = Impl::Shape::single;
    compile_entry("", single_source);
  }
  if (impl->shape == Impl::Shape::named) {
    for (const auto& t : impl->templates) impl->names.push_back(t.name);
    std::sort(impl->names.begin(), impl->names.end());
  }

  // Special tokens: tokenizer_config.json, then special_tokens_map.json over it.
  std::vector<std::pair<Value, Value>> tokens;
  auto set_token = [&tokens](std::string_view key, Value text) {
    for (auto& entry : tokens) {
      if (entry.first.as_string() == key) {
        entry.second = std::move(text);
        return;
      }
    }
    tokens.emplace_back(Value(key), std::move(text));
  };
  for (std::string_view key : kSpecialTokenKeys) {
    const Value* v = config.dict_find(key);
    if (v != nullptr && !v->is_none()) set_token(key, token_text(*v));
  }
  bool have_additional = false;
  if (is_file(dir / std::string(kSpecialTokensMap))) {
    auto map = read_json_file(dir, kSpecialTokensMap, limits);
    if (!map) return map.error();
    if (!map->is_dict()) {
      return make_error("AttributeError", shown_path(dir, kSpecialTokensMap) +
                                              " must hold a JSON object, got " +
                                              detail::json_kind(*map));
    }
    for (std::string_view key : kSpecialTokenKeys) {
      const Value* v = map->dict_find(key);
      if (v != nullptr && !v->is_none()) set_token(key, token_text(*v));
    }
    const Value* extra = map->dict_find(kAdditionalSpecialTokens);
    if (extra != nullptr && truthy(*extra)) {
      auto texts = token_texts(*extra, shown_path(dir, kSpecialTokensMap));
      if (!texts) return texts.error();
      set_token(kAdditionalSpecialTokens, std::move(*texts));
      have_additional = true;
    }
  }
  if (!have_additional) {
    const Value* extra = config.dict_find(kAdditionalSpecialTokens);
    if (extra != nullptr && truthy(*extra)) {
      auto texts = token_texts(*extra, shown_path(dir, kTokenizerConfig));
      if (!texts) return texts.error();
      set_token(kAdditionalSpecialTokens, std::move(*texts));
    }
  }
  impl->special_tokens = Value::dict_unchecked(std::move(tokens));
  return Model(std::move(impl));
}

const fs::path& Model::directory() const noexcept {
  return impl_->dir;
}
bool Model::has_template() const noexcept {
  return impl_->shape != Impl::Shape::none;
}
const std::vector<std::string>& Model::template_names() const noexcept {
  return impl_->names;
}
const Value& Model::special_tokens() const noexcept {
  return impl_->special_tokens;
}

const Value& Model::template_source(std::string_view name) const noexcept {
  static const Value none = Value::none();
  for (const NamedTemplate& t : impl_->templates) {
    if (t.name == name) return t.source;
  }
  return none;
}

Result<std::shared_ptr<const jinja::Template>> Model::select(const std::optional<std::string>& name,
                                                             bool tools_given) const {
  const Impl& m = *impl_;
  if (m.shape == Impl::Shape::named) {
    if (name) {
      if (const NamedTemplate* t = m.find(*name)) return t->compiled;
      return make_error("ValueError", "The specified chat template '" + *name +
                                          "' is not available. Available template names are " +
                                          m.names_repr() + ".");
    }
    if (tools_given) {
      if (const NamedTemplate* t = m.find("tool_use")) return t->compiled;
    }
    if (const NamedTemplate* t = m.find("default")) return t->compiled;
    return make_error(
        "ValueError",
        "This model has multiple chat templates with no default specified! Please either pass a "
        "chat "
        "template or the name of the template you wish to use to the `chat_template` argument. "
        "Available template names are " +
            m.names_repr() + ".");
  }
  // One template or none: an explicit chat_template is template source, as in transformers.
  if (name) return m.compile_source(*name);
  if (m.shape == Impl::Shape::none) {
    return make_error(
        "ValueError",
        m.dir.generic_string() +
            " has no chat template (no chat_template.jinja, additional_chat_templates/, "
            "\"chat_template\" in tokenizer_config.json or chat_template.json); pass a template "
            "explicitly rather than guessing the model's format");
  }
  return m.templates.front().compiled;
}

Result<ChatResult> Model::render(const ChatRequest& request, const RenderOptions& options) const {
  if (options.validate) {
    if (auto s = validate(request); !s) return s.error();
  }
  auto tmpl = request.chat_template && request.chat_template_is_source
                  ? impl_->compile_source(*request.chat_template)
                  : select(request.chat_template, !request.tools.is_none());
  if (!tmpl) return tmpl.error();
  RenderOptions inner = options;
  inner.validate = false;  // done above, before choosing
  return chat::render(**tmpl, request, impl_->special_tokens, inner);
}

}  // namespace chatwire::chat
