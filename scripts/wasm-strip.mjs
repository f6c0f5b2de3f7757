#!/usr/bin/env node
// Removes the custom "name" section (function names for stack traces and profiles) from a wasm
// module, in place. rustc writes it and wasm-bindgen keeps it; worker-build's own wasm-opt step
// keeps it too (`--debuginfo`). It is a fifth of the module raw and about a sixth of its gzip
// size, and the Worker never needs it: bin/build strips it unless NAMES=1 (for
// scripts/wasm-size.mjs and profiles).
//
//   node scripts/wasm-strip.mjs build/index_bg.wasm
import { readFileSync, writeFileSync } from 'node:fs';
import { sections } from './lib/wasm.mjs';

const file = process.argv[2];
if (!file) {
  console.error('usage: wasm-strip.mjs <module.wasm>');
  process.exit(2);
}
const bytes = readFileSync(file);
const kept = [bytes.subarray(0, 8)];
let removed = 0;
for (const section of sections(bytes)) {
  if (section.custom === 'name') removed += section.end - section.start;
  else kept.push(bytes.subarray(section.start, section.end));
}
writeFileSync(file, Buffer.concat(kept));
console.error(`[wasm-strip] ${file}: removed ${removed} bytes of names`);
