// Loading a template (file or checkpoint directory) with its special tokens and its profile.
#include <fstream>
#include <sstream>

#include "chatwire/adapt.hpp"
#include "chatwire/chat.hpp"

namespace chatwire::adapt {

Result<Target> load_template_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Error{"FileNotFoundError", "cannot read " + file.string(), 0, 0, file.string()};
  std::ostringstream buffer;
  buffer << in.rdbuf();
  auto tmpl = jinja::Template::compile(buffer.str());
  if (!tmpl) return tmpl.error();
  Target target;
  target.tmpl = std::make_shared<const jinja::Template>(std::move(tmpl).value());
  // The tokens probe_source measures with, so the adapted context renders as measured.
  target.special_tokens = Value::dict_unchecked(
      {{Value("bos_token"), Value("<s>")}, {Value("eos_token"), Value("</s>")}});
  target.profile = probe::probe_template(*target.tmpl, target.special_tokens);
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
  target.profile = probe::probe_template(*target.tmpl, target.special_tokens);
  target.profile.name = dir.filename().string();
  return target;
}

}  // namespace chatwire::adapt
