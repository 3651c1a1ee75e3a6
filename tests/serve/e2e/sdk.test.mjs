// chatwire serve end to end with the official OpenAI client (npm openai@6) as the real client,
// against the scripted backend (tests/serve/backend/server.mjs), for each model directory of
// data/models/endpoint/. The backend answers 400 (the gateway: 502) unless the gateway's prompt is
// the reference prompt of a scripted case (data/goldens/serve/cases.jsonl), so every 200 here also
// proves the prompt exact. CHATWIRE=build-test/chatwire node --test tests/serve/e2e/
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import { golden, modelEntries, modelsDir, post, sseEvents, startBackend, startGateway } from "./harness.mjs";
import { decode } from "../backend/tok.mjs";

let backend, gateway, client;
// A command's exit status and output (asynchronous: the test process keeps serving its children).
const run = (cmd, argv) => new Promise((resolve, reject) => {
  const p = spawn(cmd, argv);
  let stdout = "", stderr = "";
  p.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
  p.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
  p.on("error", reject);
  p.on("close", (status) => resolve({ status, stdout, stderr }));
});
before(async () => {
  backend = await startBackend();
  gateway = await startGateway({ timeouts: { connect_ms: 2000, idle_ms: 5000 }, models: modelEntries(backend.url) });
  client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: "unused", maxRetries: 0, timeout: 30000 });
});
after(async () => {
  await gateway?.stop();
  await backend?.stop();
});

// The golden's request as the client sends it, for the gateway model `name`.
const request = (c, name) => ({ ...c.request, model: name });
const argsOf = (calls) => calls.map((t) => ({ name: t.function.name, arguments: JSON.parse(t.function.arguments) }));
const idRule = (model) => (model.startsWith("mistral") ? /^[A-Za-z0-9]{9}$/ : /^\S{1,64}$/);

// The message fields a golden expects, compared with a returned message.
function checkMessage(model, msg, expected, reasoning) {
  assert.equal(msg.role, "assistant");
  if (expected.tool_calls) {
    assert.deepEqual(argsOf(msg.tool_calls), argsOf(expected.tool_calls));
    for (const t of msg.tool_calls) {
      assert.equal(t.type, "function");
      assert.match(t.id, idRule(model));
    }
    assert.equal(new Set(msg.tool_calls.map((t) => t.id)).size, msg.tool_calls.length, "tool-call ids are distinct");
  } else {
    assert.ok(!msg.tool_calls || msg.tool_calls.length === 0, `no tool calls: ${JSON.stringify(msg.tool_calls)}`);
  }
  // Text is compared without the whitespace the template frames it with ("<think>\n",
  // "</think>\n\n", Mistral's spaces), as tests/endpoint/endpoint_test.cpp compares the Endpoint's
  // read-back: which of it belongs to the markers is the parser's to know (issue 16, section 2).
  assert.equal((msg.content ?? "").trim(), (expected.content ?? "").trim());
  assert.equal((reasoning ?? "").trim(), (expected.reasoning_content ?? "").trim());
}

// Streams `req` through the SDK's ChatCompletionStream; returns the chunks, the reasoning
// assembled from them (openai-node's accumulator overwrites reasoning_content, so the chunks
// are the source) and finalChatCompletion().
async function streamed(req) {
  const stream = client.chat.completions.stream({ ...req, stream: true });
  const chunks = [];
  // Cloned as they come: the SDK's accumulator appends later chunks' logprobs.content to the
  // first chunk's own array (it copies the logprobs object, not the list).
  for await (const chunk of stream) chunks.push(structuredClone(chunk));
  const final = await stream.finalChatCompletion();
  const reasoning = chunks.map((c) => c.choices[0]?.delta?.reasoning_content ?? "").join("");
  return { chunks, final, reasoning };
}

// OpenAI's chunk shapes: role in the first chunk; a tool call's first delta carries index, id,
// type and function.name, later ones only index and function.arguments; one finish_reason.
function checkChunks(chunks, finish) {
  assert.ok(chunks.length >= 2);
  assert.equal(chunks[0].choices[0].delta.role, "assistant");
  const seen = new Set();
  for (const c of chunks) {
    assert.equal(c.object, "chat.completion.chunk");
    for (const t of c.choices[0]?.delta?.tool_calls ?? []) {
      assert.equal(typeof t.index, "number");
      if (!seen.has(t.index)) {
        seen.add(t.index);
        assert.equal(typeof t.id, "string");
        assert.equal(t.type, "function");
        assert.equal(typeof t.function.name, "string");
      } else {
        assert.deepEqual(Object.keys(t).sort(), ["function", "index"]);
        assert.deepEqual(Object.keys(t.function), ["arguments"]);
      }
    }
  }
  const finishes = chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean);
  assert.deepEqual(finishes, [finish]);
}

const MODELS = ["qwen3", "llama3_1", "mistral-v0.3", "gpt-oss", "deepseek-r1", "gemma3"];
for (const model of MODELS) {
  describe(model, () => {
    const call = golden(model, "call"), answer = golden(model, "answer"), turn2 = golden(model, "turn2");

    test("tool calls, non-streaming", async () => {
      const r = await client.chat.completions.create(request(call, model));
      assert.equal(r.choices[0].finish_reason, "tool_calls");
      const m = r.choices[0].message;
      checkMessage(model, m, call.expected, m.reasoning_content);
    });

    test("tool calls, streamed and assembled by ChatCompletionStream", async () => {
      const { chunks, final, reasoning } = await streamed(request(call, model));
      checkChunks(chunks, "tool_calls");
      assert.equal(final.choices[0].finish_reason, "tool_calls");
      checkMessage(model, final.choices[0].message, call.expected, reasoning);
    });

    test("answer (with reasoning where scripted), non-streaming and streamed", async () => {
      const r = await client.chat.completions.create(request(answer, model));
      assert.equal(r.choices[0].finish_reason, "stop");
      // Reasoning tokens counted where the reply reasons (completion_tokens_details, as vLLM).
      const counted = r.usage.completion_tokens_details.reasoning_tokens;
      assert.equal(counted > 0, Boolean(answer.expected.reasoning_content), `${counted}`);
      assert.ok(counted < r.usage.completion_tokens);
      checkMessage(model, r.choices[0].message, answer.expected, r.choices[0].message.reasoning_content);
      const { chunks, final, reasoning } = await streamed(request(answer, model));
      checkChunks(chunks, "stop");
      checkMessage(model, final.choices[0].message, answer.expected, reasoning);
    });

    for (const stream of [false, true])
    test(`two-turn runTools loop${stream ? ", streamed" : ""} (the second prompt holds the gateway's tool-call ids)`, async () => {
      const results = { "Zürich \"Altstadt\"": "{\"temp_c\": 21}", "東京": "{\"temp_c\": 18}" };
      const runner = client.chat.completions.runTools({
        ...request(call, model),
        stream,
        tools: call.request.tools.map((t) => ({ type: "function", function: {
          name: t.function.name, parameters: t.function.parameters, description: t.function.description,
          parse: JSON.parse, function: (args) => results[args.city] } })),
      });
      const content = await runner.finalContent();
      assert.equal((content ?? "").trim(), turn2.expected.content);
      const msgs = runner.messages;
      const first = msgs.find((m) => m.role === "assistant" && m.tool_calls?.length);
      assert.ok(first, "the first turn called tools");
      const tools = msgs.filter((m) => m.role === "tool");
      assert.deepEqual(tools.map((m) => m.tool_call_id), first.tool_calls.map((t) => t.id));
      for (const t of first.tool_calls) assert.match(t.id, idRule(model));
      if (!stream) assert.equal((await runner.totalUsage()).completion_tokens > 0, true);
    });
  });
}

describe("request fields the template reads", () => {
  // Each golden's prompt is rendered with the field applied: the backend accepts nothing else.
  for (const [model, name, what] of [["qwen3", "no_thinking", "chat_template_kwargs.enable_thinking false"],
                                     ["qwen3", "tool_choice_none", "tool_choice none drops the tools"],
                                     ["gpt-oss", "effort_high", "reasoning_effort high"]]) {
    test(`${model}: ${what}`, async () => {
      const c = golden(model, name);
      const r = await client.chat.completions.create(request(c, model));
      assert.equal(r.choices[0].finish_reason, "stop");
      checkMessage(model, r.choices[0].message, c.expected, r.choices[0].message.reasoning_content);
      const { chunks, final, reasoning } = await streamed(request(c, model));
      checkChunks(chunks, "stop");
      checkMessage(model, final.choices[0].message, c.expected, reasoning);
    });
  }
});

describe("parameterless tool calls get \"{}\"", () => {
  for (const model of ["qwen3", "mistral-v0.3"]) {
    test(`${model}: non-streaming and streamed`, async () => {
      const c = golden(model, "call_noargs");
      const r = await client.chat.completions.create(request(c, model));
      assert.equal(r.choices[0].finish_reason, "tool_calls");
      assert.equal(r.choices[0].message.tool_calls[0].function.name, "get_time");
      assert.equal(r.choices[0].message.tool_calls[0].function.arguments, "{}");
      const { chunks, final } = await streamed(request(c, model));
      checkChunks(chunks, "tool_calls");
      const args = chunks.flatMap((x) => x.choices[0]?.delta?.tool_calls ?? []).map((t) => t.function?.arguments ?? "").join("");
      assert.equal(args, "{}");
      assert.equal(final.choices[0].message.tool_calls[0].function.arguments, "{}");
    });
  }
});

// tool_choice "required" and a named function: the gateway asks the backend to constrain the
// output to the JSON schema vLLM builds (the scripted backend refuses any other constraint, under
// each API's own field) and reads the JSON as the calls. parallel_tool_calls false with "auto":
// the reply ends where the model's second call begins.
describe("tool_choice and parallel_tool_calls (Qwen3 under each backend API)", () => {
  for (const name of ["qwen3", "qwen3-openai", "qwen3-sglang"]) {
    for (const golden_name of ["forced_named", "forced_required", "forced_required_one", "one_call"]) {
      test(`${name}: ${golden_name}, non-streaming and streamed`, async () => {
        const c = golden("qwen3", golden_name);
        const r = await client.chat.completions.create(request(c, name));
        assert.equal(r.choices[0].finish_reason, "tool_calls");
        checkMessage("qwen3", r.choices[0].message, c.expected, r.choices[0].message.reasoning_content);
        const { chunks, final, reasoning } = await streamed(request(c, name));
        checkChunks(chunks, "tool_calls");
        checkMessage("qwen3", final.choices[0].message, c.expected, reasoning);
      });
    }
  }
  test("a backend that does not constrain output: required and named are refused with 400", async () => {
    for (const tool_choice of ["required", { type: "function", function: { name: "get_weather" } }]) {
      const c = golden("qwen3", "forced_named");
      await assert.rejects(client.chat.completions.create({ ...request(c, "qwen3-unconstrained"), tool_choice }),
        (e) => e.status === 400 && e.param === "tool_choice" && /constrain/.test(e.message));
    }
  });
  test("a named function that is not among the tools: 400 naming tool_choice.function.name", async () => {
    const c = golden("qwen3", "forced_named");
    await assert.rejects(client.chat.completions.create({ ...request(c, "qwen3"),
      tool_choice: { type: "function", function: { name: "get_stock_price" } } }),
      (e) => e.status === 400 && e.param === "tool_choice.function.name");
  });
});

// logprobs / top_logprobs: asked of each backend API in its own words, passed on per generated
// token (the stop token excluded) in OpenAI's shape, streamed with the chunks. The scripted
// backend's values: scriptedLogprob(i) for the token at position i, alternatives the ids after
// it with one less each (tests/serve/backend/server.mjs).
describe("logprobs (Qwen3 under each backend API)", () => {
  const scriptedLogprob = (i) => -((i % 9) + 1) / 8;
  for (const name of ["qwen3", "qwen3-openai", "qwen3-sglang"]) {
    test(`${name}: logprobs with top_logprobs 2, non-streaming and streamed`, async () => {
      const c = golden("qwen3", "answer");
      const req = { ...request(c, name), logprobs: true, top_logprobs: 2 };
      const r = await client.chat.completions.create(req);
      const content = r.choices[0].logprobs.content;
      const ids = c.completion.ids.slice(0, -1);  // the stop id is not part of the message
      assert.equal(content.length, ids.length);
      const dir = `${modelsDir}/qwen3`;
      for (const [i, e] of content.entries()) {
        assert.equal(e.logprob, scriptedLogprob(i));
        assert.equal(e.token, await decode(dir, [ids[i]]));
        assert.deepEqual(e.bytes, [...Buffer.from(e.token, "utf8")]);
        assert.deepEqual(e.top_logprobs.map((t) => t.logprob), [scriptedLogprob(i), scriptedLogprob(i) - 1]);
        assert.equal(e.top_logprobs[1].token, await decode(dir, [ids[i] + 1]));
      }
      const { chunks } = await streamed(req);
      const streamedContent = chunks.flatMap((x) => x.choices[0]?.logprobs?.content ?? []);
      assert.deepEqual(streamedContent, content);
      const none = await client.chat.completions.create({ ...request(c, name) });
      assert.equal(none.choices[0].logprobs, null);
    });
  }
  test("top_logprobs without logprobs, or above 20: 400 naming top_logprobs", async () => {
    const c = golden("qwen3", "answer");
    for (const extra of [{ top_logprobs: 2 }, { logprobs: true, top_logprobs: 21 }])
      await assert.rejects(client.chat.completions.create({ ...request(c, "qwen3"), ...extra }),
        (e) => e.status === 400 && e.param === "top_logprobs");
  });
});

// n > 1: one backend request per choice; each choice carries its index, the usage counts every
// choice's tokens and the prompt once.
describe("n choices (Qwen3 under each backend API)", () => {
  for (const name of ["qwen3", "qwen3-openai", "qwen3-sglang"]) {
    test(`${name}: n 2, non-streaming and streamed`, async () => {
      const c = golden("qwen3", "call");
      const r = await client.chat.completions.create({ ...request(c, name), n: 2 });
      assert.deepEqual(r.choices.map((x) => x.index), [0, 1]);
      for (const x of r.choices) {
        assert.equal(x.finish_reason, "tool_calls");
        checkMessage("qwen3", x.message, c.expected, x.message.reasoning_content);
      }
      const one = await client.chat.completions.create(request(c, name));
      assert.equal(r.usage.prompt_tokens, one.usage.prompt_tokens);
      assert.equal(r.usage.completion_tokens, 2 * one.usage.completion_tokens);
      const { chunks, final } = await streamed({ ...request(c, name), n: 2, stream_options: { include_usage: true } });
      assert.deepEqual(final.choices.map((x) => x.index), [0, 1]);
      for (const x of final.choices) assert.deepEqual(argsOf(x.message.tool_calls), argsOf(c.expected.tool_calls));
      assert.equal(chunks.at(-1).usage.completion_tokens, 2 * one.usage.completion_tokens);
      for (const index of [0, 1]) {
        const mine = chunks.filter((x) => x.choices[0]?.index === index);
        assert.equal(mine[0].choices[0].delta.role, "assistant");
        assert.deepEqual(mine.map((x) => x.choices[0].finish_reason).filter(Boolean), ["tool_calls"]);
      }
    });
  }
});

describe("backend APIs (Qwen3 under each)", () => {
  for (const name of ["qwen3", "qwen3-openai", "qwen3-sglang"]) {
    test(`${name}: tool calls streamed, answer, finish length, usage chunk`, async () => {
      const call = golden("qwen3", "call"), answer = golden("qwen3", "answer");
      const s = await streamed(request(call, name));
      checkMessage("qwen3", s.final.choices[0].message, call.expected, s.reasoning);
      const r = await client.chat.completions.create(request(answer, name));
      checkMessage("qwen3", r.choices[0].message, answer.expected, r.choices[0].message.reasoning_content);
      const cut = await client.chat.completions.create({ ...request(answer, name), max_tokens: 3 });
      assert.equal(cut.choices[0].finish_reason, "length");
      assert.equal(cut.usage.completion_tokens, 3);
      const u = await streamed({ ...request(answer, name), stream_options: { include_usage: true } });
      const last = u.chunks.at(-1);
      assert.deepEqual(last.choices, []);
      assert.equal(last.usage.prompt_tokens, answer.prompt.ids.length);
      // The scripted ids, with or without the end-of-turn id (llama.cpp does not stream it).
      const n = answer.completion.ids.length;
      assert.ok([n - 1, n].includes(last.usage.completion_tokens), JSON.stringify(last.usage));
    });
  }
});

// The Responses API: each golden's chat request written as a Responses request (input items,
// flat function tools) is served through the same path, so the scripted backend's check that
// the prompt is the golden's proves the mapping; the output items must be the golden message.
const responsesTools = (tools) => (tools || []).map((t) => ({ type: "function", ...t.function }));
function responsesInput(messages) {
  const items = [];
  for (const m of messages) {
    if (m.role === "tool") items.push({ type: "function_call_output", call_id: m.tool_call_id, output: m.content });
    else if (m.role === "assistant") {
      if (m.reasoning_content) items.push({ type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: m.reasoning_content }] });
      if (m.content) items.push({ role: "assistant", content: m.content });
      for (const t of m.tool_calls || []) items.push({ type: "function_call", call_id: t.id, name: t.function.name, arguments: t.function.arguments });
    } else items.push({ role: m.role, content: m.content });
  }
  return items;
}
const responsesRequest = (c, name) => {
  const { messages, tools, model, ...rest } = c.request;
  return { ...rest, model: name, input: responsesInput(messages), ...(tools ? { tools: responsesTools(tools) } : {}) };
};
// A response's output items as the chat message they stand for.
function responseMessage(r) {
  const msg = { role: "assistant", content: null, tool_calls: [] };
  let reasoning = null;
  for (const item of r.output) {
    if (item.type === "reasoning") reasoning = (reasoning ?? "") + item.content.map((p) => p.text).join("");
    else if (item.type === "message") msg.content = (msg.content ?? "") + item.content.map((p) => p.text).join("");
    else if (item.type === "function_call") {
      assert.match(item.id, /^fc_/);
      msg.tool_calls.push({ id: item.call_id, type: "function", function: { name: item.name, arguments: item.arguments } });
    } else assert.fail(`unexpected item ${item.type}`);
  }
  return { msg, reasoning };
}

describe("Responses API (POST /v1/responses, Qwen3 and gpt-oss)", () => {
  for (const model of ["qwen3", "gpt-oss"]) {
    for (const name of ["call", "answer", "turn2"]) {
      test(`${model} ${name}: responses.create whole and streamed give the golden message`, async () => {
        const c = golden(model, name);
        const whole = await client.responses.create(responsesRequest(c, model));
        assert.equal(whole.object, "response");
        assert.match(whole.id, /^resp_/);
        assert.equal(whole.status, "completed");
        assert.equal(whole.usage.input_tokens, c.prompt.ids.length);
        const a = responseMessage(whole);
        checkMessage(model, a.msg, c.expected, a.reasoning);
        if (c.expected.content) assert.equal(whole.output_text.trim(), c.expected.content.trim());
        // Streamed: the SDK's ResponseStream accumulates the events into the same response.
        const stream = client.responses.stream(responsesRequest(c, model));
        const types = [];
        for await (const event of stream) types.push(event.type);
        const final = await stream.finalResponse();
        const b = responseMessage(final);
        checkMessage(model, b.msg, c.expected, b.reasoning);
        assert.deepEqual(final.output.map((i) => i.type), whole.output.map((i) => i.type));
        assert.equal(types[0], "response.created");
        assert.equal(types.at(-1), "response.completed");
        assert.equal(final.usage.input_tokens, c.prompt.ids.length);
        for (const i of final.output) assert.equal(i.status, "completed");
        // The usage details the API's typed clients require, the same whole and streamed.
        assert.equal(whole.usage.input_tokens_details.cached_tokens, 0);  // not reported
        const counted = whole.usage.output_tokens_details.reasoning_tokens;
        assert.equal(counted > 0, Boolean(c.expected.reasoning_content), `${counted}`);
        assert.deepEqual(final.usage, whole.usage);
      });
    }
  }
  test("max_output_tokens cuts the reply: status incomplete, reason max_output_tokens", async () => {
    const c = golden("qwen3", "answer");
    const r = await client.responses.create({ ...responsesRequest(c, "qwen3"), max_output_tokens: 3 });
    assert.equal(r.status, "incomplete");
    assert.deepEqual(r.incomplete_details, { reason: "max_output_tokens" });
    assert.equal(r.usage.output_tokens, 3);
  });
  test("what needs a stored response or a built-in tool is a 400 naming the field", async () => {
    const c = golden("qwen3", "answer");
    const refusals = [
      [{ previous_response_id: "resp_123" }, "previous_response_id"],
      [{ tools: [{ type: "web_search" }] }, "tools[0].type"],
      [{ input: [{ type: "item_reference", id: "msg_1" }] }, "input[0].type"],
      [{ truncation: "auto" }, "truncation"],
      [{ input: [{ role: "user", content: [{ type: "input_file", file_id: "f" }] }] }, "input[0].content[0].type"],
      [{ no_such_field: 1 }, "no_such_field"],
    ];
    for (const [extra, param] of refusals) {
      await assert.rejects(client.responses.create({ ...responsesRequest(c, "qwen3"), ...extra }),
        (e) => e.status === 400 && e.param === param, param);
    }
  });
});

// API keys on both sides: a gateway started with api_keys in front of a backend started with its
// own key (--api-key, as vLLM); the client's key is checked by the gateway and never forwarded.
describe("API keys (Qwen3, a backend that asks for its own key)", () => {
  let keyedBackend, keyed, wrongBackendKey;
  before(async () => {
    keyedBackend = await startBackend(["--api-key", "sk-backend"]);
    const models = modelEntries(keyedBackend.url, ["qwen3"]);
    keyed = await startGateway({ api_keys: ["sk-client"],
      models: models.map((m) => ({ ...m, backend_api_key: "sk-backend" })) });
    wrongBackendKey = await startGateway({ models: models.map((m) => ({ ...m, backend_api_key: "sk-other" })) });
  });
  after(async () => {
    await keyed?.stop();
    await wrongBackendKey?.stop();
    await keyedBackend?.stop();
  });
  const sdk = (url, apiKey) => new OpenAI({ baseURL: `${url}/v1`, apiKey, maxRetries: 0, timeout: 30000 });
  test("the right key is served; a wrong key is the SDK's AuthenticationError (401, invalid_api_key)", async () => {
    const c = golden("qwen3", "call");
    const r = await sdk(keyed.url, "sk-client").chat.completions.create(request(c, "qwen3"));
    checkMessage("qwen3", r.choices[0].message, c.expected, r.choices[0].message.reasoning_content);
    assert.equal((await sdk(keyed.url, "sk-client").models.list()).data.length, 1);
    for (const key of ["sk-wrong", "sk-backend"]) {
      await assert.rejects(sdk(keyed.url, key).chat.completions.create(request(c, "qwen3")),
        (e) => e instanceof OpenAI.AuthenticationError && e.status === 401 && e.code === "invalid_api_key");
      await assert.rejects(sdk(keyed.url, key).models.list(), (e) => e instanceof OpenAI.AuthenticationError);
    }
    assert.equal((await fetch(`${keyed.url}/health`)).status, 200);
  });
  test("the backend refusing the gateway's key is a 502 naming the backend's status", async () => {
    const c = golden("qwen3", "call");
    await assert.rejects(sdk(wrongBackendKey.url, "unused").chat.completions.create(request(c, "qwen3")),
      (e) => e.status === 502 && /401/.test(e.message));
  });
});

describe("raw SSE framing (curl)", () => {
  test("data: events separated by blank lines, role first, [DONE] last", async () => {
    const c = golden("qwen3", "call");
    const r = await run("curl", ["-sS", "-N", "--max-time", "30", "-H", "content-type: application/json",
      "-d", JSON.stringify({ ...c.request, stream: true }), "-D", "-", `${gateway.url}/v1/chat/completions`]);
    assert.equal(r.status, 0, r.stderr);
    const head = r.stdout.slice(0, r.stdout.indexOf("\r\n\r\n") + 4);
    r.stdout = r.stdout.slice(head.length);
    assert.match(head, /^HTTP\/1\.1 200/);
    assert.match(head, /content-type: text\/event-stream/i);
    assert.ok(r.stdout.endsWith("data: [DONE]\n\n"), JSON.stringify(r.stdout.slice(-100)));
    assert.ok(!/\r/.test(r.stdout));
    const events = sseEvents(r.stdout);
    assert.equal(events.at(-1), "[DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    assert.equal(chunks[0].choices[0].delta.role, "assistant");
    assert.equal(chunks.filter((x) => x.choices[0]?.delta?.role).length, 1);
    assert.equal(chunks.at(-1).choices[0].finish_reason, "tool_calls");
    assert.deepEqual(chunks.at(-1).choices[0].delta, {});
  });

  test("GET /health and /v1/models", async () => {
    assert.equal((await fetch(`${gateway.url}/health`)).status, 200);
    const models = await client.models.list();
    const ids = models.data.map((m) => m.id).sort();
    assert.deepEqual(ids, modelEntries("x").map((m) => m.name).sort());
    // models.retrieve (GET /v1/models/{id}); a name the gateway does not serve is NotFoundError.
    const one = await client.models.retrieve("mistral-v0.3");
    assert.equal(one.id, "mistral-v0.3");
    assert.equal(one.object, "model");
    await assert.rejects(client.models.retrieve("no/such-model"),
      (e) => e instanceof OpenAI.NotFoundError && e.code === "model_not_found");
    // Nothing is stored: responses.retrieve is a NotFoundError saying so.
    await assert.rejects(client.responses.retrieve("resp_123"),
      (e) => e instanceof OpenAI.NotFoundError && /stores no responses/.test(e.message));
  });
});
