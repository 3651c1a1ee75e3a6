// Loading the served models (see models.hpp).
#include "serve/models.hpp"

#include <chrono>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "chatwire/probe.hpp"
#include "util/json_text.hpp"

namespace chatwire::serve {

namespace {

using json = nlohmann::ordered_json;

// What a client can expect from the model, as the probe measured it on the template, and what
// its backend can do (tool_choice "required" and named functions need structured output).
std::string capabilities(const endpoint::Endpoint& ep, const ModelConfig& config) {
  const probe::Profile& p = ep.profile();
  json c{
      {"tools", p.tools.definitions_rendered},
      {"tool_calls", p.tool_calls.rendered && ep.tool_calls_read_back()},
      {"tool_results", p.tool_results.rendered},
      {"reasoning", p.reasoning.style != "none"},
      {"system_role", p.system.supported},
      {"strict_alternation", p.alternation.required},
      {"parser", std::string(ep.dialect())},
      {"tool_call_ids", ep.call_ids() == endpoint::CallIdStyle::short9 ? "short9" : "openai"},
      {"tokenizer", ep.tokenizer() != nullptr},
      {"tool_choice", config.backend_structured_output
                          ? json::array({"none", "auto", "required", "function"})
                          : json::array({"none", "auto"})},
      {"response_format", config.backend_structured_output},
  };
  return c.dump();
}

// The context length a Hugging Face directory's config.json gives (max_position_embeddings, also
// under text_config for multimodal checkpoints); 0 when it gives none. A config.json that cannot
// be read leaves it unknown: the model is still served.
std::size_t context_length(const std::filesystem::path& dir) {
  std::ifstream in(dir / "config.json", std::ios::binary);
  if (!in) return 0;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > (std::size_t{16} << 20)) return 0;
  auto parsed = util::parse_bounded_json(text, 64);
  if (!parsed || !parsed.value.is_object()) return 0;
  const json& top = parsed.value;
  const auto text_config = top.find("text_config");
  const json* places[] = {&top, text_config != top.end() ? &*text_config : nullptr};
  for (const json* c : places) {
    if (c == nullptr || !c->is_object()) continue;
    auto it = c->find("max_position_embeddings");
    if (it != c->end() && it->is_number_unsigned()) return it->get<std::size_t>();
  }
  return 0;
}

}  // namespace

const ServedModel* LoadedModels::find(std::string_view name) const noexcept {
  for (const auto& m : models)
    if (m->config.name == name) return m.get();
  return nullptr;
}

endpoint::CallIdStyle call_id_style(std::string_view rule,
                                    endpoint::CallIdStyle measured) noexcept {
  if (rule == "openai") return endpoint::CallIdStyle::openai;
  if (rule == "short9") return endpoint::CallIdStyle::short9;
  return measured;
}

Result<ServedModel> load_model(const ModelConfig& config) {
  endpoint::LoadOptions options;
  options.dialect = config.dialect;
  if (config.probe_max_steps != 0) {
    options.probe_limits = probe::probe_render_limits();
    options.probe_limits->max_steps = config.probe_max_steps;
  }
  auto ep = endpoint::Endpoint::load(config.dir, options);
  if (!ep) return ep.error();
  if (ep->tokenizer() == nullptr)
    return Error{
        "ConfigError",
        "no tokenizer.json in " + config.dir.string() + ": the gateway sends backends token ids", 0,
        0, "model_dir"};
  ServedModel m{config, *ep, call_id_style(config.tool_call_ids, ep->call_ids()),
                capabilities(*ep, config), ep->chat_template().names()};
  m.position_embeddings = context_length(config.dir);
  m.loaded_at = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  return m;
}

LoadedModels load_models(const Config& config) {
  LoadedModels out;
  for (const auto& mc : config.models) {
    auto m = load_model(mc);
    if (!m) {
      out.failures.push_back(mc.name + ": " + m.error().to_string());
      continue;
    }
    out.models.push_back(std::make_unique<const ServedModel>(std::move(*m)));
  }
  return out;
}

}  // namespace chatwire::serve
