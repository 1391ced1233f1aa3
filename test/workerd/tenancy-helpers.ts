/** Helpers of the tenancy tests: the admin API as root (or an admin key), tenants and keys made through it. */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { type IdKind, mintId } from "../../shared/ids.ts";
import { event, type FakeWorker, installFakeWorker } from "./fake-worker.ts";
import { call } from "./helpers.ts";

export const ROOT_TOKEN = "frontier-dev-admin-token-change-me";

/** An admin API call (root unless `token`), its JSON body parsed. */
export async function admin<T = Record<string, unknown>>(
  path: string,
  options: { method?: string; body?: unknown; token?: string } = {},
): Promise<{ status: number; body: T; headers: Headers }> {
  const response = await call(path, {
    method: options.method ?? "GET",
    key: options.token ?? ROOT_TOKEN,
    bearer: true,
    ...(options.body !== undefined && { body: options.body }),
  });
  const text = await response.text();
  const json = response.headers.get("content-type")?.startsWith("application/json") && text !== "";
  return { status: response.status, body: (json ? JSON.parse(text) : {}) as T, headers: response.headers };
}

export interface KeyBody {
  id: string;
  value?: string;
  status: string;
  [field: string]: unknown;
}

/** A fresh tenant (a unique id) with `fields` (limits, budget, models). */
export async function newTenant(fields: Record<string, unknown> = {}): Promise<string> {
  const id = `t-${crypto.randomUUID().slice(0, 8)}`;
  const created = await admin("/admin/tenants", { method: "POST", body: { id, name: `Tenant ${id}`, ...fields } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return id;
}

/** A new key of `tenant`: its id and value. */
export async function newKey(
  tenant: string,
  fields: Record<string, unknown> = {},
): Promise<{ id: string; value: string }> {
  const created = await admin<KeyBody>(`/admin/tenants/${tenant}/keys`, {
    method: "POST",
    body: { name: "k", ...fields },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { id: created.body.id, value: created.body.value ?? "" };
}

/** A worker that answers every turn with one word and the usage it is given (its message id minted for the protocol). */
export function wordWorker(usage = { inputTokens: 3, cachedTokens: 0, outputTokens: 1 }): FakeWorker {
  return installFakeWorker(async function* ({ request }) {
    const kind = (request.idKinds?.message ?? "msg") as IdKind;
    const messageId = await mintId(env.ID_SECRET ?? "", kind, request.tenantId, request.sessionId);
    const promptTokens = usage.inputTokens + usage.cachedTokens;
    yield event({ case: "prompt", value: { promptTokens, cachedTokens: usage.cachedTokens, messageId } });
    yield event({ case: "textDelta", value: { text: "ok" } });
    yield event({ case: "stop", value: { reason: StopReason.END_TURN, usage } });
  });
}
