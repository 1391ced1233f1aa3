/**
 * Which session (and so which SessionDO and sticky worker) a request belongs to. The core is pure:
 * collect the IDs a request carries, verify them, and rank the candidate sessions:
 *   1. the session every `tool_result.tool_use_id` of the last user message names;
 *   2. else the session named by the latest replayed assistant turn's `tool_use` ids;
 *   3. else a session derived from the client's hint (`prompt_cache_key`, or a header in
 *      HINT_HEADERS), per tenant;
 *   4. else a new session.
 * A hint places, it never merges: a first turn, a concurrent request, or a request that does not
 * answer the hinted session's pending tool calls branches into a new session on the same worker.
 */
import { toHex, verifyId } from "../../shared/ids.ts";

export type RouteSource = "previous-response" | "tool-result" | "replay" | "hint" | "branch" | "new";

export interface RoutingIds {
  /** IDs of the tool results in the last user turn (`tool_use_id`, `call_id`). */
  toolResults: string[];
  /** Tool-call IDs of each replayed assistant turn that has any, latest first. */
  replayed: string[][];
  /** No assistant message is replayed: the conversation's first turn. */
  firstTurn: boolean;
  /** Replayed assistant turns (with or without IDs): a follow-up replays one more than its parent. */
  assistantTurns: number;
}

/** The session each ID names after verification (undefined: malformed, forged or another tenant's). */
export interface VerifiedIds {
  toolResults: (string | undefined)[];
  replayed: (string | undefined)[][];
}

export interface IdCandidate {
  source: "previous-response" | "tool-result" | "replay";
  sessionId: string;
}

/** At most this many IDs are verified per request (one HMAC each). */
export const MAX_VERIFIED_IDS = 256;

export async function verifyRoutingIds(secret: string, tenant: string, ids: RoutingIds): Promise<VerifiedIds> {
  let budget = MAX_VERIFIED_IDS;
  const verify = async (list: string[]): Promise<(string | undefined)[]> => {
    const take = list.slice(0, Math.max(0, budget));
    budget -= take.length;
    const decoded = await Promise.all(take.map((id) => verifyId(secret, id, tenant)));
    return decoded.map((d) => d?.session);
  };
  const toolResults = await verify(ids.toolResults);
  const replayed: (string | undefined)[][] = [];
  for (const turn of ids.replayed) {
    if (budget <= 0) break;
    const sessions = await verify(turn);
    replayed.push(sessions);
    if (sessions.some((s) => s !== undefined)) break;
  }
  return { toolResults, replayed };
}

/** Candidate sessions from verified IDs, best first. */
export function idCandidates(verified: VerifiedIds): IdCandidate[] {
  const out: IdCandidate[] = [];
  const fromResults = singleSession(verified.toolResults, true);
  if (fromResults) out.push({ source: "tool-result", sessionId: fromResults });
  for (const turn of verified.replayed) {
    if (!turn.some((s) => s !== undefined)) continue;
    const fromReplay = singleSession(turn, false);
    if (fromReplay && fromReplay !== fromResults) out.push({ source: "replay", sessionId: fromReplay });
    break;
  }
  return out;
}

/** The one session all IDs name; with `strict`, every ID must verify. */
function singleSession(sessions: readonly (string | undefined)[], strict: boolean): string | undefined {
  if (sessions.length === 0) return undefined;
  if (strict && sessions.some((s) => s === undefined)) return undefined;
  const distinct = new Set(sessions.filter((s): s is string => s !== undefined));
  return distinct.size === 1 ? [...distinct][0] : undefined;
}

/** The hinted session: first 32 hex of sha256(tenant \0 hint), so tenants never share one. */
export async function hintSessionId(tenant: string, hint: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${tenant}\u0000${hint}`));
  return toHex(new Uint8Array(digest)).slice(0, 32);
}

/**
 * Headers clients send to name their conversation, in the order they are read: Claude Code's,
 * Codex's (`session-id`; it also sends the same value as `prompt_cache_key`), opencode's.
 */
export const HINT_HEADERS = ["x-claude-code-session-id", "session-id", "x-session-affinity", "x-session-id"] as const;

/** The client's conversation key: the body's `prompt_cache_key`, else the first hint header present. */
export function requestHint(headers: Headers, promptCacheKey?: string): string | null {
  if (promptCacheKey !== undefined && cleanHint(promptCacheKey) !== undefined) return promptCacheKey;
  for (const name of HINT_HEADERS) {
    const value = headers.get(name);
    if (cleanHint(value) !== undefined) return value;
  }
  return null;
}

/** A usable hint header value, or undefined. */
export function cleanHint(raw: string | null): string | undefined {
  const hint = raw?.trim();
  return hint && hint.length <= 256 ? hint : undefined;
}

export interface HintState {
  exists: boolean;
  /** A request holds the session's lease now. */
  busy: boolean;
  /** Tool calls of the last turn still waiting for results. */
  pendingToolUseIds: number;
  turns: number;
}

/** What a hinted request knows about the turn that holds its session's lease. */
export interface RunningTurn {
  /**
   * The request continues that turn: it replays one assistant turn more than the running request
   * did (that turn's answer). False for a sibling (a fork of the same parent), which must branch.
   */
  follows: boolean;
  /**
   * Expected ms the running turn still holds the session after a branch could start its prefill (a
   * branch on the same worker queues behind the same work); 0 when that turn answered already.
   */
  remainingMs: number;
  /** Ms a branch would spend re-prefilling the prefix the session holds for this request. */
  reprefillMs: number;
}

export type HintDecision = "claim" | "wait" | "branch";

/**
 * Whether a request routed by hint (it carries no usable IDs) continues the hinted session. A busy
 * session is waited for (`wait`: queue behind its running turn, then claim) when the request follows
 * that turn and the wait is shorter than re-prefilling what the session holds; otherwise it branches.
 * A client sends a follow-up only once it has its parent's answer, so a real follow-up that finds its
 * session busy is the edge recording that turn after the response (`remainingMs` 0). Two concurrent
 * children of one parent are siblings: the second does not follow the first, so it branches and the
 * first keeps the live KV.
 */
export function hintDecision(state: HintState, firstTurn: boolean, running?: RunningTurn): HintDecision {
  if (!state.exists) return "claim";
  // The pending tool calls and turns are the last recorded turn's: a waiter decides again on the record.
  if (state.busy) return running?.follows && running.remainingMs < running.reprefillMs ? "wait" : "branch";
  if (state.pendingToolUseIds > 0) return "branch";
  if (firstTurn && state.turns > 0) return "branch";
  return "claim";
}

/** The sticky worker: the preferred one while it is configured, else a stable hash of the key. */
export function pickWorker(key: string, urls: readonly string[], preferred?: string): string {
  if (preferred !== undefined && urls.includes(preferred)) return preferred;
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  const url = urls[(hash >>> 0) % urls.length];
  if (url === undefined) throw new Error("pickWorker: no worker URLs");
  return url;
}
