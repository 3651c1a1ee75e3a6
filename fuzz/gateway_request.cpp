// libFuzzer: arbitrary bytes as the body a client POSTs to the gateway, through every route that
// reads one, without the sockets: /v1/chat/completions (plan_chat: the gateway's own fields, the
// Endpoint's request reading, adaptation, render and tokenization, then each backend API's
// request body), /v1/responses (plan_responses: the Responses request mapped to a chat request,
// then planned as one), /v1/chat/render, /tokenize and /detokenize. A client is a stranger: nothing
// may crash or hang, a refusal is a 4xx with an OpenAI error body naming what is wrong (never a
// 5xx: there is no backend here), and an accepted chat is a job with a backend body that is JSON.
//
// Input: byte 0 picks the route (and, for chat completions and responses, the backend API); the
// rest is the body (or, for GET /v1/models/{id}, the id as the path has it). The models are the
// gateway tests' six checkpoint directories, data/models/endpoint/ (CHATWIRE_DATA_DIR, which
// scripts/fuzz sets), named by the body's `model`.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gateway_models.hpp"
#include "serve/chat_relay.hpp"
#include "serve/gateway.hpp"
#include "serve/http_errors.hpp"
#include "serve/models.hpp"
#include "serve/responses.hpp"

namespace cs = chatwire::serve;

namespace {

const cs::Gateway& gateway() {
  static const auto* g = [] {
    cs::Config config;
    config.models = chatwire::fuzz::model_configs();
    cs::LoadedModels models;
    for (const auto& m : chatwire::fuzz::models_under(cs::BackendApi::llama_cpp).models)
      models.models.push_back(std::make_unique<const cs::ServedModel>(*m));
    return new cs::Gateway(config, std::move(models));
  }();
  return *g;
}

// A reply the client gets: JSON, and an error body with a message unless it is a 200.
void check_reply(const cs::HttpReply& r) {
  if (r.status >= 500) std::abort();
  auto body = nlohmann::json::parse(r.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) std::abort();
  if (r.status != 200) {
    auto e = body.find("error");
    if (r.status < 400 || e == body.end() || !e->is_object() || !(*e)["message"].is_string() ||
        (*e)["message"].get<std::string>().empty())
      std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  const cs::Gateway& g = gateway();
  constexpr std::string_view kTargets[] = {"/v1/chat/render", "/tokenize", "/detokenize"};
  const std::uint8_t pick = data[0] % 10;
  if (pick == 9) {  // the rest as a path under an item route (GET /v1/models/{id})
    const std::string target = "/v1/models/" + std::string(body);
    auto route = g.route("GET", target);
    if (!route) {
      check_reply(g.error_reply(route.error()));
      return 0;
    }
    check_reply((*route)->answer(g, cs::Gateway::route_request(**route, target, "")));
    return 0;
  }
  if (pick < 3) {
    auto route = g.route("POST", kTargets[pick]);
    if (!route || (*route)->answer == nullptr) std::abort();
    check_reply((*route)->answer(g, cs::RouteRequest{body, {}}));
    return 0;
  }
  // Chat completions (3-5) and responses (6-8) under each backend API (the job's body is built
  // by the API's row).
  const cs::BackendApi api = chatwire::fuzz::kApis[(pick - 3) % 3];
  auto job = [&]() -> chatwire::Result<cs::ChatJob> {
    if (pick < 6) return cs::plan_chat(chatwire::fuzz::models_under(api), body);
    auto planned = cs::plan_responses(chatwire::fuzz::models_under(api), body);
    if (!planned) return planned.error();
    return std::move(planned->chat);
  }();
  if (!job) {
    const cs::HttpError e = cs::http_error(job.error());
    check_reply(g.error_reply(e));
    return 0;
  }
  auto backend = nlohmann::json::parse(job->backend_body, nullptr, false);
  if (backend.is_discarded() || !backend.is_object()) std::abort();
  for (std::size_t choice = 1; choice < job->params.n; ++choice)
    if (nlohmann::json::parse(job->backend_body_for(choice), nullptr, false).is_discarded())
      std::abort();
  return 0;
}
