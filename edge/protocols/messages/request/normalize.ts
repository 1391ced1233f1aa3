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
import { splitDeferred } from "./deferred-tools.ts";
import { foreignThinkingBlock, serverToolBlock } from "./server-tool-blocks.ts";
import type {
  InputBlock,
  Role as InputRole,
  MessagesRequest,
  ThinkingSpec,
  ToolChoiceSpec,
  ToolResultPart,
  ToolSpec,
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

/**
 * Deferred tools (`defer_loading`) stay out of `tools`, so the header and the prefix fingerprint never
 * see them; one a `tool_reference` loaded goes to `referenced_tools` (callable) and its definition
 * renders inside the tool result that references it. Loading a tool appends; the prefix is unchanged.
 */
export function toConversation(request: MessagesRequest): Conversation {
  const byName = new Map(request.tools.map((tool) => [tool.name, tool] as const));
  const { header, referenced } = splitDeferred(request.tools, request.messages);
  return create(ConversationSchema, {
    system: request.system,
    messages: request.messages.map((message) =>
      create(MessageSchema, {
        role: toRole(message.role),
        content: message.content.map((block) => toContentBlock(block, byName)),
      }),
    ),
    tools: header.map(toToolDefinition),
    referencedTools: referenced.map(toToolDefinition),
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

function toToolDefinition(tool: ToolSpec) {
  return create(ToolDefinitionSchema, {
    name: tool.name,
    description: tool.description,
    inputSchemaJson: JSON.stringify(tool.input_schema),
  });
}

function toContentBlock(block: InputBlock, tools: ReadonlyMap<string, ToolSpec>): ContentBlock {
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
          value: {
            toolUseId: block.tool_use_id,
            content: flattenToolResult(block.content, tools),
            isError: block.is_error,
          },
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

/**
 * Text parts joined with "\n"; a `tool_reference` as the definition of the tool it loads (its name
 * alone for a hosted tool); other parts (images, documents...) as a visible placeholder.
 */
export function flattenToolResult(
  content: string | ToolResultPart[],
  tools: ReadonlyMap<string, ToolSpec> = new Map(),
): string {
  if (typeof content === "string") return content;
  return content.map((part) => partText(part, tools)).join("\n");
}

function partText(part: ToolResultPart, tools: ReadonlyMap<string, ToolSpec>): string {
  switch (part.type) {
    case "text":
      return part.text;
    case "tool_reference":
      return toolReferenceText(part.tool_name, tools.get(part.tool_name));
    case "other":
      return `[${part.kind} omitted]`;
  }
}

/** What a `tool_reference` renders as: the loaded tool's definition, as JSON. */
export function toolReferenceText(name: string, tool: ToolSpec | undefined): string {
  if (tool === undefined) return `Tool loaded: ${name}`;
  const definition = { name: tool.name, description: tool.description, input_schema: tool.input_schema };
  return `Tool loaded: ${JSON.stringify(definition)}`;
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
