/**
 * When the client has a request's whole response. The request's own bookkeeping (its metrics) waits
 * for it, so that it never competes with the response's last bytes: under local workerd, Durable
 * Objects share the edge's thread, and a metrics write started at the headers held a streamed turn's
 * end by ~0.7 ms. A handler that streams its body calls `streaming()` and, once the last byte is
 * written, `done()`; any other response is whole when the handler returns (`returned()`).
 */
export class ResponseSent {
  #streaming = false;
  #resolve: () => void = () => undefined;
  readonly promise = new Promise<void>((resolve) => {
    this.#resolve = resolve;
  });

  streaming(): void {
    this.#streaming = true;
  }

  /** The handler returned its response (or the error's); it is whole unless it streams. */
  returned(): void {
    if (!this.#streaming) this.#resolve();
  }

  done(): void {
    this.#resolve();
  }
}
