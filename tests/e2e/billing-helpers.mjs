// Helpers shared by the billing and approval suites: subscribe a workspace through the sandbox
// checkout page, the way a user would (start_checkout → open the page → pay with a test card).
import assert from "node:assert/strict";
import { connect } from "./harness.mjs";

export const CARD_OK = "4242 4242 4242 4242";
export const CARD_DECLINES_LATER = "4000 0000 0000 0341";
export const CARD_DECLINED = "4000 0000 0000 0002";

/** Pays a sandbox checkout page with `card`; returns the response. */
export async function payPage(worker, url, card, { origin = worker.origin } = {}) {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...(origin ? { origin } : {}) },
    body: new URLSearchParams({ card }).toString(),
  });
}

/** A Claude-app client of `sub`'s workspace, subscribed to `plan` through the sandbox page. */
export async function subscribed(worker, sub, plan = "starter", card = CARD_OK) {
  const client = await connect(worker, { sub, app: true });
  const checkout = await client.callTool({ name: "start_checkout", arguments: { plan } });
  assert.equal(checkout.isError, false, checkout.content[0].text);
  const paid = await payPage(worker, checkout.structuredContent.url, card);
  assert.equal(paid.status, 200, await paid.text());
  return client;
}

/** Calls a tool and insists it succeeded; returns structuredContent. */
export async function ok(client, name, args = {}) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.isError, false, `${name}: ${r.content[0].text}`);
  return r.structuredContent;
}
