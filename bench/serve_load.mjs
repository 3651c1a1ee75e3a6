#!/usr/bin/env node
// Load benchmark of chatwire serve (not a test). N streaming clients, each sending one request
// after another, keep about N streams open through the gateway in front of the scripted backend
// (tests/serve/backend/server.mjs, tokens paced at --token-delay-ms), and then, in the same run,
// straight to the backend: all on 127.0.0.1. The workload is the 80-turn conversation
// data/conversations/long_80_turns.json with tools, served by Qwen3 (the golden case
// qwen3/long_80_turns: a ~3000-token prompt, the scripted reply a tool call).
// Clients start spread over one stream's length, so arrivals are steady (about N / stream length
// per second); only requests started after that warm-up and before --seconds are measured.
//   time to first token: through the gateway, the first chunk after the role chunk carrying
//     output; directly, the arrival of the token that output waits for (the gateway cannot name
//     a tool call before its name is complete): found by one request through a slowly paced
//     backend before the run;
//   time per token: from that token to the end of the response, over the tokens after it;
// each as p50/p99, direct and gateway, and their difference (what the gateway adds); completed
// streams and tokens per second, errors, and the gateway's peak RSS (VmHWM). Bounded: each phase
// stops starting requests at --seconds and every request gives up at --max-seconds.
//   CHATWIRE=build-test/chatwire node bench/serve_load.mjs [--clients 1000] [--token-delay-ms 50]
//                                   [--seconds 20] [--max-seconds 120] [--api llama.cpp|openai|sglang]
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import { golden, modelEntries, startBackend, startGateway } from "../tests/serve/e2e/harness.mjs";

const argv = process.argv.slice(2);
const opt = (name, dflt) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1] : dflt; };
const CLIENTS = Number(opt("clients", 1000));
const TOKEN_DELAY_MS = Number(opt("token-delay-ms", 50));
const SECONDS = Number(opt("seconds", 20));
const MAX_SECONDS = Number(opt("max-seconds", 120));
const API = opt("api", "llama.cpp");
const ROUTES = { "llama.cpp": "completion", openai: "v1/completions", sglang: "generate" };
const MODEL = { "llama.cpp": "qwen3", openai: "qwen3-openai", sglang: "qwen3-sglang" }[API];

const c = golden("qwen3", "long_80_turns");
const TOKENS = c.completion.ids.length;
const STREAM_MS = TOKENS * TOKEN_DELAY_MS;
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

// One streamed request: the times (ms since its start) of the events that carried output, and
// the first output event.
function stream(url, body, isOutput, stopAtFirst = false) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const times = [];
    let buf = "", settled = false, first = null;
    const done = (error) => { if (!settled) { settled = true; resolve({ error, times, first, end: performance.now() - t0 }); } };
    const req = http.request(url, { method: "POST", agent, headers: { "content-type": "application/json" } }, (res) => {
      if (res.statusCode !== 200) { res.resume(); return done(`HTTP ${res.statusCode}`); }
      res.setEncoding("utf8");
      res.on("data", (d) => {
        buf += d;
        let k;
        while ((k = buf.indexOf("\n\n")) >= 0) {
          const ev = buf.slice(0, k);
          buf = buf.slice(k + 2);
          if (!ev.startsWith("data: ")) return done(`bad event ${ev.slice(0, 80)}`);
          const data = ev.slice(6);
          if (data === "[DONE]") continue;
          let j;
          try { j = JSON.parse(data); } catch { return done(`bad JSON ${data.slice(0, 80)}`); }
          if (j.error) return done(`error event ${JSON.stringify(j.error).slice(0, 120)}`);
          if (isOutput(j)) {
            times.push(performance.now() - t0);
            if (!first) first = j;
            if (stopAtFirst) { req.destroy(); return done(null); }
          }
        }
      });
      res.on("end", () => done(times.length ? null : "no output"));
      res.on("error", (e) => done(String(e)));
    });
    req.on("error", (e) => done(String(e)));
    req.setTimeout(MAX_SECONDS * 1000, () => { req.destroy(); done("timeout"); });
    req.end(JSON.stringify(body));
  });
}

const directOutput = {  // one event per token
  "llama.cpp": (j) => Array.isArray(j.tokens) && j.tokens.length > 0,
  openai: (j) => j.choices?.[0]?.token_ids?.length > 0 && j.choices[0].text !== "",
  sglang: (j) => j.meta_info && !j.meta_info.finish_reason,
}[API];
const directBody = {
  "llama.cpp": { prompt: c.prompt.ids, n_predict: -1, stream: true, return_tokens: true, cache_prompt: true },
  openai: { model: "qwen3", prompt: c.prompt.ids, stream: true, add_special_tokens: false, skip_special_tokens: false, return_token_ids: true },
  sglang: { input_ids: c.prompt.ids, sampling_params: { skip_special_tokens: false }, stream: true },
}[API];
const gatewayOutput = (j) => {
  const d = j.choices?.[0]?.delta;
  return !!d && !!(d.content || d.reasoning_content || d.tool_calls?.length);
};

// N client loops for SECONDS; samples of requests started in [warm-up, SECONDS).
async function phase(url, body, isOutput) {
  const t0 = performance.now();
  const warm = STREAM_MS + 1000;
  const samples = [], errors = {};
  let started = 0;
  const client = async (i) => {
    await new Promise((r) => setTimeout(r, (i / CLIENTS) * STREAM_MS));
    while (performance.now() - t0 < SECONDS * 1000) {
      const at = performance.now() - t0;
      started++;
      const r = await stream(url, body, isOutput);
      if (r.error) errors[r.error] = (errors[r.error] || 0) + 1;
      else if (at >= warm) samples.push(r);
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));
  return { samples, errors, started, window: (SECONDS * 1000 - warm) / 1000 };
}

function pct(xs, p) {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}
const f = (x) => (Number.isFinite(x) ? x.toFixed(2) : "n/a");
const row = (label, a, b, diff = true) =>
  console.log(`${label.padEnd(26)}${f(a).padStart(10)}${f(b).padStart(10)}${diff ? f(b - a).padStart(10) : ""}`);

const CALIB_MS = 200;
const backend = await startBackend(["--token-delay-ms", String(TOKEN_DELAY_MS)]);
const calibrate = await startBackend(["--token-delay-ms", String(CALIB_MS)]);
let gateway;
try {
  gateway = await startGateway({
    limits: { max_concurrent_requests: CLIENTS * 2 },
    timeouts: { connect_ms: 10000, idle_ms: 60000 },
    max_idle_backend_connections: CLIENTS * 2,
    models: [...modelEntries(backend.url, ["qwen3", "qwen3-openai", "qwen3-sglang"]),
             ...modelEntries(calibrate.url, [MODEL]).map((e) => ({ ...e, name: "qwen3-calibrate" }))],
  });
  const directUrl = `${backend.url}/qwen3/${ROUTES[API]}`;
  const gatewayUrl = `${gateway.url}/v1/chat/completions`;
  const gatewayBody = { ...c.request, model: MODEL, stream: true };
  // Which token the gateway's first output waits for (a tool call is named once its name is
  // complete, and a parser holds back what may open a marker): one request through a backend
  // that paces tokens at CALIB_MS, its first output's time / CALIB_MS.
  const probe = await stream(gatewayUrl, { ...gatewayBody, model: "qwen3-calibrate" }, gatewayOutput, true);
  if (probe.error) throw new Error(`gateway: ${probe.error}`);
  const k = Math.min(TOKENS - 2, Math.round(probe.times[0] / CALIB_MS));
  const load0 = fs.readFileSync("/proc/loadavg", "utf8").trim().split(" ").slice(0, 3).join(" ");
  // The gateway's CPU time (user + system, /proc/PID/stat) over its phase: how many cores it used.
  const ticks = () => { const f = fs.readFileSync(`/proc/${gateway.child.pid}/stat`, "utf8").split(") ")[1].split(" ");
                        return Number(f[11]) + Number(f[12]); };
  const direct = await phase(directUrl, directBody, directOutput);
  const cpu0 = ticks(), w0 = performance.now();
  const via = await phase(gatewayUrl, gatewayBody, gatewayOutput);
  const cores = ((ticks() - cpu0) / 100) / ((performance.now() - w0) / 1000);  // USER_HZ = 100
  const load1 = fs.readFileSync("/proc/loadavg", "utf8").trim().split(" ").slice(0, 3).join(" ");
  const rss = fs.readFileSync(`/proc/${gateway.child.pid}/status`, "utf8").match(/VmHWM:\s+(\d+) kB/);
  // Time per token: from the first output to the end of the response (both see the backend's
  // last event at the same point), over the scripted tokens after the first output.
  const tail = TOKENS - k;
  const m = {
    direct: { ttft: direct.samples.map((r) => r.times[k]), tok: direct.samples.map((r) => (r.end - r.times[k]) / tail) },
    gateway: { ttft: via.samples.map((r) => r.times[0]), tok: via.samples.map((r) => (r.end - r.times[0]) / tail) },
  };
  console.log(`chatwire serve under load: ${CLIENTS} streaming clients (about ${CLIENTS} open streams), ${API} backend API, ` +
              `${c.prompt.ids.length}-token prompt (qwen3/long_80_turns: 80 turns, tools), ${TOKENS} scripted tokens at ` +
              `${TOKEN_DELAY_MS} ms (first output: token ${k}); ${SECONDS} s per phase; ${os.cpus().length} cores; ` +
              `load average ${load0} before, ${load1} after`);
  console.log(`${"".padEnd(26)}${"direct".padStart(10)}${"gateway".padStart(10)}${"added".padStart(10)}`);
  row("TTFT p50 (ms)", pct(m.direct.ttft, 50), pct(m.gateway.ttft, 50));
  row("TTFT p99 (ms)", pct(m.direct.ttft, 99), pct(m.gateway.ttft, 99));
  row("time per token p50 (ms)", pct(m.direct.tok, 50), pct(m.gateway.tok, 50));
  row("time per token p99 (ms)", pct(m.direct.tok, 99), pct(m.gateway.tok, 99));
  row("streams/s (measured)", direct.samples.length / direct.window, via.samples.length / via.window, false);
  row("tokens/s (measured)", direct.samples.length * TOKENS / direct.window, via.samples.length * TOKENS / via.window, false);
  console.log(`${"requests / errors".padEnd(26)}direct ${direct.started} ${JSON.stringify(direct.errors)}; gateway ${via.started} ${JSON.stringify(via.errors)}`);
  console.log(`${"gateway CPU".padEnd(26)}${cores.toFixed(2)} cores on average over its phase`);
  console.log(`${"gateway peak RSS".padEnd(26)}${rss ? (Number(rss[1]) / 1024).toFixed(1) + " MB" : "n/a"}`);
  const errors = Object.keys(direct.errors).length + Object.keys(via.errors).length;
  process.exitCode = errors === 0 && direct.samples.length && via.samples.length ? 0 : 1;
} finally {
  agent.destroy();
  await gateway?.stop();
  await backend.stop();
  await calibrate.stop();
}
