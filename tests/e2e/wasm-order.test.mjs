// scripts/wasm-order.mjs, the build step that orders the Worker's functions for gzip, on a small
// module written here byte by byte: after it, every export still answers what it answered (so
// every call was renumbered), every function keeps its name, and the functions sit by generic
// name, then size. The other suites run the ordered Worker itself.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../../scripts/lib/devtoken.mjs";
import { functionNames, importedFunctions, name, u32 } from "../../scripts/lib/wasm.mjs";

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

function module({ names: withNames = true } = {}) {
  const bodies = FUNCTIONS.map((f) => {
    const body = Buffer.from([0, ...f.code, END]);
    return Buffer.concat([u32(body.length), body]);
  });
  const names = vector(FUNCTIONS.map((f, i) => Buffer.concat([u32(i), name(f.name)])));
  return Buffer.concat([
    Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]),
    section(1, vector([Buffer.from([0x60, 0x00, 0x01, 0x7f])])),
    section(3, vector(FUNCTIONS.map(() => u32(0)))),
    section(7, vector(FUNCTIONS.map((_, i) => Buffer.concat([name(`f${i}`), Buffer.from([0x00]), u32(i)])))),
    section(10, vector(bodies)),
    withNames ? section(0, name("name"), Buffer.from([1]), u32(names.length), names) : Buffer.alloc(0),
  ]);
}

async function answers(bytes) {
  const { instance } = await WebAssembly.instantiate(bytes);
  return Object.fromEntries(Object.keys(EXPECTED).map((f) => [f, instance.exports[f]()]));
}

test("wasm-order keeps every call, export and name, and sorts by generic name then size", async () => {
  const before = module();
  assert.deepEqual(await answers(before), EXPECTED);
  const dir = mkdtempSync(join(tmpdir(), "wasm-order-"));
  try {
    const file = join(dir, "m.wasm");
    writeFileSync(file, before);
    const wasmOpt = join(ROOT, "node_modules/binaryen/bin/wasm-opt");
    execFileSync(process.execPath, [join(ROOT, "scripts/wasm-order.mjs"), file, wasmOpt], { stdio: "pipe" });
    const after = readFileSync(file);
    assert.deepEqual(await answers(after), EXPECTED, "every export answers as before");
    const names = functionNames(after);
    const order = [...names].sort((x, y) => x[0] - y[0]).map(([, n]) => n);
    assert.equal(importedFunctions(after), 0);
    assert.deepEqual(order, [
      "a::visit::h00000000000000b2",
      "a::visit::h00000000000000d4",
      "b::visit::h00000000000000a1",
      "b::visit::h00000000000000c3",
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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
