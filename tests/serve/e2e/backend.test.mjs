// The scripted backend on its own: it accepts a case's reference prompt under each API and
// streams the scripted ids in that API's format, and it refuses (400) a prompt that is not a
// reference prompt, so that a 200 through the gateway proves the gateway's prompt exact.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { encode } from "../backend/tok.mjs";
import { golden, modelsDir, post, sseEvents, startBackend } from "./harness.mjs";

let backend;
before(async () => { backend = await startBackend(); });
after(async () => { await backend?.stop(); });

const bodies = {
  completion: (ids, extra = {}) => ({ prompt: ids, n_predict: -1, stream: true, return_tokens: true, ...extra }),
  "v1/completions": (ids, extra = {}) => ({ model: "m", prompt: ids, stream: true, add_special_tokens: false,
    skip_special_tokens: false, return_token_ids: true, stream_options: { include_usage: true }, ...extra }),
  generate: (ids, extra = {}) => ({ input_ids: ids, stream: true, sampling_params: { skip_special_tokens: false, ...extra } }),
};
// The ids each API's stream carries (SGLang's are cumulative), and its finish.
const streamed = {
  completion: (evs) => ({ ids: evs.flatMap((e) => e.tokens), finish: evs.at(-1).stop_type === "eos" ? "stop" : "length" }),
  "v1/completions": (evs) => ({ ids: evs.flatMap((e) => e.choices[0]?.token_ids ?? []),
                                finish: evs.map((e) => e.choices[0]?.finish_reason).filter(Boolean)[0] }),
  generate: (evs) => ({ ids: evs.at(-1).output_ids, finish: evs.at(-1).meta_info.finish_reason.type }),
};

describe("scripted backend", () => {
  const c = golden("qwen3", "answer");
  for (const route of Object.keys(bodies)) {
    test(`${route}: the reference prompt streams the scripted ids`, async () => {
      const r = await post(`${backend.url}/qwen3/${route}`, bodies[route](c.prompt.ids));
      assert.equal(r.status, 200, r.text);
      const evs = sseEvents(r.text).filter((e) => e !== "[DONE]").map((e) => JSON.parse(e));
      const s = streamed[route](evs);
      // llama.cpp stops on the end-of-turn id without sending it; the others send it.
      const want = route === "completion" ? c.completion.ids.slice(0, -1) : c.completion.ids;
      assert.deepEqual(s.ids, want);
      assert.equal(s.finish, "stop");
      assert.equal(sseEvents(r.text).at(-1) === "[DONE]", route !== "completion");
    });

    test(`${route}: max tokens cut the script with finish length`, async () => {
      const extra = { completion: { n_predict: 3 }, "v1/completions": { max_tokens: 3 }, generate: { max_new_tokens: 3 } }[route];
      const r = await post(`${backend.url}/qwen3/${route}`, bodies[route](c.prompt.ids, extra));
      const evs = sseEvents(r.text).filter((e) => e !== "[DONE]").map((e) => JSON.parse(e));
      const s = streamed[route](evs);
      assert.deepEqual(s.ids, c.completion.ids.slice(0, 3));
      assert.equal(s.finish, "length");
    });

    test(`${route}: one changed id is refused with a diagnostic`, async () => {
      const ids = [...c.prompt.ids];
      ids[7] = ids[7] + 1;
      const r = await post(`${backend.url}/qwen3/${route}`, bodies[route](ids));
      assert.equal(r.status, 400);
      assert.match(JSON.parse(r.text).error.message, /first difference at id 7/);
    });
  }

  test("the options that keep markers are required", async () => {
    const r = await post(`${backend.url}/qwen3/v1/completions`, bodies["v1/completions"](c.prompt.ids, { skip_special_tokens: true }));
    assert.equal(r.status, 400);
    assert.match(r.text, /skip_special_tokens/);
  });

  test("slots: made-up tool-call ids are accepted when consistent and encoded exactly", async () => {
    const t = golden("mistral-v0.3", "turn2");
    const dir = path.join(modelsDir, "mistral-v0.3");
    const withIds = (a, b) => t.prompt.text.replaceAll("Qz7Sl0tA1", a).replaceAll("Qz7Sl0tB2", b);
    const ok = await post(`${backend.url}/mistral-v0.3/completion`, bodies.completion(await encode(dir, withIds("k8Jd0Pq2x", "Ab3De5Gh7"))));
    assert.equal(ok.status, 200, ok.text);
    // The call's id and its result's id differ: no case.
    const bad = await post(`${backend.url}/mistral-v0.3/completion`,
      bodies.completion(await encode(dir, t.prompt.text.replace("Qz7Sl0tA1", "k8Jd0Pq2x"))));
    assert.equal(bad.status, 400);
  });

  test("slots: the right text in other ids than its encoding is refused", async () => {
    // gpt-oss (byte-level BPE): " hello" as " hel" + "lo" decodes to the same text.
    const g = golden("gpt-oss", "answer");
    const dir = path.join(modelsDir, "gpt-oss");
    const text = g.prompt.segments.map((s) => (typeof s === "string" ? s : "7-06-30")).join("");
    const ids = await encode(dir, text);
    const [hello] = await encode(dir, " hello");
    const k = ids.indexOf(hello);
    assert.ok(k > 0);
    const split = [...(await encode(dir, " hel")), ...(await encode(dir, "lo"))];
    assert.equal(split.length, 2);
    const ok = await post(`${backend.url}/gpt-oss/completion`, bodies.completion(ids));
    assert.equal(ok.status, 200, ok.text);
    const wrong = [...ids.slice(0, k), ...split, ...ids.slice(k + 1)];
    const r = await post(`${backend.url}/gpt-oss/completion`, bodies.completion(wrong));
    assert.equal(r.status, 400);
    assert.match(r.text, /not the encoding of that text/);
  });

  test("slots: the date of a template that renders today's", async () => {
    const g = golden("gpt-oss", "answer");
    const dir = path.join(modelsDir, "gpt-oss");
    const text = g.prompt.segments.map((s) => (typeof s === "string" ? s : "7-06-30")).join("");
    assert.notEqual(text, g.prompt.text);
    const r = await post(`${backend.url}/gpt-oss/completion`, bodies.completion(await encode(dir, text)));
    assert.equal(r.status, 200, r.text);
  });
});
