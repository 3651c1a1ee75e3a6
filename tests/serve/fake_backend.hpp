// A tiny llama.cpp-style backend for the gateway's socket tests (POSIX sockets, a thread per
// connection, 127.0.0.1 only): it answers POST /completion with a scripted SSE stream, or with
// one fault, and records what the gateway did to it. Every wait is bounded.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace chatwire::serve::testing {

enum class Fault {
  none,        // the pieces, then the stop event; the connection closes
  keep_alive,  // as none, with a Content-Length, the connection kept for the next request
  // as keep_alive, but the connection is closed after its first reply without saying so (the
  // backend's idle timeout): the next request on it finds it closed
  closes_kept_connection,
  // as keep_alive for the first request; every later one gets no reply at all (a backend busy
  // with a long prompt sends its head only with the first token)
  silent_after_first,
  slow,     // the pieces, then an event every 20 ms (up to 10 s) until the peer goes away
  stall,    // one event, then nothing until the peer goes away (up to 10 s)
  drop,     // one event, then the connection closes without the stop event
  http500,  // HTTP 500 with an error body
  http400,  // HTTP 400: the backend refuses the request (over its context)
  http429,  // HTTP 429: the backend is busy
  garbage,  // an event that is not JSON
  flood,    // events of 64 KB each, as fast as they are taken, until the peer goes away (25 MB)
};

inline bool send_all(int fd, const std::string& s) {
  std::size_t sent = 0;
  while (sent < s.size()) {
    const ssize_t n = ::send(fd, s.data() + sent, s.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

class FakeBackend {
 public:
  explicit FakeBackend(Fault fault, std::vector<std::string> pieces = {"Hello", " there"})
      : fault_(fault), pieces_(std::move(pieces)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    ::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(listener_, 64);
    socklen_t len = sizeof a;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~FakeBackend() {
    stopping_ = true;
    acceptor_.join();
    for (auto& t : connections_) t.join();
    ::close(listener_);
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_.load(); }
  int connections() const { return connections_accepted_.load(); }
  // The gateway closed a connection before the reply was complete.
  bool peer_closed() const { return peer_closed_.load(); }
  nlohmann::json last_body() const {
    std::lock_guard lock(mutex_);
    return last_body_;
  }
  // The last request's head (request line and headers).
  std::string last_head() const {
    std::lock_guard lock(mutex_);
    return last_head_;
  }

 private:
  void accept_loop() {
    while (!stopping_) {
      pollfd p{listener_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      const int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) continue;
      ++connections_accepted_;
      connections_.emplace_back([this, fd] {
        while (serve(fd) && (fault_ == Fault::keep_alive || fault_ == Fault::silent_after_first)) {
        }
        ::close(fd);
      });
    }
  }

  static std::string event(const nlohmann::json& j) { return "data: " + j.dump() + "\n\n"; }

  // Waits (up to 10 s) for the peer to close; true when it did.
  bool wait_for_close(int fd) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!stopping_ && std::chrono::steady_clock::now() < until) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      char c;
      if (::recv(fd, &c, 1, 0) <= 0) return true;
    }
    return false;
  }

  // One request on `fd`; false when the connection ended (or nothing came for 5 s).
  bool serve(int fd) {
    std::string in;
    char buf[4096];
    std::size_t body_at = std::string::npos, length = 0;
    int idle_polls = 0;
    while (body_at == std::string::npos || in.size() < body_at + length) {
      pollfd p{fd, POLLIN, 0};
      if (stopping_ || idle_polls > 250) return false;
      if (::poll(&p, 1, 20) <= 0) {
        ++idle_polls;
        continue;
      }
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return false;
      in.append(buf, static_cast<std::size_t>(n));
      if (body_at == std::string::npos) {
        const auto end = in.find("\r\n\r\n");
        if (end == std::string::npos) continue;
        body_at = end + 4;
        const auto cl = in.find("Content-Length: ");
        if (cl != std::string::npos && cl < end) length = std::stoul(in.substr(cl + 16));
      }
    }
    if (++requests_ > 1 && fault_ == Fault::silent_after_first) {
      if (wait_for_close(fd)) peer_closed_ = true;
      return false;
    }
    {
      std::lock_guard lock(mutex_);
      last_body_ = nlohmann::json::parse(in.substr(body_at, length), nullptr, false);
      last_head_ = in.substr(0, body_at);
    }
    const std::string head =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
    const auto content = [](const std::string& text) {
      return event({{"content", text}, {"stop", false}});
    };
    switch (fault_) {
      case Fault::none:
      case Fault::keep_alive:
      case Fault::closes_kept_connection:
      case Fault::silent_after_first: {
        std::string events;
        for (const auto& p : pieces_) events += content(p);
        events += event({{"content", ""}, {"stop", true}, {"stop_type", "eos"}});
        if (fault_ == Fault::none) return send_all(fd, head + events);
        return send_all(fd,
                        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                        "Content-Length: " +
                            std::to_string(events.size()) + "\r\n\r\n" + events);
      }
      case Fault::slow: {
        if (!send_all(fd, head)) return true;
        for (int i = 0; i < 500 && !stopping_; ++i) {
          if (!send_all(fd, content("x"))) {
            peer_closed_ = true;
            return true;
          }
          pollfd p{fd, POLLIN, 0};
          if (::poll(&p, 1, 20) > 0 && ::recv(fd, buf, sizeof buf, 0) <= 0) {
            peer_closed_ = true;
            return true;
          }
        }
        return true;
      }
      case Fault::stall:
        send_all(fd, head + content(pieces_.front()));
        if (wait_for_close(fd)) peer_closed_ = true;
        return true;
      case Fault::drop:
        send_all(fd, head + content(pieces_.front()));
        return true;
      case Fault::http500: {
        const std::string body = R"({"error": {"code": 500, "message": "out of memory"}})";
        send_all(fd,
                 "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
                 "Connection: close\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n" + body);
        return true;
      }
      case Fault::http400:
      case Fault::http429: {
        const bool busy = fault_ == Fault::http429;
        const std::string body =
            busy
                ? R"({"error": {"code": 429, "message": "busy"}})"
                : R"({"error": {"code": 400, "message": "the request exceeds the available context size"}})";
        send_all(fd,
                 std::string(busy ? "HTTP/1.1 429 Too Many Requests" : "HTTP/1.1 400 Bad Request") +
                     "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n" + body);
        return true;
      }
      case Fault::flood: {
        if (!send_all(fd, head)) return true;
        const std::string big = content(std::string(64 << 10, 'x'));
        for (int i = 0; i < 400 && !stopping_; ++i)
          if (!send_all(fd, big)) {
            peer_closed_ = true;
            return true;
          }
        return true;
      }
      case Fault::garbage:
        send_all(fd, head + "data: {\"content\": \"Hel\", \"stop\": fal\n\n");
        return true;
    }
    return false;
  }

  Fault fault_;
  std::vector<std::string> pieces_;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> requests_{0};
  std::atomic<int> connections_accepted_{0};
  std::atomic<bool> peer_closed_{false};
  std::thread acceptor_;
  std::vector<std::thread> connections_;
  mutable std::mutex mutex_;
  nlohmann::json last_body_;
  std::string last_head_;
};

}  // namespace chatwire::serve::testing
