// The public API: Template::compile (the parse, resolve and optimise passes, see
// parser.hpp) / render.
#include <algorithm>

#include "chatwire/jinja.hpp"
#include "jinja/compiled.hpp"
#include "jinja/lexer.hpp"
#include "jinja/objects.hpp"
#include "jinja/optimize.hpp"
#include "jinja/resolve.hpp"

namespace chatwire::jinja {

Result<Template> Template::compile(std::string_view source, const CompileOptions& options) {
  std::string normalized = normalize_source(source);
  auto parsed = parse_template(normalized, options.limits);
  if (!parsed) return parsed.error();
  if (auto error = resolve_template(*parsed)) return std::move(*error);
  if (options.optimize) optimize_template(*parsed);
  auto impl = std::make_shared<Impl>();
  impl->parsed = std::move(parsed.value());
  // The oracle tracks generation spans when the source mentions the tag at all.
  impl->uses_generation = source.find("generation") != std::string_view::npos &&
                          source.find("{%") != std::string_view::npos &&
                          source.find("endgeneration") != std::string_view::npos;
  const auto& symbols = impl->parsed.symbols;
  impl->globals.resize(symbols.size());
  impl->symbol_hashes.resize(symbols.size());
  for (SymbolId i = 0; i < symbols.size(); ++i) {
    const std::string& name = symbols[i];
    impl->symbol_hashes[i] = hash_string(name);
    if (BuiltinFn fn = find_global(name))
      impl->globals[i] = Value::make_object<BuiltinFunction>(name, fn);
    if (name == "loop") impl->sym_loop = i;
    if (name == "caller") impl->sym_caller = i;
    if (name == "kwargs") impl->sym_kwargs = i;
    if (name == "varargs") impl->sym_varargs = i;
  }
  return Template(std::shared_ptr<const Impl>(std::move(impl)));
}

Result<RenderResult> Template::render(const Value& context, const RenderOptions& options) const {
  if (!context.is_dict() && !context.is_undefined() && !context.is_none())
    return Error{"TypeError",
                 "the render context must be a dict, not " + std::string(type_name(context)),
                 0,
                 0,
                 {}};
  return render_template(*impl_, context, options);
}

bool Template::uses_generation() const {
  return impl_->uses_generation;
}

std::vector<std::string> Template::names() const {
  std::vector<std::string> out = impl_->parsed.symbols;
  std::sort(out.begin(), out.end());
  return out;
}

Template::Template(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;
Template::Template(const Template&) = default;
Template& Template::operator=(const Template&) = default;
Template::~Template() = default;

}  // namespace chatwire::jinja
