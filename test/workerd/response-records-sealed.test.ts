/**
 * Stored Responses records at rest (issue 30 item 3): ResponseStoreDO's SQLite holds ciphertext
 * only; a row that does not open (a tampered byte, another tenant's or another deployment's key, a
 * row moved to another session or record, plaintext from before sealing) is a clean miss: GET 404,
 * `previous_response_id` not found, logged once by the shortened id, never a 500. Chains still
 * rebuild, and the tenant's ledger counts the bytes stored.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ledgerName } from "../../edge/protocols/responses/record-ledger.ts";
import { ResponseStoreDO } from "../../edge/protocols/responses/response-store-do.ts";
import type { StoredResponse } from "../../edge/protocols/responses/sealed-records.ts";
import { CacheDecision, StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId } from "../../shared/ids.ts";
import { event, type FakeWorker, installFakeWorker } from "./fake-worker.ts";
import { call } from "./helpers.ts";
import { newSessionResponse, sealedStore } from "./response-fixtures.ts";

const SECRET = env.ID_SECRET ?? "";
const DAY = 24 * 3600_000;
const PROMPT = "the launch code is PLAINTEXT-PROMPT-7f3a";
const ANSWER = "noted: PLAINTEXT-ANSWER-c91e";

type Store = ReturnType<typeof sealedStore>;

let fake: FakeWorker | undefined;
afterEach(() => {
  fake?.restore();
  vi.restoreAllMocks();
});

/** A response id long enough to be shortened in logs (shared/log-ids.ts). */
const responseId = (n: number) => `resp_sealedRecordTest${n}xxxxxxxxxx`;

function record(id: string, parentId: string | null, input: string, output: string): StoredResponse {
  return {
    response: newSessionResponse(id, output),
    input: [{ type: "message", role: "user", text: input }],
    parentId,
  };
}

/** Every value of every table of the store's SQLite, as text (blobs decoded byte for byte). */
function rawStorage(store: Store): Promise<string> {
  return runInDurableObject(store.stub, (_instance, state) => {
    const sql = state.storage.sql;
    const tables = sql
      .exec<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'",
      )
      .toArray();
    const latin1 = new TextDecoder("latin1");
    const values = tables.flatMap(({ name }) =>
      sql
        .exec(`SELECT * FROM "${name}"`)
        .toArray()
        .flatMap((row) => Object.values(row).map((v) => (v instanceof ArrayBuffer ? latin1.decode(v) : String(v)))),
    );
    return values.join("\n");
  });
}

/** Flip one bit of chunk 0 of record `id`, in place. */
function tamper(store: Store, id: string, at: number): Promise<void> {
  return runInDurableObject(store.stub, (_instance, state) => {
    const sql = state.storage.sql;
    const { data } = sql
      .exec<{ data: ArrayBuffer }>("SELECT data FROM sealed_chunks WHERE id = ? AND seq = 0", id)
      .one();
    const bytes = new Uint8Array(data.slice(0));
    bytes[at] = (bytes[at] ?? 0) ^ 1;
    sql.exec("UPDATE sealed_chunks SET data = ? WHERE id = ? AND seq = 0", bytes.buffer, id);
  });
}

/** Copy record `id`'s rows (tenant, chain, chunks) from one store into another, under `asId`. */
async function copyRows(from: Store, id: string, to: Store, asId: string, tenant?: string): Promise<void> {
  const rows = await runInDurableObject(from.stub, (_instance, state) => ({
    row: state.storage.sql.exec<{ tenant: string }>("SELECT tenant FROM responses WHERE id = ?", id).one(),
    chunks: state.storage.sql
      .exec<{ seq: number; data: ArrayBuffer }>("SELECT seq, data FROM sealed_chunks WHERE id = ?", id)
      .toArray(),
  }));
  await runInDurableObject(to.stub, (_instance, state) => {
    state.storage.sql.exec(
      "INSERT INTO responses (id, tenant, parent_id, created_at, expires_at, bytes) VALUES (?, ?, NULL, ?, ?, 1)",
      asId,
      tenant ?? rows.row.tenant,
      Date.now(),
      Date.now() + DAY,
    );
    for (const chunk of rows.chunks) {
      state.storage.sql.exec("INSERT INTO sealed_chunks (id, seq, data) VALUES (?, ?, ?)", asId, chunk.seq, chunk.data);
    }
  });
}

function openFailures(spy: { mock: { calls: unknown[][] } }): string[] {
  return spy.mock.calls.map((args) => String(args[0])).filter((line) => line.includes("response record did not open"));
}

describe("sealed response records", () => {
  it("a stored turn leaves no plaintext of its prompt or output in the store's SQLite", async () => {
    fake = installFakeWorker(async function* ({ request }) {
      const messageId = await mintId(SECRET, "resp", request.tenantId, request.sessionId);
      yield event({ case: "prompt", value: { promptTokens: 30, messageId, decision: CacheDecision.COLD } });
      yield event({ case: "textDelta", value: { text: ANSWER } });
      yield event({
        case: "stop",
        value: { reason: StopReason.END_TURN, usage: { inputTokens: 30, outputTokens: 5 } },
      });
    });
    const turn = (body: Record<string, unknown>) =>
      call("/v1/responses", { method: "POST", bearer: true, body: { model: "frontier-test", store: true, ...body } });
    const first = await turn({ input: PROMPT });
    expect(first.status).toBe(200);
    const { id } = (await first.json()) as { id: string };
    const store = sealedStore(fake.requests[0]?.sessionId ?? "");
    const raw = await rawStorage(store);
    expect(raw).toContain(id);
    expect(raw).not.toContain("PLAINTEXT-PROMPT");
    expect(raw).not.toContain("PLAINTEXT-ANSWER");
    expect(raw).not.toContain("output_text");
    // The edge opens it: GET returns the response, and a continuation replays prompt and answer.
    const got = await call(`/v1/responses/${id}`, { bearer: true });
    expect(JSON.stringify(await got.json())).toContain("PLAINTEXT-ANSWER");
    expect((await turn({ input: "and?", previous_response_id: id })).status).toBe(200);
    expect(JSON.stringify(fake.requests[1]?.conversation?.messages)).toContain("PLAINTEXT-PROMPT");

    // One flipped byte of the ciphertext: GET is a 404 and a continuation the protocol's not-found.
    const log = vi.spyOn(console, "log");
    await tamper(store, id, 40);
    const missing = await call(`/v1/responses/${id}`, { bearer: true });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { type: string } }).error.type).toBe("not_found_error");
    const refused = await turn({ input: "again", previous_response_id: id });
    expect(refused.status).toBe(404);
    const body = (await refused.json()) as { error: { code: string; param: string } };
    expect(body.error).toMatchObject({ code: "previous_response_not_found", param: "previous_response_id" });
    // Logged once per failed open, by the shortened id only.
    const lines = openFailures(log);
    expect(lines).toHaveLength(2);
    expect(lines.join("\n")).not.toContain(id);
    expect(lines[0]).toContain("resp_#");
  });

  it("a tampered chunk, nonce or tag is a miss, and a chain names the record that does not open", async () => {
    const store = sealedStore();
    for (let i = 1; i <= 3; i++) {
      await store.put("local", record(responseId(i), i === 1 ? null : responseId(i - 1), `q${i}`, `a${i}`), DAY);
    }
    expect((await store.history("local", responseId(3))).status).toBe("ok");
    const log = vi.spyOn(console, "log");
    await tamper(store, responseId(2), 100);
    expect(await store.get("local", responseId(2))).toBeNull();
    expect(await store.history("local", responseId(3))).toEqual({ status: "missing", id: responseId(2) });
    expect(openFailures(log)).toHaveLength(2);
    // The nonce (first bytes) and the tag (last bytes) are covered too.
    await tamper(store, responseId(1), 0);
    expect(await store.get("local", responseId(1))).toBeNull();
    const size = await runInDurableObject(store.stub, (_instance, state) =>
      state.storage.sql
        .exec<{ n: number }>("SELECT LENGTH(data) AS n FROM sealed_chunks WHERE id = ?", responseId(3))
        .one(),
    );
    await tamper(store, responseId(3), size.n - 1);
    expect(await store.get("local", responseId(3))).toBeNull();
    // Plaintext where the ciphertext belongs does not open either.
    await runInDurableObject(store.stub, (_instance, state) =>
      state.storage.sql.exec("UPDATE sealed_chunks SET data = ? WHERE id = ?", `{"input":[]}`, responseId(3)),
    );
    expect(await store.get("local", responseId(3))).toBeNull();
  });

  it("another tenant's key, another secret, another session or another record id never opens a row", async () => {
    const store = sealedStore();
    await store.put("local", record(responseId(1), null, PROMPT, ANSWER), DAY);
    expect(await store.get("local", responseId(1))).not.toBeNull();
    // The row relabelled as another tenant's: its key and additional data differ.
    const relabelled = sealedStore();
    await copyRows(store, responseId(1), relabelled, responseId(1), "other");
    const moved = sealedStore(relabelled.session);
    expect(await moved.get("other", responseId(1))).toBeNull();
    expect(await moved.history("other", responseId(1))).toEqual({ status: "missing", id: responseId(1) });
    // The same bytes in another session, and under another id in the same session.
    const elsewhere = sealedStore();
    await copyRows(store, responseId(1), elsewhere, responseId(1));
    expect(await elsewhere.get("local", responseId(1))).toBeNull();
    await copyRows(store, responseId(1), store, responseId(2));
    expect(await store.get("local", responseId(2))).toBeNull();
    // A rotated ID_SECRET: the old rows are misses, not errors.
    const rotated = sealedStore(store.session, `${SECRET}-rotated`);
    expect(await rotated.get("local", responseId(1))).toBeNull();
    expect(await rotated.history("local", responseId(1))).toEqual({ status: "missing", id: responseId(1) });
    expect(await store.get("local", responseId(1))).not.toBeNull();
  });

  it("a chain of chunked records rebuilds, and the tenant's ledger counts the ciphertext stored", async () => {
    const tenant = `sealed-${crypto.randomUUID().slice(0, 8)}`;
    const store = sealedStore();
    const big = "z".repeat(2_500_000);
    await store.put(tenant, record(responseId(1), null, big, "a1"), DAY);
    await store.put(tenant, record(responseId(2), responseId(1), "q2", "a2"), DAY);
    const history = await store.history(tenant, responseId(2));
    expect(history.status === "ok" && history.items.map((item) => (item.type === "message" ? item.text : ""))).toEqual([
      big,
      "a1",
      "q2",
      "a2",
    ]);
    const stored = await runInDurableObject(store.stub, (_instance, state) =>
      state.storage.sql
        .exec<{ chunks: number; bytes: number }>(
          "SELECT COUNT(*) AS chunks, SUM(LENGTH(data)) AS bytes FROM sealed_chunks",
        )
        .one(),
    );
    expect(stored.chunks).toBeGreaterThanOrEqual(4);
    const usage = await env.RESPONSES.getByName(ledgerName(tenant)).usage();
    expect(usage).toMatchObject({ bytes: stored.bytes, records: 2 });
  });

  it("plaintext rows from before sealing are misses, and dropped (holdings reported) when the object restarts", async () => {
    const tenant = `legacy-${crypto.randomUUID().slice(0, 8)}`;
    const store = sealedStore();
    const json = JSON.stringify({ response: newSessionResponse(responseId(2), ANSWER), input: [] });
    await runInDurableObject(store.stub, (_instance, state) => {
      const sql = state.storage.sql;
      sql.exec("CREATE TABLE response_chunks (id TEXT NOT NULL, seq INTEGER NOT NULL, data TEXT NOT NULL)");
      sql.exec("INSERT INTO response_chunks (id, seq, data) VALUES (?, 0, ?)", responseId(2), json);
      sql.exec(
        "INSERT INTO responses (id, tenant, parent_id, created_at, expires_at, bytes) VALUES (?, ?, NULL, ?, ?, ?)",
        responseId(2),
        tenant,
        Date.now(),
        Date.now() + DAY,
        json.length,
      );
    });
    await store.put(tenant, record(responseId(1), null, "q", "a"), DAY);
    expect(await store.get(tenant, responseId(2))).toBeNull();
    const ledger = env.RESPONSES.getByName(ledgerName(tenant));
    expect((await ledger.usage()).records).toBe(2);
    // The object starting on this storage again (as after the deploy) drops the plaintext rows and
    // reports the tenant's holdings again.
    await runInDurableObject(store.stub, (_instance, state) => {
      new ResponseStoreDO(state, env);
    });
    const raw = await rawStorage(store);
    expect(raw).not.toContain("PLAINTEXT-ANSWER");
    expect(raw).not.toContain(responseId(2));
    expect(await store.get(tenant, responseId(1))).not.toBeNull();
    expect((await ledger.usage()).records).toBe(1);
  });
});
