/**
 * Chat Completions messages → the protocol-neutral proto conversation. System and developer
 * messages before the first turn become the system prompt, later ones system messages; an
 * assistant message becomes one assistant turn (replayed reasoning, text, tool calls); consecutive
 * user and tool messages become one user turn, so the tool results that answer one assistant turn
 * arrive together, as the continuation ladder expects.
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
  type SamplingParams,
  SamplingParamsSchema,
  ThinkingMode,
  ThinkingSchema,
  type ToolChoice,
  ToolChoiceMode,
  ToolChoiceSchema,
  ToolDefinitionSchema,
} from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { ChatMessage, ChatRequest } from "./types.ts";

const THINKING_BUDGETS: Record<string, number> = { low: 1024, medium: 4096, high: 16_384, xhigh: 32_768 };

export function toChatConversation(request: ChatRequest): Conversation {
  const system: string[] = [];
  const messages: Message[] = [];
  for (const message of request.messages) {
    if (message.role === "system" || message.role === "developer") {
      if (messages.length === 0) system.push(message.text);
      else messages.push(create(MessageSchema, { role: Role.SYSTEM, content: [textBlock(message.text)] }));
      continue;
    }
    const role = message.role === "assistant" ? Role.ASSISTANT : Role.USER;
    const last = messages.at(-1);
    // Two assistant messages in a row stay two turns; user-side messages merge into one.
    const target = last?.role === role && role === Role.USER ? last : create(MessageSchema, { role });
    if (target !== last) messages.push(target);
    target.content.push(...blocksOf(message));
  }
  const budget = request.reasoningEffort === undefined ? undefined : THINKING_BUDGETS[request.reasoningEffort];
  return create(ConversationSchema, {
    system,
    messages,
    tools: request.tools.map((tool) =>
      create(ToolDefinitionSchema, {
        name: tool.name,
        description: tool.description,
        inputSchemaJson: JSON.stringify(tool.parameters),
      }),
    ),
    toolChoice: toToolChoice(request),
    thinking:
      budget === undefined
        ? create(ThinkingSchema, { mode: ThinkingMode.DISABLED })
        : create(ThinkingSchema, { mode: ThinkingMode.ENABLED, budgetTokens: budget }),
  });
}

export function toChatSampling(request: ChatRequest): SamplingParams {
  return create(SamplingParamsSchema, {
    maxTokens: request.maxTokens ?? 0,
    temperature: request.temperature,
    topP: request.topP,
    seed: request.seed === undefined ? undefined : BigInt(request.seed),
    stopSequences: request.stop,
  });
}

function blocksOf(message: Exclude<ChatMessage, { role: "system" } | { role: "developer" }>): ContentBlock[] {
  switch (message.role) {
    case "user":
      return [textBlock(message.text)];
    case "tool":
      return [
        create(ContentBlockSchema, {
          block: { case: "toolResult", value: { toolUseId: message.toolCallId, content: message.text } },
        }),
      ];
    case "assistant": {
      const blocks: ContentBlock[] = [];
      if (message.reasoning !== "") {
        blocks.push(
          create(ContentBlockSchema, { block: { case: "thinking", value: { thinking: message.reasoning } } }),
        );
      }
      if (message.text !== "") blocks.push(textBlock(message.text));
      for (const call of message.toolCalls) {
        blocks.push(
          create(ContentBlockSchema, {
            block: { case: "toolUse", value: { id: call.id, name: call.name, inputJson: call.arguments } },
          }),
        );
      }
      if (blocks.length === 0) blocks.push(textBlock(""));
      return blocks;
    }
  }
}

function textBlock(text: string): ContentBlock {
  return create(ContentBlockSchema, { block: { case: "text", value: { text } } });
}

function toToolChoice(request: ChatRequest): ToolChoice {
  const disableParallelToolUse = !request.parallelToolCalls;
  const choice = request.toolChoice;
  if (typeof choice === "object") {
    return create(ToolChoiceSchema, { mode: ToolChoiceMode.TOOL, name: choice.name, disableParallelToolUse });
  }
  const mode = { auto: ToolChoiceMode.AUTO, required: ToolChoiceMode.ANY, none: ToolChoiceMode.NONE }[choice];
  return create(ToolChoiceSchema, { mode, disableParallelToolUse });
}
