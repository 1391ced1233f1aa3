/**
 * Pauses the context's decoding while an operation that needs the whole context runs.
 *
 * node-llama-cpp decodes all sequences in batches under one context lock and keeps that lock for
 * as long as any sequence has a decode queued. Saving or loading a sequence's state and reclaiming
 * a freed sequence take the same lock, so while other sequences generate they wait until every one
 * of them pauses: in practice until a running turn ends (seconds to minutes), which made parking an
 * idle session, and so a waiting tenant's turn, wait on everyone else's decode.
 *
 * `hold(op)` closes the gate while `op` runs: generating sequences finish the decode they have in
 * flight and queue no next one until it opens, so the lock frees within a decode step or two and
 * `op` gets it. Others pause for the length of `op` (a state dump or load), not the other way round.
 */
export class DecodeGate {
  #holders = 0;
  #opened: Promise<void> | undefined;
  #open: (() => void) | undefined;

  /** Undefined while open; else settles when the last holder is done. */
  get closed(): Promise<void> | undefined {
    return this.#opened;
  }

  async hold<T>(op: () => Promise<T>): Promise<T> {
    if (this.#holders++ === 0) {
      this.#opened = new Promise<void>((resolve) => {
        this.#open = resolve;
      });
    }
    try {
      return await op();
    } finally {
      if (--this.#holders === 0) {
        const open = this.#open;
        this.#opened = undefined;
        this.#open = undefined;
        open?.();
      }
    }
  }

  /** Run `step` now when open, else once the gate opens. */
  after<T>(step: () => Promise<T>): Promise<T> {
    const closed = this.#opened;
    return closed === undefined ? step() : closed.then(step);
  }
}
