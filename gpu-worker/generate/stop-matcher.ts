/**
 * Finds the first stop sequence in streamed text. Text that might be the start of a stop sequence
 * is held back until it is decided, so a stop sequence never leaks to the client.
 */
export interface StopMatch {
  /** Text safe to emit now. */
  emit: string;
  /** The stop sequence that matched, if any (generation must end). */
  matched: string | undefined;
}

export class StopMatcher {
  readonly #stops: readonly string[];
  #held = "";

  constructor(stopSequences: readonly string[]) {
    this.#stops = stopSequences.filter((s) => s.length > 0);
  }

  push(text: string): StopMatch {
    if (this.#stops.length === 0) return { emit: text, matched: undefined };
    const buffer = this.#held + text;
    let first: { at: number; stop: string } | undefined;
    for (const stop of this.#stops) {
      const at = buffer.indexOf(stop);
      if (at >= 0 && (first === undefined || at < first.at)) first = { at, stop };
    }
    if (first) {
      this.#held = "";
      return { emit: buffer.slice(0, first.at), matched: first.stop };
    }
    const keep = this.#longestPartialSuffix(buffer);
    this.#held = buffer.slice(buffer.length - keep);
    return { emit: buffer.slice(0, buffer.length - keep), matched: undefined };
  }

  /** Release held text at the end of generation. */
  finish(): string {
    const rest = this.#held;
    this.#held = "";
    return rest;
  }

  #longestPartialSuffix(buffer: string): number {
    let best = 0;
    for (const stop of this.#stops) {
      const max = Math.min(stop.length - 1, buffer.length);
      for (let n = max; n > best; n--) {
        if (buffer.endsWith(stop.slice(0, n))) {
          best = n;
          break;
        }
      }
    }
    return best;
  }
}
