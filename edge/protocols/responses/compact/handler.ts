/**
 * POST /v1/responses/compact (OpenAI's remote compaction, what Codex calls for `/compact` and at its
 * auto-compact limit): the conversation (input items and/or `previous_response_id`, the same auth,
 * limits and validation as /v1/responses) goes through the one turn pipeline with a request to
 * summarise it (summary-turn.ts); the answer is the compacted history, `object: "response.compaction"`
 * with `output` = the conversation's user messages (the newest, within a budget) followed by one
 * `compaction` item whose `encrypted_content` is the summary sealed for this tenant
 * (request/compaction-items.ts). A later /v1/responses request that carries the item renders the
 * summary in place of the history it replaced.
 */
import { LIMITS } from "../../../../shared/limits.ts";
import { fail, isObject } from "../../../core/check.ts";
import { ApiError } from "../../../core/errors.ts";
import { jsonResponse, readJsonBody } from "../../../http/body.ts";
import type { RequestContext } from "../../../http/context.ts";
import { admissionGate } from "../../../tenancy/admission.ts";
import { identifyCaller } from "../../../tenancy/auth.ts";
import { runTurn } from "../../../turn/pipeline.ts";
import type { ResponsesBindings } from "../adapter.ts";
import {
  COMPACTION_SUMMARY_HEADING,
  compactionItemId,
  sealCompaction,
  summaryOf,
} from "../request/compaction-items.ts";
import type { InputItem, ResponseObject, ResponseUsage } from "../request/types.ts";
import { summaryTurn } from "./summary-turn.ts";

/** How much user text the compacted output keeps, newest first (about Codex's own 64k-token budget). */
const RETAINED_USER_CHARS = 256_000;

/** One item of a compacted history. */
type CompactedItem =
  | { type: "message"; role: "user"; content: { type: "input_text"; text: string }[] }
  | { type: "compaction"; id: string; encrypted_content: string };

export interface CompactionResponse {
  id: string;
  object: "response.compaction";
  created_at: number;
  output: CompactedItem[];
  usage: ResponseUsage | null;
}

export async function handleCompact(request: Request, rc: RequestContext<ResponsesBindings>): Promise<Response> {
  const caller = await identifyCaller(request.headers, rc.config);
  const body = withInput(await readJsonBody(request, LIMITS.maxBodyBytes, admissionGate(rc, caller)));
  const adapter = summaryTurn();
  const answer = await runTurn(adapter, { rc, caller, headers: request.headers, body, signal: request.signal });
  if (!answer.ok) return answer;
  const turn = (await answer.json()) as ResponseObject;
  if (turn.status === "failed") {
    throw ApiError.internal(`The summary turn failed: ${turn.error?.message ?? "unknown error"}`);
  }
  const compaction: CompactedItem = {
    type: "compaction",
    id: compactionItemId(),
    encrypted_content: await sealCompaction(rc.config.idSecret, caller.tenant, summaryOf(turn.output)),
  };
  const response: CompactionResponse = {
    id: turn.id,
    object: "response.compaction",
    created_at: turn.created_at,
    output: [...retainedUserMessages(adapter.conversation), compaction],
    usage: turn.usage,
  };
  const headers: Record<string, string> = { "x-request-id": rc.requestId };
  for (const [name, value] of answer.headers) if (name.startsWith("x-frontier-")) headers[name] = value;
  return jsonResponse(response, { headers });
}

/**
 * The body with an `input` the Responses validator accepts: `[]` when only `previous_response_id`
 * names the conversation. Nothing to compact (no input, no previous response) is a 400.
 */
function withInput(body: unknown): unknown {
  if (!isObject(body)) return body;
  const { input, previous_response_id: previous } = body;
  const empty = input === undefined || input === null || input === "" || (Array.isArray(input) && input.length === 0);
  if (empty && previous === undefined) {
    fail(["input"], "Nothing to compact: send the conversation as input items, or name it with previous_response_id");
  }
  return input === undefined || input === null ? { ...body, input: [] } : body;
}

/** The conversation's user messages, newest kept first within the budget, in their order; earlier summaries are not kept (the new one covers them). */
function retainedUserMessages(items: readonly InputItem[]): CompactedItem[] {
  const kept: CompactedItem[] = [];
  let budget = RETAINED_USER_CHARS;
  for (const item of [...items].reverse()) {
    if (item.type !== "message" || item.role !== "user" || item.text.startsWith(COMPACTION_SUMMARY_HEADING)) continue;
    if (item.text.length > budget) break;
    budget -= item.text.length;
    kept.unshift({ type: "message", role: "user", content: [{ type: "input_text", text: item.text }] });
  }
  return kept;
}
