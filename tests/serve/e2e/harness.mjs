// Starts the scripted backend (tests/serve/backend/server.mjs) and `chatwire serve` (the CLI named
// by $CHATWIRE) on 127.0.0.1 with free ports, and stops both. Used by the *.test.mjs files here
// and by bench/serve_load.mjs.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, "..", "..", "..");
export const casesFile = path.join(root, "data", "goldens", "serve", "cases.jsonl");
export const modelsDir = path.join(root, "data", "models", "endpoint");

export const cases = fs.readFileSync(casesFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
export function golden(model, name) {
  const c = cases.find((x) => x.model === model && x.case === name);
  if (!c) throw new Error(`no golden ${model}/${name}`);
  return c;
}

export function chatwireCli() {
  const cli = process.env.CHATWIRE;
  if (!cli) throw new Error("set CHATWIRE to the built chatwire CLI (e.g. build-test/chatwire)");
  if (!fs.existsSync(cli)) throw new Error(`CHATWIRE=${cli} does not exist`);
  return path.resolve(cli);
}

// Spawns a process and resolves when a line of `stream` matches `re` (its match), or rejects
// after `ms` or when the process exits first.
// Children still running when this process exits are killed (a test file that fails or is
// interrupted leaves no server behind); the scripted backend also exits when its stdin closes.
const children = new Set();
process.on("exit", () => { for (const c of children) c.kill("SIGKILL"); });
for (const sig of ["SIGINT", "SIGTERM"]) process.once(sig, () => process.exit(130));

function spawnUntil(cmd, argv, stream, re, ms, opts = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ["pipe", "pipe", "pipe"], ...opts });
    children.add(child);
    child.on("exit", () => children.delete(child));
    let out = "", done = false;
    const log = [];
    const finish = (err, m) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) { child.kill("SIGKILL"); reject(err); } else resolve({ child, match: m, log });
    };
    const timer = setTimeout(() => finish(new Error(`${path.basename(cmd)} did not start within ${ms} ms:\n${log.join("")}`)), ms);
    for (const s of ["stdout", "stderr"]) {
      child[s].setEncoding("utf8");
      child[s].on("data", (d) => {
        log.push(d);
        if (log.length > 200) log.splice(0, 100);
        if (s !== stream || done) return;
        out += d;
        const m = re.exec(out);
        if (m) finish(null, m);
      });
    }
    child.on("exit", (code, sig) => finish(new Error(`${path.basename(cmd)} exited (${code ?? sig}) before it listened:\n${log.join("")}`)));
    child.on("error", (e) => finish(e));
  });
}

function stopper(child) {
  return () => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const t = setTimeout(() => child.kill("SIGKILL"), 5000);
    child.once("exit", () => { clearTimeout(t); resolve(); });
    child.kill("SIGTERM");
  });
}

export async function startBackend(extra = []) {
  const { child, match, log } = await spawnUntil(process.execPath,
    [path.join(root, "tests", "serve", "backend", "server.mjs"), "--port", "0", ...extra],
    "stdout", /backend listening on 127\.0\.0\.1:(\d+)/, 15000);
  return { port: Number(match[1]), url: `http://127.0.0.1:${match[1]}`, child, log, stop: stopper(child) };
}

// The models the tests serve: each directory once, the backend APIs rotated among them, and Qwen3
// again under the two other APIs, so that every API is covered.
export function modelEntries(backendUrl, only = null) {
  const rows = [
    ["qwen3", "qwen3", "llama.cpp"],
    ["qwen3-openai", "qwen3", "openai"],
    ["qwen3-sglang", "qwen3", "sglang"],
    // A backend without structured output: tool_choice required / named are refused.
    ["qwen3-unconstrained", "qwen3", "llama.cpp", { backend_structured_output: false }],
    ["llama3_1", "llama3_1", "openai"],
    ["mistral-v0.3", "mistral-v0.3", "sglang"],
    ["gpt-oss", "gpt-oss", "llama.cpp"],
    // The template shows no reasoning, so no parser derived from it reads R1's <think>: the
    // dialect is named, as the server's operator names it for this checkpoint.
    ["deepseek-r1", "deepseek-r1", "openai", { dialect: "deepseek_r1" }],
    ["gemma3", "gemma3", "sglang"],
  ];
  return rows.filter(([name]) => !only || only.includes(name)).map(([name, dir, api, extra]) => ({
    name, model_dir: path.join(modelsDir, dir), backend_url: `${backendUrl}/${dir}`, backend_api: api, ...(extra || {}),
  }));
}

export async function startGateway(config) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chatwire-serve-test-"));
  const file = path.join(dir, "config.json");
  fs.writeFileSync(file, JSON.stringify({ host: "127.0.0.1", port: 0, ...config }, null, 2));
  const { child, match, log } = await spawnUntil(chatwireCli(), ["serve", "--config", file], "stderr",
    /listening on 127\.0\.0\.1:(\d+)/, 120000);
  const stop = stopper(child);
  return {
    port: Number(match[1]), url: `http://127.0.0.1:${match[1]}`, child, log,
    stop: async () => { await stop(); fs.rmSync(dir, { recursive: true, force: true }); },
  };
}

// A raw request; the body is returned as text.
export async function post(url, body, headers = {}) {
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers },
                               body: typeof body === "string" ? body : JSON.stringify(body),
                               signal: AbortSignal.timeout(30000) });
  return { status: r.status, headers: r.headers, text: await r.text() };
}

// The SSE events of a streamed body: the `data:` payloads, in order.
export function sseEvents(text) {
  return text.split("\n\n").filter((e) => e.length).map((e) => {
    if (!e.startsWith("data: ")) throw new Error(`not an SSE data event: ${JSON.stringify(e.slice(0, 200))}`);
    return e.slice(6);
  });
}
