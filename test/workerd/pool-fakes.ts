/**
 * A pool of fake workers for in-workerd tests of placement and failures: each registers through the
 * heartbeat route like a real worker (`report` fields on top of an idle worker's), the static
 * WORKER_URL is put down so only the test's workers take sessions, and every worker leaves the pool
 * after the test.
 */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { invalidatePoolView } from "../../edge/pool/pool-client.ts";
import { parsePromText, sampleSum } from "../support/prom-text.ts";
import { WORKER_URL } from "./fake-worker.ts";
import { call, idleWorkerReport } from "./helpers.ts";

const POOL_TOKEN = "frontier-dev-pool-token-change-me";
const ADMIN_TOKEN = "frontier-dev-admin-token-change-me";
const registered = new Set<string>();

/** A heartbeat of the worker at `url` (id `w-<host>`), `fields` over an idle worker's report. */
export async function heartbeat(url: string, fields: Record<string, unknown> = {}): Promise<void> {
  registered.add(url);
  const body = idleWorkerReport({ id: `w-${new URL(url).hostname}`, url, ...fields });
  const response = await call("/internal/pool/heartbeat", {
    method: "POST",
    key: null,
    body,
    headers: { authorization: `Bearer ${POOL_TOKEN}` },
  });
  expect(response.status).toBe(200);
  invalidatePoolView();
}

/** Only the test's workers: the static worker (never heard from) is down for the test. */
export async function withoutStaticWorker(): Promise<void> {
  const pool = env.POOLS.getByName("pool:local");
  await pool.view({ region: "local", staticUrls: [WORKER_URL], timeoutMs: 60_000 }); // its row exists
  await pool.markDown(WORKER_URL);
  invalidatePoolView();
}

/** Every worker the test registered leaves the pool. */
export async function leaveAll(): Promise<void> {
  for (const url of registered) await heartbeat(url, { leaving: true });
  registered.clear();
}

/** A pool member's state as the home pool sees it now. */
export async function stateOf(url: string): Promise<string | undefined> {
  // The edge's own arguments: a view with other static URLs would drop the static member's row.
  const view = await env.POOLS.getByName("pool:local").view({
    region: "local",
    staticUrls: [WORKER_URL],
    timeoutMs: 60_000,
  });
  return view.find((w) => w.url === url)?.state;
}

/** The edge metric's value now (its labels summed over the others). */
export async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await call("/admin/metrics", { key: ADMIN_TOKEN, bearer: true })).text();
  return sampleSum(parsePromText(text), name, labels);
}
