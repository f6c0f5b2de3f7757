// The MCP endpoint end to end: the real Worker in workerd, the official MCP TypeScript SDK
// client, and raw HTTP where the SDK cannot express a case.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request as httpRequest } from "node:http";
import { gunzipSync } from "node:zlib";
import { createHmac } from "node:crypto";
import { readDevVars } from "../../scripts/lib/devtoken.mjs";
import { startWorker, connect, post, postChunked, rpc, answerOf, INIT_PARAMS } from "./harness.mjs";
import { ROOT } from "../../scripts/lib/devtoken.mjs";

let worker;
before(async () => {
  worker = await startWorker();
});
after(async () => {
  await worker?.stop();
});

const names = (list) => list.tools.map((t) => t.name).sort();

test("the SDK client connects, negotiates 2025-11-25 and reads serverInfo", async () => {
  const client = await connect(worker);
  assert.equal(client.getServerVersion().name, "vibesell");
  assert.equal(client.getServerVersion().title, "VibeSell");
  assert.match(client.getInstructions(), /get_workspace_context/);
  assert.deepEqual(client.getServerCapabilities(), { tools: {}, resources: {} });
  await client.ping();
  await client.close();
});

test("initialize at every supported version is answered in that version's shape", async () => {
  for (const v of ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]) {
    const r = await post(worker, rpc("initialize", INIT_PARAMS(v)));
    assert.equal(r.status, 200, v);
    assert.equal(r.headers.get("mcp-session-id"), null, "never a session id");
    const result = r.json.result;
    assert.equal(result.protocolVersion, v);
    assert.equal(result.serverInfo.name, "vibesell");
    assert.equal("title" in result.serverInfo, v >= "2025-06-18", `title at ${v}`);
    assert.equal("icons" in result.serverInfo, v === "2025-11-25", `icons at ${v}`);
  }
  const unknown = await post(worker, rpc("initialize", INIT_PARAMS("2099-01-01")));
  assert.equal(unknown.json.result.protocolVersion, "2025-11-25");
});

test("instructions differ for read-only and acting connections", async () => {
  const read = await post(worker, rpc("initialize", INIT_PARAMS()), { token: worker.token({ scope: "mcp" }) });
  const act = await post(worker, rpc("initialize", INIT_PARAMS()), { token: worker.token({ scope: "mcp mcp:act" }) });
  assert.match(read.json.result.instructions, /read-only/);
  assert.match(act.json.result.instructions, /approval/);
  assert.notEqual(read.json.result.instructions, act.json.result.instructions);
});

test("tools/list follows the token: read-only, acting, Claude app", async () => {
  const read = await connect(worker, { scope: "mcp" });
  const act = await connect(worker, { scope: "mcp mcp:act" });
  const app = await connect(worker, { scope: "mcp mcp:act", app: true });
  const readTools = await read.listTools();
  const actTools = await act.listTools();
  const appTools = await app.listTools();
  for (const t of readTools.tools) assert.equal(t.annotations.readOnlyHint, true, t.name);
  assert.ok(names(readTools).includes("get_workspace_context"));
  assert.ok(names(readTools).every((n) => names(actTools).includes(n)), "acting adds to reading");
  assert.ok(names(actTools).includes("save_offer") && !names(actTools).includes("decide_approval"));
  assert.deepEqual(names(appTools), [...names(actTools), "decide_approval"].sort(), "the Claude app also decides");
  const decide = appTools.tools.find((t) => t.name === "decide_approval");
  assert.deepEqual(decide._meta.ui.visibility, ["app"], "hidden from the model by the host");
  for (const tool of actTools.tools) {
    assert.ok(tool.title && tool.description && tool.inputSchema && tool.outputSchema, tool.name);
    assert.equal(tool.annotations.destructiveHint, false);
    assert.match(tool._meta.ui.resourceUri, /^ui:\/\/vibesell\/card-[0-9a-f]{12}$/);
    assert.equal(tool._meta["ui/resourceUri"], tool._meta.ui.resourceUri);
    // One kind, or several (a question tool answers `choice`, then what was settled).
    const kinds = tool.outputSchema.oneOf ? tool.outputSchema.oneOf.map((v) => v.properties.kind.const) : [tool.outputSchema.properties.kind.const];
    assert.ok(kinds.length > 0 && kinds.every((k) => typeof k === "string"), tool.name);
  }
  await read.close();
  await act.close();
  await app.close();
});

test("tools/list from the Worker is the native snapshot: each description is its Rust declaration's", async () => {
  // tests/snapshots/tools_list.json is written natively from the tools' declarations
  // (`tools_list_snapshot`), so the Worker serving the same list serves their very text.
  const token = worker.token({ scope: "mcp mcp:act", app: true });
  const served = await post(worker, rpc("tools/list", {}), { token, headers: { "mcp-protocol-version": "2025-11-25" } });
  const uri = served.json.result.tools[0]._meta.ui.resourceUri;
  const result = JSON.parse(JSON.stringify(served.json.result).replaceAll(uri, "ui://vibesell/card-<hash>"));
  const snapshot = JSON.parse(readFileSync(join(ROOT, "tests/snapshots/tools_list.json"), "utf8"));
  assert.deepEqual(result, snapshot);
});

test("tools/list is shaped to the negotiated version", async () => {
  const old = await post(worker, rpc("tools/list"), { headers: { "mcp-protocol-version": "2024-11-05" } });
  const tool = old.json.result.tools[0];
  assert.equal(tool.annotations, undefined);
  assert.equal(tool.outputSchema, undefined);
  assert.ok(tool._meta.ui.resourceUri, "_meta.ui on every version");
  const mid = await post(worker, rpc("tools/list"));
  assert.ok(mid.json.result.tools[0].annotations, "no header means 2025-03-26: annotations");
  assert.equal(mid.json.result.tools[0].outputSchema, undefined);
});

test("the three tools work and their state persists", async () => {
  const sub = "persist@example.com";
  const client = await connect(worker, { sub });
  const empty = await client.callTool({ name: "get_workspace_context", arguments: {} });
  assert.equal(empty.isError, false);
  assert.equal(empty.structuredContent.kind, "workspace");
  assert.equal(empty.structuredContent.offer, undefined);
  assert.equal(empty.structuredContent.nextStep.tool, "save_offer");

  const offer = await client.callTool({
    name: "save_offer",
    arguments: {
      product: "Ledgerly",
      description: "Close automation for mid-market finance teams.",
      value_proposition: "Cuts month-end close from 10 days to 3.",
      proof_points: ["Used by 40 finance teams"],
      postal_address: "1 Main St, Springfield",
    },
  });
  assert.equal(offer.isError, false, offer.content[0].text);
  assert.equal(offer.structuredContent.kind, "offer");
  assert.equal(offer.structuredContent.changed, true);
  assert.match(offer.content[0].text, /Ledgerly/);

  const note = await client.callTool({ name: "remember", arguments: { note: "Prefers a formal tone", topic: "Tone" } });
  assert.equal(note.structuredContent.kind, "memory");
  assert.equal(note.structuredContent.topic, "tone");
  const again = await client.callTool({ name: "remember", arguments: { note: "Prefers a casual tone", topic: "tone" } });
  assert.equal(again.structuredContent.replaced, true);
  assert.equal(again.structuredContent.total, 1);

  // A note the user asks to forget is deleted by its id; the result still carries its text.
  const passing = await client.callTool({ name: "remember", arguments: { note: "Travelling until Friday" } });
  const forgot = await client.callTool({ name: "remember", arguments: { forget: passing.structuredContent.id } });
  assert.equal(forgot.isError, false, forgot.content[0].text);
  assert.deepEqual([forgot.structuredContent.forgotten, forgot.structuredContent.note, forgot.structuredContent.total], [true, "Travelling until Friday", 1]);
  // Gone once, the id is refused; with a note beside it, whether to save or delete is unclear.
  const gone = await client.callTool({ name: "remember", arguments: { forget: passing.structuredContent.id } });
  assert.equal(gone.isError, true);
  assert.equal(gone.content[0].text, `No note has the id ${passing.structuredContent.id}: get_workspace_context lists the notes with their ids.`);
  const both = await client.callTool({ name: "remember", arguments: { forget: note.structuredContent.id, note: "x" } });
  assert.equal(both.isError, true);
  assert.equal(
    both.content[0].text,
    "Invalid arguments for remember: `forget` deletes a note and is given alone, without `note` or `topic`. Fix the arguments (see the tool's inputSchema) and call it again.",
  );

  const ctx = await client.callTool({ name: "get_workspace_context", arguments: {} });
  assert.equal(ctx.structuredContent.offer.product, "Ledgerly");
  assert.deepEqual(ctx.structuredContent.memories.map((m) => m.note), ["Prefers a casual tone"]);
  assert.equal(ctx.structuredContent.journey[0].status, "done");
  await client.close();

  // Another user has another workspace.
  const other = await connect(worker, { sub: "someone-else@example.com" });
  const otherCtx = await other.callTool({ name: "get_workspace_context", arguments: {} });
  assert.equal(otherCtx.structuredContent.offer, undefined);
  await other.close();
});

test("state survives a restart of the Worker", async () => {
  const dir = mkdtempSync(join(tmpdir(), "vibesell-persist-"));
  const w = await startWorker({ persist: dir });
  try {
    const c1 = await connect(w, { sub: "restart@example.com" });
    await c1.callTool({ name: "save_offer", arguments: { product: "P", description: "D", value_proposition: "V" } });
    await c1.close();
    await w.restart();
    const c2 = await connect(w, { sub: "restart@example.com" });
    const ctx = await c2.callTool({ name: "get_workspace_context", arguments: {} });
    assert.equal(ctx.structuredContent.offer.product, "P");
    await c2.close();
  } finally {
    await w.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("older versions get the JSON in a text block instead of structuredContent", async () => {
  const r = await post(worker, rpc("tools/call", { name: "get_workspace_context", arguments: {} }), {
    headers: { "mcp-protocol-version": "2025-03-26" },
  });
  const result = r.json.result;
  assert.equal(result.structuredContent, undefined);
  assert.equal(result.content.length, 2);
  assert.equal(JSON.parse(result.content[1].text).kind, "workspace");
});

test("a 2025-03-26 batch containing initialize is refused whole, and none of it runs", async () => {
  const token = worker.token({ sub: "batch@example.com" });
  const headers = { "mcp-protocol-version": "2025-03-26" };
  const remember = (note, id) => rpc("tools/call", { name: "remember", arguments: { note, topic: note } }, id);
  const notes = async () => {
    const r = await post(worker, rpc("tools/call", { name: "get_workspace_context", arguments: {} }), { token, headers });
    return JSON.parse(r.json.result.content[1].text).memories.map((m) => m.note);
  };
  // The remember comes first, so a server answering in order would have run it by the time it
  // met initialize.
  const refused = await post(worker, [remember("batched", 1), rpc("initialize", INIT_PARAMS("2025-03-26"), 2), rpc("ping", undefined, 3)], { token, headers });
  assert.equal(refused.status, 400);
  assert.equal(refused.json.jsonrpc, "2.0");
  assert.ok(!("id" in refused.json), "one error for the whole batch, with no id (MCP-CONFORMANCE T-12)");
  assert.equal(refused.json.error.code, -32600);
  assert.match(refused.json.error.message, /initialize/);
  assert.deepEqual(await notes(), [], "the batch's remember did not run");
  // The same batch without initialize runs, each request answered in order.
  const ran = await post(worker, [remember("batched", 1), rpc("ping", undefined, 3)], { token, headers });
  assert.equal(ran.status, 200);
  assert.deepEqual(ran.json.map((m) => m.id), [1, 3]);
  assert.deepEqual(await notes(), ["batched"]);
});

test("a 2025-03-26 batch with a tool call the token may not make is a 403, and none of it runs", async () => {
  // An acting token from a client other than the Claude app may not call decide_approval. The 403
  // discards the batch's answers, so the remember before it must not have run: a client that
  // steps up and retries would otherwise save the note twice.
  const token = worker.token({ sub: "batch-scope@example.com", scope: "mcp mcp:act" });
  const headers = { "mcp-protocol-version": "2025-03-26" };
  const remember = rpc("tools/call", { name: "remember", arguments: { note: "stepped", topic: "stepped" } }, 1);
  const decide = rpc("tools/call", { name: "decide_approval", arguments: {} }, 2);
  const refused = await post(worker, [remember, rpc("ping", undefined, 3), decide], { token, headers });
  assert.equal(refused.status, 403);
  assert.match(refused.headers.get("www-authenticate"), /error="insufficient_scope"/);
  const r = await post(worker, rpc("tools/call", { name: "get_workspace_context", arguments: {} }), { token, headers });
  assert.deepEqual(JSON.parse(r.json.result.content[1].text).memories, [], "the batch's remember did not run");
});

test("whole-number floats are integer arguments (JSON Schema 2020-12)", async () => {
  // Raw text: JSON.stringify would write 5.0 as 5.
  const token = worker.token({ sub: "floats@example.com" });
  const headers = { "mcp-protocol-version": "2025-11-25" };
  const call = (name, args) =>
    post(worker, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`, { token, headers });
  const replies = (await call("list_replies", '{"limit":5.0}')).json.result;
  assert.doesNotMatch(replies.content[0].text, /integer/, "the handler ran: no campaign yet");
  const sized = (await call("size_sending_capacity", '{"volume":3000.0,"unit":"emails_per_month","steps":3e0}')).json.result;
  assert.equal(sized.isError, false, sized.content[0].text);
  const half = (await call("list_replies", '{"limit":5.5}')).json.result;
  assert.equal(half.isError, true);
  assert.match(half.content[0].text, /`limit` must be an integer/);
});

test("refusals: schema-invalid arguments are isError results that say what to fix", async () => {
  const client = await connect(worker);
  const cases = [
    [{ description: "d", value_proposition: "v" }, /`product` is required/],
    [{ product: "", description: "d", value_proposition: "v" }, /`product` must not be empty/],
    [{ product: 7, description: "d", value_proposition: "v" }, /`product` must be a string/],
    [{ product: "p", description: "d", value_proposition: "v", color: "red" }, /`color` is not a known field/],
    [{ product: "p", description: "d", value_proposition: "v", website: "ftp://x" }, /website/],
    [{ product: "x".repeat(121), description: "d", value_proposition: "v" }, /too long/],
  ];
  for (const [args, pattern] of cases) {
    const r = await client.callTool({ name: "save_offer", arguments: args });
    assert.equal(r.isError, true, JSON.stringify(args));
    assert.equal(r.structuredContent, undefined);
    assert.match(r.content[0].text, pattern);
  }
  await client.close();
});

test("a tool outside the token's scopes is a 403 step-up challenge", async () => {
  const r = await post(worker, rpc("tools/call", { name: "save_offer", arguments: {} }), {
    token: worker.token({ scope: "mcp" }),
    headers: { "mcp-protocol-version": "2025-11-25" },
  });
  assert.equal(r.status, 403);
  const challenge = r.headers.get("www-authenticate");
  assert.match(challenge, /error="insufficient_scope"/);
  assert.match(challenge, /scope="mcp mcp:act"/);
  assert.match(challenge, new RegExp(`resource_metadata="${worker.origin}/.well-known/oauth-protected-resource/v1/mcp"`));
});

test("forged, expired and misdirected access tokens are each the same bare 401", async () => {
  const [h, c] = worker.token().split(".");
  const header = JSON.parse(Buffer.from(h, "base64url"));
  const claims = JSON.parse(Buffer.from(c, "base64url"));
  const secret = Buffer.from(readDevVars().JWT_SIGNING_KEYS.split(",")[0].split(":")[1], "base64url");
  const enc = (o) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const sign = (hd, cl, { hash = "sha256", key = secret } = {}) => {
    const input = `${enc(hd)}.${enc(cl)}`;
    return `${input}.${createHmac(hash, key).update(input).digest("base64url")}`;
  };
  const now = Math.floor(Date.now() / 1000);
  const call = (token) => post(worker, rpc("tools/call", { name: "get_workspace_context", arguments: {} }), { token });
  // The control: the same construction with nothing changed is accepted.
  assert.equal((await call(sign(header, claims))).status, 200);
  const cases = {
    "alg none": `${enc({ ...header, alg: "none" })}.${enc(claims)}.`,
    "HS512 with the right key": sign({ ...header, alg: "HS512" }, claims, { hash: "sha512" }),
    RS256: `${enc({ ...header, alg: "RS256" })}.${enc(claims)}.${Buffer.alloc(256, 1).toString("base64url")}`,
    "bad signature": sign(header, claims, { key: Buffer.alloc(32, 7) }),
    "unknown kid": sign({ ...header, kid: "dev-retired" }, claims),
    "no kid": sign({ alg: header.alg, typ: header.typ }, claims),
    expired: sign(header, { ...claims, iat: now - 7200, exp: now - 3600 }),
    "wrong audience": sign(header, { ...claims, aud: `${worker.origin}/v1/other` }),
  };
  const description = "The access token is invalid or expired; get a new one.";
  for (const [name, token] of Object.entries(cases)) {
    const r = await call(token);
    assert.equal(r.status, 401, name);
    assert.equal(
      r.headers.get("www-authenticate"),
      `Bearer error="invalid_token", error_description="${description}", resource_metadata="${worker.origin}/.well-known/oauth-protected-resource/v1/mcp"`,
      name,
    );
    // Which check failed stays in the logs: every refusal has the same body.
    assert.equal(r.text, JSON.stringify({ error: "invalid_token", error_description: description }), name);
  }
});

test("unknown tools and bad tools/call params are JSON-RPC -32602", async () => {
  const unknown = await post(worker, rpc("tools/call", { name: "nope", arguments: {} }));
  assert.equal(unknown.status, 200);
  assert.equal(unknown.json.error.code, -32602);
  for (const params of [{}, { name: 3 }, { name: "save_offer", arguments: [] }, { name: "save_offer", arguments: "x" }]) {
    const r = await post(worker, rpc("tools/call", params));
    assert.equal(r.json.error.code, -32602, JSON.stringify(params));
  }
});

test("resources: the card is listed and readable under any card version", async () => {
  const client = await connect(worker);
  const { resources } = await client.listResources();
  assert.equal(resources.length, 1);
  const card = resources[0];
  assert.match(card.uri, /^ui:\/\/vibesell\/card-[0-9a-f]{12}$/);
  assert.equal(card.mimeType, "text/html;profile=mcp-app");
  const read = await client.readResource({ uri: card.uri });
  assert.equal(read.contents[0].mimeType, "text/html;profile=mcp-app");
  assert.match(read.contents[0].text, /^<!doctype html>/);
  const old = await client.readResource({ uri: "ui://vibesell/card-2f87d8dc967b" });
  assert.equal(old.contents[0].text, read.contents[0].text);
  assert.equal(old.contents[0].uri, "ui://vibesell/card-2f87d8dc967b");
  const tools = await client.listTools();
  assert.equal(tools.tools[0]._meta.ui.resourceUri, card.uri);
  await assert.rejects(client.readResource({ uri: "ui://vibesell/other" }), (e) => e.code === -32002);
  const templates = await client.listResourceTemplates();
  assert.equal(templates.resourceTemplates[0].uriTemplate, "ui://vibesell/card-{version}");
  // Display titles (2025-06-18's BaseMetadata) on the resource and its template alike.
  assert.equal(card.title, "VibeSell card");
  assert.equal(templates.resourceTemplates[0].title, card.title);
  await client.close();
  // MCP Apps hosts may negotiate an older version, or send no version header: the card's
  // `_meta.ui` is there for them too, as the tools' is.
  for (const v of [undefined, "2024-11-05", "2025-03-26", "2025-11-25"]) {
    const r = await post(worker, rpc("resources/read", { uri: card.uri }), { headers: { "mcp-protocol-version": v } });
    assert.equal(r.json.result.contents[0]._meta?.ui?.prefersBorder, true, `${v}`);
  }
  // Every list has one page: a cursor is one the server never issued.
  for (const method of ["tools/list", "resources/list", "resources/templates/list"]) {
    const r = await post(worker, rpc(method, { cursor: "abc" }));
    assert.equal(r.json.error.code, -32602, method);
  }
});

test("initialize needs a clientInfo with a string name and version", async () => {
  for (const clientInfo of [{}, { name: 5, version: "1" }, { name: "x" }, "x"]) {
    const r = await post(worker, rpc("initialize", { ...INIT_PARAMS(), clientInfo }));
    assert.equal(r.status, 200);
    assert.equal(r.json.error.code, -32602, JSON.stringify(clientInfo));
  }
});

test("error responses are acknowledged with 202, with or without an id", async () => {
  const error = { code: -32700, message: "Parse error" };
  for (const body of [{ jsonrpc: "2.0", error }, { jsonrpc: "2.0", id: null, error }, { jsonrpc: "2.0", id: 4, error }]) {
    const r = await post(worker, body, { headers: { "mcp-protocol-version": "2025-11-25" } });
    assert.equal(r.status, 202, JSON.stringify(body));
  }
});

test("one structured log line per request, with no token in it", async () => {
  const token = worker.token();
  const before = worker.requestLogs().length;
  const answer = await post(worker, rpc("tools/call", { name: "get_workspace_context", arguments: {} }), { token });
  await new Promise((r) => setTimeout(r, 100));
  const lines = worker.requestLogs().slice(before);
  assert.equal(lines.length, 1);
  const line = lines[0];
  assert.equal(line.route, "/v1/mcp");
  assert.equal(line.rpc, "tools/call");
  assert.equal(line.tool, "get_workspace_context");
  assert.equal(line.outcome, "ok");
  assert.equal(typeof line.ms, "number");
  assert.match(line.rid, /^req_/);
  assert.equal(answer.headers.get("x-request-id"), line.rid, "the answer names its log line");
  assert.ok(!worker.logs.join("\n").includes(token), "the token never reaches the logs");
});

test("routine requests leave no log line unless LOG_REQUESTS=all; a bad token always does", async () => {
  // Each twice: the Worker's JavaScript keeps the heads of unlogged answers and reuses them.
  const routine = async (w) => {
    const answers = [];
    for (let i = 0; i < 2; i++) {
      answers.push(await post(w, rpc("initialize", INIT_PARAMS("2025-11-25"))));
      answers.push(await post(w, rpc("tools/list", {}), { headers: { "mcp-protocol-version": "2025-11-25" } }));
      answers.push(await post(w, rpc("initialize", INIT_PARAMS("2025-11-25")), { token: null }));
      answers.push(await answerOf(await fetch(w.url + "/.well-known/oauth-protected-resource/v1/mcp")));
    }
    // Framing aside: `tools/list` goes gzip-compressed once the runtime has compressed it.
    const aside = ["date", "x-request-id", "content-length", "transfer-encoding", "content-encoding"];
    const heads = answers.map((a) => [a.status, [...a.headers].filter(([name]) => !aside.includes(name))]);
    assert.deepEqual(heads.slice(4), heads.slice(0, 4), "the same answers the second time");
    assert.deepEqual(heads.slice(0, 4).map(([status]) => status), [200, 200, 401, 200]);
    assert.match(Object.fromEntries(heads[2][1])["www-authenticate"], /^Bearer resource_metadata=/);
    return answers;
  };
  const settled = () => new Promise((r) => setTimeout(r, 100));
  const before = worker.requestLogs().length;
  const quiet = await routine(worker);
  assert.ok(quiet.every((a) => !a.headers.has("x-request-id")), "no log line, no request id to name it");
  await post(worker, rpc("initialize", INIT_PARAMS("2025-11-25")), { token: "not.a.token" });
  await settled();
  const lines = worker.requestLogs().slice(before);
  assert.deepEqual(
    lines.map((l) => [l.status, l.outcome, l.detail !== undefined]),
    [[401, "unauthorized", true]],
    "only the bad token is logged, with why it failed",
  );
  const verbose = await startWorker({ vars: { LOG_REQUESTS: "all" } });
  try {
    const answers = await routine(verbose);
    await settled();
    // The isolate's start ran one request through the Worker's own entry (`edge::rehearse_entry`),
    // named by its request id; with every request logged, it is too.
    const [rehearsal, ...served] = verbose.requestLogs();
    assert.deepEqual(
      [rehearsal.rid, rehearsal.method, rehearsal.route, rehearsal.status, rehearsal.outcome],
      ["rehearsal", "POST", "/v1/mcp", 401, "challenge"],
    );
    const once = [
      ["POST", "/v1/mcp", "initialize", 200, "ok"],
      ["POST", "/v1/mcp", "tools/list", 200, "ok"],
      ["POST", "/v1/mcp", undefined, 401, "challenge"],
      ["GET", "/.well-known/oauth-protected-resource/v1/mcp", undefined, 200, "ok"],
    ];
    assert.deepEqual(
      served.map((l) => [l.method, l.route, l.rpc, l.status, l.outcome]),
      [...once, ...once],
    );
    // Logged, each names its line.
    assert.deepEqual(
      answers.map((a) => a.headers.get("x-request-id")),
      served.map((l) => l.rid),
    );
  } finally {
    await verbose.stop();
  }
});

/** The start lines logged so far (one per isolate that loaded the module). */
async function startLines(w) {
  for (let i = 0; i < 40; i++) {
    const lines = w.events("start");
    if (lines.length > 0) return lines;
    await new Promise((r) => setTimeout(r, 50));
  }
  return [];
}

test("an isolate reads its configuration and rehearses its hot paths at start, and says so", async () => {
  // The rehearsal runs inside the runtime's global scope, where I/O, timers and random values
  // are refused: a rehearsed path that needed one would show here as a status other than the
  // real one.
  const lines = await startLines(worker);
  assert.ok(lines.length >= 1, "a start line is logged");
  for (const line of lines) assert.deepEqual(line, { event: "start", config: "ok", rehearsal: "ok" });
});

test("a bad configuration is named in the start line, before any request", async () => {
  const broken = await startWorker({ vars: { JWT_SIGNING_KEYS: "no-colon-here" } });
  try {
    const [line] = await startLines(broken);
    assert.match(line.config, /JWT_SIGNING_KEYS/);
    assert.equal(line.rehearsal, "ok", "the rehearsal has its own configuration");
    assert.ok(!broken.logs.join("\n").includes("no-colon-here"), "the value itself is not logged");
  } finally {
    await broken.stop();
  }
});

test("answers of different sizes sent at the same time each arrive whole", async () => {
  // Each body leaves wasm memory, which the Worker frees and reuses at once, through one
  // crossing (edge::respond): a body sent from memory already reused would carry bytes of
  // another answer here.
  const token = worker.token();
  const list = (await post(worker, rpc("tools/list", {}), { token })).text;
  const init = (await post(worker, rpc("initialize", INIT_PARAMS("2025-11-25")), { token })).text;
  const answers = await Promise.all(
    Array.from({ length: 24 }, (_, i) =>
      post(worker, i % 2 ? rpc("tools/list", {}) : rpc("initialize", INIT_PARAMS("2025-11-25")), { token }),
    ),
  );
  answers.forEach((a, i) => assert.equal(a.text, i % 2 ? list : init, `answer ${i}`));
});

/** A POST through node:http, which neither asks for nor decodes compression: the raw bytes. */
function rawPost(url, body, headers) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", headers: { "content-type": "application/json", ...headers } }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, bytes: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

// Straight into workerd (as Cloudflare's front line hands requests to a Worker), so that the
// Worker sees the client's own Accept-Encoding: Miniflare's entry Worker, like Cloudflare, asks
// every Worker for "br, gzip" and decodes for clients that did not.
test("tools/list and the card go gzip-compressed to a client that accepts it, decoding to the plain answer", async () => {
  const token = worker.token();
  const headers = {
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${token}`,
    "mcp-protocol-version": "2025-11-25",
    host: new URL(worker.url).host,
  };
  const uri = (await post(worker, rpc("resources/list", {}), { token })).json.result.resources[0].uri;
  const cases = [
    { body: rpc("tools/list", {}, 7), smaller: 4 },
    { body: rpc("resources/read", { uri }, "card-1"), smaller: 3 },
  ];
  for (const { body, smaller } of cases) {
    const plain = await rawPost(worker.directUrl + "/v1/mcp", body, headers);
    assert.equal(plain.status, 200);
    assert.equal(plain.headers["content-encoding"], undefined);
    assert.equal(plain.headers.vary, "accept-encoding");
    // The runtime compresses a shared answer after the first request that could use it asks.
    let zipped;
    for (let i = 0; i < 50; i++) {
      zipped = await rawPost(worker.directUrl + "/v1/mcp", body, { ...headers, "accept-encoding": "gzip, deflate, br" });
      if (zipped.headers["content-encoding"] === "gzip") break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(zipped.status, 200);
    assert.equal(zipped.headers["content-encoding"], "gzip", body.method);
    assert.equal(zipped.headers["content-type"], "application/json");
    assert.equal(zipped.headers.vary, "accept-encoding");
    // A routine answer has no log line, so no request id to name it.
    assert.equal(zipped.headers["x-request-id"], undefined);
    assert.equal(gunzipSync(zipped.bytes).toString(), plain.bytes.toString(), body.method);
    assert.ok(zipped.bytes.length * smaller < plain.bytes.length, `${body.method}: ${zipped.bytes.length} of ${plain.bytes.length}`);
  }
  // initialize is shared too, but small: it goes as it is.
  const init = await rawPost(worker.directUrl + "/v1/mcp", rpc("initialize", INIT_PARAMS("2025-11-25"), 1), {
    ...headers,
    "accept-encoding": "gzip",
  });
  assert.equal(init.headers["content-encoding"], undefined);
  assert.equal(init.headers["content-type"], "application/json");
  assert.equal(init.headers["x-request-id"], undefined);
  assert.equal(JSON.parse(init.bytes.toString()).result.protocolVersion, "2025-11-25");
  // The SDK client reads the compressed answers (through Miniflare's entry, which passes them on).
  const client = await connect(worker);
  assert.ok((await client.listTools()).tools.length > 30);
  assert.match((await client.readResource({ uri })).contents[0].text, /^<!doctype html>/);
  await client.close();
});

// Writes `total` bytes in 64 KiB chunks as fast as the connection takes them, stopping early once
// the answer begins. Returns a function that says how many bytes were written.
function pump(req, answered, total) {
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  let sent = 0;
  const more = () => {
    while (!answered() && sent < total) {
      const piece = chunk.subarray(0, Math.min(chunk.length, total - sent));
      sent += piece.length;
      if (!req.write(piece)) return void req.once("drain", more);
    }
    if (!answered()) req.end();
  };
  more();
  return () => sent;
}

test("a body over 1 MiB is a 413, whether its length is announced or not, and the Worker goes on answering", async () => {
  const token = worker.token();
  const big = JSON.stringify(rpc("tools/list", { padding: "x".repeat(1024 * 1024) }));
  // Announced: refused from the head, the body never read.
  const announced = await post(worker, big, { token });
  assert.equal(announced.status, 413);
  assert.match(announced.json.error.message, /Payload Too Large/);
  // Not announced: read, measured, then refused.
  const chunked = await postChunked(worker, "/v1/mcp", big, {
    "content-type": "application/json",
    accept: "application/json",
    authorization: `Bearer ${token}`,
  });
  assert.equal(chunked.status, 413, chunked.text);
  assert.match(chunked.json.error.message, /Payload Too Large/);
  const after = await Promise.all(Array.from({ length: 4 }, () => post(worker, rpc("tools/list", {}), { token })));
  for (const a of after) assert.equal(a.status, 200);
});

test("a POST without a token is answered 401 without its body being read", async () => {
  // A body that stalls after its first bytes: a Worker that waited for it would not answer until
  // the test gives up on it. The entry module leaves the body of a request to the MCP endpoint
  // without credentials unread (src/edge/entry.js, MCP_URL), since the 401 comes first.
  const r = await postChunked(
    worker,
    "/v1/mcp",
    (req) => {
      req.write('{"jsonrpc": "2.0", "id": 1, ');
      setTimeout(() => req.destroy(), 5000).unref();
    },
    { "content-type": "application/json", accept: "application/json, text/event-stream" },
  );
  assert.equal(r.status, 401, r.text);
  assert.match(r.headers["www-authenticate"] ?? "", /^Bearer .*resource_metadata=/);
  assert.ok(r.waited < 2500, `answered after ${r.waited} ms: the body was waited for`);
  // With a token, the same endpoint still reads its body.
  assert.equal((await post(worker, rpc("tools/list", {}), { token: worker.token() })).status, 200);
});

test("a body sent without its length is refused once it passes 1 MiB, without the rest being read", async () => {
  // An endless body: read whole, it would fill the isolate's memory before it could be refused.
  // The writer stops by itself at 512 MiB, so that a Worker reading it all fails this test
  // rather than hang it.
  let sent;
  const r = await postChunked(
    worker,
    "/v1/mcp",
    (req, answered) => {
      sent = pump(req, answered, 512 * 1024 * 1024);
    },
    { "content-type": "application/json", accept: "application/json", authorization: `Bearer ${worker.token()}` },
  );
  assert.equal(r.status, 413, r.text);
  assert.match(r.json.error.message, /Payload Too Large/);
  assert.ok(sent() < 64 * 1024 * 1024, `${sent()} bytes were sent before the answer`);
  assert.equal((await post(worker, rpc("tools/list", {}), { token: worker.token() })).status, 200);
});
