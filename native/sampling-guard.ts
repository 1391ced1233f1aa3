/**
 * node-llama-cpp samples inside its batch dispatcher (`void withLock(...)`): when the native
 * `sampleToken` rejects — llama.cpp's grammar refuses the token the sampler picked, e.g. when a
 * grammar reaches a character no vocabulary token spells (`root ::= "\x00"` on a byte-level vocabulary)
 * or when logits are not finite — that rejection is unhandled (the process dies) and the
 * sequence's evaluation never settles. This guard makes the context's `sampleToken` resolve with
 * node-llama-cpp's own "no token" marker (-1) instead, which its evaluator turns into an ordinary
 * error thrown to the one generation that sampled; the native error is kept for that error's message.
 */
import type { LlamaContext } from "node-llama-cpp";

type SampleToken = (...args: unknown[]) => Promise<unknown>;

/** node-llama-cpp's marker for "the sampler produced no token" (LlamaContext.js: nextToken === -1). */
const NO_TOKEN = -1;

export class SamplingFailures {
  #count = 0;
  #last: unknown;

  /** How many samplings failed so far (compare before and after one step). */
  get count(): number {
    return this.#count;
  }

  get last(): unknown {
    return this.#last;
  }

  record(error: unknown): void {
    this.#count++;
    this.#last = error;
  }
}

/** Wrap the context's native `sampleToken`; throws if node-llama-cpp's internals are not as expected. */
export function guardSampling(context: LlamaContext): SamplingFailures {
  const addon = (context as unknown as { _ctx?: { sampleToken?: unknown } })._ctx;
  const original = addon?.sampleToken;
  if (addon === undefined || typeof original !== "function") {
    throw new Error("node-llama-cpp's LlamaContext has no _ctx.sampleToken: the sampling guard needs updating");
  }
  const failures = new SamplingFailures();
  const sample = original as SampleToken;
  const guarded = (...args: unknown[]): Promise<unknown> =>
    sample.apply(addon, args).catch((error: unknown) => {
      failures.record(error);
      return NO_TOKEN;
    });
  // The addon's methods are read-only prototype properties: shadow it on the instance.
  Object.defineProperty(addon, "sampleToken", { value: guarded, writable: false, configurable: true });
  return failures;
}
