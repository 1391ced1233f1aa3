import type { EngineSequence, SampleOptions } from "../../native/engine-types.ts";
import { type GenerateEvent, StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { checkNever } from "../../shared/check-never.ts";
import type { OutputEvent, OutputParser, ToolCallStatus } from "../chat/types.ts";
import { generateEvent } from "./events.ts";
import { StopMatcher } from "./stop-matcher.ts";
import { TokenTextDecoder } from "./token-text-decoder.ts";
import { TurnCut } from "./turn-cut.ts";

export interface SampleTurnInput {
  sequence: EngineSequence;
  parser: OutputParser;
  sampling: SampleOptions;
  /** The prompt's last tokens, not yet in the KV: evaluated by the first decode (no extra one). */
  promptEnd?: readonly number[];
  /** The prompt ends inside an open thinking block (its first tokens are thinking). */
  thinkingOpen?: boolean;
  maxTokens: number;
  stopSequences: readonly string[];
  signal: AbortSignal;
  tokenBytes: (token: number) => Uint8Array;
  isEndOfGeneration: (token: number) => boolean;
  /** Mint the ID of a tool call the model just made. */
  mintToolUseId: () => Promise<string>;
  /** Hosted tools the worker runs itself: their calls are not streamed as client tool calls. */
  serverTools?: { names: ReadonlySet<string>; mintId: () => Promise<string> } | undefined;
  /** Sign a finished thinking block. */
  signThinking: (thinking: string) => Promise<string>;
  /** Called once per sampled token (the turn's phase clock). */
  onToken?: () => void;
}

/** What the turn produced, for usage and for the worker's memory of the turn. */
export interface SampledTurn {
  stopReason: StopReason;
  stopSequence: string;
  outputTokens: number;
  /** Of those, the tokens sampled inside the model's thinking. */
  thinkingTokens: number;
  /** The sampled tokens (end-of-generation excluded), in order. */
  tokens: number[];
  /** Exact sampled text of the turn (after the generation prefix). */
  rawText: string;
  /** The text the client was shown (text deltas, stop sequence excluded). */
  visibleText: string;
  toolCalls: SampledToolCall[];
}

export interface SampledToolCall {
  id: string;
  name: string;
  raw: string;
  status: ToolCallStatus;
  /** The arguments object as sampled. */
  argumentsJson: string;
  /** A hosted tool's call (the worker runs it; no tool-call events were streamed for it). */
  server: boolean;
}

/**
 * Samples one assistant turn and turns it into protocol-neutral events: text and thinking deltas,
 * tool calls with minted IDs (start → argument deltas as the tokens arrive → end), and the stop
 * reason. Stop sequences apply to visible text only.
 */
export async function* sampleTurn(input: SampleTurnInput): AsyncGenerator<GenerateEvent, SampledTurn> {
  const decoder = new TokenTextDecoder(input.tokenBytes);
  const events = new TurnEvents(input);
  const turn = events.turn;
  const generator = input.sequence.generate({
    ...input.sampling,
    maxTokens: input.maxTokens,
    signal: input.signal,
    ...(input.promptEnd === undefined ? {} : { promptEnd: input.promptEnd }),
  });
  for await (const token of generator) {
    if (input.isEndOfGeneration(token)) {
      turn.stopReason = StopReason.END_TURN;
      break;
    }
    turn.outputTokens++;
    input.onToken?.();
    turn.tokens.push(token);
    const text = decoder.push(token);
    turn.rawText += text;
    const thinkingBefore = events.thinking;
    yield* events.translate(input.parser.push(text));
    if (thinkingBefore || events.thoughtThisToken) turn.thinkingTokens++;
    events.thoughtThisToken = false;
    if (events.stopMatched) break;
    if (input.signal.aborted) break;
  }
  // A turn the worker cut (a limit) ends as one stopped early and is recorded; a client that left cancels it.
  if (input.signal.aborted && !events.stopMatched)
    turn.stopReason = input.signal.reason instanceof TurnCut ? StopReason.MAX_TOKENS : StopReason.CANCELLED;
  if (!events.stopMatched) {
    const tail = decoder.finish();
    turn.rawText += tail;
    yield* events.translate([...input.parser.push(tail), ...input.parser.finish()]);
  }
  if (!events.stopMatched) yield* events.releaseHeldText();
  // A turn is a tool turn only when every call it made is complete: a call cut by max_tokens keeps
  // MAX_TOKENS, and one whose markup broke ends the turn as END_TURN (the client sees the call,
  // closed, but is not asked to run it).
  const allComplete = turn.toolCalls.every((c) => c.status === "complete");
  if (turn.stopReason === StopReason.END_TURN && turn.toolCalls.length > 0 && allComplete)
    turn.stopReason = StopReason.TOOL_USE;
  return turn;
}

/** The parser's output events of one turn, as GenerateEvents, accumulated into the sampled turn. */
class TurnEvents {
  readonly turn: SampledTurn = {
    stopReason: StopReason.MAX_TOKENS,
    stopSequence: "",
    outputTokens: 0,
    thinkingTokens: 0,
    tokens: [],
    rawText: "",
    visibleText: "",
    toolCalls: [],
  };
  /** A stop sequence matched: nothing after it is shown or parsed. */
  stopMatched = false;
  /** Inside the model's thinking (from the prompt's open block or its first thinking text to its end). */
  thinking: boolean;
  /** The token just parsed produced thinking (or its end). */
  thoughtThisToken = false;
  readonly #input: SampleTurnInput;
  readonly #stops: StopMatcher;
  #thinking = "";
  /** ID minted for each started call, by call index. */
  readonly #ids = new Map<number, string>();
  /** Indexes of started calls that are hosted-tool calls. */
  readonly #serverIndexes = new Set<number>();

  constructor(input: SampleTurnInput) {
    this.#input = input;
    this.#stops = new StopMatcher(input.stopSequences);
    this.thinking = input.thinkingOpen ?? false;
  }

  async *translate(events: OutputEvent[]): AsyncGenerator<GenerateEvent> {
    for (const event of events) {
      if (this.stopMatched) return;
      switch (event.type) {
        case "text":
          yield* this.#text(event.text);
          break;
        case "thinking":
          this.thinking = true;
          this.thoughtThisToken = true;
          this.#thinking += event.text;
          yield generateEvent({ case: "thinkingDelta", value: { text: event.text } });
          break;
        case "thinking_end":
          this.thinking = false;
          this.thoughtThisToken = true;
          yield generateEvent({
            case: "thinkingEnd",
            value: { signature: await this.#input.signThinking(this.#thinking) },
          });
          break;
        case "tool_call_start":
          yield* this.#toolCallStart(event.index, event.name);
          break;
        case "tool_call_args":
          if (!this.#serverIndexes.has(event.index))
            yield generateEvent({ case: "toolCallDelta", value: { index: event.index, argumentsJson: event.text } });
          break;
        case "tool_call_end":
          yield* this.#toolCallEnd(event);
          break;
        default:
          checkNever(event, "output event");
      }
    }
  }

  /** Show the text the stop matcher still holds back (it cannot begin a stop sequence any more). */
  async *releaseHeldText(): AsyncGenerator<GenerateEvent> {
    const held = this.#stops.finish();
    this.turn.visibleText += held;
    if (held) yield generateEvent({ case: "textDelta", value: { text: held } });
  }

  async *#text(text: string): AsyncGenerator<GenerateEvent> {
    const { emit, matched } = this.#stops.push(text);
    this.turn.visibleText += emit;
    if (emit) yield generateEvent({ case: "textDelta", value: { text: emit } });
    if (matched !== undefined) {
      this.turn.stopReason = StopReason.STOP_SEQUENCE;
      this.turn.stopSequence = matched;
      this.stopMatched = true;
    }
  }

  async *#toolCallStart(index: number, name: string): AsyncGenerator<GenerateEvent> {
    yield* this.releaseHeldText();
    const id = await this.#mint(name);
    this.#ids.set(index, id);
    if (this.#isServer(name)) this.#serverIndexes.add(index);
    else yield generateEvent({ case: "toolCallStart", value: { index, id, name } });
  }

  async *#toolCallEnd(event: Extract<OutputEvent, { type: "tool_call_end" }>): AsyncGenerator<GenerateEvent> {
    const id = this.#ids.get(event.index) ?? (await this.#mint(event.name));
    const server = this.#isServer(event.name);
    this.turn.toolCalls.push({
      id,
      name: event.name,
      raw: event.raw,
      status: event.status,
      argumentsJson: event.argumentsJson,
      server,
    });
    if (!server) yield generateEvent({ case: "toolCallEnd", value: { index: event.index } });
  }

  #isServer(name: string): boolean {
    return this.#input.serverTools?.names.has(name) === true;
  }

  #mint(name: string): Promise<string> {
    const serverTools = this.#input.serverTools;
    return this.#isServer(name) && serverTools ? serverTools.mintId() : this.#input.mintToolUseId();
  }
}
