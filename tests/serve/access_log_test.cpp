// The access log's line: UTC time to the millisecond, times to the microsecond, the relayed
// routes' fields only for them, the error's code only for an error.
#include "serve/access_log.hpp"

#include <gtest/gtest.h>

namespace cs = chatwire::serve;

TEST(AccessLog, OneJsonLinePerRequest) {
  cs::AccessRecord chat;
  chat.client = "127.0.0.1:50000";
  chat.method = "POST";
  chat.path = "/v1/chat/completions";
  chat.route = "chat_completions";
  chat.status = 200;
  chat.model = "qwen3";
  chat.id = "chatcmpl-1";
  chat.stream = true;
  chat.prompt_tokens = 3003;
  chat.completion_tokens = 40;
  chat.first_token_seconds = 0.0123456789;
  chat.seconds = 1.5;
  EXPECT_EQ(cs::AccessLog::line(chat, 1796646606123),
            R"({"time":"2026-12-07T12:30:06.123Z","client":"127.0.0.1:50000","method":"POST",)"
            R"("path":"/v1/chat/completions","route":"chat_completions","status":200,)"
            R"("model":"qwen3","id":"chatcmpl-1","stream":true,"prompt_tokens":3003,)"
            R"("completion_tokens":40,"first_token_seconds":0.012346,"seconds":1.5})");
  cs::AccessRecord missing;
  missing.method = "GET";
  missing.path = "/nothing";
  missing.status = 404;
  missing.error = "not_found";
  missing.seconds = 0.0000004;
  EXPECT_EQ(cs::AccessLog::line(missing, 0),
            R"({"time":"1970-01-01T00:00:00.000Z","client":"","method":"GET","path":"/nothing",)"
            R"("route":null,"status":404,"seconds":0.0,"error":"not_found"})");
}
