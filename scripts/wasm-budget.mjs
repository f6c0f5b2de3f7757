#!/usr/bin/env node
// The size guard bin/test runs after building: the Worker's wasm, exactly as deployed (bin/build:
// release, functions ordered, no name section), compressed with gzip -9, must stay within
// issue 8's budget of 600 KB (Cloudflare's limit and the download count the compressed size).
// A change that makes the module grow past it fails the test run.
//
//   node scripts/wasm-budget.mjs [build/index_bg.wasm]
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const BUDGET = 600_000;

const file = process.argv[2] ?? 'build/index_bg.wasm';
const bytes = readFileSync(file);
const gzip = gzipSync(bytes, { level: 9 }).length;
const kb = (n) => `${n.toLocaleString('en')} bytes`;
const line = `${file}: ${kb(bytes.length)} raw, ${kb(gzip)} gzip -9 (budget ${kb(BUDGET)})`;
if (process.env.NAMES === '1') {
  console.error(`[wasm-budget] ${line}: built with NAMES=1, not checked`);
} else if (gzip > BUDGET) {
  console.error(`[wasm-budget] FAIL ${line}: the Worker's wasm grew past its budget.`);
  console.error('[wasm-budget] Find what grew with `NAMES=1 bin/build && node scripts/wasm-size.mjs` and cut it.');
  process.exit(1);
} else {
  console.error(`[wasm-budget] ok ${line}; ${kb(BUDGET - gzip)} to spare`);
}
