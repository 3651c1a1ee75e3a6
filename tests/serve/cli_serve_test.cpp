// `chatwire serve` as a process: a configuration with one model that fails to load (reported on
// stderr, not served; the other is), the "listening on HOST:PORT" line with the bound port, and
// SIGTERM ending the process with status 0.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <regex>

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

std::string get(std::uint16_t port, const std::string& target) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string in;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    ct::send_all(fd, "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
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

}  // namespace
