/**
 * The phase clock of one turn: where its time went (queue wait, checkpoint restore, planning,
 * prefill, first token, decode, checkpoint writes on its critical path), for the turn's finish log
 * line and the latency histograms. The turn runner marks phase ends; checkpoint I/O done on the
 * turn's behalf (a restore during the lease, parking another session to free a sequence, an anchor
 * write) is attributed through an AsyncLocalStorage context set by {@link TurnTrace.during}, so the
 * session table and checkpoint store need no timing code of their own.
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** The awaited steps of a turn whose checkpoint I/O is attributed to it. */
export type TracedStep = "lease" | "ladder" | "anchor";

interface TraceContext {
  trace: TurnTrace;
  step: TracedStep;
}

const context = new AsyncLocalStorage<TraceContext>();

/** The turn (and step) on whose behalf the current code runs, if any. */
export function currentTrace(): TraceContext | undefined {
  return context.getStore();
}

/** A finished turn's phases, in milliseconds. */
export interface TurnPhases {
  /** Waiting for the session and a free sequence (excluding restore and parking writes). */
  queueMs: number;
  /** Checkpoint loads: the session's own restore and the ladder's stored prefix. */
  restoreMs: number;
  /** Render, tokenize and the continuation ladder (excluding its checkpoint loads). */
  planMs: number;
  /** Appending the prompt suffix to the KV (excluding an anchor write in between). */
  prefillMs: number;
  /** From the turn's start to its first sampled token (the worker's TTFT). */
  firstTokenMs: number;
  /** From the first sampled token to the end of sampling. */
  decodeMs: number;
  /** Checkpoint writes on the turn's critical path (parking another session, anchors). */
  checkpointMs: number;
  /** From the turn's start to the end of sampling. */
  totalMs: number;
}

export class TurnTrace {
  readonly #now: () => number;
  readonly #started: number;
  readonly #onInterToken: ((seconds: number) => void) | undefined;
  readonly #steps: Record<TracedStep, { ms: number; loadMs: number; writeMs: number }> = {
    lease: { ms: 0, loadMs: 0, writeMs: 0 },
    ladder: { ms: 0, loadMs: 0, writeMs: 0 },
    anchor: { ms: 0, loadMs: 0, writeMs: 0 },
  };
  #planned: number | undefined;
  #prefilled: number | undefined;
  #firstToken: number | undefined;
  #lastToken: number | undefined;
  #sampled: number | undefined;

  /** @param onInterToken observes each gap between two sampled tokens (seconds). */
  constructor(options: { onInterToken?: (seconds: number) => void; now?: () => number } = {}) {
    this.#now = options.now ?? (() => performance.now());
    this.#started = this.#now();
    this.#onInterToken = options.onInterToken;
  }

  /** Run an awaited step of the turn; checkpoint I/O inside it is attributed to this turn. */
  async during<T>(step: TracedStep, run: () => Promise<T>): Promise<T> {
    const started = this.#now();
    try {
      return await context.run({ trace: this, step }, run);
    } finally {
      this.#steps[step].ms += this.#now() - started;
    }
  }

  /** Checkpoint I/O observed inside a {@link during} step. */
  addCheckpointIo(step: TracedStep, kind: "load" | "write", ms: number): void {
    if (kind === "load") this.#steps[step].loadMs += ms;
    else this.#steps[step].writeMs += ms;
  }

  /** The continuation is planned; prefill starts. */
  planned(): void {
    this.#planned = this.#now();
  }

  prefilled(): void {
    this.#prefilled = this.#now();
  }

  /** A token was sampled. */
  token(): void {
    const now = this.#now();
    if (this.#firstToken === undefined) this.#firstToken = now;
    else if (this.#lastToken !== undefined) this.#onInterToken?.((now - this.#lastToken) / 1000);
    this.#lastToken = now;
  }

  sampled(): void {
    this.#sampled = this.#now();
  }

  /** The phases so far (phases not reached are 0). */
  phases(): TurnPhases {
    const { lease, ladder, anchor } = this.#steps;
    const leased = this.#started + lease.ms;
    const planned = this.#planned ?? leased;
    const prefilled = this.#prefilled ?? planned;
    const end = this.#sampled ?? this.#now();
    return {
      queueMs: Math.max(0, lease.ms - lease.loadMs - lease.writeMs),
      restoreMs: lease.loadMs + ladder.loadMs + anchor.loadMs,
      planMs: Math.max(0, planned - leased - ladder.loadMs - ladder.writeMs),
      prefillMs: Math.max(0, prefilled - planned - anchor.ms),
      firstTokenMs: this.#firstToken === undefined ? 0 : this.#firstToken - this.#started,
      decodeMs: this.#firstToken === undefined ? 0 : end - this.#firstToken,
      checkpointMs: lease.writeMs + ladder.writeMs + anchor.ms,
      totalMs: end - this.#started,
    };
  }

  /** The phases as log fields (`queue_ms=… restore_ms=…`), rounded to 0.1 ms. */
  logFields(): Record<string, number> {
    const p = this.phases();
    const ms = (value: number) => Math.round(value * 10) / 10;
    return {
      queue_ms: ms(p.queueMs),
      restore_ms: ms(p.restoreMs),
      plan_ms: ms(p.planMs),
      prefill_ms: ms(p.prefillMs),
      first_token_ms: ms(p.firstTokenMs),
      decode_ms: ms(p.decodeMs),
      checkpoint_ms: ms(p.checkpointMs),
      total_ms: ms(p.totalMs),
    };
  }
}
