/**
 * Requests for a session another request still holds. The usual one is a client that aborted a
 * turn and sent it again at once: the aborted turn stops at its next decode step, but the new
 * request can reach the worker first. It waits for the session instead of failing (a busy refusal
 * inside a started stream is not retried by any SDK). Every change of the session table wakes every
 * waiter and each looks again; a waiter leaves on its call's cancellation, or with `timeout()` once
 * its deadline passes (a session held by a long running turn of another client).
 */
export class BusyWaiters {
  readonly #waiting = new Set<() => void>();

  /** Resolves at the table's next change; rejects with the signal's reason, or `timeout()` at `deadline`. */
  next(signal: AbortSignal | undefined, deadline: number, timeout: () => Error): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const leave = () => {
        this.#waiting.delete(wake);
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      const wake = () => {
        leave();
        resolve();
      };
      const onAbort = () => {
        leave();
        reject(signal?.reason);
      };
      const timer = setTimeout(
        () => {
          leave();
          reject(timeout());
        },
        Math.max(0, deadline - Date.now()),
      );
      this.#waiting.add(wake);
      if (signal?.aborted) onAbort();
      else signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** The table changed: every waiter looks again. */
  wakeAll(): void {
    for (const wake of [...this.#waiting]) wake();
  }

  get size(): number {
    return this.#waiting.size;
  }
}
