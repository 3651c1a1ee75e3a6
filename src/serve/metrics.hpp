// The gateway's counters for GET /metrics (Prometheus text format 0.0.4): requests by route and
// status, errors by OpenAI error code, prompt and completion tokens, latency histograms (whole
// request, time to first token) and open streams. Safe to update from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace chatwire::serve {

class Metrics {
 public:
  void request(std::string_view route, int status, double seconds);
  void error(std::string_view code);
  void tokens(std::size_t prompt, std::size_t completion);
  void first_token(double seconds);
  void stream_opened() { ++open_streams_; }
  void stream_closed() { --open_streams_; }
  long long open_streams() const { return open_streams_.load(); }

  std::string prometheus_text() const;

 private:
  struct Histogram {
    std::vector<unsigned long long> counts;  // per bucket of kBuckets, then +Inf
    double sum = 0;
    unsigned long long count = 0;
  };
  static void observe(Histogram& h, double seconds);
  static void write(std::string& out, std::string_view name, std::string_view labels,
                    const Histogram& h);

  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, unsigned long long> requests_;
  std::map<std::string, unsigned long long> errors_;
  std::map<std::string, Histogram> latency_;  // by route
  Histogram first_token_;
  unsigned long long prompt_tokens_ = 0, completion_tokens_ = 0;
  std::atomic<long long> open_streams_{0};
};

}  // namespace chatwire::serve
