// The gateway over real sockets, in process, against the fake backend of fake_backend.hpp:
// chat completions streamed and not, backend faults as statuses or error events, a client
// that disconnects cancelling its backend request, limits (413, 429), the graceful stop, and
// the server still serving after every fault.
#include "serve/server.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <thread>
#include <vector>

#include "fake_backend.hpp"
#include "test_models.hpp"

namespace cs = chatwire::serve;
namespace ct = chatwire::serve::testing;
using cs::json;

namespace {

// The gateway on 127.0.0.1, any free port, run on its own thread; stopped and joined at the end.
class RunningServer {
 public:
  explicit RunningServer(cs::Config config) {
    config.host = "127.0.0.1";
    config.port = 0;
    config.worker_threads = 1;
    gateway_ = std::make_unique<cs::Gateway>(config, ct::models_with(config.models.front()));
    server_ = std::make_unique<cs::Server>(*gateway_);
    auto port = server_->listen();
    if (!port) throw std::runtime_error(port.error().to_string());
    port_ = *port;
    thread_ = std::thread([this] { server_->run(/*handle_signals=*/false); });
  }
  ~RunningServer() { stop(); }
  void stop() {
    if (!thread_.joinable()) return;
    server_->stop();
    thread_.join();
  }
  std::uint16_t port() const { return port_; }

 private:
  std::unique_ptr<cs::Gateway> gateway_;
  std::unique_ptr<cs::Server> server_;
  std::uint16_t port_ = 0;
  std::thread thread_;
};

cs::Config config_for(const ct::FakeBackend& backend) {
  cs::Config c;
  c.models.push_back(ct::model_config("qwen3", backend.url()));
  c.timeouts.idle_ms = 300;
  c.timeouts.connect_ms = 1000;
  c.timeouts.shutdown_grace_ms = 200;
  return c;
}

int connect_to(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  timeval tv{10, 0};  // a test never waits longer on one read
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string request_text(const std::string& method, const std::string& target,
                         const std::string& body, const std::string& headers = "") {
  return method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + headers +
         "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

struct Reply {
  int status = 0;
  std::string head, body;
};

std::string dechunk(const std::string& s) {
  std::string out;
  std::size_t at = 0;
  while (at < s.size()) {
    const auto eol = s.find("\r\n", at);
    if (eol == std::string::npos) break;
    const std::size_t n = std::stoul(s.substr(at, eol - at), nullptr, 16);
    if (n == 0) break;
    out += s.substr(eol + 2, n);
    at = eol + 2 + n + 2;
  }
  return out;
}

// One request on its own connection, read to the end.
Reply http(std::uint16_t port, const std::string& method, const std::string& target,
           const std::string& body = "", const std::string& headers = "") {
  Reply r;
  const int fd = connect_to(port);
  if (fd < 0) return r;
  ct::send_all(fd, request_text(method, target, body, headers));
  std::string in;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    in.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  const auto end = in.find("\r\n\r\n");
  if (end == std::string::npos || in.size() < 12) return r;
  r.status = std::stoi(in.substr(9, 3));
  r.head = in.substr(0, end);
  r.body = in.substr(end + 4);
  if (r.head.find("Transfer-Encoding: chunked") != std::string::npos) r.body = dechunk(r.body);
  return r;
}

std::string chat(bool stream, const std::string& extra = "") {
  // Appended piece by piece: GCC 12 sees a false array-bounds overflow in the chained +.
  std::string body = R"({"model": "qwen3", "messages": [{"role": "user", "content": "hi"}],)";
  body += R"( "chat_template_kwargs": {"enable_thinking": false}, "stream": )";
  body += stream ? "true" : "false";
  body += extra;
  body += "}";
  return body;
}

// Polls `done` every 10 ms for at most 5 s.
template <typename F>
bool eventually(F done) {
  for (int i = 0; i < 500; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

TEST(Server, ChatCompletionsStreamedAndNot) {
  ct::FakeBackend backend(ct::Fault::none, {"<tool_call>\n{\"name\": \"get_weather\", ",
                                            "\"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"});
  RunningServer server(config_for(backend));
  const std::string tools =
      R"(, "tools": [{"type": "function", "function": {"name": "get_weather", "parameters":
         {"type": "object", "properties": {"city": {"type": "string"}}}}}])";
  auto plain = http(server.port(), "POST", "/v1/chat/completions", chat(false, tools));
  ASSERT_EQ(plain.status, 200) << plain.body;
  const json body = json::parse(plain.body);
  EXPECT_EQ(body["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(body["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_TRUE(backend.last_body()["prompt"].is_array());  // token ids, not text

  auto streamed = http(server.port(), "POST", "/v1/chat/completions",
                       chat(true, tools + R"(, "stream_options": {"include_usage": true})"));
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  EXPECT_NE(streamed.head.find("text/event-stream"), std::string::npos);
  EXPECT_TRUE(streamed.body.starts_with("data: {")) << streamed.body;
  EXPECT_NE(streamed.body.find(R"("finish_reason":"tool_calls")"), std::string::npos);
  EXPECT_NE(streamed.body.find(R"("choices":[],"usage")"), std::string::npos);
  EXPECT_TRUE(streamed.body.ends_with("data: [DONE]\n\n")) << streamed.body;
  EXPECT_EQ(backend.requests(), 2);
}

// With api_keys a request without one of them is 401 before anything is planned or sent to
// the backend (health and metrics stay open); the backend's own key goes in its requests.
TEST(Server, ApiKeysOnTheClientSideAndTheBackendSide) {
  ct::FakeBackend backend(ct::Fault::none);
  cs::Config config = config_for(backend);
  config.api_keys = {"sk-gateway"};
  config.models.front().backend_api_key = "sk-backend";
  RunningServer server(config);
  for (const std::string& headers :
       {std::string(), std::string("Authorization: Bearer nope\r\n")}) {
    auto refused = http(server.port(), "POST", "/v1/chat/completions", chat(false), headers);
    EXPECT_EQ(refused.status, 401) << refused.body;
    EXPECT_EQ(json::parse(refused.body)["error"]["code"], "invalid_api_key");
    EXPECT_EQ(http(server.port(), "GET", "/v1/models", "", headers).status, 401);
  }
  EXPECT_EQ(backend.requests(), 0);
  EXPECT_EQ(http(server.port(), "GET", "/health").status, 200);
  EXPECT_EQ(http(server.port(), "GET", "/metrics").status, 200);
  const std::string key = "Authorization: Bearer sk-gateway\r\n";
  EXPECT_EQ(http(server.port(), "GET", "/v1/models", "", key).status, 200);
  auto answered = http(server.port(), "POST", "/v1/chat/completions", chat(false), key);
  ASSERT_EQ(answered.status, 200) << answered.body;
  EXPECT_EQ(backend.requests(), 1);
  // The backend gets its own key, never the client's.
  const std::string head = backend.last_head();
  EXPECT_NE(head.find("Authorization: Bearer sk-backend\r\n"), std::string::npos) << head;
  EXPECT_EQ(head.find("sk-gateway"), std::string::npos) << head;
}

TEST(Server, BackendConnectionsAreKeptAliveAndReused) {
  ct::FakeBackend backend(ct::Fault::keep_alive);
  RunningServer server(config_for(backend));
  for (const bool stream : {false, true, false}) {
    auto r = http(server.port(), "POST", "/v1/chat/completions", chat(stream));
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_NE(r.body.find(" there\""), std::string::npos) << r.body;
  }
  EXPECT_EQ(backend.requests(), 3);
  EXPECT_EQ(backend.connections(), 1);
}

// A kept-alive connection the backend closed while idle: the request goes once more, on a new
// connection. A backend that is slow to answer on a kept-alive connection is not sent the
// request twice: the idle timeout is a 504 after one attempt.
TEST(Server, OnlyAConnectionTheBackendClosedIsTriedAgain) {
  {
    ct::FakeBackend backend(ct::Fault::closes_kept_connection);
    RunningServer server(config_for(backend));
    for (int i = 0; i < 2; ++i) {
      auto r = http(server.port(), "POST", "/v1/chat/completions", chat(false));
      ASSERT_EQ(r.status, 200) << r.body;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the close reaches us
    }
    EXPECT_EQ(backend.requests(), 2);
    EXPECT_EQ(backend.connections(), 2);
  }
  ct::FakeBackend backend(ct::Fault::silent_after_first);
  RunningServer server(config_for(backend));
  ASSERT_EQ(http(server.port(), "POST", "/v1/chat/completions", chat(false)).status, 200);
  auto r = http(server.port(), "POST", "/v1/chat/completions", chat(false));
  EXPECT_EQ(r.status, 504) << r.body;
  EXPECT_EQ(backend.requests(), 2);  // not 3: the silent one was not sent again
}

// A client that stops reading a stream but keeps its connection open is gone once a write has
// waited timeouts.client_write_ms: its backend request is cancelled and the server goes on.
TEST(Server, AClientThatStopsReadingIsGoneAfterTheWriteTimeout) {
  ct::FakeBackend backend(ct::Fault::flood);
  auto config = config_for(backend);
  config.timeouts.client_write_ms = 300;
  RunningServer server(config);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const int small = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(server.port());
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_TRUE(ct::send_all(fd, request_text("POST", "/v1/chat/completions", chat(true))));
  // Never read: the backend's flood fills the socket buffers, the gateway's write waits.
  EXPECT_TRUE(eventually([&] { return backend.peer_closed(); }));
  EXPECT_EQ(http(server.port(), "GET", "/health").status, 200);
  ::close(fd);
}

TEST(Server, BackendFaultsGiveTheirStatusAndTheServerKeepsServing) {
  // A backend refusing the request (400) or busy (429) is passed on with its message, so the
  // OpenAI clients do not retry a refusal as a server error; its failures are 5xx.
  struct Case {
    ct::Fault fault;
    int status;
    const char* type;
    const char* quoted;  // in the message ("" = any)
  };
  const Case faults[] = {
      {ct::Fault::http500, 502, "server_error", "out of memory"},
      {ct::Fault::garbage, 502, "server_error", ""},
      {ct::Fault::drop, 502, "server_error", ""},
      {ct::Fault::stall, 504, "server_error", ""},
      {ct::Fault::http400, 400, "invalid_request_error", "context"},
      {ct::Fault::http429, 429, "rate_limit_error", "busy"},
  };
  for (const auto& f : faults) {
    ct::FakeBackend backend(f.fault);
    RunningServer server(config_for(backend));
    auto r = http(server.port(), "POST", "/v1/chat/completions", chat(false));
    EXPECT_EQ(r.status, f.status) << r.body;
    const json e = json::parse(r.body, nullptr, false);
    ASSERT_TRUE(e.is_object()) << r.body;
    ASSERT_TRUE(e["error"]["message"].is_string()) << r.body;
    EXPECT_NE(e["error"]["message"].get<std::string>().find(f.quoted), std::string::npos) << r.body;
    EXPECT_EQ(e["error"]["type"], f.type) << r.body;
    EXPECT_EQ(http(server.port(), "GET", "/health").status, 200);
  }
  // No backend listening at all.
  cs::Config c;
  c.models.push_back(ct::model_config("qwen3", "http://127.0.0.1:1"));
  RunningServer server(c);
  auto r = http(server.port(), "POST", "/v1/chat/completions", chat(false));
  EXPECT_EQ(r.status, 502) << r.body;
  EXPECT_EQ(http(server.port(), "GET", "/health").status, 200);
}

TEST(Server, AStallMidStreamIsAnErrorEventThenDone) {
  ct::FakeBackend backend(ct::Fault::stall);
  RunningServer server(config_for(backend));
  auto r = http(server.port(), "POST", "/v1/chat/completions", chat(true));
  ASSERT_EQ(r.status, 200) << r.body;  // the stream had begun
  EXPECT_NE(r.body.find(R"(data: {"error":)"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("code":"backend_timeout")"), std::string::npos) << r.body;
  EXPECT_TRUE(r.body.ends_with("data: [DONE]\n\n")) << r.body;
}

// POST /v1/responses: the same backend reply as a response object and as Responses events; a
// backend that stalls mid-stream is an `error` event then response.failed; a refusal is a 400
// naming the Responses field.
TEST(Server, ResponsesWholeStreamedAndFailing) {
  ct::FakeBackend backend(ct::Fault::keep_alive);
  RunningServer server(config_for(backend));
  const std::string input =
      R"({"model": "qwen3", "input": "hi", "chat_template_kwargs": {"enable_thinking": false})";
  auto whole = http(server.port(), "POST", "/v1/responses", input + "}");
  ASSERT_EQ(whole.status, 200) << whole.body;
  const json r = json::parse(whole.body);
  EXPECT_EQ(r["object"], "response");
  EXPECT_EQ(r["status"], "completed");
  ASSERT_EQ(r["output"].size(), 1u) << whole.body;
  EXPECT_EQ(r["output"][0]["type"], "message");
  EXPECT_NE(r["output"][0]["content"][0]["text"].get<std::string>().find(" there"),
            std::string::npos);
  EXPECT_EQ(backend.last_body()["prompt"].size(), r["usage"]["input_tokens"]);

  auto streamed = http(server.port(), "POST", "/v1/responses", input + R"(, "stream": true})");
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  EXPECT_TRUE(streamed.body.starts_with("event: response.created\ndata: {")) << streamed.body;
  EXPECT_NE(streamed.body.find("event: response.output_text.delta\n"), std::string::npos);
  EXPECT_EQ(streamed.body.find("data: [DONE]"), std::string::npos);  // not in the Responses API
  const auto last = streamed.body.rfind("event: ");
  ASSERT_NE(last, std::string::npos);
  EXPECT_TRUE(streamed.body.substr(last).starts_with("event: response.completed\n"))
      << streamed.body.substr(last);

  auto refused = http(server.port(), "POST", "/v1/responses",
                      input + R"(, "previous_response_id": "resp_1"})");
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(json::parse(refused.body)["error"]["param"], "previous_response_id");
  EXPECT_EQ(backend.requests(), 2);
}

TEST(Server, ResponsesStreamThatStallsEndsWithErrorThenFailed) {
  ct::FakeBackend backend(ct::Fault::stall);
  RunningServer server(config_for(backend));
  auto r = http(server.port(), "POST", "/v1/responses",
                R"({"model": "qwen3", "input": "hi", "stream": true,
                    "chat_template_kwargs": {"enable_thinking": false}})");
  ASSERT_EQ(r.status, 200) << r.body;  // the stream had begun
  EXPECT_TRUE(r.body.starts_with("event: response.created\n")) << r.body;
  const auto error = r.body.find("event: error\ndata: ");
  ASSERT_NE(error, std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("code":"backend_timeout")", error), std::string::npos) << r.body;
  const auto failed = r.body.find("event: response.failed\n", error);
  ASSERT_NE(failed, std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("status":"failed")", failed), std::string::npos);
}

// access_log: one JSON line per answered request, with its route, model, status, tokens and
// times, the response's id, and never the body (here the prompt's "hi" and the reply's text).
TEST(Server, TheAccessLogHasALinePerRequestAndNoBody) {
  ct::FakeBackend backend(ct::Fault::keep_alive);
  cs::Config config = config_for(backend);
  const std::string log_path =
      ::testing::TempDir() + "chatwire-access-" + std::to_string(::getpid()) + ".jsonl";
  std::remove(log_path.c_str());
  config.access_log = log_path;
  config.api_keys = {"sk-log"};
  const std::string key = "Authorization: Bearer sk-log\r\n";
  std::string chat_id, response_id;
  json chat_usage;
  {
    RunningServer server(config);
    auto c = http(server.port(), "POST", "/v1/chat/completions", chat(false), key);
    ASSERT_EQ(c.status, 200) << c.body;
    chat_id = json::parse(c.body)["id"];
    chat_usage = json::parse(c.body)["usage"];
    auto r = http(server.port(), "POST", "/v1/responses",
                  R"({"model": "qwen3", "input": "hi", "stream": true,
                      "chat_template_kwargs": {"enable_thinking": false}})",
                  key);
    ASSERT_EQ(r.status, 200) << r.body;
    const auto id_at = r.body.find(R"("id":"resp_)");
    ASSERT_NE(id_at, std::string::npos);
    response_id = r.body.substr(id_at + 6, 29);
    EXPECT_EQ(http(server.port(), "GET", "/v2/nothing?token=secret", "", key).status, 404);
    EXPECT_EQ(http(server.port(), "GET", "/v1/models").status, 401);
    auto health = http(server.port(), "GET", "/health", "", "X-Request-Id: trace-42\r\n");
    EXPECT_EQ(health.status, 200);
    EXPECT_NE(health.head.find("X-Request-Id: trace-42\r\n"), std::string::npos) << health.head;
    auto odd = http(server.port(), "GET", "/health", "", "X-Request-Id: two words\r\n");
    EXPECT_EQ(odd.head.find("X-Request-Id"), std::string::npos) << odd.head;  // not echoed
  }
  std::ifstream in(log_path);
  std::vector<json> lines;
  for (std::string line; std::getline(in, line);) {
    for (const char* body_text : {"\"hi\"", "messages", "content", " there"})
      EXPECT_EQ(line.find(body_text), std::string::npos) << line;  // no prompt, no reply
    lines.push_back(json::parse(line));
  }
  std::remove(log_path.c_str());
  ASSERT_EQ(lines.size(), 6u);
  const json& c = lines[0];
  EXPECT_EQ(c["method"], "POST");
  EXPECT_EQ(c["path"], "/v1/chat/completions");
  EXPECT_EQ(c["route"], "chat_completions");
  EXPECT_EQ(c["status"], 200);
  EXPECT_EQ(c["model"], "qwen3");
  EXPECT_EQ(c["id"], chat_id);
  EXPECT_EQ(c["stream"], false);
  EXPECT_EQ(c["prompt_tokens"], chat_usage["prompt_tokens"]);
  EXPECT_GT(c["prompt_tokens"].get<int>(), 5);
  EXPECT_EQ(c["completion_tokens"], chat_usage["completion_tokens"]);
  EXPECT_TRUE(c["first_token_seconds"].is_number());
  EXPECT_GE(c["seconds"].get<double>(), c["first_token_seconds"].get<double>());
  EXPECT_TRUE(c["client"].get<std::string>().starts_with("127.0.0.1:")) << c;
  EXPECT_TRUE(c["time"].get<std::string>().ends_with("Z")) << c;
  EXPECT_EQ(lines[1]["route"], "responses");
  EXPECT_EQ(lines[1]["id"], response_id);
  EXPECT_EQ(lines[1]["stream"], true);
  EXPECT_EQ(lines[2]["path"], "/v2/nothing");  // the query is not written
  EXPECT_EQ(lines[2]["status"], 404);
  EXPECT_TRUE(lines[2]["route"].is_null());
  EXPECT_EQ(lines[2]["error"], "not_found");
  EXPECT_FALSE(lines[2].contains("model"));
  EXPECT_EQ(lines[3]["status"], 401);
  EXPECT_EQ(lines[3]["error"], "invalid_api_key");
  EXPECT_EQ(lines[4]["route"], "health");
  EXPECT_FALSE(lines[4].contains("error"));
  EXPECT_EQ(lines[4]["request_id"], "trace-42");
  EXPECT_FALSE(lines[5].contains("request_id"));

  // A log that cannot be opened stops the start, naming it.
  config.access_log = ::testing::TempDir();  // a directory
  cs::Gateway g(config, ct::models_with(config.models.front()));
  cs::Server server(g);
  auto port = server.listen();
  ASSERT_FALSE(port);
  EXPECT_EQ(port.error().path, "access_log");
}

// cors_origins: a browser page of an allowed origin gets its preflight answered (no key needed,
// as browsers send none) and Access-Control-Allow-Origin on every answer, streamed or not,
// errors included; another origin gets none, and OPTIONS without CORS stays a 405.
TEST(Server, CorsForTheAllowedOriginsOnly) {
  ct::FakeBackend backend(ct::Fault::keep_alive);
  cs::Config config = config_for(backend);
  config.cors_origins = {"https://app.example"};
  config.api_keys = {"sk-cors"};
  RunningServer server(config);
  const std::string from_app = "Origin: https://app.example\r\n";
  const std::string key = "Authorization: Bearer sk-cors\r\n";
  auto pre = http(server.port(), "OPTIONS", "/v1/chat/completions", "",
                  from_app +
                      "Access-Control-Request-Method: POST\r\n"
                      "Access-Control-Request-Headers: authorization, content-type, "
                      "x-stainless-os\r\n");
  EXPECT_EQ(pre.status, 204) << pre.head;
  EXPECT_NE(pre.head.find("Access-Control-Allow-Origin: https://app.example\r\n"),
            std::string::npos)
      << pre.head;
  EXPECT_NE(pre.head.find("Access-Control-Allow-Methods: POST"), std::string::npos) << pre.head;
  // The headers the browser asks for (the OpenAI clients add their X-Stainless-* ones).
  EXPECT_NE(
      pre.head.find("Access-Control-Allow-Headers: authorization, content-type, x-stainless-os"),
      std::string::npos)
      << pre.head;
  for (const bool stream : {false, true}) {
    auto r = http(server.port(), "POST", "/v1/chat/completions", chat(stream), from_app + key);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_NE(r.head.find("Access-Control-Allow-Origin: https://app.example\r\n"),
              std::string::npos)
        << r.head;
    EXPECT_NE(r.head.find("Vary: Origin"), std::string::npos) << r.head;
    EXPECT_NE(r.head.find("Access-Control-Expose-Headers: X-Request-Id"), std::string::npos);
  }
  auto refused = http(server.port(), "GET", "/v1/models", "", from_app);
  EXPECT_EQ(refused.status, 401);
  EXPECT_NE(refused.head.find("Access-Control-Allow-Origin"), std::string::npos);  // readable
  const std::string elsewhere = "Origin: https://other.example\r\n";
  auto other = http(server.port(), "GET", "/v1/models", "", elsewhere + key);
  EXPECT_EQ(other.status, 200);
  EXPECT_EQ(other.head.find("Access-Control-Allow-Origin"), std::string::npos) << other.head;
  EXPECT_NE(other.head.find("Vary: Origin"), std::string::npos) << other.head;  // for caches
  EXPECT_EQ(http(server.port(), "OPTIONS", "/v1/models", "", elsewhere).status, 405);
  EXPECT_EQ(http(server.port(), "OPTIONS", "/v2/nothing", "", from_app).status, 404);

  cs::Config closed = config_for(backend);  // no cors_origins
  RunningServer no_cors(closed);
  auto r = http(no_cors.port(), "OPTIONS", "/v1/chat/completions", "", from_app);
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.head.find("Access-Control-Allow-Origin"), std::string::npos);
}

TEST(Server, AClientThatDisconnectsCancelsItsBackendRequest) {
  for (const bool stream : {true, false}) {
    ct::FakeBackend backend(stream ? ct::Fault::slow : ct::Fault::stall);
    cs::Config config = config_for(backend);
    config.timeouts.idle_ms = 20000;  // the backend's silence is not what ends it
    RunningServer server(config);
    const int fd = connect_to(server.port());
    ASSERT_GE(fd, 0);
    ct::send_all(fd, request_text("POST", "/v1/chat/completions", chat(stream)));
    if (stream) {
      char buf[256];
      ASSERT_GT(::recv(fd, buf, sizeof buf, 0), 0);  // the stream has begun
    } else {
      ASSERT_TRUE(eventually([&] { return backend.requests() == 1; }));
    }
    ::close(fd);
    EXPECT_TRUE(eventually([&] { return backend.peer_closed(); })) << "stream " << stream;
    EXPECT_EQ(http(server.port(), "GET", "/health").status, 200);
  }
}

// What the head refuses is answered before the body is read: a request without a key (or to no
// route) that announces a large body gets its 401 (404) at once, not after the body, and a client
// that expects 100 Continue gets the refusal instead.
TEST(Server, TheHeadsRefusalComesBeforeTheBody) {
  ct::FakeBackend backend(ct::Fault::none);
  cs::Config config = config_for(backend);
  config.api_keys = {"sk-gateway"};
  RunningServer server(config);
  for (const auto& [target, status] : {std::pair<std::string, int>{"/tokenize", 401},
                                       std::pair<std::string, int>{"/nowhere", 404}}) {
    for (const std::string expect : {"", "Expect: 100-continue\r\n"}) {
      const int fd = connect_to(server.port());
      ASSERT_GE(fd, 0);
      // The head alone: the 1 MB body it announces never comes.
      ct::send_all(fd, "POST " + target + " HTTP/1.1\r\nHost: x\r\n" + expect +
                           "Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n");
      char buf[4096];
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      ASSERT_GT(n, 0) << target;
      const std::string answer(buf, static_cast<std::size_t>(n));
      EXPECT_TRUE(answer.starts_with("HTTP/1.1 " + std::to_string(status))) << answer;
      EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
      ::close(fd);
    }
  }
  EXPECT_EQ(backend.requests(), 0);
}

// HEAD is GET without the body; a 405 names the methods the path serves; a preflight of an item
// route is answered; refusals before any route ran are counted in chatwire_requests_total.
TEST(Server, HeadAllowPreflightOfItemsAndEveryAnswerCounted) {
  ct::FakeBackend backend(ct::Fault::none);
  cs::Config config = config_for(backend);
  config.cors_origins = {"https://app.example"};
  config.limits.max_body_bytes = 2000;
  RunningServer server(config);
  const auto get = http(server.port(), "GET", "/v1/models");
  const auto head = http(server.port(), "HEAD", "/v1/models");
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty()) << head.body;
  EXPECT_NE(head.head.find("Content-Length: " + std::to_string(get.body.size())), std::string::npos)
      << head.head;
  const auto wrong = http(server.port(), "PUT", "/v1/models");
  EXPECT_EQ(wrong.status, 405);
  EXPECT_NE(wrong.head.find("Allow: GET, HEAD"), std::string::npos) << wrong.head;
  const auto preflight =
      http(server.port(), "OPTIONS", "/v1/models/qwen3", "",
           "Origin: https://app.example\r\nAccess-Control-Request-Method: GET\r\n");
  EXPECT_EQ(preflight.status, 204) << preflight.head;
  EXPECT_NE(preflight.head.find("Access-Control-Allow-Methods: GET, HEAD"), std::string::npos)
      << preflight.head;
  EXPECT_EQ(http(server.port(), "POST", "/v1/chat/completions",
                 chat(false, R"(, "user": ")" + std::string(5000, 'x') + "\""))
                .status,
            413);
  const auto metrics = http(server.port(), "GET", "/metrics").body;
  EXPECT_NE(metrics.find(R"(chatwire_requests_total{route="chat_completions",status="413"} 1)"),
            std::string::npos)
      << metrics;
}

TEST(Server, BodiesOverTheLimitAre413AndRequestsOverTheConcurrencyLimit429) {
  ct::FakeBackend backend(ct::Fault::stall);
  cs::Config config = config_for(backend);
  config.timeouts.idle_ms = 20000;
  config.limits.max_body_bytes = 2000;
  config.limits.max_concurrent_requests = 1;
  RunningServer server(config);
  auto big = http(server.port(), "POST", "/v1/chat/completions",
                  chat(false, R"(, "user": ")" + std::string(3 << 20, 'x') + "\""));
  EXPECT_EQ(big.status, 413) << big.body;
  EXPECT_EQ(json::parse(big.body)["error"]["code"], "request_too_large");
  // A head over limits.max_header_bytes is 431 (RFC 6585).
  auto long_head = http(server.port(), "GET", "/health", "",
                        "X-Padding: " + std::string(80 << 10, 'x') + "\r\n");
  EXPECT_EQ(long_head.status, 431) << long_head.head;

  const int fd = connect_to(server.port());  // holds the one slot
  ASSERT_GE(fd, 0);
  ct::send_all(fd, request_text("POST", "/v1/chat/completions", chat(true)));
  char buf[256];
  ASSERT_GT(::recv(fd, buf, sizeof buf, 0), 0);
  auto over = http(server.port(), "POST", "/v1/chat/completions", chat(false));
  EXPECT_EQ(over.status, 429) << over.body;
  EXPECT_EQ(http(server.port(), "GET", "/health").status, 200);  // not limited
  ::close(fd);
  EXPECT_TRUE(eventually([&] { return backend.peer_closed(); }));
}

TEST(Server, AClientExpecting100ContinueGetsItThenTheAnswer) {
  ct::FakeBackend backend(ct::Fault::none);
  RunningServer server(config_for(backend));
  const int fd = connect_to(server.port());
  ASSERT_GE(fd, 0);
  const std::string body = R"({"prompt": "hello world"})";
  ct::send_all(fd,
               "POST /tokenize HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
               "Expect: 100-continue\r\nContent-Length: " +
                   std::to_string(body.size()) + "\r\n\r\n");
  char buf[4096];
  const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  ASSERT_GT(n, 0);
  EXPECT_TRUE(std::string(buf, static_cast<std::size_t>(n)).starts_with("HTTP/1.1 100 Continue"));
  ct::send_all(fd, body);
  std::string in;
  ssize_t m;
  while ((m = ::recv(fd, buf, sizeof buf, 0)) > 0) in.append(buf, static_cast<std::size_t>(m));
  ::close(fd);
  EXPECT_TRUE(in.starts_with("HTTP/1.1 200")) << in;
  EXPECT_NE(in.find(R"("count":2)"), std::string::npos) << in;
}

// An HTTP/1.0 client gets its stream without chunked coding, which 1.0 does not have (RFC 9112
// 6.1: it read the chunk sizes as part of the events), ended by the connection's close, also
// when it asked to keep the connection alive.
TEST(Server, AnHttp10StreamIsNotChunkedAndEndsWithTheConnection) {
  ct::FakeBackend backend(ct::Fault::none, {"Hello", " there"});
  RunningServer server(config_for(backend));
  const int fd = connect_to(server.port());
  ASSERT_GE(fd, 0);
  const std::string body = chat(true);
  ct::send_all(fd,
               "POST /v1/chat/completions HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n"
               "Content-Type: application/json\r\nContent-Length: " +
                   std::to_string(body.size()) + "\r\n\r\n" + body);
  timeval wait{5, 0};  // a connection kept open (as before) fails the test, not hangs it
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  char buf[4096];
  std::string in;
  ssize_t m;
  while ((m = ::recv(fd, buf, sizeof buf, 0)) > 0) in.append(buf, static_cast<std::size_t>(m));
  ::close(fd);
  ASSERT_TRUE(in.starts_with("HTTP/1.0 200")) << in;
  const auto head_end = in.find("\r\n\r\n");
  ASSERT_NE(head_end, std::string::npos);
  const std::string head = in.substr(0, head_end), events = in.substr(head_end + 4);
  EXPECT_EQ(head.find("Transfer-Encoding"), std::string::npos) << head;
  EXPECT_TRUE(events.starts_with("data: {")) << events;
  EXPECT_TRUE(events.ends_with("data: [DONE]\n\n")) << events;
}

TEST(Server, StopCancelsOpenStreamsAfterTheGracePeriodWithAnErrorEvent) {
  ct::FakeBackend backend(ct::Fault::stall);
  cs::Config config = config_for(backend);
  config.timeouts.idle_ms = 20000;
  RunningServer server(config);
  const int fd = connect_to(server.port());
  ASSERT_GE(fd, 0);
  ct::send_all(fd, request_text("POST", "/v1/chat/completions", chat(true)));
  std::string in;
  char buf[4096];
  ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  ASSERT_GT(n, 0);
  in.append(buf, static_cast<std::size_t>(n));
  server.stop();  // returns once every connection has closed
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) in.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  EXPECT_NE(in.find("shutting_down"), std::string::npos) << in;
  EXPECT_NE(in.find("data: [DONE]"), std::string::npos) << in;
  EXPECT_TRUE(eventually([&] { return backend.peer_closed(); }));
}

}  // namespace
