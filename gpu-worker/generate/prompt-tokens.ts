/** A prompt's segments → tokens (control tokens parsed only in template segments), and tokens → text. */
import { type Engine, type Token, TokenizerInputError } from "../../native/engine-types.ts";
import type { PromptSegment } from "../chat/types.ts";
import { WorkerFailure } from "../errors.ts";

/**
 * Template control tokens are tokenized with control-token parsing on; all other text with it off.
 * A replayed plain segment that is a remembered sampled span gets the tokens the model sampled. Long
 * texts are tokenized on the engine's tokenizer thread, so other sessions' turns go on meanwhile.
 */
export async function tokenizeSegments(
  engine: Engine,
  segments: readonly PromptSegment[],
  sampledSpan: (text: string) => readonly Token[] | undefined = () => undefined,
): Promise<Token[]> {
  checkPromptBytes(engine, segments);
  const tokens: Token[] = [];
  for (const segment of segments) {
    if (segment.text.length === 0) continue;
    const known = segment.replayed ? sampledSpan(segment.text) : undefined;
    for (const t of known ?? (await tokenizeText(engine, segment.text, segment.special))) tokens.push(t);
  }
  return tokens;
}

/** A tokenizer refusal (a run its pre-tokenizer cannot take) is the client's 400, not the worker's 500. */
async function tokenizeText(engine: Engine, text: string, special: boolean): Promise<Token[]> {
  try {
    return await engine.tokenizeAsync(text, { special });
  } catch (error) {
    if (error instanceof TokenizerInputError) throw WorkerFailure.invalid(error.message, "messages");
    throw error;
  }
}

/**
 * Refuse, before tokenizing, a prompt whose bytes cannot fit the context however well they
 * tokenize: tokenizing 30 MB takes the event loop for half a minute.
 */
function checkPromptBytes(engine: Engine, segments: readonly PromptSegment[]): void {
  let bytes = 0;
  for (const segment of segments) if (!segment.special) bytes += Buffer.byteLength(segment.text, "utf8");
  const fewestTokens = Math.ceil(bytes / engine.maxTokenBytes);
  if (fewestTokens >= engine.options.contextSize) {
    throw WorkerFailure.contextTooLong(
      `prompt is ${bytes} bytes, at least ${fewestTokens} tokens; this worker's context holds ${engine.options.contextSize}`,
    );
  }
}

export function decodeTokens(engine: Engine, tokens: readonly Token[]): string {
  const decoder = new TextDecoder("utf-8", { fatal: false });
  let text = "";
  for (const token of tokens) text += decoder.decode(engine.tokenBytes(token), { stream: true });
  return text + decoder.decode();
}
