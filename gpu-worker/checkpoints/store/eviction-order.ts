/**
 * The order the budget evicts in, least valuable first: other models' rows, then by value, then
 * least recently used. A row's value is its reason's weight (tool-frontier 4 > parked = shutdown 3 >
 * cold-anchor 2 > periodic 1) — or, while other local rows chain on it (link its state chunk), the
 * highest weight and the newest use among them: a tenant's `cold-anchor` that sessions' tool-frontier
 * checkpoints extend is worth what they are worth, and goes after them. Evicting a base before its
 * dependents would free nothing (they keep its chunk) and lose the prefix new conversations start from.
 */
import { CHECKPOINT_REASONS, REASON_WEIGHT } from "./types.ts";

/** A row's reason weight, for the table aliased `alias`. */
function weightSql(alias: string): string {
  return `CASE ${alias}.reason ${CHECKPOINT_REASONS.map((r) => `WHEN '${r}' THEN ${REASON_WEIGHT[r]}`).join(" ")} ELSE 0 END`;
}

/**
 * `SELECT id, bytes` of local rows in eviction order. Parameters, in order: the tenant (with
 * `scope: "tenant"`), then the current model identity.
 */
export function evictionOrderSql(scope: "all" | "tenant"): string {
  return `WITH linked AS (
      SELECT json_extract(j.value, '$.id') AS base, MAX(${weightSql("d")}) AS weight, MAX(d.last_used_at) AS used
      FROM checkpoints d, json_each(d.chain) j WHERE d.local = 1 GROUP BY base)
    SELECT c.id AS id, c.bytes AS bytes FROM checkpoints c LEFT JOIN linked l ON l.base = c.id
    WHERE c.local = 1${scope === "tenant" ? " AND c.tenant = ?" : ""}
    ORDER BY (c.model_identity = ?) ASC, MAX(${weightSql("c")}, COALESCE(l.weight, 0)) ASC,
      MAX(c.last_used_at, COALESCE(l.used, 0)) ASC, (l.base IS NOT NULL) ASC, c.rowid ASC`;
}
