#!/usr/bin/env node
// Load benchmark of chatwire serve (not a test): N concurrent streaming clients against the
// gateway in front of the scripted backend (tests/serve/backend/server.mjs), and the same N
// against the backend directly in the same run, all on 127.0.0.1. The workload is the 80-turn
// conversation data/conversations/long_80_turns.json with tools, served by Qwen3 (the golden case
// qwen3/long_80_turns: a ~3000-token prompt, the scripted reply a tool call).
// Two scripted backends: one sends the completion's tokens at once (time to first token: the
// gateway's first output chunk needs several tokens when the reply opens with a tool call, so a
// paced backend would charge the model's token time to the gateway), one paces them
// (--token-delay-ms, time per token). Reported, direct vs gateway: time to first output (direct:
// the first token event; gateway: the first chunk after the role chunk), time per token after the
// first output, p50/p99 and the difference (what the gateway adds), completed streams per second,
// errors, and the gateway's peak RSS (VmHWM). Bounded: one request per client per wave, and every
// request gives up at --max-seconds.
//   CHATWIRE=build-test/chatwire node bench/serve_load.mjs [--clients 1000] [--token-delay-ms 10]
//                                                          [--max-seconds 180] [--api llama.cpp]
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import { golden, modelEntries, startBackend, startGateway } from "../tests/serve/e2e/harness.mjs";

const argv = process.argv.slice(2);
const opt = (name, dflt) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1] : dflt; };
const CLIENTS = Number(opt("clients", 1000));
const TOKEN_DELAY_MS = Number(opt("token-delay-ms", 10));
const MAX_SECONDS = Number(opt("max-seconds", 180));
const API = opt("api", "llama.cpp");
const ROUTES = { "llama.cpp": "completion", openai: "v1/completions", sglang: "generate" };

const c = golden("qwen3", "long_80_turns");
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
const deadline = Date.now() + MAX_SECONDS * 1000;

// One streamed request; resolves with the times (ms since its start) of the events that carried
// generated output, or an error.
function stream(url, body, isOutput) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const times = [];
    let buf = "", settled = false, status = 0;
    const done = (error) => { if (!settled) { settled = true; resolve({ error, times, status }); } };
    const req = http.request(url, { method: "POST", agent, headers: { "content-type": "application/json" } }, (res) => {
      status = res.statusCode;
      if (status !== 200) { res.resume(); return done(`HTTP ${status}`); }
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
          if (isOutput(j)) times.push(performance.now() - t0);
        }
      });
      res.on("end", () => done(times.length ? null : "no output"));
      res.on("error", (e) => done(String(e)));
    });
    req.on("error", (e) => done(String(e)));
    req.setTimeout(Math.max(1000, deadline - Date.now()), () => { req.destroy(); done("timeout"); });
    req.end(JSON.stringify(body));
  });
}

const directOutput = {
  "llama.cpp": (j) => Array.isArray(j.tokens) && j.tokens.length > 0,
  openai: (j) => j.choices?.[0]?.token_ids?.length > 0,
  sglang: (j) => j.meta_info && !j.meta_info.finish_reason,
}[API];
const directBody = {
  "llama.cpp": { prompt: c.prompt.ids, n_predict: -1, stream: true, return_tokens: true, cache_prompt: true },
  openai: { model: "qwen3", prompt: c.prompt.ids, stream: true, add_special_tokens: false, skip_special_tokens: false, return_token_ids: true },
  sglang: { input_ids: c.prompt.ids, sampling_params: { skip_special_tokens: false }, stream: true },
}[API];
const gatewayOutput = (j) => {
  const d = j.choices?.[0]?.delta;
  return !!d && (d.content || d.reasoning_content || d.tool_calls?.length);
};

async function wave(url, body, isOutput) {
  const t0 = performance.now();
  const results = await Promise.all(Array.from({ length: CLIENTS }, () => stream(url, body, isOutput)));
  return { results, seconds: (performance.now() - t0) / 1000 };
}

function pct(xs, p) {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}
function summary(w) {
  const ok = w.results.filter((r) => !r.error);
  const ttft = ok.map((r) => r.times[0]);
  const perToken = ok.filter((r) => r.times.length > 1).map((r) => (r.times.at(-1) - r.times[0]) / (r.times.length - 1));
  const errors = {};
  for (const r of w.results) if (r.error) errors[r.error] = (errors[r.error] || 0) + 1;
  return { ok: ok.length, errors, ttft_p50: pct(ttft, 50), ttft_p99: pct(ttft, 99), tok_p50: pct(perToken, 50),
           tok_p99: pct(perToken, 99), seconds: w.seconds, streams_per_s: ok.length / w.seconds };
}
const f = (x) => (Number.isFinite(x) ? x.toFixed(2) : "n/a");
const row = (label, a, b, diff = true) =>
  console.log(`${label.padEnd(28)}${f(a).padStart(10)}${f(b).padStart(10)}${diff ? f(b - a).padStart(10) : ""}`);

const burst = await startBackend(["--token-delay-ms", "0"]);
const paced = await startBackend(["--token-delay-ms", String(TOKEN_DELAY_MS)]);
let gateway;
try {
  const entries = (b, suffix) => modelEntries(b.url, ["qwen3", "qwen3-openai", "qwen3-sglang"])
    .map((m) => ({ ...m, name: m.name + suffix }));
  gateway = await startGateway({
    limits: { max_concurrent_requests: CLIENTS * 2 },
    timeouts: { connect_ms: 10000, idle_ms: 60000 },
    max_idle_backend_connections: CLIENTS,
    models: [...entries(burst, ""), ...entries(paced, "-paced")],
  });
  const model = { "llama.cpp": "qwen3", openai: "qwen3-openai", sglang: "qwen3-sglang" }[API];
  const gatewayUrl = `${gateway.url}/v1/chat/completions`;
  const load0 = fs.readFileSync("/proc/loadavg", "utf8").trim();
  const runs = {};
  for (const [name, b, suffix] of [["burst", burst, ""], ["paced", paced, "-paced"]]) {
    const directUrl = `${b.url}/qwen3/${ROUTES[API]}`;
    const gatewayBody = { ...c.request, model: model + suffix, stream: true };
    // Warm-up (connections, caches), not counted.
    await Promise.all(Array.from({ length: 20 }, () => stream(directUrl, directBody, directOutput)));
    await Promise.all(Array.from({ length: 20 }, () => stream(gatewayUrl, gatewayBody, gatewayOutput)));
    runs[name] = { direct: summary(await wave(directUrl, directBody, directOutput)),
                   gateway: summary(await wave(gatewayUrl, gatewayBody, gatewayOutput)) };
  }
  const rss = fs.readFileSync(`/proc/${gateway.child.pid}/status`, "utf8").match(/VmHWM:\s+(\d+) kB/);
  const load1 = fs.readFileSync("/proc/loadavg", "utf8").trim();
  console.log(`chatwire serve load: ${CLIENTS} concurrent streams per wave, ${API} backend API, ${c.prompt.ids.length}-token ` +
              `prompt (qwen3/long_80_turns), ${c.completion.ids.length} scripted tokens (burst, and paced at ${TOKEN_DELAY_MS} ms); ` +
              `${os.cpus().length} cores; load average before ${load0.split(" ").slice(0, 3).join(" ")}, after ${load1.split(" ").slice(0, 3).join(" ")}`);
  console.log(`${"".padEnd(28)}${"direct".padStart(10)}${"gateway".padStart(10)}${"added".padStart(10)}`);
  const { burst: B, paced: P } = runs;
  row("TTFT p50 (ms, burst)", B.direct.ttft_p50, B.gateway.ttft_p50);
  row("TTFT p99 (ms, burst)", B.direct.ttft_p99, B.gateway.ttft_p99);
  row("TTFT p50 (ms, paced)", P.direct.ttft_p50, P.gateway.ttft_p50);
  row("per token p50 (ms, paced)", P.direct.tok_p50, P.gateway.tok_p50);
  row("per token p99 (ms, paced)", P.direct.tok_p99, P.gateway.tok_p99);
  row("streams/s (burst)", B.direct.streams_per_s, B.gateway.streams_per_s, false);
  row("streams/s (paced)", P.direct.streams_per_s, P.gateway.streams_per_s, false);
  for (const [n, r] of Object.entries(runs))
    console.log(`completed / errors (${n})`.padEnd(28) + `${r.direct.ok}/${CLIENTS} ${JSON.stringify(r.direct.errors)}; ` +
                `gateway ${r.gateway.ok}/${CLIENTS} ${JSON.stringify(r.gateway.errors)}`);
  console.log(`gateway peak RSS            ${rss ? (Number(rss[1]) / 1024).toFixed(1) + " MB" : "n/a"}`);
  const all = Object.values(runs).flatMap((r) => [r.direct, r.gateway]);
  process.exitCode = all.every((x) => x.ok === CLIENTS) ? 0 : 1;
} finally {
  agent.destroy();
  await gateway?.stop();
  await burst.stop();
  await paced.stop();
}
