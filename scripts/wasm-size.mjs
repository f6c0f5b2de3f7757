#!/usr/bin/env node
// Where the bytes of a wasm module go: sections, then code size per crate and the largest
// functions, named from the module's `name` section (build with `NAMES=1 bin/build` to
// keep it; the deployed build strips it). Also prints the raw and gzip -9 sizes.
//
//   node scripts/wasm-size.mjs [build/index_bg.wasm] [--top N] [--crate NAME] [--json]
//
// `--crate serde_json` lists the largest functions of one crate; `--json` prints the whole
// breakdown as JSON (for comparing two builds).
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { functionBodies, functionNames, importedFunctions, sections as wasmSections } from './lib/wasm.mjs';

const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const [value] = args.splice(i, 2).slice(1);
  return value;
};
const top = Number(flag('--top', 25));
const onlyCrate = flag('--crate', null);
const asJson = args.includes('--json') && args.splice(args.indexOf('--json'), 1);
const file = args[0] ?? 'build/index_bg.wasm';
const bytes = readFileSync(file);

const SECTION = ['custom', 'type', 'import', 'function', 'table', 'memory', 'global', 'export',
  'start', 'element', 'code', 'data', 'datacount', 'tag'];
const sections = wasmSections(bytes).map((s) => ({
  label: s.custom !== null ? `custom "${s.custom}"` : SECTION[s.id] ?? `section ${s.id}`,
  size: s.body.length,
  start: s.body.byteOffset - bytes.byteOffset,
}));
const importedFuncs = importedFunctions(bytes);
const names = functionNames(bytes);
// {size, start, end} by defined function index; `size` counts the body's length prefix too.
const bodies = functionBodies(bytes).map((body) => {
  const start = body.byteOffset - bytes.byteOffset;
  const len = body.length;
  return { size: len + 1 + Math.floor(Math.log2(Math.max(len, 1)) / 7), start, end: start + len };
});

// Legacy Rust mangling (`_ZN4core3fmt5write17h…E`) to a path; names wasm-bindgen writes are
// already plain.
function demangle(name) {
  if (!name.startsWith('_ZN')) return name;
  const parts = [];
  let i = 3;
  while (i < name.length && name[i] !== 'E') {
    let j = i;
    while (/[0-9]/.test(name[j])) j++;
    const len = Number(name.slice(i, j));
    if (!len) break;
    parts.push(name.slice(j, j + len));
    i = j + len;
  }
  if (parts.length && /^h[0-9a-f]{16}$/.test(parts.at(-1))) parts.pop();
  return parts.join('::')
    .replace(/\$LT\$/g, '<').replace(/\$GT\$/g, '>').replace(/\$u20\$/g, ' ')
    .replace(/\$u7b\$/g, '{').replace(/\$u7d\$/g, '}').replace(/\$RF\$/g, '&')
    .replace(/\$BP\$/g, '*').replace(/\$C\$/g, ',').replace(/\$u27\$/g, "'")
    .replace(/\$u5b\$/g, '[').replace(/\$u5d\$/g, ']').replace(/\$u3b\$/g, ';')
    .replace(/\$u21\$/g, '!').replace(/\.\./g, '::');
}

// The crate a function belongs to: the first path segment, or for `<A as B>::f` the crate of A
// when A is a path and of B when A is a type parameter or a primitive (`<T as Tool>::call`).
function crateOf(path) {
  let p = path.replace(/\[[0-9a-f]+\]/g, '');
  if (/^(?:__wbg|__wbindgen|__externref|wasm_bindgen::__rt)/.test(p)) return 'wasm-bindgen glue';
  const qualified = p.match(/^<(.*?) as (.*?)>::/);
  if (qualified) {
    const self = qualified[1].replace(/^(?:&|mut |dyn |\*const |\*mut )+/, '');
    p = /^[a-z_][a-z0-9_]*::/.test(self) ? self : qualified[2];
  }
  const m = p.match(/^<?([a-z_][a-z0-9_]*)::/);
  return m ? m[1] : '(other)';
}

const functions = bodies.map(({ size, start, end }, i) => {
  const raw = names.get(importedFuncs + i) ?? `func[${importedFuncs + i}]`;
  const name = demangle(raw);
  return { name, size, start, end, crate: crateOf(name) };
});
const code = functions.reduce((s, f) => s + f.size, 0);
const byCrate = new Map();
for (const f of functions) {
  const c = byCrate.get(f.crate) ?? { size: 0, count: 0, bodies: [] };
  c.size += f.size;
  c.count++;
  c.bodies.push(bytes.subarray(f.start, f.end));
  byCrate.set(f.crate, c);
}
// Each crate's code compressed on its own, in module order: an estimate of what it adds to the
// gzip size (code that repeats other crates' code compresses better in the whole module).
const crates = [...byCrate]
  .map(([crate, c]) => ({ crate, size: c.size, count: c.count, gzip: gzipSync(Buffer.concat(c.bodies), { level: 9 }).length }))
  .sort((a, b) => b.size - a.size);
const chosen = onlyCrate ? functions.filter((f) => f.crate === onlyCrate) : functions;
const largest = [...chosen].sort((a, b) => b.size - a.size).slice(0, top);
const gzip = gzipSync(bytes, { level: 9 }).length;

if (asJson) {
  const strip = ({ start, end, ...f }) => f;
  console.log(JSON.stringify({ file, raw: bytes.length, gzip, sections, code, crates, largest: largest.map(strip) }, null, 2));
  process.exit(0);
}
const kb = (n) => `${(n / 1024).toFixed(1).padStart(8)} KiB`;
const pct = (n, of) => `${((100 * n) / of).toFixed(1).padStart(5)}%`;
console.log(`${file}: ${kb(bytes.length)} raw, ${kb(gzip)} gzip -9, ${functions.length} functions`);
console.log(names.size ? '' : '(no name section: rebuild with NAMES=1 for names)\n');
console.log('sections (raw, gzip -9 of the section alone)');
for (const s of sections) {
  const z = gzipSync(bytes.subarray(s.start, s.start + s.size), { level: 9 }).length;
  console.log(`  ${kb(s.size)} ${pct(s.size, bytes.length)} ${kb(z)}  ${s.label}`);
}
console.log('\ncode by crate (raw, share, gzip -9 of its code alone)');
for (const c of crates.slice(0, top)) {
  console.log(`  ${kb(c.size)} ${pct(c.size, code)} ${kb(c.gzip)}  ${String(c.count).padStart(5)} fns  ${c.crate}`);
}
console.log(`\nlargest functions${onlyCrate ? ` of ${onlyCrate}` : ''}`);
for (const f of largest) console.log(`  ${kb(f.size)}  ${f.name.slice(0, 150)}`);
