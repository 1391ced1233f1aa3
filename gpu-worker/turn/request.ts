/** What a turn request must be before it runs: its ID kinds, its messages, its grammar, its step conversations. */
import { create } from "@bufbuild/protobuf";
import type { Engine } from "../../native/engine-types.ts";
import {
  type ContentBlock,
  type Conversation,
  ConversationSchema,
  type GenerateRequest,
  MessageSchema,
  type ResponseFormat,
  Role,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { type IdKind, isIdKind } from "../../shared/ids.ts";
import { bindControlTokens } from "../chat/grammar/grammar-control-tokens.ts";
import { SchemaGrammarError } from "../chat/grammar/json-schema-grammar.ts";
import type { ChatFormat } from "../chat/types.ts";
import type { WorkerConfig } from "../config.ts";
import { WorkerFailure } from "../errors.ts";
import { grammarForTurn } from "../generate/sampling-policy.ts";

/** The kinds of the IDs this turn mints, as the edge named them for its protocol. */
export function idKinds(request: GenerateRequest): { message: IdKind; toolCall: IdKind; serverToolCall: IdKind } {
  const message = request.idKinds?.message ?? "";
  const toolCall = request.idKinds?.toolCall ?? "";
  const serverToolCall = request.idKinds?.serverToolCall || toolCall;
  if (!isIdKind(message) || !isIdKind(toolCall) || !isIdKind(serverToolCall)) {
    throw WorkerFailure.invalid(`id_kinds must name ID kinds, got "${message}"/"${toolCall}"`, "id_kinds");
  }
  return { message, toolCall, serverToolCall };
}

/** The request's conversation plus the client's view of this turn's hosted-tool steps so far. */
export function withStepBlocks(conversation: Conversation, blocks: readonly ContentBlock[]): Conversation {
  if (blocks.length === 0) return conversation;
  return create(ConversationSchema, {
    ...conversation,
    messages: [...conversation.messages, create(MessageSchema, { role: Role.ASSISTANT, content: [...blocks] })],
  });
}

/** The turn's grammar, its literals that spell the format's control tokens bound to those tokens. */
export function turnGrammar(
  engine: Engine,
  format: ChatFormat,
  conversation: Conversation,
  thinkingOpen: boolean,
  config: WorkerConfig,
  responseFormat: ResponseFormat | undefined,
): string | undefined {
  try {
    const grammar = grammarForTurn(format, conversation, thinkingOpen, config.testPolicy, responseFormat);
    return grammar === undefined
      ? undefined
      : bindControlTokens(grammar, (t) => format.splitTurn(t), controlTokenId(engine));
  } catch (error) {
    if (error instanceof SchemaGrammarError) throw WorkerFailure.invalid(error.message, error.param);
    throw error;
  }
}

/** The id of the control token spelled `text`, if it is one token. */
function controlTokenId(engine: Engine): (text: string) => number | undefined {
  return (text) => {
    const tokens = engine.tokenize(text, { special: true });
    return tokens.length === 1 ? tokens[0] : undefined;
  };
}

/** After the expansion: a paused turn sent back ends on its results; anything else ending on the assistant is refused. */
export function checkLastMessage(conversation: Conversation): void {
  if (conversation.messages.at(-1)?.role === Role.ASSISTANT) {
    throw WorkerFailure.invalid(
      "messages: the last message must be a user message (assistant prefill is not supported yet)",
      "messages",
    );
  }
}

export function checkConversation(request: GenerateRequest): Conversation {
  const conversation = request.conversation;
  if (!conversation || conversation.messages.length === 0) {
    throw WorkerFailure.invalid("messages: at least one message is required", "messages");
  }
  const last = conversation.messages.at(-1);
  // A paused turn sent back ends on a hosted tool's result: its next step is what the client asks for.
  const resumesHostedStep = last?.content.at(-1)?.block.case === "serverToolResult";
  if (last?.role === Role.ASSISTANT && !resumesHostedStep) {
    throw WorkerFailure.invalid(
      "messages: the last message must be a user message (assistant prefill is not supported yet)",
      "messages",
    );
  }
  return conversation;
}
