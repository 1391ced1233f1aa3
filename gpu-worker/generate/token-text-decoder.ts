import type { Token } from "../../native/engine-types.ts";

/**
 * Turns sampled tokens into text as they arrive. A random-weight model often samples byte tokens
 * that split or break UTF-8: partial sequences are held back until complete and invalid bytes
 * become U+FFFD. Never throws.
 */
export class TokenTextDecoder {
  readonly #decoder = new TextDecoder("utf-8", { fatal: false });
  readonly #bytesOf: (token: Token) => Uint8Array;

  constructor(bytesOf: (token: Token) => Uint8Array) {
    this.#bytesOf = bytesOf;
  }

  /** Text completed by this token (may be empty while a multi-byte character is pending). */
  push(token: Token): string {
    return this.#decoder.decode(this.#bytesOf(token), { stream: true });
  }

  /** Flush a trailing partial sequence (as U+FFFD). */
  finish(): string {
    return this.#decoder.decode();
  }
}
