/**
 * Worker credentials issued at run time (admin API, `npm run pool:credentials`), kept in a region's
 * PoolDO: the SHA-256 of each token (never the token), its binding and when it was revoked. A revoked
 * credential stays as a tombstone, so its heartbeats are refused as `revoked` and listed as such.
 */
import type { WorkerBinding } from "../config/registration.ts";

type CredentialRow = {
  id: string;
  sha256: string;
  url: string | null;
  capacity: number;
  created_at: number;
  revoked_at: number | null;
};

/** A credential as operators see it: no token, only the first characters of its digest. */
export interface CredentialInfo {
  id: string;
  url: string | null;
  capacity: number;
  source: "runtime";
  sha256_prefix: string;
  created_at: number;
  revoked_at: number | null;
}

export interface IssueArgs {
  id: string;
  sha256: string;
  url: string | undefined;
  capacity: number;
}

/** What a presented token digest resolves to for one worker id. */
export type CredentialLookup =
  | { kind: "binding"; binding: WorkerBinding }
  | { kind: "refused"; reason: "unknown-worker" | "bad-token" | "revoked" };

export class CredentialStore {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS worker_credentials (id TEXT PRIMARY KEY, sha256 TEXT NOT NULL,
      url TEXT, capacity INTEGER NOT NULL, created_at INTEGER NOT NULL, revoked_at INTEGER)`);
  }

  /** A new credential; "exists" when the id already has one that is not revoked (a revoked one is replaced). */
  issue(args: IssueArgs): "issued" | "exists" {
    const old = this.#row(args.id);
    if (old && old.revoked_at === null) return "exists";
    this.sql.exec(
      `INSERT INTO worker_credentials VALUES (?, ?, ?, ?, ?, NULL) ON CONFLICT (id) DO UPDATE SET sha256 = excluded.sha256,
         url = excluded.url, capacity = excluded.capacity, created_at = excluded.created_at, revoked_at = NULL`,
      args.id,
      args.sha256,
      args.url ?? null,
      args.capacity,
      Date.now(),
    );
    return "issued";
  }

  /** Mark the id's credential revoked; false when there is none (or it was revoked already). */
  revoke(id: string): boolean {
    const row = this.#row(id);
    if (!row || row.revoked_at !== null) return false;
    this.sql.exec("UPDATE worker_credentials SET revoked_at = ? WHERE id = ?", Date.now(), id);
    return true;
  }

  list(): CredentialInfo[] {
    return this.sql
      .exec<CredentialRow>("SELECT * FROM worker_credentials ORDER BY id")
      .toArray()
      .map((row) => ({
        id: row.id,
        url: row.url,
        capacity: row.capacity,
        source: "runtime" as const,
        sha256_prefix: row.sha256.slice(0, 8),
        created_at: row.created_at,
        revoked_at: row.revoked_at,
      }));
  }

  /** The binding of `id` when `digest` is its token's SHA-256 (compared in constant time). */
  lookup(id: string, digest: string, region: string): CredentialLookup {
    const row = this.#row(id);
    if (!row) return { kind: "refused", reason: "unknown-worker" };
    if (!sameDigest(row.sha256, digest)) return { kind: "refused", reason: "bad-token" };
    if (row.revoked_at !== null) return { kind: "refused", reason: "revoked" };
    return {
      kind: "binding",
      binding: { id, url: row.url ?? undefined, capacity: row.capacity, region, source: "runtime" },
    };
  }

  #row(id: string): CredentialRow | undefined {
    return this.sql.exec<CredentialRow>("SELECT * FROM worker_credentials WHERE id = ?", id).toArray()[0];
  }
}

function sameDigest(a: string, b: string): boolean {
  const encoder = new TextEncoder();
  const [x, y] = [encoder.encode(a), encoder.encode(b)];
  return x.byteLength === y.byteLength && crypto.subtle.timingSafeEqual(x, y);
}
