/**
 * The client side of one SSE stream: queued writes, a keep-alive while the stream is quiet, and
 * "client gone" (a failed write or a client that stopped reading cancels the worker call). Used by
 * the turn driver's pump; knows nothing about protocols.
 */

export class SseWriter {
  private readonly encoder = new TextEncoder();
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The client went away (a write failed): nothing more is written. */
  clientGone = false;

  constructor(
    private readonly writer: WritableStreamDefaultWriter<Uint8Array>,
    private readonly keepAlive: { text: string; everyMs: number },
    private readonly onGone: () => void,
  ) {}

  /** (Re)start the keep-alive timer: it fires after `everyMs` without a write. */
  armKeepAlive(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.write(this.keepAlive.text).catch(() => undefined), this.keepAlive.everyMs);
  }

  /**
   * A write is queued, not waited for: the caller reads its next event while the client's socket
   * takes this one. Only a full queue (a client that stopped reading) waits. A client that went
   * away fails the queued writes, which marks it gone.
   */
  async write(text: string): Promise<void> {
    if (this.clientGone) throw new Error("client gone");
    this.armKeepAlive();
    this.writer.write(this.encoder.encode(text)).catch(() => this.gone());
    if ((this.writer.desiredSize ?? 0) > 0) return;
    try {
      await this.writer.ready;
    } catch (error) {
      this.gone();
      throw error;
    }
  }

  /** Stop the keep-alive and close the stream (errors ignored: the client may be gone). */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.writer.close().catch(() => undefined);
  }

  private gone(): void {
    if (this.clientGone) return;
    this.clientGone = true;
    this.onGone();
  }
}
