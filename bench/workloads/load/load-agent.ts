/**
 * One load agent: a conversation of `turns` forced tool turns with tool time between them. Every turn
 * has a deadline (retries included) and is raced against it, so an agent never waits longer than
 * that, whatever the server or the SDK does: a turn past it fails as `deadline`. A turn the script
 * marks is aborted by the client at its first streamed event and re-sent once, as a user who pressed
 * Esc and asked again. A failed turn ends the conversation; its later turns are counted as not sent.
 */
import type { AgentTool } from "../agent-loop.ts";
import { ChatConversation } from "./clients/chat-conversation.ts";
import { MessagesConversation } from "./clients/messages-conversation.ts";
import { ResponsesConversation } from "./clients/responses-conversation.ts";
import { SocketConversation } from "./clients/socket-conversation.ts";
import { abortsTurn, finishOrder, taskText, toolOutput, toolPauseMs } from "./load-script.ts";
import type { LoadSettings } from "./load-settings.ts";
import {
  type ConversationSetup,
  type LoadConversation,
  type Protocol,
  type ToolCall,
  TurnFailure,
  type TurnInput,
  type TurnReply,
} from "./load-turn.ts";

export interface TurnRecord {
  wave: number;
  agent: string;
  protocol: Protocol;
  tenant: number;
  turn: number;
  /** When the turn's (last) request was sent, ms since the run started. */
  sentAtMs: number;
  outcome: "completed" | "failed";
  /** The failure's class (`deadline`, `HTTP 529`, `stream error`, …). */
  reason?: string;
  detail?: string;
  /** Send → first streamed output event, and → the end of the stream (SDK retries included). */
  ttftMs: number;
  totalMs: number;
  promptTokens: number;
  cachedTokens: number;
  outputTokens: number;
  calls: number;
  decision: string | undefined;
  /** Turns 2+: the previous turn's KV was reused whole (cached ≥ its prompt + output − 1). */
  suffixOnly: boolean | undefined;
  /** The client aborted this turn mid-stream once and re-sent it (this record is the re-sent one). */
  resent: boolean;
  /** Every HTTP status (or socket error status) this turn's requests received. */
  statuses: number[];
  /** Refusals that came inside a started stream (as the status they stand for), each retried. */
  refusedInStream: (429 | 529)[];
}

/** What the peer replays: each completed turn's input, the calls it made and its output tokens. */
export interface TranscriptStep {
  input: TurnInput;
  calls: ToolCall[];
  outputTokens: number;
  aborted: boolean;
}

export interface AgentRun {
  records: TurnRecord[];
  /** Turns never sent because an earlier turn failed. */
  notSent: number;
  steps: TranscriptStep[];
}

export interface AgentSpec {
  wave: number;
  name: string;
  protocol: Protocol;
  tenant: number;
  apiKey: string;
  system: string;
  tools: readonly AgentTool[];
}

function conversationFor(protocol: Protocol, setup: ConversationSetup): LoadConversation {
  switch (protocol) {
    case "messages":
      return new MessagesConversation(setup);
    case "responses-http":
      return new ResponsesConversation(setup);
    case "responses-ws":
      return new SocketConversation(setup);
    case "chat":
      return new ChatConversation(setup);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runAgent(
  spec: AgentSpec,
  edgeUrl: string,
  settings: LoadSettings,
  clock: () => number,
): Promise<AgentRun> {
  const conversation = conversationFor(spec.protocol, {
    edgeUrl,
    apiKey: spec.apiKey,
    system: spec.system,
    tools: spec.tools,
    maxTokens: settings.maxTokens,
    maxRetries: settings.maxRetries,
    hint: crypto.randomUUID(),
  });
  const run: AgentRun = { records: [], notSent: 0, steps: [] };
  let previous: TurnReply | undefined;
  try {
    for (let turn = 1; turn <= settings.turns; turn++) {
      if (turn > 1) await sleep(toolPauseMs(spec.name, turn - 1, settings.toolPauseMs));
      const input: TurnInput =
        previous === undefined
          ? { kind: "task", text: taskText(spec.name) }
          : resultsFor(spec.name, turn - 1, previous);
      const aborts = abortsTurn(spec.name, turn, settings.abortShare);
      const record = await timedTurn(conversation, input, spec, turn, aborts, settings, clock);
      if (record.outcome === "completed" && previous !== undefined) {
        record.suffixOnly = record.cachedTokens >= previous.promptTokens + previous.outputTokens - 1;
      }
      run.records.push(record);
      if (record.outcome === "failed" || record.reply === undefined) {
        run.notSent = settings.turns - turn;
        break;
      }
      run.steps.push({ input, calls: record.reply.calls, outputTokens: record.outputTokens, aborted: record.resent });
      previous = record.reply;
      delete record.reply;
      if (previous.calls.length === 0) {
        // Cut by max_tokens before a call was complete: nothing to answer, the conversation ends here.
        run.notSent = settings.turns - turn;
        break;
      }
    }
  } finally {
    conversation.close();
  }
  return run;
}

/** The results of the previous turn's calls, in the order the simulated tools finished. */
function resultsFor(agent: string, turn: number, previous: TurnReply): TurnInput {
  return {
    kind: "results",
    results: finishOrder(agent, turn, previous.calls.length).map((i) => ({
      call: previous.calls[i] as ToolCall,
      output: toolOutput(agent, turn, i),
    })),
  };
}

async function timedTurn(
  conversation: LoadConversation,
  input: TurnInput,
  spec: AgentSpec,
  turn: number,
  aborts: boolean,
  { turnDeadlineMs: deadlineMs, maxRetries }: LoadSettings,
  clock: () => number,
): Promise<TurnRecord & { reply?: TurnReply }> {
  const deadline = new AbortController();
  const expired = new Promise<never>((_, reject) => {
    const timer = setTimeout(() => {
      deadline.abort();
      reject(new TurnFailure("deadline", `no reply within ${deadlineMs / 1000} s (retries included)`));
    }, deadlineMs);
    deadline.signal.addEventListener("abort", () => clearTimeout(timer), { once: true });
  });
  expired.catch(() => {});
  const statuses: number[] = [];
  const refused: (429 | 529)[] = [];
  const base = {
    wave: spec.wave,
    agent: spec.name,
    protocol: spec.protocol,
    tenant: spec.tenant,
    turn,
    statuses,
    refusedInStream: refused,
  };
  let sentAt = clock();
  let firstAt = Number.NaN;
  let resent = false;
  // One controller per attempt, aborted by the deadline or by the client (no AbortSignal.any: Node
  // holds its signals weakly and fetch can lose them to garbage collection, nodejs/undici#4068).
  const attempt = (abortAtFirstEvent: boolean) => {
    const controller = new AbortController();
    const onDeadline = () => controller.abort();
    deadline.signal.addEventListener("abort", onDeadline, { once: true });
    const sent = conversation.send(input, {
      signal: controller.signal,
      onFirstEvent: () => {
        if (Number.isNaN(firstAt)) firstAt = clock();
        if (abortAtFirstEvent) controller.abort();
      },
      onStatus: (status) => statuses.push(status),
    });
    return {
      aborted: () => controller.signal.aborted && !deadline.signal.aborted,
      reply: Promise.race([sent, expired]).finally(() => deadline.signal.removeEventListener("abort", onDeadline)),
    };
  };
  // An in-stream refusal is retried like its status (the SDKs' backoff), at most `maxRetries` times.
  const backOff = async (error: unknown): Promise<undefined> => {
    if (!(error instanceof TurnFailure) || error.retryAs === undefined || refused.length >= maxRetries) throw error;
    refused.push(error.retryAs);
    const delayMs = Math.min(500 * 2 ** (refused.length - 1), 8000) * (1 - Math.random() * 0.25);
    await Promise.race([sleep(delayMs), expired]);
    firstAt = Number.NaN;
    return undefined;
  };
  try {
    let reply: TurnReply | undefined;
    if (aborts) {
      const first = attempt(true);
      reply = await first.reply.catch(async (error: unknown) => {
        if (!first.aborted()) return backOff(error);
        resent = true;
        await Promise.race([sleep(100), expired]);
        sentAt = clock();
        firstAt = Number.NaN;
        return undefined;
      });
    }
    while (reply === undefined) reply = await attempt(false).reply.catch(backOff);
    const done = clock();
    return {
      ...base,
      sentAtMs: sentAt,
      outcome: "completed",
      ttftMs: firstAt - sentAt,
      totalMs: done - sentAt,
      promptTokens: reply.promptTokens,
      cachedTokens: reply.cachedTokens,
      outputTokens: reply.outputTokens,
      calls: reply.calls.length,
      decision: reply.decision,
      suffixOnly: undefined,
      resent,
      reply,
    };
  } catch (error) {
    const failure = deadline.signal.aborted
      ? new TurnFailure("deadline", `no reply within ${deadlineMs / 1000} s (retries included)`)
      : error instanceof TurnFailure
        ? error
        : new TurnFailure("client error", String(error));
    return {
      ...base,
      sentAtMs: sentAt,
      outcome: "failed",
      reason: failure.reason,
      detail: failure.message,
      ttftMs: Number.NaN,
      totalMs: clock() - sentAt,
      promptTokens: 0,
      cachedTokens: 0,
      outputTokens: 0,
      calls: 0,
      decision: undefined,
      suffixOnly: undefined,
      resent,
    };
  } finally {
    deadline.abort();
  }
}
