/**
 * `npm run tenants -- <command>`: the common tenancy operations against a running edge, through its
 * admin API (docs/operations/onboarding.md). No redeploy: tenants, keys and prices are data.
 *   FRONTIER_EDGE_URL     the edge (default http://127.0.0.1:8787; or --edge)
 *   FRONTIER_ADMIN_TOKEN  the env admin token or an admin key (default: the local development token)
 * Commands (run with no command for this list):
 *   list [--archived]                 tenants
 *   create <tenant> [--name N] [limits]          a tenant (limits: --rpm --tpm --concurrent --budget 50/month --models a,b)
 *   show <tenant>                     a tenant, its policy and its budget period's spend
 *   archive <tenant>                  every key of it refused from the next request; history kept
 *   keys <tenant>                     its keys
 *   issue <tenant> [--name N] [--expires RFC3339] [limits]   a key: its value is printed once
 *   revoke <tenant> <key id>          refused from its next request
 *   rotate <tenant> <key id> [--grace SECONDS]   a new secret under the same id (old one works for the grace)
 *   price <model> <input> <cached input> <output> [--currency usd]   per million tokens, a new version
 *   usage [--tenant T] [--since DAY] [--until DAY] [--bucket 1d|1h] [--group tenant_id,api_key_id,model] [--cost] [--csv]
 *   audit [--tenant T] [--verify]     the audit trail (newest first), or verify its hash chain
 */
import { parseArgs } from "node:util";
import { DEV_ADMIN_TOKEN } from "../shared/dev-secrets.ts";

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    edge: { type: "string" },
    name: { type: "string" },
    rpm: { type: "string" },
    tpm: { type: "string" },
    concurrent: { type: "string" },
    budget: { type: "string" },
    models: { type: "string" },
    expires: { type: "string" },
    grace: { type: "string" },
    currency: { type: "string" },
    tenant: { type: "string" },
    since: { type: "string" },
    until: { type: "string" },
    bucket: { type: "string" },
    group: { type: "string" },
    archived: { type: "boolean", default: false },
    cost: { type: "boolean", default: false },
    csv: { type: "boolean", default: false },
    verify: { type: "boolean", default: false },
  },
});
const edge = (flags.edge ?? process.env.FRONTIER_EDGE_URL ?? "http://127.0.0.1:8787").replace(/\/+$/, "");
const token = process.env.FRONTIER_ADMIN_TOKEN || DEV_ADMIN_TOKEN;
const [command, ...args] = positionals;
type Json = Record<string, unknown>;

async function api(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ json: Json; text: string; headers: Headers }> {
  const response = await fetch(`${edge}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) fail(`${method} ${path}: ${response.status} ${text}`);
  const json = response.headers.get("content-type")?.includes("json") ? (JSON.parse(text) as Json) : {};
  return { json, text, headers: response.headers };
}

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

function need(index: number, what: string): string {
  const value = args[index];
  if (value === undefined) fail(`${command}: missing ${what} (npm run tenants for usage)`);
  return value;
}

/** The policy fields the flags set (absent flags leave the field out). */
function policy(): Json {
  const limits: Json = {};
  const number = (value: string | undefined, name: string) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isFinite(n)) fail(`--${name}: not a number`);
    return n;
  };
  const set = (field: string, value: number | undefined) => {
    if (value !== undefined) limits[field] = value;
  };
  set("requests_per_minute", number(flags.rpm, "rpm"));
  set("tokens_per_minute", number(flags.tpm, "tpm"));
  set("concurrent_requests", number(flags.concurrent, "concurrent"));
  const out: Json = Object.keys(limits).length > 0 ? { limits } : {};
  if (flags.budget !== undefined) {
    const [amount, period = "month"] = flags.budget.split("/");
    out.budget = { amount: number(amount, "budget"), period };
  }
  if (flags.models !== undefined) out.models = flags.models.split(",").map((m) => m.trim());
  return out;
}

function table(rows: Json[], columns: string[]): string {
  const cell = (v: unknown) =>
    v === null || v === undefined ? "-" : typeof v === "object" ? JSON.stringify(v) : String(v);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(columns), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join("\n");
}

const print = (text: string) => process.stdout.write(`${text}\n`);
const show = (json: unknown) => print(JSON.stringify(json, null, 2));
const tenantPath = (tenant: string) => `/admin/tenants/${encodeURIComponent(tenant)}`;
const keyPath = (tenant: string, key: string) => `${tenantPath(tenant)}/keys/${encodeURIComponent(key)}`;

/** Every page of a list. */
async function all(path: string): Promise<Json[]> {
  const rows: Json[] = [];
  let after: unknown = null;
  for (;;) {
    const sep = path.includes("?") ? "&" : "?";
    const cursor = after === null ? "" : `&after_id=${encodeURIComponent(String(after))}`;
    const { json } = await api("GET", `${path}${sep}limit=100${cursor}`);
    rows.push(...((json.data as Json[]) ?? []));
    if (!json.has_more) return rows;
    after = json.last_id;
  }
}

async function usage(): Promise<void> {
  const query = new URLSearchParams({
    starting_at: flags.since ?? new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10),
    bucket_width: flags.bucket ?? "1d",
    group_by: flags.group ?? "tenant_id,api_key_id,model",
    limit: flags.bucket === "1h" ? "168" : "31",
  });
  if (flags.until !== undefined) query.set("ending_at", flags.until);
  if (flags.tenant !== undefined) query.set("tenant_ids", flags.tenant);
  if (flags.csv) query.set("format", "csv");
  const path = `/admin/${flags.cost ? "cost_report" : "usage_report"}`;
  let page: string | null = null;
  const rows: Json[] = [];
  do {
    if (page !== null) query.set("page", page);
    const { json, text, headers } = await api("GET", `${path}?${query}`);
    if (flags.csv) {
      // Every page's lines under the first page's header; the link header names the next page.
      process.stdout.write(page === null ? text : text.slice(text.indexOf("\n") + 1));
      page = /[?&]page=([^&>]+)/.exec(headers.get("link") ?? "")?.[1] ?? null;
      page = page === null ? null : decodeURIComponent(page);
      continue;
    }
    for (const bucket of json.data as { starting_at: string; results: Json[] }[]) {
      for (const result of bucket.results) rows.push({ bucket: bucket.starting_at.slice(0, 16), ...result });
    }
    page = (json.next_page as string | null) ?? null;
  } while (page !== null);
  if (flags.csv) return;
  const metrics = flags.cost
    ? ["amount", "currency", "requests"]
    : ["requests", "uncached_input_tokens", "cache_read_input_tokens", "output_tokens"];
  print(
    rows.length === 0
      ? "(no usage in this range)"
      : table(rows, ["bucket", "tenant_id", "api_key_id", "model", ...metrics]),
  );
}

switch (command) {
  case "list":
    print(
      table(await all(`/admin/tenants${flags.archived ? "?include_archived=true" : ""}`), [
        "id",
        "name",
        "status",
        "source",
        "created_at",
      ]),
    );
    break;
  case "create": {
    const id = need(0, "tenant id");
    show((await api("POST", "/admin/tenants", { id, name: flags.name ?? id, ...policy() })).json);
    break;
  }
  case "show":
    show((await api("GET", tenantPath(need(0, "tenant id")))).json);
    break;
  case "archive":
    show((await api("POST", `${tenantPath(need(0, "tenant id"))}/archive`)).json);
    break;
  case "keys":
    print(
      table(await all(`${tenantPath(need(0, "tenant id"))}/keys`), [
        "id",
        "name",
        "status",
        "source",
        "partial_key_hint",
        "last_used_at",
        "expires_at",
      ]),
    );
    break;
  case "issue": {
    const body = { name: flags.name ?? "key", ...(flags.expires ? { expires_at: flags.expires } : {}), ...policy() };
    const { json } = await api("POST", `${tenantPath(need(0, "tenant id"))}/keys`, body);
    print(`key ${json.id} (${json.name}) of tenant ${json.tenant_id}, status ${json.status}`);
    print(`value (shown once, give it to the customer): ${json.value}`);
    break;
  }
  case "revoke": {
    const { json } = await api("DELETE", keyPath(need(0, "tenant id"), need(1, "key id")));
    print(`key ${json.id}: ${json.status} at ${json.revoked_at}`);
    break;
  }
  case "rotate": {
    const grace = flags.grace === undefined ? {} : { grace_seconds: Number(flags.grace) };
    const { json } = await api("POST", `${keyPath(need(0, "tenant id"), need(1, "key id"))}/rotate`, grace);
    print(
      `key ${json.id}: new secret; the previous one works until ${json.previous_secret_valid_until ?? "now (no grace)"}`,
    );
    print(`value (shown once): ${json.value}`);
    break;
  }
  case "price": {
    const [input, cached, output] = [
      need(1, "input price"),
      need(2, "cached input price"),
      need(3, "output price"),
    ].map(Number);
    const body = {
      currency: flags.currency ?? "usd",
      prices: [{ model: need(0, "model"), input, cached_input: cached, output }],
    };
    show((await api("POST", "/admin/prices", body)).json);
    break;
  }
  case "usage":
    await usage();
    break;
  case "audit":
    if (flags.verify) show((await api("GET", "/admin/audit/verify")).json);
    else {
      const query = flags.tenant ? `?tenant_id=${encodeURIComponent(flags.tenant)}` : "";
      const rows = ((await api("GET", `/admin/audit${query}`)).json.data as Json[]).map((r) => ({
        ...r,
        actor: (r.actor as Json | null)?.type === "root" ? "root" : (r.actor as Json | null)?.id,
      }));
      print(table(rows, ["at", "action", "actor", "tenant_id", "target", "diff"]));
    }
    break;
  default: {
    const doc = (await import("node:fs")).readFileSync(new URL(import.meta.url), "utf8");
    const usageText = doc.slice(doc.indexOf(" * Commands"), doc.indexOf(" */")).replaceAll(/^ \* ?/gm, "");
    process.stderr.write(`usage: npm run tenants -- <command> [options]\n${usageText}`);
    process.exit(command === undefined ? 0 : 2);
  }
}
