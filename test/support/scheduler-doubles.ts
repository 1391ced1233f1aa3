/**
 * Doubles for the session table's scheduler tests: an engine that only hands out and frees
 * sequences (acquire can be held at a gate), and checkpoints whose parking writes and restores
 * finish when the test says so (or fail). Everything else of the table is the real code.
 */
import type { SessionCheckpoints } from "../../gpu-worker/checkpoints/session-checkpoints.ts";
import type { Frontier } from "../../gpu-worker/continuation/frontier.ts";
import type {
  Engine,
  EngineOptions,
  EngineSequence,
  EngineStats,
  ModelInfo,
  PrefixCopyInfo,
  PrefixCopyMethod,
  Token,
} from "../../native/engine-types.ts";
import { DisposedError, NoFreeSequenceError } from "../../native/engine-types.ts";

/** A promise the test settles by hand. */
export class Gate<T = void> {
  readonly promise: Promise<T>;
  resolve: (value: T) => void = () => {};
  reject: (error: unknown) => void = () => {};
  constructor() {
    this.promise = new Promise<T>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }
}

class SequenceDouble implements EngineSequence {
  tokens: Token[] = [];
  disposed = false;
  constructor(
    readonly index: number,
    private readonly freed: (seq: SequenceDouble) => void,
  ) {}
  async truncate(length: number): Promise<void> {
    this.tokens = this.tokens.slice(0, length);
  }
  async append(tokens: readonly Token[]): Promise<void> {
    if (this.disposed) throw new DisposedError(`sequence ${this.index} was disposed`);
    this.tokens = [...this.tokens, ...tokens];
  }
  // biome-ignore lint/correctness/useYield: the double never samples
  async *generate(): AsyncGenerator<Token, void, void> {
    throw new Error("the scheduler double does not sample");
  }
  async saveState(): Promise<{ bytes: number }> {
    return { bytes: 0 };
  }
  async loadState(_path: string, tokens: readonly Token[]): Promise<void> {
    this.tokens = [...tokens];
  }
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.tokens = [];
    this.freed(this);
  }
}

/** An engine of `sequences` sequences; `acquireGate`, when set, holds each acquire until opened. */
export class EngineDouble implements Engine {
  readonly live = new Set<SequenceDouble>();
  /** Acquires in flight inside the engine (an acquire awaits before it takes a sequence, as the real one may). */
  acquiring = 0;
  acquireGate: Gate | undefined;
  /** Runs right after an acquire took its sequence, before its caller hears of it. */
  afterTake: (() => void) | undefined;
  readonly model: ModelInfo = {
    path: "double.gguf",
    identity: "double",
    name: "double",
    architecture: "llama",
    trainContextSize: 4096,
    vocabSize: 512,
    chatTemplate: undefined,
    bosToken: undefined,
    eosToken: undefined,
    endOfGenerationTokens: [],
    build: { origin: "prebuilt", backend: "cpu", llamaCppRelease: "double", cpuFeatures: "" },
  };
  readonly options: Readonly<EngineOptions>;
  readonly maxTokenBytes = 1;
  readonly prefixCopy: PrefixCopyInfo = {
    method: "state-restore",
    sequenceCopyUnavailable: "a double",
    stateRestoreBelow: 0,
  };

  async copyPrefix(): Promise<PrefixCopyMethod> {
    throw new Error("EngineDouble does not copy prefixes");
  }

  constructor(readonly sequences: number) {
    this.options = {
      modelPath: "double.gguf",
      contextSize: 4096,
      sequences,
      threads: 1,
      gpu: false,
      flashAttention: false,
      batchSize: 256,
    };
  }

  async acquireSequence(): Promise<EngineSequence> {
    this.acquiring++;
    try {
      await (this.acquireGate?.promise ?? Promise.resolve());
    } finally {
      this.acquiring--;
    }
    if (this.live.size >= this.sequences) throw new NoFreeSequenceError(`all ${this.sequences} sequences are in use`);
    const taken = new Set([...this.live].map((s) => s.index));
    let index = 0;
    while (taken.has(index)) index++;
    const seq = new SequenceDouble(index, (s) => this.live.delete(s));
    this.live.add(seq);
    this.afterTake?.();
    return seq;
  }

  stats(): EngineStats {
    return { sequencesTotal: this.sequences, sequencesFree: this.sequences - this.live.size, tokensHeld: 0 };
  }

  tokenize(): Token[] {
    throw new Error("not used by the scheduler");
  }
  async tokenizeAsync(): Promise<Token[]> {
    throw new Error("not used by the scheduler");
  }
  detokenize(): string {
    throw new Error("not used by the scheduler");
  }
  tokenBytes(): Uint8Array {
    throw new Error("not used by the scheduler");
  }
  isEndOfGeneration(): boolean {
    return false;
  }
  async dispose(): Promise<void> {
    for (const seq of [...this.live]) seq.dispose();
  }
}

/** What a checkpoint write or a restore does when it runs: finish at once, wait for a gate, or fail. */
export type StepTiming = { kind: "now" } | { kind: "gate"; gate: Gate } | { kind: "fail"; error: Error };

/** A write or restore held at its gate. */
export interface PendingStep {
  kind: "save" | "restore";
  sessionId: string;
  reason: string;
  gate: Gate;
}

/**
 * Checkpoints whose `save` (a parking or tool-frontier write) and `restore` follow the timings the
 * test queues (`saveTimings`, `restoreTimings`), else `policy` (default: at once). Steps held at a
 * gate are listed in `pending` until they settle.
 */
export class CheckpointsDouble {
  readonly saveTimings: StepTiming[] = [];
  readonly restoreTimings: StepTiming[] = [];
  policy: () => StepTiming["kind"] = () => "now";
  readonly pending: PendingStep[] = [];
  /** Every restore, in order, by session id. */
  readonly restored: string[] = [];
  saves = 0;
  readonly forgotten: string[] = [];
  readonly store = {
    findBySession: () => undefined,
    stats: () => ({ byReason: { parked: 0 } }),
  };
  readonly anchors = { settled: async () => {} };

  async save(
    session: { sessionId: string; sequence: EngineSequence | undefined },
    reason: string,
    onStateWritten?: () => void,
  ) {
    this.saves++;
    await this.#run(this.saveTimings.shift(), "save", session.sessionId, reason);
    onStateWritten?.();
    return session.sequence ? { id: `cp${this.saves}`, exact: true } : undefined;
  }

  async restore(session: { sessionId: string }, _sequence: EngineSequence): Promise<Frontier | undefined> {
    this.restored.push(session.sessionId);
    await this.#run(this.restoreTimings.shift(), "restore", session.sessionId, "");
    return undefined;
  }

  forget(session: { sessionId: string }): void {
    this.forgotten.push(session.sessionId);
  }

  /** Sessions with a write held at its gate (their `saving` is set). */
  savingSessions(): Set<string> {
    return new Set(this.pending.filter((p) => p.kind === "save").map((p) => p.sessionId));
  }

  /** Sessions whose restore is held at its gate. */
  restoringSessions(): Set<string> {
    return new Set(this.pending.filter((p) => p.kind === "restore").map((p) => p.sessionId));
  }

  /** The double where the table expects the real checkpoints. */
  get asCheckpoints(): SessionCheckpoints {
    return this as unknown as SessionCheckpoints;
  }

  async #run(timing: StepTiming | undefined, kind: PendingStep["kind"], sessionId: string, reason: string) {
    const chosen: StepTiming = timing ?? this.#fromPolicy();
    if (chosen.kind === "now") return;
    if (chosen.kind === "fail") throw chosen.error;
    const step: PendingStep = { kind, sessionId, reason, gate: chosen.gate };
    this.pending.push(step);
    try {
      await chosen.gate.promise;
    } finally {
      this.pending.splice(this.pending.indexOf(step), 1);
    }
  }

  #fromPolicy(): StepTiming {
    const kind = this.policy();
    if (kind === "gate") return { kind, gate: new Gate() };
    if (kind === "fail") return { kind, error: new Error("checkpoint step failed") };
    return { kind };
  }
}

/** A frontier as a finished turn leaves it (`tools`: it ended waiting on tool results). */
export function frontierDouble(tools = false): Frontier {
  return {
    text: "double",
    tokenCount: 0,
    toolUseIds: tools ? ["toolu_double"] : [],
    messages: [],
    messageDigests: [],
    headerDigest: "",
    lastTurn: { keys: [], raw: "", toolUseIds: [], spans: [] },
  };
}

/** Let every pending promise callback and timer-free macrotask run. */
export async function drain(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Settle a promise into a readable outcome without awaiting it (a lease still waiting reads "waiting"). */
export function track<T>(promise: Promise<T>) {
  const out: { state: "waiting" | "done" | "failed"; value?: T; error?: unknown } = { state: "waiting" };
  promise.then(
    (value) => Object.assign(out, { state: "done", value }),
    (error: unknown) => Object.assign(out, { state: "failed", error }),
  );
  return out;
}
