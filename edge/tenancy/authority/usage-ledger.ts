/**
 * A tenant's usage ledger, in its authority's SQLite: one row per turn (its request id, key, model,
 * tokens, cost and the price version that costed it), counted once however often it is reported,
 * and hourly buckets per key and model that every report and every budget sums. Turn rows are kept
 * `TURN_RETENTION_DAYS` (de-duplication, recent detail); buckets are kept for good, so revoked keys
 * and an archived tenant keep their history.
 */
import type { TokenUsage } from "../pricing.ts";

/** One finished (or cut short) turn, as the authority records it. */
export interface TurnRecord extends TokenUsage {
  requestId: string;
  keyId: string;
  model: string;
  costNano: number;
  priceVersion: number;
  /** Epoch ms the turn was settled. */
  at: number;
  /** The turn did not stop (cancelled, failed): its output is what the edge saw streamed. */
  partial: boolean;
}

export interface UsageTotals {
  turns: number;
  /** Prompt tokens: cached + prefilled. */
  inputTokens: number;
  cachedTokens: number;
  prefilledTokens: number;
  outputTokens: number;
  costNano: number;
}

export interface UsageHour extends UsageTotals {
  /** Epoch ms of the UTC hour's start. */
  hour: number;
  keyId: string;
  model: string;
}

/** Daily buckets per key and all-time totals per key (GET /admin/usage). */
export interface UsageReport {
  days: (UsageTotals & { day: string; keyId: string })[];
  keys: (UsageTotals & { keyId: string })[];
}

const TURN_RETENTION_DAYS = 35;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

type HourRow = {
  hour: number;
  key_id: string;
  model: string;
  turns: number;
  prefilled: number;
  cached: number;
  output: number;
  cost_nano: number;
};

export class UsageLedger {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS usage_turns (request_id TEXT PRIMARY KEY, at INTEGER NOT NULL,
      key_id TEXT NOT NULL, model TEXT NOT NULL, prefilled INTEGER NOT NULL, cached INTEGER NOT NULL,
      output INTEGER NOT NULL, cost_nano INTEGER NOT NULL, price_version INTEGER NOT NULL, partial INTEGER NOT NULL)`);
    sql.exec("CREATE INDEX IF NOT EXISTS usage_turns_at ON usage_turns (at)");
    sql.exec(`CREATE TABLE IF NOT EXISTS usage_hours (hour INTEGER NOT NULL, key_id TEXT NOT NULL, model TEXT NOT NULL,
      turns INTEGER NOT NULL, prefilled INTEGER NOT NULL, cached INTEGER NOT NULL, output INTEGER NOT NULL,
      cost_nano INTEGER NOT NULL, PRIMARY KEY (hour, key_id, model))`);
  }

  /** Count a turn; false when its request id was counted already. Call inside a transaction. */
  record(turn: TurnRecord): boolean {
    const seen = this.sql.exec("SELECT 1 FROM usage_turns WHERE request_id = ?", turn.requestId).toArray();
    if (seen.length > 0) return false;
    this.sql.exec(
      "INSERT INTO usage_turns VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      turn.requestId,
      turn.at,
      turn.keyId,
      turn.model,
      turn.prefilled,
      turn.cached,
      turn.output,
      turn.costNano,
      turn.priceVersion,
      turn.partial ? 1 : 0,
    );
    this.sql.exec(
      `INSERT INTO usage_hours VALUES (?, ?, ?, 1, ?, ?, ?, ?) ON CONFLICT (hour, key_id, model) DO UPDATE SET
        turns = turns + 1, prefilled = prefilled + excluded.prefilled, cached = cached + excluded.cached,
        output = output + excluded.output, cost_nano = cost_nano + excluded.cost_nano`,
      Math.floor(turn.at / HOUR_MS) * HOUR_MS,
      turn.keyId,
      turn.model,
      turn.prefilled,
      turn.cached,
      turn.output,
      turn.costNano,
    );
    this.sql.exec("DELETE FROM usage_turns WHERE at < ?", turn.at - TURN_RETENTION_DAYS * DAY_MS);
    return true;
  }

  /** Cost charged since `start` (an hour boundary), the whole tenant's or one key's. */
  spentSince(start: number, keyId?: string): number {
    const row =
      keyId === undefined
        ? this.sql.exec<{ s: number }>(
            "SELECT COALESCE(SUM(cost_nano), 0) AS s FROM usage_hours WHERE hour >= ?",
            start,
          )
        : this.sql.exec<{ s: number }>(
            "SELECT COALESCE(SUM(cost_nano), 0) AS s FROM usage_hours WHERE hour >= ? AND key_id = ?",
            start,
            keyId,
          );
    return row.one().s;
  }

  /** Hourly buckets in [from, to) (epoch ms), by hour, key and model. */
  hours(from: number, to: number): UsageHour[] {
    return this.sql
      .exec<HourRow>("SELECT * FROM usage_hours WHERE hour >= ? AND hour < ? ORDER BY hour, key_id, model", from, to)
      .toArray()
      .map((row) => ({ hour: row.hour, keyId: row.key_id, model: row.model, ...totalsOf(row) }));
  }

  /** The recorded turns in [from, to) (epoch ms), oldest first; kept `TURN_RETENTION_DAYS`. */
  turns(from: number, to: number): TurnRecord[] {
    type Row = Omit<HourRow, "hour" | "turns"> & {
      request_id: string;
      at: number;
      price_version: number;
      partial: number;
    };
    return this.sql
      .exec<Row>("SELECT * FROM usage_turns WHERE at >= ? AND at < ? ORDER BY at, request_id", from, to)
      .toArray()
      .map((row) => ({
        requestId: row.request_id,
        keyId: row.key_id,
        model: row.model,
        prefilled: row.prefilled,
        cached: row.cached,
        output: row.output,
        costNano: row.cost_nano,
        priceVersion: row.price_version,
        at: row.at,
        partial: row.partial === 1,
      }));
  }

  /** Daily buckets per key for days in [from, to] (`YYYY-MM-DD`, UTC) and all-time totals per key. */
  report(range: { from?: string; to?: string }): UsageReport {
    const from = range.from ? Date.parse(`${range.from}T00:00:00Z`) : 0;
    const to = range.to ? Date.parse(`${range.to}T00:00:00Z`) + DAY_MS : Number.MAX_SAFE_INTEGER;
    const days = new Map<string, UsageTotals & { day: string; keyId: string }>();
    for (const hour of this.hours(from, to)) {
      const day = new Date(hour.hour).toISOString().slice(0, 10);
      const key = `${day}\u0000${hour.keyId}`;
      days.set(key, addUsage(days.get(key) ?? { day, keyId: hour.keyId, ...ZERO }, hour));
    }
    const keys = this.sql
      .exec<HourRow>(
        `SELECT key_id, SUM(turns) AS turns, SUM(prefilled) AS prefilled, SUM(cached) AS cached, SUM(output) AS output,
          SUM(cost_nano) AS cost_nano FROM usage_hours GROUP BY key_id ORDER BY key_id`,
      )
      .toArray()
      .map((row) => ({ keyId: row.key_id, ...totalsOf(row) }));
    const sorted = [...days.values()].sort((a, b) => a.day.localeCompare(b.day) || a.keyId.localeCompare(b.keyId));
    return { days: sorted, keys };
  }
}

const ZERO: UsageTotals = {
  turns: 0,
  inputTokens: 0,
  cachedTokens: 0,
  prefilledTokens: 0,
  outputTokens: 0,
  costNano: 0,
};

function totalsOf(row: Pick<HourRow, "turns" | "prefilled" | "cached" | "output" | "cost_nano">): UsageTotals {
  return {
    turns: row.turns,
    inputTokens: row.prefilled + row.cached,
    cachedTokens: row.cached,
    prefilledTokens: row.prefilled,
    outputTokens: row.output,
    costNano: row.cost_nano,
  };
}

/** `a` with `b`'s counts added to its own (its other fields kept). */
export function addUsage<T extends UsageTotals>(a: T, b: UsageTotals): T {
  return {
    ...a,
    turns: a.turns + b.turns,
    inputTokens: a.inputTokens + b.inputTokens,
    cachedTokens: a.cachedTokens + b.cachedTokens,
    prefilledTokens: a.prefilledTokens + b.prefilledTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    costNano: a.costNano + b.costNano,
  };
}
