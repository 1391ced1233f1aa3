/**
 * The per-tenant ledger of stored Responses records. Records live one ResponseStoreDO per session,
 * so no session sees a tenant's total: each session's object reports what it holds for a tenant
 * (bytes, records, soonest and latest expiry) after every change, to one more ResponseStoreDO named
 * `ledgerName(tenant)`, which keeps one row per session here. A row whose latest record has expired
 * counts for nothing, so a report lost to a failure heals when the records expire.
 */

/** What a tenant holds across its sessions, as the ledger last heard it. */
export interface RecordUsage {
  bytes: number;
  records: number;
  /** Epoch ms when the soonest of its records expires (space comes back then); null when none. */
  soonestExpiry: number | null;
}

/** What one session holds for one tenant. */
export interface SessionHolding {
  bytes: number;
  records: number;
  soonestExpiry: number;
  latestExpiry: number;
}

/** The ledger object's name: not a session id (those are hex), so never a session's store. */
export function ledgerName(tenant: string): string {
  return `tenant-records/${tenant}`;
}

export class RecordLedger {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS tenant_holdings (
      session TEXT PRIMARY KEY, bytes INTEGER NOT NULL, records INTEGER NOT NULL,
      soonest_expiry INTEGER NOT NULL, latest_expiry INTEGER NOT NULL)`);
  }

  /** Replace what `session` holds (nothing: its row goes). */
  report(session: string, holding: SessionHolding | null): void {
    if (!holding || holding.records === 0) {
      this.#sql.exec("DELETE FROM tenant_holdings WHERE session = ?", session);
      return;
    }
    this.#sql.exec(
      `INSERT INTO tenant_holdings (session, bytes, records, soonest_expiry, latest_expiry) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (session) DO UPDATE SET bytes = excluded.bytes, records = excluded.records,
       soonest_expiry = excluded.soonest_expiry, latest_expiry = excluded.latest_expiry`,
      session,
      holding.bytes,
      holding.records,
      holding.soonestExpiry,
      holding.latestExpiry,
    );
  }

  usage(now: number): RecordUsage {
    this.#sql.exec("DELETE FROM tenant_holdings WHERE latest_expiry <= ?", now);
    const row = this.#sql
      .exec<{ bytes: number | null; records: number | null; soonest: number | null }>(
        "SELECT SUM(bytes) AS bytes, SUM(records) AS records, MIN(soonest_expiry) AS soonest FROM tenant_holdings",
      )
      .one();
    return { bytes: row.bytes ?? 0, records: row.records ?? 0, soonestExpiry: row.soonest };
  }
}
