/**
 * How `streamGenerateContent` frames its chunks. With `?alt=sse` (what @google/genai and Gemini CLI
 * ask for) each chunk is one `data:` event; without it, Google streams one JSON array whose
 * elements arrive as they are made (`[{…}` then `,\r\n{…}` then `]`). An error after the stream
 * started is one more element holding `{"error": …}`, which both @google/genai and a JSON reader of
 * the array see.
 */

export interface StreamFraming {
  readonly contentType: string;
  /** Sent while the stream is otherwise quiet (an SSE comment; whitespace between array elements). */
  readonly keepAlive: string;
  /** One chunk; `first` when nothing was framed before it. */
  chunk(json: string, first: boolean): string;
  /** The stream's end after its last chunk. */
  end(first: boolean): string;
}

/**
 * The SSE keep-alive is a bare line break, not a `:` comment: @google/genai (1.x, which Gemini CLI
 * bundles) reads events with `/^\s*data: (.*)(?:\n\n|\r\r|\r\n\r\n)/` against the start of its
 * buffer, so a comment line there blocks every event after it (the stream then looks empty and
 * Gemini CLI repeats the request); leading whitespace it skips, and an SSE parser reads an empty
 * line with no data as nothing.
 */
export const SSE_FRAMING: StreamFraming = {
  contentType: "text/event-stream; charset=utf-8",
  keepAlive: "\n",
  chunk: (json) => `data: ${json}\r\n\r\n`,
  end: () => "",
};

export const JSON_ARRAY_FRAMING: StreamFraming = {
  contentType: "application/json; charset=UTF-8",
  keepAlive: "\n",
  chunk: (json, first) => `${first ? "[" : ",\r\n"}${json}`,
  end: (first) => (first ? "[]" : "]"),
};
