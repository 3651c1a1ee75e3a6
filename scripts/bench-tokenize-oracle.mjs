#!/usr/bin/env node
// Oracle side of scripts/bench-tokenize: encodes (and decodes) one text file with npm
// tokenizers@0.23.2 (Hugging Face's Rust build), load excluded, best of N runs, wall and CPU time
// (process CPU time: the napi binding encodes on a worker thread). Prints one JSON line.
//   NODE_PATH=/tmp/tokoracle/node_modules node scripts/bench-tokenize-oracle.mjs DIR TEXTFILE [runs]
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const [dir, file, runsArg] = process.argv.slice(2);
const runs = Number(runsArg || 3);
const load = (name) => {
  for (const p of [process.cwd(), ...(process.env.NODE_PATH || "").split(":").filter(Boolean)]) {
    try { return createRequire(path.join(p, "noop.js"))(name); } catch (_) {}
  }
  throw new Error(`cannot load ${name}; set NODE_PATH`);
};
const { Tokenizer } = load("tokenizers");
const text = fs.readFileSync(file, "utf8");
const tok = Tokenizer.fromFile(path.join(dir, "tokenizer.json"));
const time = async (fn) => {
  let best = { wall: Infinity, cpu: Infinity }, result;
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage(), t0 = process.hrtime.bigint();
    result = await fn();
    const t1 = process.hrtime.bigint(), c1 = process.cpuUsage(c0);
    best.wall = Math.min(best.wall, Number(t1 - t0) / 1e6);
    best.cpu = Math.min(best.cpu, (c1.user + c1.system) / 1e3);
  }
  return [best, result];
};
const [enc, encoding] = await time(() => tok.encode(text, null, { addSpecialTokens: false }));
const ids = encoding.getIds();
const [dec] = await time(() => tok.decode(ids, false));
let h = 0xcbf29ce484222325n;
for (const i of ids) h = ((h ^ BigInt(i)) * 0x100000001b3n) & 0xffffffffffffffffn;
console.log(JSON.stringify({ bytes: Buffer.byteLength(text), tokens: ids.length, fnv: h.toString(16).padStart(16, "0"),
  encode_wall_ms: enc.wall, encode_cpu_ms: enc.cpu, decode_wall_ms: dec.wall, decode_cpu_ms: dec.cpu }));
