/** What a turn runs with (its dependencies) and the state its steps share. */
import type { Engine, Token } from "../../native/engine-types.ts";
import type {
  ContentBlock,
  Conversation,
  GenerateRequest,
  StopReason,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { ChatFormat, PromptSegment } from "../chat/types.ts";
import type { SessionCheckpoints } from "../checkpoints/session-checkpoints.ts";
import type { WorkerConfig } from "../config.ts";
import type { ContinuationPlan } from "../continuation/plan-continuation.ts";
import type { SpanTokenMemory } from "../continuation/span-token-memory.ts";
import type { TurnMemory } from "../continuation/turn-memory.ts";
import type { SampledTurn } from "../generate/sample-turn.ts";
import type { TurnTrace } from "../metrics/turn-trace.ts";
import type { WorkerMetrics } from "../metrics/worker-metrics.ts";
import type { OfferedServerTools } from "../server-tools/declarations.ts";
import type { LeasedSession } from "../session/live-session.ts";
import type { SessionTable } from "../session/session-table.ts";
import type { idKinds } from "./request.ts";
import type { ServerToolUses } from "./server-tool-steps/server-tool-step.ts";
import type { SharedPrefixes } from "./shared-prefix/shared-prefixes.ts";

export interface TurnDeps {
  engine: Engine;
  format: ChatFormat;
  sessions: SessionTable;
  memory: TurnMemory;
  spans: SpanTokenMemory;
  /** The disk checkpoint store (ladder step "disk checkpoint", anchors, tool-frontier saves). */
  checkpoints: SessionCheckpoints | undefined;
  config: WorkerConfig;
  /** The shared-prefix index and public prefixes (undefined: the ladder's shared-prefix rungs are off). */
  shared?: SharedPrefixes | undefined;
  /** Prometheus metrics (undefined: not recorded). */
  metrics?: WorkerMetrics | undefined;
}

/** One Generate call in flight: what admission found, and what its steps add. */
export interface Turn {
  readonly deps: TurnDeps;
  readonly request: GenerateRequest;
  readonly signal: AbortSignal;
  readonly trace: TurnTrace;
  readonly conversation: Conversation;
  /** The kinds of the IDs this turn mints. */
  readonly ids: ReturnType<typeof idKinds>;
  readonly offered: OfferedServerTools;
  /** Leased for the whole call, so requests on one session never interleave. */
  readonly session: LeasedSession;
  /** Tokenize prompt segments, reusing the tokens the KV holds for remembered sampled spans. */
  readonly tokenize: (segments: readonly PromptSegment[]) => Promise<Token[]>;
  /** Hosted tools the worker runs itself (undefined: none offered). */
  readonly serverTools: { names: ReadonlySet<string>; mintId: () => Promise<string> } | undefined;
  /** Hosted calls Frontier ran: replayed ones (their IDs verify) and this turn's. */
  readonly own: Set<string>;
  readonly uses: ServerToolUses;
  /** The client's view of the turn so far (hosted-tool steps append to it). */
  readonly stepBlocks: ContentBlock[];
  readonly totals: { input: number; output: number; cached: number; thinking: number };
  /** The request's output budget across all steps. */
  readonly outputBudget: number;
  /** The first step's plan (the one the prompt event reports). */
  firstPlan: ContinuationPlan | undefined;
  /** The last step's sampled generation. */
  sampled: SampledTurn | undefined;
  stopReason: StopReason;
}

/** One step of a turn (hosted-tool steps add more): its plan, its prompt size, its output room, its grammar. */
export interface PlannedStep {
  readonly step: number;
  /** The conversation this step samples from (the request plus the steps before it). */
  readonly conversation: Conversation;
  readonly plan: ContinuationPlan;
  readonly promptTokens: number;
  /** Tokens this step may sample. */
  readonly room: number;
  readonly grammar: string | undefined;
}
