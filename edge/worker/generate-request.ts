/** The GenerateRequest every protocol sends: the neutral conversation plus the session it runs in. */
import { create } from "@bufbuild/protobuf";
import {
  type Conversation,
  type GenerateRequest,
  GenerateRequestSchema,
  type ResponseFormat,
  type SamplingParams,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { IdKind } from "../../shared/ids.ts";

/** Where a turn runs (the session fields are filled in once routing has found the session). */
export interface SessionTarget {
  requestId: string;
  tenantId: string;
  sessionId: string;
  epoch: number;
}

/** The kinds of the IDs a protocol's turns carry: the message (or response) and each tool call. */
export interface TurnIdKinds {
  message: IdKind;
  toolCall: IdKind;
  /** Hosted tool calls the worker runs (web_search, web_fetch). */
  serverToolCall: IdKind;
}

export function generateRequestFor(
  target: SessionTarget,
  idKinds: TurnIdKinds,
  conversation: Conversation,
  sampling: SamplingParams,
  responseFormat?: ResponseFormat,
): GenerateRequest {
  return create(GenerateRequestSchema, {
    requestId: target.requestId,
    tenantId: target.tenantId,
    sessionId: target.sessionId,
    epoch: BigInt(target.epoch),
    idKinds: { message: idKinds.message, toolCall: idKinds.toolCall, serverToolCall: idKinds.serverToolCall },
    conversation,
    sampling,
    responseFormat,
  });
}
