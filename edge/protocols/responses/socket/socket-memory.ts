/**
 * What a Responses WebSocket remembers of the responses made on it: each one's whole conversation
 * (its history, input and output as input items) and its session, so a follow-up that sends only
 * new items with `previous_response_id` continues even with `store: false` (WebSocket mode keeps
 * that state on the socket, not in storage). One socket is one caller's; bounded by count and size,
 * the oldest forgotten first (a forgotten id falls back to the stored records, then a clear 404).
 */
import type { InputItem } from "../request/types.ts";

export interface RememberedResponse {
  items: InputItem[];
  /** The session the response ran in; undefined for a `generate: false` warm-up (nothing ran). */
  sessionId: string | undefined;
}

const MAX_RESPONSES = 16;
/** Characters of JSON kept in all (a socket's isolate has about 128 MB). */
const MAX_CHARS = 24 * 1024 * 1024;

export class SocketMemory {
  readonly #responses = new Map<string, RememberedResponse & { chars: number }>();
  #chars = 0;

  get(id: string): RememberedResponse | undefined {
    return this.#responses.get(id);
  }

  remember(id: string, response: RememberedResponse): void {
    const chars = JSON.stringify(response.items).length;
    this.#forget(id);
    if (chars > MAX_CHARS) return;
    this.#responses.set(id, { ...response, chars });
    this.#chars += chars;
    for (const oldest of this.#responses.keys()) {
      if (this.#responses.size <= MAX_RESPONSES && this.#chars <= MAX_CHARS) break;
      this.#forget(oldest);
    }
  }

  #forget(id: string): void {
    const known = this.#responses.get(id);
    if (!known) return;
    this.#chars -= known.chars;
    this.#responses.delete(id);
  }
}
