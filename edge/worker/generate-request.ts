/**
 * The GenerateRequest every protocol sends: a protocol's canonical turn (`WorkerTurn`: the neutral
 * conversation, sampling, the ID kinds to mint) plus the session it runs in, joined once routing has
 * found the session (a failover builds a new request for the new session).
 */
import { create } from "@bufbuild/protobuf";
import {
  type Conversation,
  type GenerateRequest,
  GenerateRequestSchema,
  type ResponseFormat,
  type SamplingParams,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { IdKind } from "../../shared/ids.ts";

/** Where a turn runs. */
export interface SessionTarget {
  requestId: string;
  tenantId: string;
  sessionId: string;
  epoch: number;
  /** The tenant's data key (edge/core/tenant-data-key.ts): the worker seals its checkpoints with it. */
  tenantDataKey?: Uint8Array | undefined;
}

/** The kinds of the IDs a protocol's turns carry: the message (or response) and each tool call. */
export interface TurnIdKinds {
  message: IdKind;
  toolCall: IdKind;
  /** Hosted tool calls the worker runs (web_search, web_fetch). */
  serverToolCall: IdKind;
}

/** What a protocol adapter decodes a request into for the worker, whatever the protocol. */
export interface WorkerTurn {
  idKinds: TurnIdKinds;
  conversation: Conversation;
  sampling: SamplingParams;
  responseFormat?: ResponseFormat | undefined;
}

/** `prefix`: the request's prefix fingerprint (the worker reports the prefixes it holds). */
export function generateRequestFor(target: SessionTarget, turn: WorkerTurn, prefix = ""): GenerateRequest {
  const { idKinds } = turn;
  return create(GenerateRequestSchema, {
    requestId: target.requestId,
    tenantId: target.tenantId,
    sessionId: target.sessionId,
    epoch: BigInt(target.epoch),
    idKinds: { message: idKinds.message, toolCall: idKinds.toolCall, serverToolCall: idKinds.serverToolCall },
    conversation: turn.conversation,
    sampling: turn.sampling,
    responseFormat: turn.responseFormat,
    prefixFingerprint: prefix,
    ...(target.tenantDataKey ? { tenantDataKey: target.tenantDataKey } : {}),
  });
}
