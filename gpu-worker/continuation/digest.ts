import { createHash } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import {
  type ContentBlock,
  type Conversation,
  type Message,
  MessageSchema,
  Role,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";

/**
 * Cheap fingerprints that let the live-ID fast path check that a request still agrees with the
 * history the KV holds, without re-rendering or re-tokenizing it.
 */

/** System prompt + tool definitions: what the prompt header is made of. */
export function headerDigest(conversation: Conversation): string {
  const hash = createHash("sha256");
  for (const block of conversation.system) hash.update(`S${block.length}:${block}`);
  for (const tool of conversation.tools) {
    hash.update(`T${tool.name}\u0000${tool.description}\u0000${tool.inputSchemaJson}`);
  }
  return hash.digest("hex");
}

/**
 * One message's identity. User, system and tool-result content is compared exactly; an assistant
 * turn is identified by the IDs of its tool calls (its representation may differ: thinking
 * stripped, JSON re-spaced or reordered), or by its visible text when it made no calls.
 */
export function messageDigest(message: Message): string {
  const hash = createHash("sha256");
  hash.update(`R${message.role}`);
  if (message.role === Role.ASSISTANT) {
    const ids = toolUseIds(message);
    if (ids.length > 0) hash.update(`I${ids.join(",")}`);
    else hash.update(`V${visibleText(message)}`);
    return hash.digest("hex");
  }
  for (const { block } of message.content) {
    switch (block.case) {
      case "text":
        hash.update(`t${block.value.text.length}:${block.value.text}`);
        break;
      case "toolResult":
        hash.update(`r${block.value.toolUseId}\u0000${block.value.isError ? 1 : 0}\u0000${block.value.content}`);
        break;
      case "opaque":
        hash.update(`o${block.value.type}\u0000${block.value.json}`);
        break;
      case "thinking":
        hash.update(`k${block.value.thinking}`);
        break;
      case "toolUse":
        hash.update(`u${block.value.id}`);
        break;
      case "serverToolUse":
        hash.update(`s${block.value.id}\u0000${block.value.name}\u0000${block.value.inputJson}`);
        break;
      case "serverToolResult":
        hash.update(
          `S${block.value.toolUseId}\u0000${block.value.type}\u0000${block.value.isError ? 1 : 0}\u0000${block.value.text}`,
        );
        break;
      case undefined:
        break;
    }
  }
  return hash.digest("hex");
}

export function toolUseIds(message: Message): string[] {
  const ids: string[] = [];
  for (const { block } of message.content) if (block.case === "toolUse") ids.push(block.value.id);
  return ids;
}

export function toolResultIds(message: Message): string[] {
  const ids: string[] = [];
  for (const { block } of message.content) if (block.case === "toolResult") ids.push(block.value.toolUseId);
  return ids;
}

/** The text blocks of a message, joined: what a client saw of an assistant turn. */
export function visibleText(message: Message): string {
  let text = "";
  for (const { block } of message.content) if (block.case === "text") text += block.value.text;
  return text;
}

export function sameIdSet(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length || a.length === 0) return false;
  const set = new Set(a);
  return set.size === a.length && b.every((id) => set.has(id));
}

/** Blocks exactly as the client sent them (their proto encoding): what a continued turn's raw starts with. */
export function blocksDigest(blocks: readonly ContentBlock[]): string {
  const bytes = toBinary(MessageSchema, create(MessageSchema, { role: Role.ASSISTANT, content: [...blocks] }));
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * The digest of a trailing assistant message a turn continues when it holds blocks Frontier did not
 * make (a foreign run the turn's raw bytes then start with); undefined otherwise.
 */
/**
 * The identity of the history an assistant turn follows, from the digests of the messages before it
 * (`messageDigest`, so Frontier's own representation differences in earlier turns do not count).
 */
export function historyDigest(messageDigests: readonly string[]): string {
  return createHash("sha256").update(messageDigests.join(",")).digest("base64url");
}

/**
 * How many of a request's messages come before the turn it generates: all of them, or all but a
 * trailing assistant message, which the turn continues (its replay is that message, in that place).
 */
export function messagesBeforeTurn(messages: readonly Message[]): number {
  return messages.at(-1)?.role === Role.ASSISTANT ? messages.length - 1 : messages.length;
}

/** `historyDigest` of the messages before each index of one conversation, each message digested once, on demand. */
export class HistoryDigests {
  readonly #messages: readonly Message[];
  readonly #digests: string[] = [];

  constructor(messages: readonly Message[]) {
    this.#messages = messages;
  }

  before(index: number): string {
    for (let i = this.#digests.length; i < index; i++) this.#digests.push(messageDigest(this.#messages[i] as Message));
    return historyDigest(this.#digests.slice(0, index));
  }
}

export function continuedBlocksDigest(messages: readonly Message[]): string | undefined {
  const last = messages.at(-1);
  if (last?.role !== Role.ASSISTANT || !last.content.some(isForeignBlock)) return undefined;
  return blocksDigest(last.content);
}

/** Blocks Frontier did not sample (server tool exchanges, opaque, foreign thinking): never in a turn's raw bytes. */
export function isForeignBlock(block: ContentBlock): boolean {
  const kind = block.block.case;
  return kind === "serverToolUse" || kind === "serverToolResult" || kind === "opaque";
}
