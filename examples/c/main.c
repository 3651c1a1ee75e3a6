/* The C API from an installed chatwire, built with pkg-config:
 *   cc main.c -o example $(pkg-config --cflags --libs --static chatwire)
 *   ./example MODEL_DIR */
#include <chatwire/chatwire.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc != 2) return fprintf(stderr, "usage: example MODEL_DIR\n"), 2;
  char* error = NULL;
  chatwire_endpoint* ep = chatwire_endpoint_load(argv[1], NULL, &error);
  if (ep == NULL) return fprintf(stderr, "%s\n", error), chatwire_string_free(error), 1;
  const char* request = "{\"messages\": [{\"role\": \"user\", \"content\": \"Hello!\"}]}";
  chatwire_prompt* prompt = chatwire_prepare(ep, request, strlen(request), NULL, &error);
  if (prompt == NULL) return fprintf(stderr, "%s\n", error), chatwire_string_free(error), 1;
  size_t ids = 0;
  chatwire_prompt_ids(prompt, &ids);
  chatwire_generation* gen = chatwire_start(ep, prompt, &error);
  const char* output = "Hi there!";
  char* deltas = chatwire_generation_push_text(gen, output, strlen(output), &error);
  char* rest = chatwire_generation_finish(gen, &error);
  char* message = chatwire_generation_message(gen);
  printf("chatwire %s: %zu prompt tokens, message %s\n", chatwire_version(), ids, message);
  int ok = message != NULL && strstr(message, "Hi there!") != NULL;
  chatwire_string_free(deltas);
  chatwire_string_free(rest);
  chatwire_string_free(message);
  chatwire_generation_free(gen);
  chatwire_prompt_free(prompt);
  chatwire_endpoint_free(ep);
  return ok ? 0 : 1;
}
