/** A validated Anthropic request → the protocol-neutral proto conversation the worker renders. */
import { create } from "@bufbuild/protobuf";
import {
  type ContentBlock,
  ContentBlockSchema,
  type Conversation,
  ConversationSchema,
  type GenerateRequest,
  MessageSchema,
  Role,
  type SamplingParams,
  SamplingParamsSchema,
  ThinkingMode,
  ThinkingSchema,
  ToolChoiceMode,
  ToolChoiceSchema,
  ToolDefinitionSchema,
} from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import {
  generateRequestFor,
  type SessionTarget,
  type TurnIdKinds,
  type WorkerTurn,
} from "../../../worker/generate-request.ts";
import { foreignThinkingBlock, serverToolBlock } from "./server-tool-blocks.ts";
import type {
  InputBlock,
  Role as InputRole,
  MessagesRequest,
  ThinkingSpec,
  ToolChoiceSpec,
  ToolResultPart,
} from "./types.ts";

/** Anthropic messages and tool calls: `msg_…` / `toolu_…`. */
export const ANTHROPIC_ID_KINDS: TurnIdKinds = { message: "msg", toolCall: "toolu", serverToolCall: "srvtoolu" };

export function toWorkerTurn(request: MessagesRequest): WorkerTurn {
  return { idKinds: ANTHROPIC_ID_KINDS, conversation: toConversation(request), sampling: toSampling(request) };
}

/** The whole GenerateRequest for a known session (count_tokens, tests, benches). */
export function toGenerateRequest(request: MessagesRequest, target: SessionTarget): GenerateRequest {
  return generateRequestFor(target, toWorkerTurn(request));
}

export function toConversation(request: MessagesRequest): Conversation {
  return create(ConversationSchema, {
    system: request.system,
    messages: request.messages.map((message) =>
      create(MessageSchema, { role: toRole(message.role), content: message.content.map(toContentBlock) }),
    ),
    tools: request.tools.map((tool) =>
      create(ToolDefinitionSchema, {
        name: tool.name,
        description: tool.description,
        inputSchemaJson: JSON.stringify(tool.input_schema),
      }),
    ),
    toolChoice: toToolChoice(request.tool_choice),
    thinking: toThinking(request.thinking),
    serverTools: request.server_tools,
  });
}

export function toSampling(request: MessagesRequest): SamplingParams {
  return create(SamplingParamsSchema, {
    maxTokens: request.max_tokens ?? 0,
    temperature: request.temperature,
    topP: request.top_p,
    topK: request.top_k,
    stopSequences: request.stop_sequences,
  });
}

function toRole(role: InputRole): Role {
  switch (role) {
    case "user":
      return Role.USER;
    case "assistant":
      return Role.ASSISTANT;
    case "system":
      return Role.SYSTEM;
  }
}

function toContentBlock(block: InputBlock): ContentBlock {
  switch (block.type) {
    case "text":
      return create(ContentBlockSchema, { block: { case: "text", value: { text: block.text } } });
    case "thinking":
      if (block.foreign) return foreignThinkingBlock(block);
      return create(ContentBlockSchema, {
        block: { case: "thinking", value: { thinking: block.thinking, signature: block.signature } },
      });
    case "tool_use":
      return create(ContentBlockSchema, {
        block: { case: "toolUse", value: { id: block.id, name: block.name, inputJson: JSON.stringify(block.input) } },
      });
    case "tool_result":
      return create(ContentBlockSchema, {
        block: {
          case: "toolResult",
          value: { toolUseId: block.tool_use_id, content: flattenToolResult(block.content), isError: block.is_error },
        },
      });
    case "server_tool_use":
    case "web_search_tool_result":
    case "web_fetch_tool_result":
    case "redacted_thinking":
      return serverToolBlock(block);
    case "opaque":
      return create(ContentBlockSchema, { block: { case: "opaque", value: { type: block.kind, json: block.json } } });
  }
}

/** Text parts joined with "\n"; other parts (images, documents...) as a visible placeholder. */
export function flattenToolResult(content: string | ToolResultPart[]): string {
  if (typeof content === "string") return content;
  return content.map((part) => (part.type === "text" ? part.text : `[${part.kind} omitted]`)).join("\n");
}

function toToolChoice(choice: ToolChoiceSpec | undefined) {
  if (!choice) return create(ToolChoiceSchema, { mode: ToolChoiceMode.AUTO });
  const disableParallelToolUse = choice.disable_parallel_tool_use;
  switch (choice.type) {
    case "auto":
      return create(ToolChoiceSchema, { mode: ToolChoiceMode.AUTO, disableParallelToolUse });
    case "any":
      return create(ToolChoiceSchema, { mode: ToolChoiceMode.ANY, disableParallelToolUse });
    case "none":
      return create(ToolChoiceSchema, { mode: ToolChoiceMode.NONE, disableParallelToolUse });
    case "tool":
      return create(ToolChoiceSchema, { mode: ToolChoiceMode.TOOL, name: choice.name, disableParallelToolUse });
  }
}

function toThinking(thinking: ThinkingSpec | undefined) {
  switch (thinking?.type) {
    case undefined:
    case "disabled":
      return create(ThinkingSchema, { mode: ThinkingMode.DISABLED });
    case "enabled":
      return create(ThinkingSchema, { mode: ThinkingMode.ENABLED, budgetTokens: thinking.budget_tokens });
    case "adaptive":
      return create(ThinkingSchema, { mode: ThinkingMode.ADAPTIVE });
  }
}
