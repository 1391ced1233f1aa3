/**
 * Stored Responses records, sealed at the edge before they reach a ResponseStoreDO: the record's
 * JSON (response object and input items) under AES-256-GCM with the tenant's `response_record` key
 * (edge/core/sealed-text.ts: HKDF from ID_SECRET), its additional data binding tenant, session (the
 * store object's name) and response id. The store keeps and returns only those bytes; it never
 * holds the secret or a record's text. A record that does not open (a tampered or foreign row, a
 * key from before a secret rotation, a row from before sealing) is missing: logged once, by the
 * shortened id, and answered like an expired record.
 */

import { log } from "../../core/log.ts";
import { openBytes, sealBytes } from "../../core/sealed-text.ts";
import type { InputItem, ResponseObject } from "./request/types.ts";
import { outputAsInput } from "./response/response-object.ts";
import type { ResponseStoreDO, SealedRecord } from "./response-store-do.ts";

export interface StoredResponse {
  response: ResponseObject;
  /** Items this response added before its output: its new input, or the whole history when parentId is null. */
  input: InputItem[];
  /** The previous response in this session, or null when `input` is self-contained. */
  parentId: string | null;
}

export type HistoryResult = { status: "ok"; items: InputItem[] } | { status: "missing"; id: string };

/** Who a record belongs to: the tenant, and the session whose store object holds it. */
export interface RecordOwner {
  secret: string;
  tenant: string;
  session: string;
}

type RecordBody = Omit<StoredResponse, "parentId">;
type Store = DurableObjectStub<ResponseStoreDO>;

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function binding(owner: RecordOwner, id: string): string {
  return `${owner.session}\u0000${id}`;
}

export async function sealRecord(owner: RecordOwner, record: StoredResponse): Promise<SealedRecord> {
  const id = record.response.id;
  const json = JSON.stringify({ response: record.response, input: record.input } satisfies RecordBody);
  const sealed = await sealBytes(
    owner.secret,
    owner.tenant,
    "response_record",
    binding(owner, id),
    encoder.encode(json),
  );
  return { id, parentId: record.parentId, sealed };
}

/** The record's body, or undefined (logged) when the bytes were not sealed for this owner and id. */
export async function openRecord(owner: RecordOwner, id: string, sealed: Uint8Array<ArrayBuffer>) {
  const plain = await openBytes(owner.secret, owner.tenant, "response_record", binding(owner, id), sealed);
  try {
    if (plain) return JSON.parse(decoder.decode(plain)) as RecordBody;
  } catch {
    // Sealed by Frontier yet not JSON: cannot happen short of a bug; treated like a foreign row.
  }
  log("response record did not open", { id, session: owner.session.slice(0, 8), bytes: sealed.byteLength });
  return undefined;
}

/** Seal `record` and store it in its session's object. */
export async function putRecord(store: Store, owner: RecordOwner, record: StoredResponse, ttlMs: number) {
  await store.put(owner.tenant, await sealRecord(owner, record), ttlMs);
}

/** The stored response object, or null when it is unknown, expired, another tenant's or does not open. */
export async function loadResponse(store: Store, owner: RecordOwner, id: string): Promise<ResponseObject | null> {
  const sealed = await store.get(owner.tenant, id);
  return sealed ? ((await openRecord(owner, id, sealed))?.response ?? null) : null;
}

/** The conversation up to and including response `id`: every input and output along its chain. */
export async function loadHistory(store: Store, owner: RecordOwner, id: string): Promise<HistoryResult> {
  const chain = await store.chain(owner.tenant, id);
  if (chain.status !== "ok") return chain;
  // Newest first, as a missing record is named: the first that does not open is the missing link.
  const bodies: RecordBody[] = [];
  for (const record of chain.records) {
    const body = await openRecord(owner, record.id, record.sealed);
    if (!body) return { status: "missing", id: record.id };
    bodies.push(body);
  }
  const items: InputItem[] = [];
  for (const body of bodies.reverse()) items.push(...body.input, ...outputAsInput(body.response.output));
  return { status: "ok", items };
}
