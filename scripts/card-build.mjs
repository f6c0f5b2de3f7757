#!/usr/bin/env node
// Minifies the card's script (terser) and stylesheet (esbuild) from card/card.js and
// card/card.css into card/min/, which build.rs inlines into the card. The minified files are
// committed, so that a plain `cargo test` needs no Node; bin/build and bin/dev write them, and
// bin/test checks they are current (`--check`) before the Rust tests use them.
//
// Minified rather than compacted by lines: 3 KB less of the Worker's gzip-compressed wasm
// (docs/scale.md, "Size"), with the sources kept readable. The script goes through terser, whose
// three compression passes leave about 0.4 KB less gzip-compressed than esbuild's minifier.
//
//   node scripts/card-build.mjs [--check]
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { transformSync } from 'esbuild';
import { minify } from 'terser';

const root = join(import.meta.dirname, '..');
const check = process.argv.includes('--check');
const source = (file) => readFileSync(join(root, 'card', file), 'utf8');
// `es2020` is what the hosts' webviews run; the card's own text (…, é) stays as it is, not as
// \u escapes (`ascii_only` off, esbuild's `charset: utf8`). No comments: the card has none to keep.
const script = await minify(source('card.js'), {
  ecma: 2020,
  compress: { passes: 3 },
  mangle: true,
  format: { comments: false, ascii_only: false },
});
const style = transformSync(source('card.css'), {
  minify: true,
  charset: 'utf8',
  legalComments: 'none',
  loader: 'css',
  target: 'chrome100',
});
const outputs = [
  [join(root, 'card', 'min', 'card.js'), script.code],
  [join(root, 'card', 'min', 'card.css'), style.code],
];

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
