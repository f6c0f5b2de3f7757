// scripts/wasm-order.mjs, the build step that orders the Worker's functions for gzip, on a small
// module written here byte by byte: after it, every export still answers what it answered (so
// every call was renumbered), every function keeps its name, and the functions sit by generic
// name, then size. Then scripts/wasm-dead-classes.mjs, the step before it, on the same kind of
// module. The other suites run the built Worker itself.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../../scripts/lib/devtoken.mjs";
import { exportsOf, functionBodies, functionNames, importedFunctions, name, u32 } from "../../scripts/lib/wasm.mjs";

const section = (id, ...parts) => {
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([id]), u32(body.length), body]);
};
const vector = (items) => Buffer.concat([u32(items.length), ...items]);
const I32_CONST = 0x41;
const CALL = 0x10;
const I32_ADD = 0x6a;
const END = 0x0b;

// Four functions of type () -> i32, in an order the script must change. Function 3 calls
// function 2, so a call that is not renumbered answers wrongly.
const FUNCTIONS = [
  { name: "b::visit::h00000000000000a1", code: [I32_CONST, 1] },
  { name: "a::visit::h00000000000000b2", code: [I32_CONST, 2, I32_CONST, 3, I32_ADD] },
  { name: "b::visit::h00000000000000c3", code: [I32_CONST, 4, I32_CONST, 5, I32_ADD, I32_CONST, 6, I32_ADD] },
  { name: "a::visit::h00000000000000d4", code: [CALL, 2, I32_CONST, 7, I32_ADD] },
];
const EXPECTED = { f0: 1, f1: 5, f2: 15, f3: 22 };

function module({ names: withNames = true, functions = FUNCTIONS, exports = functions.map((_, i) => `f${i}`) } = {}) {
  const bodies = functions.map((f) => {
    const body = Buffer.from([0, ...f.code, END]);
    return Buffer.concat([u32(body.length), body]);
  });
  const names = vector(functions.map((f, i) => Buffer.concat([u32(i), name(f.name)])));
  return Buffer.concat([
    Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]),
    section(1, vector([Buffer.from([0x60, 0x00, 0x01, 0x7f])])),
    section(3, vector(functions.map(() => u32(0)))),
    section(7, vector(exports.map((e, i) => Buffer.concat([name(e), Buffer.from([0x00]), u32(i)])))),
    section(10, vector(bodies)),
    withNames ? section(0, name("name"), Buffer.from([1]), u32(names.length), names) : Buffer.alloc(0),
  ]);
}

async function answers(bytes, expected = EXPECTED) {
  const { instance } = await WebAssembly.instantiate(bytes);
  return Object.fromEntries(Object.keys(expected).map((f) => [f, instance.exports[f]()]));
}

/** Runs scripts/wasm-order.mjs on `bytes`; the ordered module. */
function ordered(bytes) {
  const dir = mkdtempSync(join(tmpdir(), "wasm-order-"));
  try {
    const file = join(dir, "m.wasm");
    writeFileSync(file, bytes);
    const wasmOpt = join(ROOT, "node_modules/binaryen/bin/wasm-opt");
    execFileSync(process.execPath, [join(ROOT, "scripts/wasm-order.mjs"), file, wasmOpt], { stdio: "pipe" });
    return readFileSync(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const namesInOrder = (bytes) => [...functionNames(bytes)].sort((x, y) => x[0] - y[0]).map(([, n]) => n);

test("wasm-order keeps every call, export and name, and sorts by generic name then size", async () => {
  const before = module();
  assert.deepEqual(await answers(before), EXPECTED);
  const after = ordered(before);
  assert.deepEqual(await answers(after), EXPECTED, "every export answers as before");
  assert.equal(importedFunctions(after), 0);
  assert.deepEqual(namesInOrder(after), [
    "a::visit::h00000000000000b2",
    "a::visit::h00000000000000d4",
    "b::visit::h00000000000000a1",
    "b::visit::h00000000000000c3",
  ]);
});

test("wasm-order puts a function next to the one most like it, whatever their names", async () => {
  // `a::sum` and `z::sum` compute alike (the same long run of instructions, one constant apart);
  // `m::other` is unlike both. By name `m::other` would sit between them.
  const run = (last) => [I32_CONST, 10, I32_CONST, 20, I32_ADD, I32_CONST, 30, I32_ADD, I32_CONST, 40, I32_ADD, I32_CONST, 50, I32_ADD, I32_CONST, last, I32_ADD];
  const functions = [
    { name: "z::sum::h00000000000000a1", code: run(61) },
    { name: "m::other::h00000000000000b2", code: [CALL, 0, CALL, 2, I32_ADD, I32_CONST, 9, I32_ADD] },
    { name: "a::sum::h00000000000000c3", code: run(60) },
  ];
  const expected = { f0: 211, f1: 430, f2: 210 };
  const before = module({ functions });
  assert.deepEqual(await answers(before, expected), expected);
  const after = ordered(before);
  assert.deepEqual(await answers(after, expected), expected, "every export answers as before");
  assert.deepEqual(namesInOrder(after), ["a::sum::h00000000000000c3", "z::sum::h00000000000000a1", "m::other::h00000000000000b2"]);
});

test("wasm-order refuses a module without function names", () => {
  const dir = mkdtempSync(join(tmpdir(), "wasm-order-"));
  try {
    const file = join(dir, "m.wasm");
    writeFileSync(file, module({ names: false }));
    assert.throws(
      () => execFileSync(process.execPath, [join(ROOT, "scripts/wasm-order.mjs"), file, "wasm-opt"], { stdio: "pipe" }),
      (e) => /no function names/.test(String(e.stderr)),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Runs scripts/wasm-dead-classes.mjs on `bytes` with `glue` as wasm-bindgen's JavaScript. */
function withoutDeadClasses(bytes, glue) {
  const dir = mkdtempSync(join(tmpdir(), "wasm-dead-"));
  try {
    const [file, js] = [join(dir, "m.wasm"), join(dir, "glue.js")];
    writeFileSync(file, bytes);
    writeFileSync(js, glue);
    const wasmOpt = join(ROOT, "node_modules/binaryen/bin/wasm-opt");
    execFileSync(process.execPath, [join(ROOT, "scripts/wasm-dead-classes.mjs"), file, js, wasmOpt], { stdio: "pipe" });
    return readFileSync(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("wasm-dead-classes drops the exports of classes nothing constructs, and their code", async () => {
  // `source` has no constructor export: its methods can never be called. `state` can be
  // constructed (`state_new`), so its methods stay, and so does whatever they call.
  const exports = ["__wbg_source_free", "source_pull", "state_new", "state_call", "__wbg_state_free"];
  const functions = [
    { name: "free_source", code: [I32_CONST, 1] },
    { name: "pull", code: [I32_CONST, 2] },
    { name: "new_state", code: [I32_CONST, 3] },
    { name: "call", code: [CALL, 0, I32_CONST, 4, I32_ADD] },
    { name: "free_state", code: [I32_CONST, 5] },
  ];
  const before = module({ functions, exports });
  const glue = "export class Source { pull() { return wasm.source_pull(this.__wbg_ptr); } }";
  const after = withoutDeadClasses(before, glue);
  assert.deepEqual(exportsOf(after).map((e) => e.name), ["state_new", "state_call", "__wbg_state_free"]);
  assert.equal(functionBodies(after).length, 4, "`pull` removed; `free_source` kept, since `call` calls it");
  const expected = { state_new: 3, state_call: 5, __wbg_state_free: 5 };
  assert.deepEqual(await answers(after, expected), expected, "every kept export answers as before");
  // A glue that hands Rust-made instances over (`__wrap`) keeps every export.
  const kept = withoutDeadClasses(before, `${glue} static __wrap(ptr) {}`);
  assert.deepEqual(exportsOf(kept).map((e) => e.name), exports);
});
