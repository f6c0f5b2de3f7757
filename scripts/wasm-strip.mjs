#!/usr/bin/env node
// Removes the custom "name" section (function names for stack traces and profiles) from a wasm
// module, in place. rustc writes it and wasm-bindgen keeps it; worker-build's own wasm-opt step
// keeps it too (`--debuginfo`). It is a fifth of the module raw and about a sixth of its gzip
// size, and the Worker never needs it: bin/build strips it unless NAMES=1 (for
// scripts/wasm-size.mjs and profiles).
//
//   node scripts/wasm-strip.mjs build/index_bg.wasm
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.argv[2];
if (!file) {
  console.error('usage: wasm-strip.mjs <module.wasm>');
  process.exit(2);
}
const bytes = readFileSync(file);
if (bytes.readUInt32LE(0) !== 0x6d736100) throw new Error(`${file} is not a wasm module`);

let pos = 8;
function leb() {
  let result = 0;
  let shift = 0;
  for (;;) {
    const b = bytes[pos++];
    result += (b & 0x7f) * 2 ** shift;
    if (!(b & 0x80)) return result;
    shift += 7;
  }
}

const kept = [bytes.subarray(0, 8)];
let removed = 0;
while (pos < bytes.length) {
  const start = pos;
  const id = bytes[pos++];
  const size = leb();
  const end = pos + size;
  let name = null;
  if (id === 0) {
    const len = leb();
    name = bytes.toString('utf8', pos, pos + len);
  }
  if (name === 'name') removed += end - start;
  else kept.push(bytes.subarray(start, end));
  pos = end;
}
writeFileSync(file, Buffer.concat(kept));
console.error(`[wasm-strip] ${file}: removed ${removed} bytes of names`);
