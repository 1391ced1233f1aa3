/**
 * Responses input items → the protocol-neutral proto conversation. Consecutive assistant-side items
 * (reasoning, assistant message, function_call) become one assistant turn; consecutive user-side
 * items (user messages, function_call_output) one user turn; `instructions` and the system and
 * developer messages before the first turn become the system prompt, later ones system messages.
 * `additional_tools` before the first turn join the header's tools, later ones render in place as a
 * system message and are callable from there (additional-tools.ts); `configuration_update` items
 * render nothing (configuration-updates.ts).
 */
import { create } from "@bufbuild/protobuf";
import {
  type ContentBlock,
  ContentBlockSchema,
  type Conversation,
  ConversationSchema,
  type GenerateRequest,
  type Message,
  MessageSchema,
  Role,
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
import { toResponseFormat } from "../../openai/response-format.ts";
import { addedToolsText } from "./additional-tools.ts";
import type {
  AdditionalToolsItem,
  ConfigurationUpdateItem,
  FunctionTool,
  InputItem,
  ResponsesRequest,
  ToolChoice,
} from "./types.ts";
import { foreignReasoningBlock, webSearchCallBlocks } from "./web-search-blocks.ts";

/** Responses and their function calls: `resp_…` / `call_…`. */
export const RESPONSES_ID_KINDS: TurnIdKinds = { message: "resp", toolCall: "call", serverToolCall: "ws" };

/** Thinking budget per `reasoning.effort`; `none`/`minimal` (or no effort) turn thinking off. */
export const THINKING_BUDGETS: Record<string, number> = { low: 1024, medium: 4096, high: 16_384, xhigh: 32_768 };

/** `items` is the whole conversation: the stored history of previous responses plus this input. */
export function toWorkerTurn(request: ResponsesRequest, items: readonly InputItem[]): WorkerTurn {
  const sampling = create(SamplingParamsSchema, {
    maxTokens: request.max_output_tokens ?? 0,
    temperature: request.temperature,
    topP: request.top_p,
  });
  return {
    idKinds: RESPONSES_ID_KINDS,
    conversation: toConversation(request, items),
    sampling,
    responseFormat: toResponseFormat(request.text_format, "text.format.schema"),
  };
}

/** The whole GenerateRequest for a known session (tests and benches; the pipeline joins per attempt). */
export function toGenerateRequest(
  request: ResponsesRequest,
  items: readonly InputItem[],
  target: SessionTarget,
): GenerateRequest {
  return generateRequestFor(target, toWorkerTurn(request, items));
}

/** The items that render as content (not tool declarations, not configuration). */
type ContentItem = Exclude<InputItem, AdditionalToolsItem | ConfigurationUpdateItem>;

export function toConversation(request: ResponsesRequest, items: readonly InputItem[]): Conversation {
  const system = request.instructions ? [request.instructions] : [];
  const messages: Message[] = [];
  const header = [...request.tools];
  const referenced: FunctionTool[] = [];
  const callable = new Set(header.map((tool) => tool.name));
  for (const item of items) {
    if (item.type === "configuration_update") continue;
    if (item.type === "additional_tools") {
      const fresh = item.tools.filter((tool) => !callable.has(tool.name));
      for (const tool of fresh) callable.add(tool.name);
      if (messages.length === 0) header.push(...fresh);
      else if (item.tools.length > 0) {
        referenced.push(...fresh);
        messages.push(create(MessageSchema, { role: Role.SYSTEM, content: [textBlock(addedToolsText(item))] }));
      }
      continue;
    }
    if (item.type === "message" && (item.role === "system" || item.role === "developer")) {
      if (messages.length === 0) system.push(item.text);
      else messages.push(create(MessageSchema, { role: Role.SYSTEM, content: [textBlock(item.text)] }));
      continue;
    }
    const role = sideOf(item);
    const last = messages.at(-1);
    const target = last?.role === role ? last : create(MessageSchema, { role });
    if (target !== last) messages.push(target);
    const blocks = toBlocks(item);
    const [use, result] = blocks;
    if (item.type === "web_search_call" && item.result?.sameStep && use && result) {
      // Calls of one step render together, then their results (as the live step put them in the KV).
      target.content.splice(trailingResultsStart(target.content), 0, use);
      target.content.push(result);
    } else target.content.push(...blocks);
  }
  const effort = request.reasoning_effort;
  const budget = effort === undefined ? undefined : THINKING_BUDGETS[effort];
  return create(ConversationSchema, {
    system,
    messages,
    tools: header.map(toToolDefinition),
    referencedTools: referenced.map(toToolDefinition),
    toolChoice: toToolChoice(request.tool_choice, request.parallel_tool_calls),
    serverTools: request.server_tools,
    thinking:
      budget === undefined
        ? create(ThinkingSchema, { mode: ThinkingMode.DISABLED })
        : create(ThinkingSchema, { mode: ThinkingMode.ENABLED, budgetTokens: budget }),
  });
}

function toToolDefinition(tool: FunctionTool) {
  return create(ToolDefinitionSchema, {
    name: tool.name,
    description: tool.description ?? "",
    inputSchemaJson: JSON.stringify(tool.parameters),
    inputGrammar: tool.origin.kind === "custom" ? tool.origin.grammar : undefined,
  });
}

function sideOf(item: ContentItem): Role {
  switch (item.type) {
    case "message":
      return item.role === "assistant" ? Role.ASSISTANT : Role.USER;
    case "function_call_output":
      return Role.USER;
    case "function_call":
    case "reasoning":
    case "web_search_call":
      return Role.ASSISTANT;
  }
}

/** Where the run of hosted-tool results that ends the blocks starts. */
function trailingResultsStart(blocks: readonly ContentBlock[]): number {
  let i = blocks.length;
  while (i > 0 && blocks[i - 1]?.block.case === "serverToolResult") i--;
  return i;
}

function toBlocks(item: ContentItem): ContentBlock[] {
  switch (item.type) {
    case "message":
      return [textBlock(item.text)];
    case "reasoning":
      // Not Frontier's reasoning: context, never the model's thinking, and never its ciphertext.
      if (item.sealed === "foreign") return [foreignReasoningBlock(item)];
      return [create(ContentBlockSchema, { block: { case: "thinking", value: { thinking: item.text } } })];
    case "function_call":
      return [
        create(ContentBlockSchema, {
          block: { case: "toolUse", value: { id: item.call_id, name: item.name, inputJson: item.arguments } },
        }),
      ];
    case "function_call_output":
      return [
        create(ContentBlockSchema, {
          block: { case: "toolResult", value: { toolUseId: item.call_id, content: item.output } },
        }),
      ];
    case "web_search_call":
      return webSearchCallBlocks(item);
  }
}

function textBlock(text: string): ContentBlock {
  return create(ContentBlockSchema, { block: { case: "text", value: { text } } });
}

function toToolChoice(choice: ToolChoice, parallel: boolean) {
  const disableParallelToolUse = !parallel;
  if (typeof choice === "object") {
    return create(ToolChoiceSchema, { mode: ToolChoiceMode.TOOL, name: choice.name, disableParallelToolUse });
  }
  const mode = { auto: ToolChoiceMode.AUTO, required: ToolChoiceMode.ANY, none: ToolChoiceMode.NONE }[choice];
  return create(ToolChoiceSchema, { mode, disableParallelToolUse });
}
