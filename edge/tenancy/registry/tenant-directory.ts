/**
 * Every tenant the deployment has known, in the registry's SQLite: its id, name, where it came from
 * (`env`: named by API_KEYS; `runtime`: created through the admin API) and when it was archived.
 * Only admin routes read it (lists, reports, metrics): a request finds its tenant's authority from
 * its key alone. Archived tenants stay, so their usage history stays reachable.
 */
import { type Page, type PageRequest, seqPage } from "../../core/pages.ts";

export interface DirectoryTenant {
  id: string;
  name: string;
  source: "env" | "runtime";
  createdAt: number;
  createdBy: string;
  archivedAt: number | null;
}

type Row = {
  seq: number;
  id: string;
  name: string;
  source: "env" | "runtime";
  created_at: number;
  created_by: string;
  archived_at: number | null;
};

export class TenantDirectory {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS tenants (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
      name TEXT NOT NULL, source TEXT NOT NULL, created_at INTEGER NOT NULL, created_by TEXT NOT NULL, archived_at INTEGER)`);
  }

  /** Add the API_KEYS tenants not listed yet (source `env`); returns those added. */
  addEnvTenants(ids: readonly string[], now: number): string[] {
    const added: string[] = [];
    for (const id of ids) {
      if (this.get(id)) continue;
      this.sql.exec(
        "INSERT INTO tenants (id, name, source, created_at, created_by) VALUES (?, ?, 'env', ?, 'env')",
        id,
        id,
        now,
      );
      added.push(id);
    }
    return added;
  }

  create(tenant: { id: string; name: string; createdBy: string }, now: number): DirectoryTenant | undefined {
    if (this.get(tenant.id)) return undefined;
    this.sql.exec(
      "INSERT INTO tenants (id, name, source, created_at, created_by) VALUES (?, ?, 'runtime', ?, ?)",
      tenant.id,
      tenant.name,
      now,
      tenant.createdBy,
    );
    return this.get(tenant.id);
  }

  get(id: string): DirectoryTenant | undefined {
    const row = this.sql.exec<Row>("SELECT * FROM tenants WHERE id = ?", id).toArray()[0];
    return row ? tenantOf(row) : undefined;
  }

  rename(id: string, name: string): void {
    this.sql.exec("UPDATE tenants SET name = ? WHERE id = ?", name, id);
  }

  archive(id: string, now: number): void {
    this.sql.exec("UPDATE tenants SET archived_at = COALESCE(archived_at, ?) WHERE id = ?", now, id);
  }

  /** Every tenant id, archived ones included. */
  ids(): string[] {
    return this.sql
      .exec<{ id: string }>("SELECT id FROM tenants ORDER BY seq")
      .toArray()
      .map((r) => r.id);
  }

  /** A page in creation order; `only` restricts it to one tenant (a tenant-scoped admin's view). */
  page(
    request: PageRequest,
    options: { includeArchived: boolean; only?: string | undefined },
  ): Page<DirectoryTenant> | undefined {
    const where = [
      options.includeArchived ? "" : "AND archived_at IS NULL",
      options.only === undefined ? "" : "AND id = ?",
    ].join(" ");
    return seqPage(this.sql, "tenants", request, tenantOf, {
      where,
      args: options.only === undefined ? [] : [options.only],
    });
  }
}

function tenantOf(row: Row): DirectoryTenant {
  return {
    id: row.id,
    name: row.name,
    source: row.source,
    createdAt: row.created_at,
    createdBy: row.created_by,
    archivedAt: row.archived_at,
  };
}
