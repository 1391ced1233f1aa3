/**
 * One step of a hosted-tool loop inside a turn: the model ended a generation with hosted-tool
 * calls only; run them (in call order), stream each call and its result, and return the blocks the
 * client's view of the assistant turn gains — the same `server_tool_use` / result blocks a client
 * replays, so the next step's prompt is built by the same expansion a replay goes through.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type ContentBlock,
  ContentBlockSchema,
  type Conversation,
  type GenerateEvent,
  Role,
  ServerToolKind,
} from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { generateEvent } from "../../generate/events.ts";
import type { SampledToolCall } from "../../generate/sample-turn.ts";
import { log } from "../../log.ts";
import type { ServerToolsConfig } from "../../server-tools/config.ts";
import type { OfferedServerTools } from "../../server-tools/declarations.ts";
import { runServerCall } from "../../server-tools/run-call.ts";

/** Calls per hosted tool in this request (max_uses) and the usage counters. */
export class ServerToolUses {
  readonly #byName = new Map<string, number>();
  webSearch = 0;
  webFetch = 0;

  count(name: string): number {
    return this.#byName.get(name) ?? 0;
  }

  add(name: string, kind: ServerToolKind, ran: boolean): void {
    this.#byName.set(name, this.count(name) + 1);
    if (!ran) return;
    if (kind === ServerToolKind.WEB_SEARCH) this.webSearch++;
    else if (kind === ServerToolKind.WEB_FETCH) this.webFetch++;
  }
}

export interface StepInput {
  calls: readonly SampledToolCall[];
  /** The step's visible text (the client saw it before the calls). */
  visibleText: string;
  offered: OfferedServerTools;
  config: ServerToolsConfig;
  uses: ServerToolUses;
  /** The conversation the step sampled from (its user turns and tool results bound web_fetch's URLs). */
  conversation: Conversation;
  signal: AbortSignal;
  requestId: string;
}

export async function* runServerStep(input: StepInput): AsyncGenerator<GenerateEvent, ContentBlock[]> {
  const blocks: ContentBlock[] = [];
  if (input.visibleText !== "") blocks.push(block({ case: "text", value: { text: input.visibleText } }));
  const results: ContentBlock[] = [];
  const contextText = conversationText(input.conversation);
  const calls = input.calls.flatMap((call) => {
    const declaration = input.offered.byName.get(call.name);
    return declaration ? [{ call, declaration }] : [];
  });
  // Every call, then every result: the order the expansion of a replayed turn gives back.
  for (const { call, declaration } of calls) {
    yield generateEvent({
      case: "serverToolCall",
      value: { id: call.id, name: call.name, kind: declaration.kind, inputJson: call.argumentsJson },
    });
    blocks.push(
      block({ case: "serverToolUse", value: { id: call.id, name: call.name, inputJson: call.argumentsJson } }),
    );
  }
  for (const { call, declaration } of calls) {
    const outcome = await runServerCall(declaration, call.argumentsJson, {
      config: input.config,
      usesSoFar: input.uses.count(call.name),
      contextText,
      signal: input.signal,
    });
    input.uses.add(call.name, declaration.kind, outcome.errorCode !== "max_uses_exceeded");
    log("server tool", {
      tool: call.name,
      error: outcome.errorCode || undefined,
      hits: outcome.hits.length || undefined,
      chars: outcome.modelText.length,
      request: input.requestId,
    });
    yield generateEvent({
      case: "serverToolResult",
      value: {
        toolUseId: call.id,
        kind: outcome.kind,
        errorCode: outcome.errorCode,
        hits: outcome.hits,
        page: outcome.page,
        query: outcome.query,
      },
    });
    results.push(
      block({
        case: "serverToolResult",
        value: {
          toolUseId: call.id,
          type: declaration.kind === ServerToolKind.WEB_SEARCH ? "web_search_tool_result" : "web_fetch_tool_result",
          text: outcome.modelText,
          isError: outcome.errorCode !== "",
        },
      }),
    );
  }
  return [...blocks, ...results];
}

type BlockInit = NonNullable<MessageInitShape<typeof ContentBlockSchema>["block"]>;

function block(value: BlockInit): ContentBlock {
  return create(ContentBlockSchema, { block: value });
}

/** User and tool-result text of a conversation (where a URL must appear for web_fetch to fetch it). */
function conversationText(conversation: Conversation): string {
  const parts: string[] = [];
  for (const message of conversation.messages) {
    if (message.role !== Role.USER) continue;
    for (const { block: b } of message.content) {
      if (b.case === "text") parts.push(b.value.text);
      else if (b.case === "toolResult") parts.push(b.value.content);
    }
  }
  return parts.join("\n");
}
