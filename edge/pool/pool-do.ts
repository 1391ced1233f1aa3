/**
 * PoolDO: one per region (named `pool:<region>`). Keeps the region's GPU workers — static members
 * from wrangler.toml and workers that register and heartbeat — with their capacity, load and the
 * prompt prefixes they hold; answers placements (counting its own since each heartbeat, so a burst of
 * new sessions spreads) and records drain and down states. A registered worker that misses heartbeats
 * for `timeoutMs` is down; a worker the edge failed to reach is down until it heartbeats again (a
 * static one for a cooldown).
 */
import { DurableObject } from "cloudflare:workers";
import type { WorkerReport } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { type Placement, type PlacementRequest, type PoolWorker, placeSession, type WorkerState } from "./placement.ts";
import { MAX_PREFIXES } from "./worker-report.ts";

export interface PoolArgs {
  region: string;
  /** The region's static members from the configuration. */
  staticUrls: string[];
  timeoutMs: number;
}

export interface PlacementStats {
  placements: number;
  /** Placements of a request whose prefix some worker advertised. */
  prefixKnown: number;
  /** Placements that went to a worker holding the prefix. */
  prefixHits: number;
}

type Row = {
  url: string;
  id: string;
  region: string;
  static: number;
  boot: string | null;
  model: string;
  seq_total: number;
  seq_free: number;
  queue: number;
  active: number;
  resident: number;
  prefixes: string;
  pending: number;
  last_heartbeat: number | null;
  down_until: number | null;
  drain: string | null;
};

/** A static member the edge could not reach is skipped this long. */
const STATIC_DOWN_MS = 30_000;
/** A registered worker silent this long is forgotten. */
const FORGET_MS = 24 * 3600_000;
const FOREVER = Number.MAX_SAFE_INTEGER;

/** The binding this object is reached through (wrangler.toml); code that calls it takes this, not the whole Env. */
export interface PoolBindings {
  /** One GPU worker pool per region (`pool:<region>`). */
  POOLS: DurableObjectNamespace<PoolDO>;
}

export class PoolDO extends DurableObject<unknown> {
  readonly #sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS workers (
      url TEXT PRIMARY KEY, id TEXT NOT NULL, region TEXT NOT NULL, static INTEGER NOT NULL DEFAULT 0,
      boot TEXT, model TEXT NOT NULL DEFAULT '', seq_total INTEGER NOT NULL DEFAULT 0,
      seq_free INTEGER NOT NULL DEFAULT 0, queue INTEGER NOT NULL DEFAULT 0, active INTEGER NOT NULL DEFAULT 0,
      resident INTEGER NOT NULL DEFAULT 0, prefixes TEXT NOT NULL DEFAULT '[]', pending INTEGER NOT NULL DEFAULT 0,
      last_heartbeat INTEGER, down_until INTEGER, drain TEXT)`);
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS placement_stats (singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
      placements INTEGER NOT NULL, prefix_known INTEGER NOT NULL, prefix_hits INTEGER NOT NULL)`);
    this.#sql.exec("INSERT OR IGNORE INTO placement_stats VALUES (1, 0, 0, 0)");
  }

  /** Register or refresh a worker; answers the state the pool holds for it. */
  async heartbeat(report: WorkerReport, timeoutMs: number): Promise<{ state: WorkerState }> {
    const now = Date.now();
    const old = this.#rows().find((r) => r.url === report.url);
    const restarted = old !== undefined && old.boot !== report.boot;
    const drain = report.draining ? (old?.drain ?? "draining") : restarted ? null : (old?.drain ?? null);
    this.#sql.exec(
      `INSERT INTO workers (url, id, region, static, boot, model, seq_total, seq_free, queue, active, resident,
         prefixes, pending, last_heartbeat, down_until, drain)
       VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)
       ON CONFLICT (url) DO UPDATE SET id = excluded.id, region = excluded.region, boot = excluded.boot,
         model = excluded.model, seq_total = excluded.seq_total, seq_free = excluded.seq_free, queue = excluded.queue,
         active = excluded.active, resident = excluded.resident, prefixes = excluded.prefixes, pending = 0,
         last_heartbeat = excluded.last_heartbeat, down_until = excluded.down_until, drain = excluded.drain`,
      report.url,
      report.id,
      report.region,
      report.boot,
      report.modelIdentity,
      report.sequencesTotal,
      report.sequencesFree,
      report.queueDepth,
      report.activeRequests,
      report.residentSessions,
      JSON.stringify(report.prefixes),
      now,
      report.leaving ? FOREVER : null,
      drain,
    );
    const row = this.#rows().find((r) => r.url === report.url);
    return { state: row ? stateOf(row, now, timeoutMs) : "down" };
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
    this.#count(placement, args.prefix, args.moving ?? false);
    return placement;
  }

  /**
   * Count a new session the edge placed from its cached view, where the choice was forced (the
   * home region's only worker up): the same bookkeeping as `place`, off the request's path.
   */
  async notePlaced(args: PoolArgs & { url: string; prefix?: string | undefined }): Promise<void> {
    const workers = await this.view(args);
    const worker = workers.find((w) => w.url === args.url);
    if (!worker) return;
    const prefix = args.prefix;
    const prefixKnown = prefix !== undefined && workers.some((w) => w.prefixes.includes(prefix));
    const reason = prefix !== undefined && worker.prefixes.includes(prefix) ? "prefix" : "load";
    this.#count({ worker, reason, prefixKnown }, prefix, false);
  }

  /** Count a placement against its worker until the next heartbeat (and in the stats, unless `moving`). */
  #count(placement: Placement, prefix: string | undefined, moving: boolean): void {
    this.#sql.exec("UPDATE workers SET pending = pending + 1 WHERE url = ?", placement.worker.url);
    placement.worker.pending += 1;
    // The chosen worker holds this prefix once it serves the session, but advertises it only from its
    // next heartbeat: record it now so a new session with the same prefix, even within that interval,
    // finds its holder. The heartbeat then replaces the list with the worker's own.
    if (prefix !== undefined && !placement.worker.prefixes.includes(prefix)) {
      placement.worker.prefixes = [prefix, ...placement.worker.prefixes].slice(0, MAX_PREFIXES);
      this.#sql.exec(
        "UPDATE workers SET prefixes = ? WHERE url = ?",
        JSON.stringify(placement.worker.prefixes),
        placement.worker.url,
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
    this.#sql.exec("UPDATE workers SET down_until = ? WHERE url = ?", until, url);
  }

  /** Set a worker's drain state (by id or URL); null clears it. The worker after the change, if known. */
  async setDrain(
    args: PoolArgs & { worker: string; drain: "draining" | "drained" | null },
  ): Promise<PoolWorker | null> {
    this.#seed(args.region, args.staticUrls);
    const row = this.#rows().find((r) => r.id === args.worker || r.url === args.worker);
    if (!row) return null;
    this.#sql.exec("UPDATE workers SET drain = ? WHERE url = ?", args.drain, row.url);
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
        if (row.last_heartbeat === null) this.#sql.exec("DELETE FROM workers WHERE url = ?", row.url);
        else this.#sql.exec("UPDATE workers SET static = 0 WHERE url = ?", row.url);
      } else if (row.static === 0 && row.last_heartbeat !== null && now - row.last_heartbeat > FORGET_MS) {
        this.#sql.exec("DELETE FROM workers WHERE url = ?", row.url);
      }
    }
    for (const url of staticUrls) {
      this.#sql.exec(
        "INSERT INTO workers (url, id, region, static) VALUES (?, ?, ?, 1) ON CONFLICT (url) DO UPDATE SET static = 1",
        url,
        url,
        region,
      );
    }
  }

  #rows(): Row[] {
    return this.#sql.exec<Row>("SELECT * FROM workers ORDER BY url").toArray();
  }
}

function stateOf(row: Row, now: number, timeoutMs: number): WorkerState {
  if (row.down_until !== null && row.down_until > now) return "down";
  if (row.last_heartbeat !== null && now - row.last_heartbeat > timeoutMs) return "down";
  if (row.drain === "drained" || row.drain === "draining") return row.drain;
  return "up";
}

function toWorker(row: Row, now: number, timeoutMs: number): PoolWorker {
  return {
    id: row.id,
    url: row.url,
    region: row.region,
    state: stateOf(row, now, timeoutMs),
    static: row.static === 1,
    modelIdentity: row.model,
    sequencesTotal: row.seq_total,
    sequencesFree: row.seq_free,
    queueDepth: row.queue,
    activeRequests: row.active,
    residentSessions: row.resident,
    pending: row.pending,
    prefixes: JSON.parse(row.prefixes) as string[],
    lastHeartbeat: row.last_heartbeat,
  };
}
