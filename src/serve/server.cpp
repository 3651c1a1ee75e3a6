// The HTTP server (see server.hpp): Beast sessions as coroutines on one I/O thread, CPU work
// on a worker pool, chat completions relayed from backends through ChatRelay.
#include "serve/server.hpp"

// clang-format off
#include <utility>  // first: Boost 1.74's asio/awaitable.hpp uses std::exchange without it
// clang-format on

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <list>
#include <map>
#include <thread>
#include <type_traits>

#include "serve/access_log.hpp"
#include "serve/backend_client.hpp"
#include "serve/chat_relay.hpp"
#include "serve/http_errors.hpp"
#include "serve/responses.hpp"
#include "serve/sse_reader.hpp"

namespace chatwire::serve {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kAwait = net::use_awaitable;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// A chat completion in progress: what the client watcher, the shutdown and the relay share.
struct ActiveChat {
  BackendCall* backend = nullptr;
  bool client_gone = false;
  bool shutdown = false;
  bool watcher_running = false;
  std::optional<net::steady_timer> watcher_done;  // cancelled when the watcher ends

  void cancel_backend() {
    if (backend != nullptr) backend->cancel();
  }
};

// One client connection.
struct Session {
  beast::tcp_stream stream;
  std::string client;        // address:port, for the access log
  std::string allow_origin;  // the current request's Access-Control-Allow-Origin ("" = none)
  std::string request_id;    // the current request's X-Request-Id, echoed ("" = none)
  beast::flat_buffer buffer;
  bool busy = false;  // a request is being answered (else waiting for one)
  ActiveChat* chat = nullptr;
  explicit Session(tcp::socket socket) : stream(std::move(socket)) {}
};

}  // namespace

struct Server::Impl {
  const Gateway& gateway;
  const Config& config;
  net::io_context io{1};
  net::thread_pool workers;
  tcp::acceptor acceptor{io};
  BackendPool pool{io.get_executor(), config};
  std::map<std::string, BackendUrl, std::less<>> backend_urls;  // by served model name
  std::list<Session*> sessions;
  std::size_t in_flight = 0;  // limited requests being answered
  AccessLog access_log;
  bool stopping = false;
  net::steady_timer grace{io};
  std::optional<net::signal_set> signals;

  explicit Impl(const Gateway& g)
      : gateway(g),
        config(g.config()),
        workers(g.config().worker_threads != 0
                    ? g.config().worker_threads
                    : std::max<std::size_t>(1, std::thread::hardware_concurrency())) {}

  // Runs `f` on a worker thread; the coroutine resumes on the I/O thread with its result.
  template <typename F>
  net::awaitable<std::invoke_result_t<F&>> on_worker(F& f) {
    using R = std::invoke_result_t<F&>;
    // Asio 1.74's co_spawn wants a default-constructible result: an optional carries it.
    auto task = [&f]() -> net::awaitable<std::optional<R>> { co_return std::optional<R>(f()); };
    std::optional<R> result = co_await net::co_spawn(workers, task, kAwait);
    co_return std::move(*result);
  }

  net::awaitable<void> accept_loop();
  net::awaitable<void> serve(Session& s);
  // `head_only`: the answer to a HEAD request, its headers (Content-Length included) without
  // the body.
  net::awaitable<bool> write_reply(Session& s, const HttpReply& r, unsigned version,
                                   bool keep_alive, const HeaderList* extra = nullptr,
                                   bool head_only = false);
  net::awaitable<bool> chat(Session& s, const std::string& body, unsigned version, bool keep_alive,
                            Clock::time_point started, const Route& route, AccessRecord& record);
  // Writes the request's access log line (when there is a log), its time measured from `started`.
  void log_access(AccessRecord& record, Clock::time_point started,
                  const HttpReply* reply = nullptr);
  // What a request's head alone refuses: no route, a method the path does not serve, no API key,
  // or a server shutting down (routes that render). nullopt: the body is worth reading.
  struct Refusal {
    HttpReply reply;
    std::string route;   // the metrics label ("" = no route)
    HeaderList headers;  // Allow, for a 405
  };
  std::optional<Refusal> refused_by_head(const http::request<http::string_body>& head) const;
  // The route of a request's head; HEAD is GET without the body (RFC 9110: a general-purpose
  // server supports both).
  Result<const Route*> route_of(const http::request<http::string_body>& head) const {
    return gateway.route(
        head.method() == http::verb::head
            ? std::string_view("GET")
            : std::string_view(head.method_string().data(), head.method_string().size()),
        std::string_view(head.target().data(), head.target().size()));
  }
  net::awaitable<void> watch_client(Session& s, ActiveChat& chat);
  net::awaitable<void> drain(Session& s);
  void begin_shutdown();
  void end_of_session();
};

namespace {

// A client's X-Request-Id, when it is one: up to 128 visible ASCII characters ("" otherwise:
// it goes back in a header and into the log).
std::string request_id_of(boost::beast::string_view value) {
  if (value.empty() || value.size() > 128) return "";
  for (char c : value)
    if (c <= ' ' || c > '~') return "";
  return std::string(value.data(), value.size());
}

// On every answer: the client's X-Request-Id, echoed so a client (or a proxy) can match answer
// and request; CORS's allowed origin for a request from one (the answer varies by Origin).
template <typename Response>
void set_answer_headers(Response& res, const Session& s, const Config& config) {
  if (!s.request_id.empty()) res.set("X-Request-Id", s.request_id);
  if (!config.cors_origins.empty())
    res.set(http::field::vary, "Origin");  // for caches, allowed origin or not
  if (s.allow_origin.empty()) return;
  res.set(http::field::access_control_allow_origin, s.allow_origin);
  res.set(http::field::access_control_expose_headers, "X-Request-Id");
}

}  // namespace

namespace {

// A write to a client must end within timeouts.client_write_ms: a client that stops reading but
// keeps its connection open would otherwise hold its concurrency slot and its backend request for
// good. The stream's timer closes the socket, which also ends the client watcher, so the backend
// request is cancelled.
class WriteDeadline {
 public:
  WriteDeadline(beast::tcp_stream& stream, std::uint32_t ms) : stream_(stream) {
    stream_.expires_after(std::chrono::milliseconds(ms));
  }
  ~WriteDeadline() { stream_.expires_never(); }
  WriteDeadline(const WriteDeadline&) = delete;
  WriteDeadline& operator=(const WriteDeadline&) = delete;

 private:
  beast::tcp_stream& stream_;
};

}  // namespace

net::awaitable<bool> Server::Impl::write_reply(Session& s, const HttpReply& r, unsigned version,
                                               bool keep_alive, const HeaderList* extra,
                                               bool head_only) {
  // The same head for both bodies: HEAD's answer is GET's without the body.
  const auto head = [&](auto& res) {
    res.set(http::field::server, "chatwire");
    res.set(http::field::content_type, r.content_type);
    set_answer_headers(res, s, config);
    if (extra != nullptr)
      for (const auto& [name, value] : *extra) res.set(name, value);
    res.keep_alive(keep_alive);
  };
  beast::error_code ec;
  WriteDeadline deadline(s.stream, config.timeouts.client_write_ms);
  if (head_only) {
    http::response<http::empty_body> res{static_cast<http::status>(r.status), version};
    head(res);
    res.content_length(r.body.size());
    http::response_serializer<http::empty_body> sr{res};
    co_await http::async_write_header(s.stream, sr, net::redirect_error(kAwait, ec));
    co_return !ec;
  }
  http::response<http::string_body> res{static_cast<http::status>(r.status), version};
  head(res);
  res.body() = r.body;
  res.prepare_payload();
  co_await http::async_write(s.stream, res, net::redirect_error(kAwait, ec));
  co_return !ec;
}

auto Server::Impl::refused_by_head(const http::request<http::string_body>& head) const
    -> std::optional<Refusal> {
  const std::string_view target(head.target().data(), head.target().size());
  auto route = route_of(head);
  if (!route) {
    Refusal r{gateway.error_reply(route.error()), "", {}};
    if (r.reply.status == 405) r.headers.push_back({"Allow", gateway.methods_of(target)});
    return r;
  }
  const Route& rt = **route;
  const auto authorization = head[http::field::authorization];
  if (auto allowed =
          gateway.authorize(rt, std::string_view(authorization.data(), authorization.size()));
      !allowed)
    return Refusal{gateway.error_reply(allowed.error()), std::string(rt.name), {}};
  if (stopping && rt.limited)
    return Refusal{
        gateway.error_reply(gateway_error("ShuttingDown", "the server is shutting down")),
        std::string(rt.name),
        {}};
  return std::nullopt;
}

// Reads the client while its chat runs: an end of stream or a reset is a client that went
// away, and cancels the backend request. Bytes a client sends early stay in the buffer.
net::awaitable<void> Server::Impl::watch_client(Session& s, ActiveChat& chat) {
  beast::error_code ec;
  const std::size_t n = co_await s.stream.socket().async_read_some(s.buffer.prepare(4096),
                                                                   net::redirect_error(kAwait, ec));
  s.buffer.commit(n);
  if (ec && ec != net::error::operation_aborted) {
    chat.client_gone = true;
    chat.cancel_backend();
  }
  chat.watcher_running = false;
  chat.watcher_done->cancel();
}

// After an early answer (413) to a client still sending its body: reads and drops what it sends
// for a moment, so that closing does not reset the connection before the client has read the
// answer.
net::awaitable<void> Server::Impl::drain(Session& s) {
  constexpr auto kDrainTime = std::chrono::seconds(2);  // in all, whatever the client sends
  beast::error_code ec;
  s.stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  s.stream.expires_after(kDrainTime);
  char sink[16384];
  while (!ec) co_await s.stream.async_read_some(net::buffer(sink), net::redirect_error(kAwait, ec));
  s.stream.expires_never();
}

void Server::Impl::log_access(AccessRecord& record, Clock::time_point started,
                              const HttpReply* reply) {
  if (!access_log.enabled()) return;
  record.seconds = seconds_since(started);
  if (reply != nullptr) {
    record.status = reply->status;
    record.error = reply->error_code;
  }
  access_log.write(record);
}

net::awaitable<bool> Server::Impl::chat(Session& s, const std::string& body, unsigned version,
                                        bool keep_alive, Clock::time_point started,
                                        const Route& route, AccessRecord& record) {
  const Gateway& g = gateway;
  const std::string route_name(route.name);
  // A Responses request is planned as the chat request it maps to; its writer turns what the
  // relay writes into the Responses shapes.
  std::optional<ResponsesRequest> responses_request;
  auto plan_request = [&]() -> Result<ChatJob> {
    if (route.relayed != Relayed::responses)
      return plan_chat(g.models(), body, 512, config.limits.max_choices);
    auto planned = plan_responses(g.models(), body, 512);
    if (!planned) return planned.error();
    responses_request = std::move(planned->request);
    return std::move(planned->chat);
  };
  auto plan = [&]() -> Result<ChatJob> {
    try {
      return plan_request();
    } catch (const std::exception& e) {  // a shape the checks missed: a refusal, never a crash
      return gateway_error("RequestError",
                           std::string("the request could not be read: ") + e.what());
    }
  };
  auto job = co_await on_worker(plan);
  if (!job) {
    const HttpError e = http_error(job.error());
    g.metrics().request(route_name, e.status, seconds_since(started));
    const HttpReply r = g.error_reply(e);
    log_access(record, started, &r);
    const bool written = co_await write_reply(s, r, version, keep_alive);
    co_return written;
  }
  record.model = job->model->config.name;
  record.stream = job->params.stream;
  std::optional<ResponsesWriter> responses;
  if (responses_request)
    responses.emplace(*responses_request, job->model->config.name, job->head.created,
                      job->model->config.reasoning_fields);
  record.id = responses ? responses->id() : job->head.id;
  auto relay = ChatRelay::start(*job, config.limits);
  if (!relay) {
    const HttpError e = http_error(gateway_error("InternalError", relay.error().to_string()));
    g.metrics().request(route_name, e.status, seconds_since(started));
    const HttpReply r = g.error_reply(e);
    log_access(record, started, &r);
    const bool written = co_await write_reply(s, r, version, keep_alive);
    co_return written;
  }
  const BackendUrl& url = backend_urls.at(job->model->config.name);  // checked by listen()

  g.metrics().stream_opened();
  ActiveChat active;
  active.watcher_done.emplace(io, Clock::time_point::max());
  s.chat = &active;
  std::unique_ptr<BackendCall> call;
  active.watcher_running = true;
  net::co_spawn(io, watch_client(s, active), net::detached);

  bool headers_sent = false, client_ok = true, first_output_seen = false;
  std::optional<HttpError> failure;
  std::string reply;  // what to send next

  // The relay's SSE text as the client's API writes it (Responses: its events, opened by
  // response.created); a translation that fails is the gateway's own bug, reported as such.
  bool responses_begun = false;
  auto client_text = [&](const std::string& text) -> std::string {
    if (!responses || text.empty()) return text;
    std::string out;
    if (!responses_begun) {
      out = responses->begin();
      responses_begun = true;
    }
    auto events = responses->on_chat_sse(text);
    if (!events) {
      failure = http_error(gateway_error("InternalError", events.error().to_string()));
      return out;
    }
    return out + *events;
  };
  // HTTP/1.0 has no chunked coding (RFC 9112 6.1: a server sends Transfer-Encoding only to a
  // 1.1 request): the stream's end is the connection's, which is closed after it.
  const bool chunked = version >= 11;
  auto send_chunk = [&](const std::string& relay_text) -> net::awaitable<bool> {
    const std::string text = client_text(relay_text);
    if (text.empty() || !client_ok) co_return client_ok;
    beast::error_code ec;
    WriteDeadline deadline(s.stream, config.timeouts.client_write_ms);
    if (!headers_sent) {
      http::response<http::empty_body> res{http::status::ok, version};
      res.set(http::field::server, "chatwire");
      res.set(http::field::content_type, "text/event-stream");
      res.set(http::field::cache_control, "no-cache");
      set_answer_headers(res, s, config);
      res.keep_alive(keep_alive && chunked);
      res.chunked(chunked);
      http::response_serializer<http::empty_body> sr{res};
      co_await http::async_write_header(s.stream, sr, net::redirect_error(kAwait, ec));
      headers_sent = true;
      if (ec) co_return client_ok = false;
    }
    if (chunked)
      co_await net::async_write(s.stream, http::make_chunk(net::buffer(text)),
                                net::redirect_error(kAwait, ec));
    else
      co_await net::async_write(s.stream, net::buffer(text), net::redirect_error(kAwait, ec));
    if (ec) client_ok = false;
    co_return client_ok;
  };

  // n > 1: one backend request per choice, one after another; a streamed choice ends with its
  // finish chunk, the last one with the usage chunk and [DONE]; non-streaming choices are
  // gathered into one chat.completion.
  const std::size_t choices = job->params.n;
  Usage earlier;  // the completion and reasoning tokens of the choices so far
  json gathered;  // non-streaming, n > 1
  for (std::size_t choice = 0; choice < choices && !failure && client_ok && !active.client_gone;
       ++choice) {
    if (choice > 0) {
      auto next = ChatRelay::start(*job, config.limits, choice);
      if (!next) {
        failure = http_error(gateway_error("InternalError", next.error().to_string()));
        break;
      }
      relay = std::move(next);
      relay->add_earlier_completion_tokens(earlier);
    }
    call = pool.call(url);
    active.backend = call.get();
    auto started_call = co_await call->start(job->backend_path, job->backend_body_for(choice));
    if (!started_call) failure = http_error(started_call.error());
    SseReader sse(config.limits.max_backend_event_bytes);
    std::vector<std::string> events;
    std::string piece;
    bool more = !failure.has_value();
    while (more && !failure && client_ok) {
      piece.clear();
      auto r = co_await call->read(piece);
      if (!r) {
        failure = http_error(r.error());
        break;
      }
      more = *r;
      events.clear();
      if (auto fed = sse.feed(piece, events); !fed) failure = http_error(fed.error());
      if (!more) sse.finish(events);
      for (const auto& data : events) {
        if (failure) break;
        auto out = relay->on_event(data);
        if (!out) {
          failure = http_error(out.error());
          break;
        }
        if (!first_output_seen && relay->saw_output()) {
          first_output_seen = true;
          record.first_token_seconds = seconds_since(started);
          g.metrics().first_token(*record.first_token_seconds);
        }
        if (relay->streaming()) co_await send_chunk(*out);
        if (relay->ended_early()) break;
      }
      if (!failure && relay->ended_early()) {
        call->cancel();  // the rest of the backend's reply is not wanted
        break;
      }
    }
    if (!failure && client_ok && !active.client_gone) {
      auto tail = relay->finish();
      if (!tail) {
        failure = http_error(tail.error());
      } else if (choice + 1 == choices) {
        reply = std::move(*tail);
      } else if (relay->streaming()) {
        co_await send_chunk(*tail);
      } else {
        json body = json::parse(*tail);
        if (gathered.is_null())
          gathered = std::move(body);
        else
          gathered["choices"].push_back(std::move(body["choices"][0]));
      }
    }
    earlier.add_completion(relay->usage());
    active.backend = nullptr;
    if (choice + 1 < choices) call.reset();  // the last one is reset after the watcher ends
  }
  if (!failure && responses && !relay->streaming()) {
    auto body = responses->from_completion(reply);
    if (body)
      reply = std::move(*body);
    else
      failure = http_error(gateway_error("InternalError", body.error().to_string()));
  }
  if (!failure && choices > 1 && !relay->streaming() && !reply.empty()) {
    json last = json::parse(reply);
    gathered["choices"].push_back(std::move(last["choices"][0]));
    gathered["usage"]["completion_tokens"] = earlier.completion_tokens;
    gathered["usage"]["total_tokens"] =
        gathered["usage"]["prompt_tokens"].get<std::size_t>() + earlier.completion_tokens;
    gathered["usage"]["completion_tokens_details"]["reasoning_tokens"] = earlier.reasoning_tokens;
    reply = gathered.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  if (active.shutdown && failure)
    failure = http_error(gateway_error("ShuttingDown", "the server is shutting down"));
  if (active.client_gone) client_ok = false;

  int status = 200;
  if (failure) {
    status = failure->status;
    // A client that went away ended the backend request itself: not a backend's error.
    if (!active.client_gone) g.metrics().error(failure->code);
  }
  if (client_ok) {
    if (relay->streaming() || headers_sent) {
      if (failure && !headers_sent) {
        const HttpReply r{failure->status, "application/json", error_body(*failure), failure->code};
        client_ok = co_await write_reply(s, r, version, keep_alive);
      } else {
        // The reply's last events; sending them can fail too (the Responses writer could not
        // read them), and a failure ends the stream in the client's API's words.
        if (!failure) co_await send_chunk(reply);
        if (failure) {
          std::string last;
          if (responses) {
            if (!responses_begun) last = responses->begin();
            last += responses->stream_error(*failure);
            responses.reset();  // already in the Responses shapes: send_chunk passes it on
          } else {
            last = ChatRelay::stream_error(*failure);
          }
          co_await send_chunk(last);
        }
        if (client_ok && chunked) {
          beast::error_code ec;
          WriteDeadline deadline(s.stream, config.timeouts.client_write_ms);
          const auto chunk_last = http::make_chunk_last();
          co_await net::async_write(s.stream, chunk_last, net::redirect_error(kAwait, ec));
          if (ec) client_ok = false;
        }
      }
    } else {
      const HttpReply r = failure ? HttpReply{failure->status, "application/json",
                                              error_body(*failure), failure->code}
                                  : HttpReply{200, "application/json", reply, {}};
      client_ok = co_await write_reply(s, r, version, keep_alive);
    }
  }
  if (!failure) g.metrics().tokens(relay->usage().prompt_tokens, earlier.completion_tokens);
  g.metrics().request(route_name, active.client_gone ? 499 : status, seconds_since(started));
  record.status = active.client_gone ? 499 : status;
  if (failure) record.error = failure->code;
  record.prompt_tokens = relay->usage().prompt_tokens;
  record.completion_tokens = earlier.completion_tokens;
  log_access(record, started);
  g.metrics().stream_closed();

  // The watcher ends before `active` does.
  if (active.watcher_running) {
    beast::error_code ec;
    s.stream.socket().cancel(ec);
    co_await active.watcher_done->async_wait(net::redirect_error(kAwait, ec));
  }
  active.backend = nullptr;
  s.chat = nullptr;
  call.reset();
  co_return client_ok && !active.client_gone && (chunked || !headers_sent);
}

net::awaitable<void> Server::Impl::serve(Session& s) {
  const Gateway& g = gateway;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(
        std::min<std::size_t>(config.limits.max_header_bytes, 0xffffffffu)));
    parser.body_limit(config.limits.max_body_bytes);
    beast::error_code ec;
    s.busy = false;
    s.allow_origin.clear();  // the last request's: none until this one's head is read
    s.request_id.clear();
    s.stream.expires_after(std::chrono::milliseconds(config.timeouts.client_idle_ms));
    co_await http::async_read_header(s.stream, s.buffer, parser, net::redirect_error(kAwait, ec));
    const Clock::time_point started = Clock::now();
    AccessRecord record;
    record.client = s.client;
    const auto origin = parser.get()[http::field::origin];
    {
      const auto& head = parser.get();
      record.method = std::string(head.method_string());
      const std::string_view target(head.target().data(), head.target().size());
      record.path = std::string(request_path(target));  // a query may hold secrets
      // The answer's own headers, the refusals below included.
      s.allow_origin = g.allowed_origin(std::string_view(origin.data(), origin.size()));
      s.request_id = request_id_of(head["X-Request-Id"]);
      record.request_id = s.request_id;
    }
    // A request the head already refuses (no such route or method, no API key, shutting down)
    // is answered before its body is read: a stranger without a key must not make the server
    // take in max_body_bytes, nor get a 100 Continue.
    // Also for a body over the limit, which the head announces (the request line is read).
    if (auto known = route_of(parser.get())) record.route = std::string((*known)->name);
    // (A preflight is answered after its head and body, below.)
    if (!ec && !parser.is_done() && parser.get().method() != http::verb::options) {
      if (auto refusal = refused_by_head(parser.get())) {
        record.route = refusal->route;
        g.metrics().request(refusal->route.empty() ? "unknown" : refusal->route,
                            refusal->reply.status, seconds_since(started));
        log_access(record, started, &refusal->reply);
        s.stream.expires_never();
        co_await write_reply(s, refusal->reply, parser.get().version(), false, &refusal->headers);
        co_await drain(s);
        co_return;
      }
    }
    if (!ec && !parser.is_done() &&
        beast::iequals(parser.get()[http::field::expect], "100-continue")) {
      http::response<http::empty_body> go_on{http::status::continue_, parser.get().version()};
      co_await http::async_write(s.stream, go_on, net::redirect_error(kAwait, ec));
    }
    if (!ec && !parser.is_done())
      co_await http::async_read(s.stream, s.buffer, parser, net::redirect_error(kAwait, ec));
    s.stream.expires_never();
    if (stopping && ec) co_return;
    if (ec == http::error::body_limit || ec == http::error::header_limit) {
      const bool body = ec == http::error::body_limit;
      // 413 for the body, 431 for the head (RFC 6585).
      const HttpReply r = g.error_reply(
          gateway_error(body ? "BodyTooLarge" : "HeaderTooLarge",
                        body ? "the request body exceeds limits.max_body_bytes (" +
                                   std::to_string(config.limits.max_body_bytes) + ")"
                             : "the request head exceeds limits.max_header_bytes (" +
                                   std::to_string(config.limits.max_header_bytes) + ")"));
      g.metrics().request(record.route.empty() ? "unknown" : record.route, r.status,
                          seconds_since(started));
      log_access(record, started, &r);
      co_await write_reply(s, r, 11, false);
      co_await drain(s);
      co_return;
    }
    if (ec == http::error::end_of_stream || ec == net::error::eof || ec == beast::error::timeout ||
        ec == net::error::operation_aborted || ec == net::error::connection_reset)
      co_return;
    if (ec) {
      const HttpReply r =
          g.error_reply(gateway_error("RequestError", "malformed HTTP request: " + ec.message()));
      g.metrics().request("unknown", r.status, seconds_since(started));
      log_access(record, started, &r);
      co_await write_reply(s, r, 11, false);
      co_return;
    }
    s.busy = true;
    auto& req = parser.get();
    const unsigned version = req.version();
    const bool keep_alive = req.keep_alive() && !stopping;
    if (req.method() == http::verb::options) {  // a CORS preflight: no key, no body
      const auto asked = req[http::field::access_control_request_headers];
      if (auto headers = g.preflight(std::string_view(req.target().data(), req.target().size()),
                                     std::string_view(origin.data(), origin.size()),
                                     std::string_view(asked.data(), asked.size()))) {
        const HttpReply r{204, "text/plain", "", {}};
        record.route = "preflight";
        g.metrics().request("preflight", r.status, seconds_since(started));
        log_access(record, started, &r);
        if (!co_await write_reply(s, r, version, keep_alive, &*headers) || !keep_alive) co_return;
        continue;
      }
    }
    const bool head_only = req.method() == http::verb::head;
    // The same refusals as before the body (a body that came with its head, a preflight that
    // was none); the connection stays open for the next request (keep_alive is false once the
    // server is stopping).
    if (auto refusal = refused_by_head(req)) {
      record.route = refusal->route;
      g.metrics().request(refusal->route.empty() ? "unknown" : refusal->route,
                          refusal->reply.status, seconds_since(started));
      log_access(record, started, &refusal->reply);
      if (!co_await write_reply(s, refusal->reply, version, keep_alive, &refusal->headers,
                                head_only) ||
          !keep_alive)
        co_return;
      continue;
    }
    const Route& rt = **route_of(req);  // refused_by_head found it
    record.route = std::string(rt.name);
    if (rt.limited && in_flight >= config.limits.max_concurrent_requests) {
      HttpReply r = g.error_reply(
          gateway_error("Overloaded", "more than limits.max_concurrent_requests (" +
                                          std::to_string(config.limits.max_concurrent_requests) +
                                          ") requests at once; retry later"));
      g.metrics().request(rt.name, r.status, seconds_since(started));
      log_access(record, started, &r);
      if (!co_await write_reply(s, r, version, keep_alive) || !keep_alive) co_return;
      continue;
    }
    // Counted while it is answered, however the answer ends (an exception included).
    struct InFlight {
      std::size_t* count;
      ~InFlight() {
        if (count != nullptr) --*count;
      }
    } in_flight_guard{rt.limited ? &in_flight : nullptr};
    if (rt.limited) ++in_flight;
    bool ok = false;
    if (rt.relayed != Relayed::none) {
      std::string body = std::move(req.body());
      ok = co_await chat(s, body, version, keep_alive, started, rt, record);
    } else {
      std::string body = std::move(req.body());
      const RouteRequest route_request = Gateway::route_request(
          rt, std::string_view(req.target().data(), req.target().size()), body);
      // A route that throws (it should not) is a 500, not a connection dropped without a word.
      auto answer = [&]() -> HttpReply {
        try {
          return rt.answer(g, route_request);
        } catch (const std::exception& e) {
          return g.error_reply(
              gateway_error("InternalError", std::string("the route failed: ") + e.what()));
        }
      };
      HttpReply r = co_await on_worker(answer);
      g.metrics().request(rt.name, r.status, seconds_since(started));
      log_access(record, started, &r);
      ok = co_await write_reply(s, r, version, keep_alive, nullptr, head_only);
    }
    if (!ok || !keep_alive || stopping) co_return;
  }
}

net::awaitable<void> Server::Impl::accept_loop() {
  while (!stopping) {
    beast::error_code ec;
    tcp::socket socket = co_await acceptor.async_accept(net::redirect_error(kAwait, ec));
    if (stopping) co_return;
    if (ec) {  // e.g. out of file descriptors: wait a little instead of spinning
      net::steady_timer pause(io, std::chrono::milliseconds(50));
      co_await pause.async_wait(net::redirect_error(kAwait, ec));
      continue;
    }
    beast::error_code opt_ec;
    socket.set_option(tcp::no_delay(true), opt_ec);
    net::co_spawn(
        io,
        [this, sock = std::move(socket)]() mutable -> net::awaitable<void> {
          Session session(std::move(sock));
          beast::error_code peer_ec;
          const auto peer = session.stream.socket().remote_endpoint(peer_ec);
          if (!peer_ec) {
            const auto address = peer.address();
            session.client =
                (address.is_v6() ? "[" + address.to_string() + "]" : address.to_string()) + ":" +
                std::to_string(peer.port());
          }
          sessions.push_back(&session);
          try {
            co_await serve(session);
          } catch (const std::exception& e) {  // never the process: this connection only
            std::fprintf(stderr, "chatwire serve: connection closed after an error: %s\n",
                         e.what());
          }
          beast::error_code close_ec;
          session.stream.socket().shutdown(tcp::socket::shutdown_send, close_ec);
          session.stream.socket().close(close_ec);
          sessions.remove(&session);
          end_of_session();
        },
        net::detached);
  }
}

void Server::Impl::begin_shutdown() {
  if (stopping) return;
  stopping = true;
  beast::error_code ec;
  acceptor.close(ec);
  if (signals) signals->cancel(ec);
  for (Session* s : sessions)
    if (!s->busy) s->stream.socket().close(ec);  // waiting for a request: nothing to finish
  grace.expires_after(std::chrono::milliseconds(config.timeouts.shutdown_grace_ms));
  grace.async_wait([this](beast::error_code wait_ec) {
    if (wait_ec) return;  // every session ended first
    for (Session* s : sessions) {
      if (s->chat != nullptr) {
        s->chat->shutdown = true;
        s->chat->cancel_backend();
      } else {
        beast::error_code close_ec;
        s->stream.socket().close(close_ec);
      }
    }
  });
  end_of_session();
}

void Server::Impl::end_of_session() {
  if (!stopping || !sessions.empty()) return;
  grace.cancel();
  pool.close_idle();
}

Server::Server(const Gateway& gateway) : impl_(std::make_unique<Impl>(gateway)) {}

Server::~Server() {
  impl_->workers.join();
}

Result<std::uint16_t> Server::listen() {
  Impl& s = *impl_;
  if (!s.access_log.enabled())
    if (auto opened = s.access_log.open(s.config.access_log); !opened) return opened.error();
  for (const auto& m : s.gateway.models().models) {
    auto url = parse_backend_url(m->config.backend_url);
    if (!url) {
      Error e = url.error();
      e.message = "model '" + m->config.name + "': " + e.message;
      return e;
    }
    url->api_key = m->config.backend_api_key;
    s.backend_urls[m->config.name] = std::move(*url);
  }
  beast::error_code ec;
  auto address = net::ip::make_address(s.config.host, ec);
  if (ec) return gateway_error("ConfigError", "is not an IP address: " + s.config.host, "host");
  const tcp::endpoint where(address, s.config.port);
  s.acceptor.open(where.protocol(), ec);
  if (!ec) s.acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor.bind(where, ec);
  if (!ec) s.acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return gateway_error("ConfigError", "cannot listen on " + s.config.host + ":" +
                                            std::to_string(s.config.port) + ": " + ec.message());
  return s.acceptor.local_endpoint().port();
}

void Server::run(bool handle_signals) {
  Impl& s = *impl_;
  if (handle_signals) {
    s.signals.emplace(s.io, SIGINT, SIGTERM);
    s.signals->async_wait([&s](beast::error_code ec, int) {
      if (!ec) s.begin_shutdown();
    });
  }
  net::co_spawn(s.io, s.accept_loop(), net::detached);
  s.io.run();
}

void Server::stop() {
  net::post(impl_->io, [this] { impl_->begin_shutdown(); });
}

}  // namespace chatwire::serve
