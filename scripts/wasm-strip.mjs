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
import { stripped } from './lib/wasm.mjs';

const file = process.argv[2];
if (!file) {
  console.error('usage: wasm-strip.mjs <module.wasm>');
  process.exit(2);
}
const bytes = readFileSync(file);
const kept = stripped(bytes);
writeFileSync(file, kept);
console.error(`[wasm-strip] ${file}: removed ${bytes.length - kept.length} bytes of names and toolchain notes`);
