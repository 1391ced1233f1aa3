/**
 * A tenant's run-time API keys, in its authority's SQLite: per key its id, name, status, policy and
 * the keyed digest of its secret (keys/key-digest.ts; never the secret, never an unkeyed hash).
 * Rotation keeps the id: the new secret's digest becomes current and the old one stays valid until
 * the grace period ends. A revoked key stays as a row (its usage history names it) and never
 * authenticates again; an inactive one can be made active again.
 */
import { type Page, type PageRequest, seqPage } from "../../core/pages.ts";
import { sameDigest } from "../keys/key-digest.ts";
import type { Policy } from "./policy.ts";

export type KeyStatus = "active" | "inactive" | "revoked";

/** A key as the admin API shows it (no digest). `expired` is a status derived from `expiresAt`. */
export interface KeyInfo {
  id: string;
  name: string;
  status: KeyStatus | "expired";
  hint: string;
  createdAt: number;
  createdBy: string;
  expiresAt: number | null;
  lastUsedAt: number | null;
  rotatedAt: number | null;
  /** While a rotation's grace period runs: until when the previous secret still works. */
  previousValidUntil: number | null;
  revokedAt: number | null;
  policy: Policy;
}

export interface NewKey {
  id: string;
  name: string;
  digest: string;
  hint: string;
  createdBy: string;
  expiresAt: number | null;
  policy: Policy;
}

/** What an update may change (absent: unchanged). */
export interface KeyPatch {
  name?: string;
  status?: "active" | "inactive";
  expiresAt?: number | null;
  policy?: Policy;
}

export type KeyLookup = { ok: true; key: KeyInfo } | { ok: false; why: "unknown" | "revoked" | "inactive" | "expired" };

type KeyRow = {
  seq: number;
  id: string;
  name: string;
  status: KeyStatus;
  digest: string;
  previous_digest: string | null;
  previous_until: number | null;
  hint: string;
  created_at: number;
  created_by: string;
  expires_at: number | null;
  last_used_at: number | null;
  rotated_at: number | null;
  revoked_at: number | null;
  policy: string;
};

export class KeyStore {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS api_keys (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
      name TEXT NOT NULL, status TEXT NOT NULL, digest TEXT NOT NULL, previous_digest TEXT, previous_until INTEGER,
      hint TEXT NOT NULL, created_at INTEGER NOT NULL, created_by TEXT NOT NULL, expires_at INTEGER,
      last_used_at INTEGER, rotated_at INTEGER, revoked_at INTEGER, policy TEXT NOT NULL)`);
  }

  /** A new key, or undefined when the id is taken. */
  create(key: NewKey, now: number): KeyInfo | undefined {
    if (this.#row(key.id)) return undefined;
    this.sql.exec(
      `INSERT INTO api_keys (id, name, status, digest, hint, created_at, created_by, expires_at, policy)
        VALUES (?, ?, 'active', ?, ?, ?, ?, ?, ?)`,
      key.id,
      key.name,
      key.digest,
      key.hint,
      now,
      key.createdBy,
      key.expiresAt,
      JSON.stringify(key.policy),
    );
    return this.get(key.id, now);
  }

  get(id: string, now: number): KeyInfo | undefined {
    const row = this.#row(id);
    return row ? info(row, now) : undefined;
  }

  /** The key whose current secret (or, within its grace period, previous secret) has this digest. */
  lookup(id: string, digest: string, now: number): KeyLookup {
    const row = this.#row(id);
    if (!row) return { ok: false, why: "unknown" };
    const current = sameDigest(row.digest, digest);
    const previous =
      row.previous_digest !== null && row.previous_until !== null && now < row.previous_until
        ? sameDigest(row.previous_digest, digest)
        : false;
    if (!current && !previous) return { ok: false, why: "unknown" };
    const key = info(row, now);
    if (key.status === "active") return { ok: true, key };
    return { ok: false, why: key.status };
  }

  /** A page of keys in creation order (undefined for an unknown cursor). */
  page(request: PageRequest, now: number): Page<KeyInfo> | undefined {
    return seqPage(this.sql, "api_keys", request, (row: KeyRow) => info(row, now));
  }

  /** Apply a patch; undefined for an unknown key, `revoked` for one that can no longer change. */
  update(id: string, patch: KeyPatch, now: number): KeyInfo | "revoked" | undefined {
    const row = this.#row(id);
    if (!row) return undefined;
    if (row.status === "revoked") return "revoked";
    this.sql.exec(
      "UPDATE api_keys SET name = ?, status = ?, expires_at = ?, policy = ? WHERE id = ?",
      patch.name ?? row.name,
      patch.status ?? row.status,
      patch.expiresAt === undefined ? row.expires_at : patch.expiresAt,
      patch.policy === undefined ? row.policy : JSON.stringify(patch.policy),
      id,
    );
    return this.get(id, now);
  }

  revoke(id: string, now: number): KeyInfo | "revoked" | undefined {
    const row = this.#row(id);
    if (!row) return undefined;
    if (row.status === "revoked") return "revoked";
    this.sql.exec(
      "UPDATE api_keys SET status = 'revoked', revoked_at = ?, previous_digest = NULL, previous_until = NULL WHERE id = ?",
      now,
      id,
    );
    return this.get(id, now);
  }

  /** A new secret for the key: the old one keeps working until `graceUntil` (now: at once). */
  rotate(id: string, next: { digest: string; hint: string }, graceUntil: number, now: number) {
    const row = this.#row(id);
    if (!row) return undefined;
    if (row.status === "revoked") return "revoked" as const;
    const keepPrevious = graceUntil > now;
    this.sql.exec(
      "UPDATE api_keys SET digest = ?, hint = ?, previous_digest = ?, previous_until = ?, rotated_at = ? WHERE id = ?",
      next.digest,
      next.hint,
      keepPrevious ? row.digest : null,
      keepPrevious ? graceUntil : null,
      now,
      id,
    );
    return this.get(id, now);
  }

  /** Record when keys were last used (written behind the requests that used them). */
  touch(lastUsed: ReadonlyMap<string, number>): void {
    for (const [id, at] of lastUsed) {
      this.sql.exec("UPDATE api_keys SET last_used_at = MAX(COALESCE(last_used_at, 0), ?) WHERE id = ?", at, id);
    }
  }

  #row(id: string): KeyRow | undefined {
    return this.sql.exec<KeyRow>("SELECT * FROM api_keys WHERE id = ?", id).toArray()[0];
  }
}

function info(row: KeyRow, now: number): KeyInfo {
  const expired = row.status !== "revoked" && row.expires_at !== null && row.expires_at <= now;
  const graceOpen = row.previous_until !== null && row.previous_until > now;
  return {
    id: row.id,
    name: row.name,
    status: expired ? "expired" : row.status,
    hint: row.hint,
    createdAt: row.created_at,
    createdBy: row.created_by,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    rotatedAt: row.rotated_at,
    previousValidUntil: graceOpen ? row.previous_until : null,
    revokedAt: row.revoked_at,
    policy: JSON.parse(row.policy) as Policy,
  };
}
