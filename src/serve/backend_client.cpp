// The backend client and its connection pool (see backend_client.hpp).
#include "serve/backend_client.hpp"

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <limits>

#include "serve/http_errors.hpp"

namespace chatwire::serve {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

// A reply head larger than this is not a backend's.
constexpr std::uint32_t kMaxReplyHeaderBytes = 64 << 10;
// How much of a failed reply's body is quoted in the error.
constexpr std::size_t kQuotedErrorBytes = 2000;

std::string key_of(const BackendUrl& url) {
  return url.host + ":" + url.port;
}

Error backend_error(std::string message) {
  return gateway_error("BackendError", std::move(message));
}

}  // namespace

Result<BackendUrl> parse_backend_url(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (!url.starts_with(kScheme))
    return gateway_error("ConfigError", "must start with http:// (got '" + std::string(url) + "')",
                         "backend_url");
  url.remove_prefix(kScheme.size());
  BackendUrl out;
  const auto slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  if (slash != std::string_view::npos) out.prefix = std::string(url.substr(slash));
  while (!out.prefix.empty() && out.prefix.back() == '/') out.prefix.pop_back();
  if (authority.starts_with('[')) {  // [v6 address]:port
    const auto close = authority.find(']');
    if (close == std::string_view::npos)
      return gateway_error("ConfigError", "has an unclosed [ in its host", "backend_url");
    out.host = std::string(authority.substr(1, close - 1));
    authority.remove_prefix(close + 1);
    if (authority.starts_with(':')) out.port = std::string(authority.substr(1));
  } else {
    const auto colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) out.port = std::string(authority.substr(colon + 1));
  }
  if (out.host.empty()) return gateway_error("ConfigError", "has no host", "backend_url");
  if (out.port.empty() ||
      !std::all_of(out.port.begin(), out.port.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return gateway_error("ConfigError", "has a port that is not a number", "backend_url");
  return out;
}

// --- the pool ---------------------------------------------------------------------------

BackendPool::BackendPool(net::any_io_executor executor, const Config& config)
    : executor_(std::move(executor)), config_(config) {}

std::unique_ptr<beast::tcp_stream> BackendPool::take_idle(const std::string& key) {
  auto it = idle_.find(key);
  if (it == idle_.end() || it->second.empty()) return nullptr;
  std::unique_ptr<beast::tcp_stream> s = std::move(it->second.back());
  it->second.pop_back();
  return s;
}

void BackendPool::give_back(const std::string& key, std::unique_ptr<beast::tcp_stream> stream) {
  auto& list = idle_[key];
  if (list.size() >= config_.max_idle_backend_connections) return;  // closed by its destructor
  list.push_back(std::move(stream));
}

void BackendPool::close_idle() {
  for (auto& [key, list] : idle_)
    for (auto& s : list) {
      beast::error_code ec;
      s->socket().close(ec);
    }
  idle_.clear();
}

// --- one call ---------------------------------------------------------------------------

BackendCall::BackendCall(BackendPool& pool, BackendUrl url) : pool_(pool), url_(std::move(url)) {}

BackendCall::~BackendCall() {
  // Reused only when its reply was read to the end and the backend keeps the connection.
  if (stream_ && !cancelled_ && body_done_ && parser_ && parser_->keep_alive() &&
      buffer_.size() == 0) {
    stream_->expires_never();
    pool_.give_back(key_of(url_), std::move(stream_));
  }
}

void BackendCall::cancel() {
  cancelled_ = true;
  if (stream_) {
    beast::error_code ec;
    stream_->socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_->socket().close(ec);
  }
}

std::chrono::milliseconds BackendCall::read_budget() const {
  const auto idle = std::chrono::milliseconds(pool_.config_.timeouts.idle_ms);
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline_ - std::chrono::steady_clock::now());
  return std::max(std::chrono::milliseconds(1), std::min(idle, left));
}

Error BackendCall::timeout_or(const beast::error_code& ec, std::string_view what) const {
  const auto& t = pool_.config_.timeouts;
  if (ec == beast::error::timeout) {
    if (std::chrono::steady_clock::now() >= deadline_)
      return gateway_error("BackendTimeout",
                           "the backend did not finish within timeouts.request_ms (" +
                               std::to_string(t.request_ms) + " ms)");
    return gateway_error("BackendTimeout", "the backend sent nothing for timeouts.idle_ms (" +
                                               std::to_string(t.idle_ms) + " ms) while " +
                                               std::string(what));
  }
  return backend_error("the backend connection failed while " + std::string(what) + ": " +
                       ec.message());
}

namespace {

// A connection the peer had closed: what a write to, or a read from, a kept-alive connection that
// the backend closed while it was idle fails with (never a timeout: a backend slow to answer is
// working on the request).
bool closed_by_peer(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == net::error::eof ||
         ec == net::error::connection_reset || ec == net::error::broken_pipe ||
         ec == net::error::connection_aborted;
}

}  // namespace

net::awaitable<Result<bool>> BackendCall::attempt(const std::string& path, const std::string& body,
                                                  bool& stale) {
  const auto& t = pool_.config_.timeouts;
  beast::error_code ec;
  stale = false;
  stream_ = pool_.take_idle(key_of(url_));
  const bool reused = stream_ != nullptr;
  if (!stream_) {
    tcp::resolver resolver(pool_.executor_);
    auto endpoints = co_await resolver.async_resolve(url_.host, url_.port,
                                                     net::redirect_error(net::use_awaitable, ec));
    if (cancelled_) co_return backend_error("cancelled");
    if (ec)
      co_return backend_error("the backend host '" + url_.host +
                              "' was not found: " + ec.message());
    stream_ = std::make_unique<beast::tcp_stream>(pool_.executor_);
    stream_->expires_after(std::chrono::milliseconds(t.connect_ms));
    co_await stream_->async_connect(endpoints, net::redirect_error(net::use_awaitable, ec));
    if (cancelled_) co_return backend_error("cancelled");
    if (ec == beast::error::timeout)
      co_return gateway_error("BackendTimeout",
                              "connecting to the backend took longer than "
                              "timeouts.connect_ms (" +
                                  std::to_string(t.connect_ms) + " ms)");
    if (ec)
      co_return backend_error("could not connect to the backend at " + key_of(url_) + ": " +
                              ec.message());
    beast::error_code nodelay_ec;
    stream_->socket().set_option(tcp::no_delay(true), nodelay_ec);
  }
  http::request<http::string_body> req{http::verb::post, url_.prefix + path, 11};
  req.set(http::field::host, url_.host + ":" + url_.port);
  req.set(http::field::content_type, "application/json");
  req.set(http::field::accept, "text/event-stream");
  if (!url_.api_key.empty()) req.set(http::field::authorization, "Bearer " + url_.api_key);
  req.keep_alive(true);
  req.body() = body;
  req.prepare_payload();
  stream_->expires_after(read_budget());
  co_await http::async_write(*stream_, req, net::redirect_error(net::use_awaitable, ec));
  if (cancelled_) co_return backend_error("cancelled");
  stale = reused && closed_by_peer(ec);
  if (ec) co_return timeout_or(ec, "sending the request");
  buffer_.clear();
  parser_.emplace();
  parser_->header_limit(kMaxReplyHeaderBytes);
  // No limit on a streamed reply (each event is limited by the SSE reader). Not boost::none:
  // Beast 1.74 compares a Content-Length against the optional, and none is less than any length.
  parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
  stream_->expires_after(read_budget());
  co_await http::async_read_header(*stream_, buffer_, *parser_,
                                   net::redirect_error(net::use_awaitable, ec));
  if (cancelled_) co_return backend_error("cancelled");
  stale = reused && closed_by_peer(ec);
  if (ec) co_return timeout_or(ec, "waiting for the reply");
  co_return true;
}

net::awaitable<Result<bool>> BackendCall::start(const std::string& path, const std::string& body) {
  deadline_ = std::chrono::steady_clock::now() +
              std::chrono::milliseconds(pool_.config_.timeouts.request_ms);
  bool stale = false;
  auto sent = co_await attempt(path, body, stale);
  if (!sent && stale && !cancelled_) {
    // An idle connection the backend had closed: once more on a new one. Never after a timeout,
    // which would send the request twice to a backend busy with the first.
    stream_.reset();
    sent = co_await attempt(path, body, stale);
  }
  if (!sent) co_return sent.error();
  const unsigned status = parser_->get().result_int();
  if (status / 100 != 2) {
    std::string text;
    while (text.size() < kQuotedErrorBytes) {
      auto more = co_await read(text);
      if (!more || !*more) break;
    }
    body_done_ = false;  // the rest is not read: the connection is not reused
    std::string message = "the backend answered HTTP " + std::to_string(status) + ": " +
                          text.substr(0, kQuotedErrorBytes);
    // The backend refusing the request itself (over its context length, a token id it does not
    // have: 400, 413, 422) is the client's to fix, and a busy backend's 429 is the client's to
    // retry later: passed on as such, since OpenAI's clients retry a 5xx as if it would pass.
    // Anything else (401, 404: the gateway's configuration) is the backend failing: 502.
    if (status == 400 || status == 413 || status == 422)
      co_return gateway_error("BackendRefused", std::move(message));
    if (status == 429) co_return gateway_error("Overloaded", std::move(message));
    co_return backend_error(std::move(message));
  }
  co_return true;
}

net::awaitable<Result<bool>> BackendCall::read(std::string& out) {
  if (body_done_ || !parser_) co_return false;
  if (parser_->is_done()) {
    body_done_ = true;
    co_return false;
  }
  auto& b = parser_->get().body();
  b.data = piece_.data();
  b.size = piece_.size();
  beast::error_code ec;
  stream_->expires_after(read_budget());
  co_await http::async_read_some(*stream_, buffer_, *parser_,
                                 net::redirect_error(net::use_awaitable, ec));
  if (cancelled_) co_return backend_error("cancelled");
  if (ec == http::error::need_buffer) ec = {};
  if (ec) co_return timeout_or(ec, "streaming the reply");
  out.append(piece_.data(), piece_.size() - b.size);
  if (parser_->is_done()) {
    body_done_ = true;
    co_return false;
  }
  co_return true;
}

}  // namespace chatwire::serve
