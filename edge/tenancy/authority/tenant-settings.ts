/**
 * The tenant's own row in its authority: its policy (rates, budget, models) and whether it is
 * archived. No row yet (a tenant from API_KEYS never configured through the API) is an active tenant
 * with no policy of its own: the env defaults apply.
 */
import { OPEN_POLICY, type Policy } from "./policy.ts";

export interface TenantSettings {
  status: "active" | "archived";
  policy: Policy;
  archivedAt: number | null;
  updatedAt: number | null;
}

type Row = { status: "active" | "archived"; policy: string; archived_at: number | null; updated_at: number };

export class TenantSettingsStore {
  #cached: TenantSettings | undefined;

  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS tenant (id INTEGER PRIMARY KEY CHECK (id = 1), status TEXT NOT NULL,
      policy TEXT NOT NULL, archived_at INTEGER, updated_at INTEGER NOT NULL)`);
  }

  get(): TenantSettings {
    if (!this.#cached) {
      const row = this.sql.exec<Row>("SELECT * FROM tenant WHERE id = 1").toArray()[0];
      this.#cached = row
        ? {
            status: row.status,
            policy: JSON.parse(row.policy) as Policy,
            archivedAt: row.archived_at,
            updatedAt: row.updated_at,
          }
        : { status: "active", policy: OPEN_POLICY, archivedAt: null, updatedAt: null };
    }
    return this.#cached;
  }

  setPolicy(policy: Policy, now: number): TenantSettings {
    return this.#write({ ...this.get(), policy, updatedAt: now });
  }

  /** Archived for good: every key of the tenant is refused from the next request on. */
  archive(now: number): TenantSettings {
    const current = this.get();
    if (current.status === "archived") return current;
    return this.#write({ ...current, status: "archived", archivedAt: now, updatedAt: now });
  }

  #write(settings: TenantSettings): TenantSettings {
    this.sql.exec(
      "INSERT OR REPLACE INTO tenant (id, status, policy, archived_at, updated_at) VALUES (1, ?, ?, ?, ?)",
      settings.status,
      JSON.stringify(settings.policy),
      settings.archivedAt,
      settings.updatedAt ?? 0,
    );
    this.#cached = settings;
    return settings;
  }
}
