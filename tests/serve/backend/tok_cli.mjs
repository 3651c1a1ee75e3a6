#!/usr/bin/env node
// JSON Lines tokenizer service for scripts/regen-serve-goldens:
//   {"id", "tokenizer": DIR, "text"}  -> {"id", "ok": true, "ids", "pieces"}
//   {"id", "tokenizer": DIR, "ids"}   -> {"id", "ok": true, "text"}
import readline from "node:readline";
import { encode, decode, pieces } from "./tok.mjs";
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line.trim()) continue;
  const req = JSON.parse(line);
  const res = { id: req.id };
  try {
    if (req.ids) res.text = await decode(req.tokenizer, req.ids);
    else { res.ids = await encode(req.tokenizer, req.text); res.pieces = await pieces(req.tokenizer, res.ids); }
    res.ok = true;
  } catch (e) { res.ok = false; res.message = String(e && e.message || e); }
  process.stdout.write(JSON.stringify(res) + "\n");
}
