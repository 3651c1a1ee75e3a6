// Tokenizer helpers over npm tokenizers@0.23.2 (Hugging Face's Rust build, as the oracle
// /work/shared/oracle/tok_batch.mjs encodes): the goldens script and the scripted backend share them.
import path from "node:path";
import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
const { Tokenizer } = require("tokenizers");

const cache = new Map();
export function tokenizer(dir) {
  if (!cache.has(dir)) cache.set(dir, Tokenizer.fromFile(path.join(dir, "tokenizer.json")));
  return cache.get(dir);
}

// ids of `text` with no special tokens added (transformers' apply_chat_template(tokenize=True)).
export async function encode(dir, text) {
  const e = await tokenizer(dir).encode(text, null, { addSpecialTokens: false });
  return e.getIds();
}

export async function decode(dir, ids) {
  return tokenizer(dir).decode(ids, false);
}

// The text piece each id adds, as a streaming server emits it: the decode of ids[0..i] minus the
// decode of ids[0..i-1]; an id that ends inside a UTF-8 sequence (decoded as U+FFFD) adds ""
// and its bytes come with the id that completes the character.
export async function pieces(dir, ids) {
  const out = [];
  let done = "";
  for (let i = 0; i < ids.length; i++) {
    const text = await decode(dir, ids.slice(0, i + 1));
    if (text.endsWith("\uFFFD") || !text.startsWith(done)) { out.push(""); continue; }
    out.push(text.slice(done.length));
    done = text;
  }
  return out;
}
