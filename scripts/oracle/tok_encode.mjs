#!/usr/bin/env node
// Whole-process tokenizer oracle for scripts/bench-process: loads DIR/tokenizer.json with npm
// tokenizers@0.23.2 (Hugging Face's Rust build), encodes standard input (add_special_tokens=False)
// and prints the ids as one JSON array, as `chatwire tokenize --tokenizer DIR` does.
//   NODE_PATH=/tmp/tokoracle/node_modules node scripts/oracle/tok_encode.mjs DIR < text
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const load = (name) => {
  for (const p of [process.cwd(), ...(process.env.NODE_PATH || "").split(":").filter(Boolean)]) {
    try { return createRequire(path.join(p, "noop.js"))(name); } catch (_) {}
  }
  throw new Error(`cannot load ${name}; set NODE_PATH`);
};
const { Tokenizer } = load("tokenizers");
const tok = Tokenizer.fromFile(path.join(process.argv[2], "tokenizer.json"));
const text = fs.readFileSync(0, "utf8");
const encoding = await tok.encode(text, null, { addSpecialTokens: false });
process.stdout.write(JSON.stringify(encoding.getIds()) + "\n");
