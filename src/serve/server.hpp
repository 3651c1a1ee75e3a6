// chatwire serve's HTTP server (Boost.Beast, C++20 coroutines; this header has no Boost in
// it). One I/O thread runs every connection as a coroutine: an open stream costs a coroutine
// frame and a socket, not a thread. Requests are rendered and tokenized on a small worker
// pool so the I/O thread never waits on CPU work. stop() (or SIGTERM/SIGINT with
// handle_signals) stops accepting, lets open streams finish for timeouts.shutdown_grace_ms,
// then cancels them.
#pragma once

#include <cstdint>
#include <memory>

#include "chatwire/error.hpp"
#include "serve/gateway.hpp"

namespace chatwire::serve {

class Server {
 public:
  explicit Server(const Gateway& gateway);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds config.host:config.port; returns the bound port (port 0 = any free one).
  Result<std::uint16_t> listen();
  // Serves until stopped; returns once every connection has closed.
  void run(bool handle_signals);
  // Begins the graceful shutdown; safe from any thread.
  void stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace chatwire::serve
