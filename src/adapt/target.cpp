// Loading a template (file or checkpoint directory) with its special tokens and its profile.

#include "chatwire/adapt.hpp"
#include "chatwire/chat.hpp"

namespace chatwire::adapt {

Result<Target> load_template_file(const std::filesystem::path& file) {
  auto source = chat::read_text_file(file);
  if (!source) return source.error();
  auto tmpl = jinja::Template::compile(*source);
  if (!tmpl) return tmpl.error();
  Target target;
  target.tmpl = std::make_shared<const jinja::Template>(std::move(tmpl).value());
  // The tokens probe_source measures with (a template may need a bos_token to render at all).
  target.measured_tokens = Value::dict_unchecked(
      {{Value("bos_token"), Value("<s>")}, {Value("eos_token"), Value("</s>")}});
  target.profile = probe::probe_template(*target.tmpl, target.measured_tokens);
  target.profile.name = file.filename().string();
  return target;
}

Result<Target> load_model_dir(const std::filesystem::path& dir) {
  auto model = chat::Model::load(dir);
  if (!model) return model.error();
  auto tmpl = model->select(std::nullopt, /*tools_given=*/true);
  if (!tmpl) return tmpl.error();
  Target target;
  target.tmpl = *tmpl;
  target.special_tokens = model->special_tokens();
  target.measured_tokens = target.special_tokens;
  target.profile = probe::probe_template(*target.tmpl, target.measured_tokens);
  target.profile.name = dir.filename().string();
  return target;
}

}  // namespace chatwire::adapt
