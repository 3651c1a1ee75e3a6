#!/usr/bin/env node
// Extracts the cases of @huggingface/jinja's tests (huggingface/huggingface.js,
// packages/jinja/test/templates.test.js, e2e.test.js and the whitespace cases of
// interpreter.test.js) into
// data/suites/hf_jinja.jsonl (inputs only; the oracle fills "oracle" afterwards via
// scripts/regen-suite-goldens).
//
// Usage: node hf_jinja.mjs <dir with templates.test.js, e2e.test.js, interpreter.test.js> <commit>
//
// The test files keep their cases in top-level object literals (TEST_STRINGS,
// TEST_CONTEXT, TEST_DEFAULT_TEMPLATES, TEST_CUSTOM_TEMPLATES). Those declarations
// are evaluated in an isolated vm context (imports and the vitest code after them are
// cut off); the expected outputs are ignored. Contexts that JSON cannot express
// (functions, undefined, NaN) are skipped and listed in hf_jinja.skipped.tsv.
import fs from "node:fs";
import path from "node:path";
import vm from "node:vm";
import { fileURLToPath } from "node:url";

const REPO = "huggingface/huggingface.js";
const [dir, commit] = process.argv.slice(2);
if (!dir || !commit) {
  console.error("usage: node hf_jinja.mjs <dir> <commit>");
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
const suitesDir = path.join(here, "..", "..", "data", "suites");
const FIXED_NOW = "2025-07-10T12:00:00"; // e2e.test.js mocks this date

// Why a value cannot be a JSON context, or null when it can.
function notJson(value, where = "context") {
  if (value === undefined) return `${where} is undefined`;
  if (typeof value === "function") return `${where} is a JS function`;
  if (typeof value === "bigint" || typeof value === "symbol") return `${where} is a ${typeof value}`;
  if (typeof value === "number" && !Number.isFinite(value)) return `${where} is ${value}`;
  if (value === null || typeof value !== "object") return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const r = notJson(value[i], `${where}[${i}]`);
      if (r) return r;
    }
    return null;
  }
  const proto = Object.getPrototypeOf(value);
  // A plain object (of any vm realm) has Object.prototype, whose own prototype is null.
  if (proto !== null && Object.getPrototypeOf(proto) !== null) return `${where} is a ${proto?.constructor?.name} object`;
  for (const [k, v] of Object.entries(value)) {
    const r = notJson(v, `${where}.${k}`);
    if (r) return r;
  }
  return null;
}

// Evaluates the top-level declarations of a test file up to `stopAt`, returning `names`.
function evalDeclarations(source, stopAt, names) {
  const cut = source.indexOf(stopAt);
  if (cut < 0) throw new Error(`marker not found: ${stopAt}`);
  const body = source
    .slice(0, cut)
    .split("\n")
    .map((l) => (l.startsWith("import ") ? "" : l))
    .join("\n");
  return vm.runInNewContext(`${body}\n;({${names.join(", ")}})`, {}, { timeout: 5000 });
}

// 1-based line of the first line matching `re` at or after line `from`.
function lineOf(lines, re, from = 0) {
  for (let i = from; i < lines.length; i++) if (re.test(lines[i])) return i + 1;
  throw new Error(`line not found: ${re}`);
}
const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const keyLine = (lines, key, from) => lineOf(lines, new RegExp(`^\\t(${escapeRe(key)}|"${escapeRe(key)}"):`), from);

const cases = [];
const skipped = [];
function add(id, source, template, context, notes) {
  const why = notJson(context);
  if (why) {
    skipped.push([id, source, why]);
    return;
  }
  const c = { id, source, template, context, now: FIXED_NOW };
  if (notes) c.notes = notes;
  cases.push(c);
}

// --- templates.test.js -------------------------------------------------------------
{
  const file = "packages/jinja/test/templates.test.js";
  const src = fs.readFileSync(path.join(dir, "templates.test.js"), "utf8");
  const lines = src.split("\n");
  const { TEST_STRINGS, TEST_CONTEXT } = evalDeclarations(src, '\ndescribe("Templates"', ["TEST_STRINGS", "TEST_CONTEXT"]);
  const stringsStart = lineOf(lines, /^const TEST_STRINGS = \{/);
  for (const [name, template] of Object.entries(TEST_STRINGS)) {
    const line = keyLine(lines, name, stringsStart);
    const source = `${REPO}@${commit}:${file}:${line}`;
    if (!(name in TEST_CONTEXT)) {
      add(`hf_jinja/templates/${name}`, source, template, {}, "no TEST_CONTEXT entry upstream; rendered with an empty context");
    } else {
      add(`hf_jinja/templates/${name}`, source, template, TEST_CONTEXT[name]);
    }
  }

  // "Error checking": templates written inline in it("...") blocks; env.set(k, v) gives the context.
  const errStart = lineOf(lines, /^describe\("Error checking"/);
  let current = null;
  const flush = () => {
    if (current && current.template !== undefined) {
      add(`hf_jinja/errors/${current.name}`, `${REPO}@${commit}:${file}:${current.line}`, current.template, current.context);
    } else if (current) {
      skipped.push([`hf_jinja/errors/${current.name}`, `${REPO}@${commit}:${file}:${current.line}`, "no literal template"]);
    }
  };
  for (let i = errStart - 1; i < lines.length; i++) {
    const it = lines[i].match(/^\s*it\((".*?"), \(\) => \{/);
    if (it) {
      flush();
      current = { name: JSON.parse(it[1]), line: i + 1, context: {} };
      continue;
    }
    if (!current) continue;
    const text = lines[i].match(/(?:const text = |tokenize\()((["'`]).*\2)\)?;$/);
    if (text && current.template === undefined) current.template = vm.runInNewContext(text[1]);
    const set = lines[i].match(/env\.set\(("[^"]*"), (.*)\);$/);
    if (set) {
      const key = JSON.parse(set[1]);
      const value = vm.runInNewContext(`(${set[2]})`);
      // env.set("true", true) shadows a literal in HF.js only; Jinja has no such variable.
      if (key !== "true") current.context[key] = value;
    }
  }
  flush();
}

// --- e2e.test.js -------------------------------------------------------------------
{
  const file = "packages/jinja/test/e2e.test.js";
  const src = fs.readFileSync(path.join(dir, "e2e.test.js"), "utf8");
  const lines = src.split("\n");
  const decl = evalDeclarations(src, "\nfunction render(", ["TEST_DEFAULT_TEMPLATES", "TEST_CUSTOM_TEMPLATES", "TEST_CUSTOM_FORMATTING"]);
  for (const table of ["TEST_DEFAULT_TEMPLATES", "TEST_CUSTOM_TEMPLATES"]) {
    const start = lineOf(lines, new RegExp(`^const ${table} = `));
    for (const [name, data] of Object.entries(decl[table])) {
      const line = keyLine(lines, name, start);
      add(`hf_jinja/e2e/${name}`, `${REPO}@${commit}:${file}:${line}`, data.chat_template, data.data);
    }
  }
  const start = lineOf(lines, /^const TEST_CUSTOM_FORMATTING = /);
  for (const name of Object.keys(decl.TEST_CUSTOM_FORMATTING)) {
    skipped.push([`hf_jinja/e2e-format/${name}`, `${REPO}@${commit}:${file}:${keyLine(lines, name, start)}`,
      "tests HF.js's template pretty-printer, no render input"]);
  }
}

// --- interpreter.test.js ---------------------------------------------------------
// The whitespace-control test renders a few templates under several lstrip/trim option
// sets; HF always uses both, so each distinct (template, data) is one case.
{
  const file = "packages/jinja/test/interpreter.test.js";
  const src = fs.readFileSync(path.join(dir, "interpreter.test.js"), "utf8");
  const lines = src.split("\n");
  const open = 'it("should handle whitespace control", () => {';
  const start = src.indexOf(open);
  const stop = src.indexOf("for (const test of TESTS)", start);
  if (start < 0 || stop < 0) throw new Error("interpreter.test.js: whitespace test not found");
  const TESTS = vm.runInNewContext(`${src.slice(start + open.length, stop)}\n;TESTS`, {}, { timeout: 5000 });
  const line = lineOf(lines, /^\s*const TESTS = \[/);
  const distinct = new Map();
  for (const t of TESTS) {
    const key = JSON.stringify([t.template, t.data]);
    if (!distinct.has(key)) distinct.set(key, { test: t, options: [] });
    distinct.get(key).options.push(t.options);
  }
  let n = 0;
  for (const { test, options } of distinct.values()) {
    add(`hf_jinja/interpreter/whitespace_${++n}`, `${REPO}@${commit}:${file}:${line}`, test.template, test.data,
      `upstream renders this under ${options.length} lstrip_blocks/trim_blocks settings; HF uses both`);
  }
}

const seen = new Set();
for (const c of cases) {
  if (seen.has(c.id)) throw new Error(`duplicate id ${c.id}`);
  seen.add(c.id);
}
fs.writeFileSync(path.join(suitesDir, "hf_jinja.jsonl"), cases.map((c) => JSON.stringify(c)).join("\n") + "\n");
fs.writeFileSync(path.join(suitesDir, "hf_jinja.skipped.tsv"),
  "id\tsource\treason\n" + skipped.map((s) => s.join("\t")).join("\n") + "\n");
console.log(`hf_jinja: ${cases.length} cases, ${skipped.length} skipped`);
