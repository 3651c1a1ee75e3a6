// `chatwire serve`: the OpenAI-compatible gateway (src/serve/). Either a configuration file
// with a model list (--config) or one model on the command line (--model, --backend). Every
// model is loaded and probed before the server listens; a model that fails is reported on
// stderr and not served. With `announce` (the default) the bound address is printed on stderr
// as "listening on HOST:PORT", the line test harnesses wait for (port 0 = any free port).
#include "chatwire/serve.hpp"

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "io.hpp"
#include "serve/gateway.hpp"
#include "serve/models.hpp"
#include "serve/server.hpp"

namespace chatwire::cli {
namespace {

// A configuration file larger than this is not one.
constexpr std::size_t kMaxConfigBytes = std::size_t{16} << 20;

struct ServeArgs {
  std::string config;
  std::string model_dir, name, backend, backend_api = "llama.cpp";
  std::optional<std::string> host;
  std::optional<std::uint16_t> port;
  std::vector<std::string> api_keys;
  std::string backend_api_key;
  std::optional<std::string> access_log;
  std::vector<std::string> cors_origins;
};

// The value of an environment variable ("" when unset).
std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

// API keys: the command line's, else the file's, else the environment's (CHATWIRE_API_KEY,
// CHATWIRE_BACKEND_API_KEY), which keeps them out of the process list and the file.
Result<bool> read_api_keys(const ServeArgs& args, serve::Config& config) {
  if (!args.api_keys.empty()) config.api_keys = args.api_keys;
  const bool from_env = config.api_keys.empty();
  if (from_env)
    if (std::string key = env("CHATWIRE_API_KEY"); !key.empty()) config.api_keys = {key};
  for (const auto& key : config.api_keys)
    if (auto e = serve::check_api_key(key, from_env ? "CHATWIRE_API_KEY" : "--api-key")) return *e;
  std::string backend_key = args.backend_api_key;
  const char* backend_from = "--backend-api-key";
  if (backend_key.empty()) {
    backend_key = env("CHATWIRE_BACKEND_API_KEY");
    backend_from = "CHATWIRE_BACKEND_API_KEY";
  }
  if (backend_key.empty()) return true;
  if (auto e = serve::check_api_key(backend_key, backend_from)) return *e;
  for (auto& m : config.models)  // a key in the file wins over the general one
    if (m.backend_api_key.empty()) m.backend_api_key = backend_key;
  return true;
}

Result<serve::Config> read_config(const ServeArgs& args) {
  serve::Config config;
  if (!args.config.empty()) {
    // The model flags describe the one model of a command line; with a file they would be
    // ignored, so they are refused.
    if (!args.model_dir.empty() || !args.backend.empty() || !args.name.empty())
      return Error{"ConfigError",
                   "--model, --backend and --name describe a model without --config; with a "
                   "configuration file, list the models in it",
                   0, 0, "--config"};
    std::string error;
    auto text = io::read_file(args.config, kMaxConfigBytes, error);
    if (!text) return Error{"ConfigError", error, 0, 0, args.config};
    auto parsed =
        serve::Config::from_json_text(*text, std::filesystem::absolute(args.config).parent_path());
    if (!parsed) return parsed.error();
    config = std::move(*parsed);
  } else {
    if (args.model_dir.empty() || args.backend.empty())
      return Error{
          "ConfigError", "--config FILE, or --model DIR with --backend URL, is required", 0, 0, {}};
    serve::ModelConfig m;
    m.dir = args.model_dir;
    m.name =
        args.name.empty() ? std::filesystem::path(args.model_dir).filename().string() : args.name;
    if (m.name.empty()) m.name = std::filesystem::path(args.model_dir).parent_path().filename();
    m.backend_url = args.backend;
    auto api = serve::backend_api_from_name(args.backend_api);
    if (!api) return api.error();
    m.backend_api = *api;
    config.models.push_back(std::move(m));
  }
  if (args.host) config.host = *args.host;
  if (args.port) config.port = *args.port;
  if (args.access_log) config.access_log = *args.access_log;
  if (!args.cors_origins.empty()) config.cors_origins = args.cors_origins;
  if (auto keys = read_api_keys(args, config); !keys) return keys.error();
  return config;
}

// Every open stream holds two descriptors (the client's and the backend's): the soft limit on
// open files (often 1024) is raised to the hard one.
void raise_open_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  limit.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0)
    std::fprintf(stderr, "chatwire serve: could not raise the open-file limit\n");
}

int run_serve(const ServeArgs& args) {
  auto config = read_config(args);
  if (!config) {
    std::fprintf(stderr, "chatwire serve: %s\n", config.error().to_string().c_str());
    return 2;
  }
  serve::LoadedModels models = serve::load_models(*config);
  for (const auto& failure : models.failures)
    std::fprintf(stderr, "chatwire serve: not serving %s\n", failure.c_str());
  if (models.models.empty()) {
    std::fprintf(stderr, "chatwire serve: no model could be loaded\n");
    return 1;
  }
  const bool announce = config->announce;
  const std::string host = config->host;
  serve::Gateway gateway(std::move(*config), std::move(models));
  raise_open_file_limit();
  serve::Server server(gateway);
  auto port = server.listen();
  if (!port) {
    std::fprintf(stderr, "chatwire serve: %s\n", port.error().to_string().c_str());
    return 1;
  }
  if (announce) {
    std::fprintf(stderr, "listening on %s:%u\n", host.c_str(), static_cast<unsigned>(*port));
    std::fflush(stderr);
  }
  server.run(/*handle_signals=*/true);
  return 0;
}

}  // namespace

void add_serve(CLI::App& root, int& exit_code) {
  auto args = std::make_shared<ServeArgs>();
  auto* cmd = root.add_subcommand(
      "serve", "an OpenAI-compatible chat gateway in front of raw-completion backends");
  cmd->add_option("--config", args->config, "the gateway's configuration (JSON, a model list)");
  cmd->add_option("--model", args->model_dir, "one model's Hugging Face directory");
  cmd->add_option("--name", args->name, "with --model: the name clients ask for");
  cmd->add_option("--backend", args->backend, "with --model: the backend's URL (http://...)");
  cmd->add_option("--backend-api", args->backend_api, "llama.cpp, openai or sglang")
      ->capture_default_str();
  cmd->add_option("--host", args->host, "the address to listen on (default 127.0.0.1)");
  cmd->add_option("--port", args->port, "the port to listen on (0 = any free port)");
  cmd->add_option("--access-log", args->access_log,
                  "one JSON line per request (never a body) to this file, or - for stderr");
  cmd->add_option("--cors-origin", args->cors_origins,
                  "an origin whose web pages may call the gateway (CORS), or *; repeatable");
  cmd->add_option("--api-key", args->api_keys,
                  "a key clients must send (Authorization: Bearer KEY); repeatable; default "
                  "$CHATWIRE_API_KEY");
  cmd->add_option("--backend-api-key", args->backend_api_key,
                  "sent to the backends as Authorization: Bearer KEY (models without their own "
                  "backend_api_key); default $CHATWIRE_BACKEND_API_KEY");
  cmd->callback([args, &exit_code] { exit_code = run_serve(*args); });
}

}  // namespace chatwire::cli
