/* chatwire's C API: the Endpoint (chatwire/endpoint.hpp) for bindings in other languages.
 *
 *   char* error = NULL;
 *   chatwire_endpoint* ep = chatwire_endpoint_load("path/to/checkpoint", NULL, &error);
 *   chatwire_prompt* prompt = chatwire_prepare(ep, request_json, strlen(request_json), NULL,
 *                                              &error);
 *   size_t n; const uint32_t* ids = chatwire_prompt_ids(prompt, &n);   // to the engine
 *   chatwire_generation* gen = chatwire_start(ep, prompt, &error);
 *   char* deltas = chatwire_generation_push(gen, generated, count, &error);  // JSON array
 *   ...
 *   char* message = chatwire_generation_message(gen);                  // JSON object
 *   chatwire_string_free(deltas); chatwire_string_free(message);
 *   chatwire_generation_free(gen); chatwire_prompt_free(prompt); chatwire_endpoint_free(ep);
 *
 * Every function that can fail returns NULL (or 0) and, when `error` is not NULL, stores a
 * newly allocated message there ("RequestError: messages[0].role: ..."); free it with
 * chatwire_string_free. Strings returned as `char*` belong to the caller (chatwire_string_free);
 * `const char*` and `const uint32_t*` results belong to the object they came from and live as
 * long as it does. Structured results are JSON text (UTF-8), in the OpenAI wire shapes.
 * An endpoint may be used from many threads at once; a generation from one thread at a time.
 * Nothing here throws or aborts. Link with the C++ libraries (pkg-config --static chatwire, or
 * the CMake target chatwire::chatwire).
 */
#ifndef CHATWIRE_CHATWIRE_H
#define CHATWIRE_CHATWIRE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct chatwire_endpoint chatwire_endpoint;
typedef struct chatwire_prompt chatwire_prompt;
typedef struct chatwire_generation chatwire_generation;

/* "0.1.0" */
const char* chatwire_version(void);

/* Frees a string this API returned; NULL is ignored. */
void chatwire_string_free(char* s);

/* Loads a checkpoint directory. options_json (NULL = defaults):
 *   {"dialect": "hermes", "template_name": "tool_use", "profile_json": "<cached profile>"} */
chatwire_endpoint* chatwire_endpoint_load(const char* dir, const char* options_json, char** error);
void chatwire_endpoint_free(chatwire_endpoint* endpoint);
/* The probe profile as JSON, to cache and pass back as "profile_json". */
char* chatwire_endpoint_profile_json(const chatwire_endpoint* endpoint);

/* An OpenAI chat-completions request (JSON text of `size` bytes) -> a prompt. options_json
 * (NULL = defaults): {"mode": "reply"|"prefill"|"training", "now": "2026-01-15T10:00:00",
 *  "tokenize": true, "assistant_mask": false} */
chatwire_prompt* chatwire_prepare(const chatwire_endpoint* endpoint, const char* request_json,
                                  size_t size, const char* options_json, char** error);
void chatwire_prompt_free(chatwire_prompt* prompt);
/* The prompt text (NUL-terminated; *size gets its length when size is not NULL). */
const char* chatwire_prompt_text(const chatwire_prompt* prompt, size_t* size);
const uint32_t* chatwire_prompt_ids(const chatwire_prompt* prompt, size_t* count);
const uint32_t* chatwire_prompt_stop_ids(const chatwire_prompt* prompt, size_t* count);
/* Everything as JSON: {"text", "ids", "adaptations", "warnings", "stop_ids", "stop_strings",
 * "engine_stop_strings", "parser": {...}}. An engine that stops at stop_ids needs, as strings,
 * only engine_stop_strings: the others are stop ids' tokens, and as strings they would also cut
 * where the model writes the same text in other tokens (code quoting "<|im_end|>"). */
const char* chatwire_prompt_json(const chatwire_prompt* prompt);
/* 1 when `text` (`size` bytes) is the token of one of the prompt's stop ids: a stop string of
 * the client's that such an engine should match by the id, not the text. 0 otherwise. */
int chatwire_stops_by_id(const chatwire_endpoint* endpoint, const chatwire_prompt* prompt,
                         const char* text, size_t size);

/* One response being generated. */
chatwire_generation* chatwire_start(const chatwire_endpoint* endpoint,
                                    const chatwire_prompt* prompt, char** error);
void chatwire_generation_free(chatwire_generation* generation);
/* Each returns the OpenAI deltas that became certain, as a JSON array (possibly "[]"). */
char* chatwire_generation_push(chatwire_generation* generation, const uint32_t* ids, size_t count,
                               char** error);
char* chatwire_generation_push_text(chatwire_generation* generation, const char* text, size_t size,
                                    char** error);
char* chatwire_generation_finish(chatwire_generation* generation, char** error);
/* The assistant message so far (complete after finish), as JSON. */
char* chatwire_generation_message(const chatwire_generation* generation);
/* What the parser reported about the output so far (a call cut off at the end, text that looked
 * like a call and stays content, a stray marker, ...), as a JSON array of {"code", "message",
 * "offset"}; "[]" when nothing. */
char* chatwire_generation_warnings(const chatwire_generation* generation);
/* 1 when a stop id or stop string was generated, or the call limit was reached. */
int chatwire_generation_stopped(const chatwire_generation* generation);
/* 1 when the prompt allowed one call (parallel_tool_calls false) and a further call began: the
 * generation ended there, so the engine can stop generating. */
int chatwire_generation_call_limit_reached(const chatwire_generation* generation);
/* "tool_calls", "stop" or "length". */
const char* chatwire_generation_finish_reason(const chatwire_generation* generation);

#ifdef __cplusplus
}
#endif

#endif /* CHATWIRE_CHATWIRE_H */
