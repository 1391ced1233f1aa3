/**
 * PoolDO: one per region (named `pool:<region>`). Keeps the region's GPU workers — static members
 * from wrangler.toml and workers that register and heartbeat — with their capacity, load and the
 * prompt prefixes they hold; answers placements (counting its own since each heartbeat, so a burst of
 * new sessions spreads) and records drain and down states. A registered worker that misses heartbeats
 * for `timeoutMs` is down; a worker the edge failed to reach is down until it heartbeats again (a
 * static one for a cooldown).
 * Rows are keyed by worker id, one per credential: a heartbeat is checked against its credential's
 * binding (registration-check.ts) and refreshes only its own row; placement counts at most the
 * credential's capacity ceiling. Credentials issued at run time live here too (credential-store.ts).
 */
import { DurableObject } from "cloudflare:workers";
import type { WorkerReport } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { EndpointPattern, WorkerBinding } from "../config/registration.ts";
import { type CredentialInfo, type CredentialLookup, CredentialStore, type IssueArgs } from "./credential-store.ts";
import { createMembersTable, FOREVER, memberView, type Row, stateOf, toWorker, writeMember } from "./member-row.ts";
import {
  heldDepth,
  notePlacement,
  type Placement,
  type PlacementRequest,
  type PoolWorker,
  placeSession,
  type WorkerState,
} from "./placement.ts";
import { checkRegistration, type Refusal } from "./registration-check.ts";

export interface PoolArgs {
  region: string;
  /** The region's static members from the configuration. */
  staticUrls: string[];
  timeoutMs: number;
}

/** A heartbeat to check and apply: the binding of an env or development credential, or the digest of a token to look up here. */
export interface RegisterArgs extends PoolArgs {
  report: WorkerReport;
  auth: { binding: WorkerBinding } | { digest: string };
  allowList: readonly EndpointPattern[];
}

export type RegisterResult = { ok: true; state: WorkerState } | { ok: false; refusal: Refusal };
export interface PlacementStats {
  placements: number;
  /** Placements of a request whose prefix some worker advertised. */
  prefixKnown: number;
  /** Placements that went to a worker holding the prefix. */
  prefixHits: number;
}

/** A static member the edge could not reach is skipped this long. */
const STATIC_DOWN_MS = 30_000;
/** A registered worker silent this long is forgotten. */
const FORGET_MS = 24 * 3600_000;

/** The binding this object is reached through (wrangler.toml); code that calls it takes this, not the whole Env. */
export interface PoolBindings {
  /** One GPU worker pool per region (`pool:<region>`). */
  POOLS: DurableObjectNamespace<PoolDO>;
}

export class PoolDO extends DurableObject<unknown> {
  readonly #sql: SqlStorage;

  readonly #credentials: CredentialStore;

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    createMembersTable(this.#sql);
    this.#migrateUrlKeyedRows();
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS placement_stats (singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
      placements INTEGER NOT NULL, prefix_known INTEGER NOT NULL, prefix_hits INTEGER NOT NULL)`);
    this.#sql.exec("INSERT OR IGNORE INTO placement_stats VALUES (1, 0, 0, 0)");
    this.#credentials = new CredentialStore(this.#sql);
  }

  /**
   * Check a heartbeat against its credential and the pool's rows (registration-check.ts); if it
   * passes, register or refresh the worker's own row and answer the state the pool holds for it.
   */
  async register(args: RegisterArgs): Promise<RegisterResult> {
    this.#seed(args.region, args.staticUrls);
    const { report } = args;
    let binding: WorkerBinding;
    if ("binding" in args.auth) binding = args.auth.binding;
    else {
      const found = this.#credentials.lookup(report.id, args.auth.digest, args.region);
      if (found.kind === "refused") {
        const message =
          found.reason === "revoked"
            ? "This worker's credential was revoked"
            : "A valid pool token for this worker id is required (Authorization: Bearer <token>)";
        return { ok: false, refusal: { reason: found.reason, status: 401, message } };
      }
      binding = found.binding;
    }
    const now = Date.now();
    const rows = this.#rows();
    const check = checkRegistration({
      binding,
      report,
      allowList: args.allowList,
      members: rows.map(memberView),
      now,
      timeoutMs: args.timeoutMs,
    });
    if (!check.ok) return check;
    const old = rows.find((r) => r.id === report.id);
    const restarted = old !== undefined && old.boot !== report.boot;
    const drain = report.draining ? (old?.drain ?? "draining") : restarted ? null : (old?.drain ?? null);
    // The row keeps its static flag: a static slot the worker takes over (or already holds) stays the operator's.
    const isStatic = check.replaces?.static === true || (old?.static === 1 && old.url === report.url);
    this.ctx.storage.transactionSync(() => {
      if (check.replaces) this.#sql.exec("DELETE FROM members WHERE id = ?", check.replaces.id);
      if (old && old.url !== report.url && old.static === 1) this.#vacate(old);
      writeMember(this.#sql, {
        report,
        region: args.region,
        isStatic,
        ceiling: binding.capacity,
        now,
        drain,
        // Up without a break since then: cached routes to it confirmed before are not trusted (route-cache.ts).
        upSince: old && !restarted && stateOf(old, now, args.timeoutMs) === "up" ? (old.up_since ?? 0) : now,
      });
    });
    const row = this.#rows().find((r) => r.id === report.id);
    return { ok: true, state: row ? stateOf(row, now, args.timeoutMs) : "down" };
  }

  /** A worker leaves the static slot it held: the slot stays, as the operator's, in the state the worker left it. */
  #vacate(row: Row): void {
    this.#sql.exec("DELETE FROM members WHERE id = ?", row.id);
    this.#sql.exec(
      `INSERT INTO members (id, url, region, static, last_heartbeat, down_until) VALUES (?, ?, ?, 1, ?, ?)`,
      row.url,
      row.url,
      row.region,
      row.last_heartbeat,
      row.down_until,
    );
  }

  /** What a run-time credential's token digest resolves to for `id` (the self-drain route's check). */
  async lookupCredential(id: string, digest: string, region: string): Promise<CredentialLookup> {
    return this.#credentials.lookup(id, digest, region);
  }

  /** Issue a credential in this region (the token's SHA-256 only). */
  async issueCredential(args: IssueArgs): Promise<"issued" | "exists"> {
    return this.#credentials.issue(args);
  }

  /** Revoke a credential: its heartbeats are refused and its row is down for good (no more placements). */
  async revokeCredential(id: string): Promise<boolean> {
    if (!this.#credentials.revoke(id)) return false;
    this.#sql.exec("UPDATE members SET down_until = ? WHERE id = ?", FOREVER, id);
    return true;
  }

  async credentials(): Promise<CredentialInfo[]> {
    return this.#credentials.list();
  }

  /** Every member with its current state. */
  async view(args: PoolArgs): Promise<PoolWorker[]> {
    this.#seed(args.region, args.staticUrls);
    const now = Date.now();
    return this.#rows().map((row) => toWorker(row, now, args.timeoutMs));
  }

  /**
   * Place a session (see placement.ts) and count it against the chosen worker until its next
   * heartbeat. `moving`: an existing session changing workers (not counted in the placement stats).
   */
  async place(args: PoolArgs & PlacementRequest & { moving?: boolean }): Promise<Placement | null> {
    const workers = await this.view(args);
    const placement = placeSession(workers, args);
    if (!placement) return null;
    this.#count(placement, args, args.moving ?? false);
    return placement;
  }

  /**
   * Count a new session the edge placed from its cached view, where the choice was forced (the
   * home region's only worker up): the same bookkeeping as `place`, off the request's path.
   */
  async notePlaced(args: PoolArgs & PlacementRequest & { url: string }): Promise<void> {
    const workers = await this.view(args);
    const worker = workers.find((w) => w.url === args.url);
    if (!worker) return;
    const chain = args.chain ?? (args.prefix === undefined ? [] : [args.prefix]);
    const prefixKnown = workers.some((w) => heldDepth(w, chain) >= 0);
    const reason = heldDepth(worker, chain) >= 0 ? "prefix" : "load";
    this.#count({ worker, reason, prefixKnown }, args, false);
  }

  /** Count a placement against its worker until the next heartbeat (and in the stats, unless `moving`). */
  #count(placement: Placement, request: PlacementRequest, moving: boolean): void {
    const now = Date.now();
    this.#sql.exec("UPDATE members SET pending = pending + 1, placed_at = ? WHERE id = ?", now, placement.worker.id);
    // The heartbeat then replaces the prefix list with the worker's own.
    if (notePlacement(placement.worker, request.prefix, request.chain, now)) {
      this.#sql.exec(
        "UPDATE members SET prefixes = ? WHERE id = ?",
        JSON.stringify(placement.worker.prefixes),
        placement.worker.id,
      );
    }
    if (moving) return;
    this.#sql.exec(
      `UPDATE placement_stats SET placements = placements + 1, prefix_known = prefix_known + ?,
         prefix_hits = prefix_hits + ?`,
      placement.prefixKnown ? 1 : 0,
      placement.reason === "prefix" ? 1 : 0,
    );
  }

  /** The edge could not reach this worker: down until it heartbeats again (static: for a cooldown). */
  async markDown(url: string): Promise<void> {
    const row = this.#rows().find((r) => r.url === url);
    if (!row) return;
    const until = row.last_heartbeat === null ? Date.now() + STATIC_DOWN_MS : FOREVER;
    // A static member never heard from comes back by itself, at `until`; a heartbeat sets a worker's.
    const upSince = until === FOREVER ? row.up_since : until;
    this.#sql.exec("UPDATE members SET down_until = ?, up_since = ? WHERE url = ?", until, upSince, url);
  }

  /** Set a worker's drain state (by id or URL); null clears it. The worker after the change, if known. */
  async setDrain(
    args: PoolArgs & { worker: string; drain: "draining" | "drained" | null },
  ): Promise<PoolWorker | null> {
    this.#seed(args.region, args.staticUrls);
    const row = this.#rows().find((r) => r.id === args.worker || r.url === args.worker);
    if (!row) return null;
    const upSince = args.drain === null && row.drain !== null ? Date.now() : row.up_since;
    this.#sql.exec("UPDATE members SET drain = ?, up_since = ? WHERE id = ?", args.drain, upSince, row.id);
    return toWorker({ ...row, drain: args.drain }, Date.now(), args.timeoutMs);
  }

  async stats(): Promise<PlacementStats> {
    const row = this.#sql
      .exec<{ placements: number; prefix_known: number; prefix_hits: number }>("SELECT * FROM placement_stats")
      .toArray()[0];
    return { placements: row?.placements ?? 0, prefixKnown: row?.prefix_known ?? 0, prefixHits: row?.prefix_hits ?? 0 };
  }

  /** Static members as configured now; registered workers silent for a day are forgotten. */
  #seed(region: string, staticUrls: readonly string[]): void {
    const now = Date.now();
    const configured = new Set(staticUrls);
    for (const row of this.#rows()) {
      if (row.static === 1 && !configured.has(row.url)) {
        if (row.last_heartbeat === null || row.id === row.url)
          this.#sql.exec("DELETE FROM members WHERE id = ?", row.id);
        else this.#sql.exec("UPDATE members SET static = 0 WHERE id = ?", row.id);
      } else if (row.static === 0 && row.last_heartbeat !== null && now - row.last_heartbeat > FORGET_MS) {
        this.#sql.exec("DELETE FROM members WHERE id = ?", row.id);
      }
    }
    // A static member never heard from is a slot named by its URL; a worker bound to that URL takes it.
    for (const url of staticUrls) {
      this.#sql.exec(
        "INSERT INTO members (id, url, region, static) VALUES (?, ?, ?, 1) ON CONFLICT (url) DO UPDATE SET static = 1",
        url,
        url,
        region,
      );
    }
  }

  /** An older pool kept one row per URL (table `workers`): keep each worker id's newest row, once. */
  #migrateUrlKeyedRows(): void {
    const old = this.#sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'workers'").toArray();
    if (old.length === 0) return;
    this.ctx.storage.transactionSync(() => {
      this.#sql.exec(`INSERT OR IGNORE INTO members (id, url, region, static, boot, model, seq_total, seq_free, queue,
          active, resident, prefixes, pending, last_heartbeat, down_until, drain)
        SELECT id, url, region, static, boot, model, seq_total, seq_free, queue, active, resident, prefixes, pending,
          last_heartbeat, down_until, drain FROM workers ORDER BY last_heartbeat IS NULL, last_heartbeat DESC`);
      this.#sql.exec("DROP TABLE workers");
    });
  }

  #rows(): Row[] {
    return this.#sql.exec<Row>("SELECT * FROM members ORDER BY url").toArray();
  }
}
