/**
 * Incremental server-sent events decoder: byte chunks in, events out. Chunks may split lines,
 * CRLF pairs and UTF-8 sequences anywhere. Follows the WHATWG parsing rules: CR, LF and CRLF end
 * lines; `:` starts a comment; one leading space after the colon is dropped; a blank line
 * dispatches; an event with no `data:` lines is not dispatched; a leading BOM is skipped (by
 * TextDecoder).
 */

export interface DecodedSseEvent {
  /** The `event:` field, or "message" when absent (as EventSource does). */
  event: string;
  data: string;
  /** The last event id seen on the stream so far (`id:` persists across events). */
  id: string;
  /** A `retry:` value sent with this event. */
  retry?: number;
}

export class SseDecoder {
  readonly #text = new TextDecoder("utf-8");
  #buffer = "";
  #pendingCR = false;
  #eventType = "";
  #data: string[] = [];
  #lastId = "";
  #retry: number | undefined;
  /** Comment lines seen so far (keep-alives), for callers that care. */
  comments = 0;

  /** Feed a chunk; returns the events it completed. */
  push(chunk: Uint8Array): DecodedSseEvent[] {
    return this.#feed(this.#text.decode(chunk, { stream: true }));
  }

  /** Flush at end of stream. An unterminated final event is discarded, per the spec. */
  end(): DecodedSseEvent[] {
    const events = this.#feed(this.#text.decode());
    this.#buffer = "";
    this.#pendingCR = false;
    this.#eventType = "";
    this.#data = [];
    return events;
  }

  #feed(text: string): DecodedSseEvent[] {
    const events: DecodedSseEvent[] = [];
    let start = 0;
    if (this.#pendingCR && text.length > 0) {
      this.#pendingCR = false;
      if (text[0] === "\n") start = 1;
    }
    let buffer = this.#buffer;
    for (let i = start; i < text.length; i++) {
      const ch = text[i];
      if (ch !== "\n" && ch !== "\r") continue;
      const line = buffer + text.slice(start, i);
      buffer = "";
      if (ch === "\r") {
        if (i + 1 < text.length) {
          if (text[i + 1] === "\n") i++;
        } else {
          this.#pendingCR = true;
        }
      }
      start = i + 1;
      const event = this.#line(line);
      if (event) events.push(event);
    }
    this.#buffer = buffer + text.slice(start);
    return events;
  }

  #line(line: string): DecodedSseEvent | undefined {
    if (line === "") return this.#dispatch();
    if (line.startsWith(":")) {
      this.comments++;
      return undefined;
    }
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "event":
        this.#eventType = value;
        break;
      case "data":
        this.#data.push(value);
        break;
      case "id":
        if (!value.includes("\u0000")) this.#lastId = value;
        break;
      case "retry":
        if (/^[0-9]+$/.test(value)) this.#retry = Number(value);
        break;
      default:
        break;
    }
    return undefined;
  }

  #dispatch(): DecodedSseEvent | undefined {
    const type = this.#eventType;
    const data = this.#data;
    this.#eventType = "";
    this.#data = [];
    if (data.length === 0) {
      this.#retry = undefined;
      return undefined;
    }
    const event: DecodedSseEvent = { event: type || "message", data: data.join("\n"), id: this.#lastId };
    if (this.#retry !== undefined) event.retry = this.#retry;
    this.#retry = undefined;
    return event;
  }
}

/** Decode a byte stream into SSE events. Stopping iteration cancels the stream. */
export async function* decodeSseStream(stream: ReadableStream<Uint8Array>): AsyncGenerator<DecodedSseEvent> {
  const decoder = new SseDecoder();
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield* decoder.push(value);
    }
    yield* decoder.end();
  } finally {
    await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
