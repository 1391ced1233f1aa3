/**
 * When the client has a request's whole response, and the bookkeeping that waits for it (the
 * request's metric, the turn's record, metrics and usage, the tenant limiter's slot). That work
 * starts one timer turn after the last byte, so it never competes with the response: under local
 * workerd, Durable Objects share the edge's thread, and their SQLite commits held a stream's end.
 * A handler that streams its body calls `streaming()` and, once the last byte is written (or the
 * client went away), `done()`; any other response is whole when the handler returns (`returned()`).
 */
type Task = () => Promise<unknown>;

export class ResponseSent {
  #streaming = false;
  #sent = false;
  readonly #tasks: Task[] = [];

  constructor(private readonly waitUntil: (promise: Promise<unknown>) => void) {}

  /** Start `task` once the client has the whole response (at once if it has; failures are its own). */
  after(task: Task): void {
    if (this.#sent) this.#start([task]);
    else this.#tasks.push(task);
  }

  streaming(): void {
    this.#streaming = true;
  }

  /** The handler returned its response (or the error's); it is whole unless it streams. */
  returned(): void {
    if (!this.#streaming) this.done();
  }

  done(): void {
    if (this.#sent) return;
    this.#sent = true;
    this.#start(this.#tasks.splice(0));
  }

  #start(tasks: Task[]): void {
    if (tasks.length === 0) return;
    // One timer turn: the response's last bytes go out first. A timer alone does not keep the
    // request alive, so the promise goes to waitUntil at once.
    const oneTimerTurn = new Promise((resolve) => setTimeout(resolve, 0));
    this.waitUntil(oneTimerTurn.then(() => Promise.allSettled(tasks.map((task) => task()))));
  }
}
