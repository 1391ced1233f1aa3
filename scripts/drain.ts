/**
 * `npm run drain -- <worker>`: drain a GPU worker (by id, e.g. worker-2, or URL) through the edge's
 * admin API, wait until it has handed every session over, and print the report.
 * `npm run drain -- --list` prints the pools instead.
 *   FRONTIER_EDGE_URL     the edge (default http://127.0.0.1:8787)
 *   FRONTIER_ADMIN_TOKEN  the admin bearer token (default: the local development token)
 */
import { parseArgs } from "node:util";

import { DEV_ADMIN_TOKEN } from "../shared/dev-secrets.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { list: { type: "boolean", default: false }, edge: { type: "string" } },
});
const edge = (values.edge ?? process.env.FRONTIER_EDGE_URL ?? "http://127.0.0.1:8787").replace(/\/+$/, "");
const token = process.env.FRONTIER_ADMIN_TOKEN || DEV_ADMIN_TOKEN;
const worker = positionals[0];
if (!values.list && worker === undefined) {
  process.stderr.write("usage: npm run drain -- <worker id or URL>   |   npm run drain -- --list\n");
  process.exit(2);
}
const path = values.list ? "/admin/workers" : `/admin/workers/${encodeURIComponent(worker ?? "")}/drain`;
const response = await fetch(`${edge}${path}`, {
  method: values.list ? "GET" : "POST",
  headers: { authorization: `Bearer ${token}` },
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
