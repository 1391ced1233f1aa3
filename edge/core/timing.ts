/**
 * The `server-timing` header of a turn (W3C Server Timing): how long the edge spent before each
 * step finished, so an operator (or `npm run bench`) sees where a request's time went without a
 * profiler. Steps, in order: `route` (authenticate, validate, find the session: the SessionDO
 * `open`, alongside the tenant limiter), `admit` (the rest of the limiter's answer), `worker` (the
 * worker's cache decision: connect, queue, prefill), and on a JSON answer `record` (what the body
 * waits for after the turn: a new session's creation, a Responses record; the SessionDO's
 * `recordTurn` runs alongside); `total` is the edge's time up to the headers. Milliseconds, as
 * the runtime's clock gives them (workerd advances it across I/O, so this measures the waits).
 */
export class EdgeTiming {
  readonly #start: number;
  #last: number;
  readonly #steps: [name: string, ms: number][] = [];

  constructor(start = Date.now()) {
    this.#start = start;
    this.#last = start;
  }

  /** The step `name` ended now (it began where the previous one ended). */
  mark(name: string): void {
    const now = Date.now();
    this.#steps.push([name, now - this.#last]);
    this.#last = now;
  }

  /** The header value, e.g. `route;dur=2, admit;dur=0, worker;dur=31, total;dur=33`. */
  header(): string {
    const total = this.#last - this.#start;
    return [...this.#steps, ["total", total] as const].map(([name, ms]) => `${name};dur=${ms}`).join(", ");
  }
}

/** Parse a `server-timing` header into step → ms (a client of the bench; unknown parts are skipped). */
export function parseServerTiming(value: string | null): Record<string, number> {
  const steps: Record<string, number> = {};
  for (const part of (value ?? "").split(",")) {
    const [name, ...params] = part.trim().split(";");
    const dur = params.map((p) => /^\s*dur=([0-9.]+)\s*$/.exec(p)?.[1]).find((d) => d !== undefined);
    if (name && dur !== undefined) steps[name] = Number(dur);
  }
  return steps;
}
