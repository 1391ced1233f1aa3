/**
 * The price table's versions, in the registry's SQLite: every change writes a whole new table under
 * the next version number, so a turn's recorded version names exactly the prices that costed it.
 */
import { type Page, type PageRequest, pageOf } from "../../core/pages.ts";
import { EMPTY_PRICES, type ModelPrice, type PriceTable } from "../pricing.ts";

export interface PriceVersion extends PriceTable {
  id: string;
  at: number;
  createdBy: string;
}

export interface PriceChange {
  /** Rows to add or replace. */
  set: Record<string, ModelPrice>;
  /** Models whose rows go. */
  remove: string[];
  currency?: string | undefined;
}

type Row = { version: number; at: number; currency: string; prices: string; created_by: string };

export class PriceBook {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS price_versions (version INTEGER PRIMARY KEY, at INTEGER NOT NULL,
      currency TEXT NOT NULL, prices TEXT NOT NULL, created_by TEXT NOT NULL)`);
  }

  current(): PriceTable {
    const row = this.sql.exec<Row>("SELECT * FROM price_versions ORDER BY version DESC LIMIT 1").toArray()[0];
    return row ? versionOf(row) : EMPTY_PRICES;
  }

  /** The table after `change`, as the next version (not written). */
  next(change: PriceChange): PriceTable {
    const current = this.current();
    const prices = { ...current.prices, ...change.set };
    for (const model of change.remove) delete prices[model];
    return { version: current.version + 1, currency: change.currency ?? current.currency, prices };
  }

  write(table: PriceTable, createdBy: string, now: number): void {
    this.sql.exec(
      "INSERT INTO price_versions VALUES (?, ?, ?, ?, ?)",
      table.version,
      now,
      table.currency,
      JSON.stringify(table.prices),
      createdBy,
    );
  }

  /** Versions, newest first. */
  page(request: PageRequest): Page<PriceVersion> | undefined {
    const cursorId = request.beforeId ?? request.afterId;
    const cursor = cursorId === undefined ? undefined : /^prices_(\d{1,15})$/.exec(cursorId)?.[1];
    if (cursorId !== undefined && cursor === undefined) return undefined;
    const before = request.beforeId !== undefined;
    const rows = this.sql
      .exec<Row>(
        `SELECT * FROM price_versions WHERE version ${before ? ">" : "<"} ? ORDER BY version ${before ? "ASC" : "DESC"} LIMIT ?`,
        cursor === undefined ? Number.MAX_SAFE_INTEGER : Number(cursor),
        request.limit + 1,
      )
      .toArray()
      .map(versionOf);
    if (before) rows.reverse();
    return pageOf(rows, request);
  }
}

function versionOf(row: Row): PriceVersion {
  return {
    id: `prices_${row.version}`,
    version: row.version,
    at: row.at,
    currency: row.currency,
    prices: JSON.parse(row.prices) as Record<string, ModelPrice>,
    createdBy: row.created_by,
  };
}
