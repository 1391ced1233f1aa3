/**
 * The tenant's `cold-anchor` checkpoints: the KV at the end of system + tools, saved during a cold
 * prefill so the next conversation with the same prefix starts from it. Off the first turn's
 * critical path: the turn waits only for the engine's dump of the KV (the one step that reads the
 * sequence, which the prefill goes on to extend); sealing, fsync, the index commit and the replica
 * upload land in the background (`settled` waits for them). One write per prefix at a time: a cold
 * turn that finds the same anchor still being written does not write it again.
 */
import type { EngineSequence, Token } from "../../native/engine-types.ts";
import { segmentsFrom, segmentsUpTo } from "../chat/engine/prompt-builder.ts";
import type { PromptSegment, RenderedPrompt } from "../chat/types.ts";
import { log } from "../log.ts";
import type { KeyedOwner } from "./checkpointed-session.ts";
import type { TenantDataKey } from "./state/sealed-file.ts";
import type { CheckpointStorage } from "./store/checkpoint-storage.ts";
import type { CheckpointMeta } from "./store/types.ts";

export class ColdAnchors {
  /** Anchor writes in flight, by tenant and text. */
  readonly #inFlight = new Map<string, Promise<void>>();

  constructor(
    private readonly store: CheckpointStorage,
    /** Cold prefills whose header (system + tools) is at least this many tokens save an anchor. */
    private readonly minTokens: number,
    /** Told of each anchor once stored, with its tokens (the shared-prefix index lists it as a holder). */
    private readonly stored: (key: TenantDataKey, meta: CheckpointMeta, tokens: readonly Token[]) => void = () => {},
  ) {}

  /** Where a cold prefill should save an anchor (tokens of system + tools), if anywhere (never without a key). */
  async anchorFor(
    owner: KeyedOwner,
    rendered: RenderedPrompt,
    tokenize: (segments: readonly PromptSegment[]) => Promise<Token[]>,
  ): Promise<{ tokens: number; text: string } | undefined> {
    const key = owner.dataKey;
    if (!key) return undefined;
    const offset = rendered.messageOffsets[0];
    if (offset === undefined || offset === 0) return undefined;
    const text = rendered.text.slice(0, offset);
    const rest = segmentsFrom(rendered.segments, offset);
    if (!rest) return undefined;
    if (this.#inFlight.has(inFlightKey(owner.tenant, text))) return undefined;
    const tokens = (await tokenize(segmentsUpTo(rendered.segments, offset) ?? [])).length;
    if (tokens < this.minTokens) return undefined;
    const existing = this.store.findLongestPrefix(key, text, { minTokens: tokens });
    return existing ? undefined : { tokens, text };
  }

  /**
   * Save the tenant's shared system + tools anchor, sealed under `owner`'s data key (none: nothing is
   * saved). Resolves once the engine has dumped the sequence's KV (the caller may extend it then);
   * the write goes on in the background and a failure is logged, never the turn's.
   */
  async saveAnchor(owner: KeyedOwner, text: string, sequence: EngineSequence): Promise<void> {
    const key = owner.dataKey;
    const id = inFlightKey(owner.tenant, text);
    if (!key || this.#inFlight.has(id)) return;
    const tokens = [...sequence.tokens];
    let dumped = () => {};
    const stateWritten = new Promise<void>((resolve) => {
      dumped = resolve;
    });
    const write = this.store
      .write(
        {
          tenant: owner.tenant,
          key,
          sessionId: "",
          reason: "cold-anchor",
          toolUseIds: [],
          payload: { text, tokens, extra: null },
        },
        async (path) => {
          try {
            // A retried write (after a full disk) runs after the prefill moved on: the KV is no longer the anchor's.
            if (sequence.tokens.length !== tokens.length) throw new Error("the sequence moved past the anchor");
            await sequence.saveState(path);
          } finally {
            dumped();
          }
        },
      )
      .then((meta) => {
        this.stored(key, meta, tokens);
        log("checkpoint saved", { reason: "cold-anchor", tokens: meta.tokenCount, bytes: meta.bytes });
      })
      .catch((error: unknown) => log("checkpoint write failed", { reason: "cold-anchor", error: String(error) }))
      .finally(() => this.#inFlight.delete(id));
    this.#inFlight.set(id, write);
    await Promise.race([stateWritten, write]);
  }

  /** Resolves when no anchor write is in flight. */
  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight.values()]);
  }
}

function inFlightKey(tenant: string, text: string): string {
  return `${tenant}\u0000${text}`;
}
