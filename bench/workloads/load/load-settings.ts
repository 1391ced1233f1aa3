import { PROTOCOLS, type Protocol } from "./load-turn.ts";

/**
 * The load workload's settings: `--agents n` (default 64) and `--load key=value,…` for the rest, e.g.
 * `--load waves=3,turns=3,workers=2,tenants=4,contend=2,deadline=120`. `--quick` (npm test's bench
 * tier) shrinks everything to a few agents and seconds.
 */

export interface LoadSettings {
  /** Conversations started at once in each wave. */
  agents: number;
  /** Waves of fresh conversations, one after the other. */
  waves: number;
  /** Turns per conversation (every one a forced tool call). */
  turns: number;
  /** Worker processes behind the edge (pooled, one shared checkpoint directory). */
  workers: number;
  /** Sequences per worker (FRONTIER_SEQUENCES; `npm start`'s default is 4). */
  sequences: number;
  /** KV cells per sequence (FRONTIER_CONTEXT_SIZE), the same for llama-server's slots. */
  contextSize: number;
  /**
   * Turns each worker may hold waiting for a sequence (FRONTIER_MAX_QUEUE; the worker's default 64):
   * past it, and past a tenant's quarter of it, the worker refuses with 529 and the client retries.
   */
  maxQueue: number;
  /** API keys the agents are spread over (one tenant each). */
  tenants: number;
  /** Share of turns whose client aborts the stream after the first event (then re-sends the turn). */
  abortShare: number;
  /** max_tokens of every turn. */
  maxTokens: number;
  /** Approximate tokens of each agent's own system prompt. */
  systemTokens: number;
  /**
   * A turn's deadline from its first send, retries included (then it fails as `deadline`): 5 minutes,
   * half the worker's own wall clock, so a stalled queue fails its turns rather than the run hanging,
   * while a turn that is only slow on a crowded host (minutes of queueing at 256 agents) completes.
   */
  turnDeadlineMs: number;
  /** Retries of one request after a 429/529/5xx or a connection error, honouring retry-after (Claude Code: 10). */
  maxRetries: number;
  /** CPU-bound `sh` loops started beside the run (a contended host), killed by PID at the end. */
  contend: number;
  /** Tool time between turns: uniform in [min, max] ms, per agent and turn. */
  toolPauseMs: readonly [number, number];
  /** The llama-server comparison: run it (when a binary is found or given) or skip it. */
  peer: boolean;
  /** The clients' protocols, taken by the agents in turn (`protocols=messages+chat`). */
  protocols: readonly Protocol[];
}

const DEFAULTS: LoadSettings = {
  agents: 64,
  waves: 3,
  turns: 3,
  workers: 2,
  sequences: 4,
  contextSize: 8192,
  maxQueue: 64,
  tenants: 4,
  abortShare: 0.1,
  maxTokens: 48,
  systemTokens: 1500,
  turnDeadlineMs: 300_000,
  maxRetries: 10,
  contend: 0,
  toolPauseMs: [50, 450],
  peer: true,
  protocols: PROTOCOLS,
};

const QUICK: Partial<LoadSettings> = { agents: 4, waves: 2, turns: 2, systemTokens: 300, turnDeadlineMs: 60_000 };

/** Keys of `--load`, each a number (`peer` takes on/off). */
const NUMERIC_KEYS = {
  waves: "waves",
  turns: "turns",
  workers: "workers",
  sequences: "sequences",
  context: "contextSize",
  queue: "maxQueue",
  tenants: "tenants",
  abort: "abortShare",
  "max-tokens": "maxTokens",
  system: "systemTokens",
  retries: "maxRetries",
  contend: "contend",
} as const satisfies Record<string, keyof LoadSettings>;

export function loadSettings(quick: boolean, agents: string | undefined, spec: string | undefined): LoadSettings {
  const settings: LoadSettings = { ...DEFAULTS, ...(quick ? QUICK : {}) };
  if (agents !== undefined) settings.agents = positive("--agents", agents);
  for (const pair of (spec ?? "").split(",").filter((p) => p.trim() !== "")) {
    const [key = "", value = ""] = pair.split("=").map((s) => s.trim());
    if (key === "deadline") settings.turnDeadlineMs = positive("deadline", value) * 1000;
    else if (key === "pause") {
      const [min, max] = value.split("-").map((v) => nonNegative("pause", v));
      if (min === undefined || max === undefined || max < min)
        throw new Error(`--load pause=MIN-MAX (ms), got ${value}`);
      settings.toolPauseMs = [min, max];
    } else if (key === "peer") {
      if (value !== "on" && value !== "off") throw new Error(`--load peer=on|off, got ${value}`);
      settings.peer = value === "on";
    } else if (key === "protocols") {
      const list = value.split("+");
      const unknown = list.filter((p) => !(PROTOCOLS as readonly string[]).includes(p));
      if (list.length === 0 || unknown.length > 0) throw new Error(`--load protocols=a+b of ${PROTOCOLS.join(", ")}`);
      settings.protocols = list as Protocol[];
    } else if (Object.hasOwn(NUMERIC_KEYS, key)) {
      const field = NUMERIC_KEYS[key as keyof typeof NUMERIC_KEYS];
      const n = field === "abortShare" || field === "contend" ? nonNegative(key, value) : positive(key, value);
      settings[field] = n;
    } else {
      throw new Error(
        `--load: unknown key "${key}" (keys: ${[...Object.keys(NUMERIC_KEYS), "deadline", "pause", "peer", "protocols"].join(", ")})`,
      );
    }
  }
  if (settings.abortShare > 0.5) throw new Error("--load abort= is a share of turns, at most 0.5");
  return settings;
}

function positive(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${text}"`);
  return n;
}

function nonNegative(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a number ≥ 0, got "${text}"`);
  return n;
}

/** The settings as the report's one-line description. */
export function describeSettings(s: LoadSettings): string {
  return [
    `${s.agents} agents × ${s.waves} waves × ${s.turns} turns`,
    `${s.workers} worker${s.workers > 1 ? "s" : ""} × ${s.sequences} sequences (context ${s.contextSize}, queue ${s.maxQueue})`,
    `${s.tenants} tenant${s.tenants > 1 ? "s" : ""}`,
    `max_tokens ${s.maxTokens}`,
    `system ≈${s.systemTokens} tokens per agent`,
    `tool pauses ${s.toolPauseMs[0]}–${s.toolPauseMs[1]} ms`,
    `${Math.round(s.abortShare * 100)}% of turns aborted mid-stream and re-sent`,
    `turn deadline ${s.turnDeadlineMs / 1000} s`,
    `≤ ${s.maxRetries} retries per request`,
    `clients: ${s.protocols.join(", ")}`,
    s.contend > 0 ? `${s.contend} CPU-bound loops beside it` : "no extra CPU load",
  ].join("; ");
}
