// `chatwire serve` as a process: a configuration with one model that fails to load (reported on
// stderr, not served; the other is), the "listening on HOST:PORT" line with the bound port, and
// SIGTERM ending the process with status 0.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "fake_backend.hpp"
#include "test_models.hpp"

namespace ct = chatwire::serve::testing;
namespace fs = std::filesystem;

namespace {

// Reads the child's stderr until `done` holds or 120 s pass (a model load probes its template).
template <typename F>
std::string read_until(int fd, F done) {
  std::string text;
  char buf[4096];
  for (int waited = 0; !done(text) && waited < 1200; ++waited) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

std::string get(std::uint16_t port, const std::string& target, const std::string& headers = "",
                const std::string& post_body = "") {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string in;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    if (post_body.empty())
      ct::send_all(
          fd, "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + headers + "\r\n");
    else
      ct::send_all(fd, "POST " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" +
                           headers + "Content-Length: " + std::to_string(post_body.size()) +
                           "\r\n\r\n" + post_body);
    char buf[4096];
    ssize_t n;
    while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) in.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return in;
}

TEST(ServeCommand, ServesTheModelsThatLoadAndEndsWithStatusZeroOnSigterm) {
  ct::FakeBackend backend(ct::Fault::none);
  const fs::path dir =
      fs::temp_directory_path() / ("chatwire-serve-cli-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path config = dir / "config.json";
  std::ofstream(config) << R"({"host": "127.0.0.1", "port": 0, "worker_threads": 1, "models": [
      {"name": "qwen3", "model_dir": ")"
                        << ct::model_dir("qwen3") << R"(", "backend_url": ")" << backend.url()
                        << R"("},
      {"name": "broken", "model_dir": "no-such-directory", "backend_url": ")"
                        << backend.url() << R"("}]})";
  int err[2];
  ASSERT_EQ(::pipe(err), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(err[1], 2);
    ::close(err[0]);
    ::execl(CHATWIRE_CLI, CHATWIRE_CLI, "serve", "--config", config.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(err[1]);
  const std::regex listening("listening on 127\\.0\\.0\\.1:([0-9]+)");
  const std::string stderr_text =
      read_until(err[0], [&](const std::string& t) { return std::regex_search(t, listening); });
  std::smatch m;
  const bool up = std::regex_search(stderr_text, m, listening);
  EXPECT_TRUE(up) << stderr_text;
  EXPECT_NE(stderr_text.find("not serving broken:"), std::string::npos) << stderr_text;
  if (up) {
    const auto port = static_cast<std::uint16_t>(std::stoi(m[1]));
    const std::string models = get(port, "/v1/models");
    EXPECT_NE(models.find(R"("id":"qwen3")"), std::string::npos) << models;
    EXPECT_EQ(models.find("broken"), std::string::npos) << models;
  }
  ::kill(pid, SIGTERM);
  int status = 0;
  pid_t ended = 0;
  for (int i = 0; i < 1000 && ended == 0; ++i) {  // at most 10 s
    ended = ::waitpid(pid, &status, WNOHANG);
    if (ended == 0) ::usleep(10000);
  }
  if (ended == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  ::close(err[0]);
  std::error_code ec;
  fs::remove_all(dir, ec);
  EXPECT_EQ(ended, pid) << "the server did not end within 10 s of SIGTERM";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// `chatwire serve ARGS...` with `env` added to the environment; stderr is read from the pipe.
struct ServeProcess {
  pid_t pid = -1;
  int err = -1;
  std::string stderr_text;
  std::optional<std::uint16_t> port;

  ServeProcess(std::vector<std::string> args, const std::vector<std::string>& env) {
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) return;
    pid = ::fork();
    if (pid == 0) {
      ::dup2(pipe_fds[1], 2);
      ::close(pipe_fds[0]);
      for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
      std::vector<char*> argv{const_cast<char*>(CHATWIRE_CLI), const_cast<char*>("serve")};
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(CHATWIRE_CLI, argv.data());
      ::_exit(127);
    }
    ::close(pipe_fds[1]);
    err = pipe_fds[0];
    const std::regex listening("listening on 127\\.0\\.0\\.1:([0-9]+)");
    stderr_text = read_until(err, [&](const std::string& t) {
      return std::regex_search(t, listening) || t.find('\n') != std::string::npos;
    });
    std::smatch m;
    if (std::regex_search(stderr_text, m, listening))
      port = static_cast<std::uint16_t>(std::stoi(m[1]));
  }
  // SIGTERM (unless `signal` is false: a process that is ending by itself), then the exit
  // status (-1 when it did not end within 10 s or ended by a signal).
  int stop(bool signal = true) {
    if (pid <= 0) return -1;
    if (signal) ::kill(pid, SIGTERM);
    int status = 0;
    pid_t ended = 0;
    for (int i = 0; i < 1000 && ended == 0; ++i) {
      ended = ::waitpid(pid, &status, WNOHANG);
      if (ended == 0) ::usleep(10000);
    }
    if (ended == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
    ::close(err);
    pid = -1;
    return ended != 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  ~ServeProcess() { stop(); }
};

int status_of(const std::string& reply) {
  return reply.size() >= 12 ? std::stoi(reply.substr(9, 3)) : 0;
}

// --api-key (repeatable) or $CHATWIRE_API_KEY: the keys clients must send; --backend-api-key or
// $CHATWIRE_BACKEND_API_KEY: the key sent to the backend. A key that cannot be a header value
// is refused at start, naming where it came from.
TEST(ServeCommand, ApiKeysFromTheCommandLineOrTheEnvironment) {
  ct::FakeBackend backend(ct::Fault::none);
  const std::vector<std::string> one_model = {
      "--model", ct::model_dir("qwen3"), "--backend", backend.url(), "--port", "0"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = one_model;
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  {
    ServeProcess serve(with({"--api-key", "sk-one", "--api-key", "sk-two"}),
                       {"CHATWIRE_API_KEY=sk-env", "CHATWIRE_BACKEND_API_KEY=sk-backend"});
    ASSERT_TRUE(serve.port) << serve.stderr_text;
    EXPECT_EQ(status_of(get(*serve.port, "/v1/models")), 401);
    EXPECT_EQ(status_of(get(*serve.port, "/v1/models", "Authorization: Bearer sk-env\r\n")), 401);
    EXPECT_EQ(status_of(get(*serve.port, "/v1/models", "Authorization: Bearer sk-two\r\n")), 200);
    EXPECT_EQ(status_of(get(*serve.port, "/health")), 200);
    const std::string chat =
        R"({"model": "qwen3", "messages": [{"role": "user", "content": "hi"}]})";
    EXPECT_EQ(status_of(get(*serve.port, "/v1/chat/completions", "Authorization: Bearer sk-one\r\n",
                            chat)),
              200);
    EXPECT_NE(backend.last_head().find("Authorization: Bearer sk-backend\r\n"), std::string::npos)
        << backend.last_head();
    EXPECT_EQ(serve.stop(), 0);
  }
  {
    ServeProcess serve(one_model, {"CHATWIRE_API_KEY=sk-env"});
    ASSERT_TRUE(serve.port) << serve.stderr_text;
    EXPECT_EQ(status_of(get(*serve.port, "/v1/models")), 401);
    EXPECT_EQ(status_of(get(*serve.port, "/v1/models", "Authorization: Bearer sk-env\r\n")), 200);
  }
  for (const auto& [args, env, where] :
       std::vector<std::tuple<std::vector<std::string>, std::vector<std::string>, std::string>>{
           {with({"--api-key", "two words"}), {}, "--api-key"},
           {one_model, {"CHATWIRE_API_KEY=tab\there"}, "CHATWIRE_API_KEY"},
           {with({"--backend-api-key", "bad key"}), {}, "--backend-api-key"},
           // A configuration file lists its models: model flags beside it are refused.
           {with({"--config", "/nonexistent.json"}), {}, "--config"}}) {
    ServeProcess serve(args, env);
    EXPECT_FALSE(serve.port) << serve.stderr_text;
    EXPECT_NE(serve.stderr_text.find(where), std::string::npos) << serve.stderr_text;
    EXPECT_EQ(serve.stop(/*signal=*/false), 2) << serve.stderr_text;
  }
}

}  // namespace
