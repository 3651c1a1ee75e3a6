// The gateway's HTTP client for backends (Boost.Beast, C++20 coroutines, on the server's one
// I/O thread): a keep-alive connection pool per backend, connect / idle / whole-request
// timeouts from Config::timeouts, and a reply read piece by piece as it streams. Failures are
// values: BackendError (refused, dropped, a non-2xx status with the backend's message; 502)
// and BackendTimeout (504).
#pragma once

// clang-format off
#include <utility>  // first: Boost 1.74's asio/awaitable.hpp uses std::exchange without it
// clang-format on

#include <array>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/error.hpp"
#include "chatwire/serve.hpp"

namespace chatwire::serve {

// http://host[:port][/prefix] (https is not spoken: put the backend on a private network).
struct BackendUrl {
  std::string host;
  std::string port = "80";
  std::string prefix;   // without a trailing slash
  std::string api_key;  // sent as Authorization: Bearer ("" = none): ModelConfig::backend_api_key
};
Result<BackendUrl> parse_backend_url(std::string_view url);

class BackendPool;

// One POST to a backend whose reply body is read as it arrives.
class BackendCall {
 public:
  BackendCall(BackendPool& pool, BackendUrl url);
  ~BackendCall();
  BackendCall(const BackendCall&) = delete;
  BackendCall& operator=(const BackendCall&) = delete;

  // Connects (or reuses an idle connection), sends the request, reads the reply's head.
  boost::asio::awaitable<Result<bool>> start(const std::string& path, const std::string& body);
  // Appends the next piece of the body to `out`; false once the body has ended.
  boost::asio::awaitable<Result<bool>> read(std::string& out);
  // Closes the connection: a pending start() or read() ends (the client went away, shutdown).
  void cancel();
  bool cancelled() const noexcept { return cancelled_; }

 private:
  // `stale`: it failed on a kept-alive connection the backend had closed (worth one more try).
  boost::asio::awaitable<Result<bool>> attempt(const std::string& path, const std::string& body,
                                               bool& stale);
  Error timeout_or(const boost::beast::error_code& ec, std::string_view what) const;
  std::chrono::milliseconds read_budget() const;

  BackendPool& pool_;
  BackendUrl url_;
  std::unique_ptr<boost::beast::tcp_stream> stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::response_parser<boost::beast::http::buffer_body>> parser_;
  std::chrono::steady_clock::time_point deadline_;
  bool cancelled_ = false;
  bool body_done_ = false;
  std::array<char, 16384> piece_;  // what one read of the body takes
};

class BackendPool {
 public:
  BackendPool(boost::asio::any_io_executor executor, const Config& config);
  std::unique_ptr<BackendCall> call(const BackendUrl& url) {
    return std::make_unique<BackendCall>(*this, url);
  }
  void close_idle();

 private:
  friend class BackendCall;
  std::unique_ptr<boost::beast::tcp_stream> take_idle(const std::string& key);
  void give_back(const std::string& key, std::unique_ptr<boost::beast::tcp_stream> stream);

  boost::asio::any_io_executor executor_;
  const Config& config_;
  std::map<std::string, std::vector<std::unique_ptr<boost::beast::tcp_stream>>> idle_;
};

}  // namespace chatwire::serve
