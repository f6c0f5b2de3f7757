#!/usr/bin/env node
// Puts the Worker's functions in an order that gzip compresses better, in place. gzip only sees
// repetition within its 32 KB window, and rustc leaves alike functions scattered: the copies of
// one generic function (a serde visitor per type, `DynTool::call` per tool, ...) and functions
// that inline the same code under different names.
//
// Two steps. First a base order: by name without rustc's hash suffix, then by size, which puts
// the copies of one generic function together. Then a chain over it: starting from the first
// function, the next one is the unplaced function most like the last one placed, if any is alike
// enough (more than a given share of the hashes agree), else the next unplaced one of the base
// order. "Alike" is estimated by MinHash over the bodies' shingles of a few bytes (64 hashes,
// looked up by locality-sensitive hashing in bands of 2), so a chain costs about a second instead
// of a comparison of every pair.
//
// binaryen does the moving, since it must renumber every call: this script names each function
// `<rank> <name>`, has wasm-opt sort the functions by name (`--reorder-functions-by-name`, with
// `--duplicate-function-elimination`, which merges functions compiled identically) and run the
// passes that pay after the order, then gives the functions their own names back. Measured
// (docs/scale.md, "Size"): the base order took the module from 720,727 to 692,614 bytes gzip -9 on
// 2026-11-30; one chain (6-byte shingles, a fifth alike) took 5.9 to 6.6 KB more off. gzip's
// answer moves by up to 2 KB between chains that are nearly the same, so the script makes six
// (SETTINGS, about 20 s on two cores) and keeps the smallest: on 2026-12-01, 596,178 bytes where
// the one chain gave 600,228.
//
//   node scripts/wasm-order.mjs <module.wasm> <wasm-opt> [wasm-opt feature flags...]
//
// The module must have its "name" section (bin/build strips it afterwards).
import { execFile } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { functionBodies, functionNames, importedFunctions, stripped, withFunctionNames } from './lib/wasm.mjs';

const [file, wasmOpt, ...features] = process.argv.slice(2);
if (!file || !wasmOpt) {
  console.error('usage: wasm-order.mjs <module.wasm> <wasm-opt> [feature flags...]');
  process.exit(2);
}
// The chains tried: (shingle bytes, least similarity to follow). gzip's output for the whole
// module moves by up to 2 KB between orders that are alike, one way or the other, so no single
// setting is best for every build: each build tries these and keeps the smallest (docs/scale.md,
// "Size").
const SETTINGS = [
  [6, 0.2],
  [4, 0.2],
  [4, 0.15],
  [5, 0.2],
  [3, 0.1],
  [3, 0.3],
];
// The wasm-opt passes that make the ordered module smaller gzip-compressed (measured one at a time,
// each kept when it paid; docs/scale.md, "Size"): branches and blocks simplified, instructions
// peephole-optimised, functions compiled identically after that merged, locals renumbered by use.
// None inlines or moves code between functions, so the order stands.
const AFTER = ['--remove-unused-brs', '--vacuum', '--merge-blocks', '--optimize-instructions',
  '--duplicate-function-elimination', '--reorder-locals', '--optimize-instructions', '--vacuum'];
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
const RANK = /^\d{6} /;
const gzipped = (bytes) => gzipSync(bytes, { level: 9 }).length;

/** The module in the chain order of `setting`, the passes run: its bytes, names restored. */
async function candidate([shingle, similarity], n) {
  const order = chain(defined.map((f) => bodies[f.index - imported]), shingle, similarity).map((i) => defined[i]);
  const ranked = new Map(names);
  order.forEach((f, rank) => ranked.set(f.index, `${String(rank).padStart(6, '0')} ${f.name}`));
  const tmp = `${file}.order${n}.wasm`;
  writeFileSync(tmp, withFunctionNames(before, ranked));
  try {
    await promisify(execFile)(wasmOpt, [tmp, '-o', tmp, '--duplicate-function-elimination',
      '--reorder-functions-by-name', ...AFTER, '--debuginfo', ...features]);
    const ordered = readFileSync(tmp);
    const restored = new Map([...functionNames(ordered)].map(([i, name]) => [i, name.replace(RANK, '')]));
    const bytes = withFunctionNames(ordered, restored);
    // Judged as deployed, and as scripts/wasm-budget.mjs measures: without names, node's gzip -9.
    return { setting: [shingle, similarity], bytes, size: gzipped(stripped(bytes)) };
  } finally {
    rmSync(tmp, { force: true });
  }
}

// wasm-opt runs in other processes, as many at a time as there are cores.
const results = [];
let next = 0;
await Promise.all(
  Array.from({ length: Math.min(availableParallelism(), SETTINGS.length) }, async () => {
    while (next < SETTINGS.length) {
      const n = next++;
      results[n] = await candidate(SETTINGS[n], n);
    }
  }),
);
// The smallest; on a tie, the earlier setting.
const best = results.reduce((a, b) => (b.size < a.size ? b : a));
writeFileSync(file, best.bytes);
const tried = results.map((r) => `${r.setting.join('/')}: ${r.size.toLocaleString('en')}`).join(', ');
console.error(
  `[wasm-order] ${file}: ${defined.length} functions ordered, chain ${best.setting.join('/')} kept ` +
    `(gzip -9 without names: ${tried})`,
);

/**
 * The chain order of `bodies` (given in the base order) as indices into it: each next function
 * the unplaced one most like the last placed (estimated Jaccard similarity of SHINGLE-byte
 * shingles above MIN_SIMILARITY; ties to the earlier in the base order), else the next unplaced
 * one.
 */
function chain(bodies, SHINGLE, MIN_SIMILARITY) {
  const HASHES = 64;
  const ROWS = 2;
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
