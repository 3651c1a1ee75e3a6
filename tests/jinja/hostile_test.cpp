// Hostile templates and requests (data/hostile/cases.jsonl, scripts/regen-hostile-goldens):
// resource bombs, runaway recursion, parser depth, sandbox escapes, broken syntax, NUL
// bytes, bad encodings, huge requests and integer edge cases, each with what the oracle
// does and what chatwire must do, rendered with the default limits.
//
// Each case runs in a forked child process: a crash, a hang or a memory blow-up then
// fails that one case instead of taking the whole test binary (and everybody's unit
// tests) down with it. The child checks the result itself and sends back a verdict.
// Budgets: 2 s of CPU per case (Release; not checked under sanitizers) and 1 GiB of address
// space (not set under sanitizers, whose shadow memory needs far more); a child that has used
// kKillAfterCpuSeconds of CPU is stopped by the kernel and reported as a hang.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chatwire/jinja.hpp"
#include "chatwire/value.hpp"
#include "jinja/both_ways.hpp"
#include "jinja/test_util.hpp"

// tests/CMakeLists.txt defines CHATWIRE_TEST_SANITIZED in the sanitizer build (test code itself is
// not instrumented there); an instrumented build of this file is detected here.
#if defined(CHATWIRE_TEST_SANITIZED)
#elif defined(__SANITIZE_ADDRESS__)
#define CHATWIRE_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || \
    __has_feature(thread_sanitizer)
#define CHATWIRE_TEST_SANITIZED 1
#endif
#endif
#ifndef CHATWIRE_TEST_SANITIZED
#define CHATWIRE_TEST_SANITIZED 0
#endif

namespace {

using chatwire::test::data_path;

constexpr const char* kFrozenNow = "2026-08-19T10:00:00";
constexpr double kMaxSeconds = 2.0;                   // issue 3: "end within 2 seconds"
constexpr rlim_t kMaxAddressSpace = rlim_t{1} << 30;  // issue 3: "and 1 GiB"
// A child that has used this much CPU is stopped by the kernel (RLIMIT_CPU): far past the budget
// in Release, generous for sanitizer builds (several times slower). CPU time, not wall time, so
// that a loaded machine (other builds on the same cores) does not decide the verdict.
constexpr rlim_t kKillAfterCpuSeconds = CHATWIRE_TEST_SANITIZED ? 120 : 10;
// A child that uses no CPU and never finishes (a deadlock) is killed after this much wall time.
constexpr int kKillAfterWallSeconds = 600;
constexpr std::size_t kMaxVerdictBytes = 4000;

std::vector<nlohmann::json> load_cases() {
  std::vector<nlohmann::json> cases;
  for (const auto& line : chatwire::test::read_lines(data_path("hostile/cases.jsonl"))) {
    auto parsed = nlohmann::json::parse(line, nullptr, false);
    if (!parsed.is_discarded()) cases.push_back(std::move(parsed));
  }
  return cases;
}

// The JSON text of a generated context: the same bytes scripts/regen-hostile-goldens
// (build_context) gave the oracle.
std::string build_context(const nlohmann::json& spec) {
  std::string text;
  if (spec.contains("messages")) {
    const auto count = spec["messages"].get<std::size_t>();
    const auto content_bytes = spec.value("content_bytes", std::size_t{0});
    text =
        "{\"bos_token\":\"<s>\",\"eos_token\":\"</s>\",\"add_generation_prompt\":true,\"tools\":"
        "null,\"documents\":null,\"messages\":[";
    for (std::size_t i = 0; i < count; ++i) {
      if (i) text += ',';
      text += "{\"role\":\"";
      text += i % 2 == 0 ? "user" : "assistant";
      text += "\",\"content\":\"";
      text += content_bytes ? std::string(content_bytes, 'x') : "message " + std::to_string(i);
      text += "\"}";
    }
    text += "]}";
    return text;
  }
  const auto depth = spec["nested_list_depth"].get<std::size_t>();
  text = "{\"" + spec["key"].get<std::string>() + "\":";
  text.append(depth, '[');
  text.append(depth, ']');
  text += '}';
  return text;
}

// CPU time rather than wall time for the budget: ctest runs test binaries in parallel on a
// shared machine, and a loaded machine must not turn a 1 s render into a failure.
double process_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

struct Outcome {
  bool ok = false;
  std::string output;      // when ok
  chatwire::Error error;   // when not ok
  std::string stage;       // where it failed: "context", "compile" or "render"
  double seconds = 0;      // wall clock
  double cpu_seconds = 0;  // this process's CPU time: what the budget is checked against
  // How the render without the optimiser differs ("" when it does not); measured after
  // the timed render, so the budget stays the optimised engine's.
  std::string optimizer_difference;
};

// Builds the template and the context, compiles and renders: all the work a case does.
Outcome run_case(const nlohmann::json& c) {
  Outcome outcome;
  std::string source;
  if (c.contains("template")) {
    source = c["template"].get<std::string>();
  } else if (c.contains("template_repeat")) {
    for (const auto& part : c["template_repeat"]) {
      const auto text = part[0].get<std::string>();
      for (auto n = part[1].get<std::size_t>(); n > 0; --n) source += text;
    }
  } else {
    source =
        chatwire::test::read_file(data_path(c["template_file"].get<std::string>())).value_or("");
  }
  std::string context_text;
  if (c.contains("context")) {
    context_text = c["context"].dump();
  } else if (c.contains("context_text")) {
    context_text = c["context_text"].get<std::string>();
  } else if (c.contains("context_hex")) {
    context_text = chatwire::test::hex_decode(c["context_hex"].get<std::string>()).value_or("");
  } else {
    context_text = build_context(c["context_generate"]);
  }

  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = process_cpu_seconds();
  auto finish = [&](Outcome& o) {
    o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    o.cpu_seconds = process_cpu_seconds() - cpu_start;
  };
  auto context = chatwire::parse_json(context_text);
  if (!context.ok()) {
    outcome.error = context.error();
    outcome.stage = "context";
    finish(outcome);
    return outcome;
  }
  chatwire::jinja::RenderOptions options;
  options.now = kFrozenNow;
  auto compiled = chatwire::jinja::Template::compile(source);
  auto compare_unoptimized = [&](const chatwire::Result<chatwire::jinja::RenderResult>& with) {
    outcome.optimizer_difference = chatwire::test::BothWays::describe(
        with, chatwire::test::render_unoptimized(source, *context, options));
  };
  if (!compiled.ok()) {
    outcome.error = compiled.error();
    outcome.stage = "compile";
    finish(outcome);
    compare_unoptimized(compiled.error());
    return outcome;
  }
  auto rendered = compiled->render(*context, options);
  finish(outcome);
  compare_unoptimized(rendered);
  if (!rendered.ok()) {
    outcome.error = rendered.error();
    outcome.stage = "render";
    return outcome;
  }
  outcome.ok = true;
  outcome.output = std::move(rendered->output);
  return outcome;
}

// "" when the outcome meets the case's expectation, else what is wrong.
std::string judge(const nlohmann::json& c, const Outcome& outcome) {
  const auto& expect = c["expect"];
  std::string problem;
  if (outcome.ok) {
    if (expect.contains("output")) {
      problem =
          chatwire::test::describe_difference(expect["output"].get<std::string>(), outcome.output);
    } else if (expect.contains("output_fnv1a64")) {
      const auto bytes = expect["output_bytes"].get<std::size_t>();
      const auto hash = expect["output_fnv1a64"].get<std::string>();
      if (outcome.output.size() != bytes || chatwire::test::fnv1a64_hex(outcome.output) != hash) {
        problem = "output differs: expected " + std::to_string(bytes) + " bytes with FNV-1a " +
                  hash + ", got " + std::to_string(outcome.output.size()) + " bytes with " +
                  chatwire::test::fnv1a64_hex(outcome.output) + "; starts with \"" +
                  chatwire::test::escape_bytes(outcome.output.substr(0, 120)) + "\"";
      }
    } else if (expect.contains("output_wtf8_hex")) {
      const auto wtf8 = chatwire::test::hex_decode(expect["output_wtf8_hex"].get<std::string>());
      const auto replaced = chatwire::test::replace_wtf8_surrogates(wtf8.value_or(""));
      if (outcome.output != wtf8.value_or("") && outcome.output != replaced) {
        problem =
            "output is neither the oracle's (lone surrogates as WTF-8) nor that with U+FFFD: " +
            chatwire::test::describe_difference(wtf8.value_or(""), outcome.output);
      }
    } else {
      problem = "renders (" + std::to_string(outcome.output.size()) +
                " bytes) but must fail with one of " + expect["error_types"].dump() +
                "; starts with \"" + chatwire::test::escape_bytes(outcome.output.substr(0, 120)) +
                "\"";
    }
  } else if (!expect.contains("error_types")) {
    problem = "fails at " + outcome.stage + " with " + outcome.error.to_string() +
              " but the oracle renders it (status " + c["oracle"]["status"].get<std::string>() +
              ")";
  } else {
    const auto& types = expect["error_types"];
    bool allowed = types.empty();
    for (const auto& type : types)
      allowed = allowed || type.get<std::string>() == outcome.error.type;
    if (!allowed) {
      problem = "fails at " + outcome.stage + " with " + outcome.error.to_string() +
                " but must fail with one of " + types.dump();
    }
  }
  if (problem.empty() && !outcome.optimizer_difference.empty())
    problem = "the optimiser changes the result: " + outcome.optimizer_difference;
  if (problem.empty() && !CHATWIRE_TEST_SANITIZED && outcome.cpu_seconds > kMaxSeconds) {
    problem = "took " + std::to_string(outcome.cpu_seconds) + " s of CPU (budget " +
              std::to_string(kMaxSeconds) + " s)";
  }
  return problem;
}

// Runs the case in a child; returns "" on success or the failure's description.
std::string run_isolated(const nlohmann::json& c) {
  int fds[2];
  if (pipe(fds) != 0) return std::string("pipe failed: ") + std::strerror(errno);
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child < 0) return std::string("fork failed: ") + std::strerror(errno);
  if (child == 0) {
    close(fds[0]);
    if (!CHATWIRE_TEST_SANITIZED) {
      const rlimit limit{kMaxAddressSpace, kMaxAddressSpace};
      setrlimit(RLIMIT_AS, &limit);
    }
    const rlimit cpu{kKillAfterCpuSeconds, kKillAfterCpuSeconds + 1};  // SIGXCPU, then SIGKILL
    setrlimit(RLIMIT_CPU, &cpu);
    const Outcome outcome = run_case(c);
    std::string verdict = judge(c, outcome);
    if (verdict.empty()) {
      verdict = "PASS";
    } else if (verdict.size() > kMaxVerdictBytes) {
      verdict.resize(kMaxVerdictBytes);
    }
    verdict += " [" + std::to_string(outcome.seconds) + " s wall, " +
               std::to_string(outcome.cpu_seconds) + " s CPU; " +
               (outcome.ok ? "rendered " + std::to_string(outcome.output.size()) + " bytes"
                           : outcome.stage + ": " + outcome.error.to_string().substr(0, 300)) +
               "]";
    const char* p = verdict.data();
    std::size_t left = verdict.size();
    while (left > 0) {
      const ssize_t n = write(fds[1], p, left);
      if (n <= 0) break;
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    _exit(0);  // no atexit handlers, no gtest teardown in the child
  }
  close(fds[1]);
  std::string verdict;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(kKillAfterWallSeconds);
  bool killed = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      kill(child, SIGKILL);
      killed = true;
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(left)) <= 0) continue;
    char buffer[4096];
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n <= 0) break;  // EOF: the child finished (or died)
    verdict.append(buffer, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (killed)
    return "no verdict after " + std::to_string(kKillAfterWallSeconds) + " s (deadlock?): killed";
  if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL))
    return "still running after " + std::to_string(kKillAfterCpuSeconds) + " s of CPU: killed";
  if (WIFSIGNALED(status)) {
    return std::string("crashed with signal ") + strsignal(WTERMSIG(status)) +
           (WTERMSIG(status) == SIGSEGV ? " (stack overflow?)" : "") +
           (WTERMSIG(status) == SIGABRT ? " (out of memory or abort)" : "");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return "child exited with status " + std::to_string(WEXITSTATUS(status)) + ": " + verdict;
  }
  if (verdict.rfind("PASS", 0) == 0) {
    std::printf("  %s %s\n", c["name"].get<std::string>().c_str(), verdict.c_str() + 4);
    return {};
  }
  return verdict.empty() ? "the child sent no verdict" : verdict;
}

class Hostile : public ::testing::TestWithParam<nlohmann::json> {};

TEST_P(Hostile, EndsWithOracleOutputOrClearError) {
  const auto& c = GetParam();
  const std::string problem = run_isolated(c);
  EXPECT_TRUE(problem.empty()) << c["name"].get<std::string>() << " ("
                               << c["why"].get<std::string>() << "; oracle: " << c["oracle"].dump()
                               << "): " << problem;
}

INSTANTIATE_TEST_SUITE_P(Cases, Hostile, ::testing::ValuesIn(load_cases()),
                         [](const ::testing::TestParamInfo<nlohmann::json>& info) {
                           return chatwire::test::test_name(info.param["name"].get<std::string>());
                         });

TEST(HostileData, IsPresent) {
  EXPECT_GE(load_cases().size(), 100u) << "data/hostile/cases.jsonl missing or truncated";
}

}  // namespace
