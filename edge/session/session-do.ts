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
import { type HintState, hintDecision, pickWorker, type RunningTurn } from "./routing.ts";

/** A lease older than this is stale (its edge request died without releasing it). */
const LEASE_MS = 10 * 60_000;
/** Idle sessions are deleted after this long. */
const IDLE_TTL_MS = 7 * 24 * 3600_000;
/**
 * How long a hinted open that finds the session busy waits for its lease to come back before it
 * branches. The edge records a turn (which releases the lease) after the client has the response,
 * so a client's immediate next request can arrive first; this wait lets it find the session's new
 * frontier. A request that really runs beside another turn of the same conversation (same hint
 * and prefix) branches this much later.
 */
export const HINT_LEASE_WAIT_MS = 250;
/**
 * How long a hinted open waits for a running turn it follows (it replays that turn's answer: one
 * assistant turn more than the lease holder) before it branches. The client has that answer, so only
 * the edge's record is pending; waiting this long is still cheaper than re-prefilling an agent's
 * context (tens of thousands of tokens) on a branch (routing.ts hintDecision).
 */
export const HINT_FOLLOW_WAIT_MS = 2_000;

export interface OpenArgs {
  sessionId: string;
  tenant: string;
  requestId: string;
  workerUrls: string[];
  /** existing: only an existing session of this tenant; claim: create it when absent; hint: claim unless the request is another branch. */
  mode: "existing" | "claim" | "hint";
  /** With mode hint: answer not_found for an absent session instead of creating it. */
  noCreate?: boolean;
  /** With mode hint: the request replays no assistant turn. */
  firstTurn?: boolean;
  /** Assistant turns the request replays (RoutingIds.assistantTurns): tells a follow-up of the running turn from a sibling. */
  assistantTurns?: number;
  /** Place a new session on this worker (a branch of a hinted session). */
  preferredWorker?: string;
  /**
   * Fingerprint of the request's system + tools. Recorded with the session; with mode hint, or
   * with `branchOnPrefix`, a request whose fingerprint differs from the session's is another
   * conversation (a title request, a memory subagent) and gets `branch` instead of the session.
   */
  prefix?: string;
  /** With mode existing: branch (rather than continue) when `prefix` differs from the session's. */
  branchOnPrefix?: boolean;
  /**
   * Workers known to be down or drained: a session on one of them moves (epoch + 1) to one of
   * `workerUrls`. Without it, a session moves when its worker is not in `workerUrls`.
   */
  unroutable?: string[];
}

export type OpenResult =
  | { status: "ok"; sessionId: string; workerUrl: string; epoch: number; created: boolean; turns: number }
  | { status: "not_found" }
  /** Another conversation uses this session's key (`prefix`: its system + tools differ; `busy`: a concurrent one). */
  | { status: "branch"; workerUrl: string; reason: "prefix" | "busy" };

export interface RecordTurnArgs {
  tenant: string;
  requestId: string;
  messageId: string;
  toolUseIds: string[];
  /** The epoch the turn ran under; a turn from an older epoch (a worker the session left) is ignored. */
  epoch?: number;
  /**
   * A session this turn's request created (its creation ran alongside the turn): when that creation
   * failed, the session is created here, on this worker at epoch 1, instead of losing the turn.
   */
  create?: { sessionId: string; workerUrl: string; prefix?: string | undefined };
}

export interface ReassignArgs {
  tenant: string;
  requestId: string;
  /** The epoch the caller saw fail; when the session already moved past it, the move is not repeated. */
  fromEpoch: number;
  workerUrl: string;
}

export interface SessionInfo {
  sessionId: string;
  workerUrl: string;
  epoch: number;
  createdAt: number;
  lastUsedAt: number;
  turns: number;
  lastMessageId: string | null;
  frontierToolUseIds: string[];
  busy: boolean;
}

/** The columns a continuing `open` changes: soft state, written behind (write-behind.ts). */
type SoftColumns = Pick<SessionRow, "last_used_at" | "lease_request_id" | "lease_until">;

type SessionRow = {
  session_id: string;
  tenant: string;
  worker_url: string;
  epoch: number;
  created_at: number;
  last_used_at: number;
  turns: number;
  last_message_id: string | null;
  lease_request_id: string | null;
  lease_until: number | null;
};

/** A request holds the session's lease (a stale one, past `lease_until`, does not count). */
function leaseHeld(row: SessionRow, now: number): boolean {
  return row.lease_until !== null && row.lease_until > now;
}

/** The binding this object is reached through (wrangler.toml); code that calls it takes this, not the whole Env. */
export interface SessionBindings {
  /** One object per conversation: owner, sticky worker, epoch, frontier ids, lease. */
  SESSIONS: DurableObjectNamespace<SessionDO>;
}

export class SessionDO extends DurableObject<unknown> {
  readonly #sql: SqlStorage;
  /** Hinted opens waiting for the lease (HINT_LEASE_WAIT_MS); called when a lease is released. */
  readonly #leaseWaiters = new Set<() => void>();
  /** Assistant turns the lease holder's request replayed (memory only: unknown after an eviction). */
  #leaseTurns: { requestId: string; assistantTurns: number } | undefined;
  /** Soft columns newer than the SQLite row (undefined: the row is current). */
  #soft: SoftColumns | undefined;
  readonly #softWrite = new WriteBehind(() => this.#writeSoft());

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS session (
      singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
      session_id TEXT NOT NULL, tenant TEXT NOT NULL, worker_url TEXT NOT NULL, epoch INTEGER NOT NULL,
      created_at INTEGER NOT NULL, last_used_at INTEGER NOT NULL, turns INTEGER NOT NULL DEFAULT 0,
      last_message_id TEXT, lease_request_id TEXT, lease_until INTEGER)`);
    this.#sql.exec("CREATE TABLE IF NOT EXISTS frontier (position INTEGER PRIMARY KEY, tool_use_id TEXT NOT NULL)");
    this.#sql.exec(
      "CREATE TABLE IF NOT EXISTS prefix (singleton INTEGER PRIMARY KEY CHECK (singleton = 1), fingerprint TEXT NOT NULL)",
    );
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
      const running = busy ? this.#runningTurn(row, args, now - asked) : undefined;
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
    this.ctx.storage.transactionSync(() => {
      this.#sql.exec(
        "UPDATE session SET turns = turns + 1, last_message_id = ?, last_used_at = ?, lease_request_id = ?, lease_until = ?",
        args.messageId,
        now,
        released ? null : row.lease_request_id,
        released ? null : row.lease_until,
      );
      this.#sql.exec("DELETE FROM frontier");
      args.toolUseIds.forEach((id, position) => {
        this.#sql.exec("INSERT INTO frontier (position, tool_use_id) VALUES (?, ?)", position, id);
      });
    });
    this.#written();
    if (released) this.#wakeLeaseWaiters();
    return true;
  }

  /** Release the lease without recording a turn (the request failed or was cancelled). */
  async release(args: { tenant: string; requestId: string }): Promise<void> {
    const row = this.#row();
    if (!row || row.tenant !== args.tenant || row.lease_request_id !== args.requestId) return;
    this.#setSoft({ last_used_at: row.last_used_at, lease_request_id: null, lease_until: null });
    this.#wakeLeaseWaiters();
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
      frontierToolUseIds: this.#frontier(),
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
      const running = this.#runningTurn(row, args, now - asked);
      if (hintDecision(this.#hintState(row, now), args.firstTurn ?? false, running) !== "wait") return;
      await this.#leaseReleased(running.reprefillMs - running.remainingMs);
    }
  }

  /**
   * The turn holding the lease, as a hinted request sees it. The client has the answer of a turn it
   * follows, so what remains is the record: the time already waited counts against the budget.
   */
  #runningTurn(row: SessionRow, args: OpenArgs, waitedMs: number): RunningTurn {
    const holder = this.#leaseTurns;
    if (holder === undefined || holder.requestId !== row.lease_request_id || args.assistantTurns === undefined) {
      return { follows: true, remainingMs: waitedMs, reprefillMs: HINT_LEASE_WAIT_MS };
    }
    const follows = args.assistantTurns === holder.assistantTurns + 1;
    return { follows, remainingMs: waitedMs, reprefillMs: HINT_FOLLOW_WAIT_MS };
  }

  #hintState(row: SessionRow, now: number): HintState {
    return { exists: true, busy: leaseHeld(row, now), pendingToolUseIds: this.#frontier().length, turns: row.turns };
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
    const recorded = this.#prefix();
    return fingerprint !== undefined && recorded !== undefined && recorded !== fingerprint;
  }

  /** Resolves when a lease is released (recordTurn, release) or after `ms`, whichever is first. */
  #leaseReleased(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#leaseWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#leaseWaiters.add(done);
    });
  }

  #wakeLeaseWaiters(): void {
    for (const wake of [...this.#leaseWaiters]) wake();
  }

  /** A new session at epoch 1 on `workerUrl`, its lease held by `requestId`. */
  async #create(
    session: { sessionId: string; tenant: string; workerUrl: string; prefix?: string | undefined },
    now: number,
    requestId: string,
  ): Promise<void> {
    this.#sql.exec(
      `INSERT INTO session (singleton, session_id, tenant, worker_url, epoch, created_at, last_used_at, lease_request_id, lease_until)
       VALUES (1, ?, ?, ?, 1, ?, ?, ?, ?)`,
      session.sessionId,
      session.tenant,
      session.workerUrl,
      now,
      now,
      requestId,
      now + LEASE_MS,
    );
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
    this.#sql.exec(
      "UPDATE session SET last_used_at = ?, lease_request_id = ?, lease_until = ?",
      soft.last_used_at,
      soft.lease_request_id,
      soft.lease_until,
    );
    this.#soft = undefined;
  }

  /** A write just put the soft columns in SQLite (or removed the row): nothing is pending. */
  #written(): void {
    this.#soft = undefined;
    this.#softWrite.written();
  }

  #prefix(): string | undefined {
    return this.#sql.exec<{ fingerprint: string }>("SELECT fingerprint FROM prefix").toArray()[0]?.fingerprint;
  }

  #setPrefix(fingerprint: string | undefined): void {
    // Unchanged on nearly every turn: not rewriting it keeps a continuing open to the lease's write.
    if (fingerprint === undefined || fingerprint === this.#prefix()) return;
    this.#sql.exec("INSERT OR REPLACE INTO prefix (singleton, fingerprint) VALUES (1, ?)", fingerprint);
  }

  /** The session as this object knows it: the SQLite row with the soft columns not yet written. */
  #row(): SessionRow | undefined {
    const row = this.#sql.exec<SessionRow>("SELECT * FROM session WHERE singleton = 1").toArray()[0];
    return row && this.#soft ? { ...row, ...this.#soft } : row;
  }

  #frontier(): string[] {
    return this.#sql
      .exec<{ tool_use_id: string }>("SELECT tool_use_id FROM frontier ORDER BY position")
      .toArray()
      .map((r) => r.tool_use_id);
  }

  async #scheduleExpiry(now: number): Promise<void> {
    await this.ctx.storage.setAlarm(now + IDLE_TTL_MS);
  }
}
