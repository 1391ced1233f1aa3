/**
 * Ladder rung "shared prefix" (and "public prefix"), after the live rungs and before the disk
 * checkpoint: when the live KV offers no continuation, copy into this session's sequence the
 * longest prefix of the request some other KV of the same tenant holds — another conversation's
 * resident sequence (llama.cpp's sequence copy, or a state restore) or a stored checkpoint (loaded,
 * then cut) — found through the keyed block index and checked token for token before it is used.
 * Failing that, an operator-registered public prefix the request's bytes start with, from its state.
 */
import type { Token } from "../../../native/engine-types.ts";
import type { ContinuationPlan, MissReason } from "../../continuation/plan-continuation.ts";
import { commonPrefix } from "../../continuation/shared-prefix/block-chain.ts";
import { log } from "../../log.ts";
import type { Turn } from "../turn.ts";
import type { PrefixHolder } from "./shared-prefixes.ts";

/** Index lookups one request makes at most (each after dropping stale holders). */
const MAX_LOOKUPS = 3;

/** Resident sequences first (a copy in memory), then checkpoints (a load from disk); newest first within each. */
function ordered(holders: readonly PrefixHolder[]): PrefixHolder[] {
  return [...holders.filter((h) => h.kind === "live"), ...holders.filter((h) => h.kind !== "live")];
}

/** What trying one holder came to. */
type Attempt =
  | { kind: "copied"; keep: number; how: string; ms: number }
  /** It holds less than the floor in common with the request (now). */
  | { kind: "short" }
  | { kind: "busy" }
  /** Its KV is gone (the session parked or released, the checkpoint evicted or replaced): a plain miss. */
  | { kind: "gone" }
  /** It holds other tokens than the index says (changed since it was indexed). */
  | { kind: "stale" }
  /** The copy failed after the target was cleared: the session's sequence holds nothing. */
  | { kind: "failed"; error: unknown };

/**
 * The plan with a shared or public prefix copied into the session's sequence when one covers at
 * least `minTokens` more than both the plan's live tokens and `storedTokens` (what the disk rung
 * would restore); else the plan, with a miss reason when the index named KV it could not use.
 */
export async function withSharedPrefix(
  turn: Turn,
  plan: ContinuationPlan,
  storedTokens: number,
): Promise<ContinuationPlan> {
  const { deps, session } = turn;
  const shared = deps.shared;
  if (!shared || plan.decision === "live-tool-ids" || plan.decision === "live-text-prefix") return plan;
  const tokens = [...session.sequence.tokens.slice(0, plan.keep), ...plan.append];
  // The prompt's last token stays out: the first sampling decode evaluates it.
  const limit = tokens.length - 1;
  const least = Math.max(plan.keep, storedTokens) + shared.options.minTokens;
  if (limit < least) return plan;
  const publicPlan = publicCandidate(turn, plan, tokens, least, limit);
  // The tenant's own KV wins a tie with the public prefix.
  const floor = Math.max(least, publicPlan?.keep ?? 0);
  let miss: MissReason | undefined;
  const key = session.dataKey;
  const chain = key ? shared.chain(key, tokens) : [];
  // A stale holder is dropped and the index asked again: the next deepest holder may still do.
  for (let round = 0; round < MAX_LOOKUPS; round++) {
    const match = shared.index.lookup(chain);
    let dropped = false;
    for (const holder of ordered(match?.refs ?? [])) {
      if (holder.tenant !== session.tenant) continue;
      if (holder.kind === "live" && holder.sessionId === session.sessionId) continue;
      const promised = (match?.blocks ?? 0) * shared.options.blockTokens;
      const attempt = await tryHolder(turn, holder, tokens, { floor, limit, promised });
      switch (attempt.kind) {
        case "copied":
          shared.index.touch(holder.key);
          logHit("shared prefix", holder.kind, attempt, tokens.length, turn);
          return { ...plan, keep: attempt.keep, append: tokens.slice(attempt.keep), decision: "shared-prefix" };
        case "short":
          continue;
        case "busy":
          miss ??= "prefix-busy";
          continue;
        case "gone":
          dropped = shared.index.drop(holder.key) || dropped;
          continue;
        case "stale":
          dropped = shared.index.drop(holder.key) || dropped;
          miss = "prefix-stale";
          continue;
        case "failed":
          shared.index.drop(holder.key);
          log("shared prefix copy failed", { from: holder.kind, error: String(attempt.error) });
          return { ...plan, keep: 0, append: tokens, decision: "cold", missReason: "prefix-stale" };
        default:
          return checkNever(attempt);
      }
    }
    if (!dropped) break;
  }
  if (publicPlan) {
    const attempt = await publicPlan.restore();
    if (attempt.kind === "copied") {
      logHit("public prefix", publicPlan.name, attempt, tokens.length, turn);
      return { ...plan, keep: attempt.keep, append: tokens.slice(attempt.keep), decision: "public-prefix" };
    }
    if (attempt.kind === "failed")
      return { ...plan, keep: 0, append: tokens, decision: "cold", missReason: "prefix-stale" };
  }
  return miss && plan.decision === "cold" ? { ...plan, missReason: miss } : plan;
}

/**
 * Copy from one holder into the session's sequence, when it still holds at least `floor` tokens of
 * the request (at most `limit`). Fewer in common than the index `promised` (its blocks): stale.
 */
async function tryHolder(
  turn: Turn,
  holder: PrefixHolder,
  tokens: readonly Token[],
  bounds: { floor: number; limit: number; promised: number },
): Promise<Attempt> {
  const { floor, limit, promised } = bounds;
  const verdict = (common: number): Attempt | undefined =>
    common < Math.min(promised, limit)
      ? { kind: "stale" }
      : Math.min(common, limit) < floor
        ? { kind: "short" }
        : undefined;
  const { deps, session } = turn;
  const target = session.sequence;
  const started = performance.now();
  switch (holder.kind) {
    case "live": {
      const read = await deps.sessions.readIdle(holder.tenant, holder.sessionId, async (source): Promise<Attempt> => {
        const common = commonPrefix(source.tokens, tokens);
        const refused = verdict(common);
        if (refused) return refused;
        const keep = Math.min(common, limit);
        try {
          const how = await deps.engine.copyPrefix(source, target, keep);
          return { kind: "copied", keep, how, ms: performance.now() - started };
        } catch (error) {
          return { kind: "failed", error };
        }
      });
      return read === "busy" ? { kind: "busy" } : read === "gone" ? { kind: "gone" } : read.read;
    }
    case "checkpoint": {
      const store = deps.checkpoints?.store;
      const key = session.dataKey;
      // Gone from the store (evicted, replaced) or not local: `localPayload` finds nothing.
      const payload = store && key ? await store.localPayload(holder.meta, key) : undefined;
      if (!store || !key || !payload) return { kind: "gone" };
      const common = commonPrefix(payload.tokens, tokens);
      const refused = verdict(common);
      if (refused) return refused;
      const keep = Math.min(common, limit);
      try {
        await store.load(holder.meta, key, (path, loaded) => target.loadState(path, loaded.tokens));
        await target.truncate(keep);
        return { kind: "copied", keep, how: "checkpoint-restore", ms: performance.now() - started };
      } catch (error) {
        await target.truncate(0).catch(() => undefined);
        return { kind: "failed", error };
      }
    }
    default:
      return checkNever(holder);
  }
}

/**
 * The registered public prefix the request's rendered bytes start with, when its state is saved and
 * covers at least the floor: how many tokens it gives, and how to restore them. Always from the
 * saved state, never from another tenant's live sequence, so its timing is the same for everyone.
 */
function publicCandidate(
  turn: Turn,
  plan: ContinuationPlan,
  tokens: readonly Token[],
  least: number,
  limit: number,
): { keep: number; name: string; restore: () => Promise<Attempt> } | undefined {
  const shared = turn.deps.shared;
  const prefix = shared?.publicPrefixes.size ? shared.publicPrefixes.match(plan.rendered.text) : undefined;
  const state = prefix && shared?.publicStates.get(prefix);
  if (!prefix || !state) return undefined;
  const keep = Math.min(commonPrefix(state.tokens, tokens), limit);
  if (keep < least) return undefined;
  const target = turn.session.sequence;
  return {
    keep,
    name: prefix.name,
    restore: async () => {
      const started = performance.now();
      try {
        await target.loadState(state.path, state.tokens);
        await target.truncate(keep);
        return { kind: "copied", keep, how: "state-restore", ms: performance.now() - started };
      } catch (error) {
        await target.truncate(0).catch(() => undefined);
        return { kind: "failed", error };
      }
    },
  };
}

function logHit(what: string, from: string, attempt: Attempt & { kind: "copied" }, prompt: number, turn: Turn): void {
  log(`kv cache hit ${what}`, {
    from,
    tokens: attempt.keep,
    prompt,
    method: attempt.how,
    copy: `${attempt.ms.toFixed(1)}ms`,
    session: turn.request.sessionId.slice(0, 8),
  });
}

function checkNever(value: never): never {
  throw new Error(`unhandled ${JSON.stringify(value)}`);
}
