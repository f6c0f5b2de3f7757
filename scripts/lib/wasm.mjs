// Reading and writing the parts of a wasm module that the build's scripts touch: its sections,
// and the function names of its "name" section (https://webassembly.github.io/spec/core/appendix/custom.html).

/** A reader of LEB128 numbers and strings over `bytes`, from `pos`. */
export function reader(bytes, pos = 0) {
  const r = {
    bytes,
    pos,
    u32() {
      let result = 0;
      let shift = 0;
      for (;;) {
        const b = bytes[r.pos++];
        result += (b & 0x7f) * 2 ** shift;
        if (!(b & 0x80)) return result;
        shift += 7;
      }
    },
    name() {
      const len = r.u32();
      const s = bytes.toString('utf8', r.pos, r.pos + len);
      r.pos += len;
      return s;
    },
  };
  return r;
}

/** Unsigned LEB128. */
export function u32(n) {
  const out = [];
  do {
    let byte = n & 0x7f;
    n = Math.floor(n / 128);
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return Buffer.from(out);
}

/** A length-prefixed UTF-8 string. */
export function name(s) {
  const b = Buffer.from(s, 'utf8');
  return Buffer.concat([u32(b.length), b]);
}

/**
 * The module's sections in order: `{ id, start, end, body, custom }` (`start`..`end` the whole
 * section in `bytes`, `body` its contents, `custom` the name of a custom section).
 */
export function sections(bytes) {
  if (bytes.readUInt32LE(0) !== 0x6d736100) throw new Error('not a wasm module');
  const r = reader(bytes, 8);
  const out = [];
  while (r.pos < bytes.length) {
    const start = r.pos;
    const id = bytes[r.pos++];
    const size = r.u32();
    const bodyStart = r.pos;
    const end = bodyStart + size;
    const custom = id === 0 ? r.name() : null;
    out.push({ id, start, end, body: bytes.subarray(bodyStart, end), custom });
    r.pos = end;
  }
  return out;
}

/**
 * The module without the custom sections the Worker never reads: "name" (function names for
 * stack traces and profiles), "producers" and "target_features" (the toolchain's versions and
 * the features the linker used).
 */
export function stripped(bytes) {
  const UNREAD = new Set(['name', 'producers', 'target_features']);
  const kept = sections(bytes).filter((s) => !UNREAD.has(s.custom));
  return Buffer.concat([bytes.subarray(0, 8), ...kept.map((s) => bytes.subarray(s.start, s.end))]);
}

/** The number of imported functions (they come first in the function index space). */
export function importedFunctions(bytes) {
  const imports = sections(bytes).find((s) => s.id === 2);
  if (!imports) return 0;
  const r = reader(imports.body);
  let functions = 0;
  const limits = () => {
    const flags = r.bytes[r.pos++];
    r.u32();
    if (flags & 1) r.u32();
  };
  for (let n = r.u32(); n > 0; n--) {
    r.name();
    r.name();
    const kind = r.bytes[r.pos++];
    if (kind === 0) {
      r.u32();
      functions++;
    } else if (kind === 1) {
      r.pos++;
      limits();
    } else if (kind === 2) limits();
    else if (kind === 3) r.pos += 2;
    else if (kind === 4) {
      r.pos++;
      r.u32();
    } else throw new Error(`unknown import kind ${kind}`);
  }
  return functions;
}

/** The bodies of the defined functions, in order. */
export function functionBodies(bytes) {
  const code = sections(bytes).find((s) => s.id === 10);
  if (!code) return [];
  const r = reader(code.body);
  const bodies = [];
  for (let n = r.u32(); n > 0; n--) {
    const size = r.u32();
    bodies.push(code.body.subarray(r.pos, r.pos + size));
    r.pos += size;
  }
  return bodies;
}

/** The function names of the "name" section, by function index (empty without one). */
export function functionNames(bytes) {
  const names = new Map();
  const section = sections(bytes).find((s) => s.custom === 'name');
  if (!section) return names;
  const r = reader(section.body);
  r.name();
  while (r.pos < section.body.length) {
    const id = section.body[r.pos++];
    const size = r.u32();
    const end = r.pos + size;
    if (id === 1) {
      for (let n = r.u32(); n > 0; n--) {
        const index = r.u32();
        names.set(index, r.name());
      }
    }
    r.pos = end;
  }
  return names;
}

/**
 * `bytes` with the function names of its "name" section replaced by `names` (index → name); the
 * section's other subsections (module, locals, …) are kept as they were. The module must have
 * function names already (its only caller, scripts/wasm-order.mjs, refuses one without).
 */
export function withFunctionNames(bytes, names) {
  const all = sections(bytes);
  const section = all.find((s) => s.custom === 'name');
  const entries = [...names].sort((a, b) => a[0] - b[0]).map(([i, n]) => Buffer.concat([u32(i), name(n)]));
  const functions = Buffer.concat([u32(entries.length), ...entries]);
  const subsections = [];
  const r = reader(section?.body ?? Buffer.alloc(0));
  if (section) r.name();
  let replaced = false;
  while (r.pos < r.bytes.length) {
    const start = r.pos;
    const id = r.bytes[r.pos++];
    const size = r.u32();
    r.pos += size;
    if (id === 1) {
      subsections.push(Buffer.concat([Buffer.from([1]), u32(functions.length), functions]));
      replaced = true;
    } else subsections.push(r.bytes.subarray(start, r.pos));
  }
  if (!replaced) throw new Error('the module has no function names to replace');
  const payload = Buffer.concat([name('name'), ...subsections]);
  const replacement = Buffer.concat([Buffer.from([0]), u32(payload.length), payload]);
  const parts = [bytes.subarray(0, 8)];
  for (const s of all) if (s !== section) parts.push(bytes.subarray(s.start, s.end));
  parts.push(replacement);
  return Buffer.concat(parts);
}

/** The module's exports, in order: `{ name, kind, index }`. */
export function exportsOf(bytes) {
  const section = sections(bytes).find((s) => s.id === 7);
  if (!section) return [];
  const r = reader(section.body);
  const out = [];
  for (let n = r.u32(); n > 0; n--) {
    const exported = r.name();
    const kind = r.bytes[r.pos++];
    out.push({ name: exported, kind, index: r.u32() });
  }
  return out;
}

/** `bytes` with only the exports `keep(export)` accepts. */
export function withExports(bytes, keep) {
  const kept = exportsOf(bytes).filter(keep);
  const entries = kept.map((e) => Buffer.concat([name(e.name), Buffer.from([e.kind]), u32(e.index)]));
  const body = Buffer.concat([u32(entries.length), ...entries]);
  const parts = [bytes.subarray(0, 8)];
  for (const s of sections(bytes)) {
    parts.push(s.id === 7 ? Buffer.concat([Buffer.from([7]), u32(body.length), body]) : bytes.subarray(s.start, s.end));
  }
  return Buffer.concat(parts);
}
