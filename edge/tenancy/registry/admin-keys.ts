/**
 * Scoped admin keys (`sk-fra-…`), in the registry's SQLite: a name, scopes, an optional tenant the key
 * is confined to, and the keyed digest of its secret (never the secret). The env admin token is not
 * here: it is the break-glass root and the only one that manages admin keys.
 */
import { type Page, type PageRequest, seqPage } from "../../core/pages.ts";
import { sameDigest } from "../keys/key-digest.ts";

/** What an admin key may do: read everything in its reach, manage API keys, prices and budgets, the worker pool. */
export type AdminScope = "read" | "keys" | "billing" | "pool";
export const ADMIN_SCOPES: readonly AdminScope[] = ["read", "keys", "billing", "pool"];

export interface AdminKeyInfo {
  id: string;
  name: string;
  scopes: AdminScope[];
  /** The one tenant this key reaches; null: every tenant. */
  tenant: string | null;
  hint: string;
  createdAt: number;
  createdBy: string;
  revokedAt: number | null;
}

type Row = {
  seq: number;
  id: string;
  name: string;
  scopes: string;
  tenant: string | null;
  digest: string;
  hint: string;
  created_at: number;
  created_by: string;
  revoked_at: number | null;
};

export class AdminKeyStore {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS admin_keys (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
      name TEXT NOT NULL, scopes TEXT NOT NULL, tenant TEXT, digest TEXT NOT NULL, hint TEXT NOT NULL,
      created_at INTEGER NOT NULL, created_by TEXT NOT NULL, revoked_at INTEGER)`);
  }

  create(
    key: Omit<AdminKeyInfo, "createdAt" | "revokedAt"> & { digest: string },
    now: number,
  ): AdminKeyInfo | undefined {
    if (this.#row(key.id)) return undefined;
    this.sql.exec(
      "INSERT INTO admin_keys (id, name, scopes, tenant, digest, hint, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      key.id,
      key.name,
      JSON.stringify(key.scopes),
      key.tenant,
      key.digest,
      key.hint,
      now,
      key.createdBy,
    );
    return this.get(key.id);
  }

  get(id: string): AdminKeyInfo | undefined {
    const row = this.#row(id);
    return row ? infoOf(row) : undefined;
  }

  /** The live key with this id and digest (a revoked one never matches). */
  authenticate(id: string, digest: string): AdminKeyInfo | undefined {
    const row = this.#row(id);
    if (!row || row.revoked_at !== null || !sameDigest(row.digest, digest)) return undefined;
    return infoOf(row);
  }

  revoke(id: string, now: number): AdminKeyInfo | "revoked" | undefined {
    const row = this.#row(id);
    if (!row) return undefined;
    if (row.revoked_at !== null) return "revoked";
    this.sql.exec("UPDATE admin_keys SET revoked_at = ? WHERE id = ?", now, id);
    return this.get(id);
  }

  page(request: PageRequest): Page<AdminKeyInfo> | undefined {
    return seqPage(this.sql, "admin_keys", request, infoOf);
  }

  #row(id: string): Row | undefined {
    return this.sql.exec<Row>("SELECT * FROM admin_keys WHERE id = ?", id).toArray()[0];
  }
}

function infoOf(row: Row): AdminKeyInfo {
  return {
    id: row.id,
    name: row.name,
    scopes: JSON.parse(row.scopes) as AdminScope[],
    tenant: row.tenant,
    hint: row.hint,
    createdAt: row.created_at,
    createdBy: row.created_by,
    revokedAt: row.revoked_at,
  };
}
