/**
 * A validated Gemini request → the protocol-neutral worker turn. `systemInstruction` is the system
 * prompt; a model content is one assistant turn (thoughts, text, calls in their order); adjacent user
 * contents are one user turn, so the functionResponses that answer one model turn arrive together,
 * as the continuation ladder expects. A thought is Frontier's own thinking only when its signature
 * verified; another's is kept as context (an opaque block), never taken for the model's reasoning.
 * A functionResponse of `{output}` or `{error}` (Gemini's advice, what Gemini CLI sends) renders as
 * that text; any other response object as its JSON.
 */
import { create } from "@bufbuild/protobuf";
import {
  type ContentBlock,
  ContentBlockSchema,
  type Conversation,
  ConversationSchema,
  type Message,
  MessageSchema,
  type ResponseFormat,
  ResponseFormatSchema,
  ResponseFormatType,
  Role,
  type SamplingParams,
  SamplingParamsSchema,
  ThinkingMode,
  ThinkingSchema,
  type ToolChoice,
  ToolChoiceMode,
  ToolChoiceSchema,
  ToolDefinitionSchema,
} from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { TurnIdKinds, WorkerTurn } from "../../../worker/generate-request.ts";
import type { GeminiPart, GeminiRequest, GeminiThinking } from "./types.ts";

/** Gemini answers carry a `responseId` (`msg_…` here) and functionCall `id`s (`call_…`), both self-routing. */
export const GEMINI_ID_KINDS: TurnIdKinds = { message: "msg", toolCall: "call", serverToolCall: "call" };

export function toGeminiWorkerTurn(request: GeminiRequest): WorkerTurn {
  return {
    idKinds: GEMINI_ID_KINDS,
    conversation: toGeminiConversation(request),
    sampling: toGeminiSampling(request),
    responseFormat: toGeminiResponseFormat(request),
  };
}

export function toGeminiConversation(request: GeminiRequest): Conversation {
  const messages: Message[] = [];
  for (const content of request.contents) {
    const role = content.role === "model" ? Role.ASSISTANT : Role.USER;
    const last = messages.at(-1);
    const target = last?.role === Role.USER && role === Role.USER ? last : create(MessageSchema, { role });
    if (target !== last) messages.push(target);
    target.content.push(...content.parts.map(blockOf));
    if (role === Role.ASSISTANT && target.content.length === 0) target.content.push(textBlock(""));
  }
  return create(ConversationSchema, {
    system: request.system,
    messages,
    tools: request.functions.map((fn) =>
      create(ToolDefinitionSchema, {
        name: fn.name,
        description: fn.description,
        inputSchemaJson: JSON.stringify(fn.parameters),
      }),
    ),
    toolChoice: toToolChoice(request),
    thinking: toThinking(request.generation.thinking),
  });
}

export function toGeminiSampling(request: GeminiRequest): SamplingParams {
  const g = request.generation;
  return create(SamplingParamsSchema, {
    maxTokens: g.maxOutputTokens ?? 0,
    temperature: g.temperature,
    topP: g.topP,
    topK: g.topK,
    seed: g.seed === undefined ? undefined : BigInt.asUintN(64, BigInt(g.seed)),
    stopSequences: g.stopSequences,
  });
}

/** JSON output: any JSON object without a schema, else a value valid under it (grammar on the worker). */
export function toGeminiResponseFormat(request: GeminiRequest): ResponseFormat | undefined {
  const answer = request.generation.answer;
  if (answer.type === "text") return undefined;
  if (answer.schema === undefined) {
    return create(ResponseFormatSchema, { type: ResponseFormatType.JSON_OBJECT, field: answer.field });
  }
  return create(ResponseFormatSchema, {
    type: ResponseFormatType.JSON_SCHEMA,
    schemaJson: JSON.stringify(answer.schema),
    name: "response",
    field: answer.field,
  });
}

function blockOf(part: GeminiPart): ContentBlock {
  switch (part.kind) {
    case "text":
      return textBlock(part.text);
    case "thought":
      if (part.own && part.signature !== undefined) {
        return create(ContentBlockSchema, {
          block: { case: "thinking", value: { thinking: part.text, signature: part.signature } },
        });
      }
      return create(ContentBlockSchema, {
        block: {
          case: "opaque",
          value: {
            type: "thought",
            json: JSON.stringify({ text: part.text, thought: true, thoughtSignature: part.signature }),
            text: `[thinking from another model] ${part.text}`,
            anchor: part.signature ?? "",
          },
        },
      });
    case "functionCall":
      return create(ContentBlockSchema, {
        block: { case: "toolUse", value: { id: part.id, name: part.name, inputJson: JSON.stringify(part.args) } },
      });
    case "functionResponse": {
      const { content, isError } = responseText(part.response);
      return create(ContentBlockSchema, {
        block: { case: "toolResult", value: { toolUseId: part.id, content, isError } },
      });
    }
  }
}

function responseText(response: Record<string, unknown>): { content: string; isError: boolean } {
  const keys = Object.keys(response);
  if (keys.length === 1 && typeof response.output === "string") return { content: response.output, isError: false };
  if (keys.length === 1 && typeof response.error === "string") return { content: response.error, isError: true };
  return { content: JSON.stringify(response), isError: false };
}

function textBlock(text: string): ContentBlock {
  return create(ContentBlockSchema, { block: { case: "text", value: { text } } });
}

/** ANY with one allowed name forces that function; VALIDATED is AUTO here (every call is schema-valid). */
function toToolChoice(request: GeminiRequest): ToolChoice {
  const { mode, allowedFunctionNames } = request.toolConfig;
  switch (mode) {
    case "AUTO":
    case "VALIDATED":
      return create(ToolChoiceSchema, { mode: ToolChoiceMode.AUTO });
    case "NONE":
      return create(ToolChoiceSchema, { mode: ToolChoiceMode.NONE });
    case "ANY": {
      const [only] = allowedFunctionNames;
      if (allowedFunctionNames.length === 1 && only !== undefined && request.functions.length > 1) {
        return create(ToolChoiceSchema, { mode: ToolChoiceMode.TOOL, name: only });
      }
      return create(ToolChoiceSchema, { mode: ToolChoiceMode.ANY });
    }
  }
}

function toThinking(thinking: GeminiThinking) {
  switch (thinking.mode) {
    case "off":
      return create(ThinkingSchema, { mode: ThinkingMode.DISABLED });
    case "dynamic":
      return create(ThinkingSchema, { mode: ThinkingMode.ADAPTIVE });
    case "budget":
      return create(ThinkingSchema, { mode: ThinkingMode.ENABLED, budgetTokens: thinking.tokens });
  }
}
