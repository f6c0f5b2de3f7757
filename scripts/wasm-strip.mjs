#!/usr/bin/env node
// Removes the custom sections the Worker never reads from a wasm module, in place: "name"
// (function names for stack traces and profiles), which rustc writes and wasm-bindgen and
// worker-build's wasm-opt step keep (`--debuginfo`), a fifth of the module raw and about a sixth
// of its gzip size; and "producers" and "target_features", the toolchain's versions and the
// features the linker used (about 0.3 KB, read by no runtime). bin/build strips them unless
// NAMES=1 (for scripts/wasm-size.mjs and profiles).
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
const UNREAD = new Set(['name', 'producers', 'target_features']);
let removed = 0;
for (const section of sections(bytes)) {
  if (UNREAD.has(section.custom)) removed += section.end - section.start;
  else kept.push(bytes.subarray(section.start, section.end));
}
writeFileSync(file, Buffer.concat(kept));
console.error(`[wasm-strip] ${file}: removed ${removed} bytes of names and toolchain notes`);
