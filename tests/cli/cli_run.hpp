// Running the built `chatwire` command in tests as a user runs it: arguments, standard input from
// a file, exit status and both outputs captured; a temporary directory per test for the files.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace chatwire_test {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

inline const std::string kData = CHATWIRE_DATA_DIR;
inline const std::string kCli = CHATWIRE_CLI;

struct CliRun {
  int status = -1;
  std::string out, err;
};

// A command's JSON Lines output, one value per line.
inline std::vector<ordered_json> json_lines(const std::string& text) {
  std::vector<ordered_json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(ordered_json::parse(line));
  return out;
}

inline std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("chatwire-cli-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

  // Runs `chatwire <args>` from `cwd` with stdin from `input` (a file path or empty).
  CliRun run(const std::string& args, const std::string& input = "", const std::string& cwd = "") {
    fs::path out = dir_ / "stdout", err = dir_ / "stderr";
    std::string cmd;
    if (!cwd.empty()) cmd += "cd '" + cwd + "' && ";
    cmd += "'" + kCli + "' " + args + " <" +
           (input.empty() ? std::string("/dev/null") : "'" + input + "'") + " >'" + out.string() +
           "' 2>'" + err.string() + "'";
    int raw = std::system(cmd.c_str());
    CliRun r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  fs::path dir_;
};

}  // namespace chatwire_test
