#!/usr/bin/env node
// Minifies the card's script and stylesheet (card/card.js, card/card.css) with esbuild into
// card/min/, which build.rs inlines into the card. The minified files are committed, so that a
// plain `cargo test` needs no Node; bin/build and bin/dev write them, and bin/test checks they
// are current (`--check`) before the Rust tests use them.
//
// Minified rather than compacted by lines: 3 KB less of the Worker's gzip-compressed wasm
// (docs/scale.md, "Size"), with the sources kept readable.
//
//   node scripts/card-build.mjs [--check]
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { transformSync } from 'esbuild';

const root = join(import.meta.dirname, '..');
const check = process.argv.includes('--check');
// `charset: utf8` keeps the card's own text (…, é) as it is, not as \u escapes; `es2020` is what
// the hosts' webviews run. No legal comments: the card has none to keep.
const options = { minify: true, charset: 'utf8', legalComments: 'none' };
const outputs = [
  ['card.js', { ...options, loader: 'js', target: 'es2020' }],
  ['card.css', { ...options, loader: 'css', target: 'chrome100' }],
].map(([file, opts]) => {
  const { code } = transformSync(readFileSync(join(root, 'card', file), 'utf8'), opts);
  return [join(root, 'card', 'min', file), code];
});

const stale = outputs.filter(([path, code]) => {
  try {
    return readFileSync(path, 'utf8') !== code;
  } catch {
    return true;
  }
});
if (check) {
  if (stale.length) {
    console.error(`card/min is not current (${stale.map(([p]) => p.split('/').pop()).join(', ')}): run \`node scripts/card-build.mjs\` (bin/build does) and commit card/min.`);
    process.exit(1);
  }
} else {
  mkdirSync(join(root, 'card', 'min'), { recursive: true });
  for (const [path, code] of stale) writeFileSync(path, code);
  if (stale.length) console.error(`card-build: wrote ${stale.map(([p]) => p.split('/').pop()).join(', ')}`);
}
