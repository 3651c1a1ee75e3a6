#!/usr/bin/env node
// The scripted backend chatwire serve is tested against: it speaks the three raw-completion APIs
// the gateway uses (src/serve/backend_api.cpp) over HTTP on 127.0.0.1 and streams scripted
// completions token by token, in each API's streamed format:
//   POST /<model>/completion      llama.cpp server (prompt ids, return_tokens; SSE, no [DONE])
//   POST /<model>/v1/completions  OpenAI completions as vLLM serves it (token_ids, usage, [DONE])
//   POST /<model>/generate        SGLang native (input_ids, cumulative text and output_ids, [DONE])
//   GET  /health, GET /inflight (how many requests a stall fault holds now)
// <model> is a directory name under --models; the scripts are data/goldens/serve/cases.jsonl
// (scripts/regen-serve-goldens): the prompt selects the case, and the prompt must be the
// reference prompt exactly, or the answer is 400 with a diagnostic. A prompt with slots (the
// render's date, tool-call ids the gateway made up) is decoded with the model's tokenizer, the
// slots are read off by matching the reference's literal parts, and the reference text with those
// values is encoded again: the ids must be equal (so the gateway's ids are checked exactly too).
// A case's `constraint` is the JSON schema the request must ask the backend to constrain the
// output to (llama.cpp `json_schema`, OpenAI completions `response_format`, SGLang
// `sampling_params.json_schema`); a request and a case match only when their constraints are
// equal (none on both sides included).
// Log probabilities, when a request asks (llama.cpp n_probs, completions logprobs with
// return_tokens_as_token_ids, SGLang return_logprob + top_logprobs_num), are scripted: the token
// at position i has logprob scriptedLogprob(i), and its alternatives are the ids after it with
// one less each (tests/serve/e2e/sdk.test.mjs checks the gateway passes exactly these on).
// A case's `fault` replaces the normal answer: http_500, malformed_json (after N tokens), drop
// (the connection is closed after N tokens), stall (no byte until the client gives up), delay
// (ms before the first token). Nothing is shared between requests but the read-only cases.
// With --api-key KEY every completion request must carry `Authorization: Bearer KEY`, else 401
// {"error": "Unauthorized"}, as vLLM started with --api-key answers.
//   node server.mjs [--cases FILE] [--models DIR] [--port 0] [--token-delay-ms 0] [--api-key KEY]
// Prints "backend listening on 127.0.0.1:PORT" on stdout.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { encode, decode } from "./tok.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..", "..", "..");
const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) =>
  (a.startsWith("--") ? acc.concat([[a.slice(2), all[i + 1]]]) : acc), []));
const casesFile = args.cases || path.join(root, "data", "goldens", "serve", "cases.jsonl");
const modelsDir = args.models || path.join(root, "data", "models", "endpoint");
const tokenDelayMs = Number(args["token-delay-ms"] || 0);
const STALL_CAP_MS = 30000;  // a stall ends by itself after this long

// --- the scripts ---------------------------------------------------------------------------
// Canonical JSON (sorted keys): constraints are compared by value.
const canon = (v) => JSON.stringify(v ?? null, (k, x) =>
  (x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort()) : x));
const byModel = new Map();  // model -> {exact: Map(ids key -> case), slotted: [case]}
for (const line of fs.readFileSync(casesFile, "utf8").split("\n")) {
  if (!line.trim()) continue;
  const c = JSON.parse(line);
  if (!byModel.has(c.model)) byModel.set(c.model, { exact: new Map(), slotted: [], all: [] });
  const m = byModel.get(c.model);
  m.all.push(c);
  if (c.prompt.segments) {
    // Literal parts as they are, a slot as a lazy run of characters; a slot named twice
    // (the same id in the call and in its result) must hold the same value.
    const seen = new Set();
    const re = c.prompt.segments.map((s) => {
      // Decoding is not always the exact inverse of encoding (a Metaspace tokenizer decodes
      // the space it prepends after a special token): literal parts match with extra spaces
      // allowed anywhere. Only the slots' values are taken from this match; the ids are then
      // compared exactly with the encoding of the reference text holding those values.
      if (typeof s === "string")
        return [...s].map((ch) => " *" + ch.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("") + " *";
      if (seen.has(s.slot)) return `\\k<${s.slot}>`;
      if (s.slot === "now") { seen.add("now"); return "(?<now>[0-9A-Za-z ,:./-]{1,40}?)"; }
      seen.add(s.slot);
      return `(?<${s.slot}>[A-Za-z0-9_-]{1,64}?)`;
    }).join("");
    c.regex = new RegExp(`^${re}$`, "s");
    m.slotted.push(c);
  } else {
    m.exact.set(c.prompt.ids.join(",") + "|" + canon(c.constraint), c);
  }
}

// The case a prompt selects, or a diagnostic.
async function selectCase(model, ids, constraint) {
  const m = byModel.get(model);
  if (!m) return { error: `no scripts for model '${model}' (known: ${[...byModel.keys()].join(", ")})` };
  const exact = m.exact.get(ids.join(",") + "|" + canon(constraint));
  if (exact) return { case: exact };
  const sameIds = m.all.filter((c) => c.prompt.ids.join(",") === ids.join(","));
  if (sameIds.length)
    return { error: `the prompt is case '${sameIds.map((c) => c.case).join("', '")}' but the output constraint ${canon(constraint)} is none of theirs: ${sameIds.map((c) => canon(c.constraint)).join(" / ")}` };
  const dir = path.join(modelsDir, model);
  let text = null;
  if (m.slotted.length) {
    text = await decode(dir, ids);
    for (const c of m.slotted) {
      if (canon(c.constraint) !== canon(constraint)) continue;
      const match = c.regex.exec(text);
      if (!match) continue;
      const filled = c.prompt.segments.map((s) => (typeof s === "string" ? s : match.groups[s.slot])).join("");
      const want = await encode(dir, filled);
      if (want.join(",") === ids.join(",")) return { case: c, slots: match.groups };
      return { error: diagnostic(c, ids, want, `the prompt matches case '${c.case}' with slots ${JSON.stringify(match.groups)}, but its ids are not the encoding of that text`) };
    }
  }
  // The nearest case: the longest common prefix of ids.
  let best = null, bestLen = -1;
  for (const c of m.all) {
    let k = 0;
    while (k < ids.length && k < c.prompt.ids.length && ids[k] === c.prompt.ids[k]) k++;
    if (k > bestLen) { best = c; bestLen = k; }
  }
  if (text === null) text = await decode(dir, ids).catch(() => "(undecodable)");
  return { error: diagnostic(best, ids, best.prompt.ids, "the prompt is no case's reference prompt") + `; received text: ${JSON.stringify(text)}` };
}

function diagnostic(c, got, want, why) {
  let k = 0;
  while (k < got.length && k < want.length && got[k] === want[k]) k++;
  return `${why}; nearest case '${c.model}/${c.case}': first difference at id ${k} of ${got.length} ` +
    `(reference has ${want.length}): received ${JSON.stringify(got.slice(k, k + 12))}, reference ` +
    `${JSON.stringify(want.slice(k, k + 12))}; reference text near it: ` +
    JSON.stringify(c.prompt.text.slice(Math.max(0, c.prompt.text.length * k / Math.max(1, want.length) - 80) | 0).slice(0, 200));
}

// --- the three APIs ------------------------------------------------------------------------
// Each: the prompt and options out of a request body (or an error), and the streamed events.
const scriptedLogprob = (i) => -((i % 9) + 1) / 8;
// The k most likely tokens at position i: the sampled id first.
const alternatives = (i, id, k) => Array.from({ length: k }, (_, j) => ({ id: id + j, logprob: scriptedLogprob(i) - j }));
const utf8 = (s) => [...Buffer.from(s, "utf8")];
const isIds = (a) => Array.isArray(a) && a.length > 0 && a.every((x) => Number.isInteger(x) && x >= 0);

const APIS = {
  "completion": {  // llama.cpp server
    read(b) {
      if (!isIds(b.prompt)) return { error: "`prompt` must be token ids" };
      if (b.return_tokens !== true) return { error: "`return_tokens` must be true (ids keep special-token markers)" };
      const n = b.n_predict;
      if (b.n_probs !== undefined && !(Number.isInteger(b.n_probs) && b.n_probs >= 0)) return { error: "`n_probs` must be a count" };
      return { ids: b.prompt, max: Number.isInteger(n) && n >= 0 ? n : Infinity, stream: b.stream === true,
               constraint: b.json_schema ?? null, logprobs: b.n_probs > 0 ? b.n_probs : null };
    },
    // llama.cpp does not emit the end-of-generation token: it stops on it.
    *events(run) {
      for (const [i, t] of run.tokens.entries()) {
        const ev = { content: t.piece, tokens: [t.id], stop: false, id_slot: 0, index: 0 };
        if (run.logprobs !== null) {
          const entry = (a) => ({ id: a.id, token: `<${a.id}>`, logprob: a.logprob, bytes: utf8(`<${a.id}>`) });
          ev.completion_probabilities = [{ ...entry({ id: t.id, logprob: scriptedLogprob(i) }),
                                           top_logprobs: alternatives(i, t.id, run.logprobs).map(entry) }];
        }
        yield ev;
      }
      yield { content: "", tokens: [], stop: true, stop_type: run.finish === "length" ? "limit" : "eos",
              stopping_word: "", tokens_predicted: run.predicted, tokens_evaluated: run.promptLen,
              truncated: false, id_slot: 0, index: 0 };
    },
    whole(run) {
      return { content: run.tokens.map((t) => t.piece).join(""), tokens: run.tokens.map((t) => t.id), stop: true,
               stop_type: run.finish === "length" ? "limit" : "eos", tokens_predicted: run.predicted,
               tokens_evaluated: run.promptLen, truncated: false };
    },
    done: false,
  },
  "v1/completions": {  // OpenAI completions, as vLLM answers with return_token_ids
    read(b) {
      if (!isIds(b.prompt)) return { error: "`prompt` must be token ids" };
      if (b.add_special_tokens !== false) return { error: "`add_special_tokens` must be false (the template wrote BOS)" };
      if (b.skip_special_tokens !== false) return { error: "`skip_special_tokens` must be false (markers reach the parser)" };
      if (b.return_token_ids !== true) return { error: "`return_token_ids` must be true" };
      if (b.logprobs !== undefined && b.logprobs !== null) {
        if (!Number.isInteger(b.logprobs) || b.logprobs < 0) return { error: "`logprobs` must be a count" };
        if (b.return_tokens_as_token_ids !== true) return { error: "`return_tokens_as_token_ids` must be true with logprobs" };
      }
      const rf = b.response_format;
      if (rf && rf.type !== "json_schema") return { error: "`response_format` here is json_schema or absent" };
      return { ids: b.prompt, max: Number.isInteger(b.max_tokens) ? b.max_tokens : Infinity, stream: b.stream === true,
               usage: b.stream_options?.include_usage === true, model: b.model,
               constraint: rf ? rf.json_schema?.schema ?? null : null, logprobs: b.logprobs ?? null };
    },
    // vLLM keeps the stop token's id and drops its text.
    *events(run) {
      const base = { id: "cmpl-scripted", object: "text_completion", created: 1767268800, model: run.model };
      const all = run.tokens.concat(run.stopToken ? [{ ...run.stopToken, piece: "" }] : []);
      // vLLM reports the stop token's probability too (its text is dropped).
      const lp = (i, id) => run.logprobs === null ? null : {
        tokens: [`token_id:${id}`], token_logprobs: [scriptedLogprob(i)], text_offset: [0],
        top_logprobs: [Object.fromEntries(alternatives(i, id, run.logprobs).map((a) => [`token_id:${a.id}`, a.logprob]))] };
      for (let i = 0; i < all.length; i++) {
        const last = i === all.length - 1;
        yield { ...base, choices: [{ index: 0, text: all[i].piece, logprobs: lp(i, all[i].id), token_ids: [all[i].id],
                                      finish_reason: last ? run.finish : null, stop_reason: null }], usage: null };
      }
      if (all.length === 0)
        yield { ...base, choices: [{ index: 0, text: "", logprobs: null, token_ids: [], finish_reason: run.finish, stop_reason: null }], usage: null };
      if (run.usage)
        yield { ...base, choices: [], usage: { prompt_tokens: run.promptLen, completion_tokens: all.length, total_tokens: run.promptLen + all.length } };
    },
    whole(run) {
      const all = run.tokens.concat(run.stopToken ? [run.stopToken] : []);
      return { id: "cmpl-scripted", object: "text_completion", created: 1767268800, model: run.model,
               choices: [{ index: 0, text: run.tokens.map((t) => t.piece).join(""), logprobs: null,
                           token_ids: all.map((t) => t.id), finish_reason: run.finish, stop_reason: null }],
               usage: { prompt_tokens: run.promptLen, completion_tokens: all.length, total_tokens: run.promptLen + all.length } };
    },
    done: true,
  },
  "generate": {  // SGLang native: cumulative text and output_ids
    read(b) {
      if (!isIds(b.input_ids)) return { error: "`input_ids` must be token ids" };
      const s = b.sampling_params || {};
      if (s.skip_special_tokens !== false) return { error: "`sampling_params.skip_special_tokens` must be false" };
      let constraint = null;
      if (s.json_schema !== undefined) {
        if (typeof s.json_schema !== "string") return { error: "`sampling_params.json_schema` must be a JSON string" };
        constraint = JSON.parse(s.json_schema);
      }
      if (b.return_logprob === true && !(Number.isInteger(b.top_logprobs_num) && b.top_logprobs_num >= 0))
        return { error: "`top_logprobs_num` must be a count" };
      return { ids: b.input_ids, max: Number.isInteger(s.max_new_tokens) ? s.max_new_tokens : Infinity, stream: b.stream === true,
               constraint, logprobs: b.return_logprob === true ? b.top_logprobs_num : null };
    },
    *events(run) {
      let text = "";
      const ids = [];
      // Cumulative, like the text: every entry so far in each event.
      const meta = (k, finish) => ({ id: "scripted", finish_reason: finish, prompt_tokens: run.promptLen, completion_tokens: k, cached_tokens: 0,
        ...(run.logprobs === null ? {} : {
          output_token_logprobs: ids.slice(0, k).map((id, i) => [scriptedLogprob(i), id, null]),
          output_top_logprobs: ids.slice(0, k).map((id, i) => alternatives(i, id, run.logprobs).map((a) => [a.logprob, a.id, null])) }) });
      for (const t of run.tokens) {
        text += t.piece; ids.push(t.id);
        yield { text, output_ids: [...ids], meta_info: meta(ids.length, null), index: 0 };
      }
      if (run.stopToken) ids.push(run.stopToken.id);
      const finish = run.finish === "length" ? { type: "length", length: run.predicted }
                                              : { type: "stop", matched: run.stopToken ? run.stopToken.id : null };
      yield { text, output_ids: [...ids], meta_info: meta(ids.length, finish), index: 0 };
    },
    whole(run) {
      const ids = run.tokens.map((t) => t.id).concat(run.stopToken ? [run.stopToken.id] : []);
      return { text: run.tokens.map((t) => t.piece).join(""), output_ids: ids,
               meta_info: { id: "scripted", prompt_tokens: run.promptLen, completion_tokens: ids.length,
                            finish_reason: run.finish === "length" ? { type: "length", length: run.predicted } : { type: "stop", matched: ids.at(-1) } } };
    },
    done: true,
  },
};

// The completion a case scripts, cut at `max` tokens (finish "length"), else ended by its stop id.
function scriptRun(c, req, promptLen) {
  const ids = c.completion.ids, pieces = c.completion.pieces;
  const body = ids.slice(0, -1).map((id, i) => ({ id, piece: pieces[i] }));
  const stop = { id: ids.at(-1), piece: pieces.at(-1) };
  if (req.max < body.length)
    return { tokens: body.slice(0, req.max), stopToken: null, finish: "length", predicted: req.max, promptLen, model: req.model, usage: req.usage, logprobs: req.logprobs ?? null };
  return { tokens: body, stopToken: stop, finish: "stop", predicted: body.length + 1, promptLen, model: req.model, usage: req.usage, logprobs: req.logprobs ?? null };
}

function sendJson(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

let stalled = 0;  // requests held by a stall fault now (GET /inflight)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const tick = () => new Promise((r) => setImmediate(r));

async function handle(req, res) {
  if (req.method === "GET" && req.url === "/health") return sendJson(res, 200, { status: "ok" });
  // How many requests are stalled now (tests wait for their stalls to arrive).
  if (req.method === "GET" && req.url === "/inflight") return sendJson(res, 200, { stalled });
  const m = /^\/([^/]+)\/(completion|v1\/completions|generate)$/.exec(req.url);
  if (req.method !== "POST" || !m) return sendJson(res, 404, { error: { message: `no route ${req.method} ${req.url}`, code: 404 } });
  if (args["api-key"] && req.headers.authorization !== `Bearer ${args["api-key"]}`)
    return sendJson(res, 401, { error: "Unauthorized" });
  const [, model, route] = m;
  const api = APIS[route];
  let raw = "";
  for await (const chunk of req) raw += chunk;
  let body;
  try { body = JSON.parse(raw); } catch { return sendJson(res, 400, { error: { message: "the request body is not JSON", code: 400 } }); }
  const r = api.read(body);
  if (r.error) return sendJson(res, 400, { error: { message: `${route}: ${r.error}`, code: 400 } });
  const sel = await selectCase(model, r.ids, r.constraint);
  if (sel.error) return sendJson(res, 400, { error: { message: `${route}: ${sel.error}`, code: 400 } });
  const c = sel.case;
  const fault = c.fault || {};
  if (fault.type === "http_500") return sendJson(res, 500, { error: { message: "scripted fault: internal error", code: 500 } });
  if (fault.type === "stall") {
    // No byte until the client (the gateway's idle timeout) closes the connection.
    stalled++;
    const timer = setTimeout(() => req.socket.destroy(), STALL_CAP_MS);
    res.on("close", () => { clearTimeout(timer); stalled--; });
    return;
  }
  if (fault.type === "delay") await sleep(fault.ms);
  const run = scriptRun(c, r, r.ids.length);
  if (!r.stream) {
    if (fault.type === "drop") return void req.socket.destroy();
    if (fault.type === "malformed_json") {
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end('{"content": "x", "tokens": [1, ');
    }
    return sendJson(res, 200, api.whole(run));
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  let n = 0;
  for (const ev of api.events(run)) {
    if (res.destroyed) return;
    if (fault.type === "drop" && n === fault.after) { req.socket.destroy(); return; }
    if (fault.type === "malformed_json" && n === fault.after) {
      res.end('data: {"content": "x", "tokens": [1, \n\n');
      return;
    }
    res.write(`data: ${JSON.stringify(ev)}\n\n`);
    n++;
    if (tokenDelayMs > 0) await sleep(tokenDelayMs); else await tick();
  }
  if (api.done) res.write("data: [DONE]\n\n");
  res.end();
}

const server = http.createServer((req, res) => {
  handle(req, res).catch((e) => {
    if (!res.headersSent) sendJson(res, 500, { error: { message: `backend bug: ${e.stack}`, code: 500 } });
    else res.destroy();
  });
});
server.keepAliveTimeout = 120000;
server.headersTimeout = 125000;
server.requestTimeout = 0;
server.maxRequestsPerSocket = 0;
server.listen(Number(args.port || 0), "127.0.0.1", () => {
  process.stdout.write(`backend listening on 127.0.0.1:${server.address().port}\n`);
});
const stop = () => { server.close(); server.closeAllConnections(); process.exit(0); };
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
// Started with a pipe on stdin (tests/serve/e2e/harness.mjs): exit when the parent goes away.
if (!process.stdin.isTTY) { process.stdin.on("end", stop); process.stdin.on("error", stop); process.stdin.resume(); }
