// chatwire serve's error answers with the scripted backend's faults (selected by the prompt:
// data/goldens/serve/cases.jsonl, "fault"), the request limits, and that the gateway keeps
// serving after each. CHATWIRE=build-test/chatwire node --test tests/serve/e2e/
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { golden, modelEntries, post, sseEvents, startBackend, startGateway } from "./harness.mjs";

const IDLE_MS = 1500;  // the gateway's backend idle timeout here: a stall ends in 504 after it
let backend, gateway;
before(async () => {
  backend = await startBackend();
  gateway = await startGateway({
    limits: { max_body_bytes: 1 << 20 },
    timeouts: { connect_ms: 2000, idle_ms: IDLE_MS },
    models: modelEntries(backend.url, ["qwen3", "qwen3-openai", "qwen3-sglang"]),
  });
});
after(async () => {
  await gateway?.stop();
  await backend?.stop();
});

const chat = (body) => post(`${gateway.url}/v1/chat/completions`, body);

// OpenAI's error body.
function checkError(r, status, type = null) {
  assert.equal(r.status, status, r.text);
  const e = JSON.parse(r.text).error;
  assert.equal(typeof e.message, "string");
  assert.ok(e.message.length > 0);
  for (const k of ["type", "param", "code"]) assert.ok(k in e, `error.${k} missing: ${r.text}`);
  if (type) assert.equal(e.type, type);
  return e;
}

// A streamed failure: 200, some chunks, then `data: {"error": ...}` and `data: [DONE]`.
function checkStreamError(r) {
  assert.equal(r.status, 200, r.text);
  const events = sseEvents(r.text);
  assert.equal(events.at(-1), "[DONE]");
  const err = JSON.parse(events.at(-2));
  assert.equal(typeof err.error?.message, "string", events.at(-2));
  for (const e of events.slice(0, -2)) assert.ok(!("error" in JSON.parse(e)));
}

// After every fault: a normal request is served, streamed and not.
async function stillServes(model = "qwen3") {
  const c = golden("qwen3", "answer");
  const r = await chat({ ...c.request, model });
  assert.equal(r.status, 200, r.text);
  const m = JSON.parse(r.text).choices[0].message;
  assert.equal(m.content.trim(), c.expected.content);  // framing whitespace aside (sdk.test.mjs)
  const s = await chat({ ...c.request, model, stream: true });
  assert.equal(s.status, 200, s.text);
  assert.equal(sseEvents(s.text).at(-1), "[DONE]");
}

for (const model of ["qwen3", "qwen3-openai", "qwen3-sglang"]) {
  describe(`backend faults (${model})`, () => {
    const req = (name, extra = {}) => ({ ...golden("qwen3", name).request, model, ...extra });

    test("HTTP 500 from the backend: 502, streamed or not", async () => {
      checkError(await chat(req("fault_http_500")), 502);
      const s = await chat(req("fault_http_500", { stream: true }));
      if (s.status === 200) checkStreamError(s); else checkError(s, 502);
      await stillServes(model);
    });

    test("malformed JSON from the backend: 502 / error chunk then [DONE]", async () => {
      checkError(await chat(req("fault_malformed_json")), 502);
      checkStreamError(await chat(req("fault_malformed_json", { stream: true })));
      await stillServes(model);
    });

    test("connection dropped mid-stream: 502 / error chunk then [DONE]", async () => {
      checkError(await chat(req("fault_drop")), 502);
      checkStreamError(await chat(req("fault_drop", { stream: true })));
      await stillServes(model);
    });

    test("a delay before the first token is only a delay", async () => {
      const c = golden("qwen3", "fault_delay");
      const r = await chat(req("fault_delay"));
      assert.equal(r.status, 200, r.text);
      assert.equal(JSON.parse(r.text).choices[0].message.content.trim(), c.expected.content);
    });
  });
}

describe("timeouts and limits", () => {
  test("a stalled backend: 504 after the idle timeout", async () => {
    checkError(await chat(golden("qwen3", "fault_stall").request), 504);
    const s = await chat({ ...golden("qwen3", "fault_stall").request, stream: true });
    if (s.status === 200) checkStreamError(s); else checkError(s, 504);
    await stillServes();
  });

  test("a body over limits.max_body_bytes: 413", async () => {
    const c = golden("qwen3", "answer");
    const big = { ...c.request, messages: [{ role: "user", content: "x".repeat(2 << 20) }] };
    checkError(await chat(big), 413);
    await stillServes();
  });

  test("a bad field: 400 naming it in `param`", async () => {
    const c = golden("qwen3", "answer");
    const e = checkError(await chat({ ...c.request, temperature: 7 }), 400);
    assert.equal(e.param, "temperature");
    const bad = [...golden("qwen3", "turn2").request.messages];
    bad[2] = { ...bad[2], tool_calls: [{ ...bad[2].tool_calls[0], function: { name: "get_weather", arguments: "{not json" } }] };
    const e2 = checkError(await chat({ ...c.request, messages: bad }), 400);
    assert.equal(e2.param, "messages[2].tool_calls[0].function.arguments");
    checkError(await chat("{\"model\": \"qwen3\", \"messages\": ["), 400);
    await stillServes();
  });

  test("an unknown model: 404", async () => {
    const c = golden("qwen3", "answer");
    const e = checkError(await chat({ ...c.request, model: "no-such-model" }), 404);
    assert.equal(e.param, "model");
    await stillServes();
  });
});

describe("concurrency limit and cancellation", () => {
  let gw;
  before(async () => {
    // No idle timeout within the test: a stalled request ends only when the client cancels it.
    gw = await startGateway({
      limits: { max_concurrent_requests: 2 },
      timeouts: { connect_ms: 2000, idle_ms: 600000 },
      models: modelEntries(backend.url, ["qwen3"]),
    });
  });
  after(async () => { await gw?.stop(); });

  const stalled = async () => (await (await fetch(`${backend.url}/inflight`)).json()).stalled;
  // Polls (bounded: 200 x 50 ms) until the backend holds `n` stalled requests.
  async function until(n) {
    for (let i = 0; i < 200 && (await stalled()) !== n; i++) await new Promise((r) => setTimeout(r, 50));
    return stalled();
  }

  test("over limits.max_concurrent_requests: 429; clients that leave cancel their backend requests", async () => {
    const stall = golden("qwen3", "fault_stall").request;
    const answer = golden("qwen3", "answer").request;
    const aborts = [0, 1].map(() => new AbortController());
    const held = aborts.map((a, i) => fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...stall, stream: i === 1 }), signal: a.signal,
    }).then((r) => r.text()).catch((e) => e.name));
    assert.equal(await until(2), 2, "both stalled requests reached the backend");
    checkError(await post(`${gw.url}/v1/chat/completions`, answer), 429);
    for (const a of aborts) a.abort();
    assert.deepEqual(await Promise.all(held), ["AbortError", "AbortError"]);
    // The gateway closes both backend requests (the backend would hold them for 30 s).
    assert.equal(await until(0), 0, "the backend requests were cancelled");
    const ok = await post(`${gw.url}/v1/chat/completions`, answer);
    assert.equal(ok.status, 200, ok.text);
  });
});
