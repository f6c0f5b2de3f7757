#!/usr/bin/env node
// Prints an access token for the local Worker, signed with the development key:
//   npm run --silent token -- --scope "mcp mcp:act" [--app] [--sub someone@example.com] [--ttl 3600]
import { parseArgs } from "node:util";
import { mintDevToken } from "./lib/devtoken.mjs";

const { values } = parseArgs({
  options: {
    scope: { type: "string", default: "mcp mcp:act" },
    app: { type: "boolean", default: false },
    sub: { type: "string" },
    ttl: { type: "string" },
    url: { type: "string" },
  },
});
try {
  process.stdout.write(
    mintDevToken({
      scope: values.scope,
      app: values.app,
      sub: values.sub,
      ttl: values.ttl ? Number(values.ttl) : undefined,
      url: values.url,
    }) + "\n",
  );
} catch (e) {
  process.stderr.write(`token: ${e.message}\n`);
  process.exit(1);
}
