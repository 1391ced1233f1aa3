/**
 * What this worker tells placement it holds (heartbeats' `prefixes`): for every holder of KV — a
 * resident session's sequence, a session's checkpoint, a cold anchor — the text-side chain of the
 * prompt it holds (shared/prefix-chain.ts: the system + tools fingerprint, then one hash per chunk of
 * the messages), as the edge computes it for a new conversation without tokenizing.
 *
 * Only what is still held is advertised: each holder is checked when a report is made (the session
 * still resident, the checkpoint still in the store) and dropped when it is gone (released, parked
 * and evicted, replaced), so a worker never advertises a prefix whose KV it no longer has. Bounded:
 * at most `capacity` holders (least recently held dropped first) and `limit` hashes per report, each
 * holder's chain at depths 0, 1, 2, 4, … and its last (`advertisedDepths`), newest holders first.
 */
import { advertisedDepths } from "../../shared/prefix-chain.ts";

/** Where the advert checks that a holder still holds its KV. */
export interface AdvertSources {
  isResident(tenant: string, sessionId: string): boolean;
  /** The checkpoint is still stored (undefined: no checkpoint store). */
  hasCheckpoint?: ((id: string) => boolean) | undefined;
}

type Holding =
  | { readonly kind: "session"; readonly tenant: string; readonly sessionId: string }
  | { readonly kind: "checkpoint"; readonly id: string };

interface Entry {
  readonly holding: Holding;
  readonly chain: readonly string[];
}

/**
 * Prefix hashes per heartbeat (the edge keeps at most as many per worker: edge/pool/worker-report.ts).
 * 512: a worker holding ~200 parked checkpoints advertised only its ~30 newest within 256, and
 * placement sent first turns away from older holders; in the pool simulation (16 workers, the whole
 * Mooncake trace) 512 reads 97.9% of the ceiling against 97.4% with 256 and the same with 1,024, for
 * an 18 KB heartbeat instead of 9 KB (docs/bench/history/issue-45-sharing.md).
 */
export const MAX_ADVERTISED = 512;

export class PrefixAdvert {
  /** Holder key → entry, least recently held first. */
  readonly #entries = new Map<string, Entry>();

  constructor(
    private readonly sources: AdvertSources,
    readonly capacity = 1024,
  ) {}

  /** A session served a request whose conversation has `chain` (its sequence holds that prompt). */
  holdSession(tenant: string, sessionId: string, chain: readonly string[]): void {
    this.#set(sessionKey(tenant, sessionId), { holding: { kind: "session", tenant, sessionId }, chain });
  }

  /**
   * A checkpoint was stored. A session's holds what the session held (its last request's chain); a
   * cold anchor (`sessionId` "") holds system + tools of the session that wrote it (`owner`), so only
   * the chain's fingerprint. Nothing known of the owner: nothing advertised.
   */
  holdCheckpoint(id: string, tenant: string, sessionId: string, reason: string, owner?: string): void {
    const source = this.#entries.get(sessionKey(tenant, sessionId === "" ? (owner ?? "") : sessionId));
    if (!source || source.chain.length === 0) return;
    const chain = sessionId === "" ? source.chain.slice(0, 1) : source.chain;
    // A session's newer checkpoint of a reason replaces its older one (as the store keeps them).
    const key =
      sessionId === "" ? `checkpoint\u0000${id}` : `checkpoint\u0000${tenant}\u0000${sessionId}\u0000${reason}`;
    this.#set(key, { holding: { kind: "checkpoint", id }, chain });
  }

  /** The hashes to advertise: held holders only (the others are dropped now), newest first, at most `limit`. */
  list(limit = MAX_ADVERTISED): string[] {
    const out = new Set<string>();
    for (const [key, entry] of [...this.#entries].reverse()) {
      if (!this.#holds(entry.holding)) {
        this.#entries.delete(key);
        continue;
      }
      for (const depth of advertisedDepths(entry.chain.length)) {
        if (out.size >= limit) return [...out];
        out.add(entry.chain[depth] ?? "");
      }
    }
    return [...out];
  }

  get size(): number {
    return this.#entries.size;
  }

  #holds(holding: Holding): boolean {
    switch (holding.kind) {
      case "session":
        return this.sources.isResident(holding.tenant, holding.sessionId);
      case "checkpoint":
        return this.sources.hasCheckpoint?.(holding.id) ?? false;
    }
  }

  #set(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    while (this.#entries.size > this.capacity) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }
}

function sessionKey(tenant: string, sessionId: string): string {
  return `session\u0000${tenant}\u0000${sessionId}`;
}
