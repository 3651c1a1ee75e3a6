#!/usr/bin/env node
// Oracle for `chatwire render --tokenize`: transformers' apply_chat_template(tokenize=True,
// return_dict=True, return_assistant_tokens_mask=True) after the text and generation spans are
// rendered (scripts/oracle/hf_render.py). Encodes with npm tokenizers@0.23.2 (HF's Rust build,
// add_special_tokens=false; its offsets and charToToken are in code points, as in Python) and
// runs transformers' mask loop on the spans, quirks included.
//   in : {"id", "tokenizer": DIR, "text", "generation": [[start, end], ...]}
//   out: {"id", "ok": true, "input_ids", "assistant_masks"} | {"id", "ok": false, "error_type", "message"}
// NODE_PATH=/tmp/tokoracle/node_modules node scripts/tokenized_oracle.mjs < in.jsonl > out.jsonl
import path from "node:path";
import readline from "node:readline";
import { createRequire } from "node:module";
const load = (name) => {
  for (const p of [process.cwd(), ...(process.env.NODE_PATH || "").split(":").filter(Boolean)]) {
    try { return createRequire(path.join(p, "noop.js"))(name); } catch (_) {}
  }
  throw new Error(`cannot load ${name}; set NODE_PATH`);
};
const rust = load("tokenizers");
const cache = new Map();
const tokenizer = (dir) => {
  if (!cache.has(dir)) cache.set(dir, rust.Tokenizer.fromFile(path.join(dir, "tokenizer.json")));
  return cache.get(dir);
};
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line.trim()) continue;
  const req = JSON.parse(line);
  const res = { id: req.id };
  try {
    const e = await tokenizer(req.tokenizer).encode(req.text, null, { addSpecialTokens: false });
    const ids = e.getIds();
    const mask = new Array(ids.length).fill(0);
    // transformers (tokenization_utils_base.py, apply_chat_template):
    //   start_token = out.char_to_token(i, start); end_token = out.char_to_token(i, end - 1)
    //   if start_token is None: break
    //   for t in range(start_token, end_token + 1 if end_token else len(input_ids[i])): mask[t] = 1
    for (const [start, end] of req.generation || []) {
      if (end - 1 < 0) {  // Python: the Rust binding's usize argument raises OverflowError
        throw Object.assign(new Error("can't convert negative int to unsigned"), { type: "OverflowError" });
      }
      const s = e.charToToken(start), t = e.charToToken(end - 1);
      if (s === null || s === undefined) break;
      const stop = t ? t + 1 : ids.length;
      for (let k = s; k < stop; k++) mask[k] = 1;
    }
    res.ok = true;
    res.input_ids = ids;
    res.assistant_masks = mask;
  } catch (err) {
    res.ok = false;
    res.error_type = err.type || "Error";
    res.message = String(err && err.message || err);
  }
  process.stdout.write(JSON.stringify(res) + "\n");
}
