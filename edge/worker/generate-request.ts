/**
 * The GenerateRequest every protocol sends: a protocol's canonical turn (`WorkerTurn`: the neutral
 * conversation, sampling, the ID kinds to mint) plus the session it runs in, joined once routing has
 * found the session (a failover builds a new request for the new session). It carries the session's
 * own ID key (the worker mints this session's IDs and no other's) and the hosted-call IDs the edge
 * verified as Frontier's: the worker holds no secret that could check or mint any other ID.
 */
import { create } from "@bufbuild/protobuf";
import {
  type Conversation,
  type GenerateRequest,
  GenerateRequestSchema,
  type ResponseFormat,
  type SamplingParams,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { type IdKind, sessionIdKey, verifyId } from "../../shared/ids.ts";

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

/**
 * What the worker needs to mint and recognise IDs, filled in by the edge: the session's own ID key and
 * the hosted-call IDs verified as Frontier's for this tenant. Returns the same request.
 */
export async function withIdKeys(idSecret: string, request: GenerateRequest): Promise<GenerateRequest> {
  const [sessionKey, own] = await Promise.all([
    sessionIdKey(idSecret, request.tenantId, request.sessionId),
    ownServerCalls(idSecret, request.tenantId, request.conversation),
  ]);
  request.sessionIdKey = sessionKey;
  request.ownServerCallIds = own;
  return request;
}

/** The hosted-call IDs in a conversation that Frontier minted for this tenant (srvtoolu_ / ws_), any session. */
export async function ownServerCalls(
  idSecret: string,
  tenant: string,
  conversation: Conversation | undefined,
): Promise<string[]> {
  const ids = new Set<string>();
  for (const message of conversation?.messages ?? [])
    for (const block of message.content) if (block.block.case === "serverToolUse") ids.add(block.block.value.id);
  const own: string[] = [];
  for (const id of ids) {
    const decoded = await verifyId(idSecret, id, tenant);
    if (decoded?.kind === "srvtoolu" || decoded?.kind === "ws") own.push(id);
  }
  return own;
}
