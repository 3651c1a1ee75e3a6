// Reading a backend's server-sent events whatever the split of the bytes.
#include "serve/sse_reader.hpp"

#include <gtest/gtest.h>

namespace cs = chatwire::serve;

namespace {

std::vector<std::string> read_in_pieces(std::string_view bytes, std::size_t piece) {
  cs::SseReader reader(1 << 20);
  std::vector<std::string> events;
  for (std::size_t i = 0; i < bytes.size(); i += piece)
    EXPECT_TRUE(reader.feed(bytes.substr(i, piece), events));
  reader.finish(events);
  return events;
}

TEST(SseReader, EventsAreTheSameWhateverTheSplit) {
  const std::string bytes =
      ": a comment\r\nevent: x\r\ndata: {\"a\":1}\r\n\r\ndata:{\"b\":2}\n\ndata: one\ndata: two\n\n"
      "data: [DONE]\n\n";
  const std::vector<std::string> expected = {"{\"a\":1}", "{\"b\":2}", "one\ntwo", "[DONE]"};
  for (std::size_t piece : {1, 2, 3, 7, 1000}) EXPECT_EQ(read_in_pieces(bytes, piece), expected);
}

TEST(SseReader, AnEventNotClosedByABlankLineCountsAtTheEnd) {
  EXPECT_EQ(read_in_pieces("data: {\"stop\":true}", 4),
            std::vector<std::string>{"{\"stop\":true}"});
  EXPECT_EQ(read_in_pieces("data: {\"stop\":true}\n", 4),
            std::vector<std::string>{"{\"stop\":true}"});
}

// llama.cpp writes a failure mid-stream as an `error:` line (its server_sent_event with the
// field name "error"): the event {"error": ..} that the backend readers report as a 502.
TEST(SseReader, LlamaCppsErrorLineIsAnErrorEvent) {
  const std::string bytes =
      "data: {\"content\":\"Hi\"}\n\nerror: {\"code\":400,\"message\":\"the request exceeds the "
      "available context size\",\"type\":\"exceed_context_size_error\"}\n\nerror: not json\n\n";
  const std::vector<std::string> expected = {
      "{\"content\":\"Hi\"}",
      "{\"error\":{\"code\":400,\"message\":\"the request exceeds the available context "
      "size\",\"type\":\"exceed_context_size_error\"}}",
      "{\"error\":\"not json\"}"};
  for (std::size_t piece : {1, 5, 1000}) EXPECT_EQ(read_in_pieces(bytes, piece), expected);
}

TEST(SseReader, AnEventLongerThanTheLimitIsAnError) {
  cs::SseReader reader(16);
  std::vector<std::string> events;
  EXPECT_TRUE(reader.feed("data: short\n\n", events));
  auto r = reader.feed("data: " + std::string(40, 'x'), events);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().type, "BackendError");
  EXPECT_EQ(events, std::vector<std::string>{"short"});
}

}  // namespace
