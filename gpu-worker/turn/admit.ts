/** Step "admit": check the request, offer its hosted tools, lease its session and open the turn. */
import type { GenerateRequest } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { isSessionId, mintIdWithSessionKey } from "../../shared/ids.ts";
import { LIMITS } from "../../shared/limits.ts";
import type { PromptSegment } from "../chat/types.ts";
import { WorkerFailure } from "../errors.ts";
import { tokenizeSegments } from "../generate/prompt-tokens.ts";
import { log } from "../log.ts";
import type { TurnTrace } from "../metrics/turn-trace.ts";
import { offerServerTools } from "../server-tools/declarations.ts";
import { checkConversation, idKinds } from "./request.ts";
import { ServerToolUses } from "./server-tool-steps/server-tool-step.ts";
import type { Turn, TurnDeps } from "./turn.ts";

/** What admission hands the turn: the checked request and its leased session. */
export type Admitted = Pick<Turn, "conversation" | "ids" | "offered" | "session">;

/**
 * Refuse a malformed request, then lease its session (waiting for a sequence if need be). `signal`
 * (the call cancelled, or the turn's wall clock out) takes a waiting turn out of the queue at once.
 */
export async function admit(
  deps: TurnDeps,
  request: GenerateRequest,
  signal: AbortSignal,
  trace: TurnTrace,
): Promise<Admitted> {
  const conversation = checkConversation(request);
  const ids = idKinds(request);
  if (!isSessionId(request.sessionId))
    throw WorkerFailure.invalid("session_id must be 32 hex characters", "session_id");
  if (request.sessionIdKey.length !== 32)
    throw WorkerFailure.invalid("session_id_key must be the session's 32-byte ID key from the edge", "session_id_key");
  const offered = offerServerTools(request.conversation?.serverTools ?? [], deps.config.serverTools);
  if (offered.notOffered.length > 0)
    log("server tools not offered", { tools: offered.notOffered.join(","), request: request.requestId });
  const session = await trace.during("lease", () =>
    deps.sessions.lease(request.tenantId, request.sessionId, request.tenantDataKey, signal),
  );
  return { conversation, ids, offered, session };
}

/** The turn's shared state, from what admission found (run while the session is leased). */
export async function openTurn(
  deps: TurnDeps,
  request: GenerateRequest,
  signal: AbortSignal,
  trace: TurnTrace,
  admitted: Admitted,
): Promise<Turn> {
  const { ids, offered } = admitted;
  const tokenize = (segments: readonly PromptSegment[]) =>
    tokenizeSegments(deps.engine, segments, (text) => deps.spans.recall(request.tenantId, text));
  const serverTools =
    offered.byName.size > 0
      ? {
          names: new Set(offered.byName.keys()),
          mintId: () => mintIdWithSessionKey(request.sessionIdKey, ids.serverToolCall, request.sessionId),
        }
      : undefined;
  return {
    ...admitted,
    deps,
    request,
    signal,
    trace,
    tokenize,
    serverTools,
    // The edge verified which hosted-call IDs are Frontier's own; the worker holds no key to check them.
    own: new Set(request.ownServerCallIds),
    uses: new ServerToolUses(),
    stepBlocks: [],
    totals: { input: 0, output: 0, cached: 0, thinking: 0 },
    outputBudget: request.sampling?.maxTokens || LIMITS.defaultMaxOutputTokens,
    firstPlan: undefined,
    sampled: undefined,
    stopReason: StopReason.END_TURN,
  };
}
