// The floor: the least a Worker can do under the same runtime, for `npm run bench`. Every POST
// gets the same small JSON-RPC answer; `/do` makes the same answer come from a Durable Object,
// the floor of a scenario that crosses into one. Nothing is parsed, checked or logged; the
// body is read only because workerd closes a keep-alive connection whose request body was left
// unread, which would charge the floor a new connection per request.
import { DurableObject } from "cloudflare:workers";

const BODY = '{"jsonrpc":"2.0","id":1,"result":{}}';
const HEADERS = { "content-type": "application/json" };

export default {
  async fetch(request, env) {
    await request.arrayBuffer();
    if (new URL(request.url).pathname === "/do") {
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
