/** Step "sample": one generation of the step under its grammar, streamed as protocol-neutral events. */
import type { Token } from "../../native/engine-types.ts";
import type { GenerateEvent } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintIdWithSessionKey } from "../../shared/ids.ts";
import { type SampledTurn, sampleTurn } from "../generate/sample-turn.ts";
import type { PlannedStep, Turn } from "./turn.ts";

/** Sample the step (the request's sampling settings, the step's room and grammar). */
export function sample(
  turn: Turn,
  planned: PlannedStep,
  promptEnd: Token[],
): AsyncGenerator<GenerateEvent, SampledTurn> {
  const { deps, request, signal, trace } = turn;
  const { engine, format } = deps;
  const { plan, grammar } = planned;
  const sampling = request.sampling;
  return sampleTurn({
    sequence: turn.session.sequence,
    parser: format.createOutputParser({
      thinkingOpen: plan.rendered.thinkingOpen,
      // Deferred tools a tool_reference loaded are callable too (rendered in their tool results).
      tools: [...plan.conversation.tools, ...plan.conversation.referencedTools],
    }),
    promptEnd,
    thinkingOpen: plan.rendered.thinkingOpen,
    sampling: {
      temperature: sampling?.temperature ?? 1,
      topP: sampling?.topP ?? 1,
      topK: sampling?.topK ?? 0,
      minP: 0,
      seed: sampling?.seed === undefined ? undefined : Number(sampling.seed),
      grammar,
    },
    maxTokens: planned.room,
    stopSequences: sampling?.stopSequences ?? [],
    signal,
    tokenBytes: (token) => engine.tokenBytes(token),
    isEndOfGeneration: (token) => engine.isEndOfGeneration(token),
    mintToolUseId: () => mintIdWithSessionKey(request.sessionIdKey, turn.ids.toolCall, request.sessionId),
    serverTools: turn.serverTools,
    // The edge signs thinking (edge/worker/generate-call.ts): a worker holds no key that could.
    signThinking: async () => "",
    onToken: () => trace.token(),
  });
}
