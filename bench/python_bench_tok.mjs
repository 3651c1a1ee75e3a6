#!/usr/bin/env node
// The tokenizer half of bench/python_bench.py's reference pipeline: npm tokenizers@0.23.2
// (Hugging Face's Rust tokenizers) encodes each rendered prompt with add_special_tokens=false
// and runs transformers' assistant-mask loop over its generation spans (the rule of
// scripts/tokenized_oracle.mjs), `repeat` times per prompt, timed inside this process.
//   in : one JSON line per prompt {"text", "generation": [[start, end], ...]}; argv: DIR REPEAT
//   out: {"call_ns", "call_cpu_ns", "rows": [{"ns", "cpu_ns", "input_ids", "assistant_masks"}]}:
//   ns / cpu_ns = mean wall / CPU nanoseconds (all threads) of one encode + mask loop of that
//   prompt; call_ns / call_cpu_ns = the cost of encoding "" (the binding's per-call cost: this
//   binding's encode is asynchronous, Python's is not)
import path from "node:path";
import fs from "node:fs";
import { createRequire } from "node:module";
const load = (name) => {
  for (const p of [process.cwd(), ...(process.env.NODE_PATH || "").split(":").filter(Boolean)]) {
    try { return createRequire(path.join(p, "noop.js"))(name); } catch (_) {}
  }
  throw new Error(`cannot load ${name}; set NODE_PATH`);
};
const rust = load("tokenizers");
const [dir, repeatArg] = process.argv.slice(2);
const repeat = Number(repeatArg || 1);
const tok = rust.Tokenizer.fromFile(path.join(dir, "tokenizer.json"));
const reqs = fs.readFileSync(0, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
const once = async (req) => {
  const e = await tok.encode(req.text, null, { addSpecialTokens: false });
  const ids = e.getIds();
  const mask = new Array(ids.length).fill(0);
  for (const [start, end] of req.generation || []) {
    const s = e.charToToken(start), t = e.charToToken(end - 1);
    if (s === null || s === undefined) break;
    const stop = t ? t + 1 : ids.length;
    for (let k = s; k < stop; k++) mask[k] = 1;
  }
  return { input_ids: Array.from(ids), assistant_masks: mask };
};
for (const r of reqs.slice(0, 20)) await once(r);  // warm-up
const rows = [];
for (const r of reqs) {
  let row;
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  for (let i = 0; i < repeat; i++) row = await once(r);
  const c = process.cpuUsage(c0);  // every thread of the process: encode runs on libuv's pool
  row.ns = Number(process.hrtime.bigint() - t0) / repeat;
  row.cpu_ns = (c.user + c.system) * 1000 / repeat;
  rows.push(row);
}
const empty = [];
const e0 = process.cpuUsage();
for (let i = 0; i < 2000; i++) {
  const t0 = process.hrtime.bigint();
  await tok.encode("", null, { addSpecialTokens: false });
  empty.push(Number(process.hrtime.bigint() - t0));
}
const ec = process.cpuUsage(e0);
empty.sort((a, b) => a - b);
process.stdout.write(JSON.stringify({ call_ns: empty[empty.length >> 1],
                                      call_cpu_ns: (ec.user + ec.system) * 1000 / 2000, rows }) + "\n");
