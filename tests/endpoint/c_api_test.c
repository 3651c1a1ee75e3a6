/* The C API from C: load, prepare, generate, errors, free (leaks show under ASan). Plain C11,
 * no test framework: each failed check prints its line; the closing line counts them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chatwire/chatwire.h"

static int checks = 0, failures = 0;
#define CHECK(cond)                                                            \
  do {                                                                         \
    ++checks;                                                                  \
    if (!(cond)) {                                                             \
      ++failures;                                                              \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

static const char* kRequest =
    "{\"messages\": [{\"role\": \"user\", \"content\": \"Weather in Paris?\"}],"
    " \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\","
    " \"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": "
    "\"string\"}}}}}]}";

int main(void) {
  char* error = NULL;
  CHECK(strcmp(chatwire_version(), "") != 0);

  /* Errors: a NULL result and the error text. */
  CHECK(chatwire_endpoint_load(CHATWIRE_DATA_DIR "/models/no-such-dir", NULL, &error) == NULL);
  CHECK(error != NULL);
  chatwire_string_free(error);
  CHECK(chatwire_endpoint_load(CHATWIRE_DATA_DIR "/models/endpoint/qwen3", "{\"dialect\": 3}",
                               &error) == NULL);
  CHECK(error != NULL && strstr(error, "options.dialect") != NULL);
  chatwire_string_free(error);

  chatwire_endpoint* ep =
      chatwire_endpoint_load(CHATWIRE_DATA_DIR "/models/endpoint/qwen3", NULL, &error);
  CHECK(ep != NULL && error == NULL);
  if (ep == NULL) {
    fprintf(stderr, "%s\n", error);
    return 1;
  }
  const char* bad = "{\"messages\": [{\"content\": \"x\"}]}";
  CHECK(chatwire_prepare(ep, bad, strlen(bad), NULL, &error) == NULL);
  CHECK(error != NULL && strncmp(error, "RequestError: messages[0].role", 30) == 0);
  chatwire_string_free(error);
  CHECK(chatwire_prepare(ep, kRequest, strlen(kRequest), "{\"mode\": \"sideways\"}", &error) ==
        NULL);
  chatwire_string_free(error);

  /* The whole path. */
  chatwire_prompt* prompt = chatwire_prepare(ep, kRequest, strlen(kRequest),
                                             "{\"now\": \"2026-01-15T10:00:00\"}", &error);
  CHECK(prompt != NULL && error == NULL);
  if (prompt == NULL) return 1;
  size_t size = 0, count = 0, stops = 0;
  const char* text = chatwire_prompt_text(prompt, &size);
  CHECK(size > 0 && strlen(text) == size && strstr(text, "get_weather") != NULL);
  const uint32_t* ids = chatwire_prompt_ids(prompt, &count);
  CHECK(ids != NULL && count > 10);
  const uint32_t* stop_ids = chatwire_prompt_stop_ids(prompt, &stops);
  CHECK(stops >= 1 && stop_ids != NULL);
  CHECK(strstr(chatwire_prompt_json(prompt), "\"stop_strings\":[\"<|im_end|>\"") != NULL);
  /* <|im_end|> is a stop id's token: an engine that stops at the ids gets no string for it. */
  CHECK(strstr(chatwire_prompt_json(prompt), "\"engine_stop_strings\":[]") != NULL);
  CHECK(chatwire_stops_by_id(ep, prompt, "<|im_end|>", 10) == 1);
  CHECK(chatwire_stops_by_id(ep, prompt, "<|im_end|>", 4) == 0); /* "<|im" */
  CHECK(chatwire_stops_by_id(ep, prompt, "END", 3) == 0);
  CHECK(chatwire_stops_by_id(NULL, prompt, "<|im_end|>", 10) == 0);
  CHECK(chatwire_stops_by_id(ep, prompt, NULL, 0) == 0);

  chatwire_generation* gen = chatwire_start(ep, prompt, &error);
  CHECK(gen != NULL);
  const char* out =
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}"
      "\n</tool_call><|im_end|>ignored";
  size_t half = strlen(out) / 2;
  char* d1 = chatwire_generation_push_text(gen, out, half, &error);
  char* d2 = chatwire_generation_push_text(gen, out + half, strlen(out) - half, &error);
  char* d3 = chatwire_generation_finish(gen, &error);
  CHECK(d1 != NULL && d2 != NULL && d3 != NULL && d1[0] == '[');
  char* message = chatwire_generation_message(gen);
  CHECK(message != NULL && strstr(message, "\"name\":\"get_weather\"") != NULL);
  CHECK(strstr(message, "ignored") == NULL);
  CHECK(chatwire_generation_stopped(gen) == 1);
  CHECK(chatwire_generation_call_limit_reached(gen) == 0);
  CHECK(strcmp(chatwire_generation_finish_reason(gen), "tool_calls") == 0);
  char* warnings = chatwire_generation_warnings(gen);
  CHECK(warnings != NULL && strcmp(warnings, "[]") == 0);
  chatwire_string_free(warnings);
  CHECK(chatwire_generation_push_text(gen, "x", 1, &error) == NULL); /* finished */
  CHECK(error != NULL);
  chatwire_string_free(error);
  chatwire_string_free(d1);
  chatwire_string_free(d2);
  chatwire_string_free(d3);
  chatwire_string_free(message);
  chatwire_generation_free(gen);

  /* A call cut off by the end of the output: returned, with a warning saying so. */
  gen = chatwire_start(ep, prompt, &error);
  const char* cut = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par";
  char* d4 = chatwire_generation_push_text(gen, cut, strlen(cut), &error);
  char* d5 = chatwire_generation_finish(gen, &error);
  warnings = chatwire_generation_warnings(gen);
  CHECK(warnings != NULL && strstr(warnings, "\"code\":\"truncated\"") != NULL);
  CHECK(chatwire_generation_warnings(NULL) == NULL);
  CHECK(chatwire_generation_call_limit_reached(NULL) == 0);
  chatwire_string_free(warnings);
  chatwire_string_free(d4);
  chatwire_string_free(d5);
  chatwire_generation_free(gen);

  /* Token ids in, with the prompt's own ids as a stand-in for generated ones. */
  gen = chatwire_start(ep, prompt, &error);
  char* deltas = chatwire_generation_push(gen, ids, count, &error);
  CHECK(deltas != NULL);
  chatwire_string_free(deltas);
  chatwire_generation_free(gen);

  char* profile = chatwire_endpoint_profile_json(ep);
  CHECK(profile != NULL && strstr(profile, "\"profile_version\"") != NULL);
  chatwire_string_free(profile);
  chatwire_prompt_free(prompt);
  chatwire_endpoint_free(ep);
  chatwire_endpoint_free(NULL);
  chatwire_string_free(NULL);

  printf("%d passed, %d failed\n", checks - failures, failures);
  return failures == 0 ? 0 : 1;
}
