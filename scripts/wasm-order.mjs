#!/usr/bin/env node
// Puts the Worker's functions in an order that gzip compresses better, in place. gzip only sees
// repetition within its 32 KB window, and rustc leaves alike functions scattered: the copies of
// one generic function (a serde visitor per type, `DynTool::call` per tool, ...) and functions
// that inline the same code under different names.
//
// Two steps. First a base order: by name without rustc's hash suffix, then by size, which puts
// the copies of one generic function together. Then a chain over it: starting from the first
// function, the next one is the unplaced function most like the last one placed, if any is alike
// enough (more than a fifth of the hashes agree), else the next unplaced one of the base order.
// "Alike" is estimated by MinHash over the bodies' 6-byte shingles (64 hashes, looked up by
// locality-sensitive hashing in bands of 2), so the chain costs about a second instead of a
// comparison of every pair.
//
// binaryen does the moving, since it must renumber every call: this script names each function
// `<rank> <name>`, has wasm-opt sort the functions by name (`--reorder-functions-by-name`, with
// `--duplicate-function-elimination`, which merges functions compiled identically), then gives
// the functions their own names back. Measured (docs/scale.md, "Size"): the base order took the
// module from 720,727 to 692,614 bytes gzip -9 on 2026-11-30; the chain takes 5.9 to 6.6 KB more
// off (three builds of 2026-11-30 and 12-01; its settings chosen as the best on all three).
//
//   node scripts/wasm-order.mjs <module.wasm> <wasm-opt> [wasm-opt feature flags...]
//
// The module must have its "name" section (bin/build strips it afterwards).
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { functionBodies, functionNames, importedFunctions, withFunctionNames } from './lib/wasm.mjs';

const [file, wasmOpt, ...features] = process.argv.slice(2);
if (!file || !wasmOpt) {
  console.error('usage: wasm-order.mjs <module.wasm> <wasm-opt> [feature flags...]');
  process.exit(2);
}
const before = readFileSync(file);
const names = functionNames(before);
if (names.size === 0) throw new Error(`${file} has no function names to order by`);
const imported = importedFunctions(before);
const generic = (name) => name.replace(/::h[0-9a-f]{16}$/, '');
const bodies = functionBodies(before);
const defined = bodies.map((body, i) => {
  const index = imported + i;
  const name = names.get(index) ?? '';
  return { index, name, key: generic(name), size: body.length };
});
defined.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.size - b.size || a.index - b.index));
const order = chain(defined.map((f) => bodies[f.index - imported])).map((i) => defined[i]);
const RANK = /^\d{6} /;
const ranked = new Map(names);
order.forEach((f, rank) => ranked.set(f.index, `${String(rank).padStart(6, '0')} ${f.name}`));

const tmp = `${file}.order.wasm`;
writeFileSync(tmp, withFunctionNames(before, ranked));
try {
  execFileSync(
    wasmOpt,
    [tmp, '-o', tmp, '--duplicate-function-elimination', '--reorder-functions-by-name', '--debuginfo', ...features],
    { stdio: 'inherit' },
  );
  const ordered = readFileSync(tmp);
  const restored = new Map([...functionNames(ordered)].map(([i, n]) => [i, n.replace(RANK, '')]));
  const after = withFunctionNames(ordered, restored);
  writeFileSync(file, after);
  const gz = (b) => gzipSync(b, { level: 9 }).length.toLocaleString('en');
  console.error(`[wasm-order] ${file}: ${defined.length} functions ordered; with names ${gz(before)} → ${gz(after)} bytes gzip -9`);
} finally {
  rmSync(tmp, { force: true });
}

/**
 * The chain order of `bodies` (given in the base order) as indices into it: each next function
 * the unplaced one most like the last placed (estimated Jaccard similarity of 6-byte shingles at
 * above MIN_SIMILARITY; ties to the earlier in the base order), else the next unplaced one.
 */
function chain(bodies) {
  const SHINGLE = 6;
  const HASHES = 64;
  const ROWS = 2;
  const MIN_SIMILARITY = 0.2;
  // Candidates looked at per band: a band shared by thousands of functions (tiny ones alike)
  // would otherwise make the chain quadratic.
  const PER_BAND = 300;
  const seeds = Array.from({ length: HASHES }, (_, i) => Math.imul(i + 1, 0x9e3779b1) >>> 0);
  const signatures = bodies.map((body) => {
    const signature = new Uint32Array(HASHES).fill(0xffffffff);
    for (let i = 0; i + SHINGLE <= body.length; i++) {
      let h = 0x811c9dc5; // FNV-1a of the shingle, then one mix per hash function
      for (let j = 0; j < SHINGLE; j++) h = Math.imul(h ^ body[i + j], 0x01000193);
      for (let m = 0; m < HASHES; m++) {
        let x = Math.imul(h ^ seeds[m], 0x85ebca6b);
        x ^= x >>> 13;
        x = Math.imul(x, 0xc2b2ae35);
        x = (x ^ (x >>> 16)) >>> 0;
        if (x < signature[m]) signature[m] = x;
      }
    }
    return body.length >= SHINGLE ? signature : null;
  });
  const bandKey = (signature, band) => `${band}:${signature.slice(band * ROWS, band * ROWS + ROWS).join(',')}`;
  const buckets = new Map();
  signatures.forEach((signature, i) => {
    if (!signature) return;
    for (let band = 0; band < HASHES / ROWS; band++) {
      const key = bandKey(signature, band);
      const bucket = buckets.get(key);
      if (bucket) bucket.push(i);
      else buckets.set(key, [i]);
    }
  });
  const similarity = (a, b) => {
    let same = 0;
    for (let m = 0; m < HASHES; m++) if (signatures[a][m] === signatures[b][m]) same++;
    return same / HASHES;
  };
  const placed = new Uint8Array(bodies.length);
  const out = [];
  let next = 0;
  for (let current = 0; current >= 0; ) {
    placed[current] = 1;
    out.push(current);
    let best = -1;
    let bestSimilarity = MIN_SIMILARITY;
    const signature = signatures[current];
    for (let band = 0; signature && band < HASHES / ROWS; band++) {
      let seen = 0;
      for (const j of buckets.get(bandKey(signature, band))) {
        if (placed[j]) continue;
        if (++seen > PER_BAND) break;
        const s = similarity(current, j);
        if (s > bestSimilarity || (s === bestSimilarity && j < best)) [best, bestSimilarity] = [j, s];
      }
    }
    if (best < 0) {
      while (next < bodies.length && placed[next]) next++;
      best = next < bodies.length ? next : -1;
    }
    current = best;
  }
  return out;
}
