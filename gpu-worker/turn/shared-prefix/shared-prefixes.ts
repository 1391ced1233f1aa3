/**
 * The worker's shared-prefix state: the index of KV it holds by keyed block-hash chain (resident
 * sessions' sequences after each turn, checkpoints as they are written), the operator's public
 * prefixes and their saved states. The ladder's rung that uses it is rung.ts.
 */
import type { Token } from "../../../native/engine-types.ts";
import type { CheckpointMeta } from "../../checkpoints/store/types.ts";
import { blockChain, type DataKeyLike, tenantChainRoot } from "../../continuation/shared-prefix/block-chain.ts";
import type { SharedPrefixOptions } from "../../continuation/shared-prefix/options.ts";
import { type PrefixIndexStats, SharedPrefixIndex } from "../../continuation/shared-prefix/prefix-index.ts";
import { PublicPrefixRegistry } from "../../continuation/shared-prefix/public-prefixes.ts";
import { PublicPrefixStates } from "./public-states.ts";

/** What holds a prefix: a resident session's sequence, or a stored checkpoint (both of one tenant). */
export type PrefixHolder =
  | { readonly kind: "live"; readonly key: string; readonly tenant: string; readonly sessionId: string }
  | { readonly kind: "checkpoint"; readonly key: string; readonly tenant: string; readonly meta: CheckpointMeta };

export interface SharedPrefixStats extends PrefixIndexStats {
  publicStates: number;
  publicStateBytes: number;
}

export class SharedPrefixes {
  readonly index: SharedPrefixIndex<PrefixHolder>;
  readonly publicPrefixes: PublicPrefixRegistry;
  readonly publicStates: PublicPrefixStates;

  constructor(
    readonly options: SharedPrefixOptions,
    readonly modelIdentity: string,
    scratchDir?: string,
  ) {
    this.index = new SharedPrefixIndex(options.indexBlocks);
    this.publicPrefixes = new PublicPrefixRegistry(options.publicPrefixes);
    this.publicStates = new PublicPrefixStates(scratchDir);
  }

  /** The keyed chain of `tokens`' full blocks for `key`'s tenant (at most the index's bound). */
  chain(key: DataKeyLike, tokens: readonly Token[]): string[] {
    const root = tenantChainRoot(key, this.modelIdentity);
    return blockChain(root, tokens, this.options.blockTokens, this.options.indexBlocks);
  }

  /** A resident session's sequence now holds `tokens` (after a turn). */
  holdLive(key: DataKeyLike, sessionId: string, tokens: readonly Token[]): void {
    const holder: PrefixHolder = { kind: "live", key: liveKey(key.tenant, sessionId), tenant: key.tenant, sessionId };
    this.index.hold(holder.key, holder, this.chain(key, tokens));
  }

  /**
   * A checkpoint was written with `tokens`. A session's newer checkpoint replaces its older one in
   * the index (the store keeps one per session and reason); anchors are held by id.
   */
  holdCheckpoint(key: DataKeyLike, meta: CheckpointMeta, tokens: readonly Token[]): void {
    const id = meta.sessionId === "" ? meta.id : `${meta.sessionId}\u0000${meta.reason}`;
    const holder: PrefixHolder = {
      kind: "checkpoint",
      key: `checkpoint\u0000${key.tenant}\u0000${id}`,
      tenant: key.tenant,
      meta,
    };
    this.index.hold(holder.key, holder, this.chain(key, tokens));
  }

  stats(): SharedPrefixStats {
    const publicStates = this.publicStates.stats();
    return { ...this.index.stats(), publicStates: publicStates.states, publicStateBytes: publicStates.bytes };
  }

  dispose(): void {
    this.publicStates.dispose();
  }
}

function liveKey(tenant: string, sessionId: string): string {
  return `live\u0000${tenant}\u0000${sessionId}`;
}
