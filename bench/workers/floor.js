// The floor: the least a Worker can do under the same runtime, for `npm run bench`. Every POST
// gets the same small JSON-RPC answer; `/do` makes the same answer come from a Durable Object,
// the floor of a scenario that crosses into one; `/sized?bytes=N` answers a fixed JSON body of
// exactly N bytes (encoded once per size), the floor of moving an answer as large as ours. Each
// answer is a fresh copy of it: handing the runtime the same string or the same bytes every
// time was slower (172 and 224 µs of CPU against 149) and grew workerd to 3 GB, the copies
// held outside V8's view of the heap until a collection that nothing prompted.
// Nothing is parsed, checked or logged; the body is read only because workerd closes a
// keep-alive connection whose request body was left unread, which would charge the floor a new
// connection per request.
import { DurableObject } from "cloudflare:workers";

const BODY = '{"jsonrpc":"2.0","id":1,"result":{}}';
const HEADERS = { "content-type": "application/json" };
const SIZED = new Map();

function sized(bytes) {
  let body = SIZED.get(bytes);
  if (body === undefined) {
    const shell = '{"jsonrpc":"2.0","id":1,"result":{"pad":""}}';
    body = new TextEncoder().encode(shell.replace('""', `"${"x".repeat(Math.max(0, bytes - shell.length))}"`));
    SIZED.set(bytes, body);
  }
  return body;
}

export default {
  async fetch(request, env) {
    await request.arrayBuffer();
    const url = new URL(request.url);
    if (url.pathname === "/sized") {
      return new Response(sized(Number(url.searchParams.get("bytes")) || 0).slice(), { headers: HEADERS });
    }
    if (url.pathname === "/do") {
      // The body was read above, so the Durable Object gets a fresh body-less request.
      return env.FLOOR_DO.get(env.FLOOR_DO.idFromName("floor")).fetch("https://floor/do");
    }
    return new Response(BODY, { headers: HEADERS });
  },
};

export class FloorObject extends DurableObject {
  async fetch() {
    return new Response(BODY, { headers: HEADERS });
  }
}
