import { describe, expect, it } from "vitest";
import { encodeSseComment, encodeSseEvent, encodeSseJson } from "../../../shared/sse.ts";
import { type DecodedSseEvent, decodeSseStream, SseDecoder } from "../../support/sse-decoder.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

function decodeChunks(chunks: Uint8Array[]): DecodedSseEvent[] {
  const decoder = new SseDecoder();
  const out: DecodedSseEvent[] = [];
  for (const chunk of chunks) out.push(...decoder.push(chunk));
  out.push(...decoder.end());
  return out;
}

/** Every way of cutting `all` into two chunks, plus one chunk per byte. */
function* splits(all: Uint8Array): Generator<Uint8Array[]> {
  for (let cut = 0; cut <= all.length; cut++) yield [all.slice(0, cut), all.slice(cut)];
  yield Array.from(all, (b) => Uint8Array.of(b));
}

describe("SSE encoder", () => {
  it("writes an event line, one data line per payload line and a blank line", () => {
    expect(encodeSseEvent({ event: "ping", data: '{"type":"ping"}' })).toBe('event: ping\ndata: {"type":"ping"}\n\n');
    expect(encodeSseEvent({ event: "m", data: "a\nb\r\nc", id: "7", retry: 1500 })).toBe(
      "event: m\nid: 7\nretry: 1500\ndata: a\ndata: b\ndata: c\n\n",
    );
    expect(encodeSseJson("x", { a: "é\n" })).toBe('event: x\ndata: {"a":"é\\n"}\n\n');
    expect(encodeSseComment("keep\nalive")).toBe(": keep\n: alive\n\n");
  });

  it("refuses line breaks in the event name", () => {
    expect(() => encodeSseEvent({ event: "a\nb", data: "" })).toThrow();
  });
});

describe("SSE decoder", () => {
  const expected: DecodedSseEvent[] = [
    { event: "message_start", data: '{"text":"héllo — 世界 🎉"}', id: "" },
    { event: "message", data: "line one\nline two\n\nafter blank data", id: "42" },
    { event: "content_block_delta", data: "🎉🎉", id: "42", retry: 3000 },
    { event: "ping", data: "", id: "42" },
    { event: "error", data: "x:y: z", id: "43" },
  ];

  const wire = [
    "\uFEFF: a comment first\r\n",
    'event: message_start\r\ndata: {"text":"héllo — 世界 🎉"}\r\n\r\n',
    "id: 42\ndata: line one\ndata:line two\ndata\ndata: after blank data\n\n",
    "event: ignored-no-data\n\n",
    ": keep-alive\n\n",
    "event: content_block_delta\rretry: 3000\rdata: 🎉🎉\r\r",
    "event: ping\ndata:\n\n",
    "unknown: field\nevent: error\nid: 43\ndata: x:y: z\n\n",
    "event: unterminated\ndata: dropped at end",
  ].join("");

  it("decodes every field, comment and line ending", () => {
    const decoder = new SseDecoder();
    expect(decodeChunks([bytes(wire)])).toEqual(expected);
    decoder.push(bytes(": c\n\n"));
    expect(decoder.comments).toBe(1);
  });

  it("gives the same events for every chunking, including mid-line, mid-CRLF and mid-UTF-8", () => {
    const all = bytes(wire);
    let cases = 0;
    for (const chunks of splits(all)) {
      expect(decodeChunks(chunks)).toEqual(expected);
      cases++;
    }
    expect(cases).toBe(all.length + 2);
  });

  it("splits three-way around multi-byte characters", () => {
    const all = bytes("data: 世🎉界\r\n\r\n");
    for (let a = 0; a <= all.length; a++) {
      for (let b = a; b <= all.length; b++) {
        const events = decodeChunks([all.slice(0, a), all.slice(a, b), all.slice(b)]);
        expect(events).toEqual([{ event: "message", data: "世🎉界", id: "" }]);
      }
    }
  });

  it("round-trips the encoder's output", () => {
    const text = encodeSseEvent({ event: "a", data: "1\n2" }) + encodeSseJson("b", { ok: true });
    expect(decodeChunks([bytes(text)])).toEqual([
      { event: "a", data: "1\n2", id: "" },
      { event: "b", data: '{"ok":true}', id: "" },
    ]);
  });

  it("decodes a ReadableStream and cancels it when iteration stops", async () => {
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes("event: a\ndata: 1\n\nevent: b\ndata: 2\n\n"));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const event of decodeSseStream(stream)) {
      expect(event.event).toBe("a");
      break;
    }
    expect(cancelled).toBe(true);
  });
});
