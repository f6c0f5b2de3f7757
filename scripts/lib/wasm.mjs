// Reading the parts of a wasm module that the build's scripts touch: its sections, and the
// function names of its "name" section (https://webassembly.github.io/spec/core/appendix/custom.html).

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
