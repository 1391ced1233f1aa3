/**
 * UsageDO: one per tenant (named by the tenant id). The token usage counted before each tenant's
 * authority kept the ledger (authority/usage-ledger.ts, issue 44): nothing records here any more;
 * `/admin/usage` and the metrics add what it holds (daily buckets per key hash prefix, all-time
 * totals) to the ledgers' reports, so no history is lost across the upgrade.
 */
import { DurableObject } from "cloudflare:workers";

/** One finished turn as the edge reports it. */
export interface TurnUsage {
  requestId: string;
  /** `sha256(key)` hex, first 16 characters. */
  keyId: string;
  /** Prompt tokens: cached + prefilled. */
  inputTokens: number;
  cachedTokens: number;
  prefilledTokens: number;
  outputTokens: number;
  /** Epoch ms the turn finished. */
  at: number;
}

export interface UsageTotals {
  turns: number;
  inputTokens: number;
  cachedTokens: number;
  prefilledTokens: number;
  outputTokens: number;
}

export interface UsageBucket extends UsageTotals {
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  keyId: string;
}

export interface UsageReport {
  days: UsageBucket[];
  /** All-time totals per key. */
  keys: (UsageTotals & { keyId: string })[];
}

const TURN_RETENTION_DAYS = 35;
const DAY_MS = 86_400_000;

/** The binding this object is reached through (wrangler.toml); code that calls it takes this, not the whole Env. */
export interface UsageBindings {
  /** Token usage per tenant (billing), one object per tenant. */
  USAGE: DurableObjectNamespace<UsageDO>;
}

export class UsageDO extends DurableObject<unknown> {
  readonly #sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS turns (request_id TEXT PRIMARY KEY, at INTEGER NOT NULL)`);
    this.#sql.exec(`CREATE INDEX IF NOT EXISTS turns_at ON turns (at)`);
    const sums = `turns INTEGER NOT NULL, input INTEGER NOT NULL, cached INTEGER NOT NULL,
      prefilled INTEGER NOT NULL, output INTEGER NOT NULL`;
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS daily (day TEXT NOT NULL, key_id TEXT NOT NULL, ${sums},
      PRIMARY KEY (day, key_id))`);
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS totals (key_id TEXT PRIMARY KEY, ${sums})`);
  }

  /** Count a turn; false when its request id was counted already. */
  async record(turn: TurnUsage): Promise<{ counted: boolean }> {
    const counted = this.ctx.storage.transactionSync(() => {
      const seen = this.#sql.exec("SELECT 1 FROM turns WHERE request_id = ?", turn.requestId).toArray();
      if (seen.length > 0) return false;
      this.#sql.exec("INSERT INTO turns VALUES (?, ?)", turn.requestId, turn.at);
      const values = [turn.inputTokens, turn.cachedTokens, turn.prefilledTokens, turn.outputTokens];
      const add = `turns = turns + 1, input = input + excluded.input, cached = cached + excluded.cached,
        prefilled = prefilled + excluded.prefilled, output = output + excluded.output`;
      this.#sql.exec(
        `INSERT INTO daily VALUES (?, ?, 1, ?, ?, ?, ?) ON CONFLICT (day, key_id) DO UPDATE SET ${add}`,
        dayOf(turn.at),
        turn.keyId,
        ...values,
      );
      this.#sql.exec(
        `INSERT INTO totals VALUES (?, 1, ?, ?, ?, ?) ON CONFLICT (key_id) DO UPDATE SET ${add}`,
        turn.keyId,
        ...values,
      );
      this.#sql.exec("DELETE FROM turns WHERE at < ?", turn.at - TURN_RETENTION_DAYS * DAY_MS);
      return true;
    });
    return { counted };
  }

  /** Daily buckets between `from` and `to` (inclusive, `YYYY-MM-DD`; default: all) and all-time totals. */
  async report(range: { from?: string; to?: string } = {}): Promise<UsageReport> {
    const days = this.#sql
      .exec<BucketRow>(
        "SELECT * FROM daily WHERE day >= ? AND day <= ? ORDER BY day, key_id",
        range.from ?? "0000-00-00",
        range.to ?? "9999-99-99",
      )
      .toArray()
      .map((row) => ({ day: row.day, keyId: row.key_id, ...totalsOf(row) }));
    const keys = this.#sql
      .exec<BucketRow>("SELECT * FROM totals ORDER BY key_id")
      .toArray()
      .map((row) => ({ keyId: row.key_id, ...totalsOf(row) }));
    return { days, keys };
  }
}

type BucketRow = {
  day: string;
  key_id: string;
  turns: number;
  input: number;
  cached: number;
  prefilled: number;
  output: number;
};

function totalsOf(row: BucketRow): UsageTotals {
  return {
    turns: row.turns,
    inputTokens: row.input,
    cachedTokens: row.cached,
    prefilledTokens: row.prefilled,
    outputTokens: row.output,
  };
}

export function dayOf(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}
