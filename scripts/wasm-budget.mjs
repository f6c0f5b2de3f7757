#!/usr/bin/env node
// The size ceiling bin/test runs after building: the Worker's wasm, exactly as deployed
// (bin/build), compressed with gzip -9, must stay within 1,000,000 bytes, a third of the
// 3 MB compressed limit of Cloudflare's Free plan. What users feel is cold start and CPU per
// request (`npm run bench`), so this is a ceiling, not a target to shave towards. The figure is
// printed on every run.
//
//   node scripts/wasm-budget.mjs [build/index_bg.wasm]
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const BUDGET = 1_000_000;

const file = process.argv[2] ?? 'build/index_bg.wasm';
const bytes = readFileSync(file);
const gzip = gzipSync(bytes, { level: 9 }).length;
const kb = (n) => `${n.toLocaleString('en')} bytes`;
const line = `${file}: ${kb(bytes.length)} raw, ${kb(gzip)} gzip -9 (ceiling ${kb(BUDGET)})`;
if (process.env.NAMES === '1') {
  console.error(`[wasm-budget] ${line}: built with NAMES=1, not checked`);
} else if (gzip > BUDGET) {
  console.error(`[wasm-budget] FAIL ${line}: the Worker's wasm grew past its ceiling.`);
  console.error('[wasm-budget] Find what grew with `NAMES=1 bin/build && node scripts/wasm-size.mjs` and see what grew.');
  process.exit(1);
} else {
  console.error(`[wasm-budget] ok ${line}; ${kb(BUDGET - gzip)} to spare`);
}
