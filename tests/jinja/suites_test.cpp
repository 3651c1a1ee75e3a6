// The reference engines' language test suites (llama.cpp, @huggingface/jinja, minijinja,
// pallets/jinja, minja), extracted into data/suites/<suite>.jsonl with the oracle's results
// (scripts/extract-suites/, scripts/regen-suite-goldens), rendered through the public API.
//
// A case passes when chatwire renders byte-identical output where the oracle renders (and
// the same {% generation %} spans where the oracle recorded them), and fails with the same
// error_type where the oracle raises. Where the oracle ran out of resources
// (RecursionError, MemoryError, or no answer within 5 s: "OracleTimeout"), chatwire must
// stop with a LimitError (or the same error). Any other mismatch fails the test unless
// data/suites/known_differences.tsv lists the case with a reason, and the listed cases may
// not exceed 1% of all extracted cases (issue 3: at least 99% of the cases extracted from the
// suites render identically, the rest listed with the reason).
//
// One test per suite file; each prints a summary line. With CHATWIRE_SUITES_REPORT=<file>
// every case's result is appended to <file> as JSON Lines, which
// scripts/extract-suites/failures_report.py turns into data/suites/FAILURES.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "chatwire/jinja.hpp"
#include "chatwire/value.hpp"
#include "jinja/both_ways.hpp"
#include "jinja/test_util.hpp"

namespace {

using chatwire::Value;
using chatwire::test::data_path;

// Issue 3: at least 99% of all extracted cases must render identically.
constexpr double kMaxKnownDifferenceShare = 0.01;

// Oracle failures that mean "the oracle ran out of a resource", not a language error:
// chatwire is right to stop there with a LimitError instead.
const std::set<std::string, std::less<>> kResourceErrors = {"RecursionError", "MemoryError",
                                                            "OracleTimeout"};

struct SuiteCase {
  std::string id;
  std::string source;
  std::string template_source;
  std::string now;
  Value context;
  bool oracle_ok = false;
  std::string oracle_output;      // when oracle_ok
  std::string oracle_error_type;  // otherwise
  std::string oracle_message;
  // How the output can be compared (oracle "compare"): exactly; with every 0x... address
  // masked (Python object reprs); or not at all (the random filter), only success.
  enum class Compare { Exact, MaskAddresses, SuccessOnly } compare = Compare::Exact;
  // {% generation %} spans (code points) when the oracle recorded them.
  bool has_generation = false;
  std::vector<std::pair<std::size_t, std::size_t>> generation;
};

// Python reprs such as "<generator object ... at 0x7f...>" with the address masked.
std::string mask_addresses(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '0' && i + 1 < text.size() && text[i + 1] == 'x') {
      out += 'x';
      ++i;
      while (i + 1 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1]))) ++i;
    }
  }
  return out;
}

enum class Outcome {
  Pass,
  WrongOutput,
  UnexpectedError,
  UnexpectedSuccess,
  WrongErrorType,
  OptimizerDiffers,  // CompileOptions::optimize = false renders something else
};

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Pass:
      return "pass";
    case Outcome::WrongOutput:
      return "wrong_output";
    case Outcome::UnexpectedError:
      return "unexpected_error";
    case Outcome::UnexpectedSuccess:
      return "unexpected_success";
    case Outcome::WrongErrorType:
      return "wrong_error_type";
    case Outcome::OptimizerDiffers:
      return "optimizer_differs";
  }
  return "?";
}

std::string string_field(const Value& dict, std::string_view key) {
  const Value* v = dict.dict_find(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

chatwire::Error invalid_case(std::string message) {
  chatwire::Error e;
  e.type = "ValueError";
  e.message = std::move(message);
  return e;
}

// Parses one case line; an unreadable line is reported as a test failure by the caller.
chatwire::Result<SuiteCase> parse_case(const std::string& line) {
  auto parsed = chatwire::parse_json(line);
  if (!parsed.ok()) return parsed.error();
  const Value& row = parsed.value();
  if (!row.is_dict()) return invalid_case("case line is not an object");
  SuiteCase c;
  c.id = string_field(row, "id");
  c.source = string_field(row, "source");
  c.template_source = string_field(row, "template");
  c.now = string_field(row, "now");
  const Value* context = row.dict_find(std::string_view("context"));
  c.context = context != nullptr && context->is_dict() ? *context : Value::empty_dict();
  const Value* oracle = row.dict_find(std::string_view("oracle"));
  if (oracle == nullptr || !oracle->is_dict()) {
    return invalid_case("case " + c.id + " has no oracle result");
  }
  const Value* ok = oracle->dict_find(std::string_view("ok"));
  c.oracle_ok = ok != nullptr && ok->is_bool() && ok->as_bool();
  c.oracle_output = string_field(*oracle, "output");
  c.oracle_error_type = string_field(*oracle, "error_type");
  c.oracle_message = string_field(*oracle, "message");
  const std::string compare = string_field(*oracle, "compare");
  if (compare == "mask_addresses") c.compare = SuiteCase::Compare::MaskAddresses;
  if (compare == "success_only") c.compare = SuiteCase::Compare::SuccessOnly;
  if (const Value* spans = oracle->dict_find(std::string_view("generation"));
      spans != nullptr && spans->is_sequence()) {
    c.has_generation = true;
    for (const Value& span : spans->as_list()) {
      if (!span.is_sequence() || span.as_list().size() != 2) continue;
      c.generation.emplace_back(static_cast<std::size_t>(span.as_list()[0].as_integer()),
                                static_cast<std::size_t>(span.as_list()[1].as_integer()));
    }
  }
  return c;
}

// known_differences.tsv: "id<TAB>reason" per line; '#' comments; a header row "id\treason".
const std::map<std::string, std::string>& known_differences() {
  static const std::map<std::string, std::string> table = [] {
    std::map<std::string, std::string> rows;
    for (const auto& line : chatwire::test::read_lines(data_path("suites/known_differences.tsv"))) {
      if (line[0] == '#' || line.rfind("id\t", 0) == 0) continue;
      const auto tab = line.find('\t');
      rows[line.substr(0, tab)] = tab == std::string::npos ? "" : line.substr(tab + 1);
    }
    return rows;
  }();
  return table;
}

std::vector<std::string> suite_stems() {
  std::vector<std::string> stems;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(data_path("suites"), ec)) {
    if (entry.path().extension() == ".jsonl") stems.push_back(entry.path().stem().string());
  }
  std::sort(stems.begin(), stems.end());
  return stems;
}

// A case that runs longer than this stops the whole binary with its id printed, so an
// engine hang names the template instead of blocking the run (limits should make every
// case end far sooner). Override with CHATWIRE_SUITES_CASE_TIMEOUT=<seconds>.
constexpr double kDefaultCaseTimeoutSeconds = 30.0;

class Watchdog {
 public:
  static Watchdog& instance() {
    static Watchdog* dog = new Watchdog();  // never destroyed: its thread outlives main's tests
    return *dog;
  }
  void start_case(const std::string& id) {
    std::lock_guard<std::mutex> lock(mutex_);
    id_ = id;
    started_ = std::chrono::steady_clock::now();
    active_ = true;
  }
  void end_case() {
    std::lock_guard<std::mutex> lock(mutex_);
    active_ = false;
  }

 private:
  Watchdog() {
    if (const char* env = std::getenv("CHATWIRE_SUITES_CASE_TIMEOUT")) timeout_ = std::atof(env);
    std::thread([this] { watch(); }).detach();
  }
  void watch() {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      std::lock_guard<std::mutex> lock(mutex_);
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
      if (active_ && timeout_ > 0 && elapsed > timeout_) {
        std::cerr << "[suites] case " << id_ << " still running after " << elapsed
                  << " s: stopping (CHATWIRE_SUITES_CASE_TIMEOUT=" << timeout_ << ")" << std::endl;
        std::_Exit(3);
      }
    }
  }
  std::mutex mutex_;
  std::string id_;
  std::chrono::steady_clock::time_point started_;
  bool active_ = false;
  double timeout_ = kDefaultCaseTimeoutSeconds;
};

struct CaseResult {
  Outcome outcome = Outcome::Pass;
  std::string got_error_type, got_message, got_output, detail;
};

std::string spans_text(const std::vector<std::pair<std::size_t, std::size_t>>& spans) {
  std::string out = "[";
  for (const auto& [begin, end] : spans) {
    if (out.size() > 1) out += ", ";
    out += "(" + std::to_string(begin) + ", " + std::to_string(end) + ")";
  }
  return out + "]";
}

bool same_output(const SuiteCase& c, const std::string& output) {
  switch (c.compare) {
    case SuiteCase::Compare::Exact:
      return output == c.oracle_output;
    case SuiteCase::Compare::MaskAddresses:
      return mask_addresses(output) == mask_addresses(c.oracle_output);
    case SuiteCase::Compare::SuccessOnly:
      return true;
  }
  return false;
}

CaseResult run_case(const SuiteCase& c) {
  CaseResult r;
  chatwire::jinja::RenderOptions options;
  options.now = c.now;
  std::string optimizer_difference;
  auto rendered = chatwire::test::BothWays(c.template_source)
                      .render(c.context, options, optimizer_difference,
                              c.compare == SuiteCase::Compare::SuccessOnly);
  if (!optimizer_difference.empty()) {  // whatever the oracle says
    r.outcome = Outcome::OptimizerDiffers;
    r.detail = optimizer_difference;
    return r;
  }
  if (!rendered.ok()) {
    r.got_error_type = rendered.error().type;
    r.got_message = rendered.error().to_string();
  } else {
    r.got_output = rendered->output;
  }
  if (c.oracle_ok) {
    if (!rendered.ok()) {
      r.outcome = Outcome::UnexpectedError;
      r.detail = "oracle renders, chatwire fails: " + r.got_message;
    } else if (!same_output(c, rendered->output)) {
      r.outcome = Outcome::WrongOutput;
      r.detail = chatwire::test::describe_difference(c.oracle_output, rendered->output);
    } else if (c.has_generation) {
      std::vector<std::pair<std::size_t, std::size_t>> got;
      for (const auto& span : rendered->generation) got.emplace_back(span.begin, span.end);
      if (got != c.generation) {
        r.outcome = Outcome::WrongOutput;
        r.detail = "output identical, {% generation %} spans differ: expected " +
                   spans_text(c.generation) + ", got " + spans_text(got);
      }
    }
    return r;
  }
  const bool resource = kResourceErrors.count(c.oracle_error_type) > 0;
  if (rendered.ok()) {
    r.outcome = Outcome::UnexpectedSuccess;
    r.detail = "oracle raises " + c.oracle_error_type + ": " + c.oracle_message +
               "\n  chatwire renders: " +
               chatwire::test::escape_bytes(std::string_view(r.got_output).substr(0, 200));
  } else if (r.got_error_type != c.oracle_error_type &&
             !(resource && r.got_error_type == "LimitError")) {
    r.outcome = Outcome::WrongErrorType;
    r.detail = "oracle raises " + c.oracle_error_type + ": " + c.oracle_message +
               "\n  chatwire: " + r.got_message;
  }
  return r;
}

// Appends one case's result to $CHATWIRE_SUITES_REPORT (JSON Lines) when it is set.
void report_case(const std::string& suite, const SuiteCase& c, const CaseResult& r, bool known) {
  static const char* path = std::getenv("CHATWIRE_SUITES_REPORT");
  if (path == nullptr || *path == '\0') return;
  nlohmann::ordered_json row = {{"suite", suite},
                                {"id", c.id},
                                {"source", c.source},
                                {"status", outcome_name(r.outcome)},
                                {"known", known},
                                {"oracle_ok", c.oracle_ok},
                                {"oracle_error_type", c.oracle_error_type},
                                {"oracle_message", c.oracle_message},
                                {"got_error_type", r.got_error_type},
                                {"got_message", r.got_message},
                                {"detail", r.detail}};
  std::ofstream out(path, std::ios::app | std::ios::binary);
  out << row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

class Suites : public ::testing::TestWithParam<std::string> {};

TEST_P(Suites, RendersLikeTheOracle) {
  const std::string suite = GetParam();
  const auto lines = chatwire::test::read_lines(data_path("suites/" + suite + ".jsonl"));
  ASSERT_FALSE(lines.empty()) << "no cases in data/suites/" << suite << ".jsonl";
  const auto& known = known_differences();

  std::size_t cases = 0, oracle_ok = 0, oracle_error = 0, passing = 0, listed = 0, failing = 0;
  std::size_t stale = 0;
  const auto started = std::chrono::steady_clock::now();
  for (const auto& line : lines) {
    auto parsed = parse_case(line);
    if (!parsed.ok()) {
      ADD_FAILURE() << suite << ": unreadable case line: " << parsed.error().to_string();
      continue;
    }
    const SuiteCase& c = parsed.value();
    ++cases;
    (c.oracle_ok ? oracle_ok : oracle_error)++;
    Watchdog::instance().start_case(c.id);
    const CaseResult r = run_case(c);
    Watchdog::instance().end_case();
    const auto listed_reason = known.find(c.id);
    const bool is_known = listed_reason != known.end();
    report_case(suite, c, r, is_known);
    if (r.outcome == Outcome::Pass) {
      ++passing;
      if (is_known) ++stale;  // listed but passing now: the entry can go
      continue;
    }
    if (is_known && r.outcome != Outcome::OptimizerDiffers) {  // the list excuses the oracle's
      ++listed;
      continue;
    }
    ++failing;
    ADD_FAILURE() << c.id << " [" << outcome_name(r.outcome) << "] (" << c.source << ")\n  "
                  << r.detail;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::ostringstream summary;
  summary << "[suites] " << suite << ": " << cases << " cases (" << oracle_ok << " oracle-ok, "
          << oracle_error << " oracle-error), " << passing << " passing, " << listed
          << " listed in known_differences.tsv, " << failing << " failing";
  if (stale > 0) summary << ", " << stale << " listed but now passing";
  summary << " (" << seconds << " s)";
  std::cout << summary.str() << std::endl;
}

INSTANTIATE_TEST_SUITE_P(Suites, Suites, ::testing::ValuesIn(suite_stems()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return chatwire::test::test_name(info.param);
                         });

// The known differences, over all suites together, stay within the 1% issue 3 allows.
TEST(SuitesKnownDifferences, AtMostOnePercentOfAllCases) {
  std::size_t total = 0;
  for (const auto& stem : suite_stems()) {
    std::ifstream in(data_path("suites/" + stem + ".jsonl"));
    std::string line;
    while (std::getline(in, line))
      if (!line.empty()) ++total;
  }
  const std::size_t listed = known_differences().size();
  ASSERT_GT(total, 0u);
  std::cout << "[suites] known differences: " << listed << " of " << total << " cases" << std::endl;
  EXPECT_LE(static_cast<double>(listed), kMaxKnownDifferenceShare * static_cast<double>(total))
      << listed << " of " << total
      << " cases are excused in known_differences.tsv, more than the 1% issue 3 allows";
}

}  // namespace
