#!/usr/bin/env node
// Drops the exports of the wasm-bindgen classes that nothing can ever construct, in place, so
// that wasm-opt can remove the code only they reach.
//
// A dependency's `#[wasm_bindgen]` struct is exported whether or not the Worker uses it: the
// `worker` crate brings wasm-streams' `IntoUnderlyingSource`, `IntoUnderlyingByteSource` and
// `IntoUnderlyingSink` (with the futures that pull and push their streams) and its own
// `R2Range`, `MinifyConfig` and `ContainerStartupOptions`. An instance of such a class reaches
// JavaScript in one of two ways only: JavaScript constructs it through its `<class>_new`
// export, or Rust hands one over, which wasm-bindgen's glue receives through the class's static
// `__wrap`. A class with neither has no instance, so no method export of it can ever be called:
// those exports (`<class>_<method>`, `__wbg_<class>_free`, `__wbg_get_/set_<class>_<field>`)
// are dropped. The glue's class definitions stay; they are never reached. The script refuses to
// run when the glue has any `__wrap`, rather than work out which class it belongs to.
//
//   node scripts/wasm-dead-classes.mjs <module.wasm> <glue.js> <wasm-opt> [wasm-opt feature flags...]
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { exportsOf, withExports } from './lib/wasm.mjs';

const [file, glue, wasmOpt, ...features] = process.argv.slice(2);
if (!file || !glue || !wasmOpt) {
  console.error('usage: wasm-dead-classes.mjs <module.wasm> <glue.js> <wasm-opt> [feature flags...]');
  process.exit(2);
}
const bytes = readFileSync(file);
const exported = exportsOf(bytes);
const names = new Set(exported.map((e) => e.name));
const classes = exported.map((e) => /^__wbg_(.+)_free$/.exec(e.name)?.[1]).filter(Boolean);
if (readFileSync(glue, 'utf8').includes('__wrap')) {
  console.log('[wasm-dead-classes] the glue hands Rust-made instances over (__wrap): nothing dropped');
  process.exit(0);
}
const dead = classes.filter((c) => !names.has(`${c}_new`));
const ofDead = (n) =>
  dead.some((c) => n === `__wbg_${c}_free` || n.startsWith(`${c}_`) || n.startsWith(`__wbg_get_${c}_`) || n.startsWith(`__wbg_set_${c}_`));
const dropped = exported.filter((e) => e.kind === 0 && ofDead(e.name));
const droppedNames = new Set(dropped.map((e) => e.name));
writeFileSync(file, withExports(bytes, (e) => !droppedNames.has(e.name)));
execFileSync(wasmOpt, [file, '-o', file, '--remove-unused-module-elements', '--debuginfo', ...features], { stdio: 'inherit' });
console.log(`[wasm-dead-classes] ${dead.join(', ') || 'no class'} never constructed: ${dropped.length} exports dropped`);
