// The parser choice for a template file or a model directory: compile, probe, choose.

#include "chatwire/chat.hpp"
#include "readback/internal.hpp"

namespace chatwire::readback {

namespace {

// `model_eos`: the tokens are the model's own, so its eos token ends a turn even where the
// template does not write it (a backend stops there). A bare template's stand-in tokens are no
// model's: its eos ends a turn only where the template writes it (the measured suffix).
Result<LoadedChoice> choose(const jinja::Template& tmpl, const Value& tokens,
                            const probe::Options& options, bool model_eos) {
  LoadedChoice out;
  out.profile = probe::probe_template(tmpl, tokens, options);
  std::vector<std::string> ends;
  if (const Value* eos = tokens.dict_find("eos_token"); model_eos && eos && eos->is_string())
    ends.emplace_back(eos->as_string());
  out.choice = choose_parser(probe::template_renderer(tmpl, tokens, options), out.profile, ends);
  return out;
}

}  // namespace

Result<LoadedChoice> choose_parser_file(const std::filesystem::path& file,
                                        const probe::Options& options) {
  auto source = chat::read_text_file(file);
  if (!source) return source.error();
  jinja::CompileOptions compile;
  compile.limits = options.limits;
  auto tmpl = jinja::Template::compile(*source, compile);
  if (!tmpl) return tmpl.error();
  Value tokens = Value::dict_unchecked(
      {{Value("bos_token"), Value("<s>")}, {Value("eos_token"), Value("</s>")}});
  auto out = choose(*tmpl, tokens, options, /*model_eos=*/false);
  if (out) out->profile.name = file.filename().string();
  return out;
}

Result<LoadedChoice> choose_parser_model(const std::filesystem::path& dir,
                                         const probe::Options& options) {
  jinja::CompileOptions compile;
  compile.limits = options.limits;
  auto model = chat::Model::load(dir, compile);
  if (!model) return model.error();
  auto tmpl = model->select(std::nullopt, /*tools_given=*/true);
  if (!tmpl) return tmpl.error();
  auto out = choose(**tmpl, model->special_tokens(), options, /*model_eos=*/true);
  if (out) out->profile.name = dir.filename().string();
  return out;
}

}  // namespace chatwire::readback
