import { createHash } from "node:crypto";
import { BudgetedLru } from "./budgeted-lru.ts";

/**
 * Exact turn memory: the exact sampled text of each assistant turn Frontier generated, kept under
 * every tool-call ID it minted in that turn (and under its visible text and history when it made no calls),
 * so a client's replay of the turn renders the bytes the KV holds, not a re-serialisation of the
 * client's JSON. Scoped per tenant; bounded by entry count and bytes (least recently used goes).
 */
export interface RememberedTurn {
  /** Everything between the assistant role header and the end-of-turn marker. */
  raw: string;
  /** The IDs of the tool calls the turn made, in order. */
  toolUseIds: readonly string[];
  /**
   * When the turn continued a client's trailing assistant message, the digest of that message's
   * blocks (`blocksDigest`): `raw` starts with their rendering, so it replays only after them.
   */
  lead?: string | undefined;
  /** IDs of hosted (server) tool calls Frontier ran inside the turn: their blocks are in `raw`, not foreign. */
  serverToolUseIds?: readonly string[] | undefined;
}

export interface TurnMemoryLimits {
  maxEntries: number;
  maxBytes: number;
}

export const DEFAULT_TURN_MEMORY_LIMITS: TurnMemoryLimits = { maxEntries: 20_000, maxBytes: 64 * 1024 * 1024 };

export class TurnMemory {
  readonly #entries: BudgetedLru<RememberedTurn>;

  constructor(limits: TurnMemoryLimits = DEFAULT_TURN_MEMORY_LIMITS) {
    this.#entries = new BudgetedLru({ maxEntries: limits.maxEntries, maxCost: limits.maxBytes }, entryBytes);
  }

  get size(): number {
    return this.#entries.size;
  }

  get bytes(): number {
    return this.#entries.cost;
  }

  remember(tenant: string, keys: readonly string[], turn: RememberedTurn): void {
    for (const key of keys) this.#entries.set(memoryKey(tenant, key), turn);
  }

  recall(tenant: string, key: string): RememberedTurn | undefined {
    return this.#entries.get(memoryKey(tenant, key));
  }
}

/**
 * The memory key of a turn that made no tool calls: a digest of its visible text and of the history
 * before it (`historyDigest`). The history keeps two conversations of a tenant whose turns show the
 * same text (often none: a turn of hidden reasoning only) from replaying each other's bytes.
 */
export function visibleTextKey(visible: string, history: string): string {
  return `text:${createHash("sha256").update(`${history}\u0000${visible}`).digest("base64url")}`;
}

function memoryKey(tenant: string, key: string): string {
  return `${tenant}\u0000${key}`;
}

function entryBytes(key: string, turn: RememberedTurn): number {
  return key.length * 2 + turn.raw.length * 2 + 64;
}
