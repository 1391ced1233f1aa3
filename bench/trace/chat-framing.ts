/**
 * The chat framing Frontier's worker prefills around a replayed trace turn, as token ids, so that
 * llama-server can be sent the same token sequence (`--llama-server-prompt framed`).
 *
 * Frontier gets each turn as a Responses request: the edge makes it a conversation of user text (no
 * system, no tools, thinking off: no `reasoning`), the worker renders it with the model's chat
 * format (gpu-worker/chat) and tokenizes the rendered segments with its own tokenizer
 * (native/tokenizer: control tokens parsed only in template segments). The framing here is taken
 * from exactly that rendering and tokenizer, never re-spelled: a first turn is
 * `open + content + close`, and a next turn continues its parent's context (prompt + the tokens the
 * parent generated, which the worker's live KV holds) with `between + added content + close`.
 */
import { create } from "@bufbuild/protobuf";
import { selectChatFormat } from "../../gpu-worker/chat/select-format.ts";
import type { ChatFormat } from "../../gpu-worker/chat/types.ts";
import { inspectModel } from "../../native/engine.ts";
import { validateGguf } from "../../native/model/gguf-validate.ts";
import { TokenizerWorker } from "../../native/tokenizer/tokenizer-worker.ts";
import {
  ContentBlockSchema,
  type Conversation,
  ConversationSchema,
  MessageSchema,
  Role,
  ThinkingMode,
  ThinkingSchema,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { tokensToText } from "./block-tokens.ts";

/** How the trace replay prompts llama-server: raw trace token ids, or framed as Frontier's worker renders them. */
export type PeerPromptMode = "raw" | "framed";
export const PEER_PROMPT_MODES: readonly PeerPromptMode[] = ["framed", "raw"];

export function isPeerPromptMode(value: string): value is PeerPromptMode {
  return (PEER_PROMPT_MODES as readonly string[]).includes(value);
}

export interface ChatFraming {
  /** The chat format that rendered it (e.g. `chatml`). */
  format: string;
  /** Before a first turn's user text: the conversation header and the user-turn header. */
  open: readonly number[];
  /** After a turn's user text: the end of the user turn and the assistant generation prefix. */
  close: readonly number[];
  /** After the previous assistant output, before the next user text: its end of turn, the user-turn header. */
  between: readonly number[];
  /** End-of-generation token ids: a sampled one ends the output and is not part of the next context. */
  endOfGeneration: readonly number[];
}

/** Tokenizes one prompt segment as the worker does (control tokens parsed only when `special`). */
type SegmentTokenizer = (text: string, special: boolean) => Promise<readonly number[]>;

const textBlock = (text: string) => create(ContentBlockSchema, { block: { case: "text", value: { text } } });

/** A conversation of user texts and assistant outputs as the edge builds it from Responses input items. */
function responsesConversation(turns: readonly { role: "user" | "assistant"; text: string }[]): Conversation {
  return create(ConversationSchema, {
    messages: turns.map((t) =>
      create(MessageSchema, { role: t.role === "user" ? Role.USER : Role.ASSISTANT, content: [textBlock(t.text)] }),
    ),
    thinking: create(ThinkingSchema, { mode: ThinkingMode.DISABLED }),
  });
}

/** The conversation rendered by `format` and tokenized segment by segment, from segment `from` on. */
async function renderTokens(
  format: ChatFormat,
  conversation: Conversation,
  tokenize: SegmentTokenizer,
  from: (segments: readonly { replayed?: boolean }[]) => number = () => 0,
): Promise<number[]> {
  // Assistant turns render as remembered ones (the worker's exact-turn memory: a `replayed` segment);
  // what they hold does not matter here, only the segments after them are taken.
  const { segments } = format.render(conversation, {
    rawAssistantTurn: (message) =>
      message.content.map((b) => (b.block.case === "text" ? b.block.value.text : "")).join(""),
  });
  const tokens: number[] = [];
  for (const segment of segments.slice(from(segments))) {
    if (segment.text.length > 0) tokens.push(...(await tokenize(segment.text, segment.special)));
  }
  return tokens;
}

/** Where `needle` occurs in `tokens`, required exactly once. */
function splitAround(tokens: readonly number[], needle: readonly number[], what: string): [number[], number[]] {
  const at: number[] = [];
  for (let i = 0; i + needle.length <= tokens.length; i++) {
    if (needle.every((t, j) => tokens[i + j] === t)) at.push(i);
  }
  if (at.length !== 1) {
    throw new Error(`${what}: the user text's tokens occur ${at.length} times in the rendered prompt, not once`);
  }
  const i = at[0] as number;
  return [tokens.slice(0, i), tokens.slice(i + needle.length)];
}

/**
 * The framing of `format` under `tokenize`. `sample` is user text over the 1:1 alphabet (token ids
 * = char codes): it must tokenize to itself inside the rendering, else the framing cannot be cut out.
 */
export async function chatFraming(
  format: ChatFormat,
  tokenize: SegmentTokenizer,
  sample: readonly number[],
): Promise<ChatFraming> {
  const text = tokensToText(sample);
  const first = await renderTokens(format, responsesConversation([{ role: "user", text }]), tokenize);
  const [open, close] = splitAround(first, sample, `${format.name} first turn`);
  // The next turn after the remembered output (the segments after the replayed one).
  const afterOutput = await renderTokens(
    format,
    responsesConversation([
      { role: "user", text },
      { role: "assistant", text },
      { role: "user", text },
    ]),
    tokenize,
    (segments) => segments.findLastIndex((s) => s.replayed === true) + 1,
  );
  const [between, nextClose] = splitAround(afterOutput, sample, `${format.name} next turn`);
  if (nextClose.join(",") !== close.join(",")) {
    throw new Error(`${format.name}: a next turn closes differently from a first turn`);
  }
  const endOfGeneration: number[] = [];
  for (const eog of format.endOfGenerationTexts) {
    const ids = await tokenize(eog, true);
    if (ids.length === 1) endOfGeneration.push(ids[0] as number);
  }
  return { format: format.name, open, close, between, endOfGeneration };
}

/** A first turn's prompt: the user text framed. */
export function framedFirstTurn(framing: ChatFraming, content: readonly number[]): number[] {
  return [...framing.open, ...content, ...framing.close];
}

/** A next turn's prompt: the parent's context (its prompt + its output), then the added user text framed. */
export function framedNextTurn(framing: ChatFraming, context: readonly number[], added: readonly number[]): number[] {
  return [...context, ...framing.between, ...added, ...framing.close];
}

/** A sampled output as the next context holds it: a closing end-of-generation token is the framing's. */
export function outputInContext(framing: ChatFraming, output: readonly number[]): readonly number[] {
  const last = output.at(-1);
  return last !== undefined && framing.endOfGeneration.includes(last) ? output.slice(0, -1) : output;
}

/**
 * The framing of the GGUF at `modelPath`, with the worker's own pieces: its chat format chosen from
 * the model's metadata as the worker chooses it (FRONTIER_CHAT_FORMAT=auto) and its tokenizer (the
 * vocabulary-only tokenizer thread the engine runs).
 */
export async function modelChatFraming(modelPath: string, sample: readonly number[]): Promise<ChatFraming> {
  const { format } = selectChatFormat("auto", await inspectModel(modelPath));
  const { tokens, tokenTypes, tokenizerPre } = await validateGguf(modelPath);
  const tokenizer = new TokenizerWorker(modelPath, { tokens, tokenTypes, tokenizerPre });
  try {
    return await chatFraming(format, (text, special) => tokenizer.tokenize(text, special), sample);
  } finally {
    await tokenizer.dispose();
  }
}
