/**
 * SessionDO: one per conversation, named by its session id. The source of truth for the owner
 * tenant, the sticky worker, the epoch (bumped when the session moves to another worker), the live
 * frontier (tool_use ids of the last assistant turn and its message id) and a soft lease that marks
 * a request in flight. Another tenant's call sees exactly what a nonexistent session shows.
 *
 * What a continuing turn changes at `open` (the lease and the last use) is soft state
 * (write-behind.ts): kept in memory and written only when the turn outlives the delay, so the edge
 * never waits for a commit on its way to the worker. The worker, not this lease, is what keeps two
 * requests off one session's KV (it refuses a second one); the lease steers hinted requests (branch
 * or wait). Creation, a move to another worker and a recorded turn are written before the answer.
 */
import { DurableObject } from "cloudflare:workers";
import { WriteBehind } from "../core/write-behind.ts";
import { type HintState, hintDecision, pickWorker } from "./routing.ts";
import type { OpenArgs, OpenResult, ReassignArgs, RecordTurnArgs, SessionInfo } from "./session-args.ts";
import { LEASE_MS, LeaseWaiters, leaseHeld, runningTurn } from "./session-lease.ts";
import {
  createSessionSchema,
  insertSession,
  readFrontier,
  readPrefix,
  type SessionRow,
  type SoftColumns,
  writePrefix,
  writeSoftColumns,
  writeTurn,
} from "./session-row.ts";

/** Idle sessions are deleted after this long. */
const IDLE_TTL_MS = 7 * 24 * 3600_000;

/** The binding this object is reached through (wrangler.toml); code that calls it takes this, not the whole Env. */
export interface SessionBindings {
  /** One object per conversation: owner, sticky worker, epoch, frontier ids, lease. */
  SESSIONS: DurableObjectNamespace<SessionDO>;
}

export class SessionDO extends DurableObject<unknown> {
  readonly #sql: SqlStorage;
  /** Hinted opens waiting for the lease (HINT_LEASE_WAIT_MS); woken when a lease is released. */
  readonly #leaseWaiters = new LeaseWaiters();
  /** Assistant turns the lease holder's request replayed (memory only: unknown after an eviction). */
  #leaseTurns: { requestId: string; assistantTurns: number } | undefined;
  /** Soft columns newer than the SQLite row (undefined: the row is current). */
  #soft: SoftColumns | undefined;
  readonly #softWrite = new WriteBehind(() => this.#writeSoft());

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    createSessionSchema(this.#sql);
  }

  async open(args: OpenArgs): Promise<OpenResult> {
    const asked = Date.now();
    if (args.mode === "hint") await this.#waitForRunningTurn(args, asked);
    const now = Date.now();
    const row = this.#row();
    if (row && row.tenant !== args.tenant) return { status: "not_found" };
    if (!row) {
      if (args.mode === "existing" || (args.mode === "hint" && args.noCreate)) return { status: "not_found" };
      const workerUrl = pickWorker(args.sessionId, args.workerUrls, args.preferredWorker);
      await this.#create({ ...args, workerUrl }, now, args.requestId);
      this.#noteLeaseTurns(args.requestId, args.assistantTurns);
      return { status: "ok", sessionId: args.sessionId, workerUrl, epoch: 1, created: true, turns: 0 };
    }
    const busy = leaseHeld(row, now);
    const workerUrlOfBranch = pickWorker(row.session_id, args.workerUrls, row.worker_url);
    if (this.#otherPrefix(args.prefix) && (args.mode === "hint" || args.branchOnPrefix)) {
      return { status: "branch", workerUrl: workerUrlOfBranch, reason: "prefix" };
    }
    if (args.mode === "hint") {
      const running = busy ? runningTurn(this.#leaseTurns, row, args, now - asked) : undefined;
      if (hintDecision(this.#hintState(row, now), args.firstTurn ?? false, running) !== "claim") {
        return { status: "branch", workerUrl: workerUrlOfBranch, reason: "busy" };
      }
    }
    this.#setPrefix(args.prefix);
    let { worker_url: workerUrl, epoch } = row;
    const leaving = args.unroutable ? args.unroutable.includes(workerUrl) : !args.workerUrls.includes(workerUrl);
    if (leaving && args.workerUrls.length > 0) {
      workerUrl = pickWorker(`${row.session_id}:${epoch}`, args.workerUrls);
      epoch += 1;
    }
    // No alarm write per turn: the one set at creation re-arms itself from last_used_at (alarm()).
    this.#place(row, workerUrl, epoch, args.requestId, now);
    this.#noteLeaseTurns(args.requestId, args.assistantTurns);
    return { status: "ok", sessionId: row.session_id, workerUrl, epoch, created: false, turns: row.turns };
  }

  /**
   * Move the session to another worker (its worker is unreachable or draining): epoch + 1, and the
   * lease goes to this request. When another request already moved it past `fromEpoch`, the session
   * stays where that put it. Another tenant sees not_found.
   */
  async reassign(args: ReassignArgs): Promise<OpenResult> {
    const row = this.#row();
    if (!row || row.tenant !== args.tenant) return { status: "not_found" };
    const now = Date.now();
    const move = row.epoch === args.fromEpoch && row.worker_url !== args.workerUrl;
    const workerUrl = move ? args.workerUrl : row.worker_url;
    const epoch = move ? row.epoch + 1 : row.epoch;
    this.#place(row, workerUrl, epoch, args.requestId, now);
    return { status: "ok", sessionId: row.session_id, workerUrl, epoch, created: false, turns: row.turns };
  }

  /** Drain: a session still on `fromUrl` moves to `workerUrl` (epoch + 1). The epoch now, or null. */
  async handOver(args: { tenant: string; fromUrl: string; workerUrl: string }): Promise<number | null> {
    const row = this.#row();
    if (!row || row.tenant !== args.tenant) return null;
    if (row.worker_url !== args.fromUrl) return row.epoch;
    this.#sql.exec("UPDATE session SET worker_url = ?, epoch = epoch + 1", args.workerUrl);
    return row.epoch + 1;
  }

  /**
   * A turn the edge sent on a cached route (route-cache.ts) takes the lease as `open` would, when
   * the session is still this tenant's on `workerUrl` at `epoch` and no other request holds it. Soft
   * state only (no commit). False: the route is not the session's any more, or another request runs.
   */
  async hold(args: {
    tenant: string;
    requestId: string;
    workerUrl: string;
    epoch: number;
    assistantTurns?: number;
  }): Promise<boolean> {
    const row = this.#row();
    if (!row || row.tenant !== args.tenant || row.worker_url !== args.workerUrl || row.epoch !== args.epoch)
      return false;
    const now = Date.now();
    if (leaseHeld(row, now) && row.lease_request_id !== args.requestId) return false;
    this.#place(row, row.worker_url, row.epoch, args.requestId, now);
    this.#noteLeaseTurns(args.requestId, args.assistantTurns);
    return true;
  }

  /** Record a finished turn's frontier and release the lease this request holds. */
  async recordTurn(args: RecordTurnArgs): Promise<boolean> {
    let row = this.#row();
    if (!row && args.create && (args.epoch ?? 1) === 1) {
      await this.#create({ ...args.create, tenant: args.tenant }, Date.now(), args.requestId);
      row = this.#row();
    }
    if (!row || row.tenant !== args.tenant) return false;
    if (args.epoch !== undefined && args.epoch !== row.epoch) {
      // A late answer from a worker the session has left: its frontier is not the session's.
      await this.release(args);
      return false;
    }
    const now = Date.now();
    const released = row.lease_request_id === args.requestId;
    // The soft columns go with it: a lease another request holds stays, written now.
    const lease = released ? { id: null, until: null } : { id: row.lease_request_id, until: row.lease_until };
    this.ctx.storage.transactionSync(() => writeTurn(this.#sql, args.messageId, args.toolUseIds, now, lease));
    this.#written();
    if (released) this.#leaseWaiters.wake();
    return true;
  }

  /** Release the lease without recording a turn (the request failed or was cancelled). */
  async release(args: { tenant: string; requestId: string }): Promise<void> {
    const row = this.#row();
    if (!row || row.tenant !== args.tenant || row.lease_request_id !== args.requestId) return;
    this.#setSoft({ last_used_at: row.last_used_at, lease_request_id: null, lease_until: null });
    this.#leaseWaiters.wake();
  }

  async get(tenant: string): Promise<SessionInfo | null> {
    const row = this.#row();
    if (!row || row.tenant !== tenant) return null;
    return {
      sessionId: row.session_id,
      workerUrl: row.worker_url,
      epoch: row.epoch,
      createdAt: row.created_at,
      lastUsedAt: row.last_used_at,
      turns: row.turns,
      lastMessageId: row.last_message_id,
      frontierToolUseIds: readFrontier(this.#sql),
      busy: leaseHeld(row, Date.now()),
    };
  }

  override async alarm(): Promise<void> {
    const row = this.#row();
    if (!row) return;
    if (row.last_used_at + IDLE_TTL_MS <= Date.now()) {
      this.#written();
      await this.ctx.storage.deleteAll();
    } else await this.ctx.storage.setAlarm(row.last_used_at + IDLE_TTL_MS);
  }

  /**
   * A hinted open that finds the lease held for the same conversation waits while hintDecision says
   * `wait`: up to HINT_FOLLOW_WAIT_MS for a running turn it follows, HINT_LEASE_WAIT_MS when the lease
   * holder's turn count is unknown (it may be this request's parent), not at all for a sibling.
   */
  async #waitForRunningTurn(args: OpenArgs, asked: number): Promise<void> {
    for (;;) {
      const row = this.#row();
      if (!row || !this.#heldForSameConversation(args)) return;
      const now = Date.now();
      const running = runningTurn(this.#leaseTurns, row, args, now - asked);
      if (hintDecision(this.#hintState(row, now), args.firstTurn ?? false, running) !== "wait") return;
      await this.#leaseWaiters.released(running.reprefillMs - running.remainingMs);
    }
  }

  #hintState(row: SessionRow, now: number): HintState {
    return {
      exists: true,
      busy: leaseHeld(row, now),
      pendingToolUseIds: readFrontier(this.#sql).length,
      turns: row.turns,
    };
  }

  #noteLeaseTurns(requestId: string, assistantTurns: number | undefined): void {
    this.#leaseTurns = assistantTurns === undefined ? undefined : { requestId, assistantTurns };
  }

  /** The session is this tenant's, its lease is held, and the request would not branch on its prefix anyway. */
  #heldForSameConversation(args: OpenArgs): boolean {
    const row = this.#row();
    return (
      row !== undefined && row.tenant === args.tenant && leaseHeld(row, Date.now()) && !this.#otherPrefix(args.prefix)
    );
  }

  /** The request's system + tools fingerprint differs from the one the session recorded. */
  #otherPrefix(fingerprint: string | undefined): boolean {
    const recorded = readPrefix(this.#sql);
    return fingerprint !== undefined && recorded !== undefined && recorded !== fingerprint;
  }

  /** A new session at epoch 1 on `workerUrl`, its lease held by `requestId`. */
  async #create(
    session: { sessionId: string; tenant: string; workerUrl: string; prefix?: string | undefined },
    now: number,
    requestId: string,
  ): Promise<void> {
    insertSession(this.#sql, session, now, requestId, now + LEASE_MS);
    this.#written();
    this.#setPrefix(session.prefix);
    await this.#scheduleExpiry(now);
  }

  /**
   * Set the session's worker and epoch, and give its lease to `requestId`. A move is written before
   * the answer; the usual turn (same worker and epoch) changes only soft columns.
   */
  #place(row: SessionRow, workerUrl: string, epoch: number, requestId: string, now: number): void {
    const soft = { last_used_at: now, lease_request_id: requestId, lease_until: now + LEASE_MS };
    if (row.worker_url === workerUrl && row.epoch === epoch) {
      this.#setSoft(soft);
      return;
    }
    this.#sql.exec(
      "UPDATE session SET worker_url = ?, epoch = ?, last_used_at = ?, lease_request_id = ?, lease_until = ?",
      workerUrl,
      epoch,
      soft.last_used_at,
      soft.lease_request_id,
      soft.lease_until,
    );
    this.#written();
  }

  #setSoft(soft: SoftColumns): void {
    this.#soft = soft;
    this.#softWrite.changed();
  }

  /** The soft columns, written behind (WriteBehind's timer). */
  #writeSoft(): void {
    const soft = this.#soft;
    if (!soft) return;
    writeSoftColumns(this.#sql, soft);
    this.#soft = undefined;
  }

  /** A write just put the soft columns in SQLite (or removed the row): nothing is pending. */
  #written(): void {
    this.#soft = undefined;
    this.#softWrite.written();
  }

  #setPrefix(fingerprint: string | undefined): void {
    // Unchanged on nearly every turn: not rewriting it keeps a continuing open to the lease's write.
    if (fingerprint === undefined || fingerprint === readPrefix(this.#sql)) return;
    writePrefix(this.#sql, fingerprint);
  }

  /** The session as this object knows it: the SQLite row with the soft columns not yet written. */
  #row(): SessionRow | undefined {
    const row = this.#sql.exec<SessionRow>("SELECT * FROM session WHERE singleton = 1").toArray()[0];
    return row && this.#soft ? { ...row, ...this.#soft } : row;
  }

  async #scheduleExpiry(now: number): Promise<void> {
    await this.ctx.storage.setAlarm(now + IDLE_TTL_MS);
  }
}
