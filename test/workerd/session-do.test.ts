import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SOFT_STATE_WRITE_MS } from "../../edge/core/write-behind.ts";
import type { OpenArgs } from "../../edge/session/session-args.ts";
import { SessionDO } from "../../edge/session/session-do.ts";
import { HINT_FOLLOW_WAIT_MS, HINT_LEASE_WAIT_MS } from "../../edge/session/session-lease.ts";
import { newSessionId } from "../../shared/ids.ts";

const URLS = ["http://w1:1", "http://w2:1"];

function args(sessionId: string, extra: Partial<OpenArgs> = {}): OpenArgs {
  return { sessionId, tenant: "local", requestId: "req_a", workerUrls: URLS, mode: "claim", ...extra };
}

describe("SessionDO", () => {
  it("lets the first tenant claim a session; another tenant sees not found", async () => {
    const id = newSessionId();
    const stub = env.SESSIONS.getByName(id);
    const first = await stub.open(args(id));
    expect(first).toMatchObject({ status: "ok", sessionId: id, epoch: 1, created: true, turns: 0 });
    expect(URLS).toContain(first.status === "ok" ? first.workerUrl : "");
    expect(await stub.open(args(id, { requestId: "req_b" }))).toMatchObject({ status: "ok", created: false, epoch: 1 });
    for (const mode of ["existing", "claim", "hint"] as const) {
      expect(await stub.open(args(id, { tenant: "other", mode }))).toEqual({ status: "not_found" });
    }
    expect(await stub.get("other")).toBeNull();
    expect(await stub.recordTurn({ tenant: "other", requestId: "req_b", messageId: "m", toolUseIds: ["x"] })).toBe(
      false,
    );
  });

  it("arms its idle expiry once at creation; the alarm re-arms from the last use instead of every turn writing it", async () => {
    const id = newSessionId();
    const stub = env.SESSIONS.getByName(id);
    await stub.open(args(id));
    const armed = await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    expect(armed).toBeGreaterThan(Date.now());
    await new Promise((r) => setTimeout(r, 5));
    await stub.open(args(id, { requestId: "req_b" }));
    expect(await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm())).toBe(armed);
    // The alarm firing before the idle time is up keeps the session and re-arms from its last use.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const info = await stub.get("local");
    expect(info).not.toBeNull();
    const rearmed = await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    expect(rearmed).toBe((info?.lastUsedAt ?? 0) + 7 * 24 * 3600_000);
    expect(rearmed).toBeGreaterThan(armed ?? 0);
  });

  it("does not create sessions in mode existing", async () => {
    const id = newSessionId();
    const stub = env.SESSIONS.getByName(id);
    expect(await stub.open(args(id, { mode: "existing" }))).toEqual({ status: "not_found" });
    expect(await stub.get("local")).toBeNull();
  });

  it("records the frontier in SQL and releases the lease", async () => {
    const id = newSessionId();
    const stub = env.SESSIONS.getByName(id);
    await stub.open(args(id, { requestId: "req_1" }));
    expect((await stub.get("local"))?.busy).toBe(true);
    expect(
      await stub.recordTurn({
        tenant: "local",
        requestId: "req_1",
        messageId: "msg_1",
        toolUseIds: ["toolu_a", "toolu_b"],
      }),
    ).toBe(true);
    const info = await stub.get("local");
    expect(info).toMatchObject({
      sessionId: id,
      turns: 1,
      lastMessageId: "msg_1",
      frontierToolUseIds: ["toolu_a", "toolu_b"],
      busy: false,
    });
    const rows = await runInDurableObject(stub, (_instance, state) => ({
      session: state.storage.sql.exec("SELECT tenant, epoch, turns, lease_request_id FROM session").toArray(),
      frontier: state.storage.sql.exec("SELECT position, tool_use_id FROM frontier ORDER BY position").toArray(),
    }));
    expect(rows.session).toEqual([{ tenant: "local", epoch: 1, turns: 1, lease_request_id: null }]);
    expect(rows.frontier).toEqual([
      { position: 0, tool_use_id: "toolu_a" },
      { position: 1, tool_use_id: "toolu_b" },
    ]);
    await stub.open(args(id, { requestId: "req_2" }));
    await stub.release({ tenant: "local", requestId: "req_other" });
    expect((await stub.get("local"))?.busy).toBe(true);
    await stub.release({ tenant: "local", requestId: "req_2" });
    expect((await stub.get("local"))?.busy).toBe(false);
  });

  it("moves the session and bumps the epoch when its worker leaves the pool", async () => {
    const id = newSessionId();
    const stub = env.SESSIONS.getByName(id);
    const first = await stub.open(args(id, { workerUrls: ["http://gone:1"] }));
    expect(first).toMatchObject({ status: "ok", workerUrl: "http://gone:1", epoch: 1 });
    const moved = await stub.open(args(id, { requestId: "req_2" }));
    expect(moved).toMatchObject({ status: "ok", epoch: 2 });
    expect(URLS).toContain(moved.status === "ok" ? moved.workerUrl : "");
    expect(await stub.open(args(id, { requestId: "req_3" }))).toMatchObject({ epoch: 2 });
  });

  it("reassigns once per failed epoch and ignores a late turn from the old worker", async () => {
    const id = newSessionId();
    const stub = env.SESSIONS.getByName(id);
    await stub.open(args(id, { preferredWorker: "http://w1:1", requestId: "req_1" }));
    const moved = await stub.reassign({ tenant: "local", requestId: "req_2", fromEpoch: 1, workerUrl: "http://w2:1" });
    expect(moved).toMatchObject({ status: "ok", workerUrl: "http://w2:1", epoch: 2 });
    // A second request that saw epoch 1 fail does not move it again.
    const again = await stub.reassign({ tenant: "local", requestId: "req_3", fromEpoch: 1, workerUrl: "http://w1:1" });
    expect(again).toMatchObject({ status: "ok", workerUrl: "http://w2:1", epoch: 2 });
    expect(await stub.reassign({ tenant: "other", requestId: "r", fromEpoch: 2, workerUrl: "x" })).toEqual({
      status: "not_found",
    });
    const late = { tenant: "local", requestId: "req_3", messageId: "m_old", toolUseIds: ["toolu_old"], epoch: 1 };
    expect(await stub.recordTurn(late)).toBe(false);
    expect(await stub.get("local")).toMatchObject({ turns: 0, frontierToolUseIds: [], busy: false });
    expect(await stub.recordTurn({ ...late, messageId: "m_new", epoch: 2 })).toBe(true);
    expect(await stub.get("local")).toMatchObject({ turns: 1, lastMessageId: "m_new" });
  });

  it("moves only sessions on a worker known to be unroutable when told which", async () => {
    const id = newSessionId();
    const stub = env.SESSIONS.getByName(id);
    await stub.open(args(id, { preferredWorker: "http://new:1", workerUrls: ["http://new:1"] }));
    // A worker the caller's pool view does not know yet is not a reason to move.
    expect(await stub.open(args(id, { requestId: "r2", unroutable: [] }))).toMatchObject({ epoch: 1 });
    const moved = await stub.open(args(id, { requestId: "r3", unroutable: ["http://new:1"] }));
    expect(moved).toMatchObject({ epoch: 2 });
    expect(URLS).toContain(moved.status === "ok" ? moved.workerUrl : "");
  });

  it("places a new session on the preferred worker", async () => {
    const id = newSessionId();
    const opened = await env.SESSIONS.getByName(id).open(args(id, { preferredWorker: "http://w2:1" }));
    expect(opened).toMatchObject({ status: "ok", workerUrl: "http://w2:1" });
  });

  it("branches hinted requests that are not this session's continuation", async () => {
    const id = newSessionId();
    const stub = env.SESSIONS.getByName(id);
    await stub.open(args(id, { mode: "hint", firstTurn: true }));
    // Busy: a concurrent request on the same hint branches, once the lease did not come back in time.
    const asked = Date.now();
    expect(await stub.open(args(id, { mode: "hint", requestId: "req_b", firstTurn: false }))).toMatchObject({
      status: "branch",
      reason: "busy",
    });
    expect(Date.now() - asked).toBeGreaterThanOrEqual(HINT_LEASE_WAIT_MS - 5);
    await stub.recordTurn({ tenant: "local", requestId: "req_a", messageId: "m1", toolUseIds: ["toolu_1"] });
    // Waiting on tool results that this request does not carry: branch.
    expect(await stub.open(args(id, { mode: "hint", requestId: "req_c", firstTurn: false }))).toMatchObject({
      status: "branch",
    });
    await stub.open(args(id, { requestId: "req_d" }));
    await stub.recordTurn({ tenant: "local", requestId: "req_d", messageId: "m2", toolUseIds: [] });
    // A new first turn (a subagent) branches; a plain follow-up continues.
    expect(await stub.open(args(id, { mode: "hint", requestId: "req_e", firstTurn: true }))).toMatchObject({
      status: "branch",
    });
    expect(await stub.open(args(id, { mode: "hint", requestId: "req_f", firstTurn: false }))).toMatchObject({
      status: "ok",
      sessionId: id,
    });
  });

  it("lets a hinted open that finds the lease held wait for the turn's record, then continue the session", async () => {
    const id = newSessionId();
    const stub = env.SESSIONS.getByName(id);
    await stub.open(args(id, { mode: "hint", firstTurn: true }));
    // The client's next request arrives before the edge's record of the turn it just saw end.
    const next = stub.open(args(id, { mode: "hint", requestId: "req_b", firstTurn: false }));
    await new Promise((r) => setTimeout(r, 20));
    await stub.recordTurn({ tenant: "local", requestId: "req_a", messageId: "m1", toolUseIds: [] });
    expect(await next).toMatchObject({ status: "ok", sessionId: id, turns: 1 });
    expect(await stub.get("local")).toMatchObject({ busy: true, turns: 1, lastMessageId: "m1" });
  });

  it("lets a follow-up of the running turn wait past the short lease wait; a sibling of it branches at once", async () => {
    const id = newSessionId();
    const stub = env.SESSIONS.getByName(id);
    await stub.open(args(id, { mode: "hint", firstTurn: false, assistantTurns: 2 }));
    // A sibling (the same number of replayed assistant turns as the running request) is a fork.
    const asked = Date.now();
    expect(await stub.open(args(id, { mode: "hint", requestId: "req_s", assistantTurns: 2 }))).toMatchObject({
      status: "branch",
      reason: "busy",
    });
    expect(Date.now() - asked).toBeLessThan(HINT_LEASE_WAIT_MS);
    // The follow-up replays the running turn's answer; its record comes well after the short wait.
    const next = stub.open(args(id, { mode: "hint", requestId: "req_b", assistantTurns: 3 }));
    await new Promise((r) => setTimeout(r, 3 * HINT_LEASE_WAIT_MS));
    await stub.recordTurn({ tenant: "local", requestId: "req_a", messageId: "m1", toolUseIds: [] });
    expect(await next).toMatchObject({ status: "ok", sessionId: id, turns: 1 });
    // Past HINT_FOLLOW_WAIT_MS without a record, a follow-up branches after all.
    const late = Date.now();
    expect(await stub.open(args(id, { mode: "hint", requestId: "req_c", assistantTurns: 4 }))).toMatchObject({
      status: "branch",
      reason: "busy",
    });
    expect(Date.now() - late).toBeGreaterThanOrEqual(HINT_FOLLOW_WAIT_MS - 5);
  });

  it("does not wait on another tenant's lease or on a session the request branches from by its prefix", async () => {
    const id = newSessionId();
    const stub = env.SESSIONS.getByName(id);
    await stub.open(args(id, { mode: "hint", firstTurn: true, prefix: "p1" }));
    const asked = Date.now();
    expect(await stub.open(args(id, { mode: "hint", requestId: "req_b", prefix: "p2" }))).toMatchObject({
      status: "branch",
      reason: "prefix",
    });
    expect(await stub.open(args(id, { mode: "hint", requestId: "req_c", tenant: "other" }))).toEqual({
      status: "not_found",
    });
    expect(Date.now() - asked).toBeLessThan(HINT_LEASE_WAIT_MS);
  });

  it("creates nothing for a hinted open with noCreate", async () => {
    const id = newSessionId();
    const stub = env.SESSIONS.getByName(id);
    expect(await stub.open(args(id, { mode: "hint", noCreate: true }))).toEqual({ status: "not_found" });
    expect(await stub.get("local")).toBeNull();
    expect(await stub.open(args(id, { mode: "hint" }))).toMatchObject({ status: "ok", created: true });
  });

  it("keeps a continuing turn's lease in memory, writes it once the turn outlives the write delay, and never after the record", async () => {
    const id = newSessionId();
    const stub = env.SESSIONS.getByName(id);
    const stored = () =>
      runInDurableObject(stub, (_instance, state) =>
        state.storage.sql
          .exec<{ lease_request_id: string | null; turns: number }>("SELECT lease_request_id, turns FROM session")
          .one(),
      );
    /** What an instance started over the same storage (a restart) sees. */
    const afterRestart = () =>
      runInDurableObject(stub, (_instance, state) => new SessionDO(state, env).get("local").then((info) => info?.busy));
    const writeDelay = () => new Promise((r) => setTimeout(r, SOFT_STATE_WRITE_MS + 100));
    // Creation is written before the answer, lease included.
    await stub.open(args(id, { requestId: "req_1" }));
    expect(await stored()).toEqual({ lease_request_id: "req_1", turns: 0 });
    await stub.recordTurn({ tenant: "local", requestId: "req_1", messageId: "m1", toolUseIds: [] });
    // A continuing open answers before any write: this object knows the lease, SQLite does not yet.
    await stub.open(args(id, { requestId: "req_2" }));
    expect((await stub.get("local"))?.busy).toBe(true);
    expect(await stored()).toEqual({ lease_request_id: null, turns: 1 });
    expect(await afterRestart()).toBe(false);
    // A turn still running after the delay has its lease written: a restart still sees it.
    await writeDelay();
    expect(await stored()).toEqual({ lease_request_id: "req_2", turns: 1 });
    expect(await afterRestart()).toBe(true);
    // A release is soft too: free at once here, written after the delay.
    await stub.release({ tenant: "local", requestId: "req_2" });
    expect((await stub.get("local"))?.busy).toBe(false);
    await writeDelay();
    expect(await stored()).toEqual({ lease_request_id: null, turns: 1 });
    // A short turn: its lease is never written, and the pending write does not outlive the record.
    await stub.open(args(id, { requestId: "req_3" }));
    await stub.recordTurn({ tenant: "local", requestId: "req_3", messageId: "m3", toolUseIds: [] });
    expect(await stored()).toEqual({ lease_request_id: null, turns: 2 });
    await writeDelay();
    expect(await stored()).toEqual({ lease_request_id: null, turns: 2 });
    expect((await stub.get("local"))?.busy).toBe(false);
  });

  it("writes a move to another worker before it answers", async () => {
    const id = newSessionId();
    const stub = env.SESSIONS.getByName(id);
    await stub.open(args(id, { workerUrls: ["http://gone:1"] }));
    await stub.recordTurn({ tenant: "local", requestId: "req_a", messageId: "m1", toolUseIds: [] });
    const moved = await stub.open(args(id, { requestId: "req_b" }));
    expect(moved).toMatchObject({ status: "ok", epoch: 2 });
    const row = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql
        .exec<{ worker_url: string; epoch: number; lease_request_id: string | null }>(
          "SELECT worker_url, epoch, lease_request_id FROM session",
        )
        .one(),
    );
    expect(row).toEqual({
      worker_url: moved.status === "ok" ? moved.workerUrl : "",
      epoch: 2,
      lease_request_id: "req_b",
    });
  });
});
