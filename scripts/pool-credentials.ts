/**
 * `npm run pool:credentials -- <command>`: the GPU worker credentials, through the edge's admin API.
 *   list                                              every credential (env ones read-only); no tokens
 *   issue <worker id> --url <URL or patterns> [--capacity N] [--region R]
 *                                                     issue one; prints its token once (the edge keeps a hash)
 *   revoke <worker id>                                revoke an issued one: heartbeats refused, no placement
 *   FRONTIER_EDGE_URL     the edge (default http://127.0.0.1:8787; or --edge)
 *   FRONTIER_ADMIN_TOKEN  the admin bearer token (default: the local development token)
 */
import { parseArgs } from "node:util";
import { DEV_ADMIN_TOKEN } from "../shared/dev-secrets.ts";

const USAGE =
  "usage: npm run pool:credentials -- list | issue <worker id> --url <URL or patterns> [--capacity N] [--region R] | revoke <worker id>\n";
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    edge: { type: "string" },
    url: { type: "string" },
    capacity: { type: "string" },
    region: { type: "string" },
  },
});
const edge = (values.edge ?? process.env.FRONTIER_EDGE_URL ?? "http://127.0.0.1:8787").replace(/\/+$/, "");
const token = process.env.FRONTIER_ADMIN_TOKEN || DEV_ADMIN_TOKEN;
const [command, id] = positionals;

function request(): { path: string; method: string; body?: Record<string, unknown> } | undefined {
  if (command === "list" && id === undefined) return { path: "/admin/worker-credentials", method: "GET" };
  if (command === "revoke" && id !== undefined) {
    return { path: `/admin/worker-credentials/${encodeURIComponent(id)}`, method: "DELETE" };
  }
  if (command === "issue" && id !== undefined && values.url !== undefined) {
    const body: Record<string, unknown> = { id, url: values.url };
    if (values.capacity !== undefined) body.capacity = Number(values.capacity);
    if (values.region !== undefined) body.region = values.region;
    return { path: "/admin/worker-credentials", method: "POST", body };
  }
  return undefined;
}

const call = request();
if (!call) {
  process.stderr.write(USAGE);
  process.exit(2);
}
const response = await fetch(`${edge}${call.path}`, {
  method: call.method,
  headers: { authorization: `Bearer ${token}`, ...(call.body ? { "content-type": "application/json" } : {}) },
  ...(call.body ? { body: JSON.stringify(call.body) } : {}),
});
const text = await response.text();
let out = text;
try {
  out = JSON.stringify(JSON.parse(text), null, 2);
} catch {
  // not JSON: print as is
}
process.stdout.write(`${out}\n`);
process.exit(response.ok ? 0 : 1);
