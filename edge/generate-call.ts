/**
 * One server-streaming Generate call. Cancellation flows down: the client's disconnect (or an
 * explicit cancel) aborts the gRPC-Web fetch, which the worker sees as a cancelled call.
 */
import type { GenerateEvent, GenerateRequest, Stop } from "../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { WorkerClient } from "./worker-client.ts";
import { rpcErrorToApiError } from "./worker-errors.ts";

export class GenerateCall {
  readonly #abort = new AbortController();
  readonly #iterator: AsyncIterator<GenerateEvent>;
  #pending: Promise<IteratorResult<GenerateEvent>> | undefined;
  #stop: Stop | undefined;

  constructor(client: WorkerClient, request: GenerateRequest, clientSignal?: AbortSignal) {
    if (clientSignal?.aborted) this.#abort.abort();
    clientSignal?.addEventListener("abort", () => this.cancel(), { once: true });
    this.#iterator = client.generate(request, { signal: this.#abort.signal })[Symbol.asyncIterator]();
  }

  /** The worker's stop event (with the turn's usage), once it arrived. */
  get stop(): Stop | undefined {
    return this.#stop;
  }

  get cancelled(): boolean {
    return this.#abort.signal.aborted;
  }

  cancel(): void {
    if (!this.#abort.signal.aborted) this.#abort.abort();
  }

  /** The next event, or undefined at the end of the stream. RPC failures become ApiErrors. */
  async next(): Promise<GenerateEvent | undefined> {
    const pending = this.#pending ?? this.#iterator.next();
    this.#pending = undefined;
    try {
      const result = await pending;
      if (result.done) return undefined;
      if (result.value.event.case === "stop") this.#stop = result.value.event.value;
      return result.value;
    } catch (error) {
      throw rpcErrorToApiError(error);
    }
  }

  /** Like next(), but gives up after `ms` with "timeout"; the read stays pending for the next call. */
  async nextWithin(ms: number): Promise<GenerateEvent | undefined | "timeout"> {
    const pending = this.#pending ?? this.#iterator.next();
    this.#pending = pending;
    pending.catch(() => undefined);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), Math.max(0, ms));
    });
    try {
      const winner = await Promise.race([pending.then(() => "ready" as const), timeout]);
      if (winner === "timeout") return "timeout";
    } catch {
      // the read failed: next() rethrows it as an ApiError
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
    return this.next();
  }
}
