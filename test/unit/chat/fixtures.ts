/** Conversations shared by the chat-format tests. */

import type { MessageInitShape } from "@bufbuild/protobuf";
import { create } from "@bufbuild/protobuf";
import {
  type Conversation,
  ConversationSchema,
  type MessageSchema,
  Role,
  ThinkingMode,
  ToolChoiceMode,
} from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";

type MessageInit = MessageInitShape<typeof MessageSchema>;
type BlockInit = NonNullable<MessageInit["content"]>[number];

export const BASH_SCHEMA = JSON.stringify({
  type: "object",
  properties: { command: { type: "string" }, timeout: { type: "integer" } },
  required: ["command"],
});
export const READ_SCHEMA = JSON.stringify({
  type: "object",
  properties: { path: { type: "string" } },
  required: ["path"],
});

export const TOOLS = [
  { name: "Bash", description: "Run a command", inputSchemaJson: BASH_SCHEMA },
  { name: "Read", description: "Read a file", inputSchemaJson: READ_SCHEMA },
];

export const text = (t: string) => ({ block: { case: "text" as const, value: { text: t } } });
export const thinking = (t: string) => ({
  block: { case: "thinking" as const, value: { thinking: t, signature: "sig" } },
});
export const toolUse = (id: string, name: string, inputJson: string) => ({
  block: { case: "toolUse" as const, value: { id, name, inputJson } },
});
export const toolResult = (toolUseId: string, content: string, isError = false) => ({
  block: { case: "toolResult" as const, value: { toolUseId, content, isError } },
});
export const opaque = (type: string, json: string) => ({ block: { case: "opaque" as const, value: { type, json } } });

export const user = (...content: BlockInit[]): MessageInit => ({ role: Role.USER, content });
export const assistant = (...content: BlockInit[]): MessageInit => ({ role: Role.ASSISTANT, content });
export const systemMessage = (t: string): MessageInit => ({ role: Role.SYSTEM, content: [text(t)] });

export function conversation(
  messages: MessageInit[],
  options: { thinking?: ThinkingMode; tools?: boolean; system?: string[] } = {},
): Conversation {
  return create(ConversationSchema, {
    system: options.system ?? ["You are a helpful agent.", "Be brief."],
    tools: options.tools === false ? [] : TOOLS,
    toolChoice: { mode: ToolChoiceMode.AUTO },
    thinking: { mode: options.thinking ?? ThinkingMode.ENABLED },
    messages,
  });
}

/** The full agent turn used by the snapshot tests. */
export function agentConversation(thinkingMode: ThinkingMode = ThinkingMode.ENABLED): Conversation {
  return conversation(
    [
      systemMessage("Today is Monday."),
      user(text("List the files.")),
      assistant(
        thinking("I should run ls."),
        text("Let me look."),
        toolUse("toolu_1", "Bash", '{"command":"ls"}'),
        toolUse("toolu_2", "Read", '{"path": "a.txt"}'),
      ),
      user(toolResult("toolu_2", "hello"), toolResult("toolu_1", "a.txt\nb.txt")),
    ],
    { thinking: thinkingMode },
  );
}
