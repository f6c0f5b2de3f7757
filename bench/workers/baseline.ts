// The baseline: the VibeSell connector as most teams would write it in TypeScript on Workers,
// for `npm run bench` only. It follows the official MCP SDK's documented stateless pattern (a
// new McpServer and a new WebStandardStreamableHTTPServerTransport per request, JSON
// responses), declares the same three tools with the same input and output schemas through
// zod, verifies the same access tokens with `jose`, and keeps each workspace in a SQLite-backed
// Durable Object, created once in the object's constructor (the usual idiom).
//
// It is a fair opponent, not a strawman: nothing is done per request that the SDK pattern does
// not require, the schema is created once per object, and the JWT key is imported once per
// isolate. It is never deployed and has no OAuth server (so no refresh scenario).
import { DurableObject } from "cloudflare:workers";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { jwtVerify } from "jose";
import { z } from "zod";

interface Env {
  PUBLIC_URL: string;
  JWT_SIGNING_KEYS: string;
  WORKSPACE: DurableObjectNamespace<Workspace>;
}

interface Principal {
  sub: string;
  ws: string;
  clientId: string;
  read: boolean;
  act: boolean;
  app: boolean;
}

// ---- schemas (the same JSON Schemas our tools/list advertises) ----------------------------

const STEPS = [
  ["offer", "Describe what you sell", ["save_offer"], "Everything else (targeting, emails, estimates) is built from the offer."],
  ["target", "Define the ideal customer", ["save_target", "save_target_filters", "confirm_target"], "The target decides which people are searched and what the emails say."],
  ["lead_pool", "Size the lead pool", ["estimate_lead_pool", "preview_lead_sample"], "Counting and sampling the matching people shows whether the target is worth a campaign."],
  ["sequence", "Write and approve the emails", ["save_playbook", "save_sequence", "approve_sequence"], "The emails must be written and approved by the user before anything is sent."],
  ["first_email", "Check the first email", ["check_first_email"], "Checking the first email as a prospect will see it catches mistakes before they go out."],
  ["sizing", "Size the sending capacity", ["size_sending_capacity", "confirm_sizing"], "The wanted volume decides how many mailboxes and domains are needed."],
  ["sending_source", "Choose the sending addresses", ["choose_sending_source"], "Sending addresses are either ready now or created under the user's brand."],
  ["domains", "Pick domains and mailboxes", ["propose_domains", "propose_warmed_domains", "propose_email"], "The domains and mailbox names are what prospects will see."],
  ["setup", "Order the sending setup", ["order_sending_setup", "get_sending_setup"], "Buying domains and creating mailboxes costs money, so it is an approval the user decides."],
  ["warmup", "Warm up the mailboxes", ["start_warmup", "get_sending_setup"], "New mailboxes must warm up before cold emails, or they land in spam."],
  ["leads", "Import the leads", ["import_leads"], "Importing leads uses credits, so it is an approval the user decides."],
  ["campaign", "Stage and launch the campaign", ["stage_campaign", "estimate_campaign_plan", "launch_campaign"], "Launching sends real emails, so it is an approval the user decides."],
  ["replies", "Read the replies", ["list_replies", "get_campaign"], "Replies are where the campaign pays off."],
] as const;
const STEP_NAMES = STEPS.map((s) => s[0]) as unknown as [string, ...string[]];

const Step = z.enum(STEP_NAMES).describe("Which step.");
const Offer = {
  product: z.string().describe("The product or service name."),
  description: z.string().describe("What it is and what it does."),
  valueProposition: z.string().describe("The outcome a customer gets."),
  companyName: z.string().optional().describe("The selling company."),
  website: z.string().optional().describe("The company's website."),
  pricing: z.string().optional().describe("Pricing in a sentence."),
  proofPoints: z.array(z.string()).optional().describe("Facts that make the pitch credible (customers, results, awards)."),
  callToAction: z.string().optional().describe("What a prospect is asked to do."),
  postalAddress: z.string().optional().describe("The sender's postal address, required in every email's footer (CAN-SPAM)."),
};
const Memory = z.object({
  id: z.number().int().describe("Its id."),
  topic: z.string().nullable().optional().describe("Its topic, when it has one; a new note on the same topic replaces it."),
  note: z.string().describe("The note."),
  updatedAt: z.number().int().describe("Last saved (ms since the epoch)."),
});
const WorkspaceView = {
  kind: z.literal("workspace"),
  workspaceId: z.string().describe("The workspace id."),
  createdAt: z.number().int().describe("When the workspace was created (ms since the epoch)."),
  canAct: z.boolean().describe("Whether this connection can act (has `mcp:act`) or only read."),
  offer: z.object(Offer).optional().describe("The offer, once saved."),
  memories: z.array(Memory).describe("The most recent notes, newest first."),
  journey: z
    .array(z.object({ step: Step, title: z.string().describe("For people."), status: z.enum(["done", "current", "todo"]).describe("Done, current or to do.") }))
    .describe("Every step of the journey with its status."),
  nextStep: z
    .object({ step: Step, title: z.string(), tool: z.string().optional(), why: z.string() })
    .optional()
    .describe("What to do next; absent when every step is done."),
};
const RememberInput = {
  note: z.string().min(1).max(1000).optional().describe('The fact or preference, in one or two sentences (e.g. "Prefers a formal tone; never mention pricing in the first email"). Left out with `forget`.'),
  topic: z.string().min(1).max(60).optional().describe("A short topic such as `tone` or `sender_name`. A note with a topic replaces the previous note on that topic; without one it is added."),
  forget: z.number().int().min(1).optional().describe("The id of a note to delete, when the user asks to forget it (get_workspace_context lists the notes with their ids). Given alone. The result carries the deleted note's text."),
};
const MemoryView = {
  kind: z.literal("memory"),
  id: z.number().int().describe("The note's id."),
  topic: z.string().optional().describe("Its topic."),
  note: z.string().describe("The note."),
  savedAt: z.number().int().describe("When it was saved (ms since the epoch)."),
  replaced: z.boolean().describe("Whether it replaced the previous note on its topic."),
  forgotten: z.boolean().describe("Whether it was deleted (`forget`) rather than saved."),
  total: z.number().int().describe("Notes in the workspace now."),
};
const SaveOfferInput = {
  product: z.string().min(1).max(120).describe("The product or service name."),
  description: z.string().min(1).max(1000).describe("What it is and what it does, in a few sentences."),
  value_proposition: z.string().min(1).max(500).describe('The outcome a customer gets, in one sentence (e.g. "Cuts month-end close from 10 days to 3").'),
  company_name: z.string().min(1).max(120).optional().describe("The selling company's name."),
  website: z.string().min(1).max(200).optional().describe("The company's website, starting with https:// or http://."),
  pricing: z.string().min(1).max(200).optional().describe("Pricing in a sentence, if the user wants it used."),
  proof_points: z.array(z.string().min(1).max(300)).max(10).optional().describe("Facts that make the pitch credible: customers, results, awards (up to 10)."),
  call_to_action: z.string().min(1).max(200).optional().describe('What a prospect is asked to do, e.g. "Book a 20-minute demo".'),
  postal_address: z.string().min(1).max(300).optional().describe("The sender's postal address. Every cold email must show it (CAN-SPAM), so campaigns cannot launch without it."),
};
const OfferView = { kind: z.literal("offer"), ...Offer, changed: z.boolean().describe("Whether this call changed the saved offer."), savedAt: z.number().int().describe("When it was saved (ms since the epoch).") };

const CARD_URI = "ui://vibesell/card-baseline";
const meta = { ui: { resourceUri: CARD_URI }, "ui/resourceUri": CARD_URI };

// ---- the MCP server, built per request as the SDK's stateless example does ------------------

function buildServer(env: Env, principal: Principal, requestId: string): McpServer {
  const server = new McpServer(
    { name: "vibesell", version: "0.3.0", title: "VibeSell" },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        "VibeSell finds B2B prospects and runs cold email campaigns for the user, from their VibeSell workspace. Start with get_workspace_context: it says what is set up and which tool comes next.",
    },
  );
  const call = async (tool: string, args: unknown) => {
    const stub = env.WORKSPACE.get(env.WORKSPACE.idFromName(principal.ws));
    return stub.callTool(tool, args, principal, requestId);
  };
  server.registerTool(
    "get_workspace_context",
    {
      title: "Get workspace context",
      description:
        "Start here. Returns the user's VibeSell workspace: what they sell, what has been set up so far (target, leads, emails, sending setup, campaign), notes remembered from earlier conversations, every step of the journey with its status, and the next step with the tool to call. Call it at the start of a conversation and whenever unsure what comes next.",
      inputSchema: {},
      outputSchema: WorkspaceView,
      annotations: { title: "Get workspace context", readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      _meta: meta,
    },
    async (args) => call("get_workspace_context", args),
  );
  if (principal.act) {
    server.registerTool(
      "remember",
      {
        title: "Remember or forget a note",
        description:
          "Keeps a note about the user or their business (a preference, a fact, a decision) in their VibeSell workspace, so later conversations can use it; get_workspace_context returns the notes. Give a topic to replace an earlier note on the same topic. Only note what the user said or confirmed. When the user asks to forget a note, pass its id as `forget` instead. Returns the note saved or deleted.",
        inputSchema: RememberInput,
        outputSchema: MemoryView,
        annotations: { title: "Remember or forget a note", readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
        _meta: meta,
      },
      async (args) => call("remember", args),
    );
    server.registerTool(
      "save_offer",
      {
        title: "Save the offer",
        description:
          "Saves what the user sells: product, description, value proposition, and optionally company, website, pricing, proof points, call to action and postal address. This is the first step of the journey; targeting and emails are built from it. Ask the user for anything you do not know rather than inventing it. Saving again replaces the whole offer, so pass every field you want to keep. Returns the saved offer.",
        inputSchema: SaveOfferInput,
        outputSchema: OfferView,
        annotations: { title: "Save the offer", readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
        _meta: meta,
      },
      async (args) => call("save_offer", args),
    );
  }
  return server;
}

// ---- authentication ------------------------------------------------------------------------

let keys: Map<string, Uint8Array> | undefined;
function signingKeys(env: Env): Map<string, Uint8Array> {
  if (!keys) {
    keys = new Map();
    for (const part of env.JWT_SIGNING_KEYS.split(",")) {
      const [kid, secret] = part.trim().split(":");
      const b64 = secret.replace(/-/g, "+").replace(/_/g, "/");
      keys.set(kid, Uint8Array.from(atob(b64 + "===".slice((b64.length + 3) % 4)), (c) => c.charCodeAt(0)));
    }
  }
  return keys;
}

async function authenticate(request: Request, env: Env): Promise<Principal | Response> {
  const metadata = `${env.PUBLIC_URL}/.well-known/oauth-protected-resource/v1/mcp`;
  const header = request.headers.get("authorization");
  if (!header) {
    return Response.json(
      { error: "invalid_token", error_description: "Authorization needed: send an OAuth bearer access token." },
      { status: 401, headers: { "www-authenticate": `Bearer resource_metadata="${metadata}", scope="mcp mcp:act"`, "cache-control": "no-store" } },
    );
  }
  const token = header.match(/^Bearer\s+(\S+)$/i)?.[1];
  try {
    if (!token) throw new Error("malformed");
    const { payload } = await jwtVerify(token, (h) => {
      const key = h.kid ? signingKeys(env).get(h.kid) : undefined;
      if (!key) throw new Error("unknown kid");
      return key;
    }, {
      algorithms: ["HS256"],
      typ: "at+jwt",
      issuer: env.PUBLIC_URL,
      audience: `${env.PUBLIC_URL}/v1/mcp`,
      clockTolerance: 30,
      requiredClaims: ["exp", "sub", "ws", "client_id", "scope"],
    });
    const scopes = String(payload.scope).split(" ");
    return {
      sub: String(payload.sub),
      ws: String(payload.ws),
      clientId: String(payload.client_id),
      read: scopes.includes("mcp"),
      act: scopes.includes("mcp:act"),
      app: payload.app === true,
    };
  } catch {
    const description = "The access token is invalid or expired; get a new one.";
    return Response.json(
      { error: "invalid_token", error_description: description },
      {
        status: 401,
        headers: {
          "www-authenticate": `Bearer error="invalid_token", error_description="${description}", resource_metadata="${metadata}"`,
          "cache-control": "no-store",
        },
      },
    );
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/health") return new Response("ok");
    if (url.pathname !== "/v1/mcp") return Response.json({ error: "not_found" }, { status: 404 });
    if (request.method !== "POST") {
      return Response.json({ error: "method_not_allowed" }, { status: 405, headers: { allow: "POST, OPTIONS" } });
    }
    const principal = await authenticate(request, env);
    if (principal instanceof Response) {
      // Read the unread body so workerd keeps the connection alive: an unread body makes it
      // close the connection, which would handicap the baseline in the 401 scenario.
      await request.arrayBuffer();
      return principal;
    }
    const requestId = request.headers.get("cf-ray") ?? crypto.randomUUID();
    const server = buildServer(env, principal, requestId);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    const response = await transport.handleRequest(request);
    return response;
  },
};

// ---- the workspace Durable Object ------------------------------------------------------------

type ToolResult = { content: { type: "text"; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };

export class Workspace extends DurableObject<Env> {
  sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    // The usual idiom: create the schema once per object instance.
    this.sql.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    this.sql.exec("CREATE TABLE IF NOT EXISTS offer (id INTEGER PRIMARY KEY CHECK (id = 1), doc TEXT NOT NULL, updated_at INTEGER NOT NULL)");
    this.sql.exec(
      "CREATE TABLE IF NOT EXISTS memories (id INTEGER PRIMARY KEY AUTOINCREMENT, topic TEXT UNIQUE, note TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)",
    );
  }

  private open(p: Principal, now: number): void {
    const owner = this.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'owner'").toArray()[0];
    if (owner && owner.value !== p.sub) throw new Error("workspace owned by another subject");
    if (!owner) {
      this.ctx.storage.transactionSync(() => {
        this.sql.exec("INSERT OR IGNORE INTO meta (key, value) VALUES ('owner', ?)", p.sub);
        this.sql.exec("INSERT OR IGNORE INTO meta (key, value) VALUES ('workspace', ?)", p.ws);
        this.sql.exec("INSERT OR IGNORE INTO meta (key, value) VALUES ('created_at', ?)", String(now));
      });
    }
  }

  async callTool(tool: string, args: Record<string, unknown>, p: Principal, requestId: string): Promise<ToolResult> {
    const now = Date.now();
    try {
      this.open(p, now);
      switch (tool) {
        case "get_workspace_context":
          return this.context(p, now);
        case "remember":
          return this.remember(args as { note?: string; topic?: string; forget?: number }, now);
        case "save_offer":
          return this.saveOffer(args as Record<string, unknown>, now);
        default:
          return { content: [{ type: "text", text: `Unknown tool ${tool}.` }], isError: true };
      }
    } catch (e) {
      console.error(JSON.stringify({ requestId, tool, error: String(e) }));
      return { content: [{ type: "text", text: `${tool} failed (reference ${requestId}).` }], isError: true };
    }
  }

  private context(p: Principal, now: number): ToolResult {
    const row = this.sql.exec<{ doc: string }>("SELECT doc, updated_at FROM offer WHERE id = 1").toArray()[0];
    const offer = row ? JSON.parse(row.doc) : undefined;
    const memories = this.sql
      .exec<{ id: number; topic: string | null; note: string; updated_at: number }>(
        "SELECT id, topic, note, updated_at FROM memories ORDER BY updated_at DESC, id DESC LIMIT ?",
        20,
      )
      .toArray()
      .map((m) => ({ id: m.id, ...(m.topic === null ? {} : { topic: m.topic }), note: m.note, updatedAt: m.updated_at }));
    const created = this.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'created_at'").toArray()[0];
    const done = new Set(offer ? ["offer"] : []);
    const current = STEPS.find((s) => !done.has(s[0]));
    const journey = STEPS.map(([step, title]) => ({ step, title, status: done.has(step) ? "done" : step === current?.[0] ? "current" : "todo" }));
    const available = (t: string) => t === "get_workspace_context" || (p.act && (t === "remember" || t === "save_offer"));
    let nextStep;
    if (current) {
      const tool = current[2].find(available);
      nextStep = { step: current[0], title: current[1], ...(tool ? { tool } : {}), why: current[3] };
    }
    let text = "**VibeSell workspace**\n";
    text += offer ? `- Offer: ${offer.product} — ${offer.valueProposition}\n` : "- Offer: not described yet\n";
    text += `- Journey: ${done.size} of ${STEPS.length} steps done\n`;
    if (memories.length) text += `- ${memories.length} remembered note(s) in structuredContent.memories\n`;
    if (nextStep) text += nextStep.tool ? `\n**Next:** ${nextStep.title} — call \`${nextStep.tool}\`. ${nextStep.why}` : `\n**Next:** ${nextStep.title}. ${nextStep.why}`;
    const view = {
      kind: "workspace",
      workspaceId: p.ws,
      createdAt: created ? Number(created.value) : now,
      canAct: p.act,
      ...(offer ? { offer } : {}),
      memories,
      journey,
      ...(nextStep ? { nextStep } : {}),
    };
    return { content: [{ type: "text", text }], structuredContent: view };
  }

  private saveOffer(args: Record<string, unknown>, now: number): ToolResult {
    const pick = (k: string) => (typeof args[k] === "string" && (args[k] as string).trim() ? (args[k] as string).trim() : undefined);
    const offer = {
      product: pick("product"),
      description: pick("description"),
      valueProposition: pick("value_proposition"),
      companyName: pick("company_name"),
      website: pick("website"),
      pricing: pick("pricing"),
      proofPoints: Array.isArray(args.proof_points) ? (args.proof_points as string[]).map((x) => x.trim()).filter(Boolean) : undefined,
      callToAction: pick("call_to_action"),
      postalAddress: pick("postal_address"),
    };
    const doc = JSON.stringify(offer);
    const old = this.sql.exec<{ doc: string; updated_at: number }>("SELECT doc, updated_at FROM offer WHERE id = 1").toArray()[0];
    const changed = old?.doc !== doc;
    if (changed) {
      this.sql.exec(
        "INSERT INTO offer (id, doc, updated_at) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at",
        doc,
        now,
      );
    }
    const view = { kind: "offer", ...JSON.parse(doc), changed, savedAt: changed ? now : old!.updated_at };
    return { content: [{ type: "text", text: `${changed ? "Saved" : "No change to"} the offer **${offer.product}**.` }], structuredContent: view };
  }

  private remember(args: { note?: string; topic?: string; forget?: number }, now: number): ToolResult {
    const refuse = (text: string): ToolResult => ({ content: [{ type: "text", text }], isError: true });
    if (args.forget !== undefined) {
      if (args.note !== undefined || args.topic !== undefined) return refuse("`forget` deletes a note and is given alone, without `note` or `topic`.");
      const gone = this.sql
        .exec<{ id: number; topic: string | null; note: string; updated_at: number }>("DELETE FROM memories WHERE id = ? RETURNING id, topic, note, updated_at", args.forget)
        .toArray()[0];
      if (!gone) return refuse(`No note has the id ${args.forget}: get_workspace_context lists the notes with their ids.`);
      const left = this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM memories").one().n;
      const view = { kind: "memory", id: gone.id, ...(gone.topic ? { topic: gone.topic } : {}), note: gone.note, savedAt: gone.updated_at, replaced: false, forgotten: true, total: left };
      return { content: [{ type: "text", text: "Forgot the note." }], structuredContent: view };
    }
    if (!args.note?.trim()) return refuse("`note` and `topic` must not be blank; to delete a note, give only `forget` with its id.");
    const topic = args.topic?.trim().toLowerCase() ?? null;
    const existing = topic ? this.sql.exec("SELECT id FROM memories WHERE topic = ?", topic).toArray()[0] : undefined;
    const total = this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM memories").one().n;
    const m = this.sql
      .exec<{ id: number; topic: string | null; note: string; updated_at: number }>(
        "INSERT INTO memories (topic, note, created_at, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT(topic) DO UPDATE SET note = excluded.note, updated_at = excluded.updated_at RETURNING id, topic, note, updated_at",
        topic,
        args.note.trim(),
        now,
        now,
      )
      .one();
    const view = { kind: "memory", id: m.id, ...(m.topic ? { topic: m.topic } : {}), note: m.note, savedAt: m.updated_at, replaced: !!existing, forgotten: false, total: existing ? total : total + 1 };
    return { content: [{ type: "text", text: "Remembered the note." }], structuredContent: view };
  }
}
