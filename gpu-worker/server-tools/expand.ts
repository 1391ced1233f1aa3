/**
 * Hosted-tool exchanges in the form every family renders natively. An assistant message that holds
 * `server_tool_use` and its results is split where the results are: the calls end an assistant
 * turn (as tool calls in the family's markup), the results follow as a tool-result turn, and the
 * rest of the message is the next assistant turn. That is exactly what the worker put into the KV
 * when it ran the tools inside the turn, so a replayed turn continues live and a cold replay
 * prefills the same tokens. A message whose last block is a result ends the conversation on a
 * tool-result turn: the resume of a `pause_turn` is an ordinary request for the next step. Only
 * Frontier's own exchanges are split; another provider's stay in place as context.
 */
import { create } from "@bufbuild/protobuf";
import {
  type ContentBlock,
  ContentBlockSchema,
  type Conversation,
  ConversationSchema,
  type Message,
  MessageSchema,
  Role,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { WorkerFailure } from "../errors.ts";
import { type OfferedServerTools, serverToolDefinition } from "./declarations.ts";

/**
 * `own` names the hosted calls Frontier ran (IDs the edge verified as minted for this tenant); other
 * providers' exchanges stay where they are, as context (gpu-worker/continuation/replay-turn.ts).
 */
export function expandServerTools(
  conversation: Conversation,
  offered: OfferedServerTools,
  own: ReadonlySet<string>,
): Conversation {
  const clientNames = new Set(conversation.tools.map((t) => t.name));
  for (const name of offered.byName.keys()) {
    if (clientNames.has(name)) throw WorkerFailure.invalid(`tools: '${name}' is declared twice`, "tools");
  }
  const isOwn = (block: ContentBlock) => own.has(serverCallId(block));
  const hasOwnBlocks = conversation.messages.some((m) => m.role === Role.ASSISTANT && m.content.some(isOwn));
  if (offered.byName.size === 0 && !hasOwnBlocks) return conversation;
  return create(ConversationSchema, {
    ...conversation,
    tools: [...conversation.tools, ...[...offered.byName.values()].map(serverToolDefinition)],
    messages: conversation.messages.flatMap((m) => (m.role === Role.ASSISTANT ? splitAssistant(m, isOwn) : [m])),
  });
}

/** The hosted call a block belongs to ("" for any other block). */
function serverCallId({ block }: ContentBlock): string {
  if (block.case === "serverToolUse") return block.value.id;
  if (block.case === "serverToolResult") return block.value.toolUseId;
  return "";
}

function splitAssistant(message: Message, isOwn: (block: ContentBlock) => boolean): Message[] {
  if (!message.content.some(isOwn)) return [message];
  const out: Message[] = [];
  let assistant: ContentBlock[] = [];
  let results: ContentBlock[] = [];
  const flushResults = () => {
    if (results.length === 0) return;
    out.push(create(MessageSchema, { role: Role.ASSISTANT, content: assistant }));
    out.push(create(MessageSchema, { role: Role.USER, content: results }));
    assistant = [];
    results = [];
  };
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "serverToolResult" && isOwn(block)) {
      results.push(
        create(ContentBlockSchema, {
          block: { case: "toolResult", value: { toolUseId: b.value.toolUseId, content: b.value.text, isError: false } },
        }),
      );
      continue;
    }
    flushResults();
    if (b.case === "serverToolUse" && isOwn(block)) {
      assistant.push(
        create(ContentBlockSchema, {
          block: { case: "toolUse", value: { id: b.value.id, name: b.value.name, inputJson: b.value.inputJson } },
        }),
      );
    } else assistant.push(block);
  }
  if (results.length > 0) flushResults();
  else if (assistant.length > 0) out.push(create(MessageSchema, { role: Role.ASSISTANT, content: assistant }));
  return out;
}
