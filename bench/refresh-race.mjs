// Concurrent refresh of one token (issue 45): N refresh requests sent at once with the same
// refresh token, then a count of the refresh tokens of that grant still live. Part of
// `npm run bench` (bench/run.mjs) and runnable alone:
//
//   node bench/refresh-race.mjs [N] [rounds]     (after bin/build and bin/bench's bundling)
//
// which starts ours and the Cloudflare-stack baseline under Miniflare, as the bench does.
//
// "Live" is counted by trying each distinct refresh token the N answers returned once more,
// serially. On the baseline a refused refresh changes nothing and a successful one rotates only
// its own token, so each try answers for that token alone. On ours every answer holds the same
// token, unused until it is tried; were they to differ, trying a dead one would be a reuse that
// revokes the grant, and the count would end at zero.
//
// What ours does (src/oauth/grants.rs, `refresh`): the grant lives in the user's workspace Durable
// Object, which runs one request at a time. The first refresh rotates the token; every other one
// presents a token rotated less than REFRESH_RETRY_WINDOW_MS ago whose successor is unused, and
// gets that very successor again (an idempotent retry). So N answers hold one refresh token, and
// exactly one refresh token is live after the race; reuse detection (which revokes the grant) is
// for a rotated token presented after the window or after its successor was used.
//
// The provider keeps the grant in KV and rotates by read, then write: each concurrent refresh
// reads the same grant, mints its own token and writes the grant back, the last write winning
// (`handleRefreshTokenGrant`). Its answers then hold up to N different tokens, of which only the
// last written is live.
import { pathToFileURL } from "node:url";
import { oauthClient } from "./oauth.mjs";

/**
 * One race on the Worker of `client` (`oauthClient`): a new grant for `user`, `n` concurrent
 * refreshes of its refresh token, then each distinct returned token tried once. Resolves to
 * { n, ok, statuses, distinct, live, refused }, `refused` being the first refusal's body, if any.
 */
export async function refreshRace(client, n, user) {
  const { refresh_token: presented } = await client.grant(user);
  const answers = await Promise.all(Array.from({ length: n }, () => client.refresh(presented)));
  const statuses = {};
  for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  const returned = answers.filter((a) => a.status === 200 && typeof a.json?.refresh_token === "string").map((a) => a.json.refresh_token);
  const distinct = [...new Set(returned)];
  let live = 0;
  for (const token of distinct) {
    if ((await client.refresh(token)).status === 200) live++;
  }
  return { n, ok: returned.length, statuses, distinct: distinct.length, live, refused: answers.find((a) => a.status !== 200)?.text.slice(0, 200) };
}

/** `rounds` races of `n` on each Worker of `clients` (name → `oauthClient`), interleaved. */
export async function refreshRaces(clients, n, rounds) {
  const out = {};
  for (let round = 0; round < rounds; round++) {
    for (const [name, client] of Object.entries(clients)) {
      (out[name] ??= []).push(await refreshRace(client, n, `bench-race-${round}@example.com`));
    }
  }
  return out;
}

/** One line per race, as the report prints it. */
export function describeRace(r) {
  const statuses = Object.entries(r.statuses)
    .map(([status, count]) => `${count} × ${status}`)
    .join(", ");
  return `${r.n} concurrent refreshes: ${statuses}; ${r.distinct} distinct refresh token${r.distinct === 1 ? "" : "s"} returned, ${r.live} live after${r.refused ? ` (a refusal: ${r.refused})` : ""}`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { startWorker } = await import("./lib.mjs");
  const n = Number(process.argv[2] ?? 16);
  const rounds = Number(process.argv[3] ?? 3);
  const workers = {};
  try {
    for (const name of ["ours", "cloudflare"]) workers[name] = await startWorker(name);
    const clients = {
      ours: await oauthClient(workers.ours.url),
      cloudflare: await oauthClient(workers.cloudflare.url),
    };
    const races = await refreshRaces(clients, n, rounds);
    for (const [name, rs] of Object.entries(races)) {
      for (const r of rs) process.stdout.write(`${name}: ${describeRace(r)}\n`);
    }
  } finally {
    for (const w of Object.values(workers)) await w.stop();
  }
}
