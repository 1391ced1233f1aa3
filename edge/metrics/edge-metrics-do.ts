/**
 * EdgeMetricsDO: the edge's counters, aggregated in one Durable Object (named "edge"). A Worker has
 * no process-wide memory to keep a Prometheus registry in — every isolate (many per location, many
 * locations) would count its own share and vanish when evicted — so each request's observation is
 * sent here after the response (waitUntil). It also keeps the latest turns' cache decisions for the
 * status page. Increments add up in memory and reach SQLite as soft state (../write-behind.ts): one
 * transaction per write delay, however many requests it covers, and before every read, so a scrape
 * sees every increment this object took; a crash loses at most the last delay's worth. One object
 * serialises every increment: fine for a pool-sized deployment; past a few thousand requests a
 * second, shard it by location or move the observations to Workers Analytics Engine (README "Edge
 * metrics").
 */
import { DurableObject } from "cloudflare:workers";
import { WriteBehind } from "../core/write-behind.ts";
import type { MetricIncrement, MetricSample } from "./catalog.ts";
import { bucketFamily, cumulativeBuckets, hitsOfCumulative } from "./histogram.ts";

/** A finished turn as the status page lists it. */
export interface RecentTurn {
  at: number;
  protocol: string;
  /** First 8 hex characters of the session id. */
  session: string;
  decision: string;
  miss: string;
  cached: number;
  prompt: number;
  placement: string;
  failover: boolean;
}

const RECENT_TURNS = 50;

/** Increments not written yet: counter and bucket sums by their SQLite key, and the turns in order. */
interface Pending {
  counters: Map<string, { name: string; labels: string; value: number }>;
  hits: Map<string, { family: string; labels: string; le: string; value: number }>;
  turns: RecentTurn[];
}

const nothingPending = (): Pending => ({ counters: new Map(), hits: new Map(), turns: [] });

/** The binding this object is reached through (wrangler.toml); code that calls it takes this, not the whole Env. */
export interface MetricsBindings {
  /** The edge's request and turn counters (one object, "edge"). */
  METRICS: DurableObjectNamespace<EdgeMetricsDO>;
}

export class EdgeMetricsDO extends DurableObject<unknown> {
  readonly #sql: SqlStorage;
  #pending = nothingPending();
  readonly #write = new WriteBehind(() => this.#flush());

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS counters (name TEXT NOT NULL, labels TEXT NOT NULL,
      value REAL NOT NULL, PRIMARY KEY (name, labels))`);
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS bucket_hits (family TEXT NOT NULL, labels TEXT NOT NULL,
      le TEXT NOT NULL, value REAL NOT NULL, PRIMARY KEY (family, labels, le))`);
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS recent_turns (seq INTEGER PRIMARY KEY AUTOINCREMENT,
      turn TEXT NOT NULL)`);
    this.#moveCumulativeBuckets();
  }

  async add(increments: MetricIncrement[], turn?: RecentTurn): Promise<void> {
    const { counters, hits, turns } = this.#pending;
    for (const { name, labels, value } of increments) {
      const family = bucketFamily(name);
      if (family) {
        const { le = "+Inf", ...rest } = labels;
        const entry = { family, labels: canonicalLabels(rest), le, value };
        addTo(hits, `${family}\u0000${entry.labels}\u0000${le}`, entry);
      } else {
        const entry = { name, labels: canonicalLabels(labels), value };
        addTo(counters, `${name}\u0000${entry.labels}`, entry);
      }
    }
    if (turn && turns.push(turn) > RECENT_TURNS) turns.shift();
    this.#write.changed();
  }

  async samples(): Promise<MetricSample[]> {
    this.#flush();
    const hits = this.#sql
      .exec<{ family: string; labels: string; le: string; value: number }>(
        "SELECT * FROM bucket_hits ORDER BY family, labels",
      )
      .toArray()
      .map((row) => ({ ...row, labels: JSON.parse(row.labels) as Record<string, string> }));
    return [...this.#counters(), ...cumulativeBuckets(hits)];
  }

  /** The latest finished turns, newest first. */
  async recentTurns(): Promise<RecentTurn[]> {
    this.#flush();
    return this.#sql
      .exec<{ turn: string }>("SELECT turn FROM recent_turns ORDER BY seq DESC")
      .toArray()
      .map((row) => JSON.parse(row.turn) as RecentTurn);
  }

  #counters(where = ""): MetricSample[] {
    return this.#sql
      .exec<{ name: string; labels: string; value: number }>(`SELECT * FROM counters ${where} ORDER BY name, labels`)
      .toArray()
      .map((row) => ({ name: row.name, labels: JSON.parse(row.labels) as Record<string, string>, value: row.value }));
  }

  /** Add what is pending to SQLite, in one transaction. */
  #flush(): void {
    const { counters, hits, turns } = this.#pending;
    this.#write.written();
    if (counters.size === 0 && hits.size === 0 && turns.length === 0) return;
    this.#pending = nothingPending();
    this.ctx.storage.transactionSync(() => {
      for (const { name, labels, value } of counters.values()) {
        this.#sql.exec(
          `INSERT INTO counters VALUES (?, ?, ?) ON CONFLICT (name, labels) DO UPDATE SET value = value + excluded.value`,
          name,
          labels,
          value,
        );
      }
      for (const { family, labels, le, value } of hits.values()) this.#upsertHits(family, labels, le, value);
      for (const turn of turns.slice(-RECENT_TURNS)) {
        this.#sql.exec("INSERT INTO recent_turns (turn) VALUES (?)", JSON.stringify(turn));
      }
      if (turns.length > 0) {
        this.#sql.exec("DELETE FROM recent_turns WHERE seq <= (SELECT MAX(seq) FROM recent_turns) - ?", RECENT_TURNS);
      }
    });
  }

  #upsertHits(family: string, labels: string, le: string, value: number): void {
    this.#sql.exec(
      `INSERT INTO bucket_hits VALUES (?, ?, ?, ?)
       ON CONFLICT (family, labels, le) DO UPDATE SET value = value + excluded.value`,
      family,
      labels,
      le,
      value,
    );
  }

  /** An older edge stored histograms as cumulative `_bucket` counters: turn them into hits, once. */
  #moveCumulativeBuckets(): void {
    const old = this.#counters("WHERE name LIKE '%\\_bucket' ESCAPE '\\'");
    if (old.length === 0) return;
    this.ctx.storage.transactionSync(() => {
      for (const { family, labels, le, value } of hitsOfCumulative(old)) {
        this.#upsertHits(family, canonicalLabels(labels), le, value);
      }
      this.#sql.exec("DELETE FROM counters WHERE name LIKE '%\\_bucket' ESCAPE '\\'");
    });
  }
}

/** Add `entry.value` to the sum under `key` (the entry itself when there is none yet). */
function addTo<T extends { value: number }>(sums: Map<string, T>, key: string, entry: T): void {
  const sum = sums.get(key);
  if (sum) sum.value += entry.value;
  else sums.set(key, entry);
}

/** Labels as a stable key: sorted by name. */
function canonicalLabels(labels: Record<string, string>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1))));
}
