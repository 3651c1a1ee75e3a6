// chatwire serve: an OpenAI-compatible chat gateway in front of raw-completion backends
// (llama.cpp server, vLLM / SGLang OpenAI completions, SGLang /generate). The gateway owns the
// template, the tokenizer and the output parser of every model it serves (one
// chatwire::endpoint::Endpoint each); a backend only continues token ids.
//
// This file: the gateway's configuration (the --config file and its defaults), the contract of
// `chatwire serve --config FILE`. The server that runs it (src/serve/, Boost.Asio/Beast) is
// part of the chatwire command, not of the installed library, so that the library's users do
// not need Boost: Config::from_json_text is defined there (chatwire_serve).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/error.hpp"

namespace chatwire::serve {

// The raw-completion API a backend speaks (one row of the table in src/serve/backend_api.cpp).
enum class BackendApi : unsigned char {
  llama_cpp,  // llama.cpp server: POST /completion (prompt ids, return_tokens)
  openai,     // OpenAI completions as vLLM and SGLang serve it: POST /v1/completions
  sglang,     // SGLang native: POST /generate (input_ids, sampling_params, cumulative text)
};
std::string_view backend_api_name(BackendApi api) noexcept;
Result<BackendApi> backend_api_from_name(std::string_view name);

struct ModelConfig {
  std::string name;           // the `model` clients ask for
  std::filesystem::path dir;  // the Hugging Face model directory
  std::string backend_url;    // http://host:port[/prefix]
  BackendApi backend_api = BackendApi::llama_cpp;
  std::string backend_model;  // `model` sent to an openai backend ("" = name)
  // Tool-call ids: "auto" (what the probe measured: 9 characters where the template rejects
  // call_... ids, as Mistral's), "openai" (call_ + 24) or "short9".
  std::string tool_call_ids = "auto";
  // The response fields reasoning is written to (OpenAI clients read one or the other).
  std::vector<std::string> reasoning_fields = {"reasoning_content", "reasoning"};
  // Sampling parameters used when the request has none (temperature, top_p, top_k, ...):
  // a JSON object as text ("" = none).
  std::string default_sampling_json;
  std::string dialect;  // the output parser by dialect name ("" = derived from the template)
  std::size_t max_tokens_default = 0;  // max_tokens when the request has none (0 = backend's)
  // Whether the backend constrains output (llama.cpp grammars, vLLM/SGLang structured
  // output): response_format is passed on only then.
  bool backend_structured_output = true;
  // The step limit of each render the probe and the parser derivation make of the model's
  // template while loading (0 = probe::probe_render_limits()'s). A model's template is untrusted.
  std::uint64_t probe_max_steps = 0;
  // Sent to the backend as `Authorization: Bearer KEY` ("" = no header): for a backend started
  // with an API key (vLLM, SGLang and llama.cpp's --api-key).
  std::string backend_api_key;
  // The context length /tokenize reports (vLLM's max_model_len; 0 = config.json's
  // max_position_embeddings, when the directory has one).
  std::size_t max_model_len = 0;
};

struct Limits {
  std::size_t max_body_bytes = std::size_t{32} << 20;  // a request body (413 above)
  std::size_t max_header_bytes = 64 << 10;
  std::size_t max_concurrent_requests = 4096;      // generations and renders at once (429 above)
  std::size_t max_backend_event_bytes = 16 << 20;  // one SSE event from a backend (502 above)
  std::size_t max_completion_bytes = std::size_t{256} << 20;  // generated text per response
  std::size_t max_choices = 16;  // a request's `n` (each choice is one backend request)
};

struct Timeouts {
  std::uint32_t connect_ms = 5000;        // connecting to a backend
  std::uint32_t request_ms = 600000;      // a whole backend request
  std::uint32_t idle_ms = 60000;          // between two bytes from a backend (a stall: 504)
  std::uint32_t client_idle_ms = 120000;  // a keep-alive client between requests
  // One write to a client (a reply, a stream's chunk): a client that stops reading is gone.
  std::uint32_t client_write_ms = 60000;
  std::uint32_t shutdown_grace_ms = 30000;  // SIGTERM: streams may finish for this long
};

struct Config {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8000;
  std::size_t worker_threads = 0;  // threads that render requests (0 = the number of cores)
  std::size_t max_idle_backend_connections = 256;  // per backend, kept alive for reuse
  Limits limits;
  Timeouts timeouts;
  std::vector<ModelConfig> models;
  // Prints "listening on HOST:PORT" with the bound port on stderr (port 0 = any free port).
  bool announce = true;
  // The access log: one JSON line per answered request, never a body ("" = none, "-" =
  // standard error, else a file appended to).
  std::string access_log;
  // Origins whose web pages may call the gateway from a browser (CORS): answers to a request
  // whose Origin is one of them (or any, with "*") carry Access-Control-Allow-Origin, and
  // OPTIONS preflights are answered. Empty: no CORS (a browser page of another origin cannot
  // read the answers).
  std::vector<std::string> cors_origins;
  // The keys clients must send as `Authorization: Bearer KEY` (the OpenAI clients' apiKey) on
  // every route but GET /health and GET /metrics (probes and scrapers); a request without one
  // of them is 401. Empty: no key is asked for.
  std::vector<std::string> api_keys;

  // The --config file: {"host", "port", "worker_threads", "api_keys", "access_log", "limits":
  // {...}, "timeouts": {...}, "models": [{"name", "model_dir", "backend_url", "backend_api",
  // "backend_api_key", "tool_call_ids", "reasoning_fields", "default_sampling", "dialect",
  // "max_tokens", ...}]}. Relative model directories are resolved against `base`. Errors name
  // the key path.
  static Result<Config> from_json_text(std::string_view text, const std::filesystem::path& base);
};

// A ConfigError naming `where` when `key` cannot be an API key (empty, or not visible ASCII
// without spaces: it is sent in an HTTP header).
std::optional<Error> check_api_key(std::string_view key, const std::string& where);

}  // namespace chatwire::serve
